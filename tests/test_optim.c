// test_optim.c: AdamW, gradient clipping and the learning-rate schedule (lib/train/optim.c) against
// torch.optim.AdamW with two parameter groups (decay on the matrices, none on the vector),
// torch.nn.utils.clip_grad_norm_ and llama2.c's get_lr, over 8 steps
// (data/golden/backward/optim/, from tests/golden/gen_backward.py); and properties of each.
#include <stdlib.h>
#include <string.h>
#include "golden_case.h"
#include "simd/simd.h"

#define DIR "backward/optim"

START_TEST(adamw_clip_and_schedule_match_torch_over_8_steps)
{
    float *hp = gc_load(DIR, "hparams", 10), *lrs = gc_load(DIR, "lrs", -1);
    float *norms = gc_load(DIR, "norms", -1);
    const int n_steps = (int)hp[9];
    const long counts[3] = { 5 * 7, 7, 3 * 4 };
    const int ndim[3] = { 2, 1, 2 };
    float *p[3], *m[3], *v[3], *g[3];
    for (int j = 0; j < 3; j++) {
        char name[32];
        snprintf(name, sizeof name, "p%d_init", j);
        p[j] = gc_load(DIR, name, counts[j]);
        m[j] = tt_zeros(counts[j]);
        v[j] = tt_zeros(counts[j]);
    }
    for (int step = 0; step < n_steps; step++) {
        for (int j = 0; j < 3; j++) {
            char name[32];
            snprintf(name, sizeof name, "g%d_step%d", j, step);
            g[j] = gc_load(DIR, name, counts[j]);
        }
        // The norm is summed in double and rounded once, as torch's float64 norm rounded to float:
        // 1e-6 relative allows for a different summation order (measured: identical).
        float norm = tw_clip_grad_norm(g, counts, 3, hp[8]);
        ck_assert_msg(fabs(norm - norms[step]) <= 1e-6 * norms[step],
                      "step %d: norm %.9g, torch %.9g", step, norm, norms[step]);
        float lr = tw_lr_schedule(step, hp[0], hp[1], (int)hp[2], (int)hp[3]);
        // The schedule is computed in double and rounded once, as the golden (measured: identical).
        ck_assert_msg(fabs(lr - lrs[step]) <= 1e-7 * hp[0], "step %d: lr %.9g, want %.9g", step,
                      lr, lrs[step]);
        for (int j = 0; j < 3; j++) {
            tw_adamw_hparams h = { lr, hp[4], hp[5], hp[6],
                                   tw_adamw_decays(ndim[j]) ? hp[7] : 0.0f };
            tw_adamw_step(p[j], m[j], v[j], g[j], counts[j], step + 1, &h);
            char name[32];
            snprintf(name, sizeof name, "p%d_step%d", j, step);
            float *want = gc_load(DIR, name, counts[j]);
            // Tolerance atol 2e-6, rtol 2e-6: torch keeps parameters and moments in float64 for
            // all 8 steps; we round them to float after every step (2^-24 relative each, so up
            // to ~8 * 6e-8 |p| ~ 1.5e-6 for |p| ~ 3), and the clipping scale and the rounded
            // learning rate differ from torch's by 6e-8 relative. Measured worst: 2.4e-7 absolute.
            ck_assert_allclose(p[j], want, counts[j], 2e-6, 2e-6);
            free(want);
        }
        for (int j = 0; j < 3; j++) free(g[j]);
    }
    for (int j = 0; j < 3; j++) { free(p[j]); free(m[j]); free(v[j]); }
    free(hp); free(lrs); free(norms);
}
END_TEST

// Weight decay is decoupled: with a zero gradient the moments stay 0, the Adam term is 0 and
// the step is exactly p * (1 - lr * wd) (one rounding). Without decay, nothing moves.
START_TEST(adamw_decay_is_decoupled_from_the_gradient)
{
    float p[4] = { 1.0f, -2.0f, 0.5f, 3.0f }, m[4] = { 0 }, v[4] = { 0 }, g[4] = { 0 };
    tw_adamw_hparams h = { 0.01f, 0.9f, 0.95f, 1e-8f, 0.1f };
    tw_adamw_step(p, m, v, g, 4, 1, &h);
    const float want[4] = { 1.0f, -2.0f, 0.5f, 3.0f };
    for (int i = 0; i < 4; i++) {
        ck_assert_float_eq(p[i], (float)(want[i] * (1.0 - (double)0.01f * 0.1f)));
        ck_assert_float_eq(m[i], 0.0f);
        ck_assert_float_eq(v[i], 0.0f);
    }
    h.weight_decay = 0.0f;
    float q[4];
    memcpy(q, p, sizeof q);
    tw_adamw_step(p, m, v, g, 4, 2, &h);
    ck_assert(memcmp(p, q, sizeof q) == 0);
}
END_TEST

