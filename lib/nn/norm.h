// norm.h: LayerNorm (Ba et al. 2016; torch.nn.LayerNorm) and RMSNorm (Zhang & Sennrich 2019;
// as in Llama and Qwen).
#ifndef TW_NORM_H
#define TW_NORM_H

// out = (x - mean) / sqrt(var + eps) * gamma + beta, per row, with the biased variance
// (divide by C), as PyTorch does.
//   out: (T, C)   x: (T, C)   gamma, beta: (C) (beta may be NULL for no bias)
//   mean, rstd: (T) or NULL; if given they receive each row's mean and 1/sqrt(var + eps).
// out may alias x: each row is fully read before it is written.
void tw_layernorm_forward(float *out, float *mean, float *rstd, const float *x,
                          const float *gamma, const float *beta, int T, int C, float eps);

// out = x / sqrt(mean(x^2) + eps) * weight, per row.
//   out: (T, C)   x: (T, C)   weight: (C) or NULL for unit gain
//   rms: (T) or NULL; if given it receives each row's sqrt(mean(x^2) + eps).
// out may alias x.
void tw_rmsnorm_forward(float *out, float *rms, const float *x, const float *weight,
                        int T, int C, float eps);

// One row of each, always by the loops of norm.c (never a SIMD kernel): the references the SIMD
// norm kernels are tested against.   out, x: (n), may alias   w, gamma, beta: (n), w and beta
// may be NULL. tw_rmsnorm_row returns the row's rms.
float tw_rmsnorm_row(float *out, const float *x, const float *w, int n, float eps);
void  tw_layernorm_row(float *out, const float *x, const float *gamma, const float *beta, int n,
                       float eps);

// ---- backward (gradients accumulate, see tw.h) ----
// Both use the row statistics the forward saved, so the forward must have been called with
// non-NULL mean/rstd (LayerNorm) or rms (RMSNorm). With xhat = the normalised row and
// g = dout * gain (per element):
//   LayerNorm: dx += rstd * (g - mean(g) - xhat * mean(g * xhat)),  xhat = (x - mean) * rstd
//   RMSNorm:   dx += (g - xhat * mean(g * xhat)) / rms,              xhat = x / rms
//   dgain += sum_t dout * xhat,  dbeta += sum_t dout
//   dx: (T, C) or NULL   dgamma/dweight, dbeta: (C) (dbeta NULL when there is no bias;
//   dweight must be NULL when weight is NULL)   dout, x: (T, C)   mean, rstd, rms: (T)
// Row reductions are accumulated in double, as in the forward.
void tw_layernorm_backward(float *dx, float *dgamma, float *dbeta, const float *dout,
                           const float *x, const float *mean, const float *rstd,
                           const float *gamma, int T, int C);
void tw_rmsnorm_backward(float *dx, float *dweight, const float *dout, const float *x,
                         const float *rms, const float *weight, int T, int C);

#endif
