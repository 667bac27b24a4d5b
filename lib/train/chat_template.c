// chat_template.c: the chat template and the words of the instruction set (see chat_template.h).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "train/chat_template.h"

// Chosen from 150 stories sampled from stories260K (temperature 1): the share of stories naming
// each is between about 5 % (water, boat) and 30 % (toy, box), so a base model that ignores the
// prompt still names the word sometimes, and a model that follows it can be told apart.
const char *const tw_sft_train_words[] = {
    "toy", "box", "bird", "car", "ball", "dog", "room", "rock",
    "house", "garden", "sky", "rabbit", "sun", "fish", "boat", "water",
};
const int tw_sft_n_train_words = (int)(sizeof tw_sft_train_words / sizeof *tw_sft_train_words);
const char *const tw_sft_heldout_words[] = { "cat", "tree", "bear", "flower", "apple", "truck" };
const int tw_sft_n_heldout_words = (int)(sizeof tw_sft_heldout_words / sizeof *tw_sft_heldout_words);

int tw_sft_prompt(char *out, size_t out_len, const char *word) {
    int n = snprintf(out, out_len, "a story about %s", word);
    return n >= 0 && (size_t)n < out_len ? n : -1;
}

int tw_chat_format(char *out, size_t out_len, const char *prompt, const char *answer) {
    int n = answer ? snprintf(out, out_len, TW_CHAT_USER "%s" TW_CHAT_ASSISTANT "%s" TW_CHAT_END, prompt, answer)
                   : snprintf(out, out_len, TW_CHAT_USER "%s" TW_CHAT_ASSISTANT, prompt);
    return n >= 0 && (size_t)n < out_len ? n : -1;
}

int tw_text_has_word(const char *text, const char *word) {
    const size_t w = strlen(word);
    for (const char *p = text; *p; p++) {
        if (p > text && isalpha((unsigned char)p[-1])) continue;   // not at a word's start
        size_t i = 0;
        while (i < w && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)word[i])) i++;
        if (i < w) continue;
        const char *after = p + w;
        if (*after == 's' || *after == 'S') after++;
        if (!isalpha((unsigned char)*after)) return 1;
    }
    return 0;
}

int tw_chat_in_tokenizer(const tw_tokenizer *tok) {
    return tw_tokenizer_lookup(tok, TW_CHAT_USER) >= 0 && tw_tokenizer_lookup(tok, TW_CHAT_ASSISTANT) >= 0 &&
           tw_tokenizer_lookup(tok, TW_CHAT_END) >= 0;
}

int tw_chat_end_token(const tw_tokenizer *tok) {
    return tw_chat_in_tokenizer(tok) ? tw_tokenizer_lookup(tok, TW_CHAT_END) : -1;
}

tw_status tw_chat_prompt_encode(int *tokens, int *n, int max, const tw_tokenizer *tok, const char *prompt) {
    *n = 0;
    const size_t len = strlen(TW_CHAT_USER TW_CHAT_ASSISTANT) + strlen(prompt) + 1;
    char *text = malloc(len);
    if (text == NULL) return TW_ERR_NOMEM;
    if (tw_chat_in_tokenizer(tok)) tw_chat_format(text, len, prompt, NULL);
    else memcpy(text, prompt, strlen(prompt) + 1);
    tw_status st = (size_t)max < tw_tokenizer_max_tokens(text) ? TW_ERR_ARG
                 : tw_tokenizer_encode(tok, tokens, n, max, text, 1, 0);
    free(text);
    return st;
}

tw_status tw_chat_encode(int *tokens, unsigned char *mask, int *n, int max, const tw_tokenizer *tok,
                         const char *prompt, const char *answer) {
    *n = 0;
    if (!tw_chat_in_tokenizer(tok)) return TW_ERR_ARG;
    const int assistant = tw_tokenizer_lookup(tok, TW_CHAT_ASSISTANT), end = tw_tokenizer_lookup(tok, TW_CHAT_END);
    const size_t len = strlen(TW_CHAT_USER TW_CHAT_ASSISTANT TW_CHAT_END) + strlen(prompt) + strlen(answer) + 1;
    char *text = malloc(len);
    if (text == NULL) return TW_ERR_NOMEM;
    tw_chat_format(text, len, prompt, answer);
    tw_status st = tw_tokenizer_encode(tok, tokens, n, max, text, 1, 0);
    free(text);
    if (st != TW_OK) return st;
    int in_answer = 0;   // the first <|assistant|> opens the answer; a prompt cannot hold another
    for (int i = 0; i < *n; i++) {
        mask[i] = (unsigned char)in_answer;
        if (tokens[i] == assistant && !in_answer) in_answer = 1;
        if (tokens[i] == end && in_answer) in_answer = 0;
    }
    return TW_OK;
}
