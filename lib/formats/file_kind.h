// file_kind.h: what a file is, from its first four bytes, for messages. A program handed the
// wrong one of the toolkit's own files (a version-2 checkpoint where an fp32 one is read, a
// training state, a .npy array) can then say so, instead of reading the magic as a header field
// ("header field dim = 1634415666 exceeds the limit" was "ak42", the version-2 magic).
#ifndef TW_FILE_KIND_H
#define TW_FILE_KIND_H

// A noun phrase naming the kind of file whose first four bytes are magic, or NULL if they are
// no magic the toolkit knows (a llama2.c version-0 checkpoint or a tokenizer has none: they
// start with numbers). Known: "ak42" (0x616b3432 little-endian: a llama2.c version-2 int8
// checkpoint; one byte off: a damaged one), "TWMO" (the toolkit's TWMODEL checkpoint),
// "TWMX" (a model with experts), "lora" (LoRA adapters), "TWST" (a TWSTATE training state), "\x93NUM" (a .npy array), "\x89PNG" (a PNG picture).
const char *tw_file_kind_name(const unsigned char magic[4]);

#endif
