// train_dpo.c: ./train --dpo, learning from preference pairs with direct preference optimisation
// (lib/train/dpo_step.h): each step takes --batch pairs of the pairs file (lib/train/pairs.h),
// the mean DPO loss of those pairs against a frozen reference (the --init model unless --ref; with
// --lora, the base without adapters), and AdamW on every weight (or on the adapters only).
//
//   ./train --init data/models/stories260K.bin --dpo data/pref/pairs.bin --dpo-beta 0.1
//           --batch 8 --steps 60 --lr 1e-3 --out out/dpo/model.bin   (one command line)
//
// stdout: what was set up, then one line per step:
//   step N/M loss X margin Z accuracy A lr .. gnorm .. elapsed ..
// (loss and margin: means over the step's pairs; accuracy: the share of them whose margin is > 0).
// stderr: one line per error; exit 2 for bad usage, 1 for bad data. See docs/preferences.md.
#define _POSIX_C_SOURCE 200809L   // clock_gettime
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/rng.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "formats/lora_file.h"
#include "formats/same_file.h"
#include "nn/lora_set.h"
#include "simd/simd.h"
#include "train/checkpoint.h"
#include "train/dpo_step.h"
#include "train/pairs.h"
#include "train_dpo.h"

typedef struct {
    const char *init, *pairs, *ref, *out, *merged, *simd, *lora_targets, *lora_init;
    float beta;
    tw_train_config c;   // B = pairs per step; T unused
    int no_shuffle;
    long long seed;
    int lora_r;           // --lora R (0: not given)
    int lora;             // 1 with --lora or --lora-init: adapters on a frozen --init
    int help;             // -h: print the usage and exit 0
    float lora_alpha;
} dpo_options;

static int usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "train: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (./train -h for usage; docs/preferences.md)\n");
    va_end(ap);
    return 2;
}

static int data_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "train: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

int train_dpo_wanted(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--dpo") == 0) return 1;
    return 0;
}

// A number in [lo, hi] (whole if whole is set); 0 and a message in why otherwise.
static int parse_value(double *out, const char *s, double lo, double hi, int whole) {
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || v < lo || v > hi) return 0;
    if (whole && v != floor(v)) return 0;
    if (!whole && !isfinite((float)v)) return 0;
    *out = v;
    return 1;
}

