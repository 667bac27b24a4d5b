// train.c: ./train, a language model that learns on one CPU core, with the flags of llama2.c's
// train.py and nanoGPT. See docs/training.md; the deterministic mode is reproduced in PyTorch by
// tests/golden/gen_train.py.
//
//   make stories train
//   ./train --tokens data/stories/train.bin --val data/stories/val.bin -z data/models/tok512.bin
//           --style llama --dim 64 --layers 4 --heads 4 --kv-heads 4 --hidden 172 --seq 64
//           --batch 8 --steps 400 --lr 3e-3 --min-lr 3e-4 --warmup 20 --out out/train/model.bin
//   (one command line; see docs/training.md for the flags)
//
// stdout: what was set up (sizes, token counts; printed once every input and output has been
// checked), one line per step (`step N/M loss X lr .. gnorm .. tok/s .. elapsed ..`), validation
// lines, samples. stderr: errors, one line each, exit 1 for bad data, 2 for bad usage; every
// flag, input and output path is checked before anything is trained or written.
#define _POSIX_C_SOURCE 200809L   // clock_gettime, sigaction, sysconf, mkdir
#include <errno.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "nn/model.h"
#include "nn/long_context.h"
#include "formats/hf_rope_scaling.h"
#include "train/step.h"
#include "train/parallel.h"
#include "train/loss.h"
#include "formats/atomic_file.h"
#include "formats/regular_file.h"
#include "formats/same_file.h"
#include "inspect/gnuplot.h"
#include "train/batches.h"
#include "inspect/check_finite.h"
#include "train/checkpoint.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "decode/sampler.h"
#include "tokenize/tokenizer.h"
#include "train/tokens.h"
#include "train/lora_step.h"
#include "train/mask.h"
#include "train/distill.h"
#include "formats/lora_file.h"
#include "simd/simd.h"
#include "train/dist.h"
#include "train/moe_file.h"
#include "train/expert_counts.h"
#include "comm.h"
#include "train_dpo.h"

static void usage(FILE *f) {
    fprintf(f,
        "usage: ./train (--tokens FILE.bin | --text FILE.txt -z TOK.bin) [options]\n"
        "model (from scratch unless --init or --resume):\n"
        "  --init FILE.bin      start from a checkpoint (llama2.c's format or ours): fine-tuning\n"
        "  --resume STATE       continue a saved training state exactly (weights, AdamW, step, data, RNG)\n"
        "  --style NAME         2017, gpt2, llama or qwen3 (default llama), with its preset sizes unless:\n"
        "  --dim C --layers L --heads H --kv-heads G --head-dim D --hidden F --vocab V (default 512)\n"
        "  --seed N             initialisation and shuffling seed (default 1)\n"
        "data:\n"
        "  --tokens FILE.bin    little-endian uint16 tokens (llama2.c's pretokenised shards)\n"
        "  --text FILE.txt      UTF-8 text, one document per line, encoded with -z\n"
        "  -z TOK.bin           a llama2.c tokenizer (for --text, and to print samples)\n"
        "  --mask FILE.bin      supervised fine-tuning: one byte per --tokens token, 1 where it counts as a\n"
        "                       target; the loss is the mean over a step's counted targets\n"
        "  --val FILE.bin       validation tokens; else the last --val-frac of the data (default 0.1,\n"
        "                       0 with --no-shuffle, which trains on the whole file)\n"
        "  --floor FILE         the teacher's floor (default: floor.txt beside --tokens, if any)\n"
        "optimisation:\n"
        "  --batch B --seq T --steps N     (defaults 8, 64, 200)\n"
        "  --lr LR --min-lr LR --warmup W  warm-up then cosine decay to min-lr over N steps\n"
        "                                  (defaults 1e-3, 1e-4, 0; equal lr and min-lr: constant)\n"
        "  --weight-decay WD --beta1 B1 --beta2 B2 --eps E   AdamW (0.1, 0.9, 0.95, 1e-8)\n"
        "  --clip NORM          clip the global gradient norm (default 1; 0: off)\n"
        "  --no-shuffle         batches in file order: row r of step s starts at ((s*B + r)*T) mod (n - T)\n"
        "output:\n"
        "  --out FILE.bin       final weights (llama2.c's format for llama-shaped models, else ours)\n"
        "  --state FILE         training state, written with --out at every --save-every and at the end\n"
        "  --save-every N       (default 0: only at the end)   --stop-after K: stop after K steps of this run\n"
        "  --eval-every N       validation loss every N steps (default 50; and at the end)\n"
        "  --eval-batches K     validation batches per evaluation (default 8)\n"
        "  --sample-every N     print a sample every N steps (needs -z; default 100; 0: off)\n"
        "  --curve FILE.dat     the loss curve (default: beside --out, OUT.loss.dat, so a second run\n"
        "                       with another --out keeps the first curve; without --out\n"
        "                       out/train/loss.dat; a PNG beside it with gnuplot; none: no curve)\n"
        "LoRA (fine-tune adapters on a frozen --init model; docs/training.md):\n"
        "  --lora R             rank of the adapters (1 .. 64); --out then writes the adapters file\n"
        "  --lora-alpha A       their scale is A / R (default A = R)\n"
        "  --lora-targets LIST  any of wq,wk,wv,wo,w1,w2,w3 (default wq,wv)\n"
        "  --lora-init FILE     start from this adapters file (its R, alpha and targets) instead of fresh ones\n"
        "  --merged FILE.bin    also write base + adapters merged, as a checkpoint ./generate loads\n"
        "distillation (docs/training.md):\n"
        "  --teacher FILE.bin   learn from this model's logits too (same vocabulary; no gradient)\n"
        "  --distill-alpha a    loss = a tau^2 KL(teacher_tau || student_tau) + (1 - a) CE (default 0.5)\n"
        "  --distill-temp tau   the temperature of both softmaxes in the KL term (default 2)\n"
        "  --simd LEVEL         naive, avx2, avx512, neon or auto\n"
        "  --attn KIND          attention: full (default: keeps the (T, T) scores and pattern of every\n"
        "                       head and layer) or flash (tiled, online softmax, memory linear in T)\n"
        "  --rope-scaling KIND  none (default), linear, ntk or yarn: train past the model's context\n"
        "  --rope-factor F      (>= 1, default 2) --seq may then reach F x the trained context\n"
        "  --rope-original L    the trained context (default: the model's max_seq); not stored in\n"
        "                       the output, give the same flags to ./generate\n"
        "  --rope-config FILE   the scaling of a Hugging Face config.json's \"rope_scaling\" field\n"
        "                       (instead of --rope-scaling; formats/hf_rope_scaling.h)\n"
        "  --threads N          split each batch into N parts trained on N OpenMP threads, AdamW\n"
        "                       shared among them (default 1; 0: OMP_NUM_THREADS, else every core).\n"
        "                       Needs `make OMP=1 BUILD=build-omp train`; without OpenMP the N parts run\n"
        "                       one after another. Results for N and 1 agree to float rounding (the\n"
        "                       parts' gradients are summed separately); the same N gives the same bits\n"
        "data parallel (./train-mpi under mpirun -np P; docs/training.md):\n"
        "  --grad-accum K       K micro-batches of --batch rows per process and step: the global batch\n"
        "                       is batch x P x K rows, each micro-batch's gradient summed exactly, in order\n"
        "  --zero 1             ZeRO-1: AdamW's moments sharded across the P processes (default 0)\n"
        "  --overlap 0          send each layer's gradients only after the whole backward pass\n"
        "                       (default 1: as soon as the backward pass has finished the layer)\n"
        "  --nan-at P:S         (for tests) process P's gradient becomes NaN at step S\n"
        "mixture of experts (docs/moe-models.md):\n"
        "  --init-moe E,K[,S]   from scratch, each block's FFN is E SwiGLU experts of width --hidden, K\n"
        "                       chosen per token, and S shared experts (default 0); --style llama or qwen3;\n"
        "                       --out writes a TWMX file. --init loads one (./generate runs it)\n"
        "  --moe-norm-topk 0|1  1: the K gate weights renormalised to sum to 1 (default; Mixtral, Qwen3)\n"
        "  --init-mla Q,R,N,P,V from scratch, each block's attention is multi-head latent attention\n"
        "                       (docs/moe-models.md) with q_lora_rank Q, kv_lora_rank R, qk_nope_head_dim N,\n"
        "                       qk_rope_head_dim P (even), v_head_dim V; --style llama; with --init-moe too:\n"
        "                       DeepSeek-V3's arrangement. --out writes a TWMX file\n"
        "  --aux-coef A         weight of the load-balancing loss E sum_i f_i P_i of each layer (default\n"
        "                       0.01; 0: off). Per-expert token counts are printed with every --eval-every\n"
        "preferences (DPO; docs/preferences.md):\n"
        "  --dpo PAIRS.bin      learn from preference pairs (with --init; --batch = pairs per step)\n"
        "  --dpo-beta B         the pull toward the reference (default 0.1)   --ref REF.bin: the\n"
        "                       reference (default: the --init model; with --lora, it without adapters)\n");
}

// 0 on processes other than 0 of a data-parallel run: they parse the same flags and read the
// same files, so they fail alike, and only process 0 says why.
static int print_errors = 1;

// Bad usage: one line, exit 2.
static void die_usage(const char *fmt, ...) {
    if (!print_errors) exit(2);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "train: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (./train -h for usage)\n");
    va_end(ap);
    exit(2);
}

