// Lesson 5: positional encodings: sinusoidal, learned, and rotary (RoPE).
//
// Teaches: attention by itself cannot tell word order, so position must be added. The 2017
// sinusoidal table (a picture of it), a learned table (GPT-2), and RoPE, which instead rotates
// each 2-D pair of a query and a key by an angle proportional to the position, so that the score
// q.k depends only on the distance m - n (printed for several m, n). The two pairings in use,
// adjacent (2i, 2i+1) and halves (i, i + D/2), agree after permuting the dimensions. Base 10000
// against 1e6: the frequencies and wavelengths (a picture).
// Calls: tw_posenc_sinusoidal, tw_posenc_learned_add, tw_embedding_forward,
//        tw_rope_adjacent_forward, tw_rope_halves_forward, tw_rope_freq, tw_print_matrix.
// Build & run: make lesson5 && ./lesson5 [--seed N] [-T N] [--out DIR] [--no-plot]
// Plot:        gnuplot viz/05_sinusoidal.gp      (reads out/lesson5/sinusoidal.dat)
//              gnuplot viz/05_rope_freqs.gp      (reads out/lesson5/rope_freqs.dat)
// Writes: sinusoidal.npy sinusoidal.dat learned_x.npy rope_q.npy rope_k.npy rope_scores.npy
// Writes: rope_freqs.npy rope_freqs.dat
// Pictures: sinusoidal.png rope_freqs.png
#include <math.h>
#include <string.h>
#include "lesson.h"

static const double PI = 3.14159265358979323846;

static const lesson_info INFO = {
    5, "Positional encodings: sinusoidal, learned and RoPE",
    "Self-attention compares every token with every other and adds up the results: shuffle the "
    "input and the outputs shuffle the same way, so without help the model cannot tell \"dog bites "
    "man\" from \"man bites dog\". This lesson builds the 2017 sinusoidal table and draws it, adds a "
    "learned table as GPT-2 does, and then shows rotary embeddings (RoPE): each pair of dimensions "
    "of q and k is rotated by position * frequency, and the printed scores prove that q.k depends "
    "only on the distance m - n. It checks that the two pairings used in practice (adjacent pairs "
    "as in Meta's Llama, split halves as in Hugging Face) agree once the dimensions are permuted, "
    "and compares the frequencies of base 10000 and base 1e6 (Qwen3)."
};

static float dot(const float *a, const float *b, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return (float)s;
}

// The score of query q at position m with key k at position n, after RoPE (one head).
static float rope_score(const float *q, const float *k, int D, int m, int n, float theta,
                        int halves, float *qbuf, float *kbuf) {
    memcpy(qbuf, q, (size_t)D * sizeof(float));
    memcpy(kbuf, k, (size_t)D * sizeof(float));
    if (halves) {
        tw_rope_halves_forward(qbuf, 1, 1, D, m, theta);
        tw_rope_halves_forward(kbuf, 1, 1, D, n, theta);
    } else {
        tw_rope_adjacent_forward(qbuf, 1, 1, D, m, theta);
        tw_rope_adjacent_forward(kbuf, 1, 1, D, n, theta);
    }
    return dot(qbuf, kbuf, D);
}

// Positions m and n of the RoPE score table (sections 4 and 5).
static const int MN[][2] = { { 3, 0 }, { 10, 7 }, { 100, 97 }, { 1000, 997 },
                             { 0, 3 }, { 7, 10 }, { 5, 0 }, { 505, 500 } };
enum { NMN = 8, Cl = 4, NF = 64 };   // score rows; learned-table width; RoPE pairs at D = 128

// What the sections share (tracked memory).
typedef struct {
    int T, C, D;        // sinusoidal table (T, C); RoPE head size D
    float base;         // RoPE base of sections 3-5
    float *pe;          // (T, C) the sinusoidal table
    float *xl;          // (4, Cl) token embeddings plus learned positions
    float *q, *k;       // (D) a query and a key
    float *scores;      // (NMN, 3) m, n, q.k after RoPE
    float *freqs;       // (NF, 5) pair, frequencies and wavelengths at base 1e4 and 1e6
} encodings;

