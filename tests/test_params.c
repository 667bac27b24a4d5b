// test_params.c: the parameter counter (lib/formats/hf_config.c) and the ./params tool.
//   - every committed config in data/configs/ gives its published total exactly;
//   - GPT-2's components equal a hand computation written out below from the module shapes
//     (independently of lib/formats/hf_config.c's code path), and so do per-layer counts of Llama-2-7B,
//     Qwen3-8B (with q_norm/k_norm) and Qwen2.5-0.5B (q/k/v biases, no o bias);
//   - transformers' defaults for absent keys (tie_word_embeddings, num_key_value_heads, head_dim,
//     biases) are the ones its config classes use;
//   - bad configs are rejected with a message naming the problem;
//   - ./params ends with `total N`, exits 2 on bad usage and 1 on a bad file, with one line.
// Counts are integers: every comparison is exact.
#define _POSIX_C_SOURCE 200809L   // mkstemp, fdopen
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <check.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/hf_config.h"

static const struct { const char *file; int64_t total; } CONFIGS[] = {
    { "data/configs/gpt2.json",             124439808LL },   // published
    { "data/configs/Llama-2-7b.json",      6738415616LL },   // published
    { "data/configs/Qwen3-8B.json",        8190735360LL },   // published
    { "data/configs/Mistral-7B-v0.1.json", 7241732096LL },   // published
    { "data/configs/TinyLlama-1.1B.json",  1100048384LL },   // published
    { "data/configs/Qwen2.5-0.5B.json",     494032768LL },   // published
    { "data/configs/Qwen3-0.6B.json",       596049920LL },   // published
    // Course note 003's small config: 2*8192*256 + 4*(2*256 + 2*256*256 + 2*256*128
    // + 3*256*682) + 256, worked out in lesson 10.
    { "data/configs/small-swiglu.json",    7078144LL },
};

static void load_file(tw_hf_config *cfg, const char *path) {
    char err[256];
    tw_json *root = tt_json_read_file(path);
    tw_status st = tw_hf_config_from_json(cfg, root, err, sizeof err);
    tw_json_free(root);
    ck_assert_msg(st == TW_OK, "%s: %s", path, err);
}

static void count_file(tw_param_counts *p, tw_hf_config *cfg, const char *path) {
    load_file(cfg, path);
    ck_assert_int_eq(tw_params_count(p, cfg), TW_OK);
}

// Config from a JSON string; returns the status and leaves the message in err.
static tw_status config_from(tw_hf_config *cfg, const char *json, char *err, size_t n) {
    tw_json *root = tt_json_parse(json);
    tw_status st = tw_hf_config_from_json(cfg, root, err, n);
    tw_json_free(root);
    return st;
}

START_TEST(every_committed_config_gives_its_published_total)
{
    tw_hf_config cfg;
    tw_param_counts p;
    count_file(&p, &cfg, CONFIGS[_i].file);
    ck_assert_msg(p.total == CONFIGS[_i].total, "%s: counted %lld, published %lld",
                  CONFIGS[_i].file, (long long)p.total, (long long)CONFIGS[_i].total);
}
END_TEST

START_TEST(gpt2_components_match_a_hand_computation)
{
    tw_hf_config cfg;
    tw_param_counts p;
    count_file(&p, &cfg, "data/configs/gpt2.json");
    // GPT-2 small: V 50257, C 768, 12 layers, 1024 positions, MLP 4C = 3072.
    const int64_t ln = 768 + 768;                          // LayerNorm weight + bias
    const int64_t c_attn = 768 * 2304 + 2304;              // Conv1D (C, 3C) + bias
    const int64_t attn_c_proj = 768 * 768 + 768;
    const int64_t c_fc = 768 * 3072 + 3072;
    const int64_t mlp_c_proj = 3072 * 768 + 768;
    ck_assert_int_eq(c_attn + attn_c_proj, 2362368);       // the figure quoted in the issue
    ck_assert_int_eq(p.attn_layer, c_attn + attn_c_proj);
    ck_assert_int_eq(p.q + p.k + p.v, 768 * 2304);
    ck_assert_int_eq(p.q_b + p.k_b + p.v_b, 2304);
    ck_assert_int_eq(p.o + p.o_b, attn_c_proj);
    ck_assert_int_eq(p.mlp_layer, c_fc + mlp_c_proj);      // 4,722,432
    ck_assert_int_eq(p.gate, 0);                           // no gate in a GELU MLP
    ck_assert_int_eq(p.attn_norm, ln);
    ck_assert_int_eq(p.mlp_norm, ln);
    ck_assert_int_eq(p.layer, 2 * ln + c_attn + attn_c_proj + c_fc + mlp_c_proj);   // 7,087,872
    ck_assert_int_eq(p.tok_embed, 50257 * 768);            // wte 38,597,376
    ck_assert_int_eq(p.pos_embed, 1024 * 768);             // wpe 786,432
    ck_assert_int_eq(p.final_norm, ln);
    ck_assert_int_eq(p.lm_head, 0);                        // tied to wte
    ck_assert_int_eq(p.total, 50257 * 768 + 1024 * 768 + 12 * p.layer + ln);
}
END_TEST

