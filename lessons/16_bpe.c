// Lesson 16: learning a tokenizer (byte-pair encoding), the other side of lesson 1.
//
// Teaches: where a BPE vocabulary's pieces come from. Starting from single characters (plus 256
// byte tokens that make any input encodable), training repeatedly merges the most frequent
// adjacent pair into a new piece; the order of the merges becomes the scores the encoder uses, so
// encoding replays them. The lesson prints the first merges one by one on a small text, measures
// compression (bytes per token) as the vocabulary grows, on the training text and on held-out
// text, compares tok512 with a vocabulary trained on the same stories, shows what a story-trained
// vocabulary does to Chinese text and to C code (byte fallback: several tokens per character), and
// turns bytes per token into model cost: a bigger vocabulary means a bigger embedding table, a
// shorter sequence means less attention work (it grows with T^2).
// Calls: tw_bpe_train, tw_bpe_train_naive, tw_bpe_vocab_to_tokenizer, tw_bpe_vocab_free,
//        tw_tokenizer_load, tw_tokenizer_encode, tw_tokenizer_decode, tw_tokenizer_free.
// Build & run: make lesson16 && ./lesson16 [--out DIR] [--no-plot]
// Plot:        gnuplot viz/16_compression.gp    (reads out/lesson16/compression.dat)
// The story text below was sampled from stories260K with ./generate (temperature 1, top-p 0.9,
// seeds 1, 2, ...): English in the style tok512 was trained on.
// Needs: data/models/tok512.bin
// Writes: first_merges.txt compression.dat tradeoff.dat
// Pictures: compression.png
#include <stdio.h>
#include <string.h>
#include "lesson.h"
#include "tokenize/bpe_train.h"

static const lesson_info INFO = {
    16, "Learning a tokenizer: byte-pair encoding",
    "Lesson 1 used a trained 512-piece vocabulary; this one trains vocabularies. Byte-pair "
    "encoding starts from characters and repeatedly merges the most frequent adjacent pair into a "
    "new piece. The lesson prints the first merges of a small text one by one, measures how "
    "compression (bytes per token) grows with the vocabulary on training and on held-out text, "
    "compares tok512 with a vocabulary trained on the same kind of stories, shows what a "
    "story-trained vocabulary does to Chinese and to C code, and converts bytes per token into "
    "model cost: embedding parameters against attention work. ./bpe-train does the same on files."
};

#define TOK_PATH "data/models/tok512.bin"

// ---- the texts ----

static const char SMALL[] = "the cat sat on the mat. the cat ate the rat. that cat sat on that hat.";

