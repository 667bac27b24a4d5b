// same_file.h: does one path name the same file as another? For programs that write outputs
// beside their inputs (./train, ./quantize, ./bpe-train): an output that is also an input, or two
// outputs that are one file, must be refused before anything is written, because writing the
// first would destroy the second.
#ifndef TW_SAME_FILE_H
#define TW_SAME_FILE_H

// 1 if a and b name the same file, else 0:
//   - both exist: the same device and inode (so "x.bin", "./x.bin", a hard link and a symbolic
//     link to it are all the same file, and two different files are never confused by name);
//   - neither exists (two outputs not yet written): the same parent folder (device and inode
//     again, when it exists) and the same last component, else the identical string;
//   - one exists and the other does not: 0 (they cannot be the same file now).
// NULL or empty paths are never the same as anything.
int tw_same_file(const char *a, const char *b);

#endif
