// test_params_moe.c: the mixture-of-experts parameter counter (lib/formats/hf_moe.c) and ./params
// on mixtral, qwen3_moe and deepseek_v3 configs (data/configs/, copied from ../shared/configs).
//   - Mixtral-8x7B and Qwen3-30B-A3B give their published totals exactly;
//   - DeepSeek-V3, published only rounded (671B main model, 685B on the model card), equals a
//     hand computation from the module shapes written out below, independently of hf_moe.c;
//   - activated parameters, KV cache per token (MLA latent against MHA and GQA) by hand too;
//   - qwen3_moe's mlp_only_layers / decoder_sparse_step and bad configs;
//   - ./params ends with `activated N` and `total N`, and a bad file gets one line and exit 1.
// Counts are integers: every comparison is exact.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/hf_moe.h"

static void count_file(tw_moe_param_counts *p, tw_hf_moe_config *c, const char *path) {
    char err[256];
    tw_json *root = tt_json_read_file(path);
    ck_assert(tw_hf_moe_is_moe(root));
    tw_status st = tw_hf_moe_from_json(c, root, err, sizeof err);
    tw_json_free(root);
    ck_assert_msg(st == TW_OK, "%s: %s", path, err);
    ck_assert_int_eq(tw_hf_moe_count(p, c), TW_OK);
}

static tw_status config_from(tw_hf_moe_config *c, const char *json, char *err, size_t n) {
    tw_json *root = tt_json_parse(json);
    tw_status st = tw_hf_moe_from_json(c, root, err, n);
    tw_json_free(root);
    return st;
}

START_TEST(mixtral_gives_its_published_total)
{
    tw_hf_moe_config c;
    tw_moe_param_counts p;
    count_file(&p, &c, "data/configs/Mixtral-8x7B-v0.1.json");
    ck_assert_int_eq(p.total, 46702792704LL);   // published (safetensors count)
    // By hand: C 4096, 32 layers, q/o 4096x4096, k/v 1024x4096, router 8x4096, 8 experts of
    // 3 x 4096 x 14336, 2 norms; embeddings and lm_head 32000 x 4096, final norm.
    const int64_t attn = 2LL * 4096 * 4096 + 2LL * 1024 * 4096, expert = 3LL * 4096 * 14336;
    const int64_t layer = attn + 8LL * 4096 + 8 * expert + 2 * 4096;
    ck_assert_int_eq(p.total, 32 * layer + 2LL * 32000 * 4096 + 4096);
    // Activated: 2 of 8 experts; published "about 12.9B" (12,879,925,248 rounds to 12.9B).
    ck_assert_int_eq(p.active, p.total - 32 * 6 * expert);
    ck_assert_int_eq(p.active, 12879925248LL);
    tw_kv_per_token k = tw_hf_moe_kv_per_token(&c, 8);
    ck_assert_int_eq(k.gqa, 32 * 2 * 8 * 128);   // 8 kv heads of 128 per layer, K and V
    ck_assert_int_eq(k.mha, 32 * 2 * 32 * 128);
    ck_assert_int_eq(k.latent, 0);
}
END_TEST

START_TEST(qwen3_moe_gives_its_published_total)
{
    tw_hf_moe_config c;
    tw_moe_param_counts p;
    count_file(&p, &c, "data/configs/Qwen3-30B-A3B.json");
    ck_assert_int_eq(p.total, 30532122624LL);   // published (safetensors count)
    const int64_t attn = 2LL * 2048 * 4096 + 2LL * 512 * 2048 + 2 * 128;   // + q_norm, k_norm
    const int64_t expert = 3LL * 2048 * 768;
    const int64_t layer = attn + 2 * 2048 + 128LL * 2048 + 128 * expert;
    ck_assert_int_eq(p.total, 48 * layer + 2LL * 151936 * 2048 + 2048);
    // 8 of 128 experts: 3,353,032,704 (published "3.3B activated", the figure truncated).
    ck_assert_int_eq(p.active, p.total - 48 * 120 * expert);
    ck_assert_int_eq(p.active, 3353032704LL);
}
END_TEST

