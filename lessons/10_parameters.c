// Lesson 10: where the parameters live.
//
// Teaches: what a parameter is (every number in a weight matrix, bias or norm gain; buffers are
// not; a tied matrix counts once); how GPT-2 124M, Llama-2-7B and Qwen3-8B divide theirs between
// embeddings, attention, MLP, norms and the output head, layer by layer, read from their Hugging
// Face config.json files; where two hand calculations a learner may meet go wrong (a small
// model's table that does not add up, Qwen3-8B counted with intermediate_size 14336); how much memory the weights
// take at fp32/bf16/int8 and how big the KV cache grows with the context (and why GQA shrinks it).
// Calls: tw_json_read_file, tw_hf_config_from_json, tw_params_count, tw_params_weight_bytes,
//        tw_hf_kv_bytes (the same code as ./params).
// Build & run: make lesson10 && ./lesson10 [--context N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/10_parameters.gp    (reads out/lesson10/breakdown.dat)
// Needs: data/configs/gpt2.json data/configs/Llama-2-7b.json data/configs/Qwen3-8B.json
// Needs: data/configs/small-swiglu.json
// Writes: breakdown.dat kv_cache.dat qwen3_layers.dat
// Pictures: breakdown.png
#include <stdio.h>
#include <string.h>
#include "lesson.h"
#include "formats/hf_config.h"

static const lesson_info INFO = {
    10, "Where the parameters live",
    "A model's size is the number of learned numbers in it. This lesson reads the config.json of "
    "GPT-2 124M, Llama-2-7B, Qwen3-8B and more, and counts every weight matrix, bias and norm "
    "gain the way the Hugging Face modules create them, reproducing the published totals exactly "
    "(124,439,808 for GPT-2, 8,190,735,360 for Qwen3-8B). It shows the share of embeddings, "
    "attention and MLP, checks two hand calculations a learner may meet and finds their "
    "mistakes, then turns counts into memory: weights at fp32/bf16/int8 and the KV cache at "
    "--context tokens (default 4096). The same counter is the ./params tool."
};

// ---- helpers ----

// 1234567 -> "1,234,567" (tw_format_count). Eight rotating buffers so one printf can
// format several numbers.
static const char *commas(int64_t n) {
    static char bufs[8][TW_COUNT_STR_LEN];
    static int next;
    return tw_format_count(bufs[next++ & 7], n);
}

static double gib(int64_t bytes) { return (double)bytes / (1024.0 * 1024.0 * 1024.0); }
static double pct(int64_t part, int64_t whole) { return 100.0 * (double)part / (double)whole; }

typedef struct {
    const char *label;      // short name for tables and the chart
    const char *file;       // data/configs/...
    int64_t     published;  // 0: no published total
    tw_hf_config cfg;
    tw_param_counts  n;
} model;

static void load(model *m) {
    char err[512];
    tw_json *root = NULL;
    if (tw_json_read_file(&root, m->file, err, sizeof err) != TW_OK) lesson_die("%s", err);
    tw_status st = tw_hf_config_from_json(&m->cfg, root, err, sizeof err);
    tw_json_free(root);
    if (st != TW_OK) lesson_die("%s: %s", m->file, err);
    LESSON_TRY(tw_params_count(&m->n, &m->cfg));
}

// The lesson's own sum of the parts, so a slip in either this sum or the library's shows up.
static int64_t sum_of_parts(const tw_param_counts *n, int64_t n_layer) {
    int64_t layer = n->attn_norm + n->mlp_norm + n->q + n->k + n->v + n->o + n->q_b + n->k_b +
                    n->v_b + n->o_b + n->q_norm + n->k_norm + n->gate + n->up + n->down +
                    n->gate_b + n->up_b + n->down_b;
    return n->tok_embed + n->pos_embed + n_layer * layer + n->final_norm + n->lm_head;
}

static void line(const char *name, const char *formula, int64_t count) {
    printf("    %-30s %-28s %16s\n", name, formula, commas(count));
}

// ---- the walk-throughs ----