// 1. The 2017 sinusoidal table: dot products depend on the distance only.
static void sinusoidal_table(encodings *e) {
    lesson_section("The 2017 sinusoidal table");
    const int T = e->T, C = e->C;
    lesson_say("Vaswani et al. (section 3.5) add a fixed table to the embeddings: column 2i of "
               "row p is sin(p / 10000^(2i/C)) and column 2i+1 is cos of the same angle. Column "
               "pair 0 turns once every 2*pi = 6.3 positions; the last pair (i = %d) once every "
               "2*pi*10000^(%d/%d) = %.0f positions. Each position gets a unique pattern of "
               "fast and slow waves, like the hands of a clock.", C / 2 - 1, C - 2, C,
               2 * PI * pow(10000.0, (double)(C - 2) / C));
    float *pe = lesson_alloc((long)T * C);                              // (T, C)
    tw_posenc_sinusoidal(pe, T, C, 0);
    lesson_print_matrix("pe (rows: positions, columns: dimensions)", pe, T, C);
    float pe_max = 0.0f;
    for (long i = 0; i < (long)T * C; i++) pe_max = fmaxf(pe_max, fabsf(pe[i]));
    lesson_expect("every entry lies in [-1, 1]", pe_max <= 1.0f);
    lesson_say("Dot products between encodings depend on the distance only, not on where you "
               "are: PE(p) . PE(p+k) is a sum of cos(k * frequency) terms.");
    if (T > 40) {
        printf("  PE(0).PE(4) = %.4f   PE(10).PE(14) = %.4f   PE(30).PE(34) = %.4f\n",
               (double)dot(pe, pe + 4 * C, C), (double)dot(pe + 10 * C, pe + 14 * C, C),
               (double)dot(pe + 30 * C, pe + 34 * C, C));
        printf("  PE(0).PE(1) = %.4f   PE(0).PE(8)   = %.4f   PE(0).PE(40)  = %.4f\n",
               (double)dot(pe, pe + C, C), (double)dot(pe, pe + 8 * C, C),
               (double)dot(pe, pe + 40 * C, C));
        lesson_expect_near("PE(0).PE(4) == PE(30).PE(34)", dot(pe, pe + 4 * C, C),
                           dot(pe + 30 * C, pe + 34 * C, C), 1e-4);
        lesson_note("nearby positions have similar encodings (large dot product) and the "
                    "similarity falls off with distance, whatever the starting position.");
    }
    e->pe = pe;
}

// 2. GPT-2's learned positions: another embedding lookup, indexed by position.
static void learned_positions(encodings *e, uint64_t seed) {
    lesson_section("Learned positions (GPT-2)");
    lesson_say("GPT-2 instead learns a table wpe of shape (max_positions, C) = (1024, 768) and "
               "adds row p to the token embedding at position p. It is just another embedding "
               "lookup, indexed by position instead of token id. Its limit is hard: there is no "
               "row 1024, so GPT-2 cannot read a longer text. Here with a tiny random table:");
    enum { V = 8, P = 8 };
    float *tok = lesson_randn(V * Cl, 1.0f, seed), *wpe = lesson_randn(P * Cl, 0.5f, seed + 1);
    const int ids[4] = { 3, 1, 3, 1 };
    float *xl = lesson_alloc(4 * Cl);                                   // (4, Cl)
    LESSON_TRY(tw_embedding_forward(xl, ids, tok, 4, V, Cl));
    lesson_print_matrix("token embeddings of ids [3 1 3 1]", xl, 4, Cl);
    tw_posenc_learned_add(xl, wpe, 4, Cl, 0);
    lesson_print_matrix("after adding wpe[0..3]", xl, 4, Cl);
    lesson_note("token 3 at position 0 and token 3 at position 2 are now different vectors: "
                "the model can tell them apart.");
    float diff = 0.0f;
    for (int c = 0; c < Cl; c++) diff = fmaxf(diff, fabsf(xl[c] - xl[2 * Cl + c]));
    lesson_expect("same token at two positions differs after adding positions", diff > 1e-3f);
    e->xl = xl;
}

