// dpo.c: the DPO loss of one preference pair (see dpo.h).
#include <math.h>
#include "train/dpo.h"

// softplus(x) = log(1 + e^x), from e^(-|x|) only.
static double softplus(double x) {
    return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

// sigma(x) = 1 / (1 + e^-x), from e^(-|x|) only.
static double sigmoid(double x) {
    const double e = exp(-fabs(x));
    return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

void tw_dpo_pair_loss(tw_dpo_result *r, double pw, double pl, double rw, double rl, double beta) {
    const double z = beta * ((pw - rw) - (pl - rl));
    r->margin = z;
    r->loss = softplus(-z);               // -log sigma(z)
    const double s = sigmoid(-z);         // d softplus(-z) / dz = -sigma(-z)
    r->d_chosen = -beta * s;
    r->d_rejected = beta * s;
}
