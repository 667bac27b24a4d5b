// tokenize.c: ./tokenize, any of the toolkit's three tokenizers from the command line.
//   ./tokenize -z TOKENIZER TEXT        each token's id and bytes, then the counts
//   ./tokenize -z TOKENIZER -f FILE     the same for a file's bytes
//   --ids                               only the ids, space-separated, on one line
//   --chat                              wrap the text as one user turn of the chat template
//                                       (tokenizer.json files with <|im_start|>, as Qwen3's)
//   ./tokenize -z TOKENIZER --decode ID...   the bytes the ids stand for, written raw
// TOKENIZER: data/models/tok512.bin (llama2.c), data/tokenizers/qwen3/tokenizer.json, or
// data/tokenizers/gpt2/encoder.json (vocab.bpe beside it); `make tokenizers-data` fetches the last
// two. Exit status: 0 ok, 1 unreadable/malformed file, 2 bad usage.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/regular_file.h"
#include "tokenize/text_tokenizer.h"

static const char usage_text[] =
    "usage: ./tokenize -z TOKENIZER [--ids] [--chat] (TEXT | -f FILE)\n"
    "       ./tokenize -z TOKENIZER --decode ID...\n"
    "  TOKENIZER  a llama2.c tokenizer (data/models/tok512.bin), a Hugging Face tokenizer.json\n"
    "             (data/tokenizers/qwen3/tokenizer.json) or GPT-2's encoder.json with vocab.bpe\n"
    "             beside it (data/tokenizers/gpt2/encoder.json); make tokenizers-data fetches them\n"
    "  --ids      print only the ids, space-separated, on one line\n"
    "  --chat     encode TEXT as one user turn of the chat template (Qwen3's:\n"
    "             <|im_start|>user\\nTEXT<|im_end|>\\n<|im_start|>assistant\\n)\n"
    "  --decode   write the bytes of the given ids to standard output\n";

static int usage_error(const char *why) {
    fprintf(stderr, "tokenize: %s (./tokenize --help for usage)\n", why);
    return 2;
}

typedef struct {
    const char *tok_path, *text, *file;
    int ids_only, chat, decode;
    int first_id, argc;   // --decode: argv[first_id .. argc) are the ids
} options;

static int parse_args(options *o, int argc, char **argv) {
    memset(o, 0, sizeof *o);
    o->argc = argc;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { fputs(usage_text, stdout); return -1; }
        if (strcmp(a, "-z") == 0 || strcmp(a, "-f") == 0) {
            if (i + 1 >= argc) return usage_error(a[1] == 'z' ? "-z needs a tokenizer file" : "-f needs a text file");
            if (a[1] == 'z') o->tok_path = argv[++i]; else o->file = argv[++i];
        } else if (strcmp(a, "--ids") == 0) o->ids_only = 1;
        else if (strcmp(a, "--chat") == 0) o->chat = 1;
        else if (strcmp(a, "--decode") == 0) { o->decode = 1; o->first_id = i + 1; break; }
        else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tokenize: unknown flag %s (./tokenize --help for usage)\n", a);
            return 2;
        } else if (o->text) return usage_error("give the text as one argument (quote it)");
        else o->text = a;
    }
    if (!o->tok_path) return usage_error("-z TOKENIZER is required");
    if (o->decode) {
        if (o->first_id >= argc) return usage_error("--decode needs at least one id");
        if (o->text || o->file || o->chat) return usage_error("--decode takes ids, not text");
        return 0;
    }
    if (!o->text == !o->file) return usage_error("give TEXT or -f FILE (one of them)");
    return 0;
}

static char *read_file(const char *path, size_t *len) {
    char err[512];
    long long size;
    FILE *f = tw_regular_file_open_measured(&size, err, sizeof err, path, "a text file", "cannot open");
    if (!f) { fprintf(stderr, "tokenize: %s\n", err); return NULL; }
    char *buf = malloc((size_t)size + 1);
    size_t got = buf ? fread(buf, 1, (size_t)size, f) : 0;
    int bad = !buf || ferror(f) || got != (size_t)size;
    fclose(f);
    if (bad) {
        fprintf(stderr, "tokenize: %s: %s\n", path, buf ? "read error" : "out of memory");
        free(buf);
        return NULL;
    }
    *len = got;
    return buf;
}

// Writes piece bytes readably: valid UTF-8 as is, \n \r \t, other control or invalid bytes \xHH.
static void print_piece(const char *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        unsigned c = b[i];
        size_t k = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        int valid = k > 0 && i + k <= n;
        for (size_t j = 1; valid && j < k; j++) valid = (b[i + j] & 0xC0) == 0x80;
        if (c == '\n') fputs("\\n", stdout);
        else if (c == '\r') fputs("\\r", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c == '\\') fputs("\\\\", stdout);
        else if (!valid || c < 0x20 || c == 0x7F) printf("\\x%02X", c), k = 1;
        else fwrite(b + i, 1, k, stdout);
        i += valid ? k : 1;
    }
}

