// params_moe.c: ./params for mixture-of-experts configs (see params_moe.h): the components of
// one attention, one dense and one MoE layer, the model and its multi-token-prediction module,
// the parameters one token activates, weight memory, and the KV cache per token against what
// MHA and GQA would cache. Ends with `total N` like the dense breakdown.
#include <stdint.h>
#include <stdio.h>
#include "formats/hf_config.h"   // tw_format_count, tw_params_weight_bytes
#include "formats/hf_moe.h"
#include "formats/json.h"
#include "params_moe.h"

static void row(const char *name, const char *shape, int64_t n, int64_t whole) {
    char b[32];
    if (n == 0) return;   // module absent in this architecture
    printf("  %-30s %-26s %18s  %6.2f%%\n", name, shape, tw_format_count(b, n),
           100.0 * (double)n / (double)whole);
}

static void sumline(const char *name, int64_t n) {
    char b[32];
    printf("  %-30s %-26s %18s\n", name, "", tw_format_count(b, n));
}

static void bytes_line(const char *label, int64_t bytes) {
    char b[32];
    printf("  %-6s %24s bytes = %10.3f GB = %10.3f GiB\n", label, tw_format_count(b, bytes),
           (double)bytes / 1e9, (double)bytes / (1024.0 * 1024.0 * 1024.0));
}

static void print_attention(const tw_hf_moe_config *c, const tw_moe_param_counts *p) {
    char s[64];
    const long long C = c->d_model, H = c->n_head;
    const int64_t L = p->attn_layer;
    printf("\nattention of one layer (%% of the attention)\n");
    if (!c->mla) {
        snprintf(s, sizeof s, "%lld -> %lld", C, H * c->head_dim);
        row("q_proj", s, p->q, L);
        snprintf(s, sizeof s, "%lld -> %lld", C, (long long)(c->n_kv_head * c->head_dim));
        row("k_proj", s, p->k, L);
        row("v_proj", s, p->v, L);
        snprintf(s, sizeof s, "%lld -> %lld", H * c->head_dim, C);
        row("o_proj", s, p->o, L);
        row("q/k/v/o biases", "", p->attn_biases, L);
        snprintf(s, sizeof s, "%lld", (long long)c->head_dim);
        row("q_norm", s, p->q_norm, L);
        row("k_norm", s, p->k_norm, L);
    } else {
        const long long qk = c->qk_nope_dim + c->qk_rope_dim;
        snprintf(s, sizeof s, "%lld -> %lld", C, (long long)c->q_lora_rank);
        row("q_a_proj (query down)", s, p->q_a, L);
        snprintf(s, sizeof s, "%lld", (long long)c->q_lora_rank);
        row("q_a_layernorm", s, p->q_a_norm, L);
        snprintf(s, sizeof s, "%lld -> %lld x %lld", (long long)c->q_lora_rank, H, qk);
        row("q_b_proj (query up)", s, p->q_b, L);
        snprintf(s, sizeof s, "%lld -> %lld x %lld", C, H, qk);
        row("q_proj", s, p->q, L);
        snprintf(s, sizeof s, "%lld -> %lld + %lld", C, (long long)c->kv_lora_rank,
                 (long long)c->qk_rope_dim);
        row("kv_a_proj_with_mqa (latent)", s, p->kv_a, L);
        snprintf(s, sizeof s, "%lld", (long long)c->kv_lora_rank);
        row("kv_a_layernorm", s, p->kv_a_norm, L);
        snprintf(s, sizeof s, "%lld -> %lld x (%lld + %lld)", (long long)c->kv_lora_rank, H,
                 (long long)c->qk_nope_dim, (long long)c->v_head_dim);
        row("kv_b_proj (k, v up)", s, p->kv_b, L);
        snprintf(s, sizeof s, "%lld x %lld -> %lld", H, (long long)c->v_head_dim, C);
        row("o_proj", s, p->o, L);
        row("biases", "", p->attn_biases, L);
    }
    sumline("= attention", p->attn_layer);
}

