// golden_case.h: loading one golden case directory of data/golden/model/ (written by
// tests/golden/gen_model.py) into plain arrays, for the attention, MHA, FFN, block and model tests.
#ifndef GOLDEN_CASE_H
#define GOLDEN_CASE_H
#include "testutil.h"

// Loads data/golden/<dir>/<name>.npy (float32) into a fresh malloc'd copy the caller frees.
// Fails the test if the file is missing or does not hold expect_count elements (-1: any count).
float *gc_load(const char *dir, const char *name, long expect_count);
// The same for int32 files (configurations, token ids).
int   *gc_load_i32(const char *dir, const char *name, long expect_count);
// The largest |got - want| over n elements, ignoring positions where both are the same infinity
// (for failure messages and for measuring the margins quoted in the tolerance comments).
double gc_max_abs_err(const float *got, const float *want, long n);

#endif
