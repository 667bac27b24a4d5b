// test_embedding.c: tw_embedding_forward against torch.nn.functional.embedding, and its
// rejection of ids outside the vocabulary. Goldens: data/golden/core/embedding_*.
#include <stdlib.h>
#include "testutil.h"

enum { V = 11, C = 7, T = 9 };   // as gen_core.py

// Tolerance 0: an embedding lookup copies rows, so the result must be bit-identical.
START_TEST(embedding_matches_torch_exactly)
{
    tw_npy table = tt_load("core/embedding_table", V * C), ids = tt_load("core/embedding_ids", T),
           want = tt_load("core/embedding_out", T * C);
    float *out = tt_zeros(T * C);
    ck_assert_int_eq(tw_embedding_forward(out, ids.data, table.data, T, V, C), TW_OK);
    ck_assert_allclose(out, (const float *)want.data, T * C, 0.0, 0.0);
    free(out);
    tw_npy_free(&table); tw_npy_free(&ids); tw_npy_free(&want);
}
END_TEST

// An id of -1 or V is a data error (a tokenizer/model mismatch), reported as TW_ERR_SHAPE, and
// the output must be left exactly as it was, even for rows before the bad id.
START_TEST(embedding_rejects_out_of_range_ids_and_leaves_out_untouched)
{
    static const int bad_ids[] = { -1, V, 1000000 };
    float *table = tt_rand(V * C, -1, 1, 5);
    for (int k = 0; k < 3; k++) {
        int ids[3] = { 0, 2, bad_ids[k] };
        float out[3 * C];
        for (int j = 0; j < 3 * C; j++) out[j] = 42.0f;
        ck_assert_int_eq(tw_embedding_forward(out, ids, table, 3, V, C), TW_ERR_SHAPE);
        for (int j = 0; j < 3 * C; j++) ck_assert_float_eq(out[j], 42.0f);
    }
    free(table);
}
END_TEST

Suite *suite_embedding(void) {
    Suite *s = suite_create("embedding");
    TCase *tc = tcase_create("embedding");
    tcase_add_test(tc, embedding_matches_torch_exactly);
    tcase_add_test(tc, embedding_rejects_out_of_range_ids_and_leaves_out_untouched);
    suite_add_tcase(s, tc);
    return s;
}
