// test_npy.c: lib/formats/npy.c against NumPy itself: files written by numpy.save (gen_core.py) read back
// with the right dtype, shape and values; the C writer's bytes equal numpy's for the same array;
// write -> read round trips; and malformed files are rejected with TW_ERR_FORMAT and a message.
#define _POSIX_C_SOURCE 200809L   // getpid, for temporary file names unique to this process
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"

// The fixtures of gen_core.py's NPY_CASES, with the values it stores: i * 0.25 - 1 (f32) and
// 3 * i - 7 (i32), both exact in their dtype.
static const struct { const char *name; tw_npy_dtype dtype; int ndim; long shape[3]; } CASES[] = {
    { "f32_0d", TW_NPY_F32, 0, { 0 } },      { "f32_1d", TW_NPY_F32, 1, { 5 } },
    { "f32_2d", TW_NPY_F32, 2, { 3, 4 } },   { "f32_3d", TW_NPY_F32, 3, { 2, 3, 4 } },
    { "i32_0d", TW_NPY_I32, 0, { 0 } },      { "i32_1d", TW_NPY_I32, 1, { 1 } },
    { "i32_2d", TW_NPY_I32, 2, { 4, 7 } },   { "f32_empty", TW_NPY_F32, 2, { 0, 3 } },
};
enum { N_CASES = sizeof CASES / sizeof CASES[0] };

static long case_count(int i) {
    long n = 1;
    for (int d = 0; d < CASES[i].ndim; d++) n *= CASES[i].shape[d];
    return n;
}

static void fill_case_values(int i, void *data) {
    for (long j = 0; j < case_count(i); j++) {
        if (CASES[i].dtype == TW_NPY_F32) ((float *)data)[j] = (float)j * 0.25f - 1.0f;
        else ((int32_t *)data)[j] = 3 * (int32_t)j - 7;
    }
}

// A temporary path unique to this process (other test runs may share the directory).
// A scratch .npy file name (testrun.h's tt_tmp_path, with the extension).
static void tmp_path(char *out, size_t len, const char *tag) {
    char npy[64];
    snprintf(npy, sizeof npy, "%s.npy", tag);
    tt_tmp_path(out, len, "npy", npy);
}

START_TEST(reader_reads_numpy_files_of_every_rank)
{
    char path[128], err[256] = "";
    snprintf(path, sizeof path, "data/golden/core/npy_%s.npy", CASES[_i].name);
    tw_npy a;
    ck_assert_msg(tw_npy_read(&a, path, err, sizeof err) == TW_OK, "%s: %s", path, err);
    ck_assert_int_eq(a.dtype, CASES[_i].dtype);
    ck_assert_int_eq(a.ndim, CASES[_i].ndim);
    for (int d = 0; d < a.ndim; d++) ck_assert_int_eq(a.shape[d], CASES[_i].shape[d]);
    ck_assert_int_eq(a.count, case_count(_i));
    void *want = calloc((size_t)case_count(_i) + 1, 4);
    fill_case_values(_i, want);
    // Exact: the values are small integers and quarters, exact in float32 and int32.
    ck_assert(case_count(_i) == 0 || memcmp(a.data, want, (size_t)case_count(_i) * 4) == 0);
    free(want);
    tw_npy_free(&a);
}
END_TEST

// numpy.save and tw_npy_write must produce the same bytes for the same array (same header dict,
// same padding to 64 bytes, same data), so anything C writes loads in numpy and diffs cleanly.
START_TEST(writer_bytes_equal_numpy_bytes)
{
    char golden[128], tmp[512];
    snprintf(golden, sizeof golden, "data/golden/core/npy_%s.npy", CASES[_i].name);
    tmp_path(tmp, sizeof tmp, CASES[_i].name);
    void *data = calloc((size_t)case_count(_i) + 1, 4);
    fill_case_values(_i, data);
    ck_assert_int_eq(tw_npy_write(tmp, CASES[_i].dtype, data, CASES[_i].shape, CASES[_i].ndim), TW_OK);
    long n_want, n_got;
    unsigned char *want = tt_read_file(golden, &n_want), *got = tt_read_file(tmp, &n_got);
    remove(tmp);
    ck_assert_int_eq(n_got, n_want);
    for (long j = 0; j < n_want; j++)
        ck_assert_msg(got[j] == want[j], "%s: byte %ld is 0x%02x, numpy wrote 0x%02x",
                      CASES[_i].name, j, got[j], want[j]);
    free(want); free(got); free(data);
}
END_TEST