static void walk_gpt2(const model *m) {
    const tw_param_counts *n = &m->n;
    const tw_hf_config *c = &m->cfg;
    lesson_say("GPT-2 (%s) has V = %lld tokens, C = %lld channels, %lld layers and a learned "
               "position table of %lld rows. Its Conv1D layers all carry a bias, its LayerNorms "
               "have a gain and a bias (2C each), its MLP is 4C = %lld wide, and the output head "
               "reuses the token embedding (tied), so it adds nothing.",
               m->file, (long long)c->vocab, (long long)c->d_model, (long long)c->n_layer,
               (long long)c->max_seq, (long long)c->ffn_hidden);
    line("wte (token embedding)", "V x C", n->tok_embed);
    line("wpe (position embedding)", "1024 x C", n->pos_embed);
    printf("    one layer:\n");
    line("  ln_1", "2C", n->attn_norm);
    line("  attn.c_attn (q, k, v fused)", "C x 3C + 3C", n->q + n->k + n->v + n->q_b + n->k_b + n->v_b);
    line("  attn.c_proj", "C x C + C", n->o + n->o_b);
    line("  ln_2", "2C", n->mlp_norm);
    line("  mlp.c_fc", "C x 4C + 4C", n->up + n->up_b);
    line("  mlp.c_proj", "4C x C + C", n->down + n->down_b);
    line("  = one layer", "", n->layer);
    line("12 layers", "12 x layer", n->layers);
    line("ln_f", "2C", n->final_norm);
    line("lm_head", "tied to wte", 0);
    line("total", "", n->total);
    lesson_note("attention is %s per layer and the MLP %s: the MLP holds twice as much, because "
                "4C x C twice is 8C^2 against the 4C^2 of q, k, v and the output.",
                commas(n->attn_layer), commas(n->mlp_layer));
    lesson_note("almost a third (%.1f%%) of GPT-2 small is its token embedding: small models with "
                "big vocabularies are mostly lookup table. (The table in section 7 shows %.1f%%: "
                "there \"embed\" also counts wpe, the %s position embeddings, and %s / %s = "
                "%.1f%%.)", pct(n->tok_embed, n->total), pct(n->tok_embed + n->pos_embed, n->total),
                commas(n->pos_embed), commas(n->tok_embed + n->pos_embed), commas(n->total),
                pct(n->tok_embed + n->pos_embed, n->total));
}

static void walk_llama_like(const model *m) {
    const tw_param_counts *n = &m->n;
    const tw_hf_config *c = &m->cfg;
    lesson_say("%s (%s): C = %lld, %lld layers, %lld query heads and %lld key/value heads of "
               "head_dim %lld, a SwiGLU MLP %lld wide, RMSNorm (a gain only, C numbers), no "
               "biases, and an untied lm_head.%s",
               m->label, m->file, (long long)c->d_model, (long long)c->n_layer,
               (long long)c->n_head, (long long)c->n_kv_head, (long long)c->head_dim,
               (long long)c->ffn_hidden,
               c->qk_norm ? " Qwen3 adds q_norm and k_norm: an RMSNorm gain of head_dim numbers "
                            "applied to every head's query and key, in every layer." : "");
    line("embed_tokens", "V x C", n->tok_embed);
    printf("    one layer:\n");
    line("  input_layernorm", "C", n->attn_norm);
    line("  q_proj", "C x H*D", n->q);
    line("  k_proj", "C x G*D", n->k);
    line("  v_proj", "C x G*D", n->v);
    line("  o_proj", "H*D x C", n->o);
    if (c->qk_norm) line("  q_norm + k_norm", "2 x D", n->q_norm + n->k_norm);
    line("  post_attention_layernorm", "C", n->mlp_norm);
    line("  gate_proj + up_proj", "2 x C x F", n->gate + n->up);
    line("  down_proj", "F x C", n->down);
    line("  = one layer", "", n->layer);
    char f[32];
    snprintf(f, sizeof f, "%lld x layer", (long long)c->n_layer);
    line("all layers", f, n->layers);
    line("norm (final)", "C", n->final_norm);
    line("lm_head", "C x V (untied)", n->lm_head);
    line("total", "", n->total);
    if (c->n_kv_head == c->n_head)
        lesson_note("per layer the MLP is %.1f%% and attention %.1f%%. With as many key/value "
                    "heads as query heads (multi-head attention) k_proj and v_proj are as big as "
                    "q_proj.", pct(n->mlp_layer, n->layer), pct(n->attn_layer, n->layer));
    else
        lesson_note("per layer the MLP is %.1f%% and attention %.1f%%. With %lld key/value heads "
                    "for %lld query heads (grouped-query attention) k_proj and v_proj are %lld "
                    "times smaller than q_proj.", pct(n->mlp_layer, n->layer),
                    pct(n->attn_layer, n->layer), (long long)c->n_kv_head, (long long)c->n_head,
                    (long long)(c->n_head / c->n_kv_head));
}

