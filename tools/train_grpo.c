// train_grpo.c: ./train --grpo, reinforcement learning from a reward computed in C (group relative
// policy optimisation, lib/train/grpo.h; the rewards, lib/train/reward.h). See docs/grpo.md.
//
//   ./train --init data/models/stories260K.bin -z data/models/tok512.bin --grpo --reward contains
//           --reward-word dog --grpo-group 8 --grpo-prompts 2 --steps 30 --lr 1e-3
//
// Each step: for each of --grpo-prompts prompts (grpo_prompt below), --grpo-group completions are
// sampled from the current policy (seeded: the same flags give the same samples), decoded and
// scored by the reward; the rewards become group advantages, and one AdamW update follows
// (tw_grpo_train_step: one update per batch of samples, so the ratio is 1 at the step). The
// reference of the KL penalty is the --init model, frozen. Prints per step: the loss, the mean
// reward, the KL to the reference and the share of groups with any signal.
// --grpo-dump DIR writes every step's samples and rewards as .npy files; --grpo-replay DIR trains
// on such files instead of sampling (how tests/golden/gen_grpo.py's PyTorch run is compared).
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "decode/sampler.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "formats/lora_file.h"
#include "formats/npy.h"
#include "formats/same_file.h"
#include "simd/simd.h"
#include "tokenize/special.h"
#include "tokenize/tokenizer.h"
#include "train/chat_template.h"
#include "train/checkpoint.h"
#include "train/grpo.h"
#include "train/grpo_replay.h"
#include "train/reward.h"
#include "train/step.h"

int train_grpo_main(int argc, char **argv);

static void usage(FILE *f) {
    fprintf(f,
        "usage: ./train --init MODEL.bin --grpo (-z TOK.bin | --grpo-replay DIR) [options]\n"
        "GRPO: sample, score with a reward, update (docs/grpo.md)\n"
        "  --grpo-group G       completions per prompt (default 4)\n"
        "  --grpo-prompts P     prompts per step (default 2): a step trains on P x G completions\n"
        "  --grpo-clip EPS      clip range of the ratio (default 0.2)\n"
        "  --grpo-beta BETA     weight of the k3 KL penalty to the --init model (default 0.04)\n"
        "  --grpo-temp TAU      sampling temperature, also that of the log-probs (default 1)\n"
        "  --grpo-len N         most new tokens per completion (default 48; the model's context caps it)\n"
        "  --reward NAME        contains (default: 1 if WORD is in the completion), count (how many\n"
        "                       times: can be gamed) or length (1 - |words - N| / N)\n"
        "  --reward-word WORD   the word of contains and count (default dog)\n"
        "  --reward-length N    the target of length, in words (default 20)\n"
        "  --grpo-eval K        before and after training: K completions of every prompt from a fixed\n"
        "                       seed, their mean reward and the KL to the reference (default 0: none)\n"
        "  --grpo-dump DIR      write every step's samples and rewards (tokens.npy, prompt_len.npy,\n"
        "                       len.npy, rewards.npy)\n"
        "  --grpo-replay DIR    train on such files instead of sampling (no -z needed)\n"
        "optimisation: --steps N (default 20) --lr LR (1e-3) --min-lr LR (= lr) --warmup W (0)\n"
        "  --weight-decay WD (0) --beta1 B1 (0.9) --beta2 B2 (0.95) --eps E (1e-8) --clip NORM (1)\n"
        "  --seed N (1)   --simd LEVEL   --out FILE.bin (the trained policy)\n"
        "LoRA: --lora R (adapters on the frozen --init model, which is also the reference; --out then\n"
        "  writes the adapters file), --lora-alpha A (default R), --lora-targets LIST (default wq,wv),\n"
        "  --lora-init FILE (start from these adapters)\n");
}

static void die_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "train: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (./train --grpo -h for usage)\n");
    va_end(ap);
    exit(2);
}

static void die_data(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "train: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

typedef struct {
    const char *init, *tokenizer, *out, *dump, *replay, *simd, *word;
    int reward, reward_length, len, prompts, eval;
    int lora_r;                                    // 0: no LoRA
    float lora_alpha;                              // 0: = r
    const char *lora_targets, *lora_init;
    long long seed;
    tw_grpo_config g;
    tw_train_config c;
} grpo_options;

static double parse_num(const char *flag, const char *s, double lo, double hi) {
    char *end;
    errno = 0;
    const double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !isfinite(v) || v < lo || v > hi)
        die_usage("%s: '%s' must be a number from %g to %g", flag, s, lo, hi);
    return v;
}

