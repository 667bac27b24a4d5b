// make_ckpt15m.c: writes a llama2.c legacy checkpoint of random weights in the shape of llama2.c's
// stories15M (dim 288, hidden 768, 6 layers, 6 heads, 6 kv heads, vocab 32000, seq_len 256,
// shared classifier), for `make bench-generate`: the timing of a model of a realistic size without
// downloading one. The weights are seeded (splitmix64 via tw_rng), so every run writes the same
// file: Linear weights ~ N(0, 0.02), embeddings ~ N(0, 0.02), RMSNorm gains 1. The text it
// generates is gibberish; only its speed means anything.
//
//   make_ckpt15m OUT.bin [SEED]
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"

enum { DIM = 288, HIDDEN = 768, LAYERS = 6, HEADS = 6, KV_HEADS = 6, VOCAB = 32000, SEQ = 256 };

// Writes n floats: N(0, std) from r when std > 0, else the constant `value`.
static int write_floats(FILE *f, tw_rng *r, long n, float std, float value) {
    float buf[4096];
    while (n > 0) {
        long k = n < 4096 ? n : 4096;
        if (std > 0.0f) tw_rng_fill_normal(r, buf, k, std);
        else for (long i = 0; i < k; i++) buf[i] = value;
        if (fwrite(buf, sizeof(float), (size_t)k, f) != (size_t)k) return -1;
        n -= k;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: make_ckpt15m OUT.bin [SEED]\n");
        return 2;
    }
    const char *out = argv[1];
    uint64_t seed = argc == 3 ? strtoull(argv[2], NULL, 10) : 15;
    tw_atomic_file af;   // written to OUT.tmp, renamed into place only when complete
    if (tw_atomic_open(&af, out, "wb") != TW_OK) {
        fprintf(stderr, "make_ckpt15m: %s.tmp: cannot create: %s\n", out, strerror(errno));
        return 1;
    }
    FILE *f = af.f;
    const int32_t header[7] = { DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ };   // vocab > 0: shared
    const long C = DIM, F = HIDDEN, L = LAYERS, D = DIM / HEADS, KV = KV_HEADS * (DIM / HEADS);
    tw_rng r;
    tw_rng_init(&r, seed);
    int bad = fwrite(header, sizeof header, 1, f) != 1;
    bad |= write_floats(f, &r, VOCAB * C, 0.02f, 0.0f);   // token embedding (V, C)
    bad |= write_floats(f, &r, L * C, 0.0f, 1.0f);        // rms_att gains
    bad |= write_floats(f, &r, L * C * C, 0.02f, 0.0f);   // wq
    bad |= write_floats(f, &r, L * KV * C, 0.02f, 0.0f);  // wk
    bad |= write_floats(f, &r, L * KV * C, 0.02f, 0.0f);  // wv
    bad |= write_floats(f, &r, L * C * C, 0.02f, 0.0f);   // wo
    bad |= write_floats(f, &r, L * C, 0.0f, 1.0f);        // rms_ffn gains
    bad |= write_floats(f, &r, L * F * C, 0.02f, 0.0f);   // w1
    bad |= write_floats(f, &r, L * C * F, 0.02f, 0.0f);   // w2
    bad |= write_floats(f, &r, L * F * C, 0.02f, 0.0f);   // w3
    bad |= write_floats(f, &r, C, 0.0f, 1.0f);            // rms_final gain
    // freq_cis_real / _imag (SEQ, D/2): cos and sin of p * 10000^(-2i/D), as llama2.c's exporter
    // writes them (runners recompute RoPE and skip them).
    for (int part = 0; part < 2 && !bad; part++) {
        for (long p = 0; p < SEQ && !bad; p++) {
            for (long i = 0; i < D / 2; i++) {
                double a = (double)p * pow(10000.0, -2.0 * (double)i / (double)D);
                float v = (float)(part == 0 ? cos(a) : sin(a));
                bad |= fwrite(&v, sizeof v, 1, f) != 1;
            }
        }
    }
    if (tw_atomic_commit(&af, !bad) != TW_OK) {
        fprintf(stderr, "make_ckpt15m: %s: write failed: %s\n", out, strerror(errno));
        return 1;
    }
    printf("make_ckpt15m: wrote %s (random weights, seed %llu, llama2.c 15M shape)\n", out,
           (unsigned long long)seed);
    return 0;
}