// Bad data: one line, exit 1.
static void die_data(const char *fmt, ...) {
    if (!print_errors) exit(1);
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "train: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

// --rope-config FILE: the scaling in a config.json's "rope_scaling" field, read as the flag is
// parsed (a bad file stops before any data is read).
static void read_rope_config(tw_rope_scaling *sc, const char *path) {
    char err[512];
    if (tw_hf_rope_scaling_read_file(sc, path, err, sizeof err) != TW_OK) die_data("--rope-config %s", err);
}

typedef struct {
    const char *init, *resume, *style, *tokens, *text, *tokenizer, *val, *floor, *out, *state,
               *curve, *simd;
    int dim, layers, heads, kv_heads, head_dim, hidden, vocab;
    long long seed;
    tw_train_config c;
    int no_shuffle;
    double val_frac;
    int val_frac_given;
    long save_every, stop_after, eval_every, eval_batches, sample_every;
    int threads;          // 0: OpenMP's default
    int grad_accum, zero; // data parallel (train/dist.h): micro-batches per process, ZeRO stage
    int overlap;          // 1: send each layer's bucket as soon as the backward pass finishes it
    long nan_rank, nan_step;
    int flash;            // --attn flash: tiled attention (nn/sdpa_tiled.h)
    int rope_kind;        // --rope-scaling (tw_rope_scaling_kind)
    float rope_factor;    // --rope-factor
    int rope_original;    // --rope-original, 0: the model's max_seq
    const char *rope_config;   // --rope-config FILE, or NULL
    tw_rope_scaling rope_sc;   // its "rope_scaling" field, read when the flag is parsed
    int lora_r;           // 0: no LoRA (full training)
    float lora_alpha;     // 0: the default, alpha = r
    const char *lora_targets, *lora_init, *merged;
    const char *mask;     // --mask FILE.bin, or NULL: every target counts
    const char *teacher;  // --teacher FILE.bin, or NULL: no distillation
    float distill_alpha, distill_temp;
    int moe_E, moe_k, moe_shared;   // --init-moe E,K[,S]; moe_E 0: a dense model
    int mla[5];                     // --init-mla Q,R,N,P,V; mla[1] 0: mha.h's attention
    int moe_norm_topk;              // --moe-norm-topk, -1: unset (1)
    float aux_coef;                 // --aux-coef, -1: unset (0.01 for a model with experts)
} options;

// The most steps one run may schedule: the loss curve keeps two floats per step in memory.
#define MAX_STEPS 10000000L

static double parse_num(const char *flag, const char *s) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v)) die_usage("%s: '%s' is not a number", flag, s);
    return v;
}

// A whole number in [lo, hi].
static long parse_count(const char *flag, const char *s, long lo, long hi) {
    double v = parse_num(flag, s);
    if (v != floor(v) || v < lo || v > hi)
        die_usage("%s: '%s' must be a whole number from %ld to %ld", flag, s, lo, hi);
    return (long)v;
}

// A float (the value the trainer will use, after rounding to float) in [lo, hi], or (lo, hi]
// when lo_open: a value that becomes inf (or 0, when lo_open) as a float is refused here, not
// found as NaN weights after training. why says what the range means.
static float parse_float(const char *flag, const char *s, double lo, int lo_open, double hi, const char *why) {
    const double d = parse_num(flag, s);
    const float v = (float)d;
    if (!isfinite(v)) die_usage("%s: '%s' overflows a float (largest %g)", flag, s, (double)FLT_MAX);
    if ((lo_open ? !(v > lo) : !(v >= lo)) || !(v <= hi))
        die_usage("%s: '%s' must be in %c%g, %g] as a float (%s)", flag, s, lo_open ? '(' : '[', lo, hi, why);
    return v;
}

// A path flag's value: never empty.
static const char *parse_path(const char *flag, const char *v) {
    if (v[0] == '\0') die_usage("%s: the path is empty", flag);
    return v;
}