static long parse_count(const char *flag, const char *s, long lo, long hi) {
    const double v = parse_num(flag, s, (double)lo, (double)hi);
    if (v != floor(v)) die_usage("%s: '%s' must be a whole number from %ld to %ld", flag, s, lo, hi);
    return (long)v;
}

static grpo_options parse_args(int argc, char **argv) {
    grpo_options o;
    memset(&o, 0, sizeof o);
    o.word = "dog";
    o.reward_length = 20;
    o.len = 48;
    o.prompts = 2;
    o.seed = 1;
    o.g = (tw_grpo_config){ 4, 0.2f, 0.04f, 1.0f, 1e-4f };
    o.c = (tw_train_config){ 0, 0, 20, 0, 1e-3f, -1.0f, 0.0f, 0.9f, 0.95f, 1e-8f, 1.0f };
    int word_given = 0, length_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--grpo")) continue;
        if (i + 1 >= argc) die_usage("flag '%s' needs a value", a);
        const char *v = argv[++i];
        if (!strncmp(v, "--", 2)) die_usage("flag '%s' needs a value (got the flag '%s')", a, v);
        if (v[0] == '\0') die_usage("%s: the value is empty", a);
        if      (!strcmp(a, "--init"))          o.init = v;
        else if (!strcmp(a, "-z"))              o.tokenizer = v;
        else if (!strcmp(a, "--out"))           o.out = v;
        else if (!strcmp(a, "--grpo-dump"))     o.dump = v;
        else if (!strcmp(a, "--grpo-replay"))   o.replay = v;
        else if (!strcmp(a, "--simd"))          o.simd = v;
        else if (!strcmp(a, "--grpo-group"))    o.g.G = (int)parse_count(a, v, 1, 1024);
        else if (!strcmp(a, "--grpo-prompts"))  o.prompts = (int)parse_count(a, v, 1, 1024);
        else if (!strcmp(a, "--grpo-clip"))     o.g.eps = (float)parse_num(a, v, 0.0, 10.0);
        else if (!strcmp(a, "--grpo-beta"))     o.g.beta = (float)parse_num(a, v, 0.0, 1e3);
        else if (!strcmp(a, "--grpo-temp"))     o.g.tau = (float)parse_num(a, v, 1e-3, 100.0);
        else if (!strcmp(a, "--grpo-len"))      o.len = (int)parse_count(a, v, 1, TW_LLAMA2C_MAX_SEQ);
        else if (!strcmp(a, "--grpo-eval"))     o.eval = (int)parse_count(a, v, 0, 10000);
        else if (!strcmp(a, "--reward-word"))   { o.word = v; word_given = 1; }
        else if (!strcmp(a, "--reward-length")) { o.reward_length = (int)parse_count(a, v, 1, 100000); length_given = 1; }
        else if (!strcmp(a, "--reward")) {
            o.reward = tw_reward_from_name(v);
            if (o.reward < 0) die_usage("--reward: '%s' is not a reward: use contains, count or length", v);
        }
        else if (!strcmp(a, "--steps"))   o.c.steps = (int)parse_count(a, v, 1, 1000000);
        else if (!strcmp(a, "--warmup"))  o.c.warmup = (int)parse_count(a, v, 0, 1000000);
        else if (!strcmp(a, "--lr"))      o.c.lr = (float)parse_num(a, v, 1e-12, 10.0);
        else if (!strcmp(a, "--min-lr"))  o.c.min_lr = (float)parse_num(a, v, 0.0, 10.0);
        else if (!strcmp(a, "--weight-decay")) o.c.weight_decay = (float)parse_num(a, v, 0.0, 10.0);
        else if (!strcmp(a, "--beta1"))   o.c.beta1 = (float)parse_num(a, v, 0.0, 0.999999);
        else if (!strcmp(a, "--beta2"))   o.c.beta2 = (float)parse_num(a, v, 0.0, 0.999999);
        else if (!strcmp(a, "--eps"))     o.c.eps = (float)parse_num(a, v, 1e-30, 1.0);
        else if (!strcmp(a, "--clip"))    o.c.clip = (float)parse_num(a, v, 0.0, FLT_MAX);
        else if (!strcmp(a, "--seed"))    o.seed = parse_count(a, v, 0, 2000000000L);
        else if (!strcmp(a, "--lora"))    o.lora_r = (int)parse_count(a, v, 1, TW_LORA_MAX_R);
        else if (!strcmp(a, "--lora-alpha")) o.lora_alpha = (float)parse_num(a, v, 1e-6, 1e6);
        else if (!strcmp(a, "--lora-targets")) o.lora_targets = v;
        else if (!strcmp(a, "--lora-init")) o.lora_init = v;
        else die_usage("--grpo: unknown or unsupported flag '%s'", a);
    }
    if (!o.init) die_usage("--grpo trains a model: give it with --init FILE.bin");
    if (!o.tokenizer && !o.replay) die_usage("--grpo samples text to score: give its tokenizer with -z TOK.bin (or --grpo-replay DIR)");
    if (o.replay && (o.dump || o.eval)) die_usage("--grpo-replay: --grpo-dump and --grpo-eval sample; drop them");
    if (o.eval && !o.tokenizer) die_usage("--grpo-eval needs -z TOK.bin");
    if (word_given && o.reward == TW_REWARD_LENGTH) die_usage("--reward-word: the length reward has no word; give --reward-length N");
    if (length_given && o.reward != TW_REWARD_LENGTH) die_usage("--reward-length needs --reward length");
    if (o.c.warmup > o.c.steps) die_usage("--warmup: longer than --steps");
    if (o.c.min_lr < 0.0f) o.c.min_lr = o.c.lr;
    if (!o.lora_r && !o.lora_init && (o.lora_alpha > 0.0f || o.lora_targets))
        die_usage("--lora-alpha and --lora-targets need --lora R");
    if (o.lora_init && (o.lora_r || o.lora_alpha > 0.0f || o.lora_targets))
        die_usage("--lora-init: the file sets r, alpha and the targets; give no --lora, --lora-alpha or --lora-targets");
    return o;
}

