// file_kind.c: see file_kind.h.
#include <string.h>
#include "formats/file_kind.h"

const char *tw_file_kind_name(const unsigned char magic[4]) {
    static const unsigned char q8[4] = { 0x32, 0x34, 0x6b, 0x61 };   // 0x616b3432 little-endian
    if (memcmp(magic, q8, 4) == 0) return "a llama2.c version-2 (int8, Q8_0) checkpoint";
    if (memcmp(magic, "TWMO", 4) == 0) return "the toolkit's own TWMODEL checkpoint (./train --out for a non-llama model), not a llama2.c file";
    if (memcmp(magic, "TWMX", 4) == 0) return "the toolkit's TWMX model with experts (./train --init-moe), not a llama2.c file";
    if (memcmp(magic, "lora", 4) == 0) return "a LoRA adapters file (./train --lora --out), not a model: give it to --lora";
    if (memcmp(magic, "TWST", 4) == 0) return "a TWSTATE training state (./train --state), not a model file";
    if (memcmp(magic, "\x93NUM", 4) == 0) return "a .npy array";
    if (memcmp(magic, "\x89PNG", 4) == 0) return "a PNG picture";
    int same = 0;
    for (int i = 0; i < 4; i++) same += magic[i] == q8[i];
    if (same == 3)
        return "a damaged llama2.c version-2 checkpoint (one byte of its magic \"ak42\", 0x616b3432, is wrong)";
    return NULL;
}