static options parse_args(int argc, char **argv) {
    options o;
    memset(&o, 0, sizeof o);
    o.style = "llama";
    o.vocab = 512;
    o.seed = 1;
    o.c = (tw_train_config){ 8, 64, 200, 0, 1e-3f, 1e-4f, 0.1f, 0.9f, 0.95f, 1e-8f, 1.0f };
    o.eval_every = 50;
    o.eval_batches = 8;
    o.sample_every = 100;
    o.threads = 1;
    o.grad_accum = 1;
    o.overlap = 1;
    o.nan_rank = o.nan_step = -1;
    o.rope_factor = 2.0f;
    o.distill_alpha = -1.0f;   // unset: 0.5 with --teacher
    o.distill_temp = -1.0f;    // unset: 2 with --teacher
    o.moe_norm_topk = -1;
    o.aux_coef = -1.0f;
    const long DIM = TW_LLAMA2C_MAX_DIM;   // the llama2.c loader's limits (formats/llama2c.h)
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { usage(stdout); exit(0); }
        if (strcmp(a, "--no-shuffle") == 0) { o.no_shuffle = 1; continue; }
        if (a[0] != '-') die_usage("unexpected argument '%s'", a);
        if (i + 1 >= argc) die_usage("flag '%s' needs a value", a);
        const char *v = argv[++i];
        // "--out --no-shuffle": the value is missing, not a file named --no-shuffle. (A single
        // dash may start a number: --seed -1 is answered by the range check.)
        if (strncmp(v, "--", 2) == 0) die_usage("flag '%s' needs a value (got the flag '%s')", a, v);
        if      (!strcmp(a, "--init"))   o.init = parse_path(a, v);
        else if (!strcmp(a, "--resume")) o.resume = parse_path(a, v);
        else if (!strcmp(a, "--style"))  o.style = v;
        else if (!strcmp(a, "--tokens")) o.tokens = parse_path(a, v);
        else if (!strcmp(a, "--text"))   o.text = parse_path(a, v);
        else if (!strcmp(a, "-z"))       o.tokenizer = parse_path(a, v);
        else if (!strcmp(a, "--val"))    o.val = parse_path(a, v);
        else if (!strcmp(a, "--floor"))  o.floor = parse_path(a, v);
        else if (!strcmp(a, "--out"))    o.out = parse_path(a, v);
        else if (!strcmp(a, "--state"))  o.state = parse_path(a, v);
        else if (!strcmp(a, "--curve"))  o.curve = parse_path(a, v);
        else if (!strcmp(a, "--simd"))   o.simd = v;
        else if (!strcmp(a, "--attn")) {
            if (strcmp(v, "full") != 0 && strcmp(v, "flash") != 0)
                die_usage("--attn: '%s' is not an attention kind: use full or flash", v);
            o.flash = strcmp(v, "flash") == 0;
        }
        else if (!strcmp(a, "--rope-scaling")) {
            o.rope_kind = tw_rope_scaling_from_name(v);
            if (o.rope_kind < 0) die_usage("--rope-scaling: '%s' is not a scaling: use none, linear, ntk or yarn", v);
        }
        else if (!strcmp(a, "--rope-factor")) {
            o.rope_factor = (float)parse_num(a, v);
            if (!(o.rope_factor >= 1.0f) || !isfinite(o.rope_factor)) die_usage("--rope-factor: %s is not a factor >= 1", v);
        }
        else if (!strcmp(a, "--rope-original")) o.rope_original = (int)parse_count(a, v, 1, TW_LLAMA2C_MAX_SEQ);
        else if (!strcmp(a, "--rope-config")) { o.rope_config = v; read_rope_config(&o.rope_sc, v); }
        else if (!strcmp(a, "--dim"))      o.dim = (int)parse_count(a, v, 1, DIM);
        else if (!strcmp(a, "--layers"))   o.layers = (int)parse_count(a, v, 1, TW_LLAMA2C_MAX_LAYERS);
        else if (!strcmp(a, "--heads"))    o.heads = (int)parse_count(a, v, 1, DIM);
        else if (!strcmp(a, "--kv-heads")) o.kv_heads = (int)parse_count(a, v, 1, DIM);
        else if (!strcmp(a, "--head-dim")) o.head_dim = (int)parse_count(a, v, 1, DIM);
        else if (!strcmp(a, "--hidden"))   o.hidden = (int)parse_count(a, v, 1, 16 * DIM);
        else if (!strcmp(a, "--vocab"))    o.vocab = (int)parse_count(a, v, 3, TW_LLAMA2C_MAX_VOCAB);
        else if (!strcmp(a, "--seed"))     o.seed = parse_count(a, v, 0, 2000000000L);
        else if (!strcmp(a, "--batch"))    o.c.B = (int)parse_count(a, v, 1, TW_TRAIN_STATE_MAX_BATCH);
        else if (!strcmp(a, "--seq"))      o.c.T = (int)parse_count(a, v, 1, TW_LLAMA2C_MAX_SEQ);
        else if (!strcmp(a, "--steps"))    o.c.steps = (int)parse_count(a, v, 1, MAX_STEPS);
        else if (!strcmp(a, "--warmup"))   o.c.warmup = (int)parse_count(a, v, 0, MAX_STEPS);
        else if (!strcmp(a, "--lr"))
            o.c.lr = parse_float(a, v, 0.0, 1, FLT_MAX, "0 would never change the weights");
        else if (!strcmp(a, "--min-lr"))
            o.c.min_lr = parse_float(a, v, 0.0, 0, FLT_MAX, "the rate the cosine decays to");
        else if (!strcmp(a, "--weight-decay"))
            o.c.weight_decay = parse_float(a, v, 0.0, 0, 10.0, "each step shrinks a weight by lr * wd of itself");
        else if (!strcmp(a, "--beta1") || !strcmp(a, "--beta2")) {
            const float b = parse_float(a, v, 0.0, 0, 1.0, "a moving average's decay, below 1");
            if (b == 1.0f) die_usage("%s: '%s' is 1 as a float: a moving average's decay must be below 1", a, v);
            if (a[6] == '1') o.c.beta1 = b; else o.c.beta2 = b;
        }
        else if (!strcmp(a, "--eps"))
            o.c.eps = parse_float(a, v, 0.0, 1, 1.0, "added to sqrt(v): larger values stop the updates");
        else if (!strcmp(a, "--clip"))
            o.c.clip = parse_float(a, v, 0.0, 0, FLT_MAX, "0 turns clipping off");
        else if (!strcmp(a, "--val-frac")) {
            o.val_frac = parse_num(a, v);
            o.val_frac_given = 1;
            if (!(o.val_frac >= 0.0 && o.val_frac < 1.0)) die_usage("--val-frac: '%s' must be in [0, 1)", v);
        }
        else if (!strcmp(a, "--save-every"))   o.save_every = parse_count(a, v, 0, MAX_STEPS);
        else if (!strcmp(a, "--stop-after"))   o.stop_after = parse_count(a, v, 1, MAX_STEPS);
        else if (!strcmp(a, "--eval-every"))   o.eval_every = parse_count(a, v, 0, MAX_STEPS);
        else if (!strcmp(a, "--eval-batches")) o.eval_batches = parse_count(a, v, 1, 1000000L);
        else if (!strcmp(a, "--sample-every")) o.sample_every = parse_count(a, v, 0, MAX_STEPS);
        else if (!strcmp(a, "--threads"))      o.threads = (int)parse_count(a, v, 0, 64);
        else if (!strcmp(a, "--grad-accum"))   o.grad_accum = (int)parse_count(a, v, 1, 4096);
        else if (!strcmp(a, "--zero"))         o.zero = (int)parse_count(a, v, 0, 1);
        else if (!strcmp(a, "--overlap"))      o.overlap = (int)parse_count(a, v, 0, 1);
        else if (!strcmp(a, "--nan-at")) {
            if (sscanf(v, "%ld:%ld", &o.nan_rank, &o.nan_step) != 2 || o.nan_rank < 0 || o.nan_step < 1)
                die_usage("--nan-at: '%s' must be PROCESS:STEP, e.g. 1:3", v);
        }
        else if (!strcmp(a, "--lora"))         o.lora_r = (int)parse_count(a, v, 1, TW_LORA_MAX_R);
        else if (!strcmp(a, "--lora-alpha"))
            o.lora_alpha = parse_float(a, v, 0.0, 1, 1e6, "the adapters' scale is alpha / r");
        else if (!strcmp(a, "--lora-targets")) o.lora_targets = v;
        else if (!strcmp(a, "--lora-init"))    o.lora_init = parse_path(a, v);
        else if (!strcmp(a, "--merged"))       o.merged = parse_path(a, v);
        else if (!strcmp(a, "--mask"))         o.mask = parse_path(a, v);
        else if (!strcmp(a, "--teacher"))      o.teacher = parse_path(a, v);
        else if (!strcmp(a, "--distill-alpha"))
            o.distill_alpha = parse_float(a, v, 0.0, 0, 1.0, "the weight of the teacher's term; 1 - a weighs the label's");
        else if (!strcmp(a, "--distill-temp"))
            o.distill_temp = parse_float(a, v, 0.0, 1, 1000.0, "the temperature that softens both distributions");
        else if (!strcmp(a, "--init-moe")) {
            char extra;
            o.moe_shared = 0;
            const int got = sscanf(v, "%d,%d,%d%c", &o.moe_E, &o.moe_k, &o.moe_shared, &extra);
            if (got < 2 || got > 3 || o.moe_E < 1 || o.moe_E > TW_MOE_FILE_MAX_EXPERTS || o.moe_k < 1 ||
                o.moe_k > o.moe_E || o.moe_shared < 0 || o.moe_shared > TW_MOE_FILE_MAX_SHARED)
                die_usage("--init-moe: '%s' must be E,K or E,K,S with 1 <= K <= E <= %d and 0 <= S <= %d, "
                          "e.g. 8,2 or 4,2,1", v, TW_MOE_FILE_MAX_EXPERTS, TW_MOE_FILE_MAX_SHARED);
        }
        else if (!strcmp(a, "--init-mla")) {
            char extra;
            int *q = o.mla;
            const int got = sscanf(v, "%d,%d,%d,%d,%d%c", &q[0], &q[1], &q[2], &q[3], &q[4], &extra);
            if (got != 5 || q[0] < 1 || q[0] > TW_MOE_FILE_MAX_RANK || q[1] < 1 || q[1] > TW_MOE_FILE_MAX_RANK ||
                q[2] < 1 || q[2] > TW_MOE_FILE_MAX_HEAD_DIM || q[3] < 2 || q[3] % 2 ||
                q[3] > TW_MOE_FILE_MAX_HEAD_DIM || q[4] < 1 || q[4] > TW_MOE_FILE_MAX_HEAD_DIM)
                die_usage("--init-mla: '%s' must be Q,R,N,P,V (q_lora_rank, kv_lora_rank, qk_nope_head_dim, "
                          "qk_rope_head_dim even, v_head_dim), each >= 1, ranks <= %d, dims <= %d, e.g. 16,8,8,4,8",
                          v, TW_MOE_FILE_MAX_RANK, TW_MOE_FILE_MAX_HEAD_DIM);
        }
        else if (!strcmp(a, "--moe-norm-topk")) o.moe_norm_topk = (int)parse_count(a, v, 0, 1);
        else if (!strcmp(a, "--aux-coef"))
            o.aux_coef = parse_float(a, v, 0.0, 0, 100.0, "the load-balancing loss's weight; 0 turns it off");
        else die_usage("unknown flag '%s'", a);
    }
    if (o.moe_E && (o.init || o.resume))
        die_usage("--init-moe makes a fresh model; --init and --resume load one (a TWMX file keeps its experts)");
    if (o.mla[1] && (o.init || o.resume))
        die_usage("--init-mla makes a fresh model; --init and --resume load one (a TWMX file keeps its attention)");
    if (o.mla[1] && o.state) die_usage("--state: a training state cannot hold a model with latent attention yet; drop it");
    if (o.moe_E && o.state) die_usage("--state: a training state cannot hold a model with experts yet; drop it");
    if (o.moe_norm_topk >= 0 && !o.moe_E) die_usage("--moe-norm-topk needs --init-moe E,K");
    if (o.rope_config && o.rope_kind != TW_ROPE_SCALING_NONE) die_usage("--rope-config and --rope-scaling both given: keep one");
    if (!o.tokens && !o.text) die_usage("no data: give --tokens FILE.bin or --text FILE.txt -z TOK.bin");
    if (o.tokens && o.text) die_usage("--tokens and --text: give one data file, not both");
    if (o.text && !o.tokenizer) die_usage("--text needs a tokenizer: -z TOK.bin");
    if (o.init && o.resume) die_usage("--init and --resume: a resumed run continues its own weights");
    if (o.c.warmup > o.c.steps) die_usage("--warmup: longer than --steps");
    if (o.val && o.val_frac_given) die_usage("--val and --val-frac: give one");
    if (!o.val_frac_given) o.val_frac = o.no_shuffle || o.val ? 0.0 : 0.1;
    if (o.mask && !o.tokens) die_usage("--mask: a mask has one byte per token of --tokens FILE.bin (not --text)");
    if (!o.teacher && (o.distill_alpha >= 0.0f || o.distill_temp >= 0.0f))
        die_usage("--distill-alpha and --distill-temp need --teacher FILE.bin");
    if (o.teacher && o.distill_alpha < 0.0f) o.distill_alpha = 0.5f;
    if (o.teacher && o.distill_temp < 0.0f) o.distill_temp = 2.0f;
    if (o.teacher && (o.lora_r || o.lora_init)) die_usage("--teacher with --lora: not supported; distil into a full model");
    if (o.teacher && o.threads != 1) die_usage("--teacher: runs on one thread; give --threads 1");
    if (o.teacher && (o.state || o.resume)) die_usage("--teacher: --state and --resume are not supported with it");
    const int lora = o.lora_r || o.lora_init;
    if (!lora && (o.lora_alpha > 0.0f || o.lora_targets || o.merged))
        die_usage("--lora-alpha, --lora-targets and --merged need --lora R (or --lora-init FILE)");
    if (lora && !o.init) die_usage("--lora: adapters train on a frozen model: give it with --init FILE.bin");
    if (lora && o.state) die_usage("--state: not supported with --lora (save the adapters with --out)");
    if ((lora || o.mask || o.teacher) && (o.grad_accum > 1 || o.zero || o.nan_rank >= 0))
        die_usage("%s trains in one process, one batch a step: drop --grad-accum, --zero and --nan-at",
                  lora ? "--lora" : o.mask ? "--mask" : "--teacher");
    if (o.lora_init && (o.lora_r || o.lora_alpha > 0.0f || o.lora_targets))
        die_usage("--lora-init: the file sets r, alpha and the targets; give no --lora, --lora-alpha or --lora-targets");
    return o;
}

// ---- paths: checked before anything is read or written ----

// An output path: if it exists it must be a regular file (it is replaced whole: formats/atomic_file.h),
// and the nearest folder above it that exists must be a folder we may write in (the missing
// ones are made just before training: make_parent_dirs).
static void check_output(const char *flag, const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        die_data("%s %s: is %s, not a file: give a file path to write", flag, path,
                 S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) die_usage("%s: the path is too long", flag);
    int found = 0;
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (slash == NULL) strcpy(dir, ".");
        else if (slash == dir) dir[1] = '\0';
        else *slash = '\0';
        if (stat(dir, &sb) == 0) { found = 1; break; }
        if (strcmp(dir, ".") == 0 || strcmp(dir, "/") == 0) break;
    }
    if (!found || !S_ISDIR(sb.st_mode))
        die_data("%s %s: %s is not a folder: give a path inside a folder", flag, path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        die_data("%s %s: cannot write in the folder %s (%s): give a path in a writable folder", flag,
                 path, dir, strerror(errno));
}

// Makes the missing folders above path (mkdir -p, without a shell).
static void make_parent_dirs(const char *flag, const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *last = strrchr(dir, '/');
    if (last == NULL || last == dir) return;
    *last = '\0';
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            const char c = *p;
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                die_data("%s %s: cannot make the folder %s: %s", flag, path, dir, strerror(errno));
            *p = c;
            if (c == '\0') break;
        }
    }
}

typedef struct { const char *flag, *path; } named_path;