// ---- the prompts ----

// Prompt 0 is the instruction set's, "a story about WORD" (tw_sft_prompt, train/chat_template.h);
// the others are openings of stories, "%s" the reward's word. With a tokenizer that holds the
// chat template's special tokens (make sft-data's tok.bin) each is asked in the template,
// BOS <|user|>TEXT<|assistant|>, and an answer stops at <|end|>; with a plain one (tok512), as
// plain text after BOS (tw_chat_prompt_encode).
static const char *const PROMPTS[] = {
    NULL,   // tw_sft_prompt
    "Once upon a time, there was a little girl. She wanted a %s",
    "Tom saw a %s",
    "Once upon a time",
};
#define N_PROMPTS ((int)(sizeof PROMPTS / sizeof PROMPTS[0]))

// Prompt i (mod the list) for the reward's word, encoded with BOS: its token count, or -1 if it
// needs more than max tokens.   tokens: (max)
static int grpo_prompt(int *tokens, int max, const tw_tokenizer *tok, int i, const char *word) {
    char text[512];
    const char *form = PROMPTS[i % N_PROMPTS];
    if (form ? snprintf(text, sizeof text, form, word) >= (int)sizeof text : tw_sft_prompt(text, sizeof text, word) < 0)
        return -1;
    const int cap = (int)(tw_tokenizer_max_tokens(text) + strlen(TW_CHAT_USER TW_CHAT_ASSISTANT));   // the template's room
    int *tmp = malloc((size_t)cap * sizeof *tmp), n = 0;
    if (!tmp || tw_chat_prompt_encode(tmp, &n, cap, tok, text) != TW_OK || n > max) {
        free(tmp);
        return -1;
    }
    memcpy(tokens, tmp, (size_t)n * sizeof *tmp);
    free(tmp);
    return n;
}

// ---- the reward of one completion ----

// The decoded completion tokens[start .. len) (special tokens, BOS and <|end|> alike, decode to
// nothing).   text: (cap)
static void decode(char *text, size_t cap, const tw_tokenizer *tok, const int *tokens, int start, int len) {
    size_t n = 0;
    text[0] = '\0';
    for (int t = start; t < len; t++) {
        if (tokens[t] <= 2) continue;
        const char *piece = tw_tokenizer_decode(tok, tokens[t - 1], tokens[t]);
        if (tok->n_special > 0 && tw_special_name_ok(piece)) continue;
        const size_t k = strlen(piece);
        if (n + k + 1 > cap) break;
        memcpy(text + n, piece, k + 1);
        n += k;
    }
}

