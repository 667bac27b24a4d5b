// Exercise 15, a worked answer: gather each head into contiguous (T, D) copies, attend, scatter.
#include <stdlib.h>
#include "concepts.h"
#include "nn/sdpa.h"

// Copies the D columns starting at col of each of T rows of stride `stride` into dst (T, D).
static void gather(float *dst, const float *src, int T, int stride, int col, int D) {
    for (int t = 0; t < T; t++)
        for (int d = 0; d < D; d++) dst[t * D + d] = src[(long)t * stride + col + d];
}

void ex_gqa_attention(float *z, const float *q, const float *k, const float *v, int T, int H,
                      int G, int D) {
    float *buf = malloc(((size_t)4 * T * D + (size_t)T * T) * sizeof *buf);
    if (!buf) return;
    float *qh = buf, *kh = qh + T * D, *vh = kh + T * D, *zh = vh + T * D, *w = zh + T * D;
    const int group = H / G;                    // query heads per key/value head
    for (int h = 0; h < H; h++) {
        const int g = h / group;                // consecutive query heads share a kv head
        gather(qh, q, T, H * D, h * D, D);
        gather(kh, k, T, G * D, g * D, D);
        gather(vh, v, T, G * D, g * D, D);
        tw_sdpa_forward(zh, NULL, w, qh, kh, vh, NULL, T, T, D, 1, 0);
        for (int t = 0; t < T; t++)
            for (int d = 0; d < D; d++) z[(long)t * H * D + h * D + d] = zh[t * D + d];
    }
    free(buf);
}
