// grpo.h: group relative policy optimisation (Shao et al. 2024, "DeepSeekMath", eq. 3; used again
// in DeepSeek-R1): for each prompt, G completions are sampled from the policy, each gets a reward,
// and a completion's advantage is its reward measured against its own group's, so no value model
// is needed:
//   A_i = (r_i - mean(r)) / (std(r) + eps_adv)   over the G rewards of i's group
// std is the POPULATION standard deviation (divide by G): with G = 1 it is 0 and A = 0, not 0/0.
// (TRL's GRPOTrainer takes torch's default, the sample standard deviation, divide by G - 1; the two
// differ by the factor sqrt(G / (G - 1)), which a learning rate absorbs.) eps_adv: 1e-4 as TRL.
//
// The objective for fixed samples, per completion token t of completion i (lp = log pi(token |
// everything before it) under the policy, lp_old under the policy that sampled, lp_ref under the
// frozen reference):
//   rho = exp(lp - lp_old)
//   J_it = min(rho A_i, clip(rho, 1 - eps, 1 + eps) A_i) - beta KL_it
//   KL_it = exp(lp_ref - lp) - (lp_ref - lp) - 1      (Schulman's k3 estimator: >= 0, unbiased)
// averaged over each completion's own L_i tokens, then over the n completions:
//   J = (1/n) sum_i (1/L_i) sum_t J_it,   loss = -J.
// The gradient with respect to lp (lp_old and lp_ref are constants):
//   d J_it / d lp = rho A_i  where rho A_i <= clip(rho) A_i (the unclipped term is the minimum), else 0
//                 - beta (1 - exp(lp_ref - lp))
// At rho = 1 (one update per batch of samples, so lp_old = lp) the first term is A_i: the plain
// policy gradient A_i grad lp, and the clip only acts on later updates of the same samples.
#ifndef TW_GRPO_H
#define TW_GRPO_H
#include "core/status.h"
#include "decode/sampler.h"
#include "nn/model.h"
#include "train/step.h"
#include "train/lora_step.h"

// The advantages of n_groups groups of G rewards each (group g is rewards[g*G .. g*G + G)).
//   adv, rewards: (n_groups * G); may alias   eps_adv >= 0
// Sums in double. TW_ERR_ARG for n_groups < 1, G < 1 or a negative or NaN eps_adv.
tw_status tw_grpo_advantages(float *adv, const float *rewards, int n_groups, int G, float eps_adv);

// The loss above (-J) and the mean k3 KL (same averaging), and when dlp is not NULL the gradient
// d loss / d lp WRITTEN to dlp. Completion i's tokens are lp[off_i .. off_i + lens[i]), packed one
// after the other (off_i = lens[0] + ... + lens[i-1]); N = the sum of lens.
//   loss, kl: one float each   dlp, lp, lp_old, lp_ref: (N)   adv, lens: (n)
// Sums in double. TW_ERR_ARG for n < 1, a length < 1, eps < 0 or beta < 0.
tw_status tw_grpo_loss(float *loss, float *kl, float *dlp, const float *lp, const float *lp_old,
                       const float *lp_ref, const float *adv, const int *lens, int n, float eps,
                       float beta);

// ---- the log-probabilities of a completion, from a model's logits ----
// The policy whose log-probs are meant is the one that samples: softmax(logits / tau), tau the
// sampling temperature (1: the model itself), as TRL does.

// lp[t - start] = log softmax(logits[t - 1] / tau)[tokens[t]] for t in [start, T): the log-prob of
// every completion token given everything before it (the prompt is tokens[0 .. start)).
//   lp: (T - start)   logits: (T, V) (the last row is not used)   tokens: (T)   1 <= start < T
// TW_ERR_ARG for start or tau out of range, TW_ERR_SHAPE for a token outside [0, V).
tw_status tw_completion_logprobs(float *lp, const float *logits, const int *tokens, int T, int V,
                                 int start, float tau);
// Its backward: dlogits[t - 1] += dlp[t - start] / tau (onehot(tokens[t]) - softmax(logits[t - 1] / tau)).
//   dlogits: (T, V) added to   dlp: (T - start) the upstream gradient of each log-prob
tw_status tw_completion_logprobs_backward(float *dlogits, const float *dlp, const float *logits,
                                          const int *tokens, int T, int V, int start, float tau);

// ---- one step of GRPO on a batch of sampled completions ----

