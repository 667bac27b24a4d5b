// long_context.c: a model trained at a short context, evaluated at 1x, 2x, 4x and 8x it, with
// plain RoPE and with each scaling of nn/rope_scaling.h (make long-context runs it).
//
//   long_context MODEL.bin VAL_TOKENS.bin OUT_DIR [--tokens N]
//
// MODEL.bin: a ./train output whose max_seq is the context it was trained at (T0).
// VAL_TOKENS.bin: held-out tokens (./train's format, e.g. data/stories/val.bin).
// For each window W = k T0 (k = 1, 2, 4, 8) and each scaling (none, linear, ntk, yarn with factor
// k and original context T0), the model runs over consecutive windows of the validation tokens
// (about N tokens in all, default 16384, no cache) and the mean negative log-likelihood of every
// next token is accumulated by position. Prints perplexity over whole windows and by position
// band, writes OUT_DIR/long_context.dat (columns: position, then one perplexity per scaling at
// W = 4 T0, in bands of T0/4 positions) and OUT_DIR/summary.dat, and checks the goal: at 4 T0, YaRN
// or NTK within 20 % of the trained-length perplexity where plain RoPE is not. Exit 0 when the
// goal holds, 3 when it does not (measured, printed either way), 1 or 2 on bad input.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"
#include "simd/simd.h"
#include "train/tokens.h"
#include "train/checkpoint.h"

enum { N_SCALING = 4, N_K = 4 };
static const int KS[N_K] = { 1, 2, 4, 8 };

// Mean NLL (nats) of next-token prediction by position over windows of W tokens of val.
//   nll_pos: (W - 1) sums, count: windows used
static int evaluate(double *nll_pos, const tw_model *m, const int *val, long n_val, int W,
                    long budget) {
    tw_model_state s;
    if (tw_model_state_init(&s, m, W, 0) != TW_OK) return -1;
    const int V = m->cfg.vocab;
    int windows = 0;
    for (int t = 0; t < W - 1; t++) nll_pos[t] = 0.0;
    for (long start = 0; start + W + 1 <= n_val && (long)windows * W < budget; start += W) {
        if (tw_model_forward(&s, m, val + start, W, 0) != TW_OK) { windows = -1; break; }
        for (int t = 0; t < W - 1; t++) {
            const float *z = s.logits + (size_t)t * V;
            float mx = z[0];
            for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
            double sum = 0.0;
            for (int v = 0; v < V; v++) sum += exp((double)z[v] - mx);
            nll_pos[t] += mx + log(sum) - z[val[start + t + 1]];
        }
        windows++;
    }
    tw_model_state_free(&s);
    for (int t = 0; t < W - 1 && windows > 0; t++) nll_pos[t] /= windows;
    return windows;
}