START_TEST(llama_qwen3_and_qwen2_layers_match_hand_computations)
{
    tw_hf_config cfg;
    tw_param_counts p;
    // Llama-2-7B: MHA, no biases, SwiGLU 11008, RMSNorm weights only, untied.
    count_file(&p, &cfg, "data/configs/Llama-2-7b.json");
    ck_assert_int_eq(p.attn_layer, 4LL * 4096 * 4096);
    ck_assert_int_eq(p.mlp_layer, 3LL * 4096 * 11008);
    ck_assert_int_eq(p.layer, 4LL * 4096 * 4096 + 3LL * 4096 * 11008 + 2 * 4096);   // 202,383,360
    ck_assert_int_eq(p.lm_head, 32000LL * 4096);
    // Qwen3-8B: GQA 32/8 with head_dim 128, q_norm and k_norm of 128 each, SwiGLU 12288.
    count_file(&p, &cfg, "data/configs/Qwen3-8B.json");
    ck_assert_int_eq(p.q, 4096LL * 32 * 128);
    ck_assert_int_eq(p.k, 4096LL * 8 * 128);
    ck_assert_int_eq(p.q_norm + p.k_norm, 256);
    ck_assert_int_eq(p.layer, 2 * 4096LL * 4096 + 2 * 4096LL * 1024 + 256
                              + 3 * 4096LL * 12288 + 2 * 4096);                  // 192,946,432
    // Qwen2.5-0.5B: biases on q, k, v only; 14 heads of 64, 2 kv heads; tied.
    count_file(&p, &cfg, "data/configs/Qwen2.5-0.5B.json");
    ck_assert_int_eq(p.q_b, 896);
    ck_assert_int_eq(p.k_b, 128);
    ck_assert_int_eq(p.v_b, 128);
    ck_assert_int_eq(p.o_b, 0);
    ck_assert_int_eq(p.attn_layer, 896 * 896 + 896 + 2 * (896 * 128 + 128) + 896 * 896);
    ck_assert_int_eq(p.lm_head, 0);
}
END_TEST

#define LLAMA_CORE "\"vocab_size\": 100, \"hidden_size\": 64, \"intermediate_size\": 96, " \
                   "\"num_hidden_layers\": 2, \"num_attention_heads\": 8"

START_TEST(absent_keys_take_the_transformers_defaults)
{
    tw_hf_config c;
    tw_param_counts p;
    char err[256];
    // Llama: kv heads = heads, head_dim = C/H, untied, no biases.
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"llama\", " LLAMA_CORE "}", err, sizeof err), TW_OK);
    ck_assert_int_eq(c.n_kv_head, 8);
    ck_assert_int_eq(c.head_dim, 8);
    ck_assert(!c.tie_embeddings && !c.qkv_bias && !c.o_bias && !c.mlp_bias);
    ck_assert(c.defaulted & TW_DEF_TIE);
    // Mistral: an absent num_key_value_heads is 8 (MistralConfig), a null one means = heads.
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"mistral\", " LLAMA_CORE "}", err, sizeof err), TW_OK);
    ck_assert_int_eq(c.n_kv_head, 8);
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"mistral\", \"num_attention_heads\": 16, "
                     "\"vocab_size\": 100, \"hidden_size\": 64, \"intermediate_size\": 96, "
                     "\"num_hidden_layers\": 2, \"num_key_value_heads\": null}", err, sizeof err), TW_OK);
    ck_assert_int_eq(c.n_kv_head, 16);
    // Qwen3: head_dim defaults to 128 (Qwen3Config), not C/H; kv heads default 32.
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"qwen3\", \"vocab_size\": 100, "
                     "\"hidden_size\": 64, \"intermediate_size\": 96, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 32}", err, sizeof err), TW_OK);
    ck_assert_int_eq(c.head_dim, 128);
    ck_assert_int_eq(c.n_kv_head, 32);
    ck_assert(c.qk_norm && !c.qkv_bias && !c.tie_embeddings);
    // GPT-2: tied by default, n_inner null -> 4C.
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"gpt2\", \"vocab_size\": 10, \"n_embd\": 8, "
                     "\"n_layer\": 1, \"n_head\": 2, \"n_positions\": 4, \"n_inner\": null}",
                     err, sizeof err), TW_OK);
    ck_assert(c.tie_embeddings);
    ck_assert_int_eq(c.ffn_hidden, 32);
    ck_assert_int_eq(tw_params_count(&p, &c), TW_OK);
    // wte 80 + wpe 32 + layer (ln 32 + c_attn 8*24+24 + c_proj 72 + c_fc 8*32+32 + proj 32*8+8) + ln_f 16
    ck_assert_int_eq(p.total, 80 + 32 + (32 + 216 + 72 + 288 + 264) + 16);
}
END_TEST