static void check_published(const model *m) {
    char name[160];
    snprintf(name, sizeof name, "%s: counted %s = published %s", m->label, commas(m->n.total),
             commas(m->published));
    lesson_expect(name, m->n.total == m->published);
    snprintf(name, sizeof name, "%s: the parts add up to the total", m->label);
    lesson_expect(name, sum_of_parts(&m->n, m->cfg.n_layer) == m->n.total);
}

// A hand count that gives Qwen3-8B intermediate_size 14336 (Llama-3-8B's); the config says 12288.
static void claimed_qwen3_width(const model *qwen3) {
    lesson_section("Checking a hand count: Qwen3-8B with the wrong MLP width");
    tw_hf_config wrong = qwen3->cfg;
    wrong.ffn_hidden = 14336;
    tw_param_counts w;
    LESSON_TRY(tw_params_count(&w, &wrong));
    const tw_param_counts *r = &qwen3->n;
    lesson_say("A claim you may meet, in a hand count of Qwen3-8B: its MLP is \"176M per layer\", \"~80%% "
               "of a layer\", its attention subtotal 42M, its RMSNorms 8K a layer, and \"final "
               "norm + LM head ~626M\", all computed with intermediate_size = 14336. That is "
               "Llama-3-8B's MLP width; Qwen3-8B's config.json (data/configs/) says 12288. Here "
               "is the count with each width:");
    printf("    %-34s %18s %18s\n", "", "14336 (claimed)", "12288 (config)");
    printf("    %-34s %18s %18s\n", "one gate/up/down projection", commas(w.up), commas(r->up));
    printf("    %-34s %18s %18s\n", "MLP per layer", commas(w.mlp_layer), commas(r->mlp_layer));
    printf("    %-34s %17.1f%% %17.1f%%\n", "MLP share of a layer", pct(w.mlp_layer, w.layer),
           pct(r->mlp_layer, r->layer));
    printf("    %-34s %18s %18s\n", "one layer", commas(w.layer), commas(r->layer));
    printf("    %-34s %18s %18s\n", "36 layers", commas(w.layers), commas(r->layers));
    printf("    %-34s %18s %18s\n", "total", commas(w.total), commas(r->total));
    lesson_note("the claim's \"176M per layer MLP\" and \"~80%% of a layer\" are the 14336 figures; the "
                "real MLP is %s (%.1f%%). Over 36 layers the wrong width invents %s parameters: "
                "a \"9.1B\" model instead of 8.19B.", commas(r->mlp_layer),
                pct(r->mlp_layer, r->layer), commas(w.total - r->total));
    lesson_note("the same count's attention subtotal (42M) and RMSNorm x2 (8K) are right, but it leaves "
                "out q_norm and k_norm (256 per layer), and its \"final norm + LM head ~626M\" "
                "should be %s + %s = %s.", commas(r->final_norm), commas(r->lm_head),
                commas(r->final_norm + r->lm_head));
    lesson_expect("14336 adds 36 x 3 x 4096 x (14336 - 12288) parameters",
                  w.total - r->total == 36LL * 3 * 4096 * (14336 - 12288));
}

