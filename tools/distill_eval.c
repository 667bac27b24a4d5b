// distill_eval.c: does a student learn more from a teacher's soft targets than from the hard
// labels alone, at the same budget? (make distill-eval; docs/training.md, distillation.)
// Two copies of one student (the same seeded random initialisation, from scratch) train on the
// same batches of the stories corpus for the same steps with the same schedule: one on the hard
// labels (cross-entropy, tw_train_step), one on the teacher's soft targets as well
// (tw_distill_train_step: a tau^2 KL(teacher_tau || student_tau) + (1 - a) CE). Then the
// validation loss of both, and of the teacher itself (its floor), over the same windows of the
// validation split, and the CPU time each training took.
//   distill_eval TEACHER.bin TRAIN.bin VAL.bin [--steps N] [--alpha a] [--temp tau] [--dim C]
//                [--layers L] [--seed N]
// Defaults: 400 steps, a 1 and tau 1 (the soft targets alone, unsoftened: at 300 steps they did
// better than a 0.5, tau 1 and than a 0.9, tau 2, docs/training.md), seed 1.
// The student is the teacher's architecture (llama2.c's Llama: RMSNorm, RoPE, SwiGLU, its
// vocabulary and tying) made smaller: --dim C (default 32; heads of 8) and --layers L (default 2),
// hidden 8C/3 rounded to a multiple of 4.
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench_clock.h"
#include "cpuinfo.h"
#include "simd/simd.h"
#include "train/batches.h"
#include "train/checkpoint.h"
#include "train/distill.h"
#include "train/forward_backward.h"
#include "train/step.h"
#include "train/tokens.h"

enum { B = 16, T = 64, VAL_BATCHES = 16 };

typedef struct {
    const char *teacher, *train, *val;
    long steps, dim, layers, seed;
    double alpha, temp;
} options;

static void usage_exit(const char *why) {
    fprintf(stderr, "distill_eval: %s\nusage: distill_eval TEACHER.bin TRAIN.bin VAL.bin [--steps N] "
                    "[--alpha a] [--temp tau] [--dim C] [--layers L] [--seed N]\n", why);
    exit(2);
}

// The number a flag's value spells, within [lo, hi]; one line and exit 2 otherwise.
static double number(const char *flag, const char *v, double lo, double hi, int whole) {
    char *end, why[256];
    errno = 0;
    const double x = v ? strtod(v, &end) : NAN;
    if (!v || end == v || *end || errno || !(x >= lo && x <= hi) || (whole && x != floor(x))) {
        snprintf(why, sizeof why, "%s: '%s' is not a%s number in [%g, %g]", flag, v ? v : "(missing)",
                 whole ? " whole" : "", lo, hi);
        usage_exit(why);
    }
    return x;
}

static options parse(int argc, char **argv) {
    options o = { NULL, NULL, NULL, 400, 32, 2, 1, 1.0, 1.0 };
    const char **pos[3] = { &o.teacher, &o.train, &o.val };
    int n_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-') {
            if (n_pos == 3) usage_exit("more than three files given");
            *pos[n_pos++] = a;
            continue;
        }
        if (!strcmp(a, "--steps"))       o.steps = (long)number(a, v, 1, 100000, 1);
        else if (!strcmp(a, "--alpha"))  o.alpha = number(a, v, 0, 1, 0);
        else if (!strcmp(a, "--temp"))   o.temp = number(a, v, 0.05, 100, 0);
        else if (!strcmp(a, "--dim"))    o.dim = (long)number(a, v, 8, 1024, 1);
        else if (!strcmp(a, "--layers")) o.layers = (long)number(a, v, 1, 32, 1);
        else if (!strcmp(a, "--seed"))   o.seed = (long)number(a, v, 1, 1e9, 1);
        else { char why[256]; snprintf(why, sizeof why, "%s: unknown flag", a); usage_exit(why); }
        i++;
    }
    if (n_pos != 3) usage_exit("give the teacher, the training tokens and the validation tokens");
    if (o.dim % 8) usage_exit("--dim: must be a multiple of 8 (heads of 8)");
    return o;
}

static void die(const char *what, tw_status st) {
    fprintf(stderr, "distill_eval: %s: %s\n", what, tw_status_str(st));
    exit(1);
}

// The student: the teacher's configuration with C = dim, L = layers, heads of 8, hidden 8C/3.
static void make_student(tw_model *m, const tw_model_config *teacher, int dim, int layers, long seed) {
    tw_model_config c = *teacher;
    c.n_layer = layers;
    c.max_seq = T;
    c.block.attn.d_model = dim;
    c.block.attn.head_dim = 8;
    c.block.attn.n_head = dim / 8;
    c.block.attn.n_kv_head = dim / 8;
    c.block.ffn_hidden = (8 * dim / 3 + 3) / 4 * 4;
    tw_status st = tw_model_init(m, &c);
    if (st != TW_OK) die("the student", st);
    tw_model_randomize(m, (uint64_t)seed);
}

// The mean loss of m over the first VAL_BATCHES batches of (B, T) windows of val, in file order.
static double val_loss(tw_model_state *s, const tw_model *m, const int *val, long n_val, int *in, int *tg) {
    tw_batcher b;
    tw_status st = tw_batcher_init(&b, val, n_val, B, T, 0, 0);
    if (st != TW_OK) die("the validation tokens", st);
    double sum = 0.0;
    for (int k = 0; k < VAL_BATCHES; k++) {
        float loss;
        tw_batcher_fill(in, tg, &b, k);
        st = tw_model_loss(&loss, s, m, in, tg, B, T);
        if (st != TW_OK) die("the validation loss", st);
        sum += loss;
    }
    tw_batcher_free(&b);
    return sum / VAL_BATCHES;
}