START_TEST(bias_switches_follow_each_architecture)
{
    tw_hf_config c;
    tw_param_counts p;
    char err[256];
    // Llama honours attention_bias (q, k, v, o) and mlp_bias (gate, up, down).
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"llama\", " LLAMA_CORE ", \"num_key_value_heads\": 2,"
                     " \"attention_bias\": true, \"mlp_bias\": true}", err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_params_count(&p, &c), TW_OK);
    ck_assert_int_eq(p.q_b + p.k_b + p.v_b + p.o_b, 64 + 16 + 16 + 64);
    ck_assert_int_eq(p.gate_b + p.up_b + p.down_b, 96 + 96 + 64);
    // Mistral's modules hard-code bias=False: the same keys change nothing.
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"mistral\", " LLAMA_CORE ", \"num_key_value_heads\": 2,"
                     " \"attention_bias\": true, \"mlp_bias\": true}", err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_params_count(&p, &c), TW_OK);
    ck_assert_int_eq(p.q_b + p.k_b + p.v_b + p.o_b + p.gate_b + p.up_b + p.down_b, 0);
    // Qwen3 with attention_bias: all four projections, MLP still without.
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"qwen3\", " LLAMA_CORE ", \"num_key_value_heads\": 2,"
                     " \"head_dim\": 8, \"attention_bias\": true}", err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_params_count(&p, &c), TW_OK);
    ck_assert_int_eq(p.q_b + p.k_b + p.v_b + p.o_b, 64 + 16 + 16 + 64);
    ck_assert_int_eq(p.gate_b + p.up_b + p.down_b, 0);
}
END_TEST

static const struct { const char *json; tw_status st; const char *msg_part; } BAD_CONFIGS[] = {
    { "[1, 2]", TW_ERR_FORMAT, "expected an object" },
    { "{\"vocab_size\": 5}", TW_ERR_FORMAT, "missing string key \"model_type\"" },
    { "{\"model_type\": \"bert\"}", TW_ERR_FORMAT,
      "model_type \"bert\" is not supported (supported: gpt2, llama, mistral, qwen2, qwen3)" },
    { "{\"model_type\": \"llama\", \"vocab_size\": 100}", TW_ERR_FORMAT, "missing key \"hidden_size\"" },
    { "{\"model_type\": \"llama\", " LLAMA_CORE ", \"hidden_size\": \"64\"}", TW_ERR_FORMAT,
      "\"hidden_size\" must be an integer, not a string" },
    { "{\"model_type\": \"llama\", " LLAMA_CORE ", \"intermediate_size\": 96.5}", TW_ERR_FORMAT,
      "must be an integer, not a fraction" },
    { "{\"model_type\": \"llama\", " LLAMA_CORE ", \"num_hidden_layers\": 0}", TW_ERR_FORMAT,
      "\"num_hidden_layers\" is 0" },
    { "{\"model_type\": \"llama\", " LLAMA_CORE ", \"num_key_value_heads\": 3}", TW_ERR_SHAPE,
      "not a multiple of num_key_value_heads" },
    { "{\"model_type\": \"llama\", " LLAMA_CORE ", \"num_attention_heads\": 6}", TW_ERR_SHAPE,
      "no head_dim" },
    { "{\"model_type\": \"llama\", " LLAMA_CORE ", \"tie_word_embeddings\": 1}", TW_ERR_FORMAT,
      "must be true or false" },
    { "{\"model_type\": \"gpt2\", \"vocab_size\": 10, \"n_embd\": 8, \"n_layer\": 1, \"n_head\": 3}",
      TW_ERR_SHAPE, "n_embd (8) is not a multiple of n_head (3)" },
    { "{\"model_type\": \"gpt2\", \"vocab_size\": 10, \"n_embd\": 8, \"n_layer\": 1, \"n_head\": 2, "
      "\"add_cross_attention\": true}", TW_ERR_FORMAT, "add_cross_attention is not supported" },
};

