// pref_common.c: the prompt (the instruction set's), the rule and the sampler of the preference set
// (see pref_common.h).
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "pref_common.h"
#include "tokenize/special.h"
#include "train/chat_template.h"

int pref_prompt_tokens(int *tokens, int max, const tw_tokenizer *tok, const char *word) {
    char text[256];
    if (tw_sft_prompt(text, sizeof text, word) < 0) return -1;
    int n = 0;
    if (tw_chat_prompt_encode(tokens, &n, max, tok, text) != TW_OK) return -1;
    return n;
}

int pref_rule(const tw_tokenizer *tok, int prev, const int *completion, int n, const char *word) {
    char text[4096];
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        const char *piece = tw_tokenizer_decode(tok, i ? completion[i - 1] : prev, completion[i]);
        if (tok->n_special > 0 && piece && tw_special_name_ok(piece)) continue;   // <|end|>: not text
        for (; piece && *piece && len + 1 < sizeof text; piece++) text[len++] = (char)tolower((unsigned char)*piece);
    }
    text[len] = '\0';
    const size_t w = strlen(word);
    for (const char *p = text; (p = strstr(p, word)) != NULL; p++) {
        const int before = p > text && isalpha((unsigned char)p[-1]);
        const int after = isalpha((unsigned char)p[w]);
        if (!before && !after) return 1;
    }
    return 0;
}

int pref_sample(int *out, int max_new, tw_model_state *s, const tw_model *m, tw_sampler *sp,
                const int *prompt, int n_prompt, int end) {
    if (tw_model_forward_next(s, m, prompt, n_prompt, 0) != TW_OK) return -1;
    const float *logits = s->logits + (size_t)(n_prompt - 1) * m->cfg.vocab;   // the prompt's last row
    int n = 0;
    while (n < max_new && n_prompt + n < m->cfg.max_seq) {
        const int next = tw_sampler_sample(sp, logits);
        if (next == 1) break;   // BOS: the story is over
        out[n] = next;
        if (next == end) return n + 1;   // <|end|>: the answer is over (kept, as the template writes it)
        if (tw_model_forward_next(s, m, &out[n], 1, n_prompt + n) != TW_OK) return -1;
        logits = s->logits;   // one token: row 0
        n++;
    }
    return n;
}