static void print_mlps(const tw_hf_moe_config *c, const tw_moe_param_counts *p) {
    char s[64];
    const long long C = c->d_model, Fe = c->expert_hidden;
    printf("\nMoE MLP of one layer (%lld such layers; %% of the MoE MLP)\n", (long long)c->n_moe_layers);
    snprintf(s, sizeof s, "%lld -> %lld", C, (long long)c->n_expert);
    row("router (gate)", s, p->router, p->moe_mlp);
    snprintf(s, sizeof s, "%lld", (long long)c->n_expert);
    row("e_score_correction_bias", s, p->expert_bias, p->moe_mlp);
    snprintf(s, sizeof s, "%lld x SwiGLU %lld <-> %lld", (long long)c->n_expert, C, Fe);
    row("routed experts", s, p->experts, p->moe_mlp);
    snprintf(s, sizeof s, "SwiGLU %lld <-> %lld", C, (long long)(c->n_shared * Fe));
    row("shared experts", s, p->shared, p->moe_mlp);
    sumline("= one expert", p->expert);
    sumline("= MoE MLP", p->moe_mlp);
    char k_of[64];
    snprintf(k_of, sizeof k_of, "router + %lld of %lld + shared", (long long)c->top_k,
             (long long)c->n_expert);
    printf("  %-30s %-26s %18s\n", "= used by one token", k_of, tw_format_count(s, p->moe_mlp_active));
    if (c->n_dense_layers) {
        printf("\ndense MLP of one layer (%lld such layers)\n", (long long)c->n_dense_layers);
        snprintf(s, sizeof s, "SwiGLU %lld <-> %lld", C, (long long)c->ffn_hidden);
        row("gate, up, down", s, p->dense_mlp, p->dense_mlp);
    }
}

static void print_model(const tw_hf_moe_config *c, const tw_moe_param_counts *p) {
    char s[64], b[32];
    const long long C = c->d_model, V = c->vocab;
    printf("\nwhole model (%% of the total)\n");
    snprintf(s, sizeof s, "%lld x %lld", V, C);
    row("embed_tokens", s, p->tok_embed, p->total);
    snprintf(s, sizeof s, "%lld x (attn + norms + MoE)", (long long)c->n_moe_layers);
    row("MoE layers", s, c->n_moe_layers * (p->attn_layer + p->norms_layer + p->moe_mlp), p->total);
    snprintf(s, sizeof s, "%lld x (attn + norms + MLP)", (long long)c->n_dense_layers);
    row("dense layers", s, c->n_dense_layers * (p->attn_layer + p->norms_layer + p->dense_mlp),
        p->total);
    snprintf(s, sizeof s, "%lld", C);
    row("norm (final)", s, p->final_norm, p->total);
    snprintf(s, sizeof s, "%lld -> %lld", C, V);
    row(p->lm_head ? "lm_head (untied)" : "lm_head (tied: 0)", s, p->lm_head, p->total);
    sumline("= main model", p->main_total);
    if (p->mtp) {
        printf("  multi-token prediction (%lld module%s, checkpoint layer %lld on)\n",
               (long long)c->n_mtp, c->n_mtp > 1 ? "s" : "", (long long)c->n_layer);
        row("  one MoE decoder layer", "", p->mtp_layer, p->total);
        row("  enorm, hnorm, eh_proj, norm", "", p->mtp_extra, p->total);
        row("  its copies of embed + head", "", p->mtp_copies, p->total);
        sumline("= MTP", p->mtp);
        sumline("= MTP without the copies", p->mtp - c->n_mtp * p->mtp_copies);
    }
    sumline("= total (as stored)", p->total);
    if (p->fp8_scales) {
        printf("  %-30s %-26s %18s\n", "FP8 block scales (not weights)",
               "weight_scale_inv", tw_format_count(b, p->fp8_scales));
        sumline("= tensors' numbers in the files", p->total + p->fp8_scales);
    }
    printf("\nactivated per token (every weight but the routed experts not chosen)\n");
    printf("  %-30s %18s  (%.2f%% of the main model)\n", "activated", tw_format_count(b, p->active),
           100.0 * (double)p->active / (double)p->main_total);
    printf("  %-30s %18s  (the embedding is a lookup of one row)\n", "without embed_tokens",
           tw_format_count(b, p->active_no_embed));
    printf("  FLOPs per token in the matrix products ~ 2 x %s, as a dense model of that size;\n"
           "  but memory must hold all %s of the main model\n",
           tw_format_count(b, p->active_no_embed), tw_format_count(s, p->main_total));
}

