// batch.c: batched decoding over a paged KV cache (see batch.h). The steps of one layer mirror
// tw_block_forward's pre-norm path (nn/block.c) and tw_mha_forward (nn/mha.c), row for row:
//   xn = Norm1(x); q, k, v = xn Wq^T, Wk^T, Wv^T      all R rows at once
//   per row: QK-norm, RoPE at its own position, k and v stored through its block table
//   per row and head: attention over its sequence's positions 0 .. pos
//   x += z Wo^T; xn = Norm2(x); x += FFN(xn)          all R rows at once
#include <stdlib.h>
#include <string.h>
#include "nn/activation.h"
#include "nn/embedding.h"
#include "nn/ffn.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/posenc.h"
#include "nn/rope.h"
#include "nn/rope_scaling.h"
#include "nn/sdpa.h"
#include "simd/simd.h"
#include "decode/batch.h"
#include "decode/sampler.h"

int tw_batch_supports(const tw_model *m) {
    const tw_model_config *c = &m->cfg;
    return c->block.prenorm && c->pos != TW_POS_SINUSOIDAL && !c->embed_scale &&
           c->block.moe_experts == 0 &&   // its FFN is the dense one
           c->block.mla_kv_rank == 0;     // and its attention mha.h's
}

// The RoPE frequencies and magnitude of tw_mha_forward's rotation (nn/mha.c's
// normalize_and_rotate): tw_rope_scaled_forward's when the model scales RoPE past its trained
// context, else tw_rope_forward's (tw_rope_scaled_freqs with kind NONE is theta^(-2i/D), the same
// pow, and its magnitude 1), so tw_rope_rotate with their angles gives those functions' bits.
//   freq: (D/2)
static void rope_frequencies(double *freq, double *mag, const tw_mha_config *a) {
    *mag = 1.0;
    if (a->rope == TW_ROPE_NONE) return;
    tw_rope_scaled_freqs(freq, a->head_dim, a->rope_theta, &a->rope_scaling);
    *mag = tw_rope_scaling_attention_factor(&a->rope_scaling);
}

tw_status tw_batch_init(tw_batch *b, const tw_model *m, int R_max, int S_max, int block_size,
                        int n_blocks) {
    memset(b, 0, sizeof *b);
    const tw_model_config *c = &m->cfg;
    const tw_mha_config *a = &c->block.attn;
    if (!tw_batch_supports(m) || R_max < 1 || S_max < 1 || S_max > c->max_seq)
        return TW_ERR_ARG;
    tw_status st = tw_paged_pool_init(&b->pool, c->n_layer, a->n_kv_head, a->head_dim, block_size,
                                      n_blocks);
    if (st != TW_OK) return st;
    b->m = m;
    b->R_max = R_max;
    b->S_max = S_max;
    const size_t C = (size_t)a->d_model, HD = (size_t)a->n_head * a->head_dim;
    const size_t GD = (size_t)a->n_kv_head * a->head_dim, F = (size_t)c->block.ffn_hidden;
    const size_t R = (size_t)R_max, S = (size_t)S_max, V = (size_t)c->vocab;
    const size_t D = (size_t)a->head_dim;
    float **bufs[] = { &b->x, &b->xn, &b->q, &b->k, &b->v, &b->z, &b->sub_out, &b->f1, &b->f2,
                       &b->f3, &b->kg, &b->vg, &b->scores, &b->pattern, &b->logits, &b->kh, &b->vh,
                       &b->rope_cos, &b->rope_sin, &b->head_scratch };
    const size_t sizes[] = { R * C, R * C, R * HD, R * GD, R * GD, R * HD, R * C, R * F, R * F,
                             R * F, S * GD, S * GD, S, S, R * V, S * D, S * D, R * (D / 2),
                             R * (D / 2), tw_linear_packed_argmax_floats(R_max) };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if ((*bufs[i] = malloc((sizes[i] ? sizes[i] : 1) * sizeof(float))) == NULL) {
            tw_batch_free(b);
            return TW_ERR_NOMEM;
        }
    if ((b->rope_freq = malloc((D / 2 ? D / 2 : 1) * sizeof(double))) == NULL) {
        tw_batch_free(b);
        return TW_ERR_NOMEM;
    }
    b->k_rows = malloc(S * sizeof *b->k_rows);
    b->v_rows = malloc(S * sizeof *b->v_rows);
    if (b->k_rows == NULL || b->v_rows == NULL) {
        tw_batch_free(b);
        return TW_ERR_NOMEM;
    }
    rope_frequencies(b->rope_freq, &b->rope_mag, a);
    // Weights with other copies (int8) run the kernels of the level selected now, as
    // tw_model_state_init makes them do for decoding alone (nn/linear.h).
    if (m->copies && tw_linear_copies_select(m->copies) != TW_OK) {
        tw_batch_free(b);
        return TW_ERR_NOMEM;
    }
    return TW_OK;
}

