// params.c: `./params [--context N] [--layers] CONFIG.json` prints where a model's parameters
// live, component by component and layer by layer, read from a Hugging Face config.json
// (model_type gpt2, llama, mistral, qwen2, qwen3; mixtral, qwen3_moe and deepseek_v3 in
// tools/params_moe.c); then weight memory at fp32/bf16/int8 and the
// KV-cache size at a context length. The last line is always `total N` with N exact, so scripts
// can `tail -n1`. Counting lives in lib/formats/hf_config.c and JSON reading in lib/formats/json.c; this file only
// parses flags and prints.
// Exit status: 0 ok, 1 unreadable/malformed/unsupported config, 2 bad usage.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/json.h"
#include "formats/hf_config.h"
#include "formats/hf_moe.h"
#include "params_moe.h"

static const char USAGE[] =
    "usage: ./params [--context N] [--layers] CONFIG.json\n"
    "  --context N  KV-cache size for N tokens (default: the config's max_position_embeddings)\n"
    "  --layers     also list the running total after every layer\n"
    "example: ./params --context 4096 data/configs/Qwen3-8B.json\n";

// Bad usage: one line naming the problem (the usage text is what --help prints).
static int usage_error(const char *why) {
    fprintf(stderr, "params: %s (./params --help for usage)\n", why);
    return 2;
}

// 1234567 -> "1,234,567" (out must hold TW_COUNT_STR_LEN bytes).
static const char *commas(char *out, int64_t n) { return tw_format_count(out, n); }

// One row: name, shape text, count, and its share of `whole` (the model, or one layer).
static void row(const char *name, const char *shape, int64_t n, int64_t whole) {
    char b[32];
    if (n == 0) return;   // module absent in this architecture
    printf("  %-28s %-20s %15s  %6.2f%%\n", name, shape, commas(b, n), 100.0 * (double)n / (double)whole);
}

static void bytes_line(const char *label, int64_t bytes) {
    char b[32];
    printf("  %-6s %20s bytes = %9.3f GB = %9.3f GiB\n", label, commas(b, bytes),
           (double)bytes / 1e9, (double)bytes / (1024.0 * 1024.0 * 1024.0));
}

static void print_config(const tw_hf_config *c) {
    printf("  vocab %lld, hidden %lld, layers %lld, heads %lld, kv heads %lld, head_dim %lld, "
           "mlp width %lld, positions %lld\n",
           (long long)c->vocab, (long long)c->d_model, (long long)c->n_layer,
           (long long)c->n_head, (long long)c->n_kv_head, (long long)c->head_dim,
           (long long)c->ffn_hidden, (long long)c->max_seq);
    printf("  %s, %s MLP, embeddings %s, biases: q/k/v %s, o %s, mlp %s%s\n",
           c->layernorm ? "LayerNorm (weight+bias)" : "RMSNorm (weight only)",
           c->gated_mlp ? "SwiGLU (gate, up, down)" : "GELU (fc, proj)",
           c->tie_embeddings ? "tied" : "untied", c->qkv_bias ? "yes" : "no",
           c->o_bias ? "yes" : "no", c->mlp_bias ? "yes" : "no",
           c->qk_norm ? ", q_norm/k_norm per layer" : "");
    static const struct { unsigned bit; const char *what; } DEF[] = {
        { TW_DEF_KV_HEADS, "num_key_value_heads" }, { TW_DEF_HEAD_DIM, "head_dim" },
        { TW_DEF_TIE, "tie_word_embeddings" }, { TW_DEF_ATTN_BIAS, "attention_bias" },
        { TW_DEF_MLP_BIAS, "mlp_bias" }, { TW_DEF_FFN, "n_inner" },
        { TW_DEF_MAX_POS, "max positions" },
    };
    int any = 0;
    for (size_t i = 0; i < sizeof DEF / sizeof DEF[0]; i++) {
        if (!(c->defaulted & DEF[i].bit)) continue;
        printf("%s%s", any ? ", " : "  absent or null in the file, so transformers' default is used: ", DEF[i].what);
        any = 1;
    }
    if (any) printf("\n");
}