// Refuses an output that is also an input, or two outputs that are one file (formats/same_file.h:
// device and inode for existing files, the folder and name for files not yet written). Writing
// the one would destroy the other. --state may be the --resume file: the state is read whole
// before anything is written, and replaced whole (that is how a run is continued in place).
static void check_paths(const options *o, const char *floor_path, char *curve_png, size_t png_len) {
    if (o->out) check_output("--out", o->out);
    if (o->state) check_output("--state", o->state);
    if (o->merged) check_output("--merged", o->merged);
    if (o->curve) {
        check_output("--curve", o->curve);
        snprintf(curve_png, png_len, "%s.png", o->curve);
    }
    const named_path in[] = { { "--tokens", o->tokens }, { "--text", o->text }, { "-z", o->tokenizer },
                              { "--init", o->init }, { "--resume", o->resume }, { "--val", o->val },
                              { "--floor", floor_path }, { "--lora-init", o->lora_init }, { "--mask", o->mask }, { "--teacher", o->teacher } };
    const named_path out[] = { { "--out", o->out }, { "--state", o->state }, { "--curve", o->curve },
                               { "--curve's picture", o->curve ? curve_png : NULL },
                               { "--merged", o->merged } };
    const int n_in = (int)(sizeof in / sizeof in[0]), n_out = (int)(sizeof out / sizeof out[0]);
    for (int i = 0; i < n_out; i++) {
        if (out[i].path == NULL) continue;
        for (int j = 0; j < n_in; j++) {
            if (in[j].path == NULL || (!strcmp(out[i].flag, "--state") && !strcmp(in[j].flag, "--resume")))
                continue;
            if (tw_same_file(out[i].path, in[j].path))
                die_usage("%s %s is the same file as %s %s: writing it would destroy that input; give "
                          "another path", out[i].flag, out[i].path, in[j].flag, in[j].path);
        }
        for (int j = i + 1; j < n_out; j++)
            if (out[j].path != NULL && tw_same_file(out[i].path, out[j].path))
                die_usage("%s %s is the same file as %s %s: one would overwrite the other; give "
                          "two paths", out[i].flag, out[i].path, out[j].flag, out[j].path);
    }
}

// ---- the model ----

// The configuration of a fresh model of the chosen style, the preset's sizes overridden by the
// flags. Every size was bounded by parse_args; the parameter count is checked here (64-bit,
// overflow-checked: tw_model_config_floats) before anything is allocated.
static tw_model_config config_from_flags(const options *o) {
    tw_model_config c;
    if (tw_model_config_preset(&c, o->style) != TW_OK)
        die_usage("--style: '%s' is not one of 2017, gpt2, llama, qwen3", o->style);
    tw_mha_config *a = &c.block.attn;
    c.vocab = o->vocab;
    if (o->dim) a->d_model = o->dim;
    if (o->layers) c.n_layer = o->layers;
    const int gqa = a->n_kv_head != a->n_head;   // the preset shares kv heads (llama, qwen3)
    if (o->heads) a->n_head = o->heads;
    if (o->kv_heads) a->n_kv_head = o->kv_heads;
    else if (o->heads && !gqa) a->n_kv_head = a->n_head;   // without GQA, one kv head per head
    if (o->head_dim) a->head_dim = o->head_dim;
    else if (o->dim || o->heads) a->head_dim = a->d_model / a->n_head;
    if (o->hidden) c.block.ffn_hidden = o->hidden;
    if (o->moe_E) {
        if (c.block.ffn != TW_FFN_SWIGLU)
            die_usage("--init-moe: the experts are SwiGLU FFNs: use --style llama or qwen3, not %s", o->style);
        c.block.moe_experts = o->moe_E;
        c.block.moe_top_k = o->moe_k;
        c.block.moe_shared = o->moe_shared;
        c.block.moe_norm_topk = o->moe_norm_topk >= 0 ? o->moe_norm_topk : 1;
    }
    if (o->mla[1]) {
        if (a->qk_norm || c.bias)
            die_usage("--init-mla: latent attention has its own norms and no biases: use --style llama, not %s",
                      o->style);
        c.block.mla_q_rank = o->mla[0];
        c.block.mla_kv_rank = o->mla[1];
        c.block.mla_d_nope = o->mla[2];
        c.block.mla_d_rope = o->mla[3];
        c.block.mla_d_v = o->mla[4];
    }
    a->tiled = o->flash;
    if (c.max_seq < o->c.T) c.max_seq = o->c.T;
    if (a->n_kv_head > a->n_head || a->n_head % a->n_kv_head != 0)
        die_usage("--kv-heads: must divide --heads (GQA shares each kv head among a group)");
    if ((a->rope != TW_ROPE_NONE && a->head_dim % 2) || a->head_dim < 1)
        die_usage("--head-dim / --dim / --heads: the head size must be even for RoPE");
    if (tw_model_config_check(&c) != TW_OK) die_usage("the sizes given describe no valid model (%s)", o->style);
    if (tw_model_config_floats(&c) < 0)
        die_usage("the sizes given make more than 2^40 parameters; choose smaller --dim, --layers, "
                  "--hidden or --vocab");
    return c;
}

// A fresh model: seeded weights (tw_model_randomize, then norm gains 1 and betas 0: the usual
// start for training).
static void model_from_scratch(tw_model *m, const tw_model_config *c, uint64_t seed) {
    if (tw_model_init(m, c) != TW_OK) die_data("out of memory for the model's %ld parameters", tw_model_config_floats(c));
    tw_model_randomize(m, seed);
    for (int i = 0; i < m->n_params; i++) {
        tw_param *p = &m->params[i];
        if (p->kind == TW_PARAM_GAIN) for (long j = 0; j < p->count; j++) p->data[j] = 1.0f;
        if (p->kind == TW_PARAM_BETA) memset(p->data, 0, (size_t)p->count * sizeof(float));
    }
}

// Bytes training will allocate, in double (no product can overflow; the estimate only decides
// whether to refuse): the weights, gradients (one set per part of the batch), AdamW's two
// moments, and two activation records (forward and its gradient) of T positions per part, as
// tw_trainer_init_split allocates them; plus the batch and the loss curve.
static double training_bytes(const tw_model_config *c, double n_floats, int T, int n_parts, int B, int steps) {
    const tw_dims cap = tw_model_dims(c, T, T);
    double block = 0.0, model = 0.0;
    for (int i = 0; i < tw_block_n_tensors; i++)
        if (tw_block_has(&c->block, tw_block_tensors[i].has)) {
            double n = 1.0;
            for (const char *l = tw_block_tensors[i].shape; *l; l++) n *= (double)tw_dims_of(&cap, *l);
            block += n;
        }
    for (int i = 0; i < tw_model_n_tensors; i++)
        if (tw_model_has(c, &tw_model_tensors[i])) {
            double n = 1.0;
            for (const char *l = tw_model_tensors[i].shape; *l; l++) n *= (double)tw_dims_of(&cap, *l);
            model += n;
        }
    const double state = (double)c->n_layer * block + model;
    const int n_states = n_parts > 1 ? 2 + 2 * n_parts : 2;
    return 4.0 * (n_floats * (3.0 + n_parts) + n_states * state) + 8.0 * B * T + 8.0 * steps;
}

// Refuses (one line) a run that needs more memory than the machine has, before allocating it:
// otherwise a large --dim or --seq ends in an allocation failure after minutes, or in the
// kernel's OOM killer. exit_code: 2 when the sizes come from flags, 1 from a file.
static void check_memory(const tw_model_config *c, double n_floats, int T, int n_parts, int B, int steps,
                         int exit_code) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page <= 0) return;   // unknown: let the allocations decide
    const double have = (double)pages * (double)page;
    const double need = training_bytes(c, n_floats, T, n_parts, B, steps);
    if (need <= have) return;
    fprintf(stderr, "train: training this model needs about %.3g GB (%.0f parameters; weights, gradients, "
            "AdamW moments, activations of --batch %d x --seq %d on %d part%s), more than this machine's "
            "%.3g GB: choose smaller sizes, --seq or --threads\n", need / 1e9, n_floats, B, T, n_parts,
            n_parts == 1 ? "" : "s", have / 1e9);
    exit(exit_code);
}

// Writes the weights: llama2.c's format when it can hold the model, else ours.
// Returns 0, or -1 after one line on stderr (the caller stops every process).
static int save_model(const char *path, const tw_model *m) {
    char err[512];
    tw_status st = m->cfg.block.moe_experts > 0 || m->cfg.block.mla_kv_rank > 0 ? tw_moe_file_write(path, m, err, sizeof err)
                 : tw_llama2c_can_write(m, NULL, 0) ? tw_llama2c_write(path, m, err, sizeof err)
                                                   : tw_checkpoint_write(path, m, err, sizeof err);
    if (st != TW_OK) fprintf(stderr, "train: --out %s\n", err);
    return st == TW_OK ? 0 : -1;
}

// A step of --mask whose batch counts no target: nothing trains; the step is counted.
static tw_status skip_step(tw_train_stats *st, tw_trainer *t, tw_lora_trainer *lt, long s, int steps) {
    printf("step %ld/%d skipped: no target of its batch is counted by --mask\n", s + 1, steps);
    memset(st, 0, sizeof *st);
    st->loss = NAN;   // the curve's "not measured"
    t->step++;
    lt->step = t->step;
    return TW_OK;
}

// LoRA: base is the frozen --init model (read a second time: m becomes base + adapters, merged),
// ad the adapters: from --lora-init, or fresh (A seeded by --seed, B zero).
static void setup_lora(tw_model *base, tw_lora_set *ad, tw_model *m, const options *o) {
    char err[512] = "";
    if (tw_model_load_file(base, o->init, err, sizeof err) != TW_OK) die_data("--init %s", err);
    if (o->lora_init) {
        if (tw_lora_file_load(ad, o->lora_init, &base->cfg, err, sizeof err) != TW_OK)
            die_data("--lora-init %s", err);
    } else {
        int targets[TW_LORA_N_KINDS], n_targets = 0;
        if (tw_lora_targets_parse(targets, &n_targets, o->lora_targets ? o->lora_targets : "wq,wv", err,
                                  sizeof err) != TW_OK)
            die_usage("--lora-targets: %s", err);
        const float alpha = o->lora_alpha > 0.0f ? o->lora_alpha : (float)o->lora_r;
        tw_status st = tw_lora_set_init(ad, &base->cfg, o->lora_r, alpha, targets, n_targets);
        if (st == TW_ERR_SHAPE)
            die_usage("--lora-targets: the --init model has no w3 (its FFN is not SwiGLU); choose from wq,wk,wv,wo,w1,w2");
        if (st != TW_OK) die_data("out of memory for the adapters");
        tw_lora_set_randomize(ad, (uint64_t)o->seed);
    }
    if (tw_lora_refresh(m, base, ad) != TW_OK) die_data("--init %s: the adapters do not fit the model", o->init);
}

