// fuzz_lora.c: libFuzzer target for the LoRA adapters file (tw_lora_file_load / _parse,
// lib/formats/lora_file.c), what ./train --lora-init and ./generate --lora read, for a base of
// stories260K's shape (5 layers, C 64, 8 heads of 8, 4 KV heads, F 172; the seeds in
// fuzz/corpus/lora/ and data/corrupt/lora/ are made for it). The input is a file: the reader
// must accept it or fail with one line and nothing allocated. An accepted file is exactly the
// header plus 4 bytes per adapter float, its floats are finite and are the file's bytes, and the
// path reader and the memory parser agree.
#define _POSIX_C_SOURCE 200809L   // mkstemp (fuzz_file.h)
#include <math.h>
#include <string.h>
#include "fuzz_file.h"
#include "formats/lora_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static tw_model_config stories260k_shape(void) {
    tw_model_config c;
    if (tw_model_config_preset(&c, "llama") != TW_OK) abort();
    c.vocab = 512;
    c.max_seq = 512;
    c.n_layer = 5;
    c.block.attn.d_model = 64;
    c.block.attn.n_head = 8;
    c.block.attn.n_kv_head = 4;
    c.block.attn.head_dim = 8;
    c.block.ffn_hidden = 172;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const tw_model_config c = stories260k_shape();
    tw_lora_set s, t;
    char err[512] = "", err2[512] = "";
    const tw_status st = tw_lora_file_parse(&s, data, size, &c, err, sizeof err);
    const char *path = fuzz_write_file(data, size);
    const tw_status st2 = tw_lora_file_load(&t, path, &c, err2, sizeof err2);
    if (st != st2) abort();
    if (st != TW_OK) {
        if (err[0] == '\0' || strchr(err, '\n') || s.memory || s.lin) abort();
        if (err2[0] == '\0' || strchr(err2, '\n') || t.memory) abort();
        return 0;
    }
    if ((long long)size != tw_lora_file_header_bytes(s.n_targets) + 4LL * s.n_floats) abort();
    if (s.r < 1 || s.r > TW_LORA_MAX_R || !(s.alpha > 0.0f) || !isfinite(s.alpha)) abort();
    if (!tw_lora_set_fits(&s, &c)) abort();
    const uint8_t *floats = data + tw_lora_file_header_bytes(s.n_targets);
    for (long i = 0; i < s.n_floats; i++) {
        uint8_t b[4];
        memcpy(b, &s.memory[i], 4);   // little-endian hosts (x86, Arm Linux/macOS)
        if (!isfinite(s.memory[i]) || memcmp(b, floats + 4 * i, 4) != 0) abort();
    }
    if (t.n_floats != s.n_floats || memcmp(t.memory, s.memory, (size_t)s.n_floats * 4) != 0) abort();
    tw_lora_set_free(&s);
    tw_lora_set_free(&t);
    return 0;
}
