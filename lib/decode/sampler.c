// sampler.c: greedy, temperature and top-p sampling (see sampler.h).
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "nn/softmax.h"
#include "simd/simd.h"
#include "decode/sampler.h"

tw_status tw_sampler_init(tw_sampler *s, int vocab_size, float temperature, float topp, uint64_t seed) {
    memset(s, 0, sizeof *s);
    if (vocab_size < 1 || !(temperature >= 0.0f) || isnan(topp) || seed == 0) return TW_ERR_ARG;
    s->probs = malloc((size_t)vocab_size * sizeof *s->probs);
    s->candidates = malloc((size_t)vocab_size * sizeof *s->candidates);
    if (s->probs == NULL || s->candidates == NULL) {
        tw_sampler_free(s);
        return TW_ERR_NOMEM;
    }
    s->vocab_size = vocab_size;
    s->temperature = temperature;
    s->topp = topp;
    s->state = seed;
    return TW_OK;
}

void tw_sampler_free(tw_sampler *s) {
    free(s->probs);
    free(s->candidates);
    memset(s, 0, sizeof *s);
}

uint32_t tw_sampler_next_u32(tw_sampler *s) {
    uint64_t x = s->state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    s->state = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

float tw_sampler_next_f32(tw_sampler *s) {
    return (float)(tw_sampler_next_u32(s) >> 8) / 16777216.0f;   // 24 bits: exact in float
}

// The reference loop; tw_argmax runs the level's vector kernel when it has one (the same index,
// lib/simd/kernels_avx2.c). The running maximum is kept in a register: comparing against x[best]
// instead makes every step wait for the load of x[best], which waits for the previous step's
// choice of best: a chain of loads through every element (docs/performance.md has what it cost).
int tw_argmax_naive(const float *x, int n) {
    float best_value;
    int best;
    tw_argmax_continue(&best_value, &best, x, n, 0);   // simd.h: the loop, from x[0]
    return best;
}

int tw_argmax(const float *x, int n) {
    int best;
    return tw_simd_argmax(&best, x, n) ? best : tw_argmax_naive(x, n);
}

int tw_sample_cumulative(const float *probs, int n, float u) {
    float cdf = 0.0f;
    for (int i = 0; i < n; i++) {
        cdf += probs[i];
        if (u < cdf) return i;
    }
    return n - 1;
}

// Descending probability, then ascending index, so the order never depends on the sort routine.
static int by_prob_desc(const void *a, const void *b) {
    const tw_prob_index *x = a, *y = b;
    if (x->prob > y->prob) return -1;
    if (x->prob < y->prob) return 1;
    return (x->index > y->index) - (x->index < y->index);
}

// The nucleus of s->probs: sorts the candidates into s->candidates and returns the index of the
// last one kept (the shortest prefix whose mass exceeds top-p); *mass receives that prefix's mass.
static int nucleus(tw_sampler *s, float *mass_out) {
    const int n = s->vocab_size;
    // Tokens below (1 - p) / (n - 1) can never be inside the nucleus: dropping them first keeps
    // the sort short.
    const float cutoff = n > 1 ? (1.0f - s->topp) / (float)(n - 1) : 0.0f;
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (s->probs[i] >= cutoff) {
            s->candidates[m].prob = s->probs[i];
            s->candidates[m].index = i;
            m++;
        }
    }
    qsort(s->candidates, (size_t)m, sizeof *s->candidates, by_prob_desc);
    float mass = 0.0f;
    int last = m - 1;
    for (int i = 0; i < m; i++) {
        mass += s->candidates[i].prob;
        if (mass > s->topp) { last = i; break; }
    }
    *mass_out = mass;
    return last;
}

static int sample_topp(tw_sampler *s, float u) {
    float mass;
    const int last = nucleus(s, &mass);
    const float r = u * mass;
    float cdf = 0.0f;
    for (int i = 0; i <= last; i++) {
        cdf += s->candidates[i].prob;
        if (r < cdf) return s->candidates[i].index;
    }
    return s->candidates[last].index;
}

int tw_sampler_sample(tw_sampler *s, const float *logits) {
    const int n = s->vocab_size;
    if (s->temperature == 0.0f) return tw_argmax(logits, n);
    for (int i = 0; i < n; i++) s->probs[i] = logits[i] / s->temperature;
    tw_softmax_rows(s->probs, s->probs, 1, n, 1.0f);
    const float u = tw_sampler_next_f32(s);
    if (s->topp <= 0.0f || s->topp >= 1.0f) return tw_sample_cumulative(s->probs, n, u);
    return sample_topp(s, u);
}

void tw_sampler_distribution(tw_sampler *s, float *probs, const float *logits) {
    const int n = s->vocab_size;
    if (s->temperature == 0.0f) {   // greedy: all the mass on the argmax
        memset(probs, 0, (size_t)n * sizeof *probs);
        probs[tw_argmax(logits, n)] = 1.0f;
        return;
    }
    for (int i = 0; i < n; i++) s->probs[i] = logits[i] / s->temperature;
    tw_softmax_rows(s->probs, s->probs, 1, n, 1.0f);
    if (s->topp <= 0.0f || s->topp >= 1.0f) {
        memcpy(probs, s->probs, (size_t)n * sizeof *probs);
        return;
    }
    float mass;
    const int last = nucleus(s, &mass);
    memset(probs, 0, (size_t)n * sizeof *probs);
    for (int i = 0; i <= last; i++) probs[s->candidates[i].index] = s->candidates[i].prob / mass;
}
