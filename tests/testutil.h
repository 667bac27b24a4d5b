// testutil.h: helpers shared by the test files: golden loading and scratch arrays.
// Goldens live in data/golden/<group>/<name>.npy, written by the generator scripts beside them
// (tests/golden/*.py, run with Debian's /usr/bin/python3 and python3-torch). Tests run from the
// top of the checkout (make test does), so paths are relative to it.
#ifndef TESTUTIL_H
#define TESTUTIL_H
#include "tw.h"
#include "check_close.h"

// Loads data/golden/<rel>.npy (float32 or int32) and fails the test with the file's name if it is
// missing or its element count differs from expect_count (pass -1 to accept any count).
// The caller frees the array with tw_npy_free.
tw_npy tt_load(const char *rel, long expect_count);
float *tt_zeros(long n);                     // calloc'd; fails the test if out of memory
float *tt_rand(long n, float lo, float hi, uint64_t seed);   // uniform, from tw_rng
// The whole file in a malloc'd buffer with a NUL byte after its last byte (the caller frees);
// *len (when len is not NULL) receives its size. Fails the test if it cannot be read.
unsigned char *tt_read_file(const char *path, long *len);
// tw_model_randomize(m, seed), then every Linear weight redrawn from N(0, 1/C_in) and every
// embedding from N(0, embed_std^2) (from tw_rng seeded seed ^ 0x5eed): attention maps far from
// uniform and activations of order 1, so every path carries a signal a bug would disturb.
void tt_randomize_strong(tw_model *m, uint64_t seed, float embed_std);
// A JSON document from the test's own text (fails the test on a syntax error, with the parser's
// message) or from a file (fails the test with the reader's message). Free with tw_json_free.
tw_json *tt_json_parse(const char *text);
tw_json *tt_json_read_file(const char *path);

#endif