// ---- data ----

// The teacher's floor (`teacher_nll X` in floor.txt, written by make stories), NAN if there is
// none. The file is opened through tw_regular_file_open (a FIFO is refused, never waited on).
// required: --floor was given, so a missing file or line is an error; the default floor.txt
// beside --tokens may be absent. A value that is not a finite, non-negative number of nats is
// refused either way (one line, exit 1).
static double read_floor(const char *path, int required) {
    FILE *f;
    char why[256];
    const tw_file_open_result r = tw_regular_file_open(&f, why, sizeof why, path,
                                                       "a floor.txt file (written by make stories)");
    const char *flag = required ? "--floor " : "";
    if (r == TW_FILE_NOT_REGULAR) die_data("%s%s: %s", flag, path, why);
    if (r != TW_FILE_OK) {
        if (!required && errno == ENOENT) return NAN;
        die_data("%s%s: cannot open: %s", flag, path, strerror(errno));
    }
    char line[256];
    double v = NAN;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = sscanf(line, "teacher_nll %lf", &v) == 1;
    fclose(f);
    if (!found) {
        if (required) die_data("--floor %s: no 'teacher_nll' line (written by make stories)", path);
        return NAN;
    }
    if (!isfinite(v) || v < 0.0)
        die_data("%s%s: teacher_nll is %g: a loss in nats is finite and >= 0 (corrupted file? "
                 "make stories writes it)", flag, path, v);
    return v;
}

// Mean loss over up to max_batches batches of windows in file order (stride T).
static float eval_loss(tw_trainer *t, const tw_model *m, const int *val, long n_val, int B, int T,
                       long max_batches, int *in, int *tg) {
    const long windows = (n_val - 1) / T;
    double sum = 0.0;
    long batches = 0;
    for (long w0 = 0; w0 + B <= windows && batches < max_batches; w0 += B, batches++) {
        for (int r = 0; r < B; r++) {
            memcpy(in + (size_t)r * T, val + (w0 + r) * T, (size_t)T * sizeof *in);
            memcpy(tg + (size_t)r * T, val + (w0 + r) * T + 1, (size_t)T * sizeof *tg);
        }
        float loss;
        const tw_status st = t->n_parts > 1 ? tw_model_loss_split(&loss, t->s_part, m, in, tg, B, T, t->n_parts)
                                            : tw_model_loss(&loss, &t->s, m, in, tg, B, T);
        if (st != TW_OK) return NAN;
        sum += loss;
    }
    return batches ? (float)(sum / (double)batches) : NAN;
}

// The tokens eval_loss predicts (returned) and, with a tokenizer, the bytes of text they stand
// for (*bytes; 0 without one): the validation loss is a mean over exactly these tokens.
static long eval_scored(long *bytes, const tw_tokenizer *tok, const int *val, long n_val, int B, int T,
                        long max_batches) {
    const long windows = (n_val - 1) / T;
    long scored = 0, batches = 0;
    *bytes = 0;
    for (long w0 = 0; w0 + B <= windows && batches < max_batches; w0 += B, batches++) {
        scored += (long)B * T;
        if (tok->vocab) *bytes += tw_tokenizer_decoded_bytes(tok, val, w0 * T + 1, (w0 + B) * T + 1);
    }
    return scored;
}

// ---- samples ----

static void print_sample(const tw_model *m, const tw_tokenizer *tok, tw_sampler *sp, int len) {
    tw_model_state s;
    const int n = len < m->cfg.max_seq ? len : m->cfg.max_seq;
    // Latent attention has no KV cache (nn/model.h): every token runs the whole prefix again.
    const int mla = m->cfg.block.mla_kv_rank > 0;
    int *seq = mla ? malloc((size_t)n * sizeof *seq) : NULL;
    if ((mla && seq == NULL) || tw_model_state_init(&s, m, mla ? n : 1, mla ? 0 : n) != TW_OK) {
        free(seq);
        return;
    }
    int token = TW_TOK_BOS;
    printf("sample: ");
    for (int pos = 0; pos < n - 1; pos++) {
        if (mla) seq[pos] = token;
        if (mla ? tw_model_forward_next(&s, m, seq, pos + 1, 0) != TW_OK
                : tw_model_forward_next(&s, m, &token, 1, pos) != TW_OK) break;
        const int next = tw_sampler_sample(sp, mla ? s.logits + (size_t)pos * m->cfg.vocab : s.logits);
        if (next == TW_TOK_BOS) break;
        const char *piece = tw_tokenizer_decode(tok, token, next);
        if (tw_tokenizer_piece_printable(piece))
            for (const char *p = piece; *p; p++) putchar(*p == '\n' ? ' ' : *p);
        token = next;
    }
    printf("\n");
    fflush(stdout);
    free(seq);
    tw_model_state_free(&s);
}

// ---- what went wrong ----

// After a step whose loss or gradient norm is not finite: the first intermediate of the forward
// pass (row by row), else the first gradient, that holds a NaN or Inf, as one sentence in why.
static void find_bad_tensor(char *why, size_t len, tw_trainer *t, const tw_model *m, const int *in, int B, int T) {
    for (int r = 0; r < B; r++) {
        if (tw_model_forward(&t->s, m, in + (size_t)r * T, T, 0) != TW_OK) break;
        char where[32];
        snprintf(where, sizeof where, "batch row %d", r);
        if (tw_model_check_finite(&t->s, m, T, 1, where, why, len) != TW_OK) return;
    }
    tw_named_tensor *g = malloc((size_t)m->n_params * sizeof *g);
    if (g != NULL) {
        for (int i = 0; i < m->n_params; i++)
            g[i] = (tw_named_tensor){ t->g.params[i].name, t->g.params[i].data, t->g.params[i].count };
        tw_status st = tw_check_finite(g, m->n_params, "gradients", why, len);
        free(g);
        if (st != TW_OK) return;
    }
    snprintf(why, len, "every activation and gradient is finite, the loss is not (overflow in the loss)");
}

// ---- Ctrl-C ----

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) { (void)sig; interrupted = 1; }

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// The loss curve: "step train_loss val_loss" (val NaN where none was measured), then a PNG with
// gnuplot when it is installed (viz/14_loss.gp). Both are written whole or not at all.
static void write_curve(const char *path, const float *train, const float *val, long n, double floor_nll) {
    tw_atomic_file af;
    if (tw_atomic_open(&af, path, "w") != TW_OK) {
        fprintf(stderr, "train: --curve %s: cannot create (does its folder exist?)\n", path);
        return;
    }
    fprintf(af.f, "# step train_loss val_loss teacher_floor (nats/token; nan: not measured)\n");
    for (long s = 0; s < n; s++)
        fprintf(af.f, "%ld %.6g %.6g %.6g\n", s + 1, (double)train[s], (double)val[s], floor_nll);
    if (tw_atomic_commit(&af, 1) != TW_OK) return;
    // gnuplot without a shell (lib/inspect/gnuplot.c): the path is a gnuplot string, never sh text.
    char png[4200];
    snprintf(png, sizeof png, "%s.png", path);
    switch (tw_gnuplot_run("viz/14_loss.gp", path, png, NULL, 0)) {
    case TW_GNUPLOT_DRAWN:
        fprintf(stderr, "train: loss curve: %s and %s\n", path, png);
        break;
    case TW_GNUPLOT_MISSING:
        fprintf(stderr, "train: loss curve: %s (picture skipped: gnuplot is not installed; "
                "apt-get install gnuplot-nox or brew install gnuplot)\n", path);
        break;
    case TW_GNUPLOT_BAD_NAME:
        fprintf(stderr, "train: loss curve: %s (picture skipped: gnuplot cannot take a name "
                "holding a newline)\n", path);
        break;
    case TW_GNUPLOT_FAILED:
        fprintf(stderr, "train: loss curve: %s (gnuplot failed to draw %s; run from the top of "
                "the checkout, where viz/14_loss.gp is)\n", path, png);
        break;
    }
}

// ---- experts ----

// Parameters one token uses: all but the routed experts it does not choose (E - k of them in
// each layer; nn/moe.h's active count, with the router and the shared experts).
static long active_params(const tw_model *m) {
    const tw_block_config *b = &m->cfg.block;
    const long idle = (long)(b->moe_experts - b->moe_top_k) * 3 * b->attn.d_model * b->ffn_hidden;
    return tw_model_count_params(m) - (long)m->cfg.n_layer * idle;
}

// One training step whose forwards count the tokens sent to each expert (counts NULL: none).
static tw_status tw_train_step_counted(tw_train_stats *st, tw_trainer *t, tw_model *m, const int *in,
                                       const int *tg, const tw_train_config *c, tw_expert_counts *counts) {
    if (counts) tw_expert_counts_attach(counts, t, 1);
    const tw_status s = tw_train_step(st, t, m, in, tg, c);
    if (counts) tw_expert_counts_attach(counts, t, 0);
    return s;
}

// "experts steps A-B: tokens per expert, layer 0: 130 98 ... (max/mean 1.21)" for each layer.
static void print_expert_counts(const tw_expert_counts *c, long *sum, long from, long to) {
    tw_expert_counts_sum(c, sum);
    for (int l = 0; l < c->n_layer; l++) {
        const long *row = sum + (size_t)l * c->E;
        long total = 0, most = 0;
        for (int e = 0; e < c->E; e++) { total += row[e]; if (row[e] > most) most = row[e]; }
        printf("experts steps %ld-%ld layer %d: tokens per expert", from, to, l);
        for (int e = 0; e < c->E; e++) printf(" %ld", row[e]);
        printf(" (max/mean %.2f)\n", total > 0 ? (double)most * c->E / (double)total : 0.0);
    }
}

// ---- what is saved ----