// The flags of the DPO mode. Returns 0, or the exit code of a usage error (already printed).
static int parse_dpo_args(dpo_options *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->beta = 0.1f;
    o->seed = 1;
    o->c = (tw_train_config){ 8, 0, 100, 0, 1e-3f, 1e-3f, 0.0f, 0.9f, 0.95f, 1e-8f, 1.0f };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { o->help = 1; return 0; }
        if (strcmp(a, "--no-shuffle") == 0) { o->no_shuffle = 1; continue; }
        if (a[0] != '-') return usage_error("unexpected argument '%s'", a);
        if (i + 1 >= argc) return usage_error("flag '%s' needs a value", a);
        const char *v = argv[++i];
        if (strncmp(v, "--", 2) == 0) return usage_error("flag '%s' needs a value (got the flag '%s')", a, v);
        // Flags with a path or a name.
        const char **path = !strcmp(a, "--init") ? &o->init : !strcmp(a, "--dpo") ? &o->pairs
                          : !strcmp(a, "--ref") ? &o->ref : !strcmp(a, "--out") ? &o->out
                          : !strcmp(a, "--merged") ? &o->merged : !strcmp(a, "--simd") ? &o->simd
                          : !strcmp(a, "--lora-targets") ? &o->lora_targets
                          : !strcmp(a, "--lora-init") ? &o->lora_init : NULL;
        if (path) {
            if (v[0] == '\0') return usage_error("%s: the value is empty", a);
            *path = v;
            continue;
        }
        // Numbers: the flag, its range, whole or not, and what it means.
        static const struct { const char *flag; double lo, hi; int whole; const char *why; } NUM[] = {
            { "--dpo-beta", 1e-6, 1e3, 0, "the strength of the pull toward the reference" },
            { "--batch", 1, 4096, 1, "pairs per step" },
            { "--steps", 1, 10000000, 1, "steps to train" },
            { "--warmup", 0, 10000000, 1, "linear warm-up steps" },
            { "--lr", 1e-12, 10, 0, "the learning rate" },
            { "--min-lr", 0, 10, 0, "the rate the cosine decays to" },
            { "--weight-decay", 0, 10, 0, "AdamW's decoupled decay" },
            { "--beta1", 0, 0.999999, 0, "a moving average's decay, below 1" },
            { "--beta2", 0, 0.999999, 0, "a moving average's decay, below 1" },
            { "--eps", 1e-30, 1, 0, "added to sqrt(v)" },
            { "--clip", 0, 1e30, 0, "the global-norm clip; 0 turns it off" },
            { "--seed", 0, 2e9, 1, "the shuffling and adapter seed" },
            { "--lora", 1, TW_LORA_MAX_R, 1, "the adapters' rank" },
            { "--lora-alpha", 1e-6, 1e6, 0, "the adapters' scale is alpha / r" },
        };
        int k = 0;
        const int n_num = (int)(sizeof NUM / sizeof NUM[0]);
        while (k < n_num && strcmp(a, NUM[k].flag) != 0) k++;
        if (k == n_num)
            return usage_error("%s: not a flag of the DPO mode (--dpo takes --init, --ref, --dpo-beta, --batch, "
                               "--steps, --lr, --min-lr, --warmup, --weight-decay, --beta1, --beta2, --eps, "
                               "--clip, --no-shuffle, --seed, --out, --lora, --lora-alpha, --lora-targets, "
                               "--lora-init, --merged, --simd)", a);
        double x;
        if (!parse_value(&x, v, NUM[k].lo, NUM[k].hi, NUM[k].whole))
            return usage_error("%s: '%s' must be %s from %g to %g (%s)", a, v, NUM[k].whole ? "a whole number" : "a number",
                               NUM[k].lo, NUM[k].hi, NUM[k].why);
        if (!strcmp(a, "--dpo-beta")) o->beta = (float)x;
        else if (!strcmp(a, "--batch")) o->c.B = (int)x;
        else if (!strcmp(a, "--steps")) o->c.steps = (int)x;
        else if (!strcmp(a, "--warmup")) o->c.warmup = (int)x;
        else if (!strcmp(a, "--lr")) o->c.lr = (float)x;
        else if (!strcmp(a, "--min-lr")) o->c.min_lr = (float)x;
        else if (!strcmp(a, "--weight-decay")) o->c.weight_decay = (float)x;
        else if (!strcmp(a, "--beta1")) o->c.beta1 = (float)x;
        else if (!strcmp(a, "--beta2")) o->c.beta2 = (float)x;
        else if (!strcmp(a, "--eps")) o->c.eps = (float)x;
        else if (!strcmp(a, "--clip")) o->c.clip = (float)x;
        else if (!strcmp(a, "--seed")) o->seed = (long long)x;
        else if (!strcmp(a, "--lora")) o->lora_r = (int)x;
        else o->lora_alpha = (float)x;
    }
    if (!o->init) return usage_error("--dpo: give the model to start from with --init MODEL.bin (it is also the "
                                     "default reference)");
    if (o->c.warmup > o->c.steps) return usage_error("--warmup: longer than --steps");
    if (o->lora_init && (o->lora_r || o->lora_alpha > 0.0f || o->lora_targets))
        return usage_error("--lora-init: the file sets r, alpha and the targets; give no --lora, --lora-alpha or "
                           "--lora-targets");
    o->lora = o->lora_r > 0 || o->lora_init != NULL;
    if (!o->lora && (o->lora_alpha > 0.0f || o->lora_targets || o->merged))
        return usage_error("--lora-alpha, --lora-targets and --merged need --lora R (or --lora-init FILE)");
    if (o->lora && o->ref) return usage_error("--ref with --lora: the reference is the --init model without "
                                                "adapters; drop --ref");
    // An output that is also an input would destroy it; two outputs that are one file, each other.
    const char *in[4] = { o->init, o->pairs, o->ref, o->lora_init };
    const char *in_flag[4] = { "--init", "--dpo", "--ref", "--lora-init" };
    const char *out[2] = { o->out, o->merged }, *out_flag[2] = { "--out", "--merged" };
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            if (out[i] && in[j] && tw_same_file(out[i], in[j]))
                return usage_error("%s %s is the same file as %s %s: writing it would destroy that input; give "
                                   "another path", out_flag[i], out[i], in_flag[j], in[j]);
    if (o->out && o->merged && tw_same_file(o->out, o->merged))
        return usage_error("--out and --merged are the same file; give two paths");
    return 0;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// The pairs of step s: position k = s*B + r of the run, wrapping around the n pairs. In file order