// One line and exit 1 if a token of the file at path is outside a vocabulary of V.
static void check_vocab(const char *path, const int *tokens, long n, int V) {
    for (long i = 0; i < n; i++)
        if (tokens[i] >= V) {
            fprintf(stderr, "distill_eval: %s: token %d at %ld is outside the teacher's vocabulary of %d: "
                            "give tokens of the teacher's tokenizer\n", path, tokens[i], i, V);
            exit(1);
        }
}

int main(int argc, char **argv) {
    const options o = parse(argc, argv);
    char err[512] = "", cpu[256];
    const char *level = tw_simd_init(NULL);
    if (!level) { fprintf(stderr, "distill_eval: no SIMD level\n"); return 1; }
    tw_matmul_set_threads(1);
    tw_model teacher, hard, soft;
    int *train, *val;
    long n_train, n_val;
    if (tw_model_load_file(&teacher, o.teacher, err, sizeof err) != TW_OK ||
        tw_tokens_read(&train, &n_train, o.train, err, sizeof err) != TW_OK ||
        tw_tokens_read(&val, &n_val, o.val, err, sizeof err) != TW_OK) {
        fprintf(stderr, "distill_eval: %s\n", err);
        return 1;
    }
    check_vocab(o.train, train, n_train, teacher.cfg.vocab);
    check_vocab(o.val, val, n_val, teacher.cfg.vocab);
    if (n_val < (long)VAL_BATCHES * B * T + 1) {
        fprintf(stderr, "distill_eval: %s: %ld tokens, fewer than the %d needed for %d validation batches\n",
                o.val, n_val, VAL_BATCHES * B * T + 1, VAL_BATCHES);
        return 1;
    }
    make_student(&hard, &teacher.cfg, (int)o.dim, (int)o.layers, o.seed);
    make_student(&soft, &teacher.cfg, (int)o.dim, (int)o.layers, o.seed);
    tw_trainer th, ts;
    tw_model_state tstate;
    tw_batcher b;
    tw_status st = tw_trainer_init(&th, &hard, T);
    if (st == TW_OK) st = tw_trainer_init(&ts, &soft, T);
    if (st == TW_OK) st = tw_model_state_init(&tstate, &teacher, T, 0);
    if (st == TW_OK) st = tw_batcher_init(&b, train, n_train, B, T, 1, (uint64_t)o.seed);
    if (st != TW_OK) die("the trainers", st);
    int *in = malloc(sizeof(int) * B * T), *tg = malloc(sizeof(int) * B * T);
    if (!in || !tg) die("the batch", TW_ERR_NOMEM);
    // The schedule of ./train's defaults for a model from scratch: warm-up, cosine to a tenth.
    const tw_train_config c = { B, T, (int)o.steps, (int)(o.steps / 20), 3e-3f, 3e-4f, 0.1f, 0.9f,
                                0.95f, 1e-8f, 1.0f };
    double cpu_hard = 0.0, cpu_soft = 0.0;
    tw_train_stats sh, ss;
    for (long s = 0; s < o.steps; s++) {
        tw_batcher_fill(in, tg, &b, s);
        double c0 = cpu_seconds();
        if ((st = tw_train_step(&sh, &th, &hard, in, tg, &c)) != TW_OK) die("a hard-label step", st);
        cpu_hard += cpu_seconds() - c0;
        c0 = cpu_seconds();
        st = tw_distill_train_step(&ss, &ts, &soft, &tstate, &teacher, in, tg, &c, (float)o.alpha,
                                   (float)o.temp);
        if (st != TW_OK) die("a distillation step", st);
        cpu_soft += cpu_seconds() - c0;
    }
    const double v_teacher = val_loss(&tstate, &teacher, val, n_val, in, tg);
    const double v_hard = val_loss(&th.s, &hard, val, n_val, in, tg);
    const double v_soft = val_loss(&ts.s, &soft, val, n_val, in, tg);
    bench_cpu_describe(cpu, sizeof cpu);
    printf("distillation: teacher %s (%ld parameters); student dim %ld, %ld layers, hidden %d "
           "(%ld parameters), seed %ld, from scratch\n", o.teacher, tw_model_count_params(&teacher),
           o.dim, o.layers, hard.cfg.block.ffn_hidden, tw_model_count_params(&hard), o.seed);
    printf("%ld steps of B %d x T %d from %s (%ld tokens), lr 3e-3 cosine to 3e-4, warm-up %d; "
           "validation: %d batches of %s; %s kernels, 1 thread; %s\n", o.steps, B, T, o.train,
           n_train, c.warmup, VAL_BATCHES, o.val, level, cpu);
    printf("| student trained on | val loss (nats/token) | above the teacher's floor | training CPU s |\n");
    printf("|---|---|---|---|\n");
    printf("| hard labels (cross-entropy) | %.4f | %+.4f | %.1f |\n", v_hard, v_hard - v_teacher, cpu_hard);
    printf("| soft targets (a %g, tau %g) | %.4f | %+.4f | %.1f |\n", o.alpha, o.temp, v_soft,
           v_soft - v_teacher, cpu_soft);
    printf("| (the teacher itself: the floor) | %.4f | 0 | |\n", v_teacher);
    printf("soft - hard: %+.4f nats/token (%s)\n", v_soft - v_hard,
           v_soft < v_hard ? "the soft targets did better" : "the soft targets did NOT do better");
    free(in); free(tg); free(train); free(val);
    tw_batcher_free(&b);
    tw_model_state_free(&tstate);
    tw_trainer_free(&th);
    tw_trainer_free(&ts);
    tw_model_free(&hard); tw_model_free(&soft); tw_model_free(&teacher);
    return 0;
}