// Sampled from stories260K (see the header): 3,876 bytes of English stories.
static const char STORY[] =
    "Once upon a time, there was a little boy named Tim. Tim loved to show his friends he"
    "r a big, shiny blue bug. One day, Tim's mom was making his favorite bug in the park."
    " Tim was very happy.\n"
    "At the store, Tim went to the park and saw a big forest. The fox was so scared. Tim "
    "wanted to touch it, but it was a magic ant. He climbed up the room and looked at it."
    " The fox was not scared of the fox. Tim went to the scale and saw a fairy with the q"
    "ueen.\n"
    "Tim said, \"We need to eat it again!\" They showed the fox and the fox, \"Look, please!"
    "\" They found the fox with the ant. Tim was very happy to see how soft as they could "
    "find. They all agreed to play a game again. The fox learned that sometimes it's impo"
    "rtant to respect who is so such a good friend.\n"
    "Once upon a time, there was a big girl named Lily. She loved to play with her toys a"
    "nd make a big mess. One day, she found a big bucket of penny in her pocket. She want"
    "ed to play a busy where she went away, but it was too cold.\n"
    "Lily's mom said, \"Yes, please! I can use it to get better!\" So, she gave her dad a b"
    "ig hug and she went home. Lily was very excited to have a picnic on the building wit"
    "h her friends.\n"
    "Lily gave the bucket of the penguin and put on the building. She took a bite and sta"
    "rted to play with it. She smiled and said, \"You are not a toy, I didn't want to play"
    " too.\"\n"
    "Lily smiled and said, \"I don't know you myself to play. You can find a different pen"
    "ny too.\" The pencil had found her furry key. Lily felt sad because he didn't listen "
    "and relieved the bad penny.\n"
    "From that day on, Lily made sure to take care of her mom's boots. The penguin was ju"
    "st relieved, when her mom got her toy showing. They had so much fun!\n"
    "One day, a little boy named Tim went to the park with his mom. He saw a big blanket "
    "on his door. Tim liked to play in the garden. He showed his mom and Jane. Jane was s"
    "cared. The desk was a red blanket.\n"
    "\"Mom, look at my toy,\" she said. \"I want to try it?\"\n"
    "\"Sure, but I want to play with my blanket.\" His mom said. \"It's a monkey too.\"\n"
    "\"Sure, a dog,\" Ben said. \"You can be careful and taste your sword.\"\n"
    "\"Of course, we can make sure you want to bite one,\" Jane said.\n"
    "They went to a big box. They watched as something unexpected happened. When Jane was"
    " scared, the monkey started to clap after him!\n"
    "Jane was so happy that he thanked the boy. They decided to make the monkey learn and"
    " still have a good boy who knew it was too much better.\n"
    "Once upon a time, there was a little bird named Ben. Ben loved to run and chew. He l"
    "ived in a big, worriver. He loved to jump and play with his friends. One day, Ben wa"
    "s very excited to run around. He saw a big shock in the window and started to cry.\n"
    "Ben said to his friend, Sam, \"I will help you, but I can help you find the shoes.\" S"
    "am looked at the shoes and said, \"Ben, you must be friends to play with our shoes.\" "
    "Ben thought for a moment and said, \"Let's play with you.\"\n"
    "As they played, Sam saw the shop with a puddle. He thought it was very fun and he ha"
    "d an idea. He thought it was a good teacher and thanked Sam. So, they went to the te"
    "acher to play with the shoe. They were happy again and went home without the suit. F"
    "rom that day on, Sam knew that Sam was glad that shared the puddles could make thing"
    "s sharp.\n"
    "Once upon a time, there was a little boy named Timmy. Timmy had a mustache who was v"
    "ery worried. One day, Timmy and his friends got very sleepy anymore. They stayed clo"
    "ser together, so he made a yummy curtain. They went to a party, and Timmy didn't wan"
    "t to play.\n"
    "As they were raining, Timmy saw a big cloud that he could not see them. He smiled an"
    "d found his clouds in the branch. Then, he accidentally knocked up the clouds and ra"
    "ining up them. Timmy looked everywhere but couldn't get hurt. Timmy felt scared and "
    "knew what his face came a closet.\n"
    "Timmy learned that sometimes, the cloud isn't respected, but it's okay to help other"
    "s.\n";

// A sentence of the kind a Chinese introduction to tokenizers opens with: "The tokenizer's main job is to turn text into numbers (tokens), so that
// the model can process it."
static const char CHINESE[] =
    "Tokenizer 的主要功能是把文字轉換成數字 (token)，這樣模型才能夠處理。";

// Five lines of C from lib/tokenize/tokenizer.c (the byte fallback).
static const char CODE[] =
    "        int id = tw_tokenizer_lookup(t, buf);\n"
    "        if (id >= 0) {\n"
    "            tokens[n++] = id;\n"
    "        } else {\n"
    "            for (size_t i = 0; i < len; i++) tokens[n++] = (int)c[i] + 3;\n";

// ---- helpers ----

static int *encode(const tw_tokenizer *tok, const char *text, int *n) {
    int max = (int)tw_tokenizer_max_tokens(text);
    int *ids = lesson_alloc_bytes((size_t)max * sizeof(int));
    LESSON_TRY(tw_tokenizer_encode(tok, ids, n, max, text, 0, 0));
    return ids;
}

static double bytes_per_token(const tw_tokenizer *tok, const char *text) {
    int n;
    encode(tok, text, &n);
    return (double)strlen(text) / n;
}

// Shows the first max pieces of text under tok, and how many there are in all.
static void show_encoding(const char *label, const tw_tokenizer *tok, const char *text, int max) {
    int n;
    int *ids = encode(tok, text, &n);
    printf("  %-22s %3d tokens: ", label, n);
    for (int i = 0; i < n && i < max; i++) lesson_print_piece(tok->vocab[ids[i]]);
    printf(n > max ? " ...\n" : "\n");
}