// A hand-made table for a "Small" config (dim 256, 4 layers, 8/4 heads, vocab 8192).
static void claimed_small_table(const model *small) {
    lesson_section("Checking a hand count: a small model's table that does not add up");
    const tw_param_counts *n = &small->n;
    const int64_t hidden = 2 * (4 * 256) / 3;   // the quoted MLP code: int(2 * 4 * dim / 3) = 682
    lesson_say("A claim you may meet, as a tutorial's table of parameters for a small model, dim 256, 4 "
               "layers, 8 query heads and 4 key/value heads of 32, vocabulary 8192, and a SwiGLU "
               "MLP whose code sets hidden_dim = int(2 * 4 * dim / 3) = %lld, totalling \"~2.08M\". "
               "The quoted table, row by row (middle column), against the count from the same "
               "config (%s):", (long long)hidden, small->file);
    printf("    %-22s %12s %14s\n", "row", "claimed", "actual");
    printf("    %-22s %12s %14s\n", "token embedding", "2.1M", commas(n->tok_embed));
    printf("    %-22s %12s %14s\n", "RMSNorm x2", "512", commas(n->norms_layer));
    printf("    %-22s %12s %14s\n", "attention Q", "65K", commas(n->q));
    printf("    %-22s %12s %14s\n", "attention K", "33K", commas(n->k));
    printf("    %-22s %12s %14s\n", "attention V", "33K", commas(n->v));
    printf("    %-22s %12s %14s\n", "attention out", "65K", commas(n->o));
    printf("    %-22s %12s %14s   <- wrong\n", "MLP W1", "87K", commas(n->gate));
    printf("    %-22s %12s %14s   <- wrong\n", "MLP W2", "87K", commas(n->down));
    printf("    %-22s %12s %14s   <- wrong\n", "MLP W3", "87K", commas(n->up));
    printf("    %-22s %12s %14s   <- wrong\n", "block total", "458K", commas(n->layer));
    printf("    %-22s %12s %14s   <- wrong\n", "4 blocks", "1.83M", commas(n->layers));
    printf("    %-22s %12s %14s   (missing from the table)\n", "final RMSNorm", "-", commas(n->final_norm));
    printf("    %-22s %12s %14s\n", "output layer", "2.1M", commas(n->lm_head));
    printf("    %-22s %12s %14s   <- wrong\n", "total", "~2.08M", commas(n->total));
    lesson_note("each MLP matrix is dim x hidden_dim = 256 x 682 = %s. The claimed 87K is 256 x 341: "
                "it used 4 x 256 / 3 = 341, losing the factor 2 of 2/3 x 4d.", commas(256 * hidden));
    lesson_note("even with its own rows the total is wrong: 2.1M + 1.83M + 2.1M = 6.03M, not "
                "~2.08M. The real model has %s parameters (%s if the output layer were tied to "
                "the embedding).", commas(n->total), commas(n->total - n->lm_head));
    lesson_note("and the quoted code writes nn.Linear(dim, ...) without bias=False, which in "
                "PyTorch means bias=True: that version would add %s bias numbers per block.",
                commas(2 * 256 + 2 * 128 + 2 * hidden + 256));
    lesson_expect("the corrected block is 720,896 parameters", n->layer == 720896);
}

// ---- main ----

// 1. What a parameter is, and what is not one.
static void what_counts(void) {
    lesson_section("What counts as a parameter");
    lesson_say("A parameter is one learned number: an entry of a weight matrix, of a bias "
               "vector, or of a normalisation gain. A Linear layer from C_in to C_out holds "
               "C_in x C_out weights plus C_out biases if it has them; an embedding holds V x C; "
               "a LayerNorm 2C (gain and bias), an RMSNorm C. Fixed tables that are computed, "
               "not learned (RoPE's frequencies, GPT-2's causal mask), are buffers and do not "
               "count. When the output head shares its matrix with the token embedding (tied "
               "weights) the matrix is counted once, as PyTorch's model.num_parameters() does.");
    lesson_say("Everything below is read from Hugging Face config.json files in data/configs/ "
               "and counted by tw_params_count, which follows how the transformers modules "
               "create their weights. ./params CONFIG.json prints the same breakdown for any "
               "gpt2, llama, mistral, qwen2 or qwen3 config.");
}

// 2-4. One model's parameters module by module, then its total against the published one.
static void walk(const char *title, const model *m, void (*walk_modules)(const model *)) {
    lesson_section(title);
    walk_modules(m);
    check_published(m);
}

