// q8_runq_style.c: the "plain int8 loop" rung of bench/bench_q8.c, written here in the way
// llama2.c's runq.c computes its quantized matmul (one thread): quantize the activation per group
// with a division and round(), then per row an int32 dot product per group times the two scales,
// accumulated in a float. Compiled as llama2.c builds runq.c, -Ofast -march=native, in this object
// only (mk/simd_q8.mk), so the compiler may vectorise the loops as it likes. Linked without
// -Ofast, so crtfastmath's flush-to-zero never reaches the rest of the benchmark.
// Unlike runq.c it requires K % gs == 0 (the caller checks) instead of skipping a tail.
#include <math.h>
#include <stdint.h>

void bench_q8_quantize_runq_style(int8_t *q, float *s, const float *x, int n, int gs) {
    for (int g = 0; g < n / gs; g++) {
        float wmax = 0.0f;
        for (int i = 0; i < gs; i++) {
            float v = fabsf(x[g * gs + i]);
            if (v > wmax) wmax = v;
        }
        float scale = wmax / 127.0f;
        s[g] = scale;
        for (int i = 0; i < gs; i++) q[g * gs + i] = (int8_t)roundf(x[g * gs + i] / scale);
    }
}

void bench_q8_matvec_runq_style(float *y, const int8_t *Wq, const float *Ws, const int8_t *xq,
                                const float *xs, int N, int K, int gs) {
    for (int i = 0; i < N; i++) {
        float val = 0.0f;
        int32_t ival = 0;
        long in = (long)i * K;
        for (int j = 0; j <= K - gs; j += gs) {
            for (int k = 0; k < gs; k++) ival += (int32_t)xq[j + k] * (int32_t)Wq[in + j + k];
            val += (float)ival * Ws[(in + j) / gs] * xs[j / gs];
            ival = 0;
        }
        y[i] = val;
    }
}
