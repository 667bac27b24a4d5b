// fuzz_moe_file.c: libFuzzer target for the TWMX reader of models with experts or latent
// attention (tw_moe_file_load, lib/train/moe_file.c), what ./train --init and ./generate read. The input
// is a file: the reader must accept it or fail with one line. An accepted model must keep the
// reader's promises (moe_file.h): 1 <= top_k <= n_experts <= 1024, 0 <= n_shared <= 64, a
// SwiGLU FFN, every weight finite; then, for small shapes, one forward and one training step run
// on it (the load-balancing loss on), so inconsistent sizes show up as out-of-bounds accesses
// under ASan.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <math.h>
#include <string.h>
#include "fuzz_file.h"
#include "nn/model.h"
#include "train/step.h"
#include "train/moe_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_promises(const tw_model *m) {
    const tw_block_config *b = &m->cfg.block;
    const int moe = b->moe_experts > 0, mla = b->mla_kv_rank > 0;
    if (!moe && !mla) abort();   // a dense model is not a TWMX file
    if (moe && (b->moe_experts > TW_MOE_FILE_MAX_EXPERTS || b->moe_top_k < 1 ||
                b->moe_top_k > b->moe_experts || b->moe_shared < 0 ||
                b->moe_shared > TW_MOE_FILE_MAX_SHARED || b->ffn != TW_FFN_SWIGLU))
        abort();
    // Version 2's latent attention (block.mla_*): every size in its range, d_rope even.
    if (mla && (b->mla_q_rank < 1 || b->mla_q_rank > TW_MOE_FILE_MAX_RANK ||
                b->mla_kv_rank > TW_MOE_FILE_MAX_RANK || b->mla_d_nope < 1 ||
                b->mla_d_nope > TW_MOE_FILE_MAX_HEAD_DIM || b->mla_d_rope < 2 || b->mla_d_rope % 2 ||
                b->mla_d_rope > TW_MOE_FILE_MAX_HEAD_DIM || b->mla_d_v < 1 ||
                b->mla_d_v > TW_MOE_FILE_MAX_HEAD_DIM || b->attn.qk_norm || m->cfg.bias))
        abort();
    if (tw_model_config_check(&m->cfg) != TW_OK) abort();
    for (long i = 0; i < m->n_floats; i++)
        if (!isfinite(m->memory[i])) abort();
}

// One training step on a batch of token 0 (always in the vocabulary), rows of up to 4 tokens.
static void one_step(tw_model *m) {
    if (m->n_floats > 100000 || (long)m->cfg.n_layer * m->cfg.block.moe_experts > 256) return;
    const int T = m->cfg.max_seq < 4 ? m->cfg.max_seq : 4;
    m->cfg.block.moe_aux_coef = 0.01f;
    tw_trainer t;
    if (tw_trainer_init(&t, m, T) != TW_OK) return;
    int in[4] = { 0 }, tg[4] = { 0 };
    const tw_train_config c = { 1, T, 2, 0, 1e-3f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    tw_train_stats st;
    const tw_status s = tw_train_step(&st, &t, m, in, tg, &c);
    if (s != TW_OK && s != TW_ERR_ARG) abort();   // TW_ERR_ARG: a non-finite loss, allowed
    tw_trainer_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    tw_model m;
    char err[512] = "";
    const tw_status st = tw_moe_file_load(&m, path, err, sizeof err);
    if (st == TW_OK) {
        check_promises(&m);
        one_step(&m);
        tw_model_free(&m);
    } else if (err[0] == '\0' || strchr(err, '\n') || m.memory != NULL) {
        abort();
    }
    return 0;
}