// with --no-shuffle; otherwise in a fresh seeded permutation of the n pairs for each pass (epoch).
static void step_pairs(long *idx, long *perm, long *perm_epoch, long n, long s, int B, int shuffle, uint64_t seed) {
    for (int r = 0; r < B; r++) {
        const long k = s * B + r, epoch = k / n;
        if (!shuffle) { idx[r] = k % n; continue; }
        if (*perm_epoch != epoch) {   // Fisher-Yates with a generator seeded by (seed, epoch)
            tw_rng g;
            tw_rng_init(&g, seed * 1000003u + (uint64_t)epoch);
            for (long i = 0; i < n; i++) perm[i] = i;
            for (long i = n - 1; i > 0; i--) {
                const long j = (long)(tw_rng_next(&g) % (uint64_t)(i + 1));
                const long t = perm[i]; perm[i] = perm[j]; perm[j] = t;
            }
            *perm_epoch = epoch;
        }
        idx[r] = perm[k % n];
    }
}

static int save_model(const char *flag, const char *path, const tw_model *m) {
    char err[512];
    tw_status st = tw_llama2c_can_write(m, NULL, 0) ? tw_llama2c_write(path, m, err, sizeof err)
                                                   : tw_checkpoint_write(path, m, err, sizeof err);
    if (st != TW_OK) return data_error("%s %s", flag, err);
    printf("train: wrote %s\n", path);
    return 0;
}

// The adapters: from --lora-init, or fresh (A seeded, B zero); merged into m.
static int setup_lora(tw_lora_set *ad, tw_model *m, const tw_model *base, const dpo_options *o) {
    char err[512] = "";
    if (o->lora_init) {
        if (tw_lora_file_load(ad, o->lora_init, &base->cfg, err, sizeof err) != TW_OK)
            return data_error("--lora-init %s", err);
        if (tw_lora_refresh(m, base, ad) != TW_OK) return data_error("--lora-init %s: does not fit the model", o->lora_init);
        return 0;
    }
    int targets[TW_LORA_N_KINDS], n_targets = 0;
    if (tw_lora_targets_parse(targets, &n_targets, o->lora_targets ? o->lora_targets : "wq,wv", err, sizeof err) != TW_OK)
        return usage_error("--lora-targets: %s", err);
    const float alpha = o->lora_alpha > 0.0f ? o->lora_alpha : (float)o->lora_r;
    const tw_status st = tw_lora_set_init(ad, &base->cfg, o->lora_r, alpha, targets, n_targets);
    if (st == TW_ERR_SHAPE) return usage_error("--lora-targets: the --init model has no w3; choose from wq,wk,wv,wo,w1,w2");
    if (st != TW_OK) return data_error("out of memory for the adapters");
    tw_lora_set_randomize(ad, (uint64_t)o->seed);
    if (tw_lora_refresh(m, base, ad) != TW_OK) return data_error("--init %s: the adapters do not fit the model", o->init);
    return 0;
}