// 3. RoPE rotates each pair of a head's dimensions by position x frequency.
static void rope_rotates_pairs(const encodings *e) {
    lesson_section("RoPE: rotate each pair of dimensions by position x frequency");
    const int D = e->D;
    const float base = e->base;
    lesson_say("RoPE (Su et al. 2021) adds nothing to the embeddings. Inside attention it rotates "
               "each query and key: the D = %d numbers of a head form D/2 = %d pairs, and pair i of "
               "a vector at position p is rotated by the angle p * base^(-2i/D). Take the 2-D "
               "vector (1, 0) as pair 0 (frequency 1 radian per position):", D, D / 2);
    for (int p = 0; p < 4; p++) {
        float v[2] = { 1.0f, 0.0f };
        tw_rope_adjacent_forward(v, 1, 1, 2, p, base);
        printf("  position %d: (%7.4f, %7.4f)   angle %d rad, length %.6f\n", p, (double)v[0],
               (double)v[1], p, sqrt((double)v[0] * v[0] + (double)v[1] * v[1]));
    }
    lesson_note("a rotation never changes a vector's length, only its direction.");
}

// 4. After RoPE the score q.k depends only on the distance m - n.
static void score_depends_on_distance(encodings *e, uint64_t seed) {
    lesson_section("The score q.k depends only on the distance m - n");
    const int D = e->D;
    const float base = e->base;
    float *q = lesson_randn(D, 1.0f, seed + 2), *k = lesson_randn(D, 1.0f, seed + 3);
    float *qb = lesson_alloc(D), *kb = lesson_alloc(D);
    lesson_print_vector("q", q, D);
    lesson_print_vector("k", k, D);
    lesson_say("Put q at position m and k at position n, rotate both, take the dot product. "
               "Rotating q by angle m*w and k by n*w leaves their dot product changed by the "
               "difference (m - n)*w only, pair by pair. Without RoPE q.k = %.4f everywhere.",
               (double)dot(q, k, D));
    float *scores = lesson_alloc(NMN * 3);                              // (8, 3): m, n, score
    printf("  %6s %6s %6s   %10s\n", "m", "n", "m - n", "q.k");
    for (int i = 0; i < NMN; i++) {
        float s = rope_score(q, k, D, MN[i][0], MN[i][1], base, 0, qb, kb);
        printf("  %6d %6d %6d   %10.6f\n", MN[i][0], MN[i][1], MN[i][0] - MN[i][1], (double)s);
        scores[i * 3 + 0] = (float)MN[i][0];
        scores[i * 3 + 1] = (float)MN[i][1];
        scores[i * 3 + 2] = s;
    }
    float same3[4] = { scores[2], scores[5], scores[8], scores[11] };
    float first3[4] = { scores[2], scores[2], scores[2], scores[2] };
    // rotations are computed in float from double angles: a few float ulps of a score near 1
    lesson_expect_close("q.k equal for (3,0) (10,7) (100,97) (1000,997)", same3, first3, 4, 1e-5f);
    lesson_expect("distance -3 gives a different score than +3", fabsf(scores[14] - scores[2]) > 1e-3f);
    lesson_note("the same distance gives the same score anywhere in the text, and the sign of "
                "the distance matters: looking 3 back is not looking 3 ahead. That is a relative "
                "position signal built into the score itself.");
    e->q = q;
    e->k = k;
    e->scores = scores;
}