// 7. Each model's shares: embeddings, attention, MLP, norms, head; Qwen3-8B's running total.
// M (NM): the models, the first three checked already; qwen3 is one of them.
static void shares(const model *M, int NM, const model *qwen3) {
    lesson_section("Shares: embeddings, attention, MLP, norms, output head");
    lesson_say("The same split for every config in data/configs/ (percent of each model's total; "
               "a tied head shows 0 because its numbers are the embedding's):");
    printf("    %-15s %15s %7s %7s %7s %7s %7s\n", "model", "total", "embed", "attn", "mlp",
           "norms", "head");
    char dat[8192];
    int len = snprintf(dat, sizeof dat,
        "# Parameters of each model by component, in millions (lesson 10; tw_params_count).\n"
        "# embed = token + position embeddings; attn, mlp, norms summed over all layers plus the\n"
        "# final norm in norms; head = untied lm_head (0 when tied).\n"
        "# model total_M embed_M attn_M mlp_M norms_M head_M\n");
    for (int i = 0; i < NM; i++) {
        const tw_param_counts *n = &M[i].n;
        const int64_t L = M[i].cfg.n_layer;
        const int64_t embed = n->tok_embed + n->pos_embed, attn = L * n->attn_layer,
                      mlp = L * n->mlp_layer, norms = L * n->norms_layer + n->final_norm;
        printf("    %-15s %15s %6.1f%% %6.1f%% %6.1f%% %6.2f%% %6.1f%%\n", M[i].label,
               commas(n->total), pct(embed, n->total), pct(attn, n->total), pct(mlp, n->total),
               pct(norms, n->total), pct(n->lm_head, n->total));
        len += snprintf(dat + len, sizeof dat - (size_t)len, "\"%s\" %.6f %.6f %.6f %.6f %.6f %.6f\n",
                        M[i].label, n->total / 1e6, embed / 1e6, attn / 1e6, mlp / 1e6,
                        norms / 1e6, n->lm_head / 1e6);
    }
    lesson_note("in the 7-8B models the MLP holds two thirds to three quarters; in the sub-1B "
                "Qwen models the embedding table of a 151,936-token vocabulary takes a quarter or "
                "more. Norms stay below 0.05%%: they matter for training, not for size.");
    for (int i = 4; i < NM; i++) check_published(&M[i]);   // the first three were checked above
    lesson_write_text("breakdown.dat", dat);

    // Per-layer running total of Qwen3-8B: the staircase from the embedding to the head.
    {
        char q[4096];
        int ql = snprintf(q, sizeof q, "# Qwen3-8B: running parameter total after each part, in"
                          " billions (lesson 10)\n# step running_total_B\n");
        int64_t run = qwen3->n.tok_embed;
        ql += snprintf(q + ql, sizeof q - (size_t)ql, "embed %.6f\n", run / 1e9);
        for (int64_t l = 0; l < qwen3->cfg.n_layer; l++) {
            run += qwen3->n.layer;
            ql += snprintf(q + ql, sizeof q - (size_t)ql, "layer%lld %.6f\n", (long long)l, run / 1e9);
        }
        run += qwen3->n.final_norm + qwen3->n.lm_head;
        ql += snprintf(q + ql, sizeof q - (size_t)ql, "head %.6f\n", run / 1e9);
        lesson_write_text("qwen3_layers.dat", q);
        lesson_expect("Qwen3-8B's staircase ends at its total", run == qwen3->n.total);
    }
}