typedef struct {
    tw_model m, base, ref;
    tw_lora_set ad;
    tw_lora_trainer lt;
    tw_trainer t;
    tw_dpo_scratch d;
    tw_pairs pairs;
    double *ref_logp;
    long *idx, *perm;
} dpo_run;

static void dpo_run_free(dpo_run *r) {
    tw_model_free(&r->m);
    tw_model_free(&r->base);
    tw_model_free(&r->ref);
    tw_lora_set_free(&r->ad);
    tw_lora_trainer_free(&r->lt);
    tw_trainer_free(&r->t);
    tw_dpo_scratch_free(&r->d);
    tw_pairs_free(&r->pairs);
    free(r->ref_logp);
    free(r->idx);
    free(r->perm);
}

// Loads the models and pairs, and the reference's log-probabilities. 0 or an exit code.
static int setup(dpo_run *r, const dpo_options *o) {
    char err[512] = "";
    if (tw_model_load_file(&r->m, o->init, err, sizeof err) != TW_OK) return data_error("--init %s", err);
    const tw_model *ref = &r->m;   // the --init weights, before any step: no copy needed
    if (o->ref) {
        if (tw_model_load_file(&r->ref, o->ref, err, sizeof err) != TW_OK) return data_error("--ref %s", err);
        if (r->ref.cfg.vocab != r->m.cfg.vocab)
            return data_error("--ref %s: its vocabulary has %d tokens, the --init model's %d: the two must score the "
                              "same tokens", o->ref, r->ref.cfg.vocab, r->m.cfg.vocab);
        ref = &r->ref;
    }
    int max_seq = r->m.cfg.max_seq;
    if (o->ref && r->ref.cfg.max_seq < max_seq) max_seq = r->ref.cfg.max_seq;
    if (tw_pairs_read(&r->pairs, o->pairs, r->m.cfg.vocab, max_seq, err, sizeof err) != TW_OK)
        return data_error("--dpo %s", err);
    int T_max = 1;
    for (long i = 0; i < r->pairs.n; i++)
        for (int k = 1; k < 3; k++) {
            const int T = r->pairs.len[3 * i] + r->pairs.len[3 * i + k] - 1;
            if (T > T_max) T_max = T;
        }
    r->ref_logp = malloc((size_t)r->pairs.n * 2 * sizeof *r->ref_logp);
    r->idx = malloc((size_t)o->c.B * sizeof *r->idx);
    r->perm = malloc((size_t)r->pairs.n * sizeof *r->perm);
    if (!r->ref_logp || !r->idx || !r->perm || tw_dpo_scratch_init(&r->d, &r->m, T_max) != TW_OK ||
        tw_trainer_init(&r->t, &r->m, T_max) != TW_OK)
        return data_error("out of memory for %ld pairs of up to %d positions", r->pairs.n, T_max);
    // The LoRA reference is the base without adapters, which is m before the adapters are merged.
    if (tw_dpo_reference(r->ref_logp, &r->d, ref, &r->pairs) != TW_OK)
        return data_error("--dpo %s: the reference could not score the pairs", o->pairs);
    if (o->lora) {
        if (tw_model_load_file(&r->base, o->init, err, sizeof err) != TW_OK) return data_error("--init %s", err);
        const int rc = setup_lora(&r->ad, &r->m, &r->base, o);
        if (rc) return rc;
        if (tw_lora_trainer_init(&r->lt, &r->ad, &r->m.cfg) != TW_OK) return data_error("out of memory for the adapters");
    }
    return 0;
}