static void print_kv(const tw_hf_moe_config *c, long long context) {
    char b[32];
    const int64_t G = c->mla ? 8 : c->n_kv_head;
    tw_kv_per_token k = tw_hf_moe_kv_per_token(c, G);
    printf("\nKV cache per token over all %lld layers, in bf16 (2 bytes a number)\n", (long long)c->n_layer);
    if (c->mla) {
        printf("  %-46s %14s bytes\n", "MLA: latent + shared RoPE key (what it caches)",
               tw_format_count(b, 2 * k.latent));
        printf("  %-46s %14s bytes\n", "MHA with the expanded k, v of every head",
               tw_format_count(b, 2 * k.mha));
        printf("  %-46s %14s bytes\n", "GQA with 8 kv heads of those widths", tw_format_count(b, 2 * k.gqa));
        printf("  MLA caches %.1fx less than MHA would\n", (double)k.mha / (double)k.latent);
    } else {
        printf("  %-46s %14s bytes\n", "GQA (what it caches)", tw_format_count(b, 2 * k.gqa));
        printf("  %-46s %14s bytes\n", "MHA with as many kv heads as heads", tw_format_count(b, 2 * k.mha));
    }
    if (context < 0) context = c->max_seq;
    if (context > 0) {
        int64_t per = c->mla ? k.latent : k.gqa;
        if (per > 0 && context <= INT64_MAX / (2 * per)) {
            printf("  for %lld tokens:\n", context);
            bytes_line("bf16", 2 * per * context);
        }
    }
}

int params_moe_print(const char *path, const tw_json *root, long long context) {
    char err[512];
    tw_hf_moe_config cfg;
    if (tw_hf_moe_from_json(&cfg, root, err, sizeof err) != TW_OK) {
        fprintf(stderr, "params: %s: %s\n", path, err);
        return 1;
    }
    tw_moe_param_counts p;
    if (tw_hf_moe_count(&p, &cfg) != TW_OK) {
        fprintf(stderr, "params: %s: the sizes are so large that the count overflows 64 bits\n", path);
        return 1;
    }
    tw_kv_per_token k = tw_hf_moe_kv_per_token(&cfg, 8);
    if (tw_params_weight_bytes(p.total, 4) < 0 || k.mha < 0 || k.mha > INT64_MAX / 2 ||
        k.gqa > INT64_MAX / 2) {
        fprintf(stderr, "params: %s: the sizes are so large that the memory in bytes overflows "
                "64 bits\n", path);
        return 1;
    }
    char b[32];
    printf("%s: model_type %s\n", path, tw_moe_arch_name(cfg.arch));
    printf("  vocab %lld, hidden %lld, layers %lld (%lld MoE, %lld dense), heads %lld, "
           "experts %lld, %lld per token, %lld shared\n",
           (long long)cfg.vocab, (long long)cfg.d_model, (long long)cfg.n_layer,
           (long long)cfg.n_moe_layers, (long long)cfg.n_dense_layers, (long long)cfg.n_head,
           (long long)cfg.n_expert, (long long)cfg.top_k, (long long)cfg.n_shared);
    print_attention(&cfg, &p);
    printf("  %-30s %-26s %18s\n", "+ 2 RMSNorms per layer", "", tw_format_count(b, p.norms_layer));
    print_mlps(&cfg, &p);
    print_model(&cfg, &p);
    printf("\nweight memory (%s parameters as stored)\n", tw_format_count(b, p.total));
    bytes_line("fp32", tw_params_weight_bytes(p.total, 4));
    bytes_line("bf16", tw_params_weight_bytes(p.total, 2));
    bytes_line("int8", tw_params_weight_bytes(p.total, 1));
    print_kv(&cfg, context);
    printf("activated %lld\n", (long long)p.active);
    printf("total %lld\n", (long long)p.total);
    return 0;
}