// decode(encode(text)) == text, the way lesson 1 decodes (the first piece loses the dummy space).
static int round_trips(const tw_tokenizer *tok, const char *text) {
    int n;
    int *ids = encode(tok, text, &n);
    char *back = lesson_alloc_bytes(strlen(text) * 2 + 16);
    for (int i = 0; i < n; i++) strcat(back, tw_tokenizer_decode(tok, i ? ids[i - 1] : TW_TOK_BOS, ids[i]));
    return strcmp(back, text) == 0;
}

static tw_bpe_vocab train(const char *text, int V, int min_pair) {
    tw_bpe_options o = { V, 1, min_pair };
    tw_bpe_vocab v;
    char err[512];
    if (tw_bpe_train(&v, text, strlen(text), &o, err, sizeof err) != TW_OK) lesson_die("training failed: %s", err);
    return v;
}

static tw_tokenizer as_tokenizer(const tw_bpe_vocab *v) {
    tw_tokenizer t;
    LESSON_TRY(tw_bpe_vocab_to_tokenizer(&t, v));
    return t;
}

// ---- the lesson ----

// 1. The first merges of SMALL, one by one; the naive trainer must find the same ones.
static void first_merges(void) {
    lesson_section("The first merges, one by one");
    lesson_say("The text: \"%s\" (%zu bytes). Training starts from its characters: the encoder "
               "puts a space in front of the text (the \"dummy prefix\"), so every word starts with "
               "a space, and pieces keep that space at their front. Each step counts every "
               "adjacent pair of pieces, merges the most frequent pair everywhere, and adds the "
               "result to the vocabulary. Ties go to the pair whose text sorts first.", SMALL, strlen(SMALL));
    // The base is 259 reserved tokens plus the text's characters; ask for 12 merges on top.
    tw_bpe_options o = { tw_bpe_base_size(SMALL, strlen(SMALL), 1) + 12, 1, 2 };
    char err[512];
    tw_bpe_vocab v, ref;
    if (tw_bpe_train(&v, SMALL, strlen(SMALL), &o, err, sizeof err) != TW_OK) lesson_die("%s", err);
    if (tw_bpe_train_naive(&ref, SMALL, strlen(SMALL), &o, err, sizeof err) != TW_OK) lesson_die("%s", err);
    printf("  base: 259 special and byte tokens + %d characters; the text is %lld tokens\n\n",
           v.n_chars, v.tokens_before);
    char *log = lesson_alloc_bytes(4096);
    strcat(log, "# the first merges of the small text: k, left, right, count, tokens after\n");
    for (int k = 0; k < v.n_merges; k++) {
        char step[96];
        snprintf(step, sizeof step, "[%s] + [%s] -> [%s]", v.pieces[v.merge_left[k]],
                 v.pieces[v.merge_right[k]], v.pieces[259 + k]);
        for (char *c = step; *c; c++) if (*c == ' ' && c[-1] != ']' && c[1] != '-' && c[1] != '[') *c = '_';
        printf("  merge %2d: %-30s seen %lld times; the text is now %lld tokens\n", k + 1, step,
               v.merge_count[k], v.tokens_after[k]);
        char line[160];
        snprintf(line, sizeof line, "%d\t%s\t%s\t%lld\t%lld\n", k + 1, v.pieces[v.merge_left[k]],
                 v.pieces[v.merge_right[k]], v.merge_count[k], v.tokens_after[k]);
        strcat(log, line);
    }
    lesson_write_text("first_merges.txt", log);
    lesson_note("a merge of a pair seen c times shortens the text by exactly c tokens");
    int same = v.n_merges == ref.n_merges;
    for (int k = 0; same && k < v.n_merges; k++) same = strcmp(v.pieces[259 + k], ref.pieces[259 + k]) == 0;
    lesson_expect("the naive trainer (a full recount per merge) learns the same merges", same);
    int drops = 1;
    for (int k = 0; k < v.n_merges; k++)
        drops &= v.tokens_after[k] == (k ? v.tokens_after[k - 1] : v.tokens_before) - v.merge_count[k];
    lesson_expect("each merge removes as many tokens as its count", drops);
    lesson_say("The scores written into the vocabulary are -k for the k-th merge, so the encoder, "
               "which merges the best-scoring adjacent pair first, replays the merges in this order "
               "and ends with exactly the trainer's cut of the text:");
    tw_tokenizer tok = as_tokenizer(&v);
    show_encoding("encoded with them", &tok, SMALL, 40);
    int n;
    encode(&tok, SMALL, &n);
    lesson_expect("the encoder's token count equals the trainer's", n == v.tokens_after[v.n_merges - 1]);
    tw_tokenizer_free(&tok);
    tw_bpe_vocab_free(&v);
    tw_bpe_vocab_free(&ref);
}