START_TEST(deepseek_v3_matches_a_hand_computation)
{
    tw_hf_moe_config c;
    tw_moe_param_counts p;
    count_file(&p, &c, "data/configs/DeepSeek-V3.json");
    // MLA: q_a 7168->1536, its norm, q_b 1536->128x192, kv_a 7168->512+64, its norm,
    // kv_b 512->128x(128+128), o 128x128->7168.
    const int64_t C = 7168, V = 129280;
    const int64_t attn = C * 1536 + 1536 + 1536LL * 128 * 192 + C * 576 + 512 +
                         512LL * 128 * 256 + 128LL * 128 * C;
    ck_assert_int_eq(p.attn_layer, attn);
    const int64_t expert = 3 * C * 2048, dense = 3 * C * 18432;
    const int64_t moe = 256 * C + 256 + 256 * expert + expert;   // router, bias, 256 + 1 shared
    const int64_t main_total = 3 * (attn + 2 * C + dense) + 58 * (attn + 2 * C + moe) +
                               2 * V * C + C;
    ck_assert_int_eq(p.main_total, main_total);
    ck_assert_int_eq(p.main_total, 671026419200LL);   // "671B" main model (model card)
    // The MTP module (checkpoint layer 61): one more MoE layer, enorm, hnorm, eh_proj (C, 2C),
    // shared_head.norm, and stored copies of the embedding and the head.
    const int64_t mtp = attn + 2 * C + moe + 3 * C + 2 * C * C + 2 * V * C;
    ck_assert_int_eq(p.mtp, mtp);
    ck_assert_int_eq(p.total, main_total + mtp);
    ck_assert_int_eq(p.total, 684489845504LL);
    // The model card's 685B counts every number in the safetensors files, FP8 scales included
    // (one per 128 x 128 block of each FP8 Linear). The Hub lists 684,531,386,000 for them (a
    // figure not in ../shared/configs; quoted from the Hub's safetensors summary).
    ck_assert_int_eq(p.total + p.fp8_scales, 684531386000LL);
    // Activated: 8 of 256 routed experts in 58 layers; 37,552,297,472, or 36,625,618,432
    // without the embedding table (published: "37B activated").
    ck_assert_int_eq(p.active, main_total - 58LL * 248 * expert);
    ck_assert_int_eq(p.active_no_embed, p.active - V * C);
    // KV cache per token: MLA caches kv_lora_rank + qk_rope_head_dim = 576 numbers a layer;
    // MHA would cache 128 heads x (192 for k + 128 for v).
    tw_kv_per_token k = tw_hf_moe_kv_per_token(&c, 8);
    ck_assert_int_eq(k.latent, 61 * 576);
    ck_assert_int_eq(k.mha, 61LL * 128 * 320);
    ck_assert_int_eq(k.gqa, 61LL * 8 * 320);
}
END_TEST

START_TEST(qwen3_moe_dense_layers_follow_the_config)
{
    // 6 layers, MoE where (i + 1) % 2 == 0 and i not in [3]: layers 1 and 5; 0, 2, 3, 4 dense.
    const char *json = "{\"model_type\": \"qwen3_moe\", \"vocab_size\": 10, \"hidden_size\": 8, "
        "\"num_hidden_layers\": 6, \"num_attention_heads\": 2, \"num_key_value_heads\": 1, "
        "\"head_dim\": 4, \"intermediate_size\": 12, \"moe_intermediate_size\": 3, "
        "\"num_experts\": 4, \"num_experts_per_tok\": 2, \"decoder_sparse_step\": 2, "
        "\"mlp_only_layers\": [3]}";
    tw_hf_moe_config c;
    tw_moe_param_counts p;
    char err[256];
    ck_assert_int_eq(config_from(&c, json, err, sizeof err), TW_OK);
    ck_assert_int_eq(c.n_moe_layers, 2);
    ck_assert_int_eq(c.n_dense_layers, 4);
    ck_assert_int_eq(tw_hf_moe_count(&p, &c), TW_OK);
    const int64_t attn = 8 * 8 + 2 * 8 * 4 + 8 * 8 + 2 * 4, norms = 16;
    const int64_t moe = 4 * 8 + 4 * 3 * 8 * 3, dense = 3 * 8 * 12;
    ck_assert_int_eq(p.total, 2 * (attn + norms + moe) + 4 * (attn + norms + dense) + 2 * 80 + 8);
}
END_TEST

