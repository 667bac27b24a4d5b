// concepts.h: the concept exercises (5..25, 39, 40), at least one per lesson (the kernel exercises 1..4 in
// exercise.h are lesson 12's), each a small function you write in exN_<topic>.c. `make exerciseN`
// builds your file with check_concepts.c, which compares it with the library's reference (lib/)
// on random inputs and on the awkward cases (size 1, an all -inf row, huge logits, a constant row,
// a repeated id, ...) that break the usual wrong attempt, and names the first wrong element (row
// and column for a matrix), the value expected there and, where it can tell, the rule your answer
// broke. `make exerciseN SOLUTION=1` builds the worked answer in solutions/; wrong/ holds one
// classic wrong attempt per exercise, which `make test` requires the checker to reject. The
// kernel exercises 1..4 (exercise.h) are about speed; these are about meaning.
#ifndef CONCEPTS_H
#define CONCEPTS_H
#include <stdint.h>

// Exercise 5 (lesson 6): y = softmax(x / temperature), stable for huge logits; a row that is all
// -inf gives zeros, not NaN.                       y, x: (n)   temperature > 0
void ex_softmax_temperature(float *y, const float *x, int n, float temperature);

// Exercise 6 (lesson 3): one row of each norm.     out, x, gamma, beta, weight: (C)
//   LayerNorm: out = (x - mean) / sqrt(var + eps) * gamma + beta   (var divides by C)
//   RMSNorm:   out = x / sqrt(mean(x^2) + eps) * weight
void ex_layernorm(float *out, const float *x, const float *gamma, const float *beta, int C, float eps);
void ex_rmsnorm(float *out, const float *x, const float *weight, int C, float eps);

// Exercise 7 (lesson 5): RoPE on one head vector at position pos, adjacent pairing (2i, 2i+1),
// in place: pair i turns by the angle pos * theta^(-2i/D).     x: (D), D even
void ex_rope_adjacent(float *x, int D, int pos, float theta);

// Exercise 8 (lesson 7): causal scaled dot-product attention for one head.
//   out[t] = sum_{s <= t} softmax_s(q[t] . k[s] / sqrt(D)) v[s]
//   out, q, k, v: (T, D)
void ex_causal_attention(float *out, const float *q, const float *k, const float *v, int T, int D);

// Exercise 9 (lesson 8): SwiGLU for one token: out = Wd (silu(Wg x) * (Wu x)).
//   out, x: (C)   Wg, Wu: (F, C)   Wd: (C, F)
void ex_swiglu(float *out, const float *x, const float *Wg, const float *Wu, const float *Wd,
               int C, int F);

// Exercise 10 (lesson 11): top-p (nucleus) sampling with lib/decode/sampler.c's rule. probs (n) sum
// to 1; u in [0, 1) is the sampler's uniform draw. Sort the tokens by probability, largest first
// (ties: lower id first), keep the shortest prefix whose mass exceeds p, and return the id of the
// first kept token at which the running sum exceeds u * (the kept mass). Accumulate in float, in
// that order. Like lib/decode/sampler.c, first drop the tokens below (1 - p) / (n - 1) (they can
// never be in the nucleus); then the fallback "no prefix exceeds p" keeps every remaining token, as
// there.
int ex_top_p(const float *probs, int n, float p, float u);

// Exercise 11 (lesson 13): the backward of a Linear layer y = x W^T + b over T tokens. Given dy,
// the gradient of the loss with respect to y, WRITE (do not add to) the three gradients:
//   dx = dy W   (T, C_in)     dW = dy^T x   (C_out, C_in)     db = sum over t of dy[t]   (C_out)
//   dy: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)
void ex_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x,
                        const float *W, int T, int C_in, int C_out);

// Exercise 12 (lesson 13): the gradient of the mean cross-entropy with respect to the logits,
// softmax included: for each counted row t, dlogits[t] = (softmax(logits[t]) - onehot(targets[t])) / n
// where n counts the rows whose target is not -100 (ignored rows, and every row when all are
// ignored, get zeros). Stable for huge logits; a -inf logit has probability 0.
//   dlogits, logits: (T, V)   targets: (T)
void ex_cross_entropy_backward(float *dlogits, const float *logits, const int *targets, int T, int V);