// "the checkpoint of step N is kept: ..." or "nothing written", for the line that stops a run.
static const char *kept_note(char *buf, size_t len, long saved_step) {
    if (saved_step < 0) return "nothing written";
    snprintf(buf, len, "the checkpoint of step %ld is kept: the last good one, its weights finite and "
             "their loss on the next batch finite", saved_step);
    return buf;
}

// Before a checkpoint is written: are the weights (and, for a training state, AdamW's moments)
// finite, and does a forward pass with them give a finite loss on the batch of step `step` (the
// batch they meet next, or the last one at the end)? If not, why receives one sentence and 0 is
// returned: such weights are never written (they would only reproduce the NaN). in and tg are
// (B, T) scratch.
static int weights_good(char *why, size_t len, tw_trainer *t, const tw_model *m, tw_batcher *b,
                        long step, int *in, int *tg, int with_moments) {
    const float *arrays[3] = { m->memory, t->adam_m, t->adam_v };
    const char *what[3] = { "weight", "AdamW first moment of", "AdamW second moment of" };
    for (int a = 0; a < (with_moments ? 3 : 1); a++) {
        const long i = tw_first_nonfinite(arrays[a], m->n_floats);
        if (i < 0) continue;
        const tw_param *p = &m->params[0];
        for (int k = 0; k < m->n_params; k++)
            if (m->params[k].data - m->memory <= i) p = &m->params[k];
        snprintf(why, len, "the update made %s %s[%ld] %g", what[a], p->name, i - (long)(p->data - m->memory),
                 (double)arrays[a][i]);
        return 0;
    }
    tw_batcher_fill(in, tg, b, step);
    float loss = NAN;
    const tw_status st = t->n_parts > 1 ? tw_model_loss_split(&loss, t->s_part, m, in, tg, b->B, b->T, t->n_parts)
                                        : tw_model_loss(&loss, &t->s, m, in, tg, b->B, b->T);
    if (st != TW_OK || !isfinite(loss)) {
        snprintf(why, len, "the weights after it are finite but give a loss of %g on step %ld's batch",
                 (double)loss, step + 1);
        return 0;
    }
    return 1;
}