// Bias correction makes the first step move every parameter by lr in the direction of -grad
// (m_hat = g, v_hat = g^2, so m_hat / sqrt(v_hat) = sign(g)), whatever the gradient's size.
// Tolerance: eps / |g| relative (1e-8 / 1e-3) plus float rounding of p (6e-8 * |p|).
START_TEST(adamw_first_step_moves_by_lr_whatever_the_gradient_scale)
{
    float p[3] = { 0.0f, 1.0f, -1.0f }, m[3] = { 0 }, v[3] = { 0 };
    const float g[3] = { 1e-3f, -50.0f, 7.0f };
    tw_adamw_hparams h = { 0.01f, 0.9f, 0.999f, 1e-8f, 0.0f };
    tw_adamw_step(p, m, v, g, 3, 1, &h);
    const double want[3] = { -0.01, 1.01, -1.01 };
    for (int i = 0; i < 3; i++)
        ck_assert_msg(fabs(p[i] - want[i]) <= 0.01 * 1e-5 + 1.2e-7, "p[%d] = %.9g", i, p[i]);
}
END_TEST

START_TEST(decay_applies_to_matrices_and_embeddings_not_to_vectors)
{
    ck_assert_int_eq(tw_adamw_decays(2), 1);   // Linear weights, token and position tables
    ck_assert_int_eq(tw_adamw_decays(1), 0);   // norm gains, LayerNorm betas, biases
    ck_assert_int_eq(tw_adamw_decays(0), 0);
}
END_TEST

START_TEST(clipping_scales_to_max_norm_and_leaves_small_gradients_alone)
{
    float a[3] = { 3.0f, 0.0f, 4.0f }, b[1] = { 12.0f };   // global norm 13
    float *g[2] = { a, b };
    const long counts[2] = { 3, 1 };
    ck_assert_float_eq(tw_grad_global_norm(g, counts, 2), 13.0f);
    // Off (max_norm 0) and above the norm: nothing changes, the norm is still returned.
    ck_assert_float_eq(tw_clip_grad_norm(g, counts, 2, 0.0f), 13.0f);
    ck_assert_float_eq(tw_clip_grad_norm(g, counts, 2, 20.0f), 13.0f);
    ck_assert(a[0] == 3.0f && a[2] == 4.0f && b[0] == 12.0f);
    // Clipped to 1: scaled by 1 / (13 + 1e-6); the new norm is 1 to float precision.
    ck_assert_float_eq(tw_clip_grad_norm(g, counts, 2, 1.0f), 13.0f);
    ck_assert(fabs(tw_grad_global_norm(g, counts, 2) - 1.0) <= 2e-7);
    ck_assert(fabs(b[0] - 12.0 / 13.0) <= 1e-7);
}
END_TEST

// The 1e-6 in max_norm / (norm + 1e-6) matters when the norm is tiny: at norm 1.3e-5 and max_norm
// 1e-6 the scale is 1/14, not 1/13 (7.7 % apart). Wanted values from PyTorch in float64:
//   p.grad = [3e-6, 0, 4e-6], q.grad = [12e-6]; torch.nn.utils.clip_grad_norm_([p, q], 1e-6)
//   -> norm 1.3e-05; p.grad [2.1428571428571423e-07, 0, 2.8571428571428564e-07], q.grad 8.571428571428569e-07
// Tolerance rtol 1e-6: the float inputs (3e-6f is 3.5e-8 off), the norm rounded to float, the
// scale rounded to float and the product each add at most 2^-24 relative (< 3e-7 together); a
// scale without the 1e-6 is off by 7.7e-2.
START_TEST(clipping_adds_1e_minus_6_to_the_norm_as_pytorch_does)
{
    float a[3] = { 3e-6f, 0.0f, 4e-6f }, b[1] = { 12e-6f };
    float *g[2] = { a, b };
    const long counts[2] = { 3, 1 };
    const double rtol = 1e-6;
    const float norm = tw_clip_grad_norm(g, counts, 2, 1e-6f);
    ck_assert_msg(fabs(norm - 1.3e-05) <= rtol * 1.3e-05, "norm %.9g, want 1.3e-05", (double)norm);
    const double want[4] = { 2.1428571428571423e-07, 0.0, 2.8571428571428564e-07, 8.571428571428569e-07 };
    const float got[4] = { a[0], a[1], a[2], b[0] };
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabs(got[i] - want[i]) <= rtol * fabs(want[i]),
                      "grad %d: got %.9g, want %.9g (PyTorch: max_norm / (norm + 1e-6))", i, (double)got[i], want[i]);
}
END_TEST

