// fuzz_llama2c.c: libFuzzer target for the llama2.c checkpoint loader.
//   1. The input is a checkpoint file: tw_llama2c_load must accept it or fail with a message.
//      An accepted model runs one forward step (T = 1, a short KV cache) so inconsistent sizes
//      would show up as out-of-bounds reads of the weights.
//   2. Its first 28 bytes are also a header and the next 8 a claimed file size, given straight to
//      tw_llama2c_check_header, so huge sizes and overflowing products are explored without
//      huge inputs.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <string.h>
#include "fuzz_file.h"
#include "formats/llama2c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run_one_step(const tw_model *m) {
    tw_model_state s;
    int S = m->cfg.max_seq < 4 ? m->cfg.max_seq : 4;
    if (tw_model_state_init(&s, m, 1, S) != TW_OK) return;
    int tok = m->cfg.vocab - 1;
    if (tw_model_forward_next(&s, m, &tok, 1, 0) != TW_OK) abort();
    int bad = m->cfg.vocab;   // one past the vocabulary must be refused, not read
    if (S > 1 && tw_model_forward_next(&s, m, &bad, 1, 1) != TW_ERR_SHAPE) abort();
    tw_model_state_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write_file(data, size);
    tw_model m;
    char err[512] = "";
    tw_status st = tw_llama2c_load(&m, path, err, sizeof err);
    if (st == TW_OK) {
        run_one_step(&m);
        tw_model_free(&m);
    } else if (err[0] == '\0') {
        abort();
    }

    if (size >= 36) {
        int32_t h[7];
        int64_t bytes;
        memcpy(h, data, sizeof h);
        memcpy(&bytes, data + 28, sizeof bytes);
        tw_llama2c_config cfg;
        char why[400] = "";
        if (tw_llama2c_check_header(&cfg, h, (long long)bytes, why, sizeof why) != TW_OK && !why[0])
            abort();
    }
    return 0;
}
