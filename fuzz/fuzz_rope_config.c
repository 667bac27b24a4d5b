// fuzz_rope_config.c: libFuzzer target for the "rope_scaling" field of a config.json
// (lib/formats/hf_rope_scaling.c, behind ./generate --rope-config and ./train --rope-config).
// The input is parsed as JSON from memory; a tree is given to tw_hf_rope_scaling_from_json, which
// must accept it or reject it with a message. An accepted scaling is applied to a llama
// configuration (tw_model_config_apply_rope_scaling, as the tools do), which must then hold a
// valid scaling and a max_seq within the limit, and its frequencies for D = 8 and 128 must be
// finite and positive.
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "formats/json.h"
#include "formats/hf_rope_scaling.h"
#include "nn/long_context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_freqs(const tw_rope_scaling *sc, int D, double theta) {
    double f[64];
    tw_rope_scaled_freqs(f, D, theta, sc);
    for (int i = 0; i < D / 2; i++)
        if (!(f[i] > 0.0) || !isfinite(f[i])) abort();
    const double m = tw_rope_scaling_attention_factor(sc);
    if (!(m >= 1.0) || !isfinite(m)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    tw_json *root = NULL;
    tw_json_error e;
    if (tw_json_parse(&root, text, size, &e) == TW_OK) {
        tw_rope_scaling sc;
        char err[256] = "";
        if (tw_hf_rope_scaling_from_json(&sc, root, err, sizeof err) == TW_OK) {
            tw_model_config c;
            if (tw_model_config_preset(&c, "llama") != TW_OK) abort();
            c.max_seq = 256;
            const long limit = 1L << 20;
            if (tw_model_config_apply_rope_scaling(&c, &sc, limit) == TW_OK) {
                if (c.max_seq < 256 || c.max_seq > limit) abort();
                if (tw_rope_scaling_check(&c.block.attn.rope_scaling) != TW_OK) abort();
                check_freqs(&c.block.attn.rope_scaling, 8, 1e4);
                check_freqs(&c.block.attn.rope_scaling, 128, 1e6);
            }
        } else if (err[0] == '\0') {
            abort();   // a rejection must say why
        }
        tw_json_free(root);
    }
    free(text);
    return 0;
}
