// reference.h: the one naive catalogue of the fp32 kernels (simd/simd.h's tw_kernels): for every
// slot, the naive twin, which is the loop in its component's own file, under the kernel's
// signature. These are the references every SIMD kernel is tested against (tests/test_simd.c)
// and the naive column of the benchmark; they are the very loops the model runs at the naive
// level. Each SIMD kernel bears its twin's name plus an ISA suffix (tw_softmax_row beside
// tw_softmax_row_avx2; the list is in simd.h). This file sits in nn/ because simd/ may not name
// nn/'s functions (tools/check_layers.sh); dispatch.c's naive row has every slot NULL instead,
// which makes each hook decline so that the component runs this same loop itself.
//   dot, exp                the kernels no component has          lib/simd/ref.c
//   matvec                  tw_matvec_naive (tw_linear_naive, T=1) reference.c, on linear.c
//   matmul, matmul_nt (_mt) the first rung of the matmul ladder    lib/simd/matmul_1_naive.c
//   softmax                 tw_softmax_row                         softmax.c
//   rmsnorm, layernorm      tw_rmsnorm_row, tw_layernorm_row       norm.c
//   rope                    tw_rope_pairs (angles: tw_rope_angles) rope.c
//   silu                    tw_silu                                activation.c
//   swiglu                  tw_swiglu                              ffn.c
//   attend                  tw_sdpa_one                            sdpa.c
#ifndef TW_REFERENCE_H
#define TW_REFERENCE_H
#include "simd/simd.h"

extern const tw_kernels tw_kernels_naive;

// y = W x: the Linear layer y = x W^T (tw_linear_naive) on one row, the matvec kernels' twin.
//   y: (N)   W: (N, K)   x: (K)
void tw_matvec_naive(float *y, const float *W, const float *x, int N, int K);

// The catalogue of any level: what tw_simd_kernels gives (lib/simd/simd.h), except that the naive
// level's table (every slot NULL) is given as tw_kernels_naive; NULL for an unknown name or a
// level not built or not runnable on this CPU.
const tw_kernels *tw_kernels_for(const char *level);

#endif
