// lesson.h: the small helpers every numbered lesson uses, so a lesson's main() reads like the
// lesson text: parse the common options, print section headers and narrative, show matrices with
// their shapes, dump tensors (.npy) and gnuplot-ready text into out/lessonN/, render a picture
// when gnuplot is installed, check claims, and free every tracked allocation at the end.
//
// This is lesson scaffolding, not library code: it prints and exits (lib/ never does). It holds
// one piece of process-wide state (the current lesson: its number, output folder, allocations,
// failed checks), which is fine for a program with one main().
//
// Conventions a lesson follows (tests/test_lessons.c relies on them):
//   - The file is lessons/NN_topic.c and builds ./lessonN (no leading zero).
//   - Its header comment has a line "// Writes: a.npy b.dat ..." naming every file it writes into
//     its output folder (several such lines are allowed), and "// Pictures: a.png ..." for the PNGs
//     it renders when gnuplot is installed. "// Needs: path ..." names input files that must exist
//     (lesson 11's model). The test runs the lesson and checks each of these files.
//   - Every .npy it writes is identical from run to run (put timings in .dat or .txt files only).
//   - It exits with lesson_finish()'s value: 0, or 1 when a self-check failed.
#ifndef LESSON_H
#define LESSON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "tw.h"

// ---- options ----

// The options every lesson understands; lessons pick their own defaults.
typedef struct {
    uint64_t    seed;     // --seed N     random inputs and weights
    int         T;        // -T N         sequence length, where a lesson has one
    const char *out_dir;  // --out DIR    where files go (default out/lessonN)
    int         plot;     // --no-plot    sets 0: do not run gnuplot even if installed
    int         no_seed;  // set by a lesson with no random inputs: --seed is then not offered
} lesson_args;

// An extra option of one lesson. kind: 'i' int, 'f' float, 's' string, 'b' flag (sets *int 1).
// Arrays of options end with an entry whose flag is NULL.
typedef struct {
    const char *flag;     // e.g. "--temperature" or "-n"
    char        kind;
    void       *dest;     // int*, float*, const char** or int*
    const char *metavar;  // e.g. "X" (NULL for 'b')
    const char *help;     // one line
} lesson_opt;

// What --help prints: the lesson's number, title and a paragraph saying what it teaches.
typedef struct {
    int         number;
    const char *title;
    const char *teaches;
} lesson_info;

// Parses argv. Prints --help and exits 0; on a bad option prints one line to stderr and exits 2.
// Then creates the output folder (exit 1 with a message if it cannot) and prints the banner.
lesson_args lesson_start(int argc, char **argv, const lesson_info *info, lesson_args defaults,
                         const lesson_opt *extra);

// ---- printing: narrative, not a log ----

void lesson_section(const char *title);           // "1. Title" with a rule under it
void lesson_say(const char *fmt, ...)             // a paragraph, word-wrapped at 92 columns
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void lesson_note(const char *fmt, ...)            // "  > the point to notice", indented
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
// Prints "name (rows, cols)" and the matrix (tw_print_matrix, at most 8x8 shown).
void lesson_print_matrix(const char *name, const float *x, int rows, int cols);
// The same with explicit limits on the rows and columns shown.
void lesson_print_matrix_n(const char *name, const float *x, int rows, int cols,
                           int max_rows, int max_cols);
void lesson_print_vector(const char *name, const float *x, int n);   // one row, up to 12 shown
// Attention weights under a causal mask, x: (rows, cols) with the last query row at the last key:
// a masked cell (key s after query t) prints as "-", so it cannot be mistaken for a real 0.0000.
// At most 8 x 8 shown, elided like lesson_print_matrix.
void lesson_print_causal(const char *name, const float *x, int rows, int cols);

// A token's piece with its spaces visible, as lesson 1 shows them: '_' for ' ', \n for a newline
// (a tracked string).
const char *lesson_visible_piece(const char *piece);
// Prints the same in brackets, e.g. "[_the]", to stdout (nothing allocated).
void lesson_print_piece(const char *piece);
// Token id of tok as every lesson shows it: its vocabulary piece, spaces visible (lesson 1
// explains the display once). Not the decoded text: decoding drops the space of the first piece
// after BOS, which showed one token two ways and the lone-space piece as an empty "[]".
// An id outside the vocabulary gives "?" (a tracked string).
const char *lesson_token(const tw_tokenizer *tok, int id);

