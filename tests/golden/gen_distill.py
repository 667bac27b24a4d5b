#!/usr/bin/python3
"""gen_distill.py: the PyTorch reference for distillation (lib/train/distill.c, ./train --teacher)
and the goldens of tests/test_distill.c, in data/golden/distill/.

    /usr/bin/python3 tests/golden/gen_distill.py

1. loss/<case>/: the loss per counted position
       a tau^2 KL(softmax(zt/tau) || softmax(zs/tau)) + (1 - a) CE(zs, target)
   averaged over the positions whose target is not -100, and its gradient with respect to the
   student's logits by autograd, times an upstream dloss: zs.npy, zt.npy, targets.npy,
   meta.npy = [a, tau, dloss], loss.npy, d_zs.npy.
2. train/: ten steps of a student (gen_train.py's llama init, data/golden/train/llama/) distilled
   from a teacher of another architecture with the same vocabulary (its gpt2 init,
   data/golden/train/gpt2/init.bin), on the llama token file, in ./train's --no-shuffle mode;
   the teacher runs without gradients. losses.npy, lrs.npy, gnorms.npy, hparams.npy (HPARAM_FIELDS
   then a, tau) and final/<name>.npy.
Precision: float64 throughout, goldens rounded to float32 once, on saving.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_io import save_npy  # noqa: E402
from gen_train import logits_of, param_table, read_any, read_tokens  # noqa: E402
from train_common import (adamw_decay_2d, frozen, hparams_row, run_steps, save_run,  # noqa: E402
                          step_rows, trainable)

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "distill")


def distill_loss(zs, zt, targets, a, tau):
    """Mean over counted positions of a tau^2 KL(p_t || q_s) + (1 - a) CE."""
    keep = targets != -100
    logp = F.log_softmax(zt[keep] / tau, dim=-1)
    logq = F.log_softmax(zs[keep] / tau, dim=-1)
    kl = (logp.exp() * (logp - logq)).sum(-1)
    ce = F.cross_entropy(zs[keep], targets[keep], reduction="none")
    return (a * tau * tau * kl + (1 - a) * ce).mean()


LOSS_CASES = {
    # name: T, V, student std, teacher std, ignored positions, a, tau, dloss
    "soft_only_tau2": (4, 7, 1.0, 2.0, [], 1.0, 2.0, 1.0),
    "hard_only": (3, 9, 1.5, 1.0, [1], 0.0, 1.0, 1.0),
    "mixed_tau4_ignored": (6, 33, 2.0, 3.0, [0, 4], 0.5, 4.0, 0.7),
    "mixed_tau_half": (5, 65, 1.0, 1.0, [2], 0.8, 0.5, 1.0),
}


def gen_loss(rng):
    for name, (T, V, ss, st, ignored, a, tau, dloss) in LOSS_CASES.items():
        d = os.path.join(OUT, "loss", name)
        zs32 = (ss * rng.standard_normal((T, V))).astype(np.float32)
        zt32 = (st * rng.standard_normal((T, V))).astype(np.float32)
        targets = rng.integers(0, V, T)
        for t in ignored:
            targets[t] = -100
        zs = torch.tensor(zs32.astype(np.float64), requires_grad=True)
        loss = distill_loss(zs, torch.tensor(zt32.astype(np.float64)), torch.tensor(targets), a, tau)
        (loss * dloss).backward()
        save_npy(os.path.join(d, "zs.npy"), zs32)
        save_npy(os.path.join(d, "zt.npy"), zt32)
        save_npy(os.path.join(d, "targets.npy"), targets.astype(np.int32))
        save_npy(os.path.join(d, "meta.npy"), np.array([a, tau, dloss], np.float64))
        save_npy(os.path.join(d, "loss.npy"), loss.detach().reshape(1))
        save_npy(os.path.join(d, "d_zs.npy"), zs.grad)


def gen_train():
    hp = dict(B=3, T=12, steps=10, lr=5e-3, warmup=1, min_lr=1e-3, weight_decay=0.1,
              beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0)
    a, tau = 0.7, 2.0
    cs, ws = read_any(os.path.join("data", "golden", "train", "llama", "init.bin"))
    ct, wt = read_any(os.path.join("data", "golden", "train", "gpt2", "init.bin"))
    assert cs["vocab"] == ct["vocab"]
    teacher = frozen(wt)
    names = [n for n, _ in param_table(cs)]
    w = trainable(ws, names)
    toks = torch.from_numpy(read_tokens(os.path.join("data", "golden", "train", "llama", "tokens.bin")))
    B, T = hp["B"], hp["T"]

    def objective(s):
        total = 0.0
        for _, row in step_rows(toks, s, B, T):
            with torch.no_grad():
                zt = logits_of(row[:T], teacher, ct)
            total = total + T * distill_loss(logits_of(row[:T], w, cs), zt, row[1:], a, tau)
        loss = total / (B * T)
        return loss, loss.item()
    losses, lrs, gnorms = run_steps([w[k] for k in names], adamw_decay_2d(w, names, hp), hp, objective)
    save_run(os.path.join(OUT, "train"), hparams_row(hp, a, tau), dict(losses=losses, lrs=lrs, gnorms=gnorms), w)
    print(f"distill: loss {losses[0]:.4f} -> {losses[-1]:.4f}, gnorm {gnorms[0]:.4g} -> {gnorms[-1]:.4g}")


def main():
    gen_loss(np.random.default_rng(2828))
    gen_train()


if __name__ == "__main__":
    main()
