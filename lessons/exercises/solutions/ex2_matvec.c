// Solution to exercise 2: four rows at a time, eight partial sums per row. Each x[k] loaded
// serves four rows, and the 32 independent sums keep the adders busy while W streams in.
#include "exercise.h"

static float dot8(const float *a, const float *b, int n) {
    float s[8] = { 0 };
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) s[j] += a[i + j] * b[i + j];
    float sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

void ex_matvec(float *y, const float *W, const float *x, int N, int K) {
    int i = 0;
    for (; i + 4 <= N; i += 4) {
        const float *w0 = W + (long)i * K, *w1 = w0 + K, *w2 = w1 + K, *w3 = w2 + K;
        float s[4][8] = { { 0 } };
        int k = 0;
        for (; k + 8 <= K; k += 8)
            for (int j = 0; j < 8; j++) {
                float xv = x[k + j];
                s[0][j] += w0[k + j] * xv;
                s[1][j] += w1[k + j] * xv;
                s[2][j] += w2[k + j] * xv;
                s[3][j] += w3[k + j] * xv;
            }
        for (int r = 0; r < 4; r++) {
            float sum = ((s[r][0] + s[r][1]) + (s[r][2] + s[r][3])) +
                        ((s[r][4] + s[r][5]) + (s[r][6] + s[r][7]));
            const float *w = W + (long)(i + r) * K;
            for (int kk = k; kk < K; kk++) sum += w[kk] * x[kk];
            y[i + r] = sum;
        }
    }
    for (; i < N; i++) y[i] = dot8(W + (long)i * K, x, K);
}