START_TEST(schedule_warms_up_decays_by_cosine_and_can_be_constant)
{
    const float lr = 1e-3f, min_lr = 1e-4f;
    const int warmup = 10, decay = 110;
    ck_assert_float_eq(tw_lr_schedule(0, lr, min_lr, warmup, decay), 0.0f);
    ck_assert(fabs(tw_lr_schedule(5, lr, min_lr, warmup, decay) - 0.5e-3) <= 1e-10);
    ck_assert(fabs(tw_lr_schedule(warmup, lr, min_lr, warmup, decay) - lr) <= 1e-10);
    // Half-way through the decay the cosine is at 0: the mean of lr and min_lr.
    ck_assert(fabs(tw_lr_schedule(60, lr, min_lr, warmup, decay) - 0.55e-3) <= 1e-10);
    ck_assert(fabs(tw_lr_schedule(decay, lr, min_lr, warmup, decay) - min_lr) <= 1e-10);
    ck_assert_float_eq(tw_lr_schedule(decay + 50, lr, min_lr, warmup, decay), min_lr);
    float prev = lr;
    for (int s = warmup + 1; s <= decay; s++) {   // never increases after the warm-up
        float cur = tw_lr_schedule(s, lr, min_lr, warmup, decay);
        ck_assert_msg(cur <= prev, "lr rose at step %d", s);
        prev = cur;
    }
    // Equal lr and min_lr without warm-up: constant (the deterministic mode of ./train).
    for (int s = 0; s < 200; s += 7) ck_assert_float_eq(tw_lr_schedule(s, lr, lr, 0, 100), lr);
}
END_TEST

// AdamW at every SIMD level this machine has (the level's `adamw` kernel, lib/simd/simd.h) against
// the naive level's loop: bit for bit, no tolerance, as the kernels do the same double operations
// in the same order. N = 4099 leaves a tail for every register width; the gradients and moments
// span 1e-8 to 1e2 so that the sqrt, the division and the roundings to float all matter; three
// steps with decay, one element's gradient 0 and one moment v 0 (the eps-only denominator).
START_TEST(adamw_at_every_simd_level_is_bit_identical_to_naive)
{
    enum { N = 4099, STEPS = 3 };
    const tw_adamw_hparams hp = { .lr = 3e-3f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                                  .weight_decay = 0.1f };
    float want_p[N], want_m[N], want_v[N], g[STEPS][N], p0[N];
    tw_rng r;
    tw_rng_init(&r, 2024);
    for (int i = 0; i < N; i++) p0[i] = tw_rng_normal(&r);
    for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < N; i++) g[s][i] = tw_rng_normal(&r) * powf(10.0f, (float)(i % 11) - 8.0f);
    g[0][5] = 0.0f;
    g[1][5] = 0.0f;
    g[2][5] = 0.0f;   // element 5: v stays 0, the step is 0 / eps
    char levels[128];
    snprintf(levels, sizeof levels, "%s", tw_simd_available());
    int compared = 0;
    for (char *lv = strtok(levels, " "); lv; lv = strtok(NULL, " ")) {
        ck_assert_ptr_nonnull(tw_simd_init(lv));
        float p[N], m[N] = { 0 }, v[N] = { 0 };
        memcpy(p, p0, sizeof p);
        for (int s = 0; s < STEPS; s++) tw_adamw_step(p, m, v, g[s], N, s + 1, &hp);
        if (strcmp(lv, "naive") == 0) {
            memcpy(want_p, p, sizeof p);
            memcpy(want_m, m, sizeof m);
            memcpy(want_v, v, sizeof v);
            continue;
        }
        ck_assert_msg(memcmp(p, want_p, sizeof p) == 0, "%s: parameters differ from naive", lv);
        ck_assert_msg(memcmp(m, want_m, sizeof m) == 0, "%s: m differs from naive", lv);
        ck_assert_msg(memcmp(v, want_v, sizeof v) == 0, "%s: v differs from naive", lv);
        ck_assert_msg(tw_simd.adamw != NULL || strcmp(lv, "neon") == 0, "%s has no adamw kernel", lv);
        compared++;
    }
    tw_simd_init("naive");
    (void)compared;   // 0 on a build without SIMD: then only the naive loop exists
}
END_TEST

Suite *suite_optim(void) {
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("optim");
    tcase_add_test(tc, adamw_clip_and_schedule_match_torch_over_8_steps);
    tcase_add_test(tc, adamw_decay_is_decoupled_from_the_gradient);
    tcase_add_test(tc, adamw_first_step_moves_by_lr_whatever_the_gradient_scale);
    tcase_add_test(tc, decay_applies_to_matrices_and_embeddings_not_to_vectors);
    tcase_add_test(tc, clipping_scales_to_max_norm_and_leaves_small_gradients_alone);
    tcase_add_test(tc, clipping_adds_1e_minus_6_to_the_norm_as_pytorch_does);
    tcase_add_test(tc, schedule_warms_up_decays_by_cosine_and_can_be_constant);
    tcase_add_test(tc, adamw_at_every_simd_level_is_bit_identical_to_naive);
    suite_add_tcase(s, tc);
    return s;
}
