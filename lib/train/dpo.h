// dpo.h: the loss of direct preference optimisation (DPO; Rafailov et al. 2023, "Direct Preference
// Optimization: Your Language Model is Secretly a Reward Model", eq. 7) for one preference pair:
// a prompt x, a chosen completion y_w and a rejected one y_l. With the policy's log-probabilities
// pw = log pi(y_w | x), pl = log pi(y_l | x) and the frozen reference's rw, rl
// (train/seq_logprob.h):
//   z    = beta * [(pw - rw) - (pl - rl)]           the reward margin: each completion's implicit
//                                                   reward is beta * log(pi / pi_ref)
//   loss = -log sigma(z) = softplus(-z)
//   d loss / d pw = -beta * sigma(-z),   d loss / d pl = +beta * sigma(-z)
// The reference enters only as constants (it is not trained), so it moves the point where the
// gradient is evaluated but gets no gradient itself.
#ifndef TW_DPO_H
#define TW_DPO_H

typedef struct {
    double loss;       // softplus(-z) >= 0; log 2 when the policy is the reference
    double margin;     // z: positive when the policy prefers y_w more than the reference does
    double d_chosen;   // d loss / d pw
    double d_rejected; // d loss / d pl
} tw_dpo_result;

// The loss of one pair, its margin and its gradient with respect to pw and pl, in double. Stable
// for any finite z: softplus and sigma are computed from exp of a non-positive number only, so
// neither overflows (softplus(-z) = max(-z, 0) + log1p(exp(-|z|))).
void tw_dpo_pair_loss(tw_dpo_result *r, double pw, double pl, double rw, double rl, double beta);

#endif