// Exercise 13 (lesson 1): BPE encoding as tw_tokenizer_encode does it, without BOS and EOS.
// vocab (V) holds the token strings, scores (V) their merge priority; ids 3 .. 258 are the byte
// tokens (id = byte + 3). For a non-empty text: the token for " " first (the dummy prefix), then one
// token per character (here: per byte; every text of the checker is ASCII but for one byte that is
// not in the vocabulary, which becomes its byte token), then repeatedly merge the adjacent pair
// whose concatenation is in the vocabulary with the HIGHEST score (the leftmost such pair on a tie)
// until no adjacent pair is in the vocabulary. Returns the number of ids written.
//   ids: (room for strlen(text) + 1)
int ex_bpe_encode(int *ids, const char *text, const char *const *vocab, const float *scores, int V);

// Exercise 14 (lesson 2): the backward of the embedding lookup out[t] = table[ids[t]]: ADD each
// row of dout to its token's row of dtable (gradients accumulate: dtable already holds earlier
// gradients, and an id that appears twice collects both rows).
//   dtable: (V, C)   dout: (T, C)   ids: (T), each in [0, V)
void ex_embedding_backward(float *dtable, const float *dout, const int *ids, int T, int V, int C);

// Exercise 15 (lesson 4): causal grouped-query attention over all heads. q holds the H query heads
// side by side in each row, k and v the G key/value heads; query head h reads key/value head
// h / (H / G). Head h of row t is q[t*H*D + h*D .. + D]. z gets each head's attention output in the
// same layout. You may call tw_sdpa_forward (lib/nn/sdpa.h) on one head's contiguous (T, D)
// copies: the exercise is the gathering into heads and the head mapping.
//   z, q: (T, H*D)   k, v: (T, G*D)   G divides H
void ex_gqa_attention(float *z, const float *q, const float *k, const float *v, int T, int H,
                      int G, int D);

// Exercise 16 (lesson 9): the residual wiring of a pre-norm transformer block, from its four
// sub-layers (the checker passes the library's RMSNorms, attention and SwiGLU):
//   h = x + attn(norm1(x))      y = h + ffn(norm2(h))
// Each sub-layer maps (T, C) to (T, C): f->norm1(f->ctx, out, in, T) and so on; out must not
// alias in. scratch holds 3 * T * C floats for your intermediates.
//   y, x: (T, C)
typedef struct {
    void (*norm1)(void *ctx, float *out, const float *in, int T);
    void (*attn)(void *ctx, float *out, const float *in, int T);
    void (*norm2)(void *ctx, float *out, const float *in, int T);
    void (*ffn)(void *ctx, float *out, const float *in, int T);
    void *ctx;
} ex_sublayers;
void ex_prenorm_block(float *y, const float *x, int T, int C, const ex_sublayers *f, float *scratch);

// Exercise 17 (lesson 10): the parameters of a Llama-style model (RMSNorm with a gain only,
// attention without biases, SwiGLU, no position table), component by component, as
// tw_params_count (lib/formats/hf_config.h) counts them.
typedef struct {
    long long C, L, H, G, D, F, V;   // hidden size, layers, query heads, kv heads, head_dim, MLP width, vocab
    int tied;                        // 1: the output head shares the token embedding's storage
} ex_model_config;
typedef struct {
    long long embed;        // the token embedding table
    long long attn_layer;   // q, k, v, o weights of one layer
    long long mlp_layer;    // gate, up, down weights of one layer
    long long norms_layer;  // the two norms' gains of one layer
    long long final_norm;
    long long lm_head;      // 0 when tied (counted once, in embed)
    long long total;        // every unique parameter
} ex_param_counts;
void ex_count_params(ex_param_counts *out, const ex_model_config *cfg);

// Exercise 18 (lesson 14): one AdamW step on n parameters, torch.optim.AdamW's update (step counts
// from 1):
//   p *= 1 - lr * wd                                   decoupled decay, before the Adam update
//   m = beta1 m + (1 - beta1) g        v = beta2 v + (1 - beta2) g^2
//   p -= lr * m_hat / (sqrt(v_hat) + eps)   with m_hat = m / (1 - beta1^step), v_hat = v / (1 - beta2^step)
//   p, m, v: (n) updated in place   g: (n)
void ex_adamw_step(float *p, float *m, float *v, const float *g, long n, int step, float lr,
                   float beta1, float beta2, float eps, float wd);

// Exercise 19 (lesson 15): Q8_0 quantization of one group of gs values, as tw_quant_groups does:
//   s = max_i |x_i| / 127 (in float)      q_i = rintf(x_i / s), nearest with ties to even
// A group of zeros gets s = 0 and every q_i = 0.       q, x: (gs)   s: one float
void ex_q8_quantize_group(int8_t *q, float *s, const float *x, int gs);

