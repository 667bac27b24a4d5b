#!/usr/bin/python3
"""gen_train_mla.py: the goldens of the ten-step training comparison of models whose attention is
multi-head latent attention (block.mla_*, lib/nn/block.h; the layer is lib/nn/mla.h), alone and
together with experts (DeepSeek-V3's arrangement), in data/golden/train_mla/<case>/, used by
tests/test_mla_model.c.

Run from the top of the checkout with Debian's Python (it has PyTorch):

    /usr/bin/python3 tests/golden/gen_train_mla.py

The cases are below; the reference is train_variants.py's, as for gen_train_moe.py's cases: the
model is written as TWMX version 2, the attention is gen_mla.py's (the layer's own golden) on the
block's pre-norm input, and the load-balancing term counts only when the model has experts.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_variants import gen_cases  # noqa: E402

OUT = os.path.join("data", "golden", "train_mla")
NO_MOE = dict(n_experts=0, top_k=0, n_shared=0, norm_topk=0)
CASES = {
    # llama-shaped, latent attention with odd sizes (q_rank 5, kv_rank 6, d_nope 3, d_rope 4,
    # d_v 5 against C 24, H 4), the dense SwiGLU FFN; clipping and cosine decay.
    "llama_mla": dict(style="llama", mla=dict(q_rank=5, kv_rank=6, d_nope=3, d_rope=4, d_v=5),
                      moe=NO_MOE,
                      hp=dict(B=3, T=12, steps=10, lr=5e-3, warmup=0, min_lr=5e-4,
                              weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0,
                              aux_coef=0.0)),
    # DeepSeek-V3's arrangement: latent attention and experts (4 of 2, one shared expert,
    # renormalised gates), load-balancing weight 0.1; warm-up, no clipping. Its own seed
    # (the first draw gave a gradient norm whose float32 value wandered 6e-5 from float64's at
    # one step, a badly conditioned batch, the weights agreeing within 6e-6).
    "llama_mla_e4k2s1": dict(style="llama",
                             mla=dict(q_rank=8, kv_rank=4, d_nope=2, d_rope=2, d_v=3),
                             moe=dict(n_experts=4, top_k=2, n_shared=1, norm_topk=1),
                             hp=dict(B=3, T=10, steps=10, lr=1e-2, warmup=1, min_lr=1e-3,
                                     weight_decay=0.05, beta1=0.9, beta2=0.95, eps=1e-8, clip=0.0,
                                     aux_coef=0.1), seed=3133),
}


if __name__ == "__main__":
    gen_cases(OUT, CASES, seed=3131, std=0.2)