// Splits STORY at the line start nearest 80 %: training part and held-out part.
static void split_story(char **train_part, char **held_out) {
    size_t n = strlen(STORY), cut = n * 4 / 5;
    while (cut < n && STORY[cut - 1] != '\n') cut++;
    *train_part = lesson_alloc_bytes(cut + 1);
    memcpy(*train_part, STORY, cut);
    *held_out = lesson_strdup(STORY + cut);
}


// 2. Compression as the vocabulary grows, on the training text and on held-out text.
// Returns the largest vocabulary size tried (the one section 5 uses).
static int compression_curve(const char *train_part, const char *held_out) {
    lesson_section("Compression against vocabulary size");
    lesson_say("Now %zu bytes of stories (sampled from stories260K): training on the first %zu, "
               "measuring also on the last %zu, which training never sees. Bytes per token is the "
               "compression: how much text one token carries on average.", strlen(STORY),
               strlen(train_part), strlen(held_out));
    const int base = tw_bpe_base_size(train_part, strlen(train_part), 1);
    // V: the characters alone, then more and more merges (up to 600: this text supports 618).
    const int SIZES[] = { base, base + 8, base + 16, base + 32, base + 64, base + 128, 512, 560, 600 };
    enum { ROWS = sizeof SIZES / sizeof SIZES[0] };
    float table[ROWS * 3];   // (ROWS, 3): V, bytes/token on the training part, on the held-out part
    printf("  %6s  %9s  %9s\n", "V", "training", "held-out");
    int monotone = 1;
    for (int r = 0; r < ROWS; r++) {
        const int V = SIZES[r];
        tw_bpe_vocab v = train(train_part, V, 2);
        tw_tokenizer tok = as_tokenizer(&v);
        long long t = v.n_merges ? v.tokens_after[v.n_merges - 1] : v.tokens_before;
        table[3 * r] = (float)V;
        table[3 * r + 1] = (float)((double)strlen(train_part) / (double)t);
        table[3 * r + 2] = (float)bytes_per_token(&tok, held_out);
        printf("  %6d  %9.3f  %9.3f%s\n", V, table[3 * r + 1], table[3 * r + 2],
               V == 512 ? "   <- the size of tok512" : r == 0 ? "   <- characters only" : "");
        if (r > 0 && table[3 * r + 1] <= table[3 * (r - 1) + 1]) monotone = 0;
        tw_tokenizer_free(&tok);
        tw_bpe_vocab_free(&v);
    }
    static const char *const COLS[] = { "V", "train_bytes_per_token", "heldout_bytes_per_token" };
    lesson_write_columns("compression.dat", table, ROWS, 3, COLS,
                         "BPE trained on the first 80% of lesson 16's story text; bytes per token on it and on the rest");
    lesson_plot("16_compression.gp", "compression.dat", "compression.png");
    lesson_expect("every merge makes the training text shorter (bytes/token rises with V)", monotone);
    lesson_note("on the training text compression keeps rising; on unseen text it rises more slowly: later "
                "merges memorise words and phrases of these few stories that new text repeats less");
    return SIZES[ROWS - 1];
}