// Exercise 20 (lesson 16): one BPE merge applied to a sequence of token ids, in place: every
// occurrence of the adjacent pair (a, b) becomes the single id ab, scanning from the left, so the
// occurrences never overlap ("a a a" with the pair (a, a) gives "aa a"). Returns the new length.
// The result is what tw_tokenizer_encode gives once the piece ab joins the vocabulary.
//   ids: (n) on entry, the first (return value) entries on exit
int ex_bpe_merge(int *ids, int n, int a, int b, int ab);

// Exercise 21 (lesson 17): beam search as tw_beam_search (lib/decode/beam.h) does it. Starting from
// prompt (n_prompt tokens), keep the `width` sequences with the largest total log-probability;
// at each of `steps` steps extend every kept sequence by every token (next() writes the V
// log-probabilities after a prefix) and keep the best `width` of all width x V candidates, ties
// to the earlier beam, then the lower token id. At the first step there is one sequence (the
// prompt). Write the new tokens of the best final sequence to out and its total log-probability
// (the sum over the steps, in float, in step order) to *out_logprob. Returns 0, or -1 if a buffer
// cannot be allocated.
//   out: (steps)   prompt: (n_prompt)
typedef void (*ex_next_logprobs)(float *logprobs, const int *prefix, int len, void *ctx);
int ex_beam_search(int *out, float *out_logprob, const int *prompt, int n_prompt, int steps,
                   int width, int V, ex_next_logprobs next, void *ctx);

// Exercise 22 (lesson 18): the logit lens: read the residual stream h of one position at some
// layer as if it were the last one: the model's final RMSNorm, then the classifier.
//   logits[v] = sum_c W[v][c] * rmsnorm(h)[c]     rmsnorm(h)[c] = h[c] / sqrt(mean(h^2) + eps) * g[c]
//   logits: (V)   h, g: (C)   W: (V, C)
void ex_logit_lens(float *logits, const float *h, const float *g, const float *W, int C, int V,
                   float eps);

// Exercise 23 (lesson 1): decoding one token to the bytes it prints, as tw_tokenizer_decode does.
// The piece is vocab[token], except: after BOS (prev_token == 1) a piece that starts with a space
// loses that one space (it was the dummy prefix), and a piece spelled "<0xHH>" (two upper-case hex
// digits) stands for the single byte 0xHH. Writes the bytes and a terminating NUL to out and
// returns the number of bytes (without the NUL).   out: room for strlen(vocab[token]) + 1
int ex_decode_piece(char *out, int prev_token, int token, const char *const *vocab);

// Exercise 24 (lesson 14): gradient clipping by the global norm, as torch's clip_grad_norm_ and
// tw_clip_grad_norm do. The norm is ONE number over every tensor together: sqrt of the sum of
// every squared element (sum in double: squares of 1e20 overflow float). If it exceeds max_norm,
// scale every gradient by max_norm / (norm + 1e-6); max_norm <= 0 turns clipping off. Returns the
// norm before clipping.   grads[i]: (counts[i]), scaled in place
float ex_clip_grad_norm(float *const *grads, const long *counts, int n_tensors, float max_norm);

// Exercise 25 (lesson 14): the learning rate of step (counted from 0), warm-up then cosine decay,
// as tw_lr_schedule (lib/train/optim.h) and llama2.c's train.py compute it:
//   step < warmup:                 lr * step / warmup
//   warmup <= step <= decay_steps: min_lr + (lr - min_lr) (1 + cos(pi r)) / 2,
//                                  r = (step - warmup) / (decay_steps - warmup)
//   step > decay_steps, or decay_steps <= warmup: min_lr
// Compute in double and round once.
float ex_lr_schedule(int step, float lr, float min_lr, int warmup, int decay_steps);

// Exercise 39 (lesson 28): one proposal of speculative decoding. The draft proposed token x,
// drawn from its distribution q; p is the target's distribution (both (V), summing to 1). Accept
// x when u_accept < p[x] / q[x] (with probability min(1, p[x] / q[x])) and return it; otherwise
// draw from the residual r = max(0, p - q) / sum(max(0, p - q)) with u_resid: return the first
// token whose running sum of r exceeds u_resid (the last token with r > 0 if rounding leaves the
// total just below u_resid). If the residual is all zero (p == q), draw from p the same way.
int ex_spec_step(const float *p, const float *q, int V, int x, float u_accept, float u_resid);

