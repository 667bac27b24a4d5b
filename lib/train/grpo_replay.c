// grpo_replay.c: the samples of a GRPO run in four .npy files (see grpo_replay.h).
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "train/grpo_replay.h"

static tw_status read_one(tw_npy *a, const char *dir, const char *name, tw_npy_dtype dtype,
                          char *err, size_t err_len) {
    char path[4200], why[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    tw_status st = tw_npy_read(a, path, why, sizeof why);
    if (st != TW_OK) {
        snprintf(err, err_len, "%s: %s", path, why[0] ? why : tw_status_str(st));
        return st == TW_ERR_IO ? TW_ERR_IO : TW_ERR_FORMAT;
    }
    if (a->dtype != dtype) {
        snprintf(err, err_len, "%s: holds %s, expected %s", path, a->dtype == TW_NPY_F32 ? "float32" : "int32",
                 dtype == TW_NPY_F32 ? "float32" : "int32");
        return TW_ERR_FORMAT;
    }
    return TW_OK;
}

// The checks of grpo_replay.h once the four arrays are read.
static tw_status check(const tw_grpo_replay *r, const char *dir, int n, int V, int max_seq,
                       char *err, size_t err_len) {
    const tw_npy *tk = &r->tokens;
    if (tk->ndim != 3 || tk->shape[1] != n) {
        snprintf(err, err_len, "%s/tokens.npy: shape must be (steps, %d, T) for %d samples a step", dir, n, n);
        return TW_ERR_FORMAT;
    }
    const long steps = tk->shape[0], T = tk->shape[2];
    if (steps < 1 || T < 2 || T > max_seq) {
        snprintf(err, err_len, "%s/tokens.npy: %ld steps of sequences of %ld tokens; needs >= 1 step and 2 .. %d tokens "
                 "(the model's context)", dir, steps, T, max_seq);
        return TW_ERR_FORMAT;
    }
    const tw_npy *two[] = { &r->prompt_len, &r->len, &r->rewards };
    const char *names[] = { "prompt_len.npy", "len.npy", "rewards.npy" };
    for (int k = 0; k < 3; k++)
        if (two[k]->ndim != 2 || two[k]->shape[0] != steps || two[k]->shape[1] != n) {
            snprintf(err, err_len, "%s/%s: shape must be (%ld, %d), tokens.npy's first two", dir, names[k], steps, n);
            return TW_ERR_FORMAT;
        }
    const int32_t *t = tk->data, *pl = r->prompt_len.data, *ln = r->len.data;
    const float *rw = r->rewards.data;
    for (long i = 0; i < steps * n; i++) {
        if (pl[i] < 1 || pl[i] >= ln[i] || ln[i] > T) {
            snprintf(err, err_len, "%s: sample %ld: prompt length %d and length %d must satisfy 1 <= prompt < length <= %ld",
                     dir, i, (int)pl[i], (int)ln[i], T);
            return TW_ERR_FORMAT;
        }
        if (!isfinite(rw[i])) {
            snprintf(err, err_len, "%s/rewards.npy: reward %ld is not finite", dir, i);
            return TW_ERR_FORMAT;
        }
        for (long j = 0; j < ln[i]; j++)
            if (t[i * T + j] < 0 || t[i * T + j] >= V) {
                snprintf(err, err_len, "%s/tokens.npy: sample %ld has token %d, outside the model's vocabulary of %d",
                         dir, i, (int)t[i * T + j], V);
                return TW_ERR_FORMAT;
            }
    }
    return TW_OK;
}

tw_status tw_grpo_replay_read(tw_grpo_replay *r, const char *dir, int n, int V, int max_seq,
                              char *err, size_t err_len) {
    memset(r, 0, sizeof *r);
    tw_status st = read_one(&r->tokens, dir, "tokens.npy", TW_NPY_I32, err, err_len);
    if (st == TW_OK) st = read_one(&r->prompt_len, dir, "prompt_len.npy", TW_NPY_I32, err, err_len);
    if (st == TW_OK) st = read_one(&r->len, dir, "len.npy", TW_NPY_I32, err, err_len);
    if (st == TW_OK) st = read_one(&r->rewards, dir, "rewards.npy", TW_NPY_F32, err, err_len);
    if (st == TW_OK) st = check(r, dir, n, V, max_seq, err, err_len);
    if (st != TW_OK) { tw_grpo_replay_free(r); return st; }
    r->steps = r->tokens.shape[0];
    r->n = n;
    r->T_max = (int)r->tokens.shape[2];
    return TW_OK;
}

void tw_grpo_replay_free(tw_grpo_replay *r) {
    tw_npy_free(&r->tokens);
    tw_npy_free(&r->prompt_len);
    tw_npy_free(&r->len);
    tw_npy_free(&r->rewards);
    memset(r, 0, sizeof *r);
}

tw_grpo_batch tw_grpo_replay_batch(const tw_grpo_replay *r, long s) {
    const tw_grpo_batch b = { r->n, r->T_max, (int *)r->tokens.data + (size_t)s * r->n * r->T_max,
                              (int *)r->prompt_len.data + (size_t)s * r->n, (int *)r->len.data + (size_t)s * r->n,
                              (float *)r->rewards.data + (size_t)s * r->n };
    return b;
}
