#!/usr/bin/python3
"""gen_train_rope_scaling.py: ten training steps past the trained context with a scaled RoPE
(./train --rope-scaling KIND --rope-factor F --seq T), in float64 PyTorch, for
tests/test_train_rope_scaling.c. The training loop, the model and the data rule are
gen_train.py's (imported, unchanged); only RoPE differs: each pair i turns at the scaled
frequency f_i' and cos and sin are multiplied by the attention factor m, both from
gen_rope_scaling.py's frequencies(), written from the published formulas (linear: Chen et al.
2023; NTK-aware: bloc97 2023; YaRN: Peng et al. 2023), not from the C code.

Run from the top of the checkout with Debian's Python (it has PyTorch):
    /usr/bin/python3 tests/golden/gen_train_rope_scaling.py
Reads data/golden/train/<base>/init.bin and tokens.bin (gen_train.py's), writes
data/golden/train_rope/<case>/: scaling.npy (kind 1 linear / 2 ntk / 3 yarn, factor, trained
context L), hparams.npy (train_common.HPARAM_FIELDS order), losses.npy, lrs.npy, gnorms.npy and
final/<name>.npy, float64 computed, rounded to float32 once on saving.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_train  # noqa: E402
from gen_rope_scaling import frequencies  # noqa: E402
from golden_io import save_npy  # noqa: E402

OUT = os.path.join("data", "golden", "train_rope")
KINDS = {"linear": 1, "ntk": 2, "yarn": 3}

# case: (base case of gen_train.py, kind, factor, hyper-parameters). T is past the base model's
# max_seq of 32 (the trained context L): what the scaling is for.
CASES = {
    "llama_yarn": ("llama", "yarn", 2.0, dict(B=2, T=48, steps=10, lr=5e-3, warmup=0, min_lr=5e-3,
                                              weight_decay=0.1, beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0)),
    "llama_linear": ("llama", "linear", 2.0, dict(B=2, T=40, steps=10, lr=5e-3, warmup=1, min_lr=5e-4,
                                                  weight_decay=0.1, beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0)),
    "qwen3_ntk": ("qwen3", "ntk", 2.0, dict(B=2, T=48, steps=10, lr=1e-2, warmup=1, min_lr=0.0,
                                            weight_decay=0.05, beta1=0.8, beta2=0.95, eps=1e-7, clip=0.5)),
    "qwen3_yarn": ("qwen3", "yarn", 4.0, dict(B=1, T=100, steps=10, lr=1e-2, warmup=0, min_lr=1e-3,
                                              weight_decay=0.1, beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0)),
}


def scaled_rope(freq, mscale):
    """A replacement for gen_model.rope(x, kind, pos, theta) with the given frequencies (D/2) and
    attention factor: x (T, n, D) rotated pair by pair, cos and sin times mscale."""
    f = torch.tensor(freq, dtype=torch.float64)

    def rope(x, kind, pos, theta):
        T, n, D = x.shape
        ang = torch.outer(pos.double(), f)                                   # (T, D/2)
        c, s = (mscale * ang.cos())[:, None, :], (mscale * ang.sin())[:, None, :]
        if kind == "adjacent":
            x0, x1 = x[..., 0::2], x[..., 1::2]
            return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).reshape(T, n, D)
        x0, x1 = x[..., : D // 2], x[..., D // 2:]
        return torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1)
    return rope


def main():
    for case, (base, kind, factor, hp) in CASES.items():
        d_in = os.path.join("data", "golden", "train", base)
        c, w = gen_train.read_any(os.path.join(d_in, "init.bin"))
        L = c["max_seq"]
        assert hp["T"] > L, "the case must train past the trained context"
        freq, mscale = frequencies(kind, c["head_dim"], c["rope_theta"], factor, L, 32.0, 1.0)
        gen_train.rope = scaled_rope(freq, mscale)   # gen_train.attention looks rope up at call time
        tokens = gen_train.read_tokens(os.path.join(d_in, "tokens.bin"))
        losses, lrs, gnorms, final = gen_train.train(c, w, tokens, hp)
        d = os.path.join(OUT, case)
        save_npy(os.path.join(d, "scaling.npy"), np.array([KINDS[kind], factor, L], np.float64))
        gen_train.save_case(d, hp, losses, lrs, gnorms, final)
        print(f"{case}: {kind} x{factor:g} from L = {L} to T = {hp['T']} (m = {mscale:.4f}): loss "
              f"{losses[0]:.4f} -> {losses[-1]:.4f}, gnorm {gnorms[0]:.3f} -> {gnorms[-1]:.3f}")


if __name__ == "__main__":
    main()
