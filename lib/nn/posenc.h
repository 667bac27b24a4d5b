// posenc.h: absolute positional encodings: the 2017 sinusoidal table and a learned table.
// Rotary embeddings (RoPE) are in rope.h.
#ifndef TW_POSENC_H
#define TW_POSENC_H

// The sinusoidal encoding of Vaswani et al. 2017, section 3.5, for positions pos0 .. pos0+T-1:
//   pe[t][2i]   = sin(p / 10000^(2i/C))
//   pe[t][2i+1] = cos(p / 10000^(2i/C)),  p = pos0 + t.
// Any C, odd included (the last column of an odd C is a sine).
//   pe: (T, C)
void tw_posenc_sinusoidal(float *pe, int T, int C, int pos0);

// x[t] += table[pos0 + t]: learned absolute positions (GPT-2's wpe).
//   x: (T, C)   table: (P, C) with pos0 + T <= P
void tw_posenc_learned_add(float *x, const float *table, int T, int C, int pos0);

// x += pe element-wise (adds a (T, C) encoding to embeddings).
void tw_add_inplace(float *x, const float *pe, long n);

// ---- backward ----
// Both encodings are added in place (x += pe), so, by tw.h's rule for in-place forwards, the
// gradient buffer of x already holds the input gradient: d(x + pe)/dx is the identity and the
// gradient passes through unchanged. The sinusoidal table has no parameters, so it has nothing
// more to do; the learned table collects the gradient of the rows it added:
//   dtable[pos0 + t] += dx[t]        dtable: (P, C)   dx: (T, C) with pos0 + T <= P
void tw_posenc_learned_backward(float *dtable, const float *dx, int T, int C, int pos0);

#endif
