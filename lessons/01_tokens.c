// Lesson 1: tokenization: text -> pieces -> ids -> text.
//
// Teaches: a model reads integers, not letters. The real 512-token BPE tokenizer of stories260K
// (tok512.bin) splits text into sub-word pieces and gives each an id; decoding the ids gives the
// text back exactly. Its vocabulary holds special tokens (<unk>, <s>, </s>), 256 byte tokens that
// make any input encodable, and 253 learned merges. A byte tokenizer (one token per byte, 256
// symbols) is the contrast: the same text takes more tokens. Why sub-words: sequence length
// against vocabulary size, and what each costs (attention grows with T^2, the embedding with V).
// Calls: tw_tokenizer_load, tw_tokenizer_encode, tw_tokenizer_decode, tw_tokenizer_lookup,
//        tw_tokenizer_max_tokens, tw_tokenizer_free, tw_npy_write_i32.
// Build & run: make lesson1 && ./lesson1 [--text "..."] [--out DIR]   (make fetches the model)
// Needs: data/models/tok512.bin
// Writes: tokens.npy tokens.txt byte_tokens.npy vocab.txt
#include <string.h>
#include "lesson.h"

static const lesson_info INFO = {
    1, "Tokenization: text to ids and back",
    "Before a language model sees anything, a tokenizer cuts the text into pieces from a fixed "
    "vocabulary and replaces each piece by its number. This lesson loads the real 512-token "
    "byte-pair-encoding tokenizer that stories260K was trained with, looks inside its vocabulary "
    "(special tokens, byte tokens, learned merges), encodes a sentence into pieces and ids, "
    "decodes it back, shows what happens to characters the vocabulary never saw (byte fallback), "
    "and compares with a plain byte tokenizer to show why models use sub-words: fewer tokens per "
    "text, at the price of a larger vocabulary."
};

#define TOK_PATH "data/models/tok512.bin"

// Encodes text with tok; the ids are tracked memory.
static int *encode(const tw_tokenizer *tok, const char *text, int bos, int *n) {
    int max = (int)tw_tokenizer_max_tokens(text);
    int *ids = lesson_alloc_bytes((size_t)max * sizeof(int));
    LESSON_TRY(tw_tokenizer_encode(tok, ids, n, max, text, bos, 0));
    return ids;
}

// Decodes ids (the first may be BOS) back into a tracked string.
static char *decode(const tw_tokenizer *tok, const int *ids, int n) {
    size_t cap = 16;
    for (int i = 0; i < n; i++) cap += strlen(tw_tokenizer_decode(tok, i ? ids[i - 1] : 0, ids[i]));
    char *out = lesson_alloc_bytes(cap);
    for (int i = 0; i < n; i++) {
        if (ids[i] == TW_TOK_BOS) continue;
        strcat(out, tw_tokenizer_decode(tok, i ? ids[i - 1] : TW_TOK_BOS, ids[i]));
    }
    return out;
}

// 1. The three groups of pieces in tok512: special, bytes, learned.
static void inside_the_vocabulary(const tw_tokenizer *tok) {
    lesson_section("Inside the vocabulary");
    lesson_say("tok512.bin holds V = %d pieces, each with a merge score. They come in three "
               "groups:", tok->vocab_size);
    printf("  ids 0..2      special: 0 ");
    lesson_print_piece(tok->vocab[0]);
    printf("  1 ");
    lesson_print_piece(tok->vocab[1]);
    printf(" (BOS, begin of text)  2 ");
    lesson_print_piece(tok->vocab[2]);
    printf(" (EOS, end of text)\n");
    printf("  ids 3..258    the 256 bytes: 3 %s  4 %s ... 13 %s (newline) ... 258 %s\n",
           tok->vocab[3], tok->vocab[4], tok->vocab[13], tok->vocab[258]);
    printf("  ids 259..511  learned pieces, e.g.");
    for (int id = 259; id < 259 + 8; id++) { putchar(' '); lesson_print_piece(tok->vocab[id]); }
    printf(" ...\n                longer ones:");
    int shown = 0;
    for (int id = 259; id < tok->vocab_size && shown < 8; id++)
        if (strlen(tok->vocab[id]) >= 6) { putchar(' '); lesson_print_piece(tok->vocab[id]); shown++; }
    printf("\n");
    lesson_say("(llama2.c's export spells BOS and EOS with newlines around them, shown as \\n.) "
               "Spaces belong to the piece after them: \"_time\" (shown with _ for a space) is one "
               "token, so the tokenizer does not need a separate space token between words.");
    lesson_expect("\" the\" is a single token", tw_tokenizer_lookup(tok, " the") >= 259);
}

