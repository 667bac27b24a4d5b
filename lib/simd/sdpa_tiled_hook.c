// sdpa_tiled_hook.c: the hooks of the tiled attention (nn/sdpa_tiled.c calls them first): the
// chosen level's kernel (sdpa_tiled_avx2.c, sdpa_tiled_avx512.c, sdpa_tiled_neon.c) if this
// build has one, else 0 and the caller runs its naive loop. At the naive level they always
// decline.
#include <string.h>
#include "simd.h"

static int level_is(const char *name) {
    return tw_simd.level != NULL && strcmp(tw_simd.level, name) == 0;
}

int tw_simd_sdpa_tiled_forward(float *out, float *row_max, float *row_logsum, const float *q,
                               const float *k, const float *v, const float *mask,
                               const tw_simd_tiling *a) {
#ifdef TW_HAVE_AVX512
    if (level_is("avx512")) return tw_sdpa_tiled_forward_avx512(out, row_max, row_logsum, q, k, v, mask, a);
#endif
#ifdef TW_HAVE_AVX2
    if (level_is("avx2")) return tw_sdpa_tiled_forward_avx2(out, row_max, row_logsum, q, k, v, mask, a);
#endif
#ifdef TW_HAVE_NEON
    if (level_is("neon")) return tw_sdpa_tiled_forward_neon(out, row_max, row_logsum, q, k, v, mask, a);
#endif
    (void)out; (void)row_max; (void)row_logsum; (void)q; (void)k; (void)v; (void)mask; (void)a;
    (void)level_is;
    return 0;
}

int tw_simd_sdpa_tiled_backward(float *dq, float *dk, float *dv, const float *dout,
                                const float *out, const float *row_max, const float *row_logsum,
                                const float *q, const float *k, const float *v, const float *mask,
                                const tw_simd_tiling *a) {
#ifdef TW_HAVE_AVX512
    if (level_is("avx512"))
        return tw_sdpa_tiled_backward_avx512(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, a);
#endif
#ifdef TW_HAVE_AVX2
    if (level_is("avx2"))
        return tw_sdpa_tiled_backward_avx2(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, a);
#endif
#ifdef TW_HAVE_NEON
    if (level_is("neon"))
        return tw_sdpa_tiled_backward_neon(dq, dk, dv, dout, out, row_max, row_logsum, q, k, v, mask, a);
#endif
    (void)dq; (void)dk; (void)dv; (void)dout; (void)out; (void)row_max; (void)row_logsum;
    (void)q; (void)k; (void)v; (void)mask; (void)a;
    return 0;
}
