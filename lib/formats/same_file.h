// same_file.h: whether two paths name one file, so a program can refuse an output that would
// overwrite one of its inputs (./quantize IN IN, ./bpe-train x.txt -o x.txt) before writing.
#ifndef TW_SAME_FILE_H
#define TW_SAME_FILE_H

// 1 if a and b are equal strings, or both exist and are the same file (the same st_dev and
// st_ino after following symbolic links: "x.bin", "./x.bin", a hard link or a symlink to it);
// 0 otherwise (different files, or one of them does not exist and the strings differ).
int tw_same_file(const char *a, const char *b);

#endif
