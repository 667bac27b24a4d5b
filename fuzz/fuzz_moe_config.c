// fuzz_moe_config.c: libFuzzer target for the mixture-of-experts config reader behind ./params
// (lib/formats/hf_moe.c). The input is parsed as JSON from memory; a tree whose model_type is
// mixtral, qwen3_moe or deepseek_v3 is given to tw_hf_moe_from_json, tw_hf_moe_count and
// tw_hf_moe_kv_per_token, which must reject or count it without overflow or a crash, and a
// rejection must come with a message.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "formats/json.h"
#include "formats/hf_moe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    tw_json *root = NULL;
    tw_json_error e;
    if (tw_json_parse(&root, text, size, &e) == TW_OK) {
        tw_hf_moe_config cfg;
        char err[256] = "";
        if (tw_hf_moe_from_json(&cfg, root, err, sizeof err) == TW_OK) {
            tw_moe_param_counts pc;
            if (tw_hf_moe_count(&pc, &cfg) == TW_OK) {
                if (pc.total < pc.main_total || pc.active > pc.main_total || pc.active < 0) abort();
            }
            (void)tw_hf_moe_kv_per_token(&cfg, 8);
        } else if (err[0] == '\0') {
            abort();
        }
        tw_json_free(root);
    }
    free(text);
    return 0;
}
