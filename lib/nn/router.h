// router.h: the router of a mixture-of-experts layer: scores for E experts from router logits,
// the top-k choice per token, the gate weights of the chosen experts, the auxiliary
// load-balancing loss, and the backward of all of it (through the gate weights and the scores;
// the discrete choice itself has no gradient).
//
// The variants the configs name:
//   Mixtral, Qwen3-MoE   softmax over all E, top-k, renormalised over the chosen (norm_topk_prob);
//                        this equals a softmax over the k chosen logits
//   Qwen2-MoE, OLMoE     the same with norm_topk_prob false: the chosen probabilities as they are
//   DeepSeek-V3          sigmoid scores; a per-expert bias added only to choose (never to the
//                        weights); experts in n_group groups, a group scored by the sum of its two
//                        best biased scores, only the topk_group best groups may be chosen from;
//                        weights renormalised over the chosen, then times routed_scaling_factor.
// Ties: among equal scores the lower expert index (and the lower group index) is chosen first.
#ifndef TW_ROUTER_H
#define TW_ROUTER_H

typedef enum { TW_ROUTER_SOFTMAX = 0, TW_ROUTER_SIGMOID = 1 } tw_router_score;

#define TW_ROUTER_MAX_GROUPS 64

typedef struct {
    int             E;           // routed experts
    int             k;           // experts chosen per token, 1 <= k <= E
    tw_router_score score;       // softmax over E, or an independent sigmoid per expert
    int             norm_topk;   // 1: the chosen weights are divided by their sum
    float           scale;       // routed_scaling_factor (1 unless DeepSeek)
    int             n_group;     // groups of E / n_group experts (1: no grouping), <= 64
    int             topk_group;  // groups that may be chosen from (n_group: all)
} tw_router_config;

// probs = softmax(logits) per row, or sigmoid(logits) elementwise.   probs, logits: (T, E)
void tw_router_scores(float *probs, const float *logits, int T, const tw_router_config *cfg);

// The chosen experts of every token, best first, by probs + bias (bias: (E) or NULL; used only
// here), within the best topk_group groups when n_group > 1.
//   sel: (T, k)   probs: (T, E)
void tw_router_select(int *sel, const float *probs, const float *bias, int T,
                      const tw_router_config *cfg);

// Gate weights of the chosen experts: w[t][j] = scale * p / (sum of the chosen p if norm_topk,
// else 1), p = probs[t][sel[t][j]].   w: (T, k)   probs: (T, E)   sel: (T, k)
void tw_router_gates(float *w, const float *probs, const int *sel, int T,
                     const tw_router_config *cfg);

// Tokens routed to each expert: count[e] = how many (t, j) have sel[t][j] == e.   count: (E)
void tw_router_counts(int *count, const int *sel, int T, const tw_router_config *cfg);

// The auxiliary load-balancing loss of Switch Transformer / Mixtral, E * sum_i f_i * P_i, with
// f_i = count_i / (T k) the fraction of the T k choices that went to expert i and P_i the mean
// of probs[.][i] over the T tokens. It is 1 when both are uniform; HF transformers'
// load_balancing_loss_func returns k times this value (its f sums to k, not 1).
float tw_router_aux_loss(const float *probs, const int *sel, int T, const tw_router_config *cfg);

// ---- backward (dlogits is overwritten, not accumulated) ----

// From dw = dL/dw (T, k) and the aux loss's weight aux_coef (the loss being L + aux_coef * aux),
// the gradient of the router logits. f_i counts as a constant (it comes from the choice).
//   dlogits: (T, E)   dw: (T, k)   probs: (T, E) from tw_router_scores   sel: (T, k)
void tw_router_backward(float *dlogits, const float *dw, const float *probs, const int *sel,
                        int T, const tw_router_config *cfg, float aux_coef);

#endif
