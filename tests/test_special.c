// test_special.c: new special tokens (lib/tokenize/special.c, lib/train/grow_vocab.c,
// ./add-tokens) and the chat template (lib/train/chat_template.c), on the real stories260K and
// tok512 (make model): the grown tokenizer keeps every old record's bytes; the encoder never splits
// a special name and encodes the text around it as the base tokenizer encodes that text alone
// (adversarial texts: names adjacent, partial names, a name inside a word); decode(encode(text))
// is text; the heap encoder equals the naive one; the grown model's old rows are the old bytes,
// its new rows the mean, and its logits for old ids are the base's bit for bit; ./add-tokens
// refuses bad names and overwriting with one line and writes nothing; ./generate and ./train load
// the grown pair; the chat mask counts the answer and <|end|> only.
#define _POSIX_C_SOURCE 200809L   // getpid
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "testrun.h"
#include "formats/llama2c.h"
#include "formats/llama2c_write.h"
#include "tokenize/special.h"
#include "tokenize/tokenizer.h"
#include "train/chat_template.h"
#include "train/grow_vocab.h"
#include "train/tokens.h"

#define BASE_PATH "data/models/stories260K.bin"
#define TOK_PATH  "data/models/tok512.bin"
enum { USER = 512, ASSISTANT = 513, END = 514 };   // the ids the three names get, in this order

static const char *const NAMES[3] = { "<|user|>", "<|assistant|>", "<|end|>" };

