// attention_matrix.c: one head's attention map from a ./generate --dump folder, as a labelled text
// matrix that viz/attention_map.gp draws (make attention-map PROMPT="..." LAYER=l HEAD=h).
//
//   attention_matrix DUMP_DIR LAYER HEAD OUT.dat
//
// Reads DUMP_DIR/L{LAYER}.pattern.npy (H, T, T) and DUMP_DIR/tokens.txt (the token strings), and
// writes rows = query positions, columns = key positions, each labelled with its token.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tw.h"

// Undoes the escaping of tokens.txt (\n \t \\ \xHH) in place.
static void unescape(char *s) {
    char *out = s;
    for (char *p = s; *p; p++) {
        if (*p != '\\' || p[1] == '\0') { *out++ = *p; continue; }
        p++;
        if (*p == 'n') *out++ = '\n';
        else if (*p == 't') *out++ = '\t';
        else if (*p == 'x' && p[1] && p[2]) {
            char hex[3] = { p[1], p[2], '\0' };
            *out++ = (char)strtol(hex, NULL, 16);
            p += 2;
        } else *out++ = *p;
    }
    *out = '\0';
}

static int parse_index(const char *what, const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < 0 || v > 1000000) {
        fprintf(stderr, "attention_matrix: %s '%s' is not a non-negative integer\n", what, s);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: attention_matrix DUMP_DIR LAYER HEAD OUT.dat\n");
        return 2;
    }
    const char *dir = argv[1], *out = argv[4];
    int layer = parse_index("LAYER", argv[2]), head = parse_index("HEAD", argv[3]);
    char path[4096], err[256] = "";
    snprintf(path, sizeof path, "%s/L%d.pattern.npy", dir, layer);
    tw_npy p;
    if (tw_npy_read(&p, path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "attention_matrix: %s: %s (is LAYER within the model's layers?)\n", path, err);
        return 1;
    }
    if (p.dtype != TW_NPY_F32 || p.ndim != 3 || p.shape[1] != p.shape[2]) {
        fprintf(stderr, "attention_matrix: %s: expected a float32 (H, T, T) array\n", path);
        return 1;
    }
    const int H = (int)p.shape[0], T = (int)p.shape[1];
    if (head >= H) {
        fprintf(stderr, "attention_matrix: HEAD %d is out of range: layer %d has %d heads\n", head, layer, H);
        return 1;
    }

    // Token strings: "position<TAB>id<TAB>escaped string" per line after a '#' header.
    char **labels = calloc((size_t)T, sizeof *labels);
    snprintf(path, sizeof path, "%s/tokens.txt", dir);
    FILE *f = fopen(path, "r");
    if (labels == NULL || f == NULL) {
        fprintf(stderr, "attention_matrix: %s: cannot open: %s\n", path, strerror(errno));
        return 1;
    }
    char line[4096];
    while (fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#') continue;
        line[strcspn(line, "\n")] = '\0';
        int t = atoi(line);
        char *tab = strchr(line, '\t');
        tab = tab ? strchr(tab + 1, '\t') : NULL;
        if (t < 0 || t >= T || tab == NULL) continue;
        unescape(tab + 1);
        labels[t] = malloc(strlen(tab + 1) + 1);
        if (labels[t]) strcpy(labels[t], tab + 1);
    }
    fclose(f);

    char comment[256];
    snprintf(comment, sizeof comment, "attention map of layer %d, head %d from %s\n"
             "rows: query position (token), columns: key position (token), value: softmax weight",
             layer, head, dir);
    const float *w = (const float *)p.data + (size_t)head * T * T;
    tw_status st = tw_write_labelled_matrix(out, w, T, T, (const char *const *)labels,
                                            (const char *const *)labels, comment);
    if (st != TW_OK) {
        fprintf(stderr, "attention_matrix: %s: cannot write: %s\n", out, tw_status_str(st));
        return 1;
    }
    for (int t = 0; t < T; t++) free(labels[t]);
    free(labels);
    tw_npy_free(&p);
    return 0;
}