int train_dpo_main(int argc, char **argv) {
    dpo_options o;
    int rc = parse_dpo_args(&o, argc, argv);
    if (rc) return rc;
    if (o.help) {
        printf("usage: ./train --init MODEL.bin --dpo PAIRS.bin [--dpo-beta B (0.1)] [--ref REF.bin] [--batch PAIRS (8)]\n"
               "         [--steps N (100)] [--lr LR --min-lr LR --warmup W --weight-decay WD --beta1 B1 --beta2 B2\n"
               "         --eps E --clip C] [--no-shuffle] [--seed S] [--out OUT.bin] [--simd LEVEL]\n"
               "         [--lora R [--lora-alpha A] [--lora-targets LIST] | --lora-init FILE] [--merged FILE.bin]\n"
               "example: ./train --init data/models/stories260K.bin --dpo data/pref/pairs.bin --dpo-beta 0.5 --steps 20\n"
               "         --lr 2e-4 --out out/dpo/model.bin        (docs/preferences.md; make pref-data writes the pairs)\n");
        return 0;
    }
    const char *level = tw_simd_init(o.simd);
    if (level == NULL) return usage_error("--simd: level '%s' is not available here", o.simd);
    dpo_run r;
    memset(&r, 0, sizeof r);
    rc = setup(&r, &o);
    if (rc) { dpo_run_free(&r); return rc; }
    printf("train: DPO on %s: %ld pairs, --dpo-beta %g, %d pairs a step, %s; reference %s (frozen: its log-probabilities "
           "computed once)\n", o.pairs, r.pairs.n, (double)o.beta, o.c.B, o.no_shuffle ? "file order" : "shuffled",
           o.ref ? o.ref : o.lora ? "the --init model without adapters" : "the --init model");
    if (o.lora)
        printf("train: LoRA r %d, alpha %g: %ld trainable parameters\n", r.ad.r, (double)r.ad.alpha, r.ad.n_floats);
    printf("train: %s kernels; a pair's loss starts at ln 2 = 0.6931 when the policy is the reference\n", level);
    fflush(stdout);
    const double t0 = now_seconds();
    const clock_t c0 = clock();   // CPU time: on a shared machine the wall clock also counts waiting
    long perm_epoch = -1;
    for (long s = 0; s < o.c.steps && rc == 0; s++) {
        step_pairs(r.idx, r.perm, &perm_epoch, r.pairs.n, s, o.c.B, !o.no_shuffle, (uint64_t)o.seed);
        tw_dpo_stats st;
        const tw_status status = o.lora
            ? tw_dpo_lora_train_step(&st, &r.lt, &r.t, &r.d, &r.m, &r.base, &r.ad, &r.pairs, r.idx, o.c.B, r.ref_logp,
                                     o.beta, &o.c)
            : tw_dpo_train_step(&st, &r.t, &r.d, &r.m, &r.pairs, r.idx, o.c.B, r.ref_logp, o.beta, &o.c);
        if (status == TW_ERR_ARG) {
            rc = data_error("step %ld: the loss is %g and the gradient norm %g: not finite; stopped, nothing written "
                            "(lower --lr or --dpo-beta)", s + 1, (double)st.loss, (double)st.gnorm);
            break;
        }
        if (status != TW_OK) { rc = data_error("step %ld failed: %s", s + 1, tw_status_str(status)); break; }
        printf("step %ld/%d loss %.6g margin %.6g accuracy %.6g lr %.3e gnorm %.6g elapsed %.1fs\n", s + 1, o.c.steps,
               (double)st.loss, (double)st.margin, (double)st.accuracy, (double)st.lr, (double)st.gnorm,
               now_seconds() - t0);
        fflush(stdout);
    }
    if (rc == 0)
        printf("train: %d steps in %.1f s wall, %.1f s of CPU time\n", o.c.steps, now_seconds() - t0,
               (double)(clock() - c0) / CLOCKS_PER_SEC);
    if (rc == 0 && o.out) {
        if (o.lora) {
            char err[512];
            if (tw_lora_file_write(o.out, &r.ad, err, sizeof err) != TW_OK) rc = data_error("--out %s", err);
            else printf("train: wrote %s (LoRA adapters)\n", o.out);
        } else {
            rc = save_model("--out", o.out, &r.m);
        }
    }
    if (rc == 0 && o.merged) rc = save_model("--merged", o.merged, &r.m);   // base + adapters
    dpo_run_free(&r);
    return rc;
}