// 3. tok512 against a vocabulary of the same size trained on these stories.
// Returns our vocabulary's bytes/token on the held-out text.
static double against_tok512(const tw_tokenizer *tok512, const char *train_part, const char *held_out) {
    lesson_section("The same text under tok512 and under a vocabulary trained on it");
    tw_bpe_vocab v = train(train_part, 512, 2);
    tw_tokenizer ours = as_tokenizer(&v);
    lesson_say("tok512 was trained (by SentencePiece) on the TinyStories corpus; ours, also 512 "
               "pieces, on %zu bytes of these stories. Ours spends %d slots on characters and %d "
               "on merges; tok512 holds 72 characters, several this text never uses.",
               strlen(train_part), v.n_chars, v.n_merges);
    const char *sentence = "Tim wanted to play with his friends in the park.";
    show_encoding("tok512", tok512, sentence, 24);
    show_encoding("ours (trained here)", &ours, sentence, 24);
    double a = bytes_per_token(tok512, held_out), b = bytes_per_token(&ours, held_out);
    double a_fit = bytes_per_token(tok512, train_part), b_fit = bytes_per_token(&ours, train_part);
    printf("\n  %-30s %8s %8s %12s\n", "bytes per token on", "tok512", "ours", "ours/tok512");
    printf("  %-30s %8.3f %8.3f %12.3f\n", "the stories ours was fitted to", a_fit, b_fit, b_fit / a_fit);
    printf("  %-30s %8.3f %8.3f %12.3f\n", "held-out stories", a, b, b / a);
    lesson_note("a vocabulary fitted to %zu bytes compresses those bytes best (ours/tok512 = %.3f) "
                "but not new text of the same kind (%.3f): its later merges memorise words of these "
                "few stories, while tok512's were fitted to the whole TinyStories corpus. A "
                "tokenizer needs far more text than its vocabulary has pieces; `make bpe-compare` "
                "repeats this on 10 MB of sampled stories.", strlen(train_part), b_fit / a_fit, b / a);
    lesson_expect("ours compresses the text it was fitted to better than tok512", b_fit > a_fit);
    lesson_expect("ours gains less (or loses) on held-out text than on its own", b / a < b_fit / a_fit);
    lesson_expect("both vocabularies decode the held-out text back exactly",
                  round_trips(tok512, held_out) && round_trips(&ours, held_out));
    tw_tokenizer_free(&ours);
    tw_bpe_vocab_free(&v);
    return b;
}

// Byte tokens the encoder must emit for text under tok: the bytes of every character that is not
// a piece of its own (those never merge, being spelled "<0xHH>").
static int expected_byte_tokens(const tw_tokenizer *tok, const char *text) {
    int count = 0;
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        int len = 1;
        while (len < 4 && (c[len] & 0xC0) == 0x80) len++;
        char ch[5] = { 0 };
        memcpy(ch, c, (size_t)len);
        if (tw_tokenizer_lookup(tok, ch) < 0) count += len;
        c += len;
    }
    return count;
}

static int byte_tokens(const tw_tokenizer *tok, const char *text) {
    int n, count = 0;
    int *ids = encode(tok, text, &n);
    for (int i = 0; i < n; i++) count += ids[i] >= 3 && ids[i] < 259;
    return count;
}

// 4. Chinese and C code under vocabularies trained on English stories.
static void other_texts(const tw_tokenizer *tok512, const char *train_part) {
    const double share = 100.0 * (double)strlen(train_part) / (double)strlen(STORY);
    lesson_section("A story vocabulary on Chinese and on C code");
    lesson_say("A Chinese sentence (\"the tokenizer's main job is to turn text into numbers\"), and five "
               "lines of C from lib/tokenize/tokenizer.c:");
    printf("  %s\n\n", CHINESE);
    show_encoding("Chinese, tok512", tok512, CHINESE, 18);
    show_encoding("C code, tok512", tok512, CODE, 18);
    tw_bpe_vocab v = train(train_part, 512, 2);
    tw_tokenizer ours = as_tokenizer(&v);
    printf("\n  %-10s %8s %16s %16s\n", "text", "bytes", "tok512 bytes/tok", "ours bytes/tok");
    const char *names[] = { "stories*", "Chinese", "C code" }, *texts[] = { STORY, CHINESE, CODE };
    for (int i = 0; i < 3; i++)
        printf("  %-10s %8zu %16.3f %16.3f\n", names[i], strlen(texts[i]), bytes_per_token(tok512, texts[i]),
               bytes_per_token(&ours, texts[i]));
    printf("  (* all of the story text: ours was trained on the first %.0f %% of it)\n", share);
    lesson_say("Neither vocabulary has a single Chinese character, so each one falls back to its "
               "three UTF-8 bytes: three tokens for one character, and byte tokens never merge. "
               "Code fares better (it is ASCII) but its pieces are short: its identifiers, "
               "underscores and brackets never made it into a story vocabulary.");
    int want = expected_byte_tokens(tok512, CHINESE), got = byte_tokens(tok512, CHINESE);
    printf("  byte tokens for the Chinese sentence under tok512: %d (its unknown characters hold %d bytes)\n", got, want);
    lesson_expect("every byte of an unknown character is one byte token", got == want);
    lesson_expect("the Chinese sentence round-trips through the byte fallback", round_trips(tok512, CHINESE));
    tw_tokenizer_free(&ours);
    tw_bpe_vocab_free(&v);
}

