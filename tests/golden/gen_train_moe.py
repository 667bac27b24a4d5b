#!/usr/bin/python3
"""gen_train_moe.py: the goldens of the ten-step training comparison of models whose FFNs are
mixtures of experts (block.moe_experts, lib/nn/block.h), in data/golden/train_moe/<case>/, used by
tests/test_moe_model.c.

Run from the top of the checkout with Debian's Python (it has PyTorch):

    /usr/bin/python3 tests/golden/gen_train_moe.py

The cases are below; the reference (the MoE layer, the TWMX file, the objective with its
load-balancing term, the tie rule, the files written) is train_variants.py's.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_variants import gen_cases  # noqa: E402

OUT = os.path.join("data", "golden", "train_moe")
CASES = {
    # llama-shaped (untied head, RoPE on pairs): 4 experts, 2 chosen, renormalised, one shared
    # expert, a small load-balancing weight, clipping and cosine decay.
    "llama_e4k2s1": dict(style="llama", moe=dict(n_experts=4, top_k=2, n_shared=1, norm_topk=1),
                         hp=dict(B=3, T=12, steps=10, lr=5e-3, warmup=0, min_lr=5e-4,
                                 weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0,
                                 aux_coef=0.01)),
    # qwen3-shaped (QK-norm, tied head): 5 experts, 2 chosen, probabilities as they are
    # (norm_topk_prob false, as Qwen2-MoE), no shared expert, a large load-balancing weight so
    # its gradient is a visible part of the router's; warm-up, no clipping.
    "qwen3_e5k2": dict(style="qwen3", moe=dict(n_experts=5, top_k=2, n_shared=0, norm_topk=0),
                       hp=dict(B=3, T=10, steps=10, lr=1e-2, warmup=1, min_lr=1e-3,
                               weight_decay=0.05, beta1=0.9, beta2=0.95, eps=1e-8, clip=0.0,
                               aux_coef=0.5)),
}


if __name__ == "__main__":
    gen_cases(OUT, CASES, seed=31, std=0.1)   # one random stream for both cases, in order