// Checks every id first, then writes their bytes: a bad id leaves standard output untouched.
static int decode_ids(const tw_text_tokenizer *t, char **argv, int from, int argc) {
    for (int pass = 0; pass < 2; pass++) {
        int prev = -1;
        for (int i = from; i < argc; i++) {
            char *end;
            errno = 0;
            long id = strtol(argv[i], &end, 10);
            size_t len;
            const char *p = (*argv[i] && !*end && !errno && id >= 0 && id <= 0x7fffffff)
                                ? tw_text_tokenizer_piece(t, prev, (int)id, &len) : NULL;
            if (!p) {
                fprintf(stderr, "tokenize: --decode: %s is not an id of this tokenizer (0 .. %d)\n",
                        argv[i], tw_text_tokenizer_vocab_size(t) - 1);
                return 2;
            }
            if (pass == 1) fwrite(p, 1, len, stdout);
            prev = (int)id;
        }
    }
    return 0;
}

// The text as one user turn of the chat template, or NULL (with a message) if there is none.
static char *chat_wrap(const tw_text_tokenizer *t, const char *text, size_t len, size_t *out_len) {
    if (tw_text_tokenizer_added(t, "<|im_start|>") < 0 || tw_text_tokenizer_added(t, "<|im_end|>") < 0) {
        fprintf(stderr, "tokenize: --chat: this %s tokenizer has no <|im_start|>/<|im_end|> tokens, "
                "so no chat template this tool knows\n", tw_tok_kind_name(t->kind));
        return NULL;
    }
    static const char head[] = "<|im_start|>user\n", tail[] = "<|im_end|>\n<|im_start|>assistant\n";
    char *s = malloc(sizeof head + len + sizeof tail);
    if (!s) { fprintf(stderr, "tokenize: out of memory\n"); return NULL; }
    memcpy(s, head, sizeof head - 1);
    memcpy(s + sizeof head - 1, text, len);
    memcpy(s + sizeof head - 1 + len, tail, sizeof tail);
    *out_len = sizeof head - 1 + len + sizeof tail - 1;
    return s;
}

static int count_chars(const char *s, size_t n) {   // UTF-8 lead bytes
    int c = 0;
    for (size_t i = 0; i < n; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static void print_tokens(const tw_text_tokenizer *t, const tw_ids *ids, const char *text, size_t len,
                         int ids_only) {
    if (ids_only) {
        for (size_t i = 0; i < ids->n; i++) printf(i ? " %d" : "%d", ids->ids[i]);
        printf("\n");
        return;
    }
    int prev = -1;
    for (size_t i = 0; i < ids->n; i++) {
        size_t n;
        const char *p = tw_text_tokenizer_piece(t, prev, ids->ids[i], &n);
        printf("%8d  \"", ids->ids[i]);
        print_piece(p, n);
        printf("\"\n");
        prev = ids->ids[i];
    }
    int chars = count_chars(text, len);
    printf("%zu tokens, %zu bytes, %d characters: %.3f tokens per character (%s, %d ids)\n",
           ids->n, len, chars, chars ? (double)ids->n / chars : 0.0, tw_tok_kind_name(t->kind),
           tw_text_tokenizer_vocab_size(t));
}

int main(int argc, char **argv) {
    options o;
    int rc = parse_args(&o, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    tw_text_tokenizer t;
    char err[640];
    if (tw_text_tokenizer_load(&t, o.tok_path, err, sizeof err) != TW_OK) {
        fprintf(stderr, "tokenize: %s\n", err);
        return 1;
    }
    if (o.decode) {
        rc = decode_ids(&t, argv, o.first_id, argc);
        tw_text_tokenizer_free(&t);
        return rc;
    }
    size_t len = o.text ? strlen(o.text) : 0;
    char *owned = o.file ? read_file(o.file, &len) : NULL;
    const char *text = o.file ? owned : o.text;
    if (o.file && !owned) { tw_text_tokenizer_free(&t); return 1; }
    if (o.chat) {
        size_t wl;
        char *w = chat_wrap(&t, text, len, &wl);
        free(owned);
        if (!w) { tw_text_tokenizer_free(&t); return 2; }
        owned = w; text = w; len = wl;
    }
    tw_ids ids = { 0 };
    tw_status st = tw_text_tokenizer_encode(&t, &ids, text, len);
    if (st != TW_OK) fprintf(stderr, "tokenize: encode: %s\n", tw_status_str(st));
    else print_tokens(&t, &ids, text, len, o.ids_only);
    tw_ids_free(&ids);
    free(owned);
    tw_text_tokenizer_free(&t);
    return st == TW_OK ? 0 : 1;
}
