// batch_panels.c: packing a model's matrices for the batch's fast Linear (see batch_panels.h).
#include <stdlib.h>
#include <string.h>
#include "simd/simd.h"
#include "decode/batch.h"
#include "decode/batch_panels.h"

// A matrix the packed kernel can take: fp32, no int8 copy, no adapter.
static int packable(tw_weight w) { return w.f32 && !w.q8 && !w.lora; }

// The floats one (N, K) matrix takes packed, rounded up to 16 so that each starts 64-byte aligned.
static size_t panel_floats(tw_weight w, int N, int K) {
    return packable(w) ? (tw_linear_packed_floats(N, K) + 15) / 16 * 16 : 0;
}

// Packs w into *next when it can, moving *next past it; the packed matrix, or NULL.
static const float *pack_into(float **next, tw_weight w, int N, int K) {
    if (!packable(w)) return NULL;
    float *Wp = *next;
    tw_linear_pack(Wp, w.f32, N, K);
    *next += panel_floats(w, N, K);
    return Wp;
}

// The (weight, rows, columns) of every matrix of block l and of the head, in one list, so that
// the sizing and the packing walk the same matrices. slots[i] receives matrix i's packed copy.
typedef struct { tw_weight w; int N, K; const float **slot; } matrix_ref;

static int list_matrices(matrix_ref *out, const tw_model *m, tw_layer_panels *lp, int l) {
    const tw_model_config *c = &m->cfg;
    const tw_mha_config *a = &c->block.attn;
    const int C = a->d_model, HD = a->n_head * a->head_dim, GD = a->n_kv_head * a->head_dim;
    const int F = c->block.ffn_hidden;
    const tw_block_weights *w = &m->layers[l];
    int n = 0;
    out[n++] = (matrix_ref){ w->attn.wq, HD, C, &lp->wq };
    out[n++] = (matrix_ref){ w->attn.wk, GD, C, &lp->wk };
    out[n++] = (matrix_ref){ w->attn.wv, GD, C, &lp->wv };
    out[n++] = (matrix_ref){ w->attn.wo, C, HD, &lp->wo };
    if (c->block.ffn == TW_FFN_SWIGLU) {
        out[n++] = (matrix_ref){ w->ffn_gate, F, C, &lp->ffn_gate };
        out[n++] = (matrix_ref){ w->ffn_up, F, C, &lp->ffn_up };
        out[n++] = (matrix_ref){ w->ffn_down, C, F, &lp->ffn_down };
    } else {
        out[n++] = (matrix_ref){ w->ffn_w1, F, C, &lp->ffn_w1 };
        out[n++] = (matrix_ref){ w->ffn_w2, C, F, &lp->ffn_w2 };
    }
    return n;
}

tw_status tw_batch_panels_init(tw_batch_panels *p, const tw_model *m) {
    memset(p, 0, sizeof *p);
    if (!tw_batch_supports(m)) return TW_ERR_ARG;
    const tw_model_config *c = &m->cfg;
    const int C = c->block.attn.d_model, V = c->vocab;
    if ((p->layers = calloc((size_t)c->n_layer, sizeof *p->layers)) == NULL) return TW_ERR_NOMEM;
    size_t floats = panel_floats(m->head, V, C);
    matrix_ref refs[8];
    for (int l = 0; l < c->n_layer; l++) {
        const int n = list_matrices(refs, m, &p->layers[l], l);
        for (int i = 0; i < n; i++) floats += panel_floats(refs[i].w, refs[i].N, refs[i].K);
    }
    if (floats == 0) {   // every matrix int8 or adapted: nothing the packed kernel could run
        tw_batch_panels_free(p);
        return TW_ERR_SHAPE;
    }
    if ((p->mem = aligned_alloc(64, floats * sizeof(float))) == NULL) {
        tw_batch_panels_free(p);
        return TW_ERR_NOMEM;
    }
    float *next = p->mem;
    for (int l = 0; l < c->n_layer; l++) {
        const int n = list_matrices(refs, m, &p->layers[l], l);
        for (int i = 0; i < n; i++) *refs[i].slot = pack_into(&next, refs[i].w, refs[i].N, refs[i].K);
    }
    p->head = pack_into(&next, m->head, V, C);
    return TW_OK;
}

void tw_batch_panels_free(tw_batch_panels *p) {
    free(p->mem);
    free(p->layers);
    memset(p, 0, sizeof *p);
}

const char *tw_batch_panels_why(tw_status st) {
    switch (st) {
    case TW_ERR_SHAPE: return "the model's matrices are int8, which the packed panels do not take: drop --packed";
    case TW_ERR_NOMEM: return "cannot allocate the packed copy of the weights (the model's size again)";
    default:           return "batched decoding does not run this model";
    }
}