// Round trip through a file for shapes numpy does not supply here (5-D, long axes). Exact.
START_TEST(write_then_read_round_trips)
{
    static const long shapes[][5] = { { 65 }, { 1, 1, 1, 1, 1 }, { 7, 64 }, { 2, 3, 1, 5, 2 } };
    static const int ndims[] = { 1, 5, 2, 5 };
    for (int k = 0; k < 4; k++)
        for (int dt = 0; dt < 2; dt++) {
            long n = 1;
            for (int d = 0; d < ndims[k]; d++) n *= shapes[k][d];
            float *x = tt_rand(n, -1e6f, 1e6f, 700 + k);   // any 32-bit pattern is fine for i32 too
            char tmp[512], err[256] = "";
            tmp_path(tmp, sizeof tmp, "roundtrip");
            ck_assert_int_eq(tw_npy_write(tmp, dt ? TW_NPY_I32 : TW_NPY_F32, x, shapes[k], ndims[k]), TW_OK);
            tw_npy a;
            tw_status st = tw_npy_read(&a, tmp, err, sizeof err);
            remove(tmp);
            ck_assert_msg(st == TW_OK, "%s", err);
            ck_assert_int_eq(a.dtype, dt ? TW_NPY_I32 : TW_NPY_F32);
            ck_assert_int_eq(a.ndim, ndims[k]);
            for (int d = 0; d < ndims[k]; d++) ck_assert_int_eq(a.shape[d], shapes[k][d]);
            ck_assert(memcmp(a.data, x, (size_t)n * 4) == 0);
            tw_npy_free(&a);
            free(x);
        }
}
END_TEST

// Each malformed fixture must fail with TW_ERR_FORMAT, a zeroed struct and a message that names
// the problem (checked by a keyword, so the wording can improve without breaking the test).
static const struct { const char *file, *keyword; } BAD[] = {
    { "bad_magic", "magic" },          { "bad_fortran", "fortran" },
    { "bad_f64", "dtype" },            { "bad_bigendian", "dtype" },
    { "bad_truncated", "truncated" },
};

START_TEST(reader_rejects_malformed_files_with_a_message)
{
    char path[128], err[256] = "";
    snprintf(path, sizeof path, "data/golden/core/%s.npy", BAD[_i].file);
    tw_npy a;
    ck_assert_int_eq(tw_npy_read(&a, path, err, sizeof err), TW_ERR_FORMAT);
    ck_assert_msg(strstr(err, BAD[_i].keyword) != NULL, "%s: message '%s' lacks '%s'",
                  path, err, BAD[_i].keyword);
    ck_assert_ptr_null(a.data);
    ck_assert_int_eq(a.ndim, 0);
}
END_TEST

START_TEST(reader_reports_a_missing_file_as_io_error)
{
    char err[256] = "";
    tw_npy a;
    ck_assert_int_eq(tw_npy_read(&a, "data/golden/core/no_such_file.npy", err, sizeof err), TW_ERR_IO);
    ck_assert(err[0] != '\0');
}
END_TEST

Suite *suite_npy(void) {
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_loop_test(tc, reader_reads_numpy_files_of_every_rank, 0, N_CASES);
    tcase_add_loop_test(tc, writer_bytes_equal_numpy_bytes, 0, N_CASES);
    tcase_add_test(tc, write_then_read_round_trips);
    tcase_add_loop_test(tc, reader_rejects_malformed_files_with_a_message, 0, 5);
    tcase_add_test(tc, reader_reports_a_missing_file_as_io_error);
    suite_add_tcase(s, tc);
    return s;
}