static const struct { const char *json, *says; } BAD[] = {
    { "{\"model_type\": \"mixtral\", \"vocab_size\": 10, \"hidden_size\": 8, "
      "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 1, "
      "\"num_experts_per_tok\": 2, \"intermediate_size\": 4}", "missing key \"num_local_experts\"" },
    { "{\"model_type\": \"mixtral\", \"vocab_size\": 10, \"hidden_size\": 8, "
      "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 1, "
      "\"num_experts_per_tok\": 3, \"intermediate_size\": 4, \"num_local_experts\": 2}",
      "num_experts_per_tok (3) is more than the 2 experts" },
    { "{\"model_type\": \"qwen3_moe\", \"vocab_size\": 10, \"hidden_size\": 8, "
      "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 1, "
      "\"num_experts_per_tok\": 1, \"intermediate_size\": 4, \"moe_intermediate_size\": 2, "
      "\"num_experts\": 2, \"mlp_only_layers\": \"none\"}", "\"mlp_only_layers\" must be an array" },
    { "{\"model_type\": \"deepseek_v3\", \"vocab_size\": 10, \"hidden_size\": 8, "
      "\"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_experts_per_tok\": 1, "
      "\"intermediate_size\": 4, \"moe_intermediate_size\": 2, \"n_routed_experts\": 2, "
      "\"moe_layer_freq\": 1, \"kv_lora_rank\": 4, \"qk_nope_head_dim\": 2, "
      "\"qk_rope_head_dim\": 2.5, \"v_head_dim\": 2}", "\"qk_rope_head_dim\" must be an integer" },
};

START_TEST(bad_moe_configs_are_rejected_with_a_reason)
{
    tw_hf_moe_config c;
    char err[256];
    ck_assert_int_ne(config_from(&c, BAD[_i].json, err, sizeof err), TW_OK);
    ck_assert_msg(strstr(err, BAD[_i].says), "message \"%s\" lacks \"%s\"", err, BAD[_i].says);
}
END_TEST

static const struct { const char *file; const char *active, *total; } TOOL[] = {
    { "data/configs/Mixtral-8x7B-v0.1.json", "activated 12879925248", "total 46702792704" },
    { "data/configs/Qwen3-30B-A3B.json", "activated 3353032704", "total 30532122624" },
    { "data/configs/DeepSeek-V3.json", "activated 37552297472", "total 684489845504" },
};

START_TEST(params_tool_ends_with_activated_and_total)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "./params %s", TOOL[_i].file);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s: exit %d, stderr: %s", cmd, r.rc, r.err);
    // the last line is exactly the total
    size_t n = strlen(r.out), t = strlen(TOOL[_i].total);
    ck_assert_msg(n > t + 1 && strncmp(r.out + n - t - 1, TOOL[_i].total, t) == 0 && r.out[n - 1] == '\n' &&
                  r.out[n - t - 2] == '\n', "%s: the last line is not \"%s\"", cmd, TOOL[_i].total);
    ck_assert_msg(strstr(r.out, TOOL[_i].active), "%s: no \"%s\" line", cmd, TOOL[_i].active);
    ck_assert_int_eq(strlen(r.err), 0);
    tt_run_free(&r);
}
END_TEST

START_TEST(params_tool_reports_a_bad_moe_config_in_one_line)
{
    const char *path = "out/test-params-moe-bad.json";
    ck_assert_int_eq(tt_mkdir_p("out"), 0);
    ck_assert_int_eq(tt_write_text(path, BAD[1].json), 0);
    run_result r = tt_run("./params out/test-params-moe-bad.json");
    ck_assert_int_eq(r.rc, 1);
    ck_assert_int_eq(tt_count_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, path));
    ck_assert_ptr_nonnull(strstr(r.err, "is more than the 2 experts"));
    ck_assert_int_eq(strlen(r.out), 0);
    tt_run_free(&r);
    remove(path);
}
END_TEST

Suite *suite_params_moe(void) {
    Suite *s = suite_create("params_moe");
    TCase *tc = tcase_create("count");
    tcase_add_test(tc, mixtral_gives_its_published_total);
    tcase_add_test(tc, qwen3_moe_gives_its_published_total);
    tcase_add_test(tc, deepseek_v3_matches_a_hand_computation);
    tcase_add_test(tc, qwen3_moe_dense_layers_follow_the_config);
    tcase_add_loop_test(tc, bad_moe_configs_are_rejected_with_a_reason, 0,
                        (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_loop_test(tc, params_tool_ends_with_activated_and_total, 0,
                        (int)(sizeof TOOL / sizeof TOOL[0]));
    tcase_add_test(tc, params_tool_reports_a_bad_moe_config_in_one_line);
    suite_add_tcase(s, tc);
    return s;
}
