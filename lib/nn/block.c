// block.c: one transformer block (attention + feed-forward, each with a residual connection),
// pre-norm or post-norm. Every intermediate is left in tw_block_acts (see block.h).
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "nn/block.h"
#include "nn/ffn.h"
#include "nn/norm.h"

tw_status tw_block_config_check(const tw_block_config *cfg) {
    tw_status st = tw_mha_config_check(&cfg->attn);
    if (st != TW_OK) return st;
    if (cfg->ffn_hidden <= 0) return TW_ERR_SHAPE;
    if (cfg->norm != TW_NORM_LAYER && cfg->norm != TW_NORM_RMS) return TW_ERR_ARG;
    if (cfg->ffn != TW_FFN_CLASSIC && cfg->ffn != TW_FFN_SWIGLU) return TW_ERR_ARG;
    if (!(cfg->norm_eps >= 0.0f)) return TW_ERR_ARG;
    if (cfg->moe_experts < 0) return TW_ERR_ARG;
    if (cfg->moe_experts > 0) {
        // The experts are SwiGLU FFNs; the router needs 1 <= k <= E.
        if (cfg->ffn != TW_FFN_SWIGLU || cfg->moe_shared < 0 || cfg->moe_shared > 64 ||
            (cfg->moe_norm_topk != 0 && cfg->moe_norm_topk != 1) || !(cfg->moe_aux_coef >= 0.0f))
            return TW_ERR_ARG;
        const tw_moe_config mc = tw_block_moe_config(cfg);
        if (tw_moe_check_config(&mc) != TW_OK) return TW_ERR_ARG;
    }
    if (cfg->mla_kv_rank < 0) return TW_ERR_ARG;
    if (cfg->mla_kv_rank > 0) {
        // Latent attention has its own norms and RoPE: no QK-norm, and no tiled kernel for it.
        if (cfg->attn.qk_norm || cfg->attn.tiled || !cfg->attn.causal) return TW_ERR_ARG;
        const tw_mla_config ac = tw_block_mla_config(cfg);
        if (tw_mla_check_config(&ac) != TW_OK) return TW_ERR_ARG;
    } else if (cfg->mla_q_rank || cfg->mla_d_nope || cfg->mla_d_rope || cfg->mla_d_v) {
        return TW_ERR_ARG;   // MLA's sizes without its latent
    }
    return TW_OK;
}

tw_mla_config tw_block_mla_config(const tw_block_config *cfg) {
    const tw_mla_config ac = {
        .C = cfg->attn.d_model, .H = cfg->attn.n_head, .q_rank = cfg->mla_q_rank,
        .kv_rank = cfg->mla_kv_rank, .d_nope = cfg->mla_d_nope, .d_rope = cfg->mla_d_rope,
        .d_v = cfg->mla_d_v, .eps = cfg->norm_eps, .theta = cfg->attn.rope_theta,
    };
    return ac;
}

tw_moe_config tw_block_moe_config(const tw_block_config *cfg) {
    const tw_moe_config mc = {
        .router = { .E = cfg->moe_experts, .k = cfg->moe_top_k, .score = TW_ROUTER_SOFTMAX,
                    .norm_topk = cfg->moe_norm_topk, .scale = 1.0f, .n_group = 1, .topk_group = 1 },
        .C = cfg->attn.d_model, .F = cfg->ffn_hidden, .F_shared = cfg->moe_shared * cfg->ffn_hidden,
    };
    return mc;
}

// ---- the table of a block's intermediates ----

#define AT(field) offsetof(tw_block_acts, field)