void tw_batch_free(tw_batch *b) {
    tw_paged_pool_free(&b->pool);
    float *bufs[] = { b->x, b->xn, b->q, b->k, b->v, b->z, b->sub_out, b->f1, b->f2, b->f3,
                      b->kg, b->vg, b->scores, b->pattern, b->logits, b->kh, b->vh,
                      b->rope_cos, b->rope_sin, b->head_scratch };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) free(bufs[i]);
    free(b->rope_freq);
    free(b->k_rows);
    free(b->v_rows);
    memset(b, 0, sizeof *b);
}

// The block's norm over R rows (LayerNorm or RMSNorm, as the model says).
static void norm_rows(float *out, const float *x, const float *w, const float *bias,
                      const tw_model_config *c, int R) {
    const int C = c->block.attn.d_model;
    if (c->block.norm == TW_NORM_LAYER)
        tw_layernorm_forward(out, NULL, NULL, x, w, bias, R, C, c->block.norm_eps);
    else
        tw_rmsnorm_forward(out, NULL, x, w, R, C, c->block.norm_eps);
}

// Each row's RoPE angles at its position, once per call: its q and k in every layer share them.
//   b->rope_cos, b->rope_sin: (R, D/2)
static void rope_angles_rows(tw_batch *b, const int *pos, int R) {
    const tw_mha_config *a = &b->m->cfg.block.attn;
    if (a->rope == TW_ROPE_NONE) return;
    const int half = a->head_dim / 2;
    for (int r = 0; r < R; r++)
        tw_rope_freq_angles(b->rope_cos + (size_t)r * half, b->rope_sin + (size_t)r * half, pos[r],
                            a->head_dim, b->rope_freq, b->rope_mag);
}

// RoPE on row r's n_heads heads at its position (angles from rope_angles_rows), scaled past the
// trained context when the model says so: what tw_mha_forward's normalize_and_rotate does
// (nn/mha.c), bit for bit.   x: (n_heads * D)
static void rotate_row(float *x, const tw_batch *b, int r, int n_heads) {
    const tw_mha_config *a = &b->m->cfg.block.attn;
    const size_t half = (size_t)a->head_dim / 2;
    tw_rope_rotate(x, a->rope, b->rope_cos + r * half, b->rope_sin + r * half, n_heads,
                   a->head_dim);
}

// y += a (the residual connection; the block's y = x + a, in place).
static void add_rows(float *y, const float *a, long n) {
    for (long i = 0; i < n; i++) y[i] = y[i] + a[i];
}

// One Linear layer over R rows: on the packed copy Wp when the caller gave the batch panels (the
// fast kernel), else the decode's matvec sums (tw_linear_forward_rows).
static void linear_rows(float *y, const float *x, tw_weight W, const float *Wp, const float *bias,
                        int R, int C_in, int C_out) {
    if (Wp) tw_linear_packed(y, x, Wp, bias, R, C_out, C_in);
    else    tw_linear_forward_rows(y, x, W, bias, R, C_in, C_out);
}

// Block l's packed matrices, or all NULL (no panels).
static tw_layer_panels layer_panels(const tw_batch *b, int l) {
    return b->panels ? b->panels->layers[l] : (tw_layer_panels){ 0 };
}

// The FFN of tw_swiglu_forward / tw_ffn_forward_keep (nn/ffn.c), its Linear layers over all R rows
// at once: b->sub_out = FFN(b->xn).
static void ffn_rows(tw_batch *b, const tw_block_weights *w, const tw_layer_panels *p, int R) {
    const tw_model_config *c = &b->m->cfg;
    const int C = c->block.attn.d_model, F = c->block.ffn_hidden;
    const long n = (long)R * F;
    if (c->block.ffn == TW_FFN_SWIGLU) {   // f1 = gate, f2 = up, f3 = silu(gate) * up
        linear_rows(b->f1, b->xn, w->ffn_gate, p->ffn_gate, NULL, R, C, F);
        linear_rows(b->f2, b->xn, w->ffn_up, p->ffn_up, NULL, R, C, F);
        if (!tw_simd_swiglu(b->f3, b->f1, b->f2, n)) tw_swiglu(b->f3, b->f1, b->f2, n);
        linear_rows(b->sub_out, b->f3, w->ffn_down, p->ffn_down, NULL, R, F, C);
    } else {                               // f1 = pre, f2 = act(pre)
        linear_rows(b->f1, b->xn, w->ffn_w1, p->ffn_w1, w->ffn_b1, R, C, F);
        tw_activation(b->f2, b->f1, n, c->block.act);
        linear_rows(b->sub_out, b->f2, w->ffn_w2, p->ffn_w2, w->ffn_b2, R, F, C);
    }
}