static void print_breakdown(const tw_hf_config *c, const tw_param_counts *p, int per_layer) {
    const int64_t T = p->total, C = c->d_model, V = c->vocab, F = c->ffn_hidden;
    const long long qd = (long long)(c->n_head * c->head_dim), kvd = (long long)(c->n_kv_head * c->head_dim);
    const int g = c->arch == TW_ARCH_GPT2;
    char s[64], b[32];

    printf("\nembeddings (%% of the model)\n");
    snprintf(s, sizeof s, "%lld x %lld", (long long)V, (long long)C);
    row(g ? "wte (token embedding)" : "embed_tokens", s, p->tok_embed, T);
    snprintf(s, sizeof s, "%lld x %lld", (long long)c->max_seq, (long long)C);
    row("wpe (position embedding)", s, p->pos_embed, T);

    printf("\none layer (all %lld layers are identical; %% of the layer)\n", (long long)c->n_layer);
    const int64_t L = p->layer;
    snprintf(s, sizeof s, "%lld%s", (long long)C, c->layernorm ? " x 2 (w+b)" : "");
    row(g ? "ln_1" : "input_layernorm", s, p->attn_norm, L);
    if (g) {
        snprintf(s, sizeof s, "%lld -> %lld", (long long)C, 3 * (long long)C);
        row("attn.c_attn (q|k|v) weight", s, p->q + p->k + p->v, L);
        snprintf(s, sizeof s, "%lld", 3 * (long long)C);
        row("attn.c_attn bias", s, p->q_b + p->k_b + p->v_b, L);
    } else {
        snprintf(s, sizeof s, "%lld -> %lld", (long long)C, qd);
        row("q_proj", s, p->q, L);
        snprintf(s, sizeof s, "%lld", qd);
        row("q_proj bias", s, p->q_b, L);
        snprintf(s, sizeof s, "%lld -> %lld", (long long)C, kvd);
        row("k_proj", s, p->k, L);
        row("v_proj", s, p->v, L);
        snprintf(s, sizeof s, "%lld", kvd);
        row("k_proj bias", s, p->k_b, L);
        row("v_proj bias", s, p->v_b, L);
        snprintf(s, sizeof s, "%lld", (long long)c->head_dim);
        row("q_norm", s, p->q_norm, L);
        row("k_norm", s, p->k_norm, L);
    }
    snprintf(s, sizeof s, "%lld -> %lld", qd, (long long)C);
    row(g ? "attn.c_proj" : "o_proj", s, p->o, L);
    snprintf(s, sizeof s, "%lld", (long long)C);
    row(g ? "attn.c_proj bias" : "o_proj bias", s, p->o_b, L);
    snprintf(s, sizeof s, "%lld%s", (long long)C, c->layernorm ? " x 2 (w+b)" : "");
    row(g ? "ln_2" : "post_attention_layernorm", s, p->mlp_norm, L);
    snprintf(s, sizeof s, "%lld -> %lld", (long long)C, (long long)F);
    row("gate_proj", s, p->gate, L);
    row(g ? "mlp.c_fc" : "up_proj", s, p->up, L);
    snprintf(s, sizeof s, "%lld", (long long)F);
    row("gate_proj bias", s, p->gate_b, L);
    row(g ? "mlp.c_fc bias" : "up_proj bias", s, p->up_b, L);
    snprintf(s, sizeof s, "%lld -> %lld", (long long)F, (long long)C);
    row(g ? "mlp.c_proj" : "down_proj", s, p->down, L);
    snprintf(s, sizeof s, "%lld", (long long)C);
    row(g ? "mlp.c_proj bias" : "down_proj bias", s, p->down_b, L);
    printf("  %-28s %-20s %15s\n", "= attention", "", commas(b, p->attn_layer));
    printf("  %-28s %-20s %15s\n", "= mlp", "", commas(b, p->mlp_layer));
    printf("  %-28s %-20s %15s\n", "= norms", "", commas(b, p->norms_layer));
    printf("  %-28s %-20s %15s\n", "= one layer", "", commas(b, p->layer));

    printf("\nwhole model (%% of the model)\n");
    snprintf(s, sizeof s, "%lld x one layer", (long long)c->n_layer);
    row("layers", s, p->layers, T);
    if (per_layer) {
        int64_t run = p->tok_embed + p->pos_embed;
        for (int64_t l = 0; l < c->n_layer; l++) {
            run += p->layer;
            char name[40];
            snprintf(name, sizeof name, "  after layer %lld", (long long)l);
            printf("  %-28s %-20s %15s  (running total)\n", name, "", commas(b, run));
        }
    }
    snprintf(s, sizeof s, "%lld%s", (long long)C, c->layernorm ? " x 2 (w+b)" : "");
    row(g ? "ln_f" : "norm (final)", s, p->final_norm, T);
    if (p->lm_head) {
        snprintf(s, sizeof s, "%lld -> %lld", (long long)C, (long long)V);
        row("lm_head (untied)", s, p->lm_head, T);
    } else {
        printf("  %-28s %-20s %15s  (shares the token embedding)\n", "lm_head (tied)", "", "0");
    }
}

