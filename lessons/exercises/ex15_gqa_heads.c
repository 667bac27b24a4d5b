// Exercise 15: attention over all heads, with grouped-query key/value heads (lesson 4).
// A row of q holds the H heads side by side: head h of position t is the D numbers starting at
// q[t*H*D + h*D]. So one head's (T, D) matrix is strided, not a contiguous block of T rows: gather
// it (and the kv head's k and v, in rows of G*D) into contiguous copies, run causal attention on
// them (tw_sdpa_forward(out, NULL, weights, qh, kh, vh, NULL, T, T, D, 1, 0) from lib/nn/sdpa.h
// does it; weights is (T, T) scratch), and scatter the result back into z's columns of head h.
// With G key/value heads for H query heads, H / G consecutive query heads share one kv head.
// Check it with:  make exercise15
#include "concepts.h"
#include "nn/sdpa.h"   // tw_sdpa_forward

void ex_gqa_attention(float *z, const float *q, const float *k, const float *v, int T, int H,
                      int G, int D) {
    // TODO: fill z (T, H*D). Delete these lines.
    (void)z; (void)q; (void)k; (void)v; (void)T; (void)H; (void)G; (void)D;
    ex_not_implemented();
}