// ---- memory: tracked, freed by lesson_finish ----

float *lesson_alloc(long n);                      // n zeroed floats; exits 1 if out of memory
void  *lesson_alloc_bytes(size_t bytes);          // zeroed
float *lesson_randn(long n, float std, uint64_t seed);        // N(0, std^2), from tw_rng
float *lesson_uniform(long n, float lo, float hi, uint64_t seed);
char  *lesson_strdup(const char *s);

// ---- files in the output folder ----

// "DIR/name" in a tracked buffer.
const char *lesson_path(const char *name);
// Writes a float32 .npy of the given shape (ndim <= 8), or int32 for _i32.
void lesson_write_npy(const char *name, const float *x, const long *shape, int ndim);
void lesson_write_npy_i32(const char *name, const int32_t *x, const long *shape, int ndim);
// Convenience: a (rows, cols) float32 matrix (cols 0 writes a 1-D array of rows).
void lesson_write_npy2(const char *name, const float *x, long rows, long cols);
// A matrix with row and column labels for gnuplot's `matrix rowheaders columnheaders`
// (tw_write_labelled_matrix). Labels may be NULL (indices are used).
void lesson_write_matrix_dat(const char *name, const float *x, int rows, int cols,
                             const char *const *row_labels, const char *const *col_labels,
                             const char *comment);
// Plain columns for gnuplot's `using 1:2`: '#' comment lines, a '#' line of column names, then one
// row per line. x: (rows, cols). A row of NULL col_names writes c1 c2 ...
void lesson_write_columns(const char *name, const float *x, int rows, int cols,
                          const char *const *col_names, const char *comment);
// Any text file (e.g. a story, a table), written whole or not at all.
void lesson_write_text(const char *name, const char *text);

// ---- pictures ----

// Renders viz/<script> with gnuplot, passing datafile='DIR/<datafile>' and
// outfile='DIR/<png>'. If gnuplot is not installed (or --no-plot was given) it prints the exact
// command to run instead. A failed render is reported but never fails the lesson: gnuplot is
// optional.
void lesson_plot(const char *script, const char *datafile, const char *png);
// The same with extra gnuplot assignments, e.g. "maptitle='layer 2, head 5'" (no double quotes).
void lesson_plot_ex(const char *script, const char *datafile, const char *png, const char *extra);

// ---- self-checks ----

// Passes when max |got - want| <= tol over n values (NaN never passes). Prints one line either
// way; a failure makes lesson_finish return 1.
int lesson_expect_close(const char *name, const float *got, const float *want, long n, float tol);
int lesson_expect_near(const char *name, double got, double want, double tol);   // scalars
int lesson_expect(const char *name, int ok);                                     // any claim

// ---- timing ----

double lesson_seconds(void);   // a monotonic clock, in seconds

// ---- the real model ----

// Loads a llama2.c checkpoint into *m and its tokenizer (with the model's vocabulary size) into
// *tok, or stops the lesson with the loader's message and "(run `make model` first)"; the caller
// frees both (tw_tokenizer_free, tw_model_free).
void lesson_load_model(tw_model *m, tw_tokenizer *tok, const char *model_path, const char *tok_path);

// ---- the end ----

// Lists the files written, frees every tracked allocation, and returns the exit code
// (0, or 1 if a check failed). `return lesson_finish();` ends main().
int lesson_finish(void);

// Stops the lesson with a one-line message and exit code 1 (for data errors, e.g. a missing
// model). Tracked memory is released.
void lesson_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

// Calls a lib function that returns tw_status and stops the lesson with the call's text, the
// status and a hint if it fails.
#define LESSON_TRY(expr) do {                                                          \
    tw_status st_ = (expr);                                                            \
    if (st_ != TW_OK)                                                                  \
        lesson_die("%s:%d: %s failed: %s%s", __FILE__, __LINE__, #expr,                \
                   tw_status_str(st_),                                                 \
                   st_ == TW_ERR_IO ? " (hint: run `make model`, or check --out)" : ""); \
} while (0)

#endif