START_TEST(bad_configs_are_rejected_with_a_reason)
{
    tw_hf_config c;
    char err[256] = "";
    tw_status st = config_from(&c, BAD_CONFIGS[_i].json, err, sizeof err);
    ck_assert_msg(st == BAD_CONFIGS[_i].st && strstr(err, BAD_CONFIGS[_i].msg_part),
                  "%s: got status %d \"%s\", want %d and \"%s\"", BAD_CONFIGS[_i].json, st, err,
                  BAD_CONFIGS[_i].st, BAD_CONFIGS[_i].msg_part);
}
END_TEST

START_TEST(counts_that_would_overflow_are_refused)
{
    tw_hf_config c;
    tw_param_counts p;
    char err[256];
    ck_assert_int_eq(config_from(&c, "{\"model_type\": \"llama\", \"vocab_size\": 4294967296, "
                     "\"hidden_size\": 4294967296, \"intermediate_size\": 4294967296, "
                     "\"num_hidden_layers\": 4294967296, \"num_attention_heads\": 1}",
                     err, sizeof err), TW_OK);
    ck_assert_int_eq(tw_params_count(&p, &c), TW_ERR_ARG);
    ck_assert_int_eq(p.total, 0);
}
END_TEST

START_TEST(kv_cache_and_weight_bytes)
{
    tw_hf_config cfg;
    tw_param_counts p;
    count_file(&p, &cfg, "data/configs/Qwen3-8B.json");
    // 2 (K and V) x 36 layers x 8 kv heads x 128 x 2 bytes = 147,456 bytes per token in bf16.
    ck_assert_int_eq(tw_hf_kv_bytes(&cfg, 1, 2), 2 * 36 * 8 * 128 * 2);
    count_file(&p, &cfg, "data/configs/Llama-2-7b.json");
    // MHA: 2 x 32 x 32 x 128 x 2 bytes x 4096 tokens = exactly 2 GiB.
    ck_assert_int_eq(tw_hf_kv_bytes(&cfg, 4096, 2), 2LL * 1024 * 1024 * 1024);
    ck_assert_int_eq(tw_params_weight_bytes(p.total, 2), 2 * 6738415616LL);
    ck_assert_int_eq(tw_params_weight_bytes(INT64_MAX / 2 + 1, 2), -1);
    ck_assert_int_eq(tw_hf_kv_bytes(&cfg, INT64_MAX / 4, 2), -1);
}
END_TEST

// ---- the ./params program ----

// Runs cmd (tt_run: no shell); returns its exit status and the last line of its stdout in last,
// and writes its stderr to the file err_path when that is not NULL.
static int run(const char *cmd, char *last, size_t n, const char *err_path) {
    run_result r = tt_run(cmd);
    last[0] = '\0';
    for (const char *p = r.out; *p; ) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p + 1) : strlen(p);
        snprintf(last, n, "%.*s", (int)len, p);
        p += len;
    }
    if (err_path != NULL) {
        FILE *f = fopen(err_path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(r.err, f);
        ck_assert_int_eq(fclose(f), 0);
    }
    int st = r.rc;
    tt_run_free(&r);
    return st;
}

static int count_lines(const char *path) {
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int c, lines = 0;
    while ((c = fgetc(f)) != EOF) lines += c == '\n';
    fclose(f);
    return lines;
}

START_TEST(params_tool_ends_with_the_exact_total)
{
    char cmd[512], last[512], want[64];
    snprintf(cmd, sizeof cmd, "./params --context 4096 %s", CONFIGS[_i].file);
    ck_assert_int_eq(run(cmd, last, sizeof last, NULL), 0);
    snprintf(want, sizeof want, "total %lld\n", (long long)CONFIGS[_i].total);
    ck_assert_str_eq(last, want);
}
END_TEST

