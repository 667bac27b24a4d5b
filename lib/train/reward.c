// reward.c: verifiable rewards (see reward.h).
#include <ctype.h>
#include <string.h>
#include "train/reward.h"

static int is_word_char(char c) { return isalnum((unsigned char)c) || (unsigned char)c >= 0x80; }

// 1 if text[i ..] starts with word, ignoring ASCII case, and word stands whole there.
static int word_at(const char *text, size_t i, const char *word, size_t n) {
    if (i > 0 && is_word_char(text[i - 1])) return 0;
    for (size_t k = 0; k < n; k++)
        if (tolower((unsigned char)text[i + k]) != tolower((unsigned char)word[k])) return 0;
    return !is_word_char(text[i + n]);
}

float tw_reward_count(const char *text, const char *word) {
    const size_t n = strlen(word), len = strlen(text);
    if (n == 0) return 0.0f;
    int count = 0;
    for (size_t i = 0; i + n <= len; i++) count += word_at(text, i, word, n);
    return (float)count;
}

float tw_reward_contains(const char *text, const char *word) {
    return tw_reward_count(text, word) > 0.0f ? 1.0f : 0.0f;
}

float tw_reward_length(const char *text, int target) {
    if (target < 1) return 0.0f;
    int words = 0;
    for (size_t i = 0; text[i]; i++)
        words += !isspace((unsigned char)text[i]) && (i == 0 || isspace((unsigned char)text[i - 1]));
    const float off = (float)(words > target ? words - target : target - words) / (float)target;
    return off < 1.0f ? 1.0f - off : 0.0f;
}

int tw_reward_from_name(const char *name) {
    if (strcmp(name, "contains") == 0) return TW_REWARD_CONTAINS;
    if (strcmp(name, "count") == 0) return TW_REWARD_COUNT;
    if (strcmp(name, "length") == 0) return TW_REWARD_LENGTH;
    return -1;
}