// 2. text -> pieces -> ids -> text, and how every lesson shows a token. Returns the ids (*n).
static int *encode_and_decode(const tw_tokenizer *tok, const char *text, int *n_out) {
    lesson_section("Text -> pieces -> ids -> text");
    int n = 0;
    int *ids = encode(tok, text, 1, &n);
    printf("  text  (%zu bytes): %s\n", strlen(text), text);
    printf("  pieces (%d tokens):\n    ", n);
    for (int i = 0; i < n; i++) printf("[%s] ", lesson_token(tok, ids[i]));
    printf("\n  ids:\n    ");
    for (int i = 0; i < n; i++) printf("%d ", ids[i]);
    printf("\n");
    lesson_say("The first id is %d, BOS: it marks the start of a text, and the model was trained "
               "to begin every story after it. Next comes the piece for the first word with a "
               "space in front: SentencePiece adds a \"dummy\" space before the text so the first "
               "word is spelled like any other word. Decoding drops that space again after BOS.",
               ids[0]);
    lesson_say("This is how every lesson shows a token: its piece from the vocabulary in brackets, "
               "_ for the space it starts with, \\n for a newline, <0xHH> for a byte token. The "
               "piece is shown, not the decoded text, so [_Once] looks the same after BOS (where "
               "decoding prints \"Once\") as anywhere else. One piece is the space alone, [_] (id "
               "%d): a word with no \"_word\" piece of its own is spelled [_] and then smaller "
               "pieces, as \" Zoe\" is here:", tw_tokenizer_lookup(tok, " "));
    int n_zoe = 0;
    int *ids_zoe = encode(tok, "Zoe", 0, &n_zoe);   // the dummy space makes it " Zoe"
    printf("   ");
    for (int i = 0; i < n_zoe; i++) printf(" [%s]", lesson_token(tok, ids_zoe[i]));
    printf("\n");
    lesson_expect("\" Zoe\" starts with the lone-space piece [_]",
                  n_zoe > 1 && ids_zoe[0] == tw_tokenizer_lookup(tok, " "));
    char *back = decode(tok, ids, n);
    printf("  decoded: %s\n", back);
    lesson_expect("decode(encode(text)) == text", strcmp(back, text) == 0);
    int in_range = 1;
    for (int i = 0; i < n; i++) in_range &= ids[i] >= 0 && ids[i] < tok->vocab_size;
    lesson_expect("every id is in [0, 512)", in_range);
    *n_out = n;
    return ids;
}

// 3. Characters with no piece of their own are spelled byte by byte.
static void byte_fallback(const tw_tokenizer *tok) {
    lesson_section("Characters the vocabulary never saw: byte fallback");
    const char *odd = "caf\xc3\xa9 \xe2\x98\x95";   // "cafe" with an acute e, a space, a coffee cup
    int n_odd = 0;
    int *ids_odd = encode(tok, odd, 0, &n_odd);
    printf("  text: %s  (%zu bytes)\n  pieces:", odd, strlen(odd));
    for (int i = 0; i < n_odd; i++) {
        putchar(' ');
        lesson_print_piece(tok->vocab[ids_odd[i]]);
    }
    printf("\n");
    lesson_say("A character with no piece of its own is spelled byte by byte, with the byte "
               "tokens <0xHH> (id = byte + 3). Nothing is ever \"unknown\": any UTF-8 text can be "
               "encoded, it just takes more tokens.");
    char *odd_back = decode(tok, ids_odd, n_odd);
    lesson_expect("byte fallback round-trips", strcmp(odd_back, odd) == 0);
}

