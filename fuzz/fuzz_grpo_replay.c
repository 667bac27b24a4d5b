// fuzz_grpo_replay.c: libFuzzer target for the --grpo-replay folder reader (tw_grpo_replay_read,
// lib/train/grpo_replay.c). The input: three uint16 sizes (little-endian) of tokens.npy,
// prompt_len.npy and len.npy, one byte n (samples a step, 1 .. 8), then the four files' bytes,
// rewards.npy taking the rest; they are written into a private temporary folder. The reader must
// either refuse with one line naming the folder and nothing allocated, or accept a set that
// keeps every promise of grpo_replay.h: then every sample of every step is walked (a length past
// the row shows up under ASan) and checked against the bounds here.
#define _POSIX_C_SOURCE 200809L   // mkdtemp
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "train/grpo_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[256];
static const char *const NAMES[4] = { "tokens.npy", "prompt_len.npy", "len.npy", "rewards.npy" };

static void remove_dir(void) {
    char path[320];
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, NAMES[k]);
        unlink(path);
    }
    rmdir(dir);
}

static void write_part(int k, const uint8_t *p, size_t n) {
    char path[320];
    snprintf(path, sizeof path, "%s/%s", dir, NAMES[k]);
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0) { perror("fuzz: writing a replay file"); abort(); }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 7) return 0;
    if (!dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/tw_fuzz_replay_XXXXXX", t && t[0] ? t : "/tmp");
        if (!mkdtemp(dir)) { perror("fuzz: mkdtemp"); abort(); }
        atexit(remove_dir);
    }
    size_t len[4] = { data[0] | (size_t)data[1] << 8, data[2] | (size_t)data[3] << 8, data[4] | (size_t)data[5] << 8, 0 };
    const int n = data[6] % 8 + 1;
    const uint8_t *p = data + 7;
    size_t left = size - 7;
    for (int k = 0; k < 4; k++) {
        const size_t take = k == 3 || len[k] > left ? left : len[k];
        write_part(k, p, take);
        p += take;
        left -= take;
    }
    const int V = 65, max_seq = 16;
    tw_grpo_replay r;
    char err[512] = "";
    const tw_status st = tw_grpo_replay_read(&r, dir, n, V, max_seq, err, sizeof err);
    if (st != TW_OK) {
        if (r.tokens.data || r.rewards.data || err[0] == '\0' || strchr(err, '\n') || !strstr(err, dir)) abort();
        return 0;
    }
    if (r.n != n || r.steps < 1 || r.T_max < 2 || r.T_max > max_seq) abort();
    for (long s = 0; s < r.steps; s++) {
        const tw_grpo_batch b = tw_grpo_replay_batch(&r, s);
        for (int i = 0; i < b.n; i++) {
            if (b.prompt_len[i] < 1 || b.prompt_len[i] >= b.len[i] || b.len[i] > b.T_max || !isfinite(b.rewards[i])) abort();
            for (int t = 0; t < b.len[i]; t++)
                if (b.tokens[(size_t)i * b.T_max + t] < 0 || b.tokens[(size_t)i * b.T_max + t] >= V) abort();
        }
    }
    tw_grpo_replay_free(&r);
    return 0;
}