const tw_tensor_info tw_block_tensors[] = {
    { .name = "attn_in",   .shape = "TC",  .field = AT(attn_in),
      .meaning = "residual stream entering the block" },
    { .name = "attn_norm", .shape = "TC",  .field = AT(attn_norm),
      .meaning = "Norm1 with its gain: pre-norm Norm1(attn_in), the attention input; post-norm Norm1(attn_in + attn_out)" },
    { .name = "q",         .shape = "THD", .field = AT(attn.q), .has = TW_HAS_MHA,
      .meaning = "queries x Wq^T (+ bq), before QK-norm and RoPE" },
    { .name = "k",         .shape = "NGD", .field = AT(attn.k), .has = TW_HAS_MHA,
      .meaning = "keys x Wk^T (+ bk), before QK-norm and RoPE" },
    { .name = "v",         .shape = "NGD", .field = AT(attn.v), .has = TW_HAS_MHA,
      .meaning = "values x Wv^T (+ bv)" },
    { .name = "q_rot",     .shape = "THD", .field = AT(attn.q_rot), .has = TW_HAS_MHA,
      .meaning = "queries after QK-norm and RoPE (a copy of q when the model has neither)" },
    { .name = "k_rot",     .shape = "NGD", .field = AT(attn.k_rot), .has = TW_HAS_MHA,
      .meaning = "keys after QK-norm and RoPE: what the KV cache stores" },
    { .name = "scores",    .shape = "HTS", .field = AT(attn.scores), .flags = TW_TENSOR_MASKED,
      .has = TW_HAS_MATERIALISED,
      .meaning = "q_rot . k_rot / sqrt(head size), -inf above the diagonal (causal mask)" },
    { .name = "pattern",   .shape = "HTS", .field = AT(attn.pattern), .has = TW_HAS_MATERIALISED,
      .meaning = "softmax of scores: the attention map, rows sum to 1" },
    { .name = "row_max",   .shape = "HT",  .field = AT(attn.row_max), .has = TW_HAS_TILED,
      .flags = TW_TENSOR_STATS | TW_TENSOR_MASKED,
      .meaning = "tiled attention: each query row's largest score (-inf if it saw no key)" },
    { .name = "row_logsum", .shape = "HT", .field = AT(attn.row_logsum), .has = TW_HAS_TILED,
      .flags = TW_TENSOR_STATS | TW_TENSOR_MASKED,
      .meaning = "tiled attention: log sum exp(score - row_max) per query row" },
    { .name = "z",         .shape = "THD", .field = AT(attn.z), .has = TW_HAS_MHA,
      .meaning = "pattern @ v per head (query head h reads kv head h / (H/G))" },
    { .name = "mla_qa", .shape = "TA", .field = AT(mla.qa), .has = TW_HAS_MLA,
      .meaning = "latent attention: the queries' down-projection x Wqa^T" },
    { .name = "mla_cq", .shape = "TA", .field = AT(mla.cq), .has = TW_HAS_MLA,
      .meaning = "latent attention: RMSNorm(mla_qa) with its gain, the query latent" },
    { .name = "mla_q", .shape = "TB", .field = AT(mla.q), .has = TW_HAS_MLA,
      .meaning = "latent attention: mla_cq Wqb^T, each head's nope then rope part, before RoPE" },
    { .name = "mla_qn", .shape = "TW", .field = AT(mla.qn), .has = TW_HAS_MLA,
      .meaning = "latent attention: the queries' nope parts (T, H, d_nope)" },
    { .name = "mla_qp", .shape = "TX", .field = AT(mla.qp), .has = TW_HAS_MLA,
      .meaning = "latent attention: the queries' rope parts after RoPE (T, H, d_rope)" },
    { .name = "mla_c_raw", .shape = "TR", .field = AT(mla.c_raw), .has = TW_HAS_MLA,
      .meaning = "latent attention: the latent before its norm (first kv_rank columns of x Wkva^T)" },
    { .name = "mla_c", .shape = "TR", .field = AT(mla.c), .has = TW_HAS_MLA,
      .meaning = "latent attention: RMSNorm(mla_c_raw) with its gain: the latent a cache would keep" },
    { .name = "mla_kp", .shape = "TU", .field = AT(mla.kp), .has = TW_HAS_MLA,
      .meaning = "latent attention: the shared RoPE key after RoPE, one for all heads" },
    { .name = "mla_kv", .shape = "TZ", .field = AT(mla.kv), .has = TW_HAS_MLA,
      .meaning = "latent attention: mla_c Wkvb^T, each head's key nope part then value" },
    { .name = "mla_kn", .shape = "TW", .field = AT(mla.kn), .has = TW_HAS_MLA,
      .meaning = "latent attention: the keys' nope parts (T, H, d_nope)" },
    { .name = "mla_v", .shape = "TY", .field = AT(mla.v), .has = TW_HAS_MLA,
      .meaning = "latent attention: the values (T, H, d_v)" },
    { .name = "mla_pattern", .shape = "HTT", .field = AT(mla.att), .has = TW_HAS_MLA,
      .meaning = "latent attention: softmax of the scores, rows sum to 1, 0 above the diagonal" },
    { .name = "mla_z", .shape = "TY", .field = AT(mla.ao), .has = TW_HAS_MLA,
      .meaning = "latent attention: pattern @ v per head, concatenated (enters Wo)" },
    { .name = "attn_out",  .shape = "TC",  .field = AT(attn_out),
      .meaning = "z Wo^T (+ bo): the attention sub-layer's output" },
    { .name = "resid_mid", .shape = "TC",  .field = AT(resid_mid),
      .meaning = "the stream between the sub-layers: pre-norm attn_in + attn_out; post-norm attn_norm" },
    { .name = "ffn_norm",  .shape = "TC",  .field = AT(ffn_norm),
      .meaning = "Norm2 with its gain: pre-norm Norm2(resid_mid), the FFN input; post-norm Norm2(resid_mid + ffn_out)" },
    { .name = "ffn_hidden", .shape = "TF", .field = AT(ffn_hidden), .has = TW_HAS_CLASSIC_FFN,
      .meaning = "act(x W1^T + b1): the classic FFN's hidden layer" },
    { .name = "ffn_gate",  .shape = "TF",  .field = AT(ffn_gate), .has = TW_HAS_SWIGLU,
      .meaning = "x Wgate^T (llama2.c's w1), before SiLU" },
    { .name = "ffn_up",    .shape = "TF",  .field = AT(ffn_up), .has = TW_HAS_SWIGLU,
      .meaning = "x Wup^T (llama2.c's w3)" },
    { .name = "ffn_act",   .shape = "TF",  .field = AT(ffn_act), .has = TW_HAS_SWIGLU,
      .meaning = "silu(ffn_gate) * ffn_up" },
    { .name = "router_logits", .shape = "TE", .field = AT(moe.logits), .has = TW_HAS_MOE,
      .meaning = "experts: x Wrouter^T, one logit per expert" },
    { .name = "router_probs", .shape = "TE", .field = AT(moe.probs), .has = TW_HAS_MOE,
      .meaning = "experts: softmax of router_logits over the E experts" },
    { .name = "moe_sel", .shape = "TK", .field = AT(moe_sel), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK | TW_TENSOR_INT,
      .meaning = "experts: the k chosen experts of each token, best first (ints)" },
    { .name = "moe_gates", .shape = "TK", .field = AT(moe.w), .has = TW_HAS_MOE,
      .meaning = "experts: the chosen experts' gate weights (renormalised over the k if norm_topk)" },
    { .name = "moe_count", .shape = "E", .field = AT(moe_count), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK | TW_TENSOR_INT,
      .meaning = "experts: rows (tokens) routed to each expert in this call (ints)" },
    { .name = "moe_start", .shape = "P", .field = AT(moe_start), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK | TW_TENSOR_INT,
      .meaning = "experts: expert e's first row in the grouped rows below (ints)" },
    { .name = "moe_row", .shape = "TK", .field = AT(moe_row), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK | TW_TENSOR_INT,
      .meaning = "experts: the grouped row of (token, choice) (ints)" },
    { .name = "moe_tok", .shape = "TK", .field = AT(moe_tok), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK | TW_TENSOR_INT,
      .meaning = "experts: the token of each grouped row (ints)" },
    { .name = "expert_in", .shape = "TKC", .field = AT(moe.xs), .has = TW_HAS_MOE,
      .meaning = "experts: ffn_norm's rows grouped by expert (expert e's are moe_start[e] ..)" },
    { .name = "expert_gate", .shape = "TKF", .field = AT(moe.g), .has = TW_HAS_MOE,
      .meaning = "experts: each grouped row's x Wgate_e^T, before SiLU" },
    { .name = "expert_up", .shape = "TKF", .field = AT(moe.u), .has = TW_HAS_MOE,
      .meaning = "experts: each grouped row's x Wup_e^T" },
    { .name = "expert_act", .shape = "TKF", .field = AT(moe.a), .has = TW_HAS_MOE,
      .meaning = "experts: silu(expert_gate) * expert_up" },
    { .name = "expert_out", .shape = "TKC", .field = AT(moe.eo), .has = TW_HAS_MOE,
      .meaning = "experts: each grouped row's expert output (before its gate weight)" },
    { .name = "shared_gate", .shape = "TQ", .field = AT(moe.sg), .has = TW_HAS_MOE_SHARED,
      .meaning = "experts: the shared expert's x Wgate^T, before SiLU" },
    { .name = "shared_up", .shape = "TQ", .field = AT(moe.su), .has = TW_HAS_MOE_SHARED,
      .meaning = "experts: the shared expert's x Wup^T" },
    { .name = "shared_act", .shape = "TQ", .field = AT(moe.sa), .has = TW_HAS_MOE_SHARED,
      .meaning = "experts: silu(shared_gate) * shared_up" },
    { .name = "shared_out", .shape = "TC", .field = AT(moe.so), .has = TW_HAS_MOE_SHARED,
      .meaning = "experts: the shared expert's output (added to every token's)" },
    { .name = "moe_dw", .shape = "TK", .field = AT(moe.dw), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK, .meaning = "experts' backward: d gate weights" },
    { .name = "moe_deo", .shape = "TKC", .field = AT(moe.deo), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK, .meaning = "experts' backward: d expert_out" },
    { .name = "moe_dxs", .shape = "TKC", .field = AT(moe.dxs), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK, .meaning = "experts' backward: d expert_in" },
    { .name = "moe_dg", .shape = "TKM", .field = AT(moe.dg), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK, .meaning = "experts' backward: one expert's d gate rows" },
    { .name = "moe_du", .shape = "TKM", .field = AT(moe.du), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK, .meaning = "experts' backward: one expert's d up rows" },
    { .name = "moe_dlogits", .shape = "TE", .field = AT(moe.dlogits), .has = TW_HAS_MOE,
      .flags = TW_TENSOR_WORK, .meaning = "experts' backward: d router_logits" },
    { .name = "ffn_out",   .shape = "TC",  .field = AT(ffn_out),
      .meaning = "the FFN sub-layer's output (W2 or Wdown back to C)" },
    { .name = "resid_post", .shape = "TC", .field = AT(resid_post),
      .meaning = "the stream leaving the block: pre-norm resid_mid + ffn_out; post-norm ffn_norm" },
    { .name = "attn_norm_mean", .shape = "T", .field = AT(attn_norm_mean), .has = TW_HAS_LAYERNORM,
      .flags = TW_TENSOR_STATS, .meaning = "Norm1's row means (LayerNorm)" },
    { .name = "attn_norm_rstd", .shape = "T", .field = AT(attn_norm_rstd), .has = TW_HAS_LAYERNORM,
      .flags = TW_TENSOR_STATS, .meaning = "Norm1's rows' 1/sqrt(var + eps) (LayerNorm)" },
    { .name = "attn_norm_rms",  .shape = "T", .field = AT(attn_norm_rms), .has = TW_HAS_RMSNORM,
      .flags = TW_TENSOR_STATS, .meaning = "Norm1's rows' sqrt(mean(x^2) + eps) (RMSNorm)" },
    { .name = "ffn_norm_mean",  .shape = "T", .field = AT(ffn_norm_mean), .has = TW_HAS_LAYERNORM,
      .flags = TW_TENSOR_STATS, .meaning = "Norm2's row means (LayerNorm)" },
    { .name = "ffn_norm_rstd",  .shape = "T", .field = AT(ffn_norm_rstd), .has = TW_HAS_LAYERNORM,
      .flags = TW_TENSOR_STATS, .meaning = "Norm2's rows' 1/sqrt(var + eps) (LayerNorm)" },
    { .name = "ffn_norm_rms",   .shape = "T", .field = AT(ffn_norm_rms), .has = TW_HAS_RMSNORM,
      .flags = TW_TENSOR_STATS, .meaning = "Norm2's rows' sqrt(mean(x^2) + eps) (RMSNorm)" },
    { .name = "attn_sum",       .shape = "TC", .field = AT(attn_sum), .has = TW_HAS_POSTNORM,
      .flags = TW_TENSOR_STATS, .meaning = "post-norm: attn_in + attn_out, the input of Norm1" },
    { .name = "ffn_sum",        .shape = "TC", .field = AT(ffn_sum), .has = TW_HAS_POSTNORM,
      .flags = TW_TENSOR_STATS, .meaning = "post-norm: resid_mid + ffn_out, the input of Norm2" },
    { .name = "ffn_pre",        .shape = "TF", .field = AT(ffn_pre), .has = TW_HAS_CLASSIC_FFN,
      .flags = TW_TENSOR_STATS, .meaning = "x W1^T + b1, the classic FFN's pre-activation (its backward needs it)" },
    { .name = "q_rms",          .shape = "TH", .field = AT(attn.q_rms), .has = TW_HAS_QK_NORM,
      .flags = TW_TENSOR_STATS, .meaning = "the QK-norm's sqrt(mean(q^2) + eps) of each query head's row" },
    { .name = "k_rms",          .shape = "NG", .field = AT(attn.k_rms), .has = TW_HAS_QK_NORM,
      .flags = TW_TENSOR_STATS, .meaning = "the QK-norm's sqrt(mean(k^2) + eps) of each key head's row" },
    { .name = "qh", .shape = "TD", .field = AT(attn.qh), .flags = TW_TENSOR_WORK, .has = TW_HAS_MHA,
      .meaning = "one query head's rows, contiguous" },
    { .name = "kh", .shape = "SD", .field = AT(attn.kh), .flags = TW_TENSOR_WORK, .has = TW_HAS_MHA,
      .meaning = "one kv head's key rows (all S keys), contiguous" },
    { .name = "vh", .shape = "SD", .field = AT(attn.vh), .flags = TW_TENSOR_WORK, .has = TW_HAS_MHA,
      .meaning = "one kv head's value rows (all S keys), contiguous" },
    { .name = "zh", .shape = "TD", .field = AT(attn.zh), .flags = TW_TENSOR_WORK, .has = TW_HAS_MHA,
      .meaning = "one head's output rows, contiguous" },
    { .name = "mla_qa_rms", .shape = "T", .field = AT(mla.qa_rms), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_STATS, .meaning = "latent attention: the query norm's row rms" },
    { .name = "mla_c_rms", .shape = "T", .field = AT(mla.c_rms), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_STATS, .meaning = "latent attention: the latent norm's row rms" },
    { .name = "mla_d_ao", .shape = "TY", .field = AT(mla.d_ao), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d ao (the forward borrows mla_d_kva)" },
    { .name = "mla_d_qn", .shape = "TW", .field = AT(mla.d_qn), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d qn (the forward borrows mla_d_kva)" },
    { .name = "mla_d_qp", .shape = "TX", .field = AT(mla.d_qp), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d qp (the forward borrows mla_d_kva)" },
    { .name = "mla_d_kn", .shape = "TW", .field = AT(mla.d_kn), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d kn (the forward borrows mla_d_kva)" },
    { .name = "mla_d_v", .shape = "TY", .field = AT(mla.d_v), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d v (the forward borrows mla_d_kva)" },
    { .name = "mla_d_kp", .shape = "TU", .field = AT(mla.d_kp), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d kp (the forward borrows mla_d_kva)" },
    { .name = "mla_d_q", .shape = "TB", .field = AT(mla.d_q), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d q (the forward borrows mla_d_kva)" },
    { .name = "mla_d_kv", .shape = "TZ", .field = AT(mla.d_kv), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d kv (the forward borrows mla_d_kva)" },
    { .name = "mla_d_c", .shape = "TR", .field = AT(mla.d_c), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d c (the forward borrows mla_d_kva)" },
    { .name = "mla_d_craw", .shape = "TR", .field = AT(mla.d_craw), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d craw (the forward borrows mla_d_kva)" },
    { .name = "mla_d_kva", .shape = "TO", .field = AT(mla.d_kva), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d kva (the forward borrows mla_d_kva)" },
    { .name = "mla_d_cq", .shape = "TA", .field = AT(mla.d_cq), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d cq (the forward borrows mla_d_kva)" },
    { .name = "mla_d_qa", .shape = "TA", .field = AT(mla.d_qa), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d qa (the forward borrows mla_d_kva)" },
    { .name = "mla_d_row", .shape = "T", .field = AT(mla.d_row), .has = TW_HAS_MLA,
      .flags = TW_TENSOR_WORK, .meaning = "latent attention's backward: d row (the forward borrows mla_d_kva)" },
};
const int tw_block_n_tensors = (int)(sizeof tw_block_tensors / sizeof tw_block_tensors[0]);

#undef AT

long tw_dims_of(const tw_dims *d, char letter) {
    switch (letter) {
    case 'T': return d->T;  case 'S': return d->S;  case 'C': return d->C;  case 'H': return d->H;
    case 'G': return d->G;  case 'D': return d->D;  case 'F': return d->F;  case 'V': return d->V;
    case 'N': return d->N;  case 'E': return d->E;  case 'K': return d->K;  case 'P': return d->P;
    case 'Q': return d->Q;  case 'M': return d->M;  case 'A': return d->A;  case 'R': return d->R;
    case 'U': return d->U;  case 'O': return d->O;  case 'B': return d->B;  case 'W': return d->W;
    case 'X': return d->X;  case 'Y': return d->Y;  case 'Z': return d->Z;
    default:  return 0;
    }
}

long tw_dims_count(const tw_dims *d, const char *letters) {
    long n = 1;
    for (const char *p = letters; *p; p++) n *= tw_dims_of(d, *p);
    return n;
}

int tw_block_has(const tw_block_config *cfg, tw_tensor_has has) {
    switch (has) {
    case TW_HAS_ALWAYS:      return 1;
    case TW_HAS_CLASSIC_FFN: return cfg->ffn == TW_FFN_CLASSIC;
    case TW_HAS_SWIGLU:      return cfg->ffn == TW_FFN_SWIGLU && cfg->moe_experts == 0;
    case TW_HAS_LAYERNORM:   return cfg->norm == TW_NORM_LAYER;
    case TW_HAS_RMSNORM:     return cfg->norm == TW_NORM_RMS;
    case TW_HAS_QK_NORM:     return cfg->attn.qk_norm != 0 && cfg->mla_kv_rank == 0;
    case TW_HAS_POSTNORM:    return !cfg->prenorm;
    case TW_HAS_MATERIALISED: return !cfg->attn.tiled && cfg->mla_kv_rank == 0;
    case TW_HAS_TILED:       return cfg->attn.tiled != 0 && cfg->mla_kv_rank == 0;
    case TW_HAS_MOE:         return cfg->moe_experts > 0;
    case TW_HAS_MOE_SHARED:  return cfg->moe_experts > 0 && cfg->moe_shared > 0;
    case TW_HAS_MHA:         return cfg->mla_kv_rank == 0;
    case TW_HAS_MLA:         return cfg->mla_kv_rank > 0;
    }
    return 0;
}

tw_dims tw_block_dims(const tw_block_config *cfg, long T, long S) {
    const tw_mha_config *a = &cfg->attn;
    tw_dims d = { .T = T, .S = S, .C = a->d_model, .H = a->n_head, .G = a->n_kv_head,
                  .D = a->head_dim, .F = cfg->ffn_hidden, .V = 0,
                  .N = T };   // self-attention projects the T rows' keys and values
    if (cfg->moe_experts > 0) {
        d.E = cfg->moe_experts;
        d.K = cfg->moe_top_k;
        d.P = d.E + 1;
        d.Q = (long)cfg->moe_shared * cfg->ffn_hidden;
        d.M = d.F > d.Q ? d.F : d.Q;
    }
    if (cfg->mla_kv_rank > 0) {
        const long H = a->n_head;
        d.A = cfg->mla_q_rank;
        d.R = cfg->mla_kv_rank;
        d.U = cfg->mla_d_rope;
        d.O = d.R + d.U;
        d.B = H * (cfg->mla_d_nope + cfg->mla_d_rope);
        d.W = H * cfg->mla_d_nope;
        d.X = H * cfg->mla_d_rope;
        d.Y = H * cfg->mla_d_v;
        d.Z = H * (cfg->mla_d_nope + cfg->mla_d_v);
    }
    return d;
}

// The float * of s that a table row names.
static float **tensor_slot(tw_block_acts *s, const tw_tensor_info *t) {
    return (float **)(void *)((char *)s + t->field);
}

float *tw_block_tensor(const tw_block_acts *s, const tw_tensor_info *t) {
    return *tensor_slot((tw_block_acts *)(void *)s, t);   // read only
}

size_t tw_block_acts_floats(const tw_block_config *cfg, int T_max, int S_max) {
    const tw_dims cap = tw_block_dims(cfg, T_max, S_max);
    size_t n = 0;
    for (int i = 0; i < tw_block_n_tensors; i++)
        if (tw_block_has(cfg, tw_block_tensors[i].has))
            n += (size_t)tw_dims_count(&cap, tw_block_tensors[i].shape);
    return n;
}

size_t tw_block_acts_place(tw_block_acts *s, float *mem, const tw_block_config *cfg,
                              int T_max, int S_max) {
    memset(s, 0, sizeof *s);
    const tw_dims cap = tw_block_dims(cfg, T_max, S_max);
    size_t used = 0;
    for (int i = 0; i < tw_block_n_tensors; i++) {
        const tw_tensor_info *t = &tw_block_tensors[i];
        if (!tw_block_has(cfg, t->has)) continue;
        *tensor_slot(s, t) = mem + used;
        used += (size_t)tw_dims_count(&cap, t->shape);
    }
    s->T_max = T_max;
    s->S_max = S_max;
    s->attn.T_max = T_max;
    s->attn.S_max = S_max;
    s->attn.H = cfg->attn.n_head;
    s->attn.G = cfg->attn.n_kv_head;
    s->attn.D = cfg->attn.head_dim;
    if (cfg->moe_experts > 0) {   // the integer rows, seen as the ints they hold
        s->moe.T_max = T_max;
        s->moe.sel = (int *)(void *)s->moe_sel;
        s->moe.row = (int *)(void *)s->moe_row;
        s->moe.tok = (int *)(void *)s->moe_tok;
        s->moe.count = (int *)(void *)s->moe_count;
        s->moe.start = (int *)(void *)s->moe_start;
    }
    if (cfg->mla_kv_rank > 0) s->mla.T_max = T_max;
    return used;
}

tw_status tw_block_acts_init(tw_block_acts *s, const tw_block_config *cfg, int T_max, int S_max) {
    memset(s, 0, sizeof *s);
    tw_status st = tw_block_config_check(cfg);
    if (st != TW_OK) return st;
    if (T_max <= 0 || S_max < T_max) return TW_ERR_ARG;
    float *mem = calloc(tw_block_acts_floats(cfg, T_max, S_max), sizeof(float));
    if (mem == NULL) return TW_ERR_NOMEM;
    tw_block_acts_place(s, mem, cfg, T_max, S_max);
    s->memory = mem;
    return TW_OK;
}

void tw_block_acts_free(tw_block_acts *s) {
    free(s->memory);
    memset(s, 0, sizeof *s);
}

// ---- attention alone, from the same table ----

// 1 if the row's tensor lives in tw_block_acts.attn (one of attention's intermediates).
static int in_attention(const tw_tensor_info *t) {
    const size_t at = offsetof(tw_block_acts, attn);
    return t->field >= at && t->field < at + sizeof(tw_mha_acts);
}

tw_status tw_mha_acts_init(tw_mha_acts *s, const tw_mha_config *cfg, int T_max, int S_max) {
    memset(s, 0, sizeof *s);
    tw_status st = tw_mha_config_check(cfg);
    if (st != TW_OK) return st;
    if (T_max <= 0 || S_max <= 0) return TW_ERR_ARG;
    const tw_dims cap = { .T = T_max, .S = S_max, .N = S_max, .C = cfg->d_model,
                          .H = cfg->n_head, .G = cfg->n_kv_head, .D = cfg->head_dim };
    const tw_block_config bc = { .attn = *cfg };   // for tw_block_has: QK-norm and tiling matter
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++) {   // count, then place
        size_t used = 0;
        for (int i = 0; i < tw_block_n_tensors; i++) {
            const tw_tensor_info *t = &tw_block_tensors[i];
            if (!in_attention(t) || !tw_block_has(&bc, t->has)) continue;
            if (pass == 1)
                *(float **)(void *)((char *)s + t->field - offsetof(tw_block_acts, attn)) =
                    s->memory + used;
            used += (size_t)tw_dims_count(&cap, t->shape);
        }
        if (pass == 0) {
            n = used;
            s->memory = calloc(n > 0 ? n : 1, sizeof(float));
            if (!s->memory) return TW_ERR_NOMEM;
        }
    }
    s->T_max = T_max; s->S_max = S_max;
    s->H = cfg->n_head; s->G = cfg->n_kv_head; s->D = cfg->head_dim;
    return TW_OK;
}

void tw_mha_acts_free(tw_mha_acts *s) {
    free(s->memory);
    memset(s, 0, sizeof *s);
}

// ---- the two sub-layers' pieces ----

// out = Norm(x) with the block's norm kind; its row statistics go to mean / rstd (LayerNorm) or
// rms (RMSNorm).
static void block_norm(float *out, float *mean, float *rstd, float *rms, const float *x,
                       const float *w, const float *b, const tw_block_config *cfg, int T) {
    const int C = cfg->attn.d_model;
    if (cfg->norm == TW_NORM_LAYER)
        tw_layernorm_forward(out, mean, rstd, x, w, b, T, C, cfg->norm_eps);
    else
        tw_rmsnorm_forward(out, rms, x, w, T, C, cfg->norm_eps);
}

static void block_ffn(float *out, tw_block_acts *s, const float *x, const tw_block_config *cfg,
                      const tw_block_weights *w, int T) {
    const int C = cfg->attn.d_model, F = cfg->ffn_hidden;
    if (cfg->moe_experts > 0) {
        const tw_moe_config mc = tw_block_moe_config(cfg);
        tw_moe_forward(out, &s->moe, x, &w->moe, &mc, T);
    } else if (cfg->ffn == TW_FFN_SWIGLU)
        tw_swiglu_forward(out, s->ffn_gate, s->ffn_up, s->ffn_act, x,
                          w->ffn_gate, w->ffn_up, w->ffn_down, T, C, F);
    else
        tw_ffn_forward_keep(out, s->ffn_pre, s->ffn_hidden, x, w->ffn_w1, w->ffn_b1, w->ffn_w2,
                            w->ffn_b2, T, C, F, cfg->act);   // tw_ffn_forward's arithmetic
}

// The attention sub-layer: mha.h's, or latent attention (which runs without a cache from
// position 0: tw_model_state_init refuses a cache for it).
static void block_attn(float *out, tw_block_acts *s, tw_kv_cache *cache, const float *x,
                       const tw_block_config *cfg, const tw_block_weights *w, int T, int pos0) {
    if (cfg->mla_kv_rank > 0) {
        assert(cache == NULL && pos0 == 0);
        const tw_mla_config ac = tw_block_mla_config(cfg);
        tw_mla_forward(out, &s->mla, x, &w->mla, &ac, T);
    } else {
        tw_mha_forward(out, &s->attn, cache, x, NULL, NULL, &cfg->attn, &w->attn, T, T, pos0);
    }
}

// y = a + b elementwise (the residual connection); y may alias a or b.
static void residual_add(float *y, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) y[i] = a[i] + b[i];
}

// ---- forward ----

void tw_block_forward(float *out, tw_block_acts *s, tw_kv_cache *cache, const float *x,
                      const tw_block_config *cfg, const tw_block_weights *w, int T, int pos0) {
    const int C = cfg->attn.d_model;
    const long n = (long)T * C;
    assert(T > 0 && T <= s->T_max);
    memmove(s->attn_in, x, (size_t)n * sizeof(float));   // from here on x is not read: out may alias it
    const float *xin = s->attn_in;

    if (cfg->prenorm) {
        // h = x + Attn(Norm1(x));   y = h + FFN(Norm2(h))
        block_norm(s->attn_norm, s->attn_norm_mean, s->attn_norm_rstd, s->attn_norm_rms, xin,
                   w->norm1_w, w->norm1_b, cfg, T);
        block_attn(s->attn_out, s, cache, s->attn_norm, cfg, w, T, pos0);
        residual_add(s->resid_mid, xin, s->attn_out, n);
        block_norm(s->ffn_norm, s->ffn_norm_mean, s->ffn_norm_rstd, s->ffn_norm_rms, s->resid_mid,
                   w->norm2_w, w->norm2_b, cfg, T);
        block_ffn(s->ffn_out, s, s->ffn_norm, cfg, w, T);
        residual_add(s->resid_post, s->resid_mid, s->ffn_out, n);
    } else {
        // h = Norm1(x + Attn(x));   y = Norm2(h + FFN(h))
        block_attn(s->attn_out, s, cache, xin, cfg, w, T, pos0);
        residual_add(s->attn_sum, xin, s->attn_out, n);
        block_norm(s->attn_norm, s->attn_norm_mean, s->attn_norm_rstd, s->attn_norm_rms,
                   s->attn_sum, w->norm1_w, w->norm1_b, cfg, T);
        memcpy(s->resid_mid, s->attn_norm, (size_t)n * sizeof(float));
        block_ffn(s->ffn_out, s, s->resid_mid, cfg, w, T);
        residual_add(s->ffn_sum, s->resid_mid, s->ffn_out, n);
        block_norm(s->ffn_norm, s->ffn_norm_mean, s->ffn_norm_rstd, s->ffn_norm_rms, s->ffn_sum,
                   w->norm2_w, w->norm2_b, cfg, T);
        memcpy(s->resid_post, s->ffn_norm, (size_t)n * sizeof(float));
    }
    if (out != s->resid_post) memcpy(out, s->resid_post, (size_t)n * sizeof(float));
}

// ---- backward ----

// The transpose of block_norm: dx += d Norm(x) / dx applied to dout; gains' gradients +=.
static void block_norm_backward(float *dx, float *dw, float *db, const float *dout, const float *x,
                                const float *mean, const float *rstd, const float *rms,
                                const float *w, const tw_block_config *cfg, int T) {
    const int C = cfg->attn.d_model;
    if (cfg->norm == TW_NORM_LAYER)
        tw_layernorm_backward(dx, dw, db, dout, x, mean, rstd, w, T, C);
    else
        tw_rmsnorm_backward(dx, dw, dout, x, rms, w, T, C);
}

// The transpose of block_ffn: dx += gradient of the FFN's input x; weights' gradients +=. The
// FFN's own intermediates' gradients land in ds (ffn_hidden, or ffn_gate and ffn_up; with
// experts router_logits, moe_gates and expert_out, copied from the work rows of s where the
// experts' backward computes them, together with the gradient of ds->aux_weight *
// cfg->moe_aux_coef * the load-balancing loss).
static void block_ffn_backward(float *dx, const tw_block_grads *dw, tw_block_acts *ds,
                               const float *dout, tw_block_acts *s, const float *x,
                               const tw_block_config *cfg, const tw_block_weights *w, int T) {
    const int C = cfg->attn.d_model, F = cfg->ffn_hidden;
    if (cfg->moe_experts > 0) {
        const tw_moe_config mc = tw_block_moe_config(cfg);
        const size_t TE = (size_t)T * mc.router.E, TK = (size_t)T * mc.router.k;
        tw_moe_backward(dx, &dw->moe, &s->moe, dout, x, &w->moe, &mc, T,
                        ds->aux_weight * cfg->moe_aux_coef);
        memcpy(ds->moe.logits, s->moe.dlogits, TE * sizeof(float));
        memcpy(ds->moe.w, s->moe.dw, TK * sizeof(float));
        memcpy(ds->moe.eo, s->moe.deo, TK * C * sizeof(float));
    } else if (cfg->ffn == TW_FFN_SWIGLU) {
        tw_swiglu_backward(dx, dw->ffn_gate, dw->ffn_up, dw->ffn_down, ds->ffn_gate, ds->ffn_up,
                           dout, s->ffn_gate, s->ffn_up, s->ffn_act, x,
                           w->ffn_gate.f32, w->ffn_up.f32, w->ffn_down.f32, T, C, F);
    } else {
        tw_ffn_backward(dx, dw->ffn_w1, dw->ffn_b1, dw->ffn_w2, dw->ffn_b2, ds->ffn_hidden, dout,
                        s->ffn_pre, s->ffn_hidden, x, w->ffn_w1.f32, w->ffn_w2.f32, T, C, F,
                        cfg->act);
    }
}

// y += a (the transpose of a residual branch or a copy: the gradient passes unchanged).
static void add_into(float *y, const float *a, long n) {
    for (long i = 0; i < n; i++) y[i] += a[i];
}

// The attention sub-layer's backward: dx += d Attn(x) / dx applied to dout. The gradients of
// attention's intermediates land in ds's own attention tensors (d z in ds->attn.z, ...); latent
// attention's in the work rows of s (mla.h).
static void block_attn_backward(float *dx, const tw_block_grads *dw, tw_block_acts *ds,
                                const float *dout, tw_block_acts *s, const float *x,
                                const tw_block_config *cfg, const tw_block_weights *w, int T) {
    if (cfg->mla_kv_rank > 0) {
        const tw_mla_config ac = tw_block_mla_config(cfg);
        tw_mla_backward(dx, &dw->mla, &s->mla, dout, x, &w->mla, &ac, T);
        return;
    }
    tw_mha_backward(dx, NULL, &dw->attn, &ds->attn, dout, &s->attn, x, NULL, &cfg->attn, &w->attn,
                    T, T, 0);
}

void tw_block_backward(float *dx, const tw_block_grads *dw, tw_block_acts *ds,
                       const float *dout, tw_block_acts *s, const tw_block_config *cfg,
                       const tw_block_weights *w, int T) {
    const int C = cfg->attn.d_model;
    const long n = (long)T * C;
    assert(T > 0 && T <= s->T_max && T <= ds->T_max);
    if (dout != ds->resid_post) memcpy(ds->resid_post, dout, (size_t)n * sizeof(float));

    if (cfg->prenorm) {
        // y = h + FFN(Norm2(h)): h gets dy directly and through the FFN and Norm2.
        add_into(ds->ffn_out, ds->resid_post, n);
        add_into(ds->resid_mid, ds->resid_post, n);
        block_ffn_backward(ds->ffn_norm, dw, ds, ds->ffn_out, s, s->ffn_norm, cfg, w, T);
        block_norm_backward(ds->resid_mid, dw->norm2_w, dw->norm2_b, ds->ffn_norm, s->resid_mid,
                            s->ffn_norm_mean, s->ffn_norm_rstd, s->ffn_norm_rms, w->norm2_w, cfg, T);
        // h = x + Attn(Norm1(x)): x gets dh directly and through attention and Norm1.
        add_into(ds->attn_out, ds->resid_mid, n);
        add_into(ds->attn_in, ds->resid_mid, n);
        block_attn_backward(ds->attn_norm, dw, ds, ds->attn_out, s, s->attn_norm, cfg, w, T);
        block_norm_backward(ds->attn_in, dw->norm1_w, dw->norm1_b, ds->attn_norm, s->attn_in,
                            s->attn_norm_mean, s->attn_norm_rstd, s->attn_norm_rms, w->norm1_w,
                            cfg, T);
    } else {
        // y = Norm2(b), b = h + FFN(h): back through Norm2, then b's two branches.
        add_into(ds->ffn_norm, ds->resid_post, n);
        block_norm_backward(ds->ffn_sum, dw->norm2_w, dw->norm2_b, ds->ffn_norm, s->ffn_sum,
                            s->ffn_norm_mean, s->ffn_norm_rstd, s->ffn_norm_rms, w->norm2_w, cfg, T);
        add_into(ds->ffn_out, ds->ffn_sum, n);
        add_into(ds->resid_mid, ds->ffn_sum, n);
        block_ffn_backward(ds->resid_mid, dw, ds, ds->ffn_out, s, s->resid_mid, cfg, w, T);
        // h = Norm1(a), a = x + Attn(x) (resid_mid is a copy of attn_norm = h).
        add_into(ds->attn_norm, ds->resid_mid, n);
        block_norm_backward(ds->attn_sum, dw->norm1_w, dw->norm1_b, ds->attn_norm, s->attn_sum,
                            s->attn_norm_mean, s->attn_norm_rstd, s->attn_norm_rms, w->norm1_w,
                            cfg, T);
        add_into(ds->attn_out, ds->attn_sum, n);
        add_into(ds->attn_in, ds->attn_sum, n);
        block_attn_backward(ds->attn_in, dw, ds, ds->attn_out, s, s->attn_in, cfg, w, T);
    }
    add_into(dx, ds->attn_in, n);
}