static const struct { const char *args; int status; const char *stderr_part; } TOOL_ERRORS[] = {
    { "", 2, "missing CONFIG.json" },
    { "--context", 2, "--context needs" },
    { "--context 0 data/configs/gpt2.json", 2, "--context must be" },
    { "--context 12x data/configs/gpt2.json", 2, "--context must be" },
    { "--bogus data/configs/gpt2.json", 2, "unknown option '--bogus'" },
    { "data/configs/gpt2.json data/configs/gpt2.json", 2, "exactly one" },
    { "data/configs/no-such.json", 1, "data/configs/no-such.json: cannot open" },
    { "tests/test_params.c", 1, "tests/test_params.c: byte 0: unexpected character" },
};

START_TEST(params_tool_reports_bad_usage_and_bad_files)
{
    char tmpl[] = "/tmp/tw-params-XXXXXX", cmd[1024], last[512];
    int fd = mkstemp(tmpl);
    ck_assert_int_ge(fd, 0);
    snprintf(cmd, sizeof cmd, "./params %s", TOOL_ERRORS[_i].args);
    int st = run(cmd, last, sizeof last, tmpl);
    ck_assert_msg(st == TOOL_ERRORS[_i].status, "'%s' exited %d, want %d", cmd, st, TOOL_ERRORS[_i].status);
    ck_assert_str_eq(last, "");   // nothing on stdout: no half-written report
    FILE *f = fdopen(fd, "r");
    char line[512] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_msg(strstr(line, TOOL_ERRORS[_i].stderr_part), "'%s' said \"%s\"", cmd, line);
    // Failures on a file are one line; usage errors add the usage text after the reason.
    if (TOOL_ERRORS[_i].status == 1) ck_assert_int_eq(count_lines(tmpl), 1);
    remove(tmpl);
}
END_TEST

START_TEST(params_tool_names_an_unsupported_model_type)
{
    char tmpl[] = "/tmp/tw-params-XXXXXX", err[] = "/tmp/tw-params-err-XXXXXX", cmd[1024], last[512];
    int fd = mkstemp(tmpl), fe = mkstemp(err);
    ck_assert(fd >= 0 && fe >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"model_type\": \"falcon\", \"hidden_size\": 64}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "./params %s", tmpl);
    ck_assert_int_eq(run(cmd, last, sizeof last, err), 1);
    f = fdopen(fe, "r");
    char line[512] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    fclose(f);
    ck_assert_ptr_nonnull(strstr(line, tmpl));
    ck_assert_ptr_nonnull(strstr(line, "\"falcon\" is not supported (supported: gpt2, llama, "
                                       "mistral, qwen2, qwen3)"));
    ck_assert_int_eq(count_lines(err), 1);
    remove(tmpl);
    remove(err);
}
END_TEST

Suite *suite_params(void) {
    Suite *s = suite_create("params");
    TCase *tc = tcase_create("count");
    const int n_configs = (int)(sizeof CONFIGS / sizeof CONFIGS[0]);
    tcase_add_loop_test(tc, every_committed_config_gives_its_published_total, 0, n_configs);
    tcase_add_test(tc, gpt2_components_match_a_hand_computation);
    tcase_add_test(tc, llama_qwen3_and_qwen2_layers_match_hand_computations);
    tcase_add_test(tc, absent_keys_take_the_transformers_defaults);
    tcase_add_test(tc, bias_switches_follow_each_architecture);
    tcase_add_loop_test(tc, bad_configs_are_rejected_with_a_reason, 0,
                        (int)(sizeof BAD_CONFIGS / sizeof BAD_CONFIGS[0]));
    tcase_add_test(tc, counts_that_would_overflow_are_refused);
    tcase_add_test(tc, kv_cache_and_weight_bytes);
    suite_add_tcase(s, tc);
    TCase *tool = tcase_create("tool");
    tcase_add_loop_test(tool, params_tool_ends_with_the_exact_total, 0, n_configs);
    tcase_add_loop_test(tool, params_tool_reports_bad_usage_and_bad_files, 0,
                        (int)(sizeof TOOL_ERRORS / sizeof TOOL_ERRORS[0]));
    tcase_add_test(tool, params_tool_names_an_unsupported_model_type);
    suite_add_tcase(s, tool);
    return s;
}