// Writes the grown tokenizer to a per-process temporary file and loads it (and tok512 into base).
static void load_pair(tw_tokenizer *base, tw_tokenizer *grown, char *path, size_t path_len) {
    char err[512] = "";
    snprintf(path, path_len, "/tmp/tw_special_%d.bin", (int)getpid());
    ck_assert_msg(tw_tokenizer_load(base, TOK_PATH, 512, err, sizeof err) == TW_OK, "%s (run make model)", err);
    ck_assert_msg(tw_special_add_to_file(path, TOK_PATH, 512, NAMES, 3, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_msg(tw_tokenizer_load(grown, path, 515, err, sizeof err) == TW_OK, "%s", err);
}

START_TEST(grown_tokenizer_file_keeps_every_old_record)
{
    tw_tokenizer base, g;
    char path[64];
    load_pair(&base, &g, path, sizeof path);
    long a_len = 0, b_len = 0;
    char *a = tt_slurp(TOK_PATH), *b = tt_slurp(path);
    FILE *f = fopen(TOK_PATH, "rb"); fseek(f, 0, SEEK_END); a_len = ftell(f); fclose(f);
    f = fopen(path, "rb"); fseek(f, 0, SEEK_END); b_len = ftell(f); fclose(f);
    // After the 4-byte max_token_length, the old file is a prefix of the new one, and the new one
    // holds exactly three more records of 8 bytes plus the names' bytes.
    ck_assert_int_eq(b_len, a_len + 3 * 8 + 8 + 13 + 7);
    ck_assert(memcmp(a + 4, b + 4, (size_t)a_len - 4) == 0);
    ck_assert_int_eq(g.max_token_length, base.max_token_length > 13 ? base.max_token_length : 13);
    for (int k = 0; k < 3; k++) {
        ck_assert_str_eq(g.vocab[USER + k], NAMES[k]);
        ck_assert(g.scores[USER + k] == TW_SPECIAL_SCORE);
    }
    ck_assert_int_eq(g.n_special, 3);
    ck_assert_int_eq(g.special[0], ASSISTANT);   // longest first
    ck_assert_int_eq(base.n_special, 0);         // tok512 has no <|...|> token
    free(a); free(b);
    remove(path);
    tw_tokenizer_free(&base);
    tw_tokenizer_free(&g);
}
END_TEST

// One adversarial text and its expected ids: the pieces, in order, each either a special id or a
// stretch of text that the base tokenizer (no specials) encodes alone (with its dummy prefix).
typedef struct { const char *text; const char *parts[6]; } special_case;
#define S_USER "\1" // markers for a special id in parts
#define S_ASSISTANT "\2"
#define S_END "\3"
static const special_case CASES[] = {
    { "<|user|><|assistant|><|end|>", { S_USER, S_ASSISTANT, S_END } },
    { "<|use", { "<|use" } },                                     // a partial name is text
    { "<|user|", { "<|user|" } },
    { "hello<|user|>world", { "hello", S_USER, "world" } },       // inside a word
    { "<|user|<|end|>", { "<|user|", S_END } },                   // a partial name, then a name
    { "<<|end|>>", { "<", S_END, ">" } },
    { "<|end|><|end|", { S_END, "<|end|" } },
    { "<|user|>a story about dog<|assistant|> Once there was a dog.<|end|>",
      { S_USER, "a story about dog", S_ASSISTANT, " Once there was a dog.", S_END } },
    { "<||end|>", { "<||end|>" } },                               // no "<|end|>" in it
    { "x<|<|end|>", { "x<|", S_END } },
    { "<|end |>", { "<|end |>" } },
    { "", { NULL } },
};

static int expected_ids(int *ids, const tw_tokenizer *base, const special_case *c) {
    int n = 0;
    ids[n++] = TW_TOK_BOS;
    for (int p = 0; p < 6 && c->parts[p]; p++) {
        const char *s = c->parts[p];
        if (s[0] >= 1 && s[0] <= 3 && s[1] == '\0') { ids[n++] = USER + s[0] - 1; continue; }
        int k = 0;
        ck_assert_int_eq(tw_tokenizer_encode(base, ids + n, &k, 256, s, 0, 0), TW_OK);
        n += k;
    }
    return n;
}

START_TEST(encoder_never_splits_a_special_name)
{
    tw_tokenizer base, g;
    char path[64];
    load_pair(&base, &g, path, sizeof path);
    const special_case *c = &CASES[_i];
    int want[512], got[512], naive[512], n = 0, nn = 0;
    const int nw = expected_ids(want, &base, c);
    ck_assert_int_eq(tw_tokenizer_encode(&g, got, &n, 512, c->text, 1, 0), TW_OK);
    ck_assert_int_eq(tw_tokenizer_encode_naive(&g, naive, &nn, 512, c->text, 1, 0), TW_OK);
    ck_assert_int_eq(n, nw);
    ck_assert_int_eq(nn, nw);
    for (int i = 0; i < n; i++) {
        ck_assert_msg(got[i] == want[i], "'%s': id %d is %d, want %d", c->text, i, got[i], want[i]);
        ck_assert_int_eq(naive[i], want[i]);
    }
    // The ids fit the budget every caller gives (tw_tokenizer_max_tokens).
    ck_assert_int_le(n, (int)tw_tokenizer_max_tokens(c->text));
    // Round trip: the pieces after BOS, each decoded after the one before, give the text back.
    char back[1024] = "";
    for (int i = 1; i < n; i++) strcat(back, tw_tokenizer_decode(&g, got[i - 1], got[i]));
    ck_assert_str_eq(back, c->text);
    remove(path);
    tw_tokenizer_free(&base);
    tw_tokenizer_free(&g);
}
END_TEST

// Random texts over an alphabet of name fragments: heap == naive, the round trip holds, and the
// number of special ids equals a count of the names made independently (strncmp at each position,
// longest first, skipping past a match).
START_TEST(random_texts_of_name_fragments)
{
    tw_tokenizer base, g;
    char path[64];
    load_pair(&base, &g, path, sizeof path);
    static const char *const FRAG[] = { "<", "|", ">", "<|", "|>", "user", "end", "assistant", " ", "a",
                                        "<|user|>", "<|end|>", "<|assistant|>", "é", "<|end" };
    uint64_t r = 0x9E3779B97F4A7C15ull * (uint64_t)(_i + 1);
    for (int trial = 0; trial < 40; trial++) {
        char text[400] = "";
        int parts = 1 + (int)(r % 20);
        for (int p = 0; p < parts; p++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            strcat(text, FRAG[(r >> 33) % (sizeof FRAG / sizeof *FRAG)]);
        }
        int ids[512], naive[512], n = 0, nn = 0;
        ck_assert_int_eq(tw_tokenizer_encode(&g, ids, &n, 512, text, 1, 0), TW_OK);
        ck_assert_int_eq(tw_tokenizer_encode_naive(&g, naive, &nn, 512, text, 1, 0), TW_OK);
        ck_assert_int_eq(n, nn);
        ck_assert(memcmp(ids, naive, (size_t)n * sizeof *ids) == 0);
        int specials = 0, names = 0;
        for (int i = 0; i < n; i++) specials += ids[i] >= USER;
        for (const char *p = text; *p; ) {
            int hit = 0;
            for (int k = 0; k < 3 && !hit; k++) {
                const char *name = NAMES[k == 0 ? 1 : k == 1 ? 0 : 2];   // longest first
                if (strncmp(p, name, strlen(name)) == 0) { names++; p += strlen(name); hit = 1; }
            }
            if (!hit) p++;
        }
        ck_assert_msg(specials == names, "'%s': %d special ids for %d names", text, specials, names);
        char back[1024] = "";
        for (int i = 1; i < n; i++) strcat(back, tw_tokenizer_decode(&g, ids[i - 1], ids[i]));
        ck_assert_str_eq(back, text);
    }
    remove(path);
    tw_tokenizer_free(&base);
    tw_tokenizer_free(&g);
}
END_TEST

START_TEST(bad_names_are_refused_and_nothing_is_written)
{
    char err[512] = "", path[64];
    snprintf(path, sizeof path, "/tmp/tw_special_bad_%d.bin", (int)getpid());
    remove(path);
    const char *const empty[1] = { "" }, *const form[1] = { "user" }, *const twice[2] = { "<|a|>", "<|a|>" },
                      *const spaced[1] = { "<|a b|>" };
    const char *const *lists[4] = { empty, form, twice, spaced };
    const int counts[4] = { 1, 1, 2, 1 };
    for (int k = 0; k < 4; k++) {
        ck_assert_int_eq(tw_special_add_to_file(path, TOK_PATH, 512, lists[k], counts[k], err, sizeof err), TW_ERR_ARG);
        ck_assert_msg(strchr(err, '\n') == NULL && err[0], "one line: %s", err);
        ck_assert(!tt_exists(path));
    }
    ck_assert_int_eq(tw_special_add_to_file(TOK_PATH, TOK_PATH, 512, NAMES, 3, err, sizeof err), TW_ERR_ARG);
}
END_TEST

START_TEST(grown_model_keeps_old_rows_and_old_logits_bit_for_bit)
{
    tw_model m, g;
    char err[512] = "";
    ck_assert_msg(tw_llama2c_load(&m, BASE_PATH, err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(tw_model_grow_vocab(&g, &m, 3), TW_OK);
    const int V = 512, C = (int)m.params[0].shape[1];
    ck_assert_int_eq(g.cfg.vocab, 515);
    ck_assert_int_eq(g.cfg.tied, 1);   // stories260K shares its classifier
    ck_assert(memcmp(g.tok_emb, m.tok_emb, (size_t)V * C * sizeof(float)) == 0);
    for (int i = 1; i < m.n_params; i++)
        ck_assert(memcmp(g.params[i].data, m.params[i].data, (size_t)m.params[i].count * sizeof(float)) == 0);
    // The new rows are the mean of the old ones. Exact: the same double sum in the same order,
    // rounded once (the claim of grow_vocab.h), made here without the library's helper.
    for (int c = 0; c < C; c++) {
        double s = 0.0;
        for (int v = 0; v < V; v++) s += m.tok_emb[(size_t)v * C + c];
        for (int k = 0; k < 3; k++) ck_assert(g.tok_emb[(size_t)(V + k) * C + c] == (float)(s / V));
    }
    // Logits of old ids: the same dot products of the same rows: bit-identical (no tolerance).
    const int tokens[8] = { 1, 403, 407, 261, 378, 263, 379, 46 };
    tw_model_state sm, sg;
    ck_assert_int_eq(tw_model_state_init(&sm, &m, 8, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&sg, &g, 8, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&sm, &m, tokens, 8, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&sg, &g, tokens, 8, 0), TW_OK);
    for (int t = 0; t < 8; t++)
        ck_assert(memcmp(sm.logits + (size_t)t * V, sg.logits + (size_t)t * 515, (size_t)V * sizeof(float)) == 0);
    tw_model_state_free(&sm);
    tw_model_state_free(&sg);
    tw_model_free(&g);
    tw_model_free(&m);
}
END_TEST

// A separate classifier (a negative vocab_size in the file) grows too: its new rows are the mean
// of its old rows, the written file keeps the sign, and old logits stay bit-identical.
START_TEST(separate_classifier_grows_and_keeps_its_sign)
{
    tw_model m, g, back;
    char err[512] = "", path[64];
    ck_assert_msg(tw_llama2c_load(&m, "data/corrupt/llama2c/valid_separate_classifier.bin", err, sizeof err) == TW_OK, "%s", err);
    ck_assert_int_eq(m.cfg.tied, 0);
    const int V = m.cfg.vocab;
    ck_assert_int_eq(tw_model_grow_vocab(&g, &m, 2), TW_OK);
    tw_param *hm = tw_model_param(&m, "head"), *hg = tw_model_param(&g, "head");
    const int C = (int)hm->shape[1];
    ck_assert(memcmp(hg->data, hm->data, (size_t)V * C * sizeof(float)) == 0);
    for (int c = 0; c < C; c++) {
        double s = 0.0;
        for (int v = 0; v < V; v++) s += hm->data[(size_t)v * C + c];
        ck_assert(hg->data[(size_t)V * C + c] == (float)(s / V) && hg->data[(size_t)(V + 1) * C + c] == (float)(s / V));
    }
    snprintf(path, sizeof path, "/tmp/tw_special_sep_%d.bin", (int)getpid());
    ck_assert_msg(tw_llama2c_write(path, &g, err, sizeof err) == TW_OK, "%s", err);
    FILE *f = fopen(path, "rb");
    int32_t header[7];
    ck_assert(f && fread(header, 4, 7, f) == 7);
    fclose(f);
    ck_assert_int_eq(header[5], -(V + 2));   // separate classifier: negative
    ck_assert_msg(tw_llama2c_load(&back, path, err, sizeof err) == TW_OK, "%s", err);
    ck_assert(memcmp(back.memory, g.memory, (size_t)g.n_floats * sizeof(float)) == 0);
    const int tokens[4] = { 1, 5, 7, 3 };
    tw_model_state sm, sg;
    ck_assert_int_eq(tw_model_state_init(&sm, &m, 4, 0), TW_OK);
    ck_assert_int_eq(tw_model_state_init(&sg, &back, 4, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&sm, &m, tokens, 4, 0), TW_OK);
    ck_assert_int_eq(tw_model_forward(&sg, &back, tokens, 4, 0), TW_OK);
    for (int t = 0; t < 4; t++)
        ck_assert(memcmp(sm.logits + (size_t)t * V, sg.logits + (size_t)t * (V + 2), (size_t)V * sizeof(float)) == 0);
    tw_model_state_free(&sm);
    tw_model_state_free(&sg);
    remove(path);
    tw_model_free(&back);
    tw_model_free(&g);
    tw_model_free(&m);
}
END_TEST

// Every hostile tokenizer file of the corpus (data/corrupt/MANIFEST.tsv) is refused by the adder
// with the loader's status and one line, and nothing is written.
START_TEST(hostile_tokenizer_files_are_refused)
{
    char *manifest = tt_slurp("data/corrupt/MANIFEST.tsv"), out[64];
    snprintf(out, sizeof out, "/tmp/tw_special_hostile_%d.bin", (int)getpid());
    int checked = 0;
    for (char *line = strtok(manifest, "\n"); line; line = strtok(NULL, "\n")) {
        char reader[32], file[256], status[32];
        int vocab = 0;
        if (sscanf(line, "%31[^\t]\t%255[^\t]\t%31[^\t]\t%*[^\t]\t%d", reader, file, status, &vocab) != 4) continue;
        if (strcmp(reader, "tokenizer") != 0 || file[0] == '@' || strcmp(status, "OK") == 0 || vocab < 3) continue;
        char path[300], err[512] = "";
        snprintf(path, sizeof path, "data/corrupt/%s", file);
        tw_status st = tw_special_add_to_file(out, path, vocab, NAMES, 3, err, sizeof err);
        ck_assert_msg(st == TW_ERR_FORMAT, "%s: status %d", path, st);
        ck_assert_msg(err[0] && strchr(err, '\n') == NULL, "%s: '%s'", path, err);
        ck_assert(!tt_exists(out));
        checked++;
    }
    ck_assert_int_ge(checked, 25);
    free(manifest);
}
END_TEST

START_TEST(add_tokens_cli_writes_a_pair_generate_and_train_load)
{
    char dir[64], cmd[1024], model[128], tok[128];
    snprintf(dir, sizeof dir, "/tmp/tw_addtok_%d", (int)getpid());
    ck_assert_int_eq(tt_mkdir_p(dir), 0);
    snprintf(model, sizeof model, "%s/m.bin", dir);
    snprintf(tok, sizeof tok, "%s/t.bin", dir);
    snprintf(cmd, sizeof cmd, "./add-tokens " BASE_PATH " " TOK_PATH " --tokens '<|user|>,<|assistant|>,<|end|>' "
             "--out-model %s --out-tokenizer %s", model, tok);
    run_result r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "<|end|> is id 514"));
    tt_run_free(&r);
    // ./generate prints the names and encodes them as one id each.
    snprintf(cmd, sizeof cmd, "./generate %s -z %s -i '<|user|>a story<|assistant|>' -n 12 -t 0 -s 1", model, tok);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "<|user|>a story<|assistant|>"));
    tt_run_free(&r);
    // ./train fine-tunes it on tokens that use the new ids.
    char tokens[128];
    snprintf(tokens, sizeof tokens, "%s/tokens.bin", dir);
    int ids[200];
    for (int i = 0; i < 200; i++) ids[i] = i % 10 == 0 ? TW_TOK_BOS : i % 10 == 1 ? USER : i % 10 == 9 ? END : 300 + i % 7;
    char err[256];
    ck_assert_int_eq(tw_tokens_write(tokens, ids, 200, err, sizeof err), TW_OK);
    snprintf(cmd, sizeof cmd, "./train --init %s --tokens %s --steps 2 --batch 2 --seq 16 --curve none "
             "--sample-every 0 --eval-every 2 --eval-batches 1", model, tokens);
    r = tt_run(cmd);
    ck_assert_msg(r.rc == 0, "%s", r.err);
    tt_run_free(&r);
    // Refusals: one line, exit 2, nothing written.
    static const char *const BAD[] = {
        "--tokens '<|user|>' --out-model %s/x.bin --out-tokenizer %s/y.bin",        // already there (grown input)
        "--tokens '<|a|>,,<|b|>' --out-model %s/x.bin --out-tokenizer %s/y.bin",    // empty name
        "--tokens 'user' --out-model %s/x.bin --out-tokenizer %s/y.bin",            // not <|...|>
        "--tokens '<|a|>' --out-model %s/m.bin --out-tokenizer %s/y.bin",           // overwrites the input
    };
    for (size_t k = 0; k < sizeof BAD / sizeof *BAD; k++) {
        char flags[512];
        snprintf(flags, sizeof flags, BAD[k], dir, dir);
        snprintf(cmd, sizeof cmd, "./add-tokens %s %s %s", model, tok, flags);
        r = tt_run(cmd);
        ck_assert_msg(r.rc == 2, "%s: rc %d", flags, r.rc);
        ck_assert_msg(tt_count_lines(r.err) == 1, "%s: %s", flags, r.err);
        tt_run_free(&r);
        char x[128], y[128];
        snprintf(x, sizeof x, "%s/x.bin", dir);
        snprintf(y, sizeof y, "%s/y.bin", dir);
        ck_assert(!tt_exists(x) && !tt_exists(y));
    }
    tt_remove_tree(dir);
}
END_TEST

