// reference.c: the naive kernel catalogue, made of the components' own loops (see reference.h).
#include <string.h>
#include "nn/reference.h"
#include "nn/activation.h"
#include "nn/ffn.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/rope.h"
#include "nn/sdpa.h"
#include "nn/softmax.h"

void tw_matvec_naive(float *y, const float *W, const float *x, int N, int K) {
    tw_linear_naive(y, x, W, NULL, 1, K, N);
}

const tw_kernels tw_kernels_naive = {
    .level = "naive", .variant = "naive", .dot = tw_dot_naive, .matvec = tw_matvec_naive,
    .matmul = tw_matmul_naive, .matmul_nt = tw_matmul_nt_naive,
    .matmul_mt = tw_matmul_naive, .matmul_nt_mt = tw_matmul_nt_naive,
    .softmax = tw_softmax_row, .rmsnorm = tw_rmsnorm_row, .layernorm = tw_layernorm_row,
    .rope = tw_rope_pairs, .exp = tw_exp_naive, .silu = tw_silu, .swiglu = tw_swiglu,
    .attend = tw_sdpa_one,
};

const tw_kernels *tw_kernels_for(const char *level) {
    const tw_kernels *k = tw_simd_kernels(level);   // the naive level's table: every slot NULL
    return k && strcmp(k->level, tw_kernels_naive.level) == 0 ? &tw_kernels_naive : k;
}
