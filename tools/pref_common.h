// pref_common.h: what making a preference set (tools/make_pref.c) and measuring it
// (tools/pref_eval.c) share: the prompt, the rule a completion is judged by, and sampling a
// completion from a model. docs/preferences.md describes them.
#ifndef PREF_COMMON_H
#define PREF_COMMON_H
#include <stddef.h>
#include "decode/sampler.h"
#include "nn/model.h"
#include "tokenize/tokenizer.h"

// The default words of the prompts "a story about WORD": nouns that stories260K's stories use.
extern const char *const PREF_WORDS[];
extern const int PREF_N_WORDS;

// The prompt for WORD as tokens (BOS first); returns their count, or -1 if max is too small.
// Today the prompt is the plain text "a story about WORD". The instruction set's template,
// "<|user|>a story about WORD<|assistant|>", needs its special tokens in the tokenizer: switch
// this one function to it when they exist; nothing else depends on the prompt's form.
int pref_prompt_tokens(int *tokens, int max, const tw_tokenizer *tok, const char *word);

// The rule: 1 if the completion's text contains WORD as a whole word (letters on neither side),
// ignoring case; 0 if not. prev: the token before the completion (the prompt's last).
int pref_rule(const tw_tokenizer *tok, int prev, const int *completion, int n, const char *word);

// Samples up to max_new tokens after the prompt with sp; stops before BOS (a story's end) or at
// the model's context. s: tw_model_state_init(s, m, n_prompt, n_prompt + max_new) (a cache).
// Returns the completion's length (0 if the model ended the story at once), -1 on an error.
int pref_sample(int *out, int max_new, tw_model_state *s, const tw_model *m, tw_sampler *sp,
                const int *prompt, int n_prompt);

#endif