START_TEST(chat_mask_counts_the_answer_and_end_only)
{
    tw_tokenizer base, g;
    char path[64];
    load_pair(&base, &g, path, sizeof path);
    int ids[256], n = 0;
    unsigned char mask[256];
    ck_assert_int_eq(tw_chat_encode(ids, mask, &n, 256, &g, "a story about dog", "Once there was a dog."), TW_OK);
    int at_assistant = -1;
    for (int i = 0; i < n; i++) if (ids[i] == ASSISTANT) at_assistant = i;
    ck_assert_int_eq(ids[0], TW_TOK_BOS);
    ck_assert_int_eq(ids[1], USER);
    ck_assert_int_eq(ids[n - 1], END);
    ck_assert_int_gt(at_assistant, 2);
    for (int i = 0; i < n; i++) ck_assert_int_eq(mask[i], i > at_assistant);
    ck_assert_int_eq(tw_chat_encode(ids, mask, &n, 256, &base, "a", "b"), TW_ERR_ARG);   // no specials
    // Whole words, any case, with a plural s.
    ck_assert(tw_text_has_word("A Dog ran.", "dog") && tw_text_has_word("two dogs", "dog") &&
              tw_text_has_word("dog", "dog"));
    ck_assert(!tw_text_has_word("hotdog", "dog") && !tw_text_has_word("dogged", "dog") &&
              !tw_text_has_word("do", "dog"));
    remove(path);
    tw_tokenizer_free(&base);
    tw_tokenizer_free(&g);
}
END_TEST

Suite *suite_special(void) {
    Suite *s = suite_create("special");
    TCase *tc = tcase_create("special");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, grown_tokenizer_file_keeps_every_old_record);
    tcase_add_loop_test(tc, encoder_never_splits_a_special_name, 0, (int)(sizeof CASES / sizeof *CASES));
    tcase_add_loop_test(tc, random_texts_of_name_fragments, 0, 4);
    tcase_add_test(tc, bad_names_are_refused_and_nothing_is_written);
    tcase_add_test(tc, grown_model_keeps_old_rows_and_old_logits_bit_for_bit);
    tcase_add_test(tc, separate_classifier_grows_and_keeps_its_sign);
    tcase_add_test(tc, hostile_tokenizer_files_are_refused);
    tcase_add_test(tc, add_tokens_cli_writes_a_pair_generate_and_train_load);
    tcase_add_test(tc, chat_mask_counts_the_answer_and_end_only);
    suite_add_tcase(s, tc);
    return s;
}