static float reward_of(const grpo_options *o, const char *text) {
    switch (o->reward) {
    case TW_REWARD_COUNT:  return tw_reward_count(text, o->word);
    case TW_REWARD_LENGTH: return tw_reward_length(text, o->reward_length);
    default:               return tw_reward_contains(text, o->word);
    }
}

// ---- samples ----

// Samples batch b's n = P x G completions for step s and scores them.
static void sample_batch(tw_grpo_batch *b, long s, const grpo_options *o, const tw_tokenizer *tok,
                         tw_model_state *cs, const tw_model *m, tw_sampler *sp, char *text, size_t cap) {
    for (int p = 0; p < o->prompts; p++) {
        int prompt[512];
        const int pl = grpo_prompt(prompt, b->T_max - 1, tok, (int)(s * o->prompts + p), o->word);
        if (pl < 0) die_data("--grpo: prompt %d does not fit the model's context with room to answer", p);
        for (int g = 0; g < o->g.G; g++) {
            const int i = p * o->g.G + g;
            int *tk = b->tokens + (size_t)i * b->T_max;
            memcpy(tk, prompt, (size_t)pl * sizeof *tk);
            if (tw_grpo_sample_until(&b->len[i], tk, pl, b->T_max, cs, m, sp, tw_chat_end_token(tok)) != TW_OK)
                die_data("--grpo: sampling failed");
            b->prompt_len[i] = pl;
            decode(text, cap, tok, tk, pl, b->len[i]);
            b->rewards[i] = reward_of(o, text);
        }
    }
}

// Mean reward and mean k3 KL to the reference (per token, averaged per completion) of K samples
// of every prompt from a fixed seed, so that before and after compare the same draws of u.
static void evaluate(const char *when, const grpo_options *o, const tw_tokenizer *tok, tw_model_state *cs,
                     const tw_model *m, tw_model_state *s, tw_model_state *rs, const tw_model *ref, int T_max) {
    tw_sampler sp;
    if (tw_sampler_init(&sp, m->cfg.vocab, o->g.tau, 1.0f, 0x5eed5eedULL) != TW_OK) die_data("out of memory for the sampler");
    int *tk = malloc((size_t)T_max * sizeof *tk);
    float *lp = malloc((size_t)T_max * 2 * sizeof *lp);
    char *text = malloc(8192);
    if (!tk || !lp || !text) die_data("out of memory for the evaluation");
    double reward = 0.0, kl = 0.0;
    long n = 0;
    for (int p = 0; p < N_PROMPTS; p++)
        for (int k = 0; k < o->eval; k++, n++) {
            const int pl = grpo_prompt(tk, T_max - 1, tok, p, o->word);
            int len;
            if (pl < 0 || tw_grpo_sample_until(&len, tk, pl, T_max, cs, m, &sp, tw_chat_end_token(tok)) != TW_OK)
                die_data("--grpo-eval: sampling failed");
            decode(text, 8192, tok, tk, pl, len);
            reward += reward_of(o, text);
            if (k == 0) {   // the first completion of each prompt, on one line
                for (char *c = text; *c; c++) if (*c == '\n') *c = ' ';
                printf("grpo-eval %s: prompt %d: %s\n", when, p, text);
            }
            if (tw_model_forward(s, m, tk, len, 0) != TW_OK ||
                tw_completion_logprobs(lp, s->logits, tk, len, m->cfg.vocab, pl, o->g.tau) != TW_OK ||
                tw_model_forward(rs, ref, tk, len, 0) != TW_OK ||
                tw_completion_logprobs(lp + T_max, rs->logits, tk, len, m->cfg.vocab, pl, o->g.tau) != TW_OK)
                die_data("--grpo-eval: forward failed");
            double k3 = 0.0;
            for (int t = 0; t < len - pl; t++) {
                const double x = (double)lp[T_max + t] - lp[t];
                k3 += exp(x) - x - 1.0;
            }
            kl += k3 / (len - pl);
        }
    printf("grpo-eval %s: mean reward %.4f over %ld completions (%d prompts x %d), KL to the reference %.5f nats/token (k3)\n",
           when, reward / n, n, N_PROMPTS, o->eval, kl / n);
    fflush(stdout);
    free(tk); free(lp); free(text);
    tw_sampler_free(&sp);
}

