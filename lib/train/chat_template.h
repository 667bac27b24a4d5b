// chat_template.h: the chat template of supervised fine-tuning, and the words of the instruction
// set "a story about WORD" (tools/make_sft.c; docs/finetuning.md). One small file so that every
// maker of chat data (instructions, preference pairs) writes the same template.
//
// The template, exactly (no spaces or newlines are added around the special tokens):
//
//     <|user|>PROMPT<|assistant|>ANSWER<|end|>
//
// encoded with BOS (id 1) in front. The three names are special tokens (tokenize/special.h), so
// the encoder never splits them and the text between them is encoded as a text of its own (with
// its dummy-prefix space): BOS <|user|> " a story about dog" <|assistant|> " Once upon ..." <|end|>.
// The loss mask (train/mask.h) is 1 on the answer's tokens and on <|end|> (the model must learn
// to stop), 0 on BOS, <|user|>, the prompt and <|assistant|>. To ask a model, give it the prompt
// part, BOS <|user|>PROMPT<|assistant|>, and sample until it writes <|end|>.
#ifndef TW_CHAT_TEMPLATE_H
#define TW_CHAT_TEMPLATE_H
#include <stddef.h>
#include "core/status.h"
#include "tokenize/tokenizer.h"

#define TW_CHAT_USER      "<|user|>"
#define TW_CHAT_ASSISTANT "<|assistant|>"
#define TW_CHAT_END       "<|end|>"
#define TW_CHAT_SPECIALS  TW_CHAT_USER "," TW_CHAT_ASSISTANT "," TW_CHAT_END   // for ./add-tokens --tokens

// The words of "a story about WORD": nouns stories260K uses often (counted in its samples), split
// into the words the instruction set trains on and held-out words only the evaluation asks about.
extern const char *const tw_sft_train_words[];
extern const int         tw_sft_n_train_words;
extern const char *const tw_sft_heldout_words[];
extern const int         tw_sft_n_heldout_words;

// out = "a story about WORD". Returns the length, or -1 if it does not fit in out_len.
int tw_sft_prompt(char *out, size_t out_len, const char *word);

// out = the template above with PROMPT and ANSWER; answer NULL gives the part a model is asked
// with, "<|user|>PROMPT<|assistant|>". Returns the length, or -1 if it does not fit in out_len.
int tw_chat_format(char *out, size_t out_len, const char *prompt, const char *answer);

// 1 if text contains word as a whole word, ignoring ASCII case, alone or with a plural "s"
// ("dog", "Dog," and "dogs" count for dog; "dogged" and "hotdog" do not). word: ASCII letters.
int tw_text_has_word(const char *text, const char *word);

// 1 if tok holds the template's three special tokens (a tokenizer grown for chat: make sft-data,
// ./add-tokens), else 0 (tok512 of stories260K). tw_chat_encode needs them.
int tw_chat_in_tokenizer(const tw_tokenizer *tok);

// The id of <|end|>, where a chat answer stops, if tw_chat_in_tokenizer(tok); else -1 (a plain
// story model stops at BOS, the next story's start).
int tw_chat_end_token(const tw_tokenizer *tok);

// The tokens a model is asked prompt with: BOS <|user|>PROMPT<|assistant|> if
// tw_chat_in_tokenizer(tok), else the plain text, BOS PROMPT. Its answer is what follows.
// tokens (max) receives *n entries. TW_ERR_ARG if max is too small (nothing useful is written);
// TW_ERR_NOMEM.
tw_status tw_chat_prompt_encode(int *tokens, int *n, int max, const tw_tokenizer *tok, const char *prompt);

// Encodes BOS + tw_chat_format(prompt, answer) with tok, which must hold the three special tokens,
// and its mask: tokens (max) and mask (max) receive *n entries; mask[i] = 1 from the token after
// <|assistant|> to <|end|> inclusive, else 0. TW_ERR_ARG if max is too small (nothing useful is
// written) or tok lacks a special token; TW_ERR_NOMEM.
tw_status tw_chat_encode(int *tokens, unsigned char *mask, int *n, int max, const tw_tokenizer *tok,
                         const char *prompt, const char *answer);

#endif