// One row's attention, head by head, as tw_mha_forward's decode (one query, every key), over
// the S positions of its sequence that b->k_rows, b->v_rows point at in the pool: the fused kernel
// reading them in place, the bits of tw_simd_attend_one over the same rows gathered.
//   z, q: (H * D)
static void attend_in_place(tw_batch *b, float *z, const float *q, int S) {
    const tw_mha_config *a = &b->m->cfg.block.attn;
    const int H = a->n_head, D = a->head_dim, group = H / a->n_kv_head;
    for (int h = 0; h < H; h++)
        tw_simd_attend_one_rows(z + (size_t)h * D, b->scores, b->pattern, q + (size_t)h * D,
                                b->k_rows, b->v_rows, (long)(h / group) * D, S, D);
}

// The same over the S positions gathered in b->kg, b->vg (levels without the in-place kernel).
//   z, q: (H * D)
static void attend_gathered(tw_batch *b, float *z, const float *q, int S) {
    const tw_mha_config *a = &b->m->cfg.block.attn;
    const int H = a->n_head, D = a->head_dim, G = a->n_kv_head, GD = G * D, group = H / G;
    int head_in_kh = -1;   // the kv head now in b->kh, b->vh
    for (int h = 0; h < H; h++) {
        const int g = h / group;
        if (tw_simd_attend_one(z + (size_t)h * D, b->scores, b->pattern, q + (size_t)h * D,
                               b->kg + (size_t)g * D, b->vg + (size_t)g * D, S, D, GD))
            continue;
        // A level without the fused kernel (naive, NEON): tw_mha_forward's own fallback, the
        // head's keys and values made contiguous and tw_sdpa_forward over one query at position
        // S - 1, so the scores are summed by the same Linear kernel as there (tw_sdpa_one's
        // in-order loop is another sum at the NEON level).
        if (g != head_in_kh) {
            for (int s = 0; s < S; s++) {
                memcpy(b->kh + (size_t)s * D, b->kg + (size_t)s * GD + (size_t)g * D, (size_t)D * sizeof(float));
                memcpy(b->vh + (size_t)s * D, b->vg + (size_t)s * GD + (size_t)g * D, (size_t)D * sizeof(float));
            }
            head_in_kh = g;
        }
        tw_sdpa_forward(z + (size_t)h * D, b->scores, b->pattern, q + (size_t)h * D, b->kh, b->vh,
                        NULL, 1, S, D, a->causal, S - 1);
    }
}

