// reward.h: verifiable rewards for GRPO (train/grpo.h): small functions of a completion's text
// that a learner can read, replace or game. Each returns a float; the trainer (./train --grpo
// --reward NAME --reward-word WORD) picks one by name. Words match whole and ignore ASCII case:
// "cat" is in "The Cat sat." but not in "catch".
#ifndef TW_REWARD_H
#define TW_REWARD_H

// 1 if text contains word (as a whole word), else 0. Rewarded once, however often it appears.
float tw_reward_contains(const char *text, const char *word);

// How many times word appears in text (whole words): a reward that can be gamed, since a story
// that repeats the word over and over scores higher than one that tells a story about it.
float tw_reward_count(const char *text, const char *word);

// A length rule: 1 - |words - target| / target, at least 0, where words is the number of
// whitespace-separated words of text and target >= 1 (1 for exactly target words).
float tw_reward_length(const char *text, int target);

// The reward functions by name, for a flag.
typedef enum { TW_REWARD_CONTAINS = 0, TW_REWARD_COUNT, TW_REWARD_LENGTH } tw_reward_kind;
// The kind called name ("contains", "count", "length"), or -1.
int tw_reward_from_name(const char *name);

#endif
