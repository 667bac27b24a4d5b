// fuzz_json.c: libFuzzer target for the JSON reader and the parameter counter behind ./params.
// The input is parsed from memory (not NUL-terminated, so ASan catches any read past len); a
// tree that parses is walked, then given to tw_hf_config_from_json and tw_params_count, which
// must reject or count it without overflow or a crash, and to tw_hf_rope_scaling_from_json.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "formats/json.h"
#include "formats/hf_config.h"
#include "formats/hf_rope_scaling.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Visits every node, checking the invariants json.h promises (strings NUL-terminated at len,
// object members have keys, array items do not).
static void walk(const tw_json *v, int depth, int in_object) {
    if (depth > TW_JSON_MAX_DEPTH + 1) abort();
    if ((v->key != NULL) != in_object) abort();
    if (v->type == TW_JSON_STRING && (v->string == NULL || v->string[v->len] != '\0')) abort();
    for (size_t i = 0; i < v->count; i++)
        walk(&v->items[i], depth + 1, v->type == TW_JSON_OBJECT);
    if (in_object) (void)strlen(v->key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // An exact-size copy: the parser must not rely on a terminator.
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    tw_json *root = NULL;
    tw_json_error e;
    tw_status st = tw_json_parse(&root, text, size, &e);
    if (st == TW_OK) {
        walk(root, 0, 0);
        tw_hf_config cfg;
        char err[256] = "";
        if (tw_hf_config_from_json(&cfg, root, err, sizeof err) == TW_OK) {
            tw_param_counts pc;
            if (tw_params_count(&pc, &cfg) == TW_OK) {
                (void)tw_params_weight_bytes(pc.total, 4);
                (void)tw_hf_kv_bytes(&cfg, 4096, 2);
            }
        } else if (err[0] == '\0') {
            abort();
        }
        // config.json's rope_scaling (formats/hf_rope_scaling.c): rejected with a message, or a
        // scaling whose frequencies are finite and positive.
        tw_rope_scaling sc;
        err[0] = '\0';
        if (tw_hf_rope_scaling_from_json(&sc, root, err, sizeof err) == TW_OK) {
            double freq[64];
            tw_rope_scaled_freqs(freq, 128, 10000.0, &sc);
            for (int i = 0; i < 64; i++)
                if (!(freq[i] > 0.0) || !isfinite(freq[i])) abort();
        } else if (err[0] == '\0') {
            abort();
        }
        tw_json_free(root);
    } else {
        if (root != NULL || e.msg[0] == '\0' || e.offset > size) abort();
    }
    free(text);
    return 0;
}
