// pref_common.h: what making a preference set (tools/make_pref.c) and measuring it
// (tools/pref_eval.c) share: the prompt, the rule a completion is judged by, and sampling a
// completion from a model. docs/preferences.md describes them.
#ifndef PREF_COMMON_H
#define PREF_COMMON_H
#include <stddef.h>
#include "decode/sampler.h"
#include "nn/model.h"
#include "tokenize/tokenizer.h"

// The prompts are the instruction set's (train/chat_template.h): "a story about WORD" for the
// words of tw_sft_train_words (the pairs; pref_eval also asks about tw_sft_heldout_words).

// The prompt for WORD as tokens (BOS first); returns their count, or -1 if max is too small.
// With a tokenizer that holds the chat template's special tokens (make sft-data's tok.bin) the
// prompt is BOS <|user|>a story about WORD<|assistant|>; with a plain one (tok512) it is the plain
// text, BOS "a story about WORD" (tw_chat_prompt_encode). The completion is what follows.
int pref_prompt_tokens(int *tokens, int max, const tw_tokenizer *tok, const char *word);

// The rule: 1 if the completion's text contains WORD as a whole word (letters on neither side),
// ignoring case; 0 if not. prev: the token before the completion (the prompt's last). Special
// tokens (<|end|> and the like) are not text: they are skipped.
int pref_rule(const tw_tokenizer *tok, int prev, const int *completion, int n, const char *word);

// Samples up to max_new tokens after the prompt with sp; stops before BOS (a story's end), after
// end (a chat answer's end, <|end|>, kept in the completion as the template writes it; -1 for a
// plain model: tw_chat_end_token) or at the model's context. s: tw_model_state_init(s, m,
// n_prompt, n_prompt + max_new) (a cache). Returns the completion's length (0 if the model ended
// the story at once), -1 on an error.
int pref_sample(int *out, int max_new, tw_model_state *s, const tw_model *m, tw_sampler *sp,
                const int *prompt, int n_prompt, int end);

#endif
