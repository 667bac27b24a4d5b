// print.h: helpers that let a learner look at tensors: print a small matrix with its shape, and
// write a labelled text matrix that gnuplot reads with `matrix rowheaders columnheaders`.
#ifndef TW_INSPECT_H
#define TW_INSPECT_H
#include <stdio.h>
#include "core/status.h"

// Prints "name (rows, cols)" then the matrix, eliding the middle of large ones (at most max_rows
// rows and max_cols columns are shown; 0 means a default of 8).
//   x: (rows, cols)
void tw_print_matrix(FILE *f, const char *name, const float *x, int rows, int cols,
                     int max_rows, int max_cols);

// Writes x as text for gnuplot: optional '#' comment lines (comment may hold several lines, or be
// NULL), then a header row of column labels, then one row per line starting with its label.
// Labels are written in double quotes with '"' and '\\' escaped and control bytes shown as \xHH,
// so token strings such as "\n" or a lone quote cannot break the file. Labels may be NULL, in
// which case the row/column index is used. Written to a temporary file and renamed into place.
// ('"' is written as \x22, since gnuplot has no escape for a quote inside a quoted field; '\' as
// \\. gnuplot's enhanced text shows \x22 as "x22": `set termoption noenhanced` shows it as is.)
//   x: (rows, cols)   row_labels: (rows)   col_labels: (cols)
tw_status tw_write_labelled_matrix(const char *path, const float *x, int rows, int cols,
                                   const char *const *row_labels, const char *const *col_labels,
                                   const char *comment);

// Quotes s for a gnuplot data file into out (out_len bytes, always NUL-terminated).
void tw_quote_label(char *out, size_t out_len, const char *s);

#endif