// Exercise 40 (lesson 28): a paged KV cache's lookup. Position pos of a sequence lives in its
// logical block pos / B, which the block table maps to a pool block; return the row of the pool
// (pool block * B + row within the block) that holds it.   table: (pos / B + 1) pool blocks
int ex_block_row(const int *table, int B, int pos);

// Exercise 33 (lesson 19): the ring all-reduce's schedule. P processes stand in a ring, process p
// sending only to (p + 1) mod P; the data is cut into P chunks (0 .. P-1). Return the chunk that
// process p sends at step s (0 .. P-2) of
//   phase 0, the reduce-scatter: the receiver ADDS it into its own copy of that chunk;
//   phase 1, the all-gather: the receiver OVERWRITES its copy with it.
// Every process sends at once in each step. After both phases every process must hold, in every
// chunk, the sum of all P processes' data, each counted once. Return -1 for nothing (P = 1).
int ex_ring_chunk(int phase, int p, int s, int P);


// Exercise 27 (lesson 13): the backward of RMSNorm for one row, y = x / rms * w with
// rms = sqrt(mean(x^2) + eps). Given dy, WRITE (do not add to):
//   dw = dy * x / rms
//   dx = (g - xhat * mean(g * xhat)) / rms,   g = dy * w, xhat = x / rms
// (every output depends on every input through rms: the mean term is that path).
//   dx, dw, dy, x, w: (C)
void ex_rmsnorm_backward(float *dx, float *dw, const float *dy, const float *x, const float *w,
                         int C, float eps);

// Exercise 28 (lesson 20): the backward pass of a scalar autograd tape. Node i was made by
// op[i] from nodes a[i] and b[i] (ids below i; -1 when unused) and has value val[i]:
//   EX_AG_LEAF: no inputs   EX_AG_ADD: a + b   EX_AG_MUL: a * b   EX_AG_EXP: e^a
//   EX_AG_LOG: log a        EX_AG_RECIP: 1 / a
// The tape's order is topological. Fill grad[i] = d(node n-1)/d(node i) for every node: grad of
// the last node is 1; walk the nodes from the last to the first, each adding its gradient times
// its local derivative to its inputs' gradients (a node used twice collects both).
//   op, a, b, val, grad: (n)
enum { EX_AG_LEAF, EX_AG_ADD, EX_AG_MUL, EX_AG_EXP, EX_AG_LOG, EX_AG_RECIP };
void ex_tape_backward(double *grad, const int *op, const int *a, const int *b, const double *val, int n);

// Exercise 35 (lesson 24): one query row of attention with an online softmax: visit the n scores
// in blocks of B (the last block may be short), keep a running maximum m, a running sum l of
// exp(x - m) and an unnormalised output acc = sum exp(x - m) v; when a block raises m, multiply l
// and acc by exp(m_old - m_new) first. At the end out = acc / l, and the return value is the
// row's log-sum-exp m + log l. A row whose scores are all -inf gives out = 0 and returns -inf.
//   out: (D)   x: (n) scores   v: (n, D) value rows   B >= 1
float ex_online_attention_row(float *out, const float *x, const float *v, int n, int D, int B);

// Exercise 36 (lesson 25): YaRN's RoPE frequencies (nn/rope_scaling.h has the formulas): plain
// f_i = theta^(-2i/D) for i = 0 .. D/2-1, scale s, trained context L, beta_fast > beta_slow.
// Pairs that turn more than beta_fast times over L positions keep f_i, pairs that turn fewer than
// beta_slow times become f_i / s, and in between the share of f_i falls linearly in i between the
// band edges lo = max(floor(d(beta_fast)), 0) and hi = min(ceil(d(beta_slow)), D - 1), where
// d(r) = D ln(L / (2 pi r)) / (2 ln theta) is the pair index that turns r times.
//   freq: (D/2), in double
void ex_yarn_freqs(double *freq, int D, double theta, double s, int L, double beta_fast,
                   double beta_slow);

// Exercise 30 (lesson 21): the backward of a LoRA Linear y = x W^T + s (x A^T) B^T, W frozen,
// s = alpha / r. With u = x A^T (T, r) and du = s dy B (T, r), WRITE (do not add to):
//   dA = du^T x   (r, C_in)     dB = s dy^T u   (C_out, r)     dx = dy W + du A   (T, C_in)
//   dy: (T, C_out)   x: (T, C_in)   W: (C_out, C_in)   A: (r, C_in)   B: (C_out, r)
void ex_lora_backward(float *dx, float *dA, float *dB, const float *dy, const float *x,
                      const float *W, const float *A, const float *B, float s, int T, int C_in,
                      int C_out, int r);

