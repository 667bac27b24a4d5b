// posenc.c: absolute positional encodings (sinusoidal table, learned table).
// The sinusoid's angle and its sin/cos are computed in double and rounded to float once, so
// positions in the thousands keep full float accuracy.
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include "nn/posenc.h"

void tw_posenc_sinusoidal(float *pe, int T, int C, int pos0) {
    for (int t = 0; t < T; t++) {
        double p = (double)pos0 + t;
        for (int c = 0; c < C; c++) {
            int i = c / 2;                                   // columns 2i and 2i+1 share a frequency
            double angle = p / pow(10000.0, 2.0 * i / C);    // Vaswani et al. 2017, section 3.5
            pe[(size_t)t * C + c] = (float)(c % 2 == 0 ? sin(angle) : cos(angle));
        }
    }
}

void tw_posenc_learned_add(float *x, const float *table, int T, int C, int pos0) {
    assert(pos0 >= 0);
    tw_add_inplace(x, table + (size_t)pos0 * C, (long)T * C);  // rows pos0 .. pos0+T-1 are contiguous
}

void tw_add_inplace(float *x, const float *pe, long n) {
    for (long i = 0; i < n; i++) x[i] += pe[i];
}

void tw_posenc_learned_backward(float *dtable, const float *dx, int T, int C, int pos0) {
    assert(pos0 >= 0);
    tw_add_inplace(dtable + (size_t)pos0 * C, dx, (long)T * C);
}