// tw_batch_forward and tw_batch_forward_greedy: the head writes logits (next NULL) or tokens.
static tw_status forward(tw_batch *b, tw_block_table *const tables[], const int *tokens,
                         const int *pos, const unsigned char *want, int R, int *next) {
    const tw_model *m = b->m;
    const tw_model_config *c = &m->cfg;
    const tw_mha_config *a = &c->block.attn;
    const int C = a->d_model, H = a->n_head, G = a->n_kv_head, D = a->head_dim;
    const int V = c->vocab, HD = H * D, GD = G * D;
    if (R < 1 || R > b->R_max) return TW_ERR_ARG;
    for (int r = 0; r < R; r++)
        if (pos[r] < 0 || pos[r] >= b->S_max ||
            pos[r] / b->pool.block_size >= tables[r]->n_blocks)
            return TW_ERR_ARG;

    // Embeddings (+ learned positions, each row at its own position).
    tw_status st = tw_embedding_forward(b->x, tokens, m->tok_emb, R, V, C);
    if (st != TW_OK) return st;
    if (c->pos == TW_POS_LEARNED)
        for (int r = 0; r < R; r++) tw_posenc_learned_add(b->x + (size_t)r * C, m->pos_emb, 1, C, pos[r]);

    rope_angles_rows(b, pos, R);
    for (int l = 0; l < c->n_layer; l++) {
        const tw_block_weights *w = &m->layers[l];
        const tw_layer_panels p = layer_panels(b, l);
        // Attention: the three projections over every row in one call.
        norm_rows(b->xn, b->x, w->norm1_w, w->norm1_b, c, R);
        linear_rows(b->q, b->xn, w->attn.wq, p.wq, w->attn.bq, R, C, HD);
        linear_rows(b->k, b->xn, w->attn.wk, p.wk, w->attn.bk, R, C, GD);
        linear_rows(b->v, b->xn, w->attn.wv, p.wv, w->attn.bv, R, C, GD);
        // Every row's key (normed and rotated) and value go into the cache first, so that rows of
        // one sequence in this call see each other; then each row attends.
        for (int r = 0; r < R; r++) {
            float *k = b->k + (size_t)r * GD;
            if (a->qk_norm) tw_rmsnorm_forward(k, NULL, k, w->attn.k_norm, G, D, a->norm_eps);
            rotate_row(k, b, r, G);
            memcpy(tw_paged_key(&b->pool, tables[r], l, pos[r]), k, (size_t)GD * sizeof *k);
            memcpy(tw_paged_value(&b->pool, tables[r], l, pos[r]), b->v + (size_t)r * GD,
                   (size_t)GD * sizeof *k);
        }
        // A sequence's keys and values are found (or gathered) once for its run of consecutive
        // rows (a prefill), up to the run's last position: every row of the run reads a prefix.
        const int in_place = tw_simd.attend_rows != NULL;
        const tw_block_table *ready = NULL;   // the sequence whose rows are ready
        for (int r = 0; r < R; r++) {
            float *q = b->q + (size_t)r * HD, *z = b->z + (size_t)r * HD;
            if (a->qk_norm) tw_rmsnorm_forward(q, NULL, q, w->attn.q_norm, H, D, a->norm_eps);
            rotate_row(q, b, r, H);
            if (tables[r] != ready) {
                int upto = pos[r] + 1;
                for (int u = r + 1; u < R && tables[u] == tables[r]; u++)
                    if (pos[u] + 1 > upto) upto = pos[u] + 1;
                if (in_place) tw_paged_rows(b->k_rows, b->v_rows, &b->pool, tables[r], l, upto);
                else          tw_paged_gather(b->kg, b->vg, &b->pool, tables[r], l, upto);
                ready = tables[r];
            }
            if (in_place) attend_in_place(b, z, q, pos[r] + 1);
            else          attend_gathered(b, z, q, pos[r] + 1);
        }
        linear_rows(b->sub_out, b->z, w->attn.wo, p.wo, w->attn.bo, R, HD, C);
        add_rows(b->x, b->sub_out, (long)R * C);
        // The FFN over every row.
        norm_rows(b->xn, b->x, w->norm2_w, w->norm2_b, c, R);
        ffn_rows(b, w, &p, R);
        add_rows(b->x, b->sub_out, (long)R * C);
    }

    // The final norm, then the head over the rows that asked for logits, packed.
    int n_want = 0;
    for (int r = 0; r < R; r++) {
        if (want && !want[r]) continue;
        if (n_want != r) memcpy(b->x + (size_t)n_want * C, b->x + (size_t)r * C, (size_t)C * sizeof(float));
        n_want++;
    }
    if (n_want == 0) return TW_OK;
    if (!c->final_norm)
        memcpy(b->xn, b->x, (size_t)n_want * C * sizeof(float));
    else
        norm_rows(b->xn, b->x, m->final_w, m->final_b, c, n_want);
    if (next && b->panels) {   // the greedy head: no logits written
        tw_linear_packed_argmax(next, b->head_scratch, b->xn, b->panels->head, n_want, V, C);
        return TW_OK;
    }
    linear_rows(b->logits, b->xn, m->head, b->panels ? b->panels->head : NULL, NULL, n_want, C, V);
    if (next)
        for (int j = 0; j < n_want; j++) next[j] = tw_argmax(b->logits + (size_t)j * V, V);
    return TW_OK;
}

tw_status tw_batch_forward(tw_batch *b, tw_block_table *const tables[], const int *tokens,
                           const int *pos, const unsigned char *want, int R) {
    return forward(b, tables, tokens, pos, want, R, NULL);
}

tw_status tw_batch_forward_greedy(tw_batch *b, tw_block_table *const tables[], const int *tokens,
                                  const int *pos, const unsigned char *want, int R, int *next) {
    return forward(b, tables, tokens, pos, want, R, next);
}