// 5. Adjacent pairs (Meta) and split halves (Hugging Face): the same rotation, permuted.
static void two_pairings(const encodings *e) {
    const int D = e->D;
    const float base = e->base, *q = e->q, *k = e->k;
    float *qb = lesson_alloc(D), *kb = lesson_alloc(D);
    lesson_section("Adjacent pairs or split halves: the same thing, permuted");
    lesson_say("Meta's Llama code (and llama2.c) pairs dimensions (0,1), (2,3), ...; Hugging Face "
               "pairs (0, D/2), (1, D/2+1), ... (\"rotate_half\"). Pair i has the same frequency in "
               "both. Move dimension 2i to slot i and 2i+1 to slot i + D/2, and the adjacent "
               "layout becomes the halves layout. Converting a Meta checkpoint to Hugging Face "
               "applies exactly this permutation to the rows of Wq and Wk.");
    float *qh = lesson_alloc(D), *kh = lesson_alloc(D);                 // permuted copies
    for (int i = 0; i < D / 2; i++) {
        qh[i] = q[2 * i];  qh[i + D / 2] = q[2 * i + 1];
        kh[i] = k[2 * i];  kh[i + D / 2] = k[2 * i + 1];
    }
    lesson_print_vector("q (adjacent layout)", q, D);
    lesson_print_vector("q permuted to the halves layout", qh, D);
    float adj[4], hal[4], wrong[4];
    for (int i = 0; i < 4; i++) {
        adj[i] = rope_score(q, k, D, MN[i][0] + 2, MN[i][1], base, 0, qb, kb);
        hal[i] = rope_score(qh, kh, D, MN[i][0] + 2, MN[i][1], base, 1, qb, kb);
        wrong[i] = rope_score(q, k, D, MN[i][0] + 2, MN[i][1], base, 1, qb, kb);
        printf("  m %4d n %4d:  adjacent %9.6f   halves on permuted q,k %9.6f   halves on "
               "unpermuted q,k %9.6f\n", MN[i][0] + 2, MN[i][1], (double)adj[i], (double)hal[i],
               (double)wrong[i]);
    }
    lesson_expect_close("adjacent scores == halves scores after the permutation", hal, adj, 4, 1e-5f);
    float wd = 0.0f;
    for (int i = 0; i < 4; i++) wd = fmaxf(wd, fabsf(wrong[i] - adj[i]));
    lesson_expect("without the permutation the scores differ", wd > 1e-3f);
    lesson_note("mixing the two conventions without permuting the weights is a classic bug: "
                "nothing crashes, the scores are simply wrong.");
}

// 6. Frequencies and wavelengths of the pairs at base 10000 and 1e6.
static void two_bases(encodings *e) {
    lesson_section("Frequencies: base 10000 against base 1e6");
    const int Dq = 128;
    lesson_say("With head size D = %d (Llama 2, Qwen3-8B) there are %d pairs. Pair i turns by "
               "base^(-2i/D) radians per position, so it repeats every 2*pi*base^(2i/D) positions "
               "(its wavelength). Llama 2 uses base 10000; Qwen3 uses 1e6, which slows the slow "
               "pairs down a lot more and keeps distant positions distinguishable over long "
               "contexts.", Dq, Dq / 2);
    float *freqs = lesson_alloc(NF * 5);                                // (64, 5)
    for (int i = 0; i < NF; i++) {
        float f1 = tw_rope_freq(i, Dq, 1e4f), f2 = tw_rope_freq(i, Dq, 1e6f);
        float row[5] = { (float)i, f1, f2, (float)(2 * PI / f1), (float)(2 * PI / f2) };
        memcpy(freqs + i * 5, row, sizeof row);
    }
    printf("  %5s   %14s %14s   %16s %16s\n", "pair", "freq 1e4", "freq 1e6", "wavelength 1e4",
           "wavelength 1e6");
    static const int SHOW[] = { 0, 1, 8, 16, 32, 48, 63 };
    for (size_t j = 0; j < sizeof SHOW / sizeof SHOW[0]; j++) {
        const float *r = freqs + SHOW[j] * 5;
        printf("  %5d   %14.6g %14.6g   %16.1f %16.1f\n", SHOW[j], (double)r[1], (double)r[2],
               (double)r[3], (double)r[4]);
    }
    lesson_expect_near("pair 0 turns 1 radian per position in both", freqs[1], 1.0, 0.0);
    lesson_expect_near("last pair, base 1e4: wavelength 2*pi*1e4^(126/128)",
                       freqs[63 * 5 + 3], 2 * PI * pow(1e4, 126.0 / 128), 1.0);
    lesson_say("The fastest pair is the same in both (1 radian per position); the slowest pair "
               "repeats after %.0f positions with base 1e4 but %.0f with base 1e6. A claim you may meet "
               "calls the larger base \"NTK-aware scaling\"; strictly, NTK-aware scaling is a trick "
               "that raises the base of an already trained model at inference time, without "
               "retraining. Qwen3's rope_theta of 1e6 is the base it was trained with, so "
               "nothing is rescaled when it runs.", (double)freqs[63 * 5 + 3],
               (double)freqs[63 * 5 + 4]);
    e->freqs = freqs;
}