int train_grpo_main(int argc, char **argv);   // tools/train_grpo.c: ./train --grpo

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--grpo") == 0) return train_grpo_main(argc, argv);
    // The processes of a data-parallel run (one without mpirun or in ./train); only process 0
    // prints and writes files.
    tw_comm comm;
    if (train_comm_open(&comm, &argc, &argv) != 0) return 1;
    if (train_dpo_wanted(argc, argv)) {   // its own flags and loop: tools/train_dpo.c
        if (comm.size > 1) die_usage("--dpo trains in one process: run ./train, not under mpirun");
        return train_dpo_main(argc, argv);
    }
    if (comm.rank > 0) {
        print_errors = 0;
        if (freopen("/dev/null", "w", stdout) == NULL) return 1;
    }
    options o = parse_args(argc, argv);
    const char *level = tw_simd_init(o.simd);
    if (level == NULL) die_usage("--simd: level '%s' is not available here", o.simd ? o.simd : getenv("TW_SIMD"));
    char err[512] = "";
    // The curve goes beside the weights (out/a.bin: out/a.bin.loss.dat), so two runs with two
    // --out names keep two curves; one shared default would be overwritten by the second run.
    char curve_default[4200];
    if (!o.curve) {
        if (o.out && strlen(o.out) + sizeof ".loss.dat.png" > sizeof curve_default)
            die_usage("--out: the path is too long to name the loss curve beside it; give --curve FILE or --curve none");
        if (o.out) snprintf(curve_default, sizeof curve_default, "%s.loss.dat", o.out);
        o.curve = o.out ? curve_default : "out/train/loss.dat";
    }
    if (strcmp(o.curve, "none") == 0) o.curve = NULL;

    // Every output path, and outputs against inputs, before anything is read or written.
    char floor_path[4096] = "", curve_png[4200] = "";
    if (o.floor) snprintf(floor_path, sizeof floor_path, "%s", o.floor);
    else if (o.tokens && strrchr(o.tokens, '/'))
        snprintf(floor_path, sizeof floor_path, "%.*s/floor.txt", (int)(strrchr(o.tokens, '/') - o.tokens), o.tokens);
    check_paths(&o, floor_path[0] ? floor_path : NULL, curve_png, sizeof curve_png);

    // Threads: one part of the batch per thread (train/parallel.h).
    const int threads = o.threads > 0 ? o.threads : tw_matmul_threads();
    tw_matmul_set_threads(threads);

    // The model, and where training resumes.
    tw_model m;
    // Data parallel (train/dist.h): G rows a step, B on each of P processes, K times.
    const int P = comm.size;
    const int dist = P > 1 || o.grad_accum > 1 || o.zero || o.nan_rank >= 0;
    if (P > 1 && (o.lora_r || o.lora_init || o.mask || o.teacher))
        die_usage("--lora, --mask and --teacher train in one process: run ./train, not under mpirun");
    const long G = (long)o.c.B * P * o.grad_accum;
    if (G > TW_TRAIN_STATE_MAX_BATCH)
        die_usage("--batch %d x %d processes x --grad-accum %d: a global batch of %ld rows is above %d",
                  o.c.B, P, o.grad_accum, G, TW_TRAIN_STATE_MAX_BATCH);
    tw_train_progress pr = { 0, 0, (uint64_t)o.seed, 0, (int)G, o.c.T };
    float *adam_m = NULL, *adam_v = NULL;
    if (o.resume) {
        if (tw_train_state_load(&pr, &m, &adam_m, &adam_v, o.resume, err, sizeof err) != TW_OK)
            die_data("--resume %s", err);
        if (pr.B != G || pr.T != o.c.T)
            die_data("--resume %s: was made with a global batch of %d rows (--batch x processes x "
                     "--grad-accum) and --seq %d; give the same (not %ld, %d)", o.resume, pr.B, pr.T, G, o.c.T);
        if (pr.step >= o.c.steps) die_data("--resume %s: already at step %ld of --steps %d", o.resume,
                                           (long)pr.step, o.c.steps);
    } else if (o.init) {
        if (tw_model_load_file(&m, o.init, err, sizeof err) != TW_OK) die_data("--init %s", err);
    } else {
        const tw_model_config c = config_from_flags(&o);
        check_memory(&c, (double)tw_model_config_floats(&c), o.c.T, threads, o.c.B, o.c.steps, 2);
        model_from_scratch(&m, &c, (uint64_t)o.seed);
    }
    m.cfg.block.attn.tiled = o.flash;   // a run-time choice, not stored in the files
    const int moe = m.cfg.block.moe_experts > 0;
    if (!moe && o.aux_coef >= 0.0f) die_usage("--aux-coef: the model has no experts (give --init-moe E,K or a TWMX --init)");
    if (moe) {
        m.cfg.block.moe_aux_coef = o.aux_coef >= 0.0f ? o.aux_coef : 0.01f;   // not stored in files either
        if (o.lora_r || o.lora_init || o.teacher || o.mask || o.state || comm.size > 1 || o.grad_accum > 1 || o.zero)
            die_usage("a model with experts trains with the plain loop: --lora, --teacher, --mask, --state, "
                      "--grad-accum, --zero and mpirun are not supported with it yet");
    }
    if (m.cfg.block.mla_kv_rank > 0 &&
        (o.flash || o.rope_kind != TW_ROPE_SCALING_NONE || o.rope_config || o.lora_r || o.lora_init ||
         o.teacher || o.mask || o.state || comm.size > 1 || o.grad_accum > 1 || o.zero))
        die_usage("a model with latent attention trains with the plain loop: --attn flash, --rope-scaling, "
                  "--rope-config, --lora, --teacher, --mask, --state, --grad-accum, --zero and mpirun are "
                  "not supported with it yet");
    switch (tw_model_config_set_rope_scaling(&m.cfg, (tw_rope_scaling_kind)o.rope_kind, o.rope_factor,
                                             o.rope_original, TW_LLAMA2C_MAX_SEQ)) {
    case TW_OK: break;
    case TW_ERR_SHAPE:
        die_usage("--rope-scaling: this model has no RoPE to scale (style %s)", m.cfg.style ? m.cfg.style : "?");
        break;
    default: die_usage("--rope-factor %g: times the trained context is too long", (double)o.rope_factor);
    }
    if (o.rope_config) {   // a config.json's "rope_scaling" field, betas included
        switch (tw_model_config_apply_rope_scaling(&m.cfg, &o.rope_sc, TW_LLAMA2C_MAX_SEQ)) {
        case TW_OK: break;
        case TW_ERR_SHAPE: die_usage("--rope-config %s: this model has no RoPE to scale", o.rope_config); break;
        default: die_usage("--rope-config %s: factor times the trained context is too long", o.rope_config);
        }
    }
    const int V = m.cfg.vocab, B = o.c.B, T = o.c.T;
    if (T > m.cfg.max_seq) die_data("--seq %d: longer than the model's max_seq %d", T, m.cfg.max_seq);
    if (o.resume || o.init) check_memory(&m.cfg, (double)m.n_floats, T, threads, B, o.c.steps, 1);
    const int lora = o.lora_r || o.lora_init;
    tw_model base;
    tw_lora_set ad;
    tw_lora_trainer lt;
    memset(&base, 0, sizeof base);
    memset(&ad, 0, sizeof ad);
    memset(&lt, 0, sizeof lt);
    if (lora) setup_lora(&base, &ad, &m, &o);
    tw_model teacher;
    tw_model_state teacher_s;
    memset(&teacher, 0, sizeof teacher);
    memset(&teacher_s, 0, sizeof teacher_s);
    if (o.teacher) {
        if (tw_model_load_file(&teacher, o.teacher, err, sizeof err) != TW_OK) die_data("--teacher %s", err);
        if (teacher.cfg.vocab != V)
            die_data("--teacher %s: its vocabulary has %d tokens, the student's %d: distillation compares the two "
                     "distributions token by token; give a teacher made with the student's tokenizer",
                     o.teacher, teacher.cfg.vocab, V);
        if (T > teacher.cfg.max_seq) die_data("--teacher %s: --seq %d is longer than its max_seq %d", o.teacher, T,
                                              teacher.cfg.max_seq);
        if (tw_model_state_init(&teacher_s, &teacher, T, 0) != TW_OK) die_data("out of memory for the teacher");
    }

    // The tokenizer must have exactly the model's vocabulary.
    tw_tokenizer tok = { 0 };
    if (o.tokenizer && tw_tokenizer_load(&tok, o.tokenizer, V, err, sizeof err) != TW_OK)
        die_data("-z: the tokenizer does not match the model's vocabulary of %d tokens: %s", V, err);

    // The data, its validation split, and the floor.
    int *data = NULL, *val = NULL;
    long n = 0, n_val = 0, at = 0;
    const char *data_name = o.tokens ? o.tokens : o.text;
    if (o.tokens) {
        if (tw_tokens_read(&data, &n, o.tokens, err, sizeof err) != TW_OK) die_data("--tokens %s", err);
    } else if (tw_tokens_encode_file(&data, &n, o.text, &tok, err, sizeof err) != TW_OK) {
        die_data("--text %s", err);
    }
    if (!tw_tokens_fit_vocab(data, n, V, &at))
        die_data("%s: token %d at position %ld is outside the model's vocabulary of %d (wrong tokenizer or model?)",
                 data_name, data[at], at, V);
    long n_train = n;
    unsigned char *mask = NULL;   // (n) with --mask
    if (o.mask && tw_mask_read(&mask, o.mask, n, err, sizeof err) != TW_OK) die_data("--mask %s", err);
    if (o.val) {
        if (tw_tokens_read(&val, &n_val, o.val, err, sizeof err) != TW_OK) die_data("--val %s", err);
        if (!tw_tokens_fit_vocab(val, n_val, V, &at))
            die_data("--val %s: token %d at position %ld is outside the model's vocabulary of %d",
                     o.val, val[at], at, V);
        // One validation batch reads B windows of T positions and the token after the last.
        if (n_val < (long)B * T + 1)
            die_data("--val %s: %ld tokens are too few for one validation batch of --batch %d x --seq %d "
                     "(needs %ld)", o.val, n_val, B, T, (long)B * T + 1);
    } else {
        tw_split_tokens(&n_train, &n_val, n, o.val_frac);
        val = data + n_train;
    }
    // One batch reads B rows of T + 1 tokens: with fewer, rows would repeat within a batch.
    if (n_train < G * (T + 1))
        die_data("%s: %ld training tokens are too few for one batch of %ld rows x --seq %d (needs %ld: "
                 "each row reads seq + 1 tokens); give more data or a smaller --batch or --seq", data_name,
                 n_train, G, T, G * (T + 1));
    const double floor_nll = floor_path[0] ? read_floor(floor_path, o.floor != NULL) : NAN;

    tw_batcher batches;
    if (tw_batcher_init(&batches, data, n_train, (int)G, T, !o.no_shuffle, pr.shuffle_seed) != TW_OK)
        die_data("out of memory for the batch order");
    tw_trainer t;
    if (tw_trainer_init_split(&t, &m, T, threads) != TW_OK) die_data("out of memory for the training state");
    if (lora && tw_lora_trainer_init(&lt, &ad, &m.cfg) != TW_OK) die_data("out of memory for the adapters' optimizer");
    if (adam_m) {
        memcpy(t.adam_m, adam_m, (size_t)m.n_floats * sizeof(float));
        memcpy(t.adam_v, adam_v, (size_t)m.n_floats * sizeof(float));
        t.step = pr.step;
        free(adam_m);
        free(adam_v);
    }
    // Every process starts from process 0's weights (and moments, resuming).
    if (P > 1 && (comm.broadcast(&comm, m.memory, (long)m.n_floats * 4, 0) != TW_OK ||
                  comm.broadcast(&comm, t.adam_m, (long)m.n_floats * 4, 0) != TW_OK ||
                  comm.broadcast(&comm, t.adam_v, (long)m.n_floats * 4, 0) != TW_OK))
        die_data("could not send process 0's weights to the others");
    tw_dist d;
    memset(&d, 0, sizeof d);
    if (dist) {
        if (tw_dist_init(&d, &comm, &t, &m, B, T, o.grad_accum, o.zero) != TW_OK)
            die_data("out of memory for the data-parallel buffers");
        d.overlap = d.overlap && o.overlap;
        d.nan_rank = o.nan_rank;
        d.nan_step = o.nan_step;
        if (o.zero) {   // ZeRO-1: this process keeps only its shard of the moments (in d)
            free(t.adam_m); free(t.adam_v);
            t.adam_m = t.adam_v = NULL;
        }
    }
    tw_expert_counts counts = { 0 };
    long *count_sum = NULL;   // (n_layer, E)
    if (moe && (tw_expert_counts_init(&counts, &t, &m) != TW_OK ||
                !(count_sum = malloc((size_t)m.cfg.n_layer * m.cfg.block.moe_experts * sizeof *count_sum))))
        die_data("out of memory for the per-expert counts");
    tw_sampler sp = { 0 };
    if (o.tokenizer && tw_sampler_init(&sp, V, 1.0f, 0.9f, (uint64_t)o.seed + 1) != TW_OK)
        die_data("out of memory for the sampler");
    if (o.tokenizer && pr.sampler_state) sp.state = pr.sampler_state;
    int *in = malloc((size_t)G * T * sizeof *in), *tg = malloc((size_t)G * T * sizeof *tg);
    float *curve_train = malloc((size_t)o.c.steps * sizeof(float));
    float *curve_val = malloc((size_t)o.c.steps * sizeof(float));
    if (!in || !tg || !curve_train || !curve_val) die_data("out of memory for the batch and the loss curve");
    for (long s = 0; s < o.c.steps; s++) curve_train[s] = curve_val[s] = NAN;
    if (o.curve) make_parent_dirs("--curve", o.curve);
    if (o.out) make_parent_dirs("--out", o.out);
    if (o.state) make_parent_dirs("--state", o.state);
    if (o.merged) make_parent_dirs("--merged", o.merged);

    // Every check passed: what was set up (stdout, so that stderr holds only the error, if any).
    if (threads > 1 && tw_matmul_threads() == 1)
        printf("train: --threads %d: built without OpenMP, so the %d parts of each batch run one "
               "after another on one thread (make OMP=1 BUILD=build-omp train uses the threads)\n", threads, threads);
    printf("train: model %s, %ld parameters, V %d, C %d, L %d, H %d, G %d, D %d, F %d, max_seq %d%s\n",
           m.cfg.style ? m.cfg.style : "?", tw_model_count_params(&m), V, m.cfg.block.attn.d_model,
           m.cfg.n_layer, m.cfg.block.attn.n_head, m.cfg.block.attn.n_kv_head, m.cfg.block.attn.head_dim,
           m.cfg.block.ffn_hidden, m.cfg.max_seq, o.resume ? " (resumed)" : o.init ? " (from --init)" : " (from scratch)");
    printf("train: data %s: %ld tokens: train %ld, validation %ld%s%s%s%s; batches of %d x %d, %s\n",
           data_name, n, n_train, n_val, o.val ? " (from --val " : "", o.val ? o.val : "",
           o.val ? ")" : "", n_val < (long)T * B + 1 ? " (too few for one batch: no validation)" : "",
           B, T, o.no_shuffle ? "file order (--no-shuffle)" : "shuffled");
    if (!isnan(floor_nll))
        printf("train: teacher's floor %.4f nats/token (perplexity %.3f) from %s\n", floor_nll,
               exp(floor_nll), floor_path);
    long val_bytes = 0;
    const long val_scored = n_val >= (long)T * B + 1 ? eval_scored(&val_bytes, &tok, val, n_val, B, T, o.eval_batches) : 0;
    if (val_scored > 0)
        printf("train: val loss = mean over %ld predicted tokens, the first %ld windows of %d of the validation "
               "tokens%s%s\n", val_scored, val_scored / T, T, val_bytes > 0 ? "; " : "",
               val_bytes > 0 ? "bpb = bits per byte of their text (compares across tokenizers)" : "");
    if (lora) {
        printf("train: LoRA r %d, alpha %g (scale %g) on", ad.r, (double)ad.alpha, (double)(ad.alpha / (float)ad.r));
        for (int i = 0; i < ad.n_targets; i++) printf("%s%s", i ? "," : " ", tw_lora_target_name(ad.targets[i]));
        printf(" of every layer%s: %ld trainable parameters, %.2f %% of the model's %ld (frozen)\n",
               o.lora_init ? " (from --lora-init)" : "", ad.n_floats, 100.0 * (double)ad.n_floats /
               (double)tw_model_count_params(&m), tw_model_count_params(&m));
    }
    if (moe)
        printf("train: experts: E %d, k %d, %d shared, gates %s, each of width F %d; load-balancing "
               "loss weight --aux-coef %g; %ld of the %ld parameters active per token\n",
               m.cfg.block.moe_experts, m.cfg.block.moe_top_k, m.cfg.block.moe_shared,
               m.cfg.block.moe_norm_topk ? "renormalised over the k" : "the softmax's own",
               m.cfg.block.ffn_hidden, (double)m.cfg.block.moe_aux_coef, active_params(&m),
               tw_model_count_params(&m));
    if (o.teacher)
        printf("train: distilling from --teacher %s: loss = %g tau^2 KL(teacher || student) + %g CE, tau %g\n",
               o.teacher, (double)o.distill_alpha, 1.0 - o.distill_alpha, (double)o.distill_temp);
    printf("train: ln V = %.4f: the loss of a model that knows nothing; %s kernels, %d thread%s\n",
           log((double)V), level, tw_matmul_threads(), tw_matmul_threads() == 1 ? "" : "s");
    if (dist) {
        const tw_dist_memory mem = tw_dist_memory_per_process(&d);
        printf("train: data parallel: %d process%s x --batch %d x --grad-accum %d = %ld rows a step "
               "(MPI: %s)\n", P, P == 1 ? "" : "es", B, o.grad_accum, G, train_comm_name());
        printf("train: memory per process: weights %.2f MB, gradients %.2f MB, AdamW moments %.2f MB%s, "
               "exchange buffer %.2f MB\n", mem.weights / 1e6, mem.grads / 1e6, mem.moments / 1e6,
               o.zero ? " (ZeRO-1: this process's shard)" : "", mem.comm / 1e6);
        printf("train: gradients reduced in %d bucket%s (%s), %s\n", d.n_buckets, d.n_buckets == 1 ? "" : "s",
               d.n_buckets > 1 ? "the embeddings, each layer, the final norm and head" : "the whole model",
               d.overlap ? (t.n_parts > 1 ? "after the backward pass (the batch is split among --threads)"
                                          : "each sent as soon as the backward pass has finished it")
                         : "after the backward pass (--overlap 0)");
    }
    fflush(stdout);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);

    const double t0 = now_seconds();
    long saved_step = -1;
    int rc = 0;
    char note[256];
    const long first = t.step;
    long count_from = first + 1;   // the first step the per-expert counts cover
    while (t.step < o.c.steps) {
        const long s = t.step;
        tw_train_stats st;
        const double ts = now_seconds();
        tw_status status;
        // --mask: a step whose batch has no counted target has no loss: it is skipped (the
        // schedule and AdamW's step count still advance), never a division by zero.
        int skip = 0;
        if (dist) {
            status = tw_dist_step(&st, &d, &t, &m, &batches, &o.c);
        } else {
            tw_batcher_fill(in, tg, &batches, s);
            skip = mask && tw_mask_apply(tg, mask, &batches, s) == 0;
            status = skip ? skip_step(&st, &t, &lt, s, o.c.steps)
                   : o.teacher ? tw_distill_train_step(&st, &t, &m, &teacher_s, &teacher, in, tg, &o.c,
                                                       o.distill_alpha, o.distill_temp)
                   : lora ? tw_lora_train_step(&st, &lt, &t, &m, &base, &ad, in, tg, &o.c)
                          : tw_train_step_counted(&st, &t, &m, in, tg, &o.c, moe ? &counts : NULL);
        }
        const double te = now_seconds();
        if (status == TW_ERR_ARG && dist) {
            // Every process stops here (the global loss or norm is not finite on all of them);
            // the process that went bad says where, process 0 prints it.
            char why[512] = "";
            if (comm.rank == d.bad_rank) {
                for (int j = 0; j < o.grad_accum && strncmp(why, "batch row", 9) != 0; j++) {
                    tw_dist_fill(&d, &batches, s, j);
                    find_bad_tensor(why, sizeof why, &t, &m, d.in, B, T);
                }
            }
            if (P > 1) comm.broadcast(&comm, why, sizeof why, d.bad_rank);
            printf("step %ld/%d loss %.6g\n", s + 1, o.c.steps, (double)st.loss);
            fflush(stdout);
            if (comm.rank == 0) {
                char who[64] = "";
                if (P > 1) snprintf(who, sizeof who, "process %d of %d: ", d.bad_rank, P);
                fprintf(stderr, "train: step %ld: the %s is %g: %s%s; stopped (%s)\n", s + 1,
                        isfinite(st.loss) ? "gradient norm" : "loss", isfinite(st.loss) ? (double)st.gnorm : (double)st.loss,
                        who, why, kept_note(note, sizeof note, saved_step));
            }
            rc = 1;
            break;
        }
        if (status == TW_ERR_ARG) {
            char why[512];
            find_bad_tensor(why, sizeof why, &t, &m, in, B, T);
            printf("step %ld/%d loss %.6g\n", s + 1, o.c.steps, (double)st.loss);
            fflush(stdout);
            fprintf(stderr, "train: step %ld: the %s is %g: %s; stopped (%s)\n", s + 1,
                    isfinite(st.loss) ? "gradient norm" : "loss", isfinite(st.loss) ? (double)st.gnorm : (double)st.loss,
                    why, kept_note(note, sizeof note, saved_step));
            rc = 1;
            break;
        }
        if (status != TW_OK) die_data("step %ld failed: %s", s + 1, tw_status_str(status));
        curve_train[s] = st.loss;
        if (!skip) {
            printf("step %ld/%d loss %.6g lr %.3e gnorm %.4g tok/s %.0f elapsed %.1fs", s + 1, o.c.steps,
                   (double)st.loss, (double)st.lr, (double)st.gnorm, (double)G * T / (te - ts), te - t0);
            if (P > 1) printf(" mpi-wait %.0f%%", 100.0 * d.wait_seconds / (te - ts));
            printf("\n");
        }
        if (P > 1) interrupted = tw_comm_any(&comm, interrupted);   // a Ctrl-C on any stops all
        const int last = t.step == o.c.steps || (o.stop_after && t.step - first >= o.stop_after);
        if (comm.rank == 0 && n_val >= (long)T * B + 1 && ((o.eval_every && t.step % o.eval_every == 0) || last)) {
            const float vl = eval_loss(&t, &m, val, n_val, B, T, o.eval_batches, in, tg);
            curve_val[s] = vl;
            printf("val loss %.4f ppl %.3f", (double)vl, exp(vl));
            if (val_bytes > 0) printf(" bpb %.4f", (double)vl * (double)val_scored / ((double)val_bytes * log(2.0)));
            if (!isnan(floor_nll))
                printf(" (teacher's floor %.4f, ppl %.3f: %.4f above it)", floor_nll, exp(floor_nll), vl - floor_nll);
            printf("\n");
        }
        if (moe && ((o.eval_every && t.step % o.eval_every == 0) || last)) {
            print_expert_counts(&counts, count_sum, count_from, t.step);
            tw_expert_counts_reset(&counts);
            count_from = t.step + 1;
        }
        if (comm.rank == 0 && o.tokenizer && o.sample_every && (t.step % o.sample_every == 0 || last))
            print_sample(&m, &tok, &sp, 64);
        fflush(stdout);
        if ((o.out || o.state || o.merged) && (last || interrupted || (o.save_every && t.step % o.save_every == 0))) {
            // Never write weights that would only reproduce a NaN: check them on the batch they
            // meet next (a resumed run's first), or on this step's batch at the end.
            // Process 0 checks and writes; ZeRO-1 first gathers the moments' shards for the state.
            char why[512];
            float *gathered = NULL;
            if (dist && o.zero && o.state) {
                gathered = malloc((size_t)m.n_floats * 2 * sizeof *gathered);
                if (!gathered) die_data("out of memory for gathering AdamW's moments");
                if (tw_dist_gather_moments(&d, &t, gathered, gathered + m.n_floats) != TW_OK)
                    die_data("could not gather AdamW's moments");
                t.adam_m = gathered;
                t.adam_v = gathered + m.n_floats;
            }
            int good = comm.rank != 0 || weights_good(why, sizeof why, &t, &m, &batches,
                                                      t.step < o.c.steps ? t.step : s, in, tg, o.state != NULL);
            int wrote = 0;
            if (good && comm.rank == 0) {
                if (o.out && lora) {   // the adapters file (formats/lora_file.h)
                    if (tw_lora_file_write(o.out, &ad, err, sizeof err) != TW_OK) {
                        fprintf(stderr, "train: --out %s\n", err);
                        wrote = -1;
                    }
                } else if (o.out) {
                    wrote = save_model(o.out, &m);
                }
                if (wrote == 0 && o.merged) wrote = save_model(o.merged, &m);   // base + adapters
                if (wrote == 0 && o.state) {
                    const tw_train_progress now = { t.step, t.step * G, pr.shuffle_seed, sp.state, (int)G, T };
                    if (tw_train_state_write(o.state, &now, &m, t.adam_m, t.adam_v, err, sizeof err) != TW_OK) {
                        fprintf(stderr, "train: --state %s\n", err);
                        wrote = -1;
                    }
                }
            }
            if (gathered) { free(gathered); t.adam_m = t.adam_v = NULL; }
            int verdict[2] = { good, wrote };
            if (P > 1) comm.broadcast(&comm, verdict, sizeof verdict, 0);
            if (!verdict[0]) {
                if (comm.rank == 0)
                    fprintf(stderr, "train: step %ld: %s; stopped without saving them (%s)\n", s + 1, why,
                            kept_note(note, sizeof note, saved_step));
                rc = 1;
                break;
            }
            if (verdict[1] != 0) { rc = 1; break; }
            saved_step = t.step;
        }
        if (interrupted) {
            if (comm.rank == 0) fprintf(stderr, "train: interrupted after step %ld: %s\n", t.step,
                    o.out || o.state ? "the weights and state of this step are saved whole" : "nothing written");
            rc = 130;
            break;
        }
        if (last) break;
    }
    if (rc == 0 && o.out) printf("train: wrote %s (%s format)\n", o.out, lora ? "LoRA adapters" :
                                 moe || m.cfg.block.mla_kv_rank > 0 ? "TWMX" : tw_llama2c_can_write(&m, NULL, 0) ? "llama2.c" : "TWMODEL");
    if (rc == 0 && o.merged) printf("train: wrote %s (the base merged with the adapters, %s format)\n", o.merged,
                                    tw_llama2c_can_write(&m, NULL, 0) ? "llama2.c" : "TWMODEL");
    fflush(stdout);
    if (comm.rank == 0 && o.curve && t.step > 0) write_curve(o.curve, curve_train, curve_val, t.step, floor_nll);
    free(in); free(tg); free(curve_train); free(curve_val);
    tw_sampler_free(&sp);
    tw_expert_counts_free(&counts);
    free(count_sum);
    tw_trainer_free(&t);
    tw_dist_free(&d);
    tw_lora_trainer_free(&lt);
    tw_model_state_free(&teacher_s);
    tw_model_free(&teacher);
    tw_lora_set_free(&ad);
    tw_model_free(&base);
    tw_batcher_free(&batches);
    if (o.val) free(val);
    free(mask);
    free(data);
    tw_tokenizer_free(&tok);
    tw_model_free(&m);
    return rc;
}