int main(int argc, char **argv) {
    const char *path = NULL;
    long long context = -1;
    int per_layer = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf("%s", USAGE);
            return 0;
        } else if (strcmp(a, "--context") == 0) {
            if (i + 1 >= argc) return usage_error("--context needs a number of tokens");
            char *end;
            errno = 0;
            context = strtoll(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || context < 1 || context > (1LL << 40))
                return usage_error("--context must be a whole number of tokens from 1 to 2^40");
        } else if (strcmp(a, "--layers") == 0) {
            per_layer = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            char why[96];
            snprintf(why, sizeof why, "unknown option '%.40s'", a);
            return usage_error(why);
        } else if (path) {
            return usage_error("give exactly one CONFIG.json");
        } else {
            path = a;
        }
    }
    if (!path) return usage_error("missing CONFIG.json");

    char err[512];
    tw_json *root = NULL;
    if (tw_json_read_file(&root, path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "params: %s\n", err);
        return 1;
    }
    if (tw_hf_moe_is_moe(root)) {   // mixtral, qwen3_moe, deepseek_v3: tools/params_moe.c
        int rc = params_moe_print(path, root, context);
        tw_json_free(root);
        return rc;
    }
    tw_hf_config cfg;
    tw_status st = tw_hf_config_from_json(&cfg, root, err, sizeof err);
    tw_json_free(root);
    if (st != TW_OK) {
        fprintf(stderr, "params: %s: %s\n", path, err);
        return 1;
    }
    tw_param_counts p;
    if (tw_params_count(&p, &cfg) != TW_OK) {
        fprintf(stderr, "params: %s: the sizes are so large that the count overflows 64 bits\n", path);
        return 1;
    }
    if (context < 0) context = cfg.max_seq;
    int64_t kv16 = tw_hf_kv_bytes(&cfg, context, 2), kv32 = tw_hf_kv_bytes(&cfg, context, 4);
    if (kv16 < 0 || kv32 < 0) {
        fprintf(stderr, "params: --context %lld: the KV-cache size overflows 64 bits\n", context);
        return 1;
    }

    char b[32];
    printf("%s: model_type %s\n", path, tw_arch_name(cfg.arch));
    print_config(&cfg);
    print_breakdown(&cfg, &p, per_layer);

    printf("\nweight memory (%s parameters)\n", commas(b, p.total));
    bytes_line("fp32", tw_params_weight_bytes(p.total, 4));
    bytes_line("bf16", tw_params_weight_bytes(p.total, 2));
    bytes_line("int8", tw_params_weight_bytes(p.total, 1));

    printf("\nKV cache for one sequence of %lld tokens (%lld layers x K and V x %lld kv heads x %lld)\n",
           context, (long long)cfg.n_layer, (long long)cfg.n_kv_head, (long long)cfg.head_dim);
    printf("  per token: %s bytes in bf16\n", commas(b, tw_hf_kv_bytes(&cfg, 1, 2)));
    bytes_line("bf16", kv16);
    bytes_line("fp32", kv32);

    printf("total %lld\n", (long long)p.total);
    return 0;
}