// 4. One story as bytes, as tok512 pieces and as whole words. Returns its bytes as ids (*n_out).
static int32_t *why_subwords(const tw_tokenizer *tok, int *n_out) {
    lesson_section("Why sub-words: sequence length against vocabulary size");
    const char *story =
        "Once upon a time, there was a little girl named Lily. She liked to play outside in the "
        "sun. One day, she saw a big red ball in the park. She ran to the ball and kicked it. The "
        "ball went very high and Lily was happy.";
    int n_story = 0;
    int *story_ids = encode(tok, story, 0, &n_story);
    const int n_bytes = (int)strlen(story);
    int32_t *bytes = lesson_alloc_bytes((size_t)n_bytes * sizeof(int32_t));
    for (int i = 0; i < n_bytes; i++) bytes[i] = (unsigned char)story[i];   // the byte tokenizer
    int words = 1;
    for (int i = 0; i < n_bytes; i++) words += story[i] == ' ';
    lesson_say("A byte tokenizer needs only V = 256 symbols and no training: token = byte. The "
               "same 4-sentence story in three ways:");
    printf("  %-26s %7s %8s %13s %20s %18s\n", "tokenizer", "V", "tokens", "bytes/token",
           "attention T^2", "embedding V x 64");
    printf("  %-26s %7d %8d %13.2f %20ld %18d\n", "bytes", 256, n_bytes, 1.0,
           (long)n_bytes * n_bytes, 256 * 64);
    printf("  %-26s %7d %8d %13.2f %20ld %18d\n", "tok512 (BPE, stories260K)", 512, n_story,
           (double)n_bytes / n_story, (long)n_story * n_story, 512 * 64);
    printf("  %-26s %7s %8d %13.2f %20ld %18s\n", "whole words (hypothetical)", "huge", words,
           (double)n_bytes / words, (long)words * words, "huge");
    lesson_say("Sub-words sit between the extremes. Every token costs a full pass through the "
               "model and attention compares every pair of tokens (T^2 scores), so fewer tokens "
               "means cheaper and longer contexts; every vocabulary entry costs a row of the "
               "embedding table and of the output head (V x C each), and rare words still have "
               "to be spelled from smaller pieces. Even this tiny 512-piece vocabulary cuts the "
               "story from %d tokens to %d (%.1fx). Large models use V = 32000 (Llama 2) to "
               "151936 (Qwen3), about 3-4 bytes per token on English text, and pay 151936 x 4096 "
               "= 622M parameters for Qwen3-8B's embedding table.", n_bytes, n_story,
               (double)n_bytes / n_story);
    lesson_expect("tok512 needs fewer tokens than bytes", n_story < n_bytes);
    (void)story_ids;
    *n_out = n_bytes;
    return bytes;
}

// The sentence's ids and the story's bytes as .npy; the sentence's and the vocabulary's pieces
// as text.
static void write_files(const tw_tokenizer *tok, const int *ids, int n, const int32_t *bytes, int n_bytes) {
    lesson_section("Files");
    int32_t *ids32 = lesson_alloc_bytes((size_t)n * sizeof(int32_t));
    for (int i = 0; i < n; i++) ids32[i] = ids[i];
    long shape[1] = { n };
    lesson_write_npy_i32("tokens.npy", ids32, shape, 1);
    long bshape[1] = { n_bytes };
    lesson_write_npy_i32("byte_tokens.npy", bytes, bshape, 1);
    // tokens.txt: id and quoted piece per line; vocab.txt: the whole vocabulary
    size_t cap = 64 + (size_t)n * 80;
    char *txt = lesson_alloc_bytes(cap);
    size_t len = (size_t)snprintf(txt, cap, "# lesson 1: the sentence's tokens\n# position id piece\n");
    for (int i = 0; i < n; i++) {
        char q[64];
        tw_quote_label(q, sizeof q, tw_tokenizer_decode(tok, 0, ids[i]));
        len += (size_t)snprintf(txt + len, cap - len, "%d %d %s\n", i, ids[i], q);
    }
    lesson_write_text("tokens.txt", txt);
    size_t vcap = 64 + (size_t)tok->vocab_size * 80;
    char *voc = lesson_alloc_bytes(vcap);
    size_t vlen = (size_t)snprintf(voc, vcap, "# lesson 1: tok512 vocabulary\n# id score piece\n");
    for (int id = 0; id < tok->vocab_size; id++) {
        char q[64];
        tw_quote_label(q, sizeof q, tok->vocab[id]);
        vlen += (size_t)snprintf(voc + vlen, vcap - vlen, "%d %g %s\n", id, (double)tok->scores[id], q);
    }
    lesson_write_text("vocab.txt", voc);
}

int main(int argc, char **argv) {
    const char *text = "Once upon a time, there was a little cat named Tom.";
    lesson_opt extra[] = { { "--text", 's', &text, "TEXT", "the sentence to tokenize" }, { 0 } };
    lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1 }, extra);
    tw_tokenizer tok = { 0 };
    char err[256];
    if (tw_tokenizer_load(&tok, TOK_PATH, 512, err, sizeof err) != TW_OK)
        lesson_die("%s (run `make model` to fetch the tokenizer)", err);

    inside_the_vocabulary(&tok);
    int n = 0, n_bytes = 0;
    int *ids = encode_and_decode(&tok, text, &n);
    byte_fallback(&tok);
    int32_t *bytes = why_subwords(&tok, &n_bytes);
    write_files(&tok, ids, n, bytes, n_bytes);
    tw_tokenizer_free(&tok);
    lesson_say("Try it: make exercise13 (BPE encoding), make exercise23 (a token back to text)");
    return lesson_finish();
}
