// add_tokens.c: ./add-tokens, new special tokens for a llama2.c model and its tokenizer.
//
//   ./add-tokens BASE.bin TOK.bin --tokens '<|user|>,<|assistant|>,<|end|>'
//                --out-model M.bin --out-tokenizer T.bin       (one command line)
//
// Appends the named tokens, in the order given, as ids V, V+1, ... (V: the base's vocabulary):
// T.bin is TOK.bin plus one record per name (tokenize/special.h: the encoder never splits them),
// M.bin is BASE.bin with one more row per name in the token embedding table (and in the
// classifier when it is separate), each the mean of the old rows (train/grow_vocab.h). Both are
// written atomically, the tokenizer first; neither may be an input. Exit 0, 1 (a file), 2 (flags).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "formats/same_file.h"
#include "tokenize/special.h"
#include "train/grow_vocab.h"

#define MAX_NEW 64

static _Noreturn void usage(const char *why) {
    fprintf(stderr, "add-tokens: %s\n"
            "usage: ./add-tokens BASE.bin TOK.bin --tokens '<|a|>,<|b|>' --out-model M.bin --out-tokenizer T.bin\n"
            "example: ./add-tokens data/models/stories260K.bin data/models/tok512.bin "
            "--tokens '<|user|>,<|assistant|>,<|end|>' --out-model chat.bin --out-tokenizer chat_tok.bin\n", why);
    exit(2);
}

// Cuts list at commas into names (MAX_NEW at most), in place; returns the count.
static int split_names(char **names, char *list) {
    int n = 0;
    for (char *p = list;; ) {
        char *comma = strchr(p, ',');
        if (n == MAX_NEW) usage("--tokens: more than 64 names");
        names[n++] = p;
        if (comma == NULL) break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *base = NULL, *tok = NULL, *out_model = NULL, *out_tok = NULL;
    char *list = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) usage("add special tokens to a model and its tokenizer");
        if (a[0] == '-' && a[1] == '-') {
            if (i + 1 >= argc) { fprintf(stderr, "add-tokens: %s needs a value\n", a); return 2; }
            if (strcmp(a, "--tokens") == 0) list = argv[++i];
            else if (strcmp(a, "--out-model") == 0) out_model = argv[++i];
            else if (strcmp(a, "--out-tokenizer") == 0) out_tok = argv[++i];
            else { fprintf(stderr, "add-tokens: unknown flag %s (see --help)\n", a); return 2; }
        } else if (!base) base = a;
        else if (!tok) tok = a;
        else { fprintf(stderr, "add-tokens: unexpected argument '%s' (see --help)\n", a); return 2; }
    }
    if (!base || !tok) usage("give BASE.bin and TOK.bin");
    if (!list) usage("give --tokens, e.g. --tokens '<|user|>,<|assistant|>,<|end|>'");
    if (!out_model || !out_tok) usage("give both --out-model and --out-tokenizer");
    const char *ins[2] = { base, tok }, *outs[2] = { out_model, out_tok };
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < 2; k++)
            if (tw_same_file(outs[o], ins[k])) {
                fprintf(stderr, "add-tokens: %s is the input %s: give another output file\n", outs[o], ins[k]);
                return 2;
            }
    if (tw_same_file(out_model, out_tok) || strcmp(out_model, out_tok) == 0) {
        fprintf(stderr, "add-tokens: --out-model and --out-tokenizer name the same file %s\n", out_model);
        return 2;
    }
    char *names[MAX_NEW];
    const int n = split_names(names, list);

    char err[4400] = "";
    tw_model m, g;
    if (tw_llama2c_load(&m, base, err, sizeof err) != TW_OK) { fprintf(stderr, "add-tokens: %s\n", err); return 1; }
    const int V = m.cfg.vocab;
    tw_status st = tw_special_add_to_file(out_tok, tok, V, (const char *const *)names, n, err, sizeof err);
    if (st != TW_OK) {
        fprintf(stderr, "add-tokens: %s%s\n", st == TW_ERR_ARG && strstr(err, "special token") == err ? "--tokens: " : "", err);
        tw_model_free(&m);
        return st == TW_ERR_ARG ? 2 : 1;
    }
    if (tw_model_grow_vocab(&g, &m, n) != TW_OK) {
        fprintf(stderr, "add-tokens: out of memory growing %s; %s was written, %s was not\n", base, out_tok, out_model);
        tw_model_free(&m);
        return 1;
    }
    st = tw_llama2c_write(out_model, &g, err, sizeof err);
    tw_model_free(&g);
    tw_model_free(&m);
    if (st != TW_OK) {
        fprintf(stderr, "add-tokens: %s (%s was written, %s was not)\n", err, out_tok, out_model);
        return 1;
    }
    for (int k = 0; k < n; k++) printf("add-tokens: %s is id %d\n", names[k], V + k);
    printf("add-tokens: wrote %s (vocabulary %d -> %d; new rows = the mean of the old ones) and %s\n",
           out_model, V, V + n, out_tok);
    return 0;
}