// 8. Memory: weights at fp32, bf16 and int8, and the KV cache at `context` tokens.
static void memory(const model *M, int NM, const model *llama, const model *qwen3, int context) {
    lesson_section("Memory: the weights, and the KV cache at a context length");
    lesson_say("Weights take (parameters x bytes per number): 4 bytes in fp32, 2 in bf16 or fp16, "
               "1 in int8 (plus a few scales, ignored here). While generating, a model also keeps "
               "every past token's keys and values: per token 2 (K and V) x layers x kv heads x "
               "head_dim numbers. That KV cache grows linearly with the context; here at %d tokens "
               "in bf16, for one sequence:", context);
    printf("    %-15s %9s %9s %9s   %14s %12s\n", "model", "fp32 GiB", "bf16 GiB", "int8 GiB",
           "KV bytes/token", "KV GiB");
    char kv[4096];
    int kl = snprintf(kv, sizeof kv, "# KV cache (bf16, one sequence) in GiB at several context "
                      "lengths (lesson 10)\n# context");
    for (int i = 0; i < NM; i++) kl += snprintf(kv + kl, sizeof kv - (size_t)kl, " \"%s\"", M[i].label);
    kl += snprintf(kv + kl, sizeof kv - (size_t)kl, "\n");
    for (int i = 0; i < NM; i++) {
        const int64_t per_tok = tw_hf_kv_bytes(&M[i].cfg, 1, 2);
        const int64_t at_ctx = tw_hf_kv_bytes(&M[i].cfg, context, 2);
        printf("    %-15s %9.2f %9.2f %9.2f   %14s %12.3f\n", M[i].label,
               gib(tw_params_weight_bytes(M[i].n.total, 4)), gib(tw_params_weight_bytes(M[i].n.total, 2)),
               gib(tw_params_weight_bytes(M[i].n.total, 1)), commas(per_tok), gib(at_ctx));
    }
    for (int ctx = 512; ctx <= 131072; ctx *= 2) {
        kl += snprintf(kv + kl, sizeof kv - (size_t)kl, "%d", ctx);
        for (int i = 0; i < NM; i++)
            kl += snprintf(kv + kl, sizeof kv - (size_t)kl, " %.6f", gib(tw_hf_kv_bytes(&M[i].cfg, ctx, 2)));
        kl += snprintf(kv + kl, sizeof kv - (size_t)kl, "\n");
    }
    lesson_write_text("kv_cache.dat", kv);
    lesson_note("Llama-2-7B caches all 32 heads (%s bytes per token); Qwen3-8B, with 8 key/value "
                "heads for 32 query heads, caches a quarter of that per layer. At %d tokens that is "
                "%.2f GiB against %.2f GiB, while the weights are about the same size.",
                commas(tw_hf_kv_bytes(&llama->cfg, 1, 2)), context,
                gib(tw_hf_kv_bytes(&llama->cfg, context, 2)),
                gib(tw_hf_kv_bytes(&qwen3->cfg, context, 2)));
    lesson_note("the cache depends on layers x kv heads x head_dim, not on the parameter count: "
                "Qwen3-0.6B (28 layers, 8 kv heads of 128) stores %s bytes per token, almost as "
                "much as Qwen3-8B, with 14 times fewer weights.",
                commas(tw_hf_kv_bytes(&M[7].cfg, 1, 2)));
    lesson_expect("Llama-2-7B's KV cache at 4096 tokens in bf16 is exactly 2 GiB",
                  tw_hf_kv_bytes(&llama->cfg, 4096, 2) == 2LL << 30);
}

int main(int argc, char **argv) {
    int context = 4096;
    const lesson_opt opts[] = {
        { "--context", 'i', &context, "N", "context length for the KV-cache sizes (default 4096)" },
        { NULL, 0, NULL, NULL, NULL },
    };
    lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1 }, opts);
    if (context < 1) {   // bad usage: exit 2 like lesson_start's own option errors
        fprintf(stderr, "lesson10: --context %d: give a positive number of tokens\n", context);
        return 2;
    }

    model M[] = {
        { "GPT-2 124M",   "data/configs/gpt2.json",            124439808LL,  { 0 }, { 0 } },
        { "Llama-2-7B",   "data/configs/Llama-2-7b.json",      6738415616LL, { 0 }, { 0 } },
        { "Qwen3-8B",     "data/configs/Qwen3-8B.json",        8190735360LL, { 0 }, { 0 } },
        { "Small (dim 256)", "data/configs/small-swiglu.json", 0,            { 0 }, { 0 } },
        { "Mistral-7B",   "data/configs/Mistral-7B-v0.1.json", 7241732096LL, { 0 }, { 0 } },
        { "TinyLlama-1.1B", "data/configs/TinyLlama-1.1B.json", 1100048384LL, { 0 }, { 0 } },
        { "Qwen2.5-0.5B", "data/configs/Qwen2.5-0.5B.json",    494032768LL,  { 0 }, { 0 } },
        { "Qwen3-0.6B",   "data/configs/Qwen3-0.6B.json",      596049920LL,  { 0 }, { 0 } },
    };
    const int NM = (int)(sizeof M / sizeof M[0]);
    for (int i = 0; i < NM; i++) load(&M[i]);
    const model *gpt2 = &M[0], *llama = &M[1], *qwen3 = &M[2], *small = &M[3];

    what_counts();
    walk("GPT-2 124M, module by module", gpt2, walk_gpt2);
    walk("Llama-2-7B: no biases, RMSNorm, SwiGLU, untied head", llama, walk_llama_like);
    walk("Qwen3-8B: grouped-query attention, explicit head_dim, q_norm and k_norm", qwen3, walk_llama_like);
    claimed_qwen3_width(qwen3);
    claimed_small_table(small);
    shares(M, NM, qwen3);
    memory(M, NM, llama, qwen3, context);
    lesson_plot("10_parameters.gp", "breakdown.dat", "breakdown.png");
    lesson_say("Try it: make exercise17 (counting a model's parameters)");
    return lesson_finish();
}