// Exercise 31 (lesson 22): the gradient of the distillation loss with respect to the student's
// logits. Per counted row t (targets[t] != -100), with p = softmax(teacher[t] / tau),
// q = softmax(student[t] / tau) and s1 = softmax(student[t]), the loss is
// a tau^2 KL(p || q) + (1 - a) CE(student[t], targets[t]), averaged over the n counted rows; WRITE
//   dlogits[t] = (a tau (q - p) + (1 - a) (s1 - onehot(targets[t]))) / n     (ignored rows: 0)
//   dlogits, student, teacher: (T, V)   targets: (T)
void ex_distill_backward(float *dlogits, const float *student, const float *teacher,
                         const int *targets, int T, int V, float a, float tau);

// Exercise 37 (lesson 26): top-k routing of one token, Mixtral's rule. p = softmax(logits) over
// all E (stable for huge logits); choose the k largest p, best first, ties to the lower expert
// index; their weights are p divided by the sum of the chosen p.
//   sel: (k) chosen expert ids   w: (k) their weights   logits: (E)   1 <= k <= E
void ex_top_k_route(int *sel, float *w, const float *logits, int E, int k);

// Exercise 38 (lesson 27): attention scores of one head over a latent KV cache, absorbed form.
// Row s of cache holds [c_s (r) ; k_pe_s (d_rope)]; the head's key would be
// k_s = [W_uk c_s ; k_pe_s], W_uk (d_nope, r). Compute, without expanding any k_s,
//   scores[s] = ((W_uk^T q_nope) . c_s + q_pe . k_pe_s) / sqrt(d_nope + d_rope)
//   scores: (S)   q_nope: (d_nope)   q_pe: (d_rope)   W_uk: (d_nope, r)   cache: (S, r + d_rope)
void ex_latent_scores(float *scores, const float *q_nope, const float *q_pe, const float *W_uk,
                      const float *cache, int S, int d_nope, int d_rope, int r);

// Exercise 34 (lesson 23): GPT-2's byte-to-unicode map, which Qwen3 reuses: the character that
// stands for byte b (0..255) in a byte-level vocabulary file. The bytes printable in Latin-1
// ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) stand for themselves; every other byte, in increasing order,
// gets the next code point from 256 on (byte 0 -> 256, ..., ' ' -> 288 = 'Ġ').
unsigned ex_byte_to_unicode(int b);

// Exercise 43 (docs/grpo.md): GRPO's gradient for fixed samples. n_groups groups of G completions;
// completion i has lens[i] tokens, packed one after another in lp, lp_old, lp_ref and dlp.
//   A_i = (r_i - mean of its group) / (population std of its group + 1e-4)
//   rho = exp(lp - lp_old);  J_t = min(rho A, clip(rho, 1 - eps, 1 + eps) A) - beta k3_t,
//   k3_t = exp(lp_ref - lp) - (lp_ref - lp) - 1;  J = mean over completions of the mean over
//   each one's tokens;  loss = -J.  Write dlp = d loss / d lp.
//   dlp, lp, lp_old, lp_ref: (sum of lens)   rewards, lens: (n_groups * G)
void ex_grpo_grad(float *dlp, const float *lp, const float *lp_old, const float *lp_ref,
                  const float *rewards, const int *lens, int n_groups, int G, float eps, float beta);

// Exercise 42 (docs/preferences.md): the DPO loss of one pair from its two log-probability
// differences dw = log pi(y_w|x) - log pi_ref(y_w|x) and dl = log pi(y_l|x) - log pi_ref(y_l|x):
//   z = beta (dw - dl),   loss = -log sigma(z) = log(1 + e^-z)
// Return the loss and WRITE its gradient: *d_dw = d loss / d dw, *d_dl = d loss / d dl. It must be
// finite for any finite z (z = -1000 gives a loss of 1000, not inf).
double ex_dpo_loss(double *d_dw, double *d_dl, double dw, double dl, double beta);

// A stub calls this instead of computing; the checker then says "not implemented yet".
void ex_not_implemented(void);

// The path of the file this binary was built from (source_name.c, set by the Makefile).
extern const char ex_source_file[];

#endif
