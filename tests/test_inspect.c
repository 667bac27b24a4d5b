// test_inspect.c: tw_print_matrix (shape line, elision) and the gnuplot matrix writer (label
// quoting, header layout, values that read back exactly, atomic write).
#define _POSIX_C_SOURCE 200809L   // getpid, for temporary file names unique to this process
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"

static const int SIZES[] = { 1, 3, 7, 64, 65 };

// Reads all of f (rewound) into a NUL-terminated malloc'd string.
static char *read_all(FILE *f) {
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    ck_assert(s != NULL);
    ck_assert_int_eq((long)fread(s, 1, (size_t)n, f), n);
    s[n] = '\0';
    return s;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += (*s == '\n');
    return n;
}

// A rows x cols matrix with max 4 shown each way prints the shape line, min(rows, 4) rows (+1
// "..." row if elided), and each row holds min(cols, 4) numbers (+ "..." if elided).
START_TEST(print_matrix_shows_shape_and_elides_the_middle)
{
    const int rows = SIZES[_i], cols = SIZES[(_i + 3) % 5];
    float *x = tt_zeros((long)rows * cols);
    for (int j = 0; j < rows * cols; j++) x[j] = (float)j;
    FILE *f = tmpfile();
    ck_assert(f != NULL);
    tw_print_matrix(f, "scores", x, rows, cols, 4, 4);
    char *s = read_all(f);
    fclose(f);
    char head[64];
    snprintf(head, sizeof head, "scores (%d, %d)\n", rows, cols);
    ck_assert_msg(strncmp(s, head, strlen(head)) == 0, "first line of:\n%s", s);
    int shown_rows = rows > 4 ? 5 : rows;
    ck_assert_int_eq(count_lines(s), 1 + shown_rows);
    ck_assert_int_eq(strstr(s, "...") != NULL, rows > 4 || cols > 4);
    // The first and the last element are always shown.
    char last[32];
    snprintf(last, sizeof last, "%.4f\n", (double)(rows * cols - 1));
    ck_assert(strstr(s, "0.0000") != NULL);
    ck_assert_msg(strstr(s, last) != NULL, "last element %s missing from:\n%s", last, s);
    free(s); free(x);
}
END_TEST

// Labels: '"' and control bytes become \xHH, '\' becomes \\, other bytes (UTF-8 too) pass through.
START_TEST(quote_label_escapes_quotes_backslashes_and_control_bytes)
{
    static const struct { const char *in, *out; } CASES[] = {
        { "the", "\"the\"" },            { " a b ", "\" a b \"" },
        { "a\"b", "\"a\\x22b\"" },       { "c:\\x", "\"c:\\\\x\"" },
        { "\n", "\"\\x0a\"" },           { "\t\x7f", "\"\\x09\\x7f\"" },
        { "caf\xc3\xa9", "\"caf\xc3\xa9\"" }, { "", "\"\"" },
    };
    char buf[64];
    for (int k = 0; k < 8; k++) {
        tw_quote_label(buf, sizeof buf, CASES[k].in);
        ck_assert_str_eq(buf, CASES[k].out);
    }
    tw_quote_label(buf, sizeof buf, NULL);
    ck_assert_str_eq(buf, "\"\"");
}
END_TEST

// A short buffer truncates the label but never splits an escape or drops the closing quote.
START_TEST(quote_label_truncates_without_breaking_the_quoting)
{
    char buf[9];
    tw_quote_label(buf, sizeof buf, "abcdefghij");
    ck_assert_str_eq(buf, "\"abcdef\"");
    tw_quote_label(buf, 8, "ab\ncd");     // "ab\x0a" with quotes needs 8 bytes + NUL: the escape goes
    ck_assert_str_eq(buf, "\"ab\"");
    tw_quote_label(buf, 9, "ab\ncd");     // exactly enough room for it
    ck_assert_str_eq(buf, "\"ab\\x0a\"");
    tw_quote_label(buf, 3, "abc");
    ck_assert_str_eq(buf, "\"\"");
}
END_TEST

// Splits a data line the way gnuplot does: whitespace-separated, "..." as one field (no escapes).
static int split_fields(char *line, char **fields, int max) {
    int n = 0;
    char *p = line;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p || *p == '\n') break;
        char *start = p;
        if (*p == '"') { p++; while (*p && *p != '"') p++; if (*p) p++; }
        else while (*p && *p != ' ' && *p != '\n') p++;
        if (n < max) fields[n] = start;
        n++;
        if (*p) *p++ = '\0';
    }
    return n;
}

START_TEST(labelled_matrix_parses_as_gnuplot_reads_it)
{
    enum { R = 3, C = 4 };
    float x[R * C];
    for (int j = 0; j < R * C; j++) x[j] = (float)(j - 5) / 3.0f;   // values that need %.9g
    const char *rows[R] = { "the", "a \"quoted\" word", "line\nbreak" };
    const char *cols[C] = { "x", "back\\slash", NULL, " " };
    char path[512];
    tt_tmp_path(path, sizeof path, "inspect", "labelled.dat");
    ck_assert_int_eq(tw_write_labelled_matrix(path, x, R, C, rows, cols, "attention weights\nrows: query"), TW_OK);
    FILE *f = fopen(path, "r");
    ck_assert(f != NULL);
    char line[1024], *fields[16];
    int data_rows = 0, header_seen = 0, comments = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') { comments++; continue; }
        int n = split_fields(line, fields, 16);
        ck_assert_int_eq(n, C + 1);                  // every line: label (or corner) + C fields
        if (!header_seen) {
            header_seen = 1;
            ck_assert_str_eq(fields[2], "\"back\\\\slash\"");
            ck_assert_str_eq(fields[3], "\"2\"");        // NULL label -> its index
            continue;
        }
        ck_assert_int_eq(fields[0][0], '"');
        for (int c = 0; c < C; c++) {                  // %.9g reads back to the same float
            float v = strtof(fields[1 + c], NULL);
            ck_assert_msg(v == x[data_rows * C + c], "row %d col %d: %s", data_rows, c, fields[1 + c]);
        }
        data_rows++;
    }
    fclose(f);
    ck_assert_int_eq(comments, 2);
    ck_assert_int_eq(data_rows, R);
    remove(path);
    strcat(path, ".tmp");
    ck_assert_msg(fopen(path, "r") == NULL, "temporary file %s left behind", path);
}
END_TEST

START_TEST(labelled_matrix_reports_an_unwritable_path)
{
    float x[1] = { 1.0f };
    ck_assert_int_eq(tw_write_labelled_matrix("/nonexistent-dir/m.dat", x, 1, 1, NULL, NULL, NULL), TW_ERR_IO);
    ck_assert_int_eq(tw_write_labelled_matrix("/tmp/never.dat", x, -1, 1, NULL, NULL, NULL), TW_ERR_ARG);
}
END_TEST

Suite *suite_inspect(void) {
    Suite *s = suite_create("inspect");
    TCase *tc = tcase_create("inspect");
    tcase_add_loop_test(tc, print_matrix_shows_shape_and_elides_the_middle, 0, 5);
    tcase_add_test(tc, quote_label_escapes_quotes_backslashes_and_control_bytes);
    tcase_add_test(tc, quote_label_truncates_without_breaking_the_quoting);
    tcase_add_test(tc, labelled_matrix_parses_as_gnuplot_reads_it);
    tcase_add_test(tc, labelled_matrix_reports_an_unwritable_path);
    suite_add_tcase(s, tc);
    return s;
}