// The tables as .npy; the sinusoidal table and the frequencies for gnuplot.
static void write_files(const encodings *e) {
    const int T = e->T, C = e->C, D = e->D;
    const float *pe = e->pe, *xl = e->xl, *q = e->q, *k = e->k, *scores = e->scores, *freqs = e->freqs;
    lesson_section("Files");
    lesson_write_npy2("sinusoidal.npy", pe, T, C);
    float *grid = lesson_alloc((long)T * C * 3);                       // (T*C, 3)
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) {
            float *g = grid + ((long)t * C + c) * 3;
            g[0] = (float)t; g[1] = (float)c; g[2] = pe[t * C + c];
        }
    static const char *const GCOLS[3] = { "position", "dimension", "value" };
    lesson_write_columns("sinusoidal.dat", grid, T * C, 3, GCOLS,
                         "lesson 5: sinusoidal positional encoding, one line per (position, "
                         "dimension); even dimensions are sines, odd ones cosines");
    lesson_write_npy2("learned_x.npy", xl, 4, Cl);
    lesson_write_npy2("rope_q.npy", q, D, 0);
    lesson_write_npy2("rope_k.npy", k, D, 0);
    lesson_write_npy2("rope_scores.npy", scores, NMN, 3);
    lesson_write_npy2("rope_freqs.npy", freqs, NF, 5);
    static const char *const FCOLS[5] = { "pair", "freq_base1e4", "freq_base1e6",
                                          "wavelength_base1e4", "wavelength_base1e6" };
    lesson_write_columns("rope_freqs.dat", freqs, NF, 5, FCOLS,
                         "lesson 5: RoPE frequency base^(-2i/D) (radians per position) and "
                         "wavelength 2*pi/frequency (positions), D = 128");
    lesson_plot("05_sinusoidal.gp", "sinusoidal.dat", "sinusoidal.png");
    lesson_plot("05_rope_freqs.gp", "rope_freqs.dat", "rope_freqs.png");
}

int main(int argc, char **argv) {
    lesson_args a = lesson_start(argc, argv, &INFO, (lesson_args){ .seed = 5, .T = 64 }, NULL);
    encodings e = { .T = a.T, .C = 64, .D = 8, .base = 10000.0f };
    sinusoidal_table(&e);
    learned_positions(&e, a.seed);
    rope_rotates_pairs(&e);
    score_depends_on_distance(&e, a.seed);
    two_pairings(&e);
    two_bases(&e);
    write_files(&e);
    lesson_say("Try it: make exercise7 (RoPE, adjacent pairing)");
    return lesson_finish();
}
