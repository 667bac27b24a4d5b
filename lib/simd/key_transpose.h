// key_transpose.h: a head's key or value rows turned into (D, n) scratch and back, for the
// attention kernels that run their vectors along the keys (sdpa_tiled_body.h on every ISA,
// sdpa_tiled_narrow_avx512.c). Plain C: no ISA flag needed.
#ifndef TW_KEY_TRANSPOSE_H
#define TW_KEY_TRANSPOSE_H
#include <stddef.h>

// dst (D, np) = src rows [0, n) (n, D at stride) transposed; columns n .. np-1 zero.
static inline void tw_keys_transpose(float *dst, const float *src, int n, int np, int D,
                                     int stride) {
    for (int d = 0; d < D; d++) {
        float *row = dst + (size_t)d * np;
        for (int j = 0; j < n; j++) row[j] = src[(size_t)j * stride + d];
        for (int j = n; j < np; j++) row[j] = 0.0f;
    }
}

// dst rows [0, n) (at stride) += src (D, np) transposed.
static inline void tw_keys_transpose_add(float *dst, const float *src, int n, int np, int D,
                                         int stride) {
    for (int j = 0; j < n; j++)
        for (int d = 0; d < D; d++) dst[(size_t)j * stride + d] += src[(size_t)d * np + j];
}

#endif
