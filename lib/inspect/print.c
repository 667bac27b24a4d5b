// print.c: looking at tensors: a printed matrix with elision, and a gnuplot-readable labelled
// matrix file. These are the only lib/ functions that produce output, and only where told.
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "inspect/print.h"
#include "formats/atomic_file.h"

// ---- printing ----

// Indices shown when n items are elided to at most max: the first ceil(max/2) and the last
// floor(max/2). Returns how many are shown at the head; *tail_start is where the tail resumes.
static int elide(int n, int max, int *tail_start) {
    if (n <= max) { *tail_start = n; return n; }
    int head = (max + 1) / 2;
    *tail_start = n - max / 2;
    return head;
}

static void print_row(FILE *f, const float *row, int cols, int max_cols) {
    int tail;
    int head = elide(cols, max_cols, &tail);
    for (int j = 0; j < head; j++) fprintf(f, " %9.4f", row[j]);
    if (tail < cols) fprintf(f, " %9s", "...");
    for (int j = tail; j < cols; j++) fprintf(f, " %9.4f", row[j]);
    fputc('\n', f);
}

void tw_print_matrix(FILE *f, const char *name, const float *x, int rows, int cols,
                     int max_rows, int max_cols) {
    if (max_rows <= 0) max_rows = 8;
    if (max_cols <= 0) max_cols = 8;
    fprintf(f, "%s (%d, %d)\n", name ? name : "matrix", rows, cols);
    int tail;
    int head = elide(rows, max_rows, &tail);
    for (int i = 0; i < head; i++) print_row(f, x + (size_t)i * cols, cols, max_cols);
    if (tail < rows) fprintf(f, " %9s\n", "...");
    for (int i = tail; i < rows; i++) print_row(f, x + (size_t)i * cols, cols, max_cols);
}

// ---- gnuplot matrix files ----

// gnuplot splits data lines on whitespace except inside "...", and it has no escape for '"'
// inside such a string (a backslash does not protect it). So the quoted label never contains a
// raw '"': it becomes \x22, like every control byte (\xHH), and '\' becomes \\ so the escapes
// stay unambiguous. Bytes >= 0x80 (UTF-8) are kept as they are. An escape is never cut in half:
// if out is too small the label is truncated before it, and the closing quote is always written.
void tw_quote_label(char *out, size_t out_len, const char *s) {
    if (out_len == 0) return;
    if (out_len < 3) { out[0] = '\0'; return; }   // no room even for ""
    size_t n = 0;
    out[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        char esc[8];
        if (*p == '"' || *p < 0x20 || *p == 0x7f) snprintf(esc, sizeof esc, "\\x%02x", *p);
        else if (*p == '\\') snprintf(esc, sizeof esc, "\\\\");
        else { esc[0] = (char)*p; esc[1] = '\0'; }
        size_t k = strlen(esc);
        if (n + k + 2 > out_len) break;           // keep room for the closing quote and NUL
        memcpy(out + n, esc, k);
        n += k;
    }
    out[n++] = '"';
    out[n] = '\0';
}

static void write_label(FILE *f, const char *const *labels, int i) {
    char buf[512], idx[16];
    const char *s = labels ? labels[i] : NULL;
    if (!s) { snprintf(idx, sizeof idx, "%d", i); s = idx; }
    tw_quote_label(buf, sizeof buf, s);
    fputs(buf, f);
}

// Each line of comment becomes one '#' line, so a multi-line comment cannot leak into the data.
static void write_comment(FILE *f, const char *comment) {
    if (!comment) return;
    const char *line = comment;
    for (;;) {
        const char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        fprintf(f, "# %.*s\n", len, line);
        if (!nl || nl[1] == '\0') break;
        line = nl + 1;
    }
}

tw_status tw_write_labelled_matrix(const char *path, const float *x, int rows, int cols,
                                   const char *const *row_labels, const char *const *col_labels,
                                   const char *comment) {
    if (rows < 0 || cols < 0) return TW_ERR_ARG;
    tw_atomic_file af;
    tw_status st = tw_atomic_open(&af, path, "w");
    if (st != TW_OK) return st;
    FILE *f = af.f;
    write_comment(f, comment);
    // Header row: gnuplot skips its first field (the corner above the row labels).
    fputs("\"\"", f);
    for (int j = 0; j < cols; j++) { fputc(' ', f); write_label(f, col_labels, j); }
    fputc('\n', f);
    for (int i = 0; i < rows; i++) {
        write_label(f, row_labels, i);
        for (int j = 0; j < cols; j++) fprintf(f, " %.9g", x[(size_t)i * cols + j]);  // %.9g round-trips a float
        fputc('\n', f);
    }
    return tw_atomic_commit(&af, 1);
}