typedef struct {
    int   G;          // completions per prompt
    float eps;        // clip range of the ratio
    float beta;       // weight of the KL penalty to the reference
    float tau;        // sampling temperature (> 0), also that of every log-prob
    float eps_adv;    // added to the group's standard deviation
} tw_grpo_config;

// n = n_groups * G sequences; sequence i is tokens[i*T_max .. i*T_max + len[i]): its prompt is the
// first prompt_len[i] tokens, the rest its completion (1 <= prompt_len[i] < len[i] <= T_max).
typedef struct {
    int    n, T_max;
    int   *tokens;       // (n, T_max)
    int   *prompt_len;   // (n)
    int   *len;          // (n)
    float *rewards;      // (n)
} tw_grpo_batch;

typedef struct {
    float loss;          // -J before the update
    float kl;            // mean k3 KL to the reference (the J averaging), before the update
    float reward;        // mean reward of the batch
    float signal;        // share of groups whose rewards are not all equal (the others have A = 0)
    float lr, gnorm;     // as tw_train_stats
} tw_grpo_stats;

// Samples one completion: tokens[0 .. prompt_len) is the prompt; tokens are drawn from
// softmax(logits / sp->temperature) (sp's top-p applies too: give 1 so that the sampling policy
// is the one tw_completion_logprobs scores) and appended until one is BOS or EOS (kept: the
// decision to stop is part of the completion) or the sequence has T_max tokens.
//   len: total length out   tokens: (T_max)   cs: a state with a KV cache of >= T_max positions
// TW_ERR_ARG for prompt_len out of [1, T_max).
tw_status tw_grpo_sample(int *len, int *tokens, int prompt_len, int T_max, tw_model_state *cs,
                         const tw_model *m, tw_sampler *sp);
// The same, and it also stops at token stop (kept too): a chat answer's <|end|>
// (train/chat_template.h: tw_chat_end_token); stop -1 (no such token) is tw_grpo_sample.
tw_status tw_grpo_sample_until(int *len, int *tokens, int prompt_len, int T_max, tw_model_state *cs,
                               const tw_model *m, tw_sampler *sp, int stop);

// The loss of a batch of samples and its gradient: the advantages of b->rewards, the reference's
// log-probs (forward of ref through rs), the policy's forward through s, tw_grpo_loss with lp_old
// = lp (rho = 1), then the backward of every sequence (weights d loss / d lp on its completion
// tokens, none on its prompt), ADDED to g. st: loss, kl, reward and signal (lr, gnorm 0).
//   ds, s: states of m for >= b->T_max positions, no cache   rs: a state of ref, the same
tw_status tw_grpo_forward_backward(tw_grpo_stats *st, tw_model_grads *g, tw_model_state *ds,
                                  tw_model_state *s, const tw_model *m, tw_model_state *rs,
                                  const tw_model *ref, const tw_grpo_batch *b, const tw_grpo_config *gc);

// One update from a batch of samples (ratio 1 at the step: lp_old is the policy's own lp, taken by
// the same forward): the advantages of b->rewards, the reference's log-probs (forward of ref
// through rs), the policy's forward, tw_grpo_loss, the backward of every sequence through t
// (weights d loss / d lp on its completion tokens, none on its prompt), clipping, the schedule's
// rate and AdamW on every parameter, as tw_train_step (c->B and c->T are not used).
// TW_ERR_ARG (weights untouched) if the loss or the norm is not finite or b is inconsistent.
tw_status tw_grpo_train_step(tw_grpo_stats *st, tw_trainer *t, tw_model *m, tw_model_state *rs,
                             const tw_model *ref, const tw_grpo_batch *b, const tw_grpo_config *gc,
                             const tw_train_config *c);

// The same update for LoRA adapters (train/lora_step.h): work refreshed from base and ad, the loss
// and gradient of tw_grpo_forward_backward on work (the policy is base + adapters; ref, through rs,
// is the reference: ./train gives the base itself, frozen, as in common practice), the adapters'
// gradients, clipping by their norm, AdamW on A and B; work refreshed again. lt->step and t->step
// count it. TW_ERR_ARG (adapters untouched) if the loss or the norm is not finite.
tw_status tw_grpo_lora_train_step(tw_grpo_stats *st, tw_lora_trainer *lt, tw_trainer *t, tw_model *work,
                                  const tw_model *base, tw_lora_set *ad, tw_model_state *rs,
                                  const tw_model *ref, const tw_grpo_batch *b, const tw_grpo_config *gc,
                                  const tw_train_config *c);

#endif