// 5. The cost side: the embedding table against the attention work.
static void tradeoff(const char *train_part, const char *held_out, int V_max, double bpt512) {
    lesson_section("Bigger embedding table or shorter sequences");
    // llama2.c's stories15M: width C = 288, 6 layers, FFN width 768, vocabulary 32000.
    const long C = 288, L = 6, F = 768, BYTES = 4096;
    const long per_layer = 4 * C * C + 3 * C * F;
    lesson_say("Take a model of llama2.c's stories15M shape (C = %ld, %ld layers, FFN %ld: %ld "
               "parameters per layer) and a context of %ld bytes of text. The vocabulary sets two "
               "costs: the embedding table has V x C parameters (the output head as many again "
               "unless tied), and the sequence has T = bytes / (bytes per token) positions, so the "
               "attention scores and their weighted sum cost 2 T^2 C multiply-adds per layer.",
               C, L, F, per_layer, BYTES);
    const int base = tw_bpe_base_size(train_part, strlen(train_part), 1);
    const int Vs[] = { base, 384, 512, V_max };
    enum { ROWS = 4 };
    float table[ROWS * 5];   // (ROWS, 5): V, bytes/token, T, embedding params, attention MACs per layer
    printf("  %6s %10s %6s %14s %18s\n", "V", "bytes/tok", "T", "embedding V*C", "attention 2T^2C");
    for (int r = 0; r < ROWS; r++) {
        tw_bpe_vocab v = train(train_part, Vs[r], 2);
        tw_tokenizer tok = as_tokenizer(&v);
        double bpt = bytes_per_token(&tok, held_out);
        long T = (long)((double)BYTES / bpt + 0.999999);
        double emb = (double)Vs[r] * C, att = 2.0 * (double)T * T * C;
        printf("  %6d %10.3f %6ld %14.0f %18.0f\n", Vs[r], bpt, T, emb, att);
        float row[5] = { (float)Vs[r], (float)bpt, (float)T, (float)emb, (float)att };
        memcpy(table + 5 * r, row, sizeof row);
        tw_tokenizer_free(&tok);
        tw_bpe_vocab_free(&v);
    }
    static const char *const COLS[] = { "V", "bytes_per_token", "T_for_4096_bytes", "embedding_params", "attention_macs_per_layer" };
    lesson_write_columns("tradeoff.dat", table, ROWS, 5, COLS,
                         "vocabulary size against model cost, stories15M shape (C=288), held-out story text");
    double att_ratio = table[5 * 0 + 4] / table[5 * 2 + 4], emb_ratio = table[5 * 2 + 3] / table[5 * 0 + 3];
    printf("\n  from V = %d to V = 512: %.2fx the embedding parameters, 1/%.2f of the attention work\n",
           base, emb_ratio, att_ratio);
    lesson_say("stories15M itself uses V = 32000: its table holds %ld of its %ld parameters "
               "(%.0f %%), which buys Llama-2's vocabulary for any text. For a small model a "
               "smaller vocabulary leaves more parameters for the layers; for long contexts a "
               "larger one saves attention work quadratically.", 32000 * C,
               32000 * C + L * per_layer + 2 * C * L + C,
               100.0 * (double)(32000 * C) / (double)(32000 * C + L * per_layer + 2 * C * L + C));
    lesson_expect("training again at V = 512 gives section 3's compression (training is deterministic)",
                  table[5 * 2 + 1] == (float)bpt512);
}

int main(int argc, char **argv) {
    // No random inputs (the text is fixed, training is deterministic): --seed is not offered.
    lesson_start(argc, argv, &INFO, (lesson_args){ .no_seed = 1 }, NULL);
    tw_tokenizer tok512;
    char err[256];
    if (tw_tokenizer_load(&tok512, TOK_PATH, 512, err, sizeof err) != TW_OK)
        lesson_die("%s (run `make model` to fetch the tokenizer)", err);

    first_merges();
    char *train_part, *held_out;
    split_story(&train_part, &held_out);
    int V_max = compression_curve(train_part, held_out);
    double bpt512 = against_tok512(&tok512, train_part, held_out);
    other_texts(&tok512, train_part);
    tradeoff(train_part, held_out, V_max, bpt512);

    tw_tokenizer_free(&tok512);
    lesson_say("Try it: make exercise20 (one BPE merge)");
    return lesson_finish();
}
