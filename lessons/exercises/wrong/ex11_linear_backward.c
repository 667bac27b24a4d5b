// Wrong attempt at exercise 11 (make test builds it and requires the checker to reject it).
// The mistake: dW and db assigned inside the loop over tokens (= instead of +=), so only the last
// token's contribution is left. dx is right.
// The checker says: written, not added
#include "concepts.h"

void ex_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C_in; i++) {
            float acc = 0.0f;
            for (int o = 0; o < C_out; o++) acc += dy[t * C_out + o] * W[o * C_in + i];
            dx[t * C_in + i] = acc;
        }
    for (int t = 0; t < T; t++)
        for (int o = 0; o < C_out; o++) {
            for (int i = 0; i < C_in; i++) dW[o * C_in + i] = dy[t * C_out + o] * x[t * C_in + i];
            db[o] = dy[t * C_out + o];
        }
}
