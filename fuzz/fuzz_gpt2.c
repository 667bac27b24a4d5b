// fuzz_gpt2.c: libFuzzer target for GPT-2's reader (tw_bbpe_load_gpt2: encoder.json and
// vocab.bpe), and for encode/decode with whatever vocabulary hostile files hold
// (fuzz_bbpe_check.h: decode(encode(s)) must give s back, as GPT-2 has no normaliser).
// Input layout: uint16 n, uint16 m (little-endian), n bytes of text, m bytes of encoder.json,
// then vocab.bpe. The two files go to a private temporary folder, made once per process.
#define _POSIX_C_SOURCE 200809L   // mkdtemp
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fuzz_bbpe_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256], enc_path[300], bpe_path[300];

static void remove_dir(void) {
    unlink(enc_path);
    unlink(bpe_path);
    rmdir(dir);
}

static void put(const char *path, const uint8_t *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror("fuzz_gpt2: writing an input file");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/tw_fuzz_gpt2_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        if (!mkdtemp(dir)) { perror("fuzz_gpt2: mkdtemp"); abort(); }
        snprintf(enc_path, sizeof enc_path, "%s/encoder.json", dir);
        snprintf(bpe_path, sizeof bpe_path, "%s/vocab.bpe", dir);
        atexit(remove_dir);
    }
    if (size < 4) return 0;
    size_t n = (size_t)(data[0] | data[1] << 8), m = (size_t)(data[2] | data[3] << 8);
    data += 4; size -= 4;
    if (n > size) n = size;
    if (m > size - n) m = size - n;
    put(enc_path, data + n, m);
    put(bpe_path, data + n + m, size - n - m);
    tw_bbpe t;
    char err[700] = "";
    tw_status st = tw_bbpe_load_gpt2(&t, enc_path, bpe_path, err, sizeof err);
    if (st == TW_OK) {
        fuzz_bbpe_check(&t, (const char *)data, n);
        fuzz_bbpe_check(&t, "the in<|endoftext|>\xff \xe2\x82", 24);
        tw_bbpe_free(&t);
    } else if (err[0] == '\0') {
        abort();
    }
    return 0;
}