static double mean(const double *x, int from, int to) {
    double s = 0.0;
    for (int i = from; i < to; i++) s += x[i];
    return s / (to - from);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 6 || (argc == 6 && strcmp(argv[4], "--tokens") != 0) || argc == 5) {
        fprintf(stderr, "usage: long_context MODEL.bin VAL_TOKENS.bin OUT_DIR [--tokens N]\n");
        return 2;
    }
    const long budget = argc == 6 ? atol(argv[5]) : 16384;
    if (budget < 1) { fprintf(stderr, "long_context: --tokens %s: give a positive count\n", argv[5]); return 2; }
    char err[512] = "";
    tw_model m;
    if (tw_model_load_file(&m, argv[1], err, sizeof err) != TW_OK) {
        fprintf(stderr, "long_context: %s (make long-context trains it)\n", err);
        return 1;
    }
    int *val;
    long n_val;
    if (tw_tokens_read(&val, &n_val, argv[2], err, sizeof err) != TW_OK) {
        fprintf(stderr, "long_context: %s (make stories writes it)\n", err);
        return 1;
    }
    tw_simd_init("auto");
    const int T0 = m.cfg.max_seq;
    const tw_model_config trained = m.cfg;
    printf("model %s: trained context T0 = %d, %d layers, C %d, %d heads; %ld validation tokens\n",
           argv[1], T0, m.cfg.n_layer, m.cfg.block.attn.d_model, m.cfg.block.attn.n_head, n_val);
    static const char *const NAMES[N_SCALING] = { "none", "linear", "ntk", "yarn" };
    double ppl[N_K][N_SCALING];
    double *bands4[N_SCALING] = { 0 };
    const int W4 = 4 * T0, band = T0 / 4 > 0 ? T0 / 4 : 1, n_bands4 = (W4 - 1 + band - 1) / band;
    printf("\nperplexity over whole windows of W tokens (positions 1 .. W-1)\n%8s", "W");
    for (int j = 0; j < N_SCALING; j++) printf(" %10s", NAMES[j]);
    printf("\n");
    for (int ki = 0; ki < N_K; ki++) {
        const int W = KS[ki] * T0;
        printf("%5d=%dx", W, KS[ki]);
        double *nll = malloc((size_t)W * sizeof *nll);
        if (!nll) return 1;
        for (int j = 0; j < N_SCALING; j++) {
            m.cfg = trained;
            if (KS[ki] > 1 && j > 0 &&
                tw_model_config_set_rope_scaling(&m.cfg, (tw_rope_scaling_kind)j, (float)KS[ki], T0,
                                                 1 << 20) != TW_OK) {
                fprintf(stderr, "long_context: the model has no RoPE to scale\n");
                return 1;
            }
            if (m.cfg.max_seq < W) m.cfg.max_seq = W;
            const int windows = evaluate(nll, &m, val, n_val, W, budget);
            if (windows <= 0) { fprintf(stderr, "long_context: too few validation tokens for W = %d\n", W); return 1; }
            ppl[ki][j] = exp(mean(nll, 0, W - 1));
            printf(" %10.3f", ppl[ki][j]);
            fflush(stdout);
            if (KS[ki] == 4) {
                bands4[j] = malloc((size_t)n_bands4 * sizeof(double));
                if (!bands4[j]) return 1;
                for (int b = 0; b < n_bands4; b++) {
                    const int hi = (b + 1) * band < W - 1 ? (b + 1) * band : W - 1;
                    bands4[j][b] = exp(mean(nll, b * band, hi));
                }
            }
        }
        printf("\n");
        free(nll);
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/long_context.dat", argv[3]);
    FILE *f = fopen(path, "w");
    if (!f) { fprintf(stderr, "long_context: cannot write %s (does the folder exist?)\n", path); return 1; }
    fprintf(f, "# perplexity by position band (%d positions) at W = 4 x T0 = %d; T0 = %d\n", band, W4, T0);
    fprintf(f, "# position none linear ntk yarn\n");
    printf("\nperplexity by position at W = %d (4 x T0), bands of %d positions\n%10s", W4, band, "positions");
    for (int j = 0; j < N_SCALING; j++) printf(" %10s", NAMES[j]);
    printf("\n");
    for (int b = 0; b < n_bands4; b++) {
        fprintf(f, "%d", b * band + band / 2);
        printf("%4d..%-5d", b * band, (b + 1) * band - 1);
        for (int j = 0; j < N_SCALING; j++) {
            fprintf(f, " %.6f", bands4[j][b]);
            printf(" %10.3f", bands4[j][b]);
        }
        fprintf(f, "\n");
        printf("\n");
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/summary.dat", argv[3]);
    f = fopen(path, "w");
    if (!f) { fprintf(stderr, "long_context: cannot write %s\n", path); return 1; }
    fprintf(f, "# whole-window perplexity; T0 = %d\n# k none linear ntk yarn\n", T0);
    for (int ki = 0; ki < N_K; ki++)
        fprintf(f, "%d %.6f %.6f %.6f %.6f\n", KS[ki], ppl[ki][0], ppl[ki][1], ppl[ki][2], ppl[ki][3]);
    fclose(f);
    const double base = ppl[0][0], lim = 1.2 * base;
    const int plain_bad = ppl[2][0] > lim, yarn_ok = ppl[2][3] <= lim, ntk_ok = ppl[2][2] <= lim;
    printf("\ngoal at 4x: trained-length perplexity %.3f, limit +20%% = %.3f\n", base, lim);
    printf("  plain RoPE %.3f: %s\n", ppl[2][0], plain_bad ? "beyond the limit" : "within (!)");
    printf("  ntk        %.3f: %s\n", ppl[2][2], ntk_ok ? "within" : "beyond");
    printf("  yarn       %.3f: %s\n", ppl[2][3], yarn_ok ? "within" : "beyond");
    const int goal = plain_bad && (yarn_ok || ntk_ok);
    printf("goal (YaRN or NTK within 20%% where plain RoPE is not): %s\n", goal ? "met" : "NOT met");
    for (int j = 0; j < N_SCALING; j++) free(bands4[j]);
    free(val);
    tw_model_free(&m);
    return goal ? 0 : 3;
}