// mkdir -p of path (all of it when whole, else the folders above its last component), without a
// shell; one line and exit 1 if a folder cannot be made. Run before training, so that an output
// that cannot be written stops the run before it starts.
static void make_dirs(const char *flag, const char *path, int whole) {
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) die_usage("%s: the path is too long", flag);
    if (!whole) {
        char *last = strrchr(dir, '/');
        if (last == NULL || last == dir) return;
        *last = '\0';
    }
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            const char c = *p;
            *p = '\0';
            struct stat sb;
            if (mkdir(dir, 0777) != 0 && (errno != EEXIST || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
                die_data("%s %s: cannot make the folder %s: %s", flag, path, dir, errno == EEXIST ? "a file has that name" : strerror(errno));
            *p = c;
            if (c == '\0') break;
        }
    }
}

static void write_dump(const char *dir, const int32_t *tk, const int32_t *pl, const int32_t *ln, const float *rw,
                       long steps, int n, int T_max) {
    char path[4200];
    const long s3[3] = { steps, n, T_max }, s2[2] = { steps, n };
    tw_status st;
    snprintf(path, sizeof path, "%s/tokens.npy", dir);
    st = tw_npy_write_i32(path, tk, s3, 3);
    snprintf(path, sizeof path, "%s/prompt_len.npy", dir);
    if (st == TW_OK) st = tw_npy_write_i32(path, pl, s2, 2);
    snprintf(path, sizeof path, "%s/len.npy", dir);
    if (st == TW_OK) st = tw_npy_write_i32(path, ln, s2, 2);
    snprintf(path, sizeof path, "%s/rewards.npy", dir);
    if (st == TW_OK) st = tw_npy_write_f32(path, rw, s2, 2);
    if (st != TW_OK) die_data("--grpo-dump %s: cannot write: %s", path, tw_status_str(st));
    printf("train: wrote the samples of %ld steps to %s\n", steps, dir);
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int train_grpo_main(int argc, char **argv) {
    grpo_options o = parse_args(argc, argv);
    const char *level = tw_simd_init(o.simd);
    if (level == NULL) die_usage("--simd: level '%s' is not available here", o.simd ? o.simd : getenv("TW_SIMD"));
    char err[512] = "";
    if (o.out && (tw_same_file(o.out, o.init) == 1 || (o.tokenizer && tw_same_file(o.out, o.tokenizer) == 1) ||
                  (o.lora_init && tw_same_file(o.out, o.lora_init) == 1)))
        die_usage("--out %s: is an input; give another path", o.out);
    if (o.dump) make_dirs("--grpo-dump", o.dump, 1);
    if (o.out) make_dirs("--out", o.out, 0);
    tw_model m, ref;
    if (tw_model_load_file(&m, o.init, err, sizeof err) != TW_OK) die_data("--init %s", err);
    if (tw_model_load_file(&ref, o.init, err, sizeof err) != TW_OK) die_data("--init %s", err);
    // LoRA: ref is the frozen base; m becomes base + adapters (train/lora_step.h).
    const int lora = o.lora_r || o.lora_init;
    tw_lora_set ad;
    memset(&ad, 0, sizeof ad);
    if (lora) {
        if (o.lora_init) {
            if (tw_lora_file_load(&ad, o.lora_init, &ref.cfg, err, sizeof err) != TW_OK) die_data("--lora-init %s", err);
        } else {
            int targets[TW_LORA_N_KINDS], n_targets = 0;
            if (tw_lora_targets_parse(targets, &n_targets, o.lora_targets ? o.lora_targets : "wq,wv", err, sizeof err) != TW_OK)
                die_usage("--lora-targets: %s", err);
            const tw_status e = tw_lora_set_init(&ad, &ref.cfg, o.lora_r, o.lora_alpha > 0.0f ? o.lora_alpha : (float)o.lora_r,
                                                 targets, n_targets);
            if (e == TW_ERR_SHAPE) die_usage("--lora-targets: the --init model has no w3 (its FFN is not SwiGLU)");
            if (e != TW_OK) die_data("out of memory for the adapters");
            tw_lora_set_randomize(&ad, (uint64_t)o.seed);
        }
        if (tw_lora_refresh(&m, &ref, &ad) != TW_OK) die_data("--init %s: the adapters do not fit the model", o.init);
    }
    tw_tokenizer tok = { 0 };
    if (o.tokenizer && tw_tokenizer_load(&tok, o.tokenizer, m.cfg.vocab, err, sizeof err) != TW_OK)
        die_data("-z %s", err);
    const int n = o.prompts * o.g.G;
    tw_grpo_replay rp;
    memset(&rp, 0, sizeof rp);
    int T_max = m.cfg.max_seq;
    if (o.replay) {
        if (tw_grpo_replay_read(&rp, o.replay, n, m.cfg.vocab, m.cfg.max_seq, err, sizeof err) != TW_OK)
            die_data("--grpo-replay %s", err);
        T_max = rp.T_max;
        if (o.c.steps > rp.steps) die_usage("--steps %d: --grpo-replay %s holds %ld steps", o.c.steps, o.replay, rp.steps);
    } else {
        int longest = 0, buf[512];
        for (int p = 0; p < N_PROMPTS; p++) {
            const int pl = grpo_prompt(buf, 511, &tok, p, o.word);
            if (pl > longest) longest = pl;
        }
        if (longest + o.len < T_max) T_max = longest + o.len;
        if (longest < 1 || longest >= T_max) die_data("--grpo: the prompts do not fit the model's context of %d", m.cfg.max_seq);
    }
    tw_trainer t;
    tw_lora_trainer lt;
    memset(&lt, 0, sizeof lt);
    if (lora && tw_lora_trainer_init(&lt, &ad, &m.cfg) != TW_OK) die_data("out of memory for the adapters' optimizer");
    tw_model_state rs, cs;
    if (tw_trainer_init(&t, &m, T_max) != TW_OK || tw_model_state_init(&rs, &ref, T_max, 0) != TW_OK ||
        tw_model_state_init(&cs, &m, T_max, T_max) != TW_OK)
        die_data("out of memory for the training state");
    tw_grpo_batch b = { n, T_max, calloc((size_t)n * T_max, sizeof(int)), calloc((size_t)n, sizeof(int)),
                        calloc((size_t)n, sizeof(int)), calloc((size_t)n, sizeof(float)) };
    const size_t cap = 8192;
    char *text = malloc(cap);
    int32_t *dump_tk = NULL, *dump_pl = NULL, *dump_ln = NULL;
    float *dump_rw = NULL;
    if (o.dump) {
        dump_tk = calloc((size_t)o.c.steps * n * T_max, sizeof *dump_tk);
        dump_pl = calloc((size_t)o.c.steps * n, sizeof *dump_pl);
        dump_ln = calloc((size_t)o.c.steps * n, sizeof *dump_ln);
        dump_rw = calloc((size_t)o.c.steps * n, sizeof *dump_rw);
        if (!dump_tk || !dump_pl || !dump_ln || !dump_rw) die_data("out of memory for --grpo-dump");
    }
    if (!b.tokens || !b.prompt_len || !b.len || !b.rewards || !text) die_data("out of memory for the samples");
    tw_sampler sp = { 0 };
    if (!o.replay && tw_sampler_init(&sp, m.cfg.vocab, o.g.tau, 1.0f, (uint64_t)o.seed + 1) != TW_OK)
        die_data("out of memory for the sampler");

    printf("train: GRPO on %s: %ld parameters, V %d, max_seq %d; %d prompts x %d completions a step, up to %d "
           "tokens each; clip %g, beta %g, temperature %g; %s kernels\n", o.init, tw_model_count_params(&m),
           m.cfg.vocab, m.cfg.max_seq, o.prompts, o.g.G, T_max, (double)o.g.eps, (double)o.g.beta,
           (double)o.g.tau, level);
    if (lora) {
        printf("train: LoRA r %d, alpha %g on", ad.r, (double)ad.alpha);
        for (int i = 0; i < ad.n_targets; i++) printf("%s%s", i ? "," : " ", tw_lora_target_name(ad.targets[i]));
        printf(": %ld trainable parameters; the reference is the base without them\n", ad.n_floats);
    }
    if (o.replay) printf("train: samples and rewards replayed from %s\n", o.replay);
    else if (o.reward == TW_REWARD_LENGTH) printf("train: reward length: 1 - |words - %d| / %d, at least 0\n", o.reward_length, o.reward_length);
    else printf("train: reward %s '%s'%s\n", o.reward == TW_REWARD_COUNT ? "count of" : "contains", o.word,
                o.reward == TW_REWARD_COUNT ? " (can be gamed by repeating it)" : ": 1 if the completion has it, else 0");
    fflush(stdout);
    if (o.eval) evaluate("before", &o, &tok, &cs, &m, &t.s, &rs, &ref, T_max);

    const double t0 = now_seconds();
    const clock_t c0 = clock();
    for (long s = 0; s < o.c.steps; s++) {
        if (o.replay) {
            const tw_grpo_batch r = tw_grpo_replay_batch(&rp, s);
            memcpy(b.tokens, r.tokens, (size_t)n * T_max * sizeof(int));
            memcpy(b.prompt_len, r.prompt_len, (size_t)n * sizeof(int));
            memcpy(b.len, r.len, (size_t)n * sizeof(int));
            memcpy(b.rewards, r.rewards, (size_t)n * sizeof(float));
        } else {
            memset(b.tokens, 0, (size_t)n * T_max * sizeof(int));
            sample_batch(&b, s, &o, &tok, &cs, &m, &sp, text, cap);
        }
        if (o.dump) {
            for (long i = 0; i < (long)n * T_max; i++) dump_tk[s * n * T_max + i] = b.tokens[i];
            for (int i = 0; i < n; i++) {
                dump_pl[s * n + i] = b.prompt_len[i];
                dump_ln[s * n + i] = b.len[i];
                dump_rw[s * n + i] = b.rewards[i];
            }
        }
        tw_grpo_stats st;
        const tw_status e = lora ? tw_grpo_lora_train_step(&st, &lt, &t, &m, &ref, &ad, &rs, &ref, &b, &o.g, &o.c)
                                 : tw_grpo_train_step(&st, &t, &m, &rs, &ref, &b, &o.g, &o.c);
        if (e == TW_ERR_ARG) die_data("step %ld: the loss or the gradient norm is not finite (loss %g, gnorm %g); stopped, nothing written",
                                      s + 1, (double)st.loss, (double)st.gnorm);
        if (e != TW_OK) die_data("step %ld failed: %s", s + 1, tw_status_str(e));
        printf("step %ld/%d loss %.6g reward %.4f kl %.6g signal %.2f lr %.3e gnorm %.4g elapsed %.1fs\n", s + 1,
               o.c.steps, (double)st.loss, (double)st.reward, (double)st.kl, (double)st.signal, (double)st.lr,
               (double)st.gnorm, now_seconds() - t0);
        fflush(stdout);
    }
    printf("train: %d steps in %.1f s (%.1f s of CPU time on one thread)\n", o.c.steps, now_seconds() - t0,
           (double)(clock() - c0) / CLOCKS_PER_SEC);
    if (o.eval) evaluate("after", &o, &tok, &cs, &m, &t.s, &rs, &ref, T_max);
    if (o.dump) write_dump(o.dump, dump_tk, dump_pl, dump_ln, dump_rw, o.c.steps, n, T_max);
    int rc = 0;
    if (o.out && lora) {
        if (tw_lora_file_write(o.out, &ad, err, sizeof err) != TW_OK) { fprintf(stderr, "train: --out %s\n", err); rc = 1; }
        else printf("train: wrote %s (LoRA adapters)\n", o.out);
    } else if (o.out) {
        const tw_status e = tw_llama2c_can_write(&m, NULL, 0) ? tw_llama2c_write(o.out, &m, err, sizeof err)
                                                              : tw_checkpoint_write(o.out, &m, err, sizeof err);
        if (e != TW_OK) { fprintf(stderr, "train: --out %s\n", err); rc = 1; }
        else printf("train: wrote %s\n", o.out);
    }
    free(dump_tk); free(dump_pl); free(dump_ln); free(dump_rw);
    free(b.tokens); free(b.prompt_len); free(b.len); free(b.rewards); free(text);
    tw_grpo_replay_free(&rp);
    tw_sampler_free(&sp);
    tw_model_state_free(&rs);
    tw_model_state_free(&cs);
    tw_trainer_free(&t);
    tw_lora_trainer_free(&lt);
    tw_lora_set_free(&ad);
    tw_tokenizer_free(&tok);
    tw_model_free(&ref);
    tw_model_free(&m);
    return rc;
}
