"""train_common.py: the training loop of ./train's deterministic mode (--no-shuffle), in float64
PyTorch, shared by the training goldens (gen_train.py and the generators built on it: gen_sft.py,
gen_distill.py, gen_lora.py, gen_grpo.py, gen_dpo.py, gen_train_rope_scaling.py, and the block
variants of train_variants.py), and the one way they write a run's curves.

The rule ./train documents (docs/training.md): the learning rate of step s (from 0) is llama2.c
train.py's get_lr with lr_decay_iters = the step count; torch.optim.AdamW with weight decay on every
parameter of two or more dimensions (embeddings included) and none on norm gains and biases, as
llama2.c's train.py and nanoGPT configure it; row r of step s is the T + 1 tokens starting at
((s*B + r)*T) mod (n - T), n the file's token count; the gradient norm is taken over all trained
parameters before clipping, and clip_grad_norm_ clips when clip > 0.

Each generator supplies only its objective: a function of the step s that returns the loss to
minimise (a scalar tensor) and what to record for that step.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from golden_io import save_npy

HPARAM_FIELDS = ["B", "T", "steps", "lr", "warmup", "min_lr", "weight_decay", "beta1", "beta2",
                 "eps", "clip"]


def get_lr(it, lr, min_lr, warmup, decay_iters):
    """llama2.c train.py's schedule (tw_lr_schedule)."""
    if it < warmup:
        return lr * it / warmup
    if it > decay_iters:
        return min_lr
    ratio = (it - warmup) / (decay_iters - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def trainable(w32, names):
    """{name: float64 leaf tensor with a gradient} from float32 arrays, in the table's order."""
    return {n: torch.tensor(w32[n].astype(np.float64), requires_grad=True) for n in names}


def frozen(w32):
    """{name: float64 tensor without a gradient} (a teacher, a reference, a LoRA base)."""
    return {n: torch.tensor(v.astype(np.float64)) for n, v in w32.items()}


def adamw_decay_2d(w, names, hp):
    """AdamW with weight decay on the parameters of 2+ dimensions and none on the others."""
    decay = [w[n] for n in names if w[n].dim() >= 2]
    no_decay = [w[n] for n in names if w[n].dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": hp["weight_decay"]},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"])


def adamw_decay_all(params, hp):
    """AdamW decaying every parameter (LoRA's A and B)."""
    return torch.optim.AdamW(params, lr=hp["lr"], betas=(hp["beta1"], hp["beta2"]), eps=hp["eps"],
                             weight_decay=hp["weight_decay"])


def step_rows(toks, s, B, T):
    """[(a, row)] for the B rows of step s: row = toks[a : a + T + 1] (T inputs, T targets)."""
    n = len(toks)
    starts = [((s * B + r) * T) % (n - T) for r in range(B)]
    return [(a, toks[a:a + T + 1]) for a in starts]


def grad_norm(params, clip):
    """The norm of all gradients before clipping; clips them to clip when clip > 0."""
    if clip > 0:
        return torch.nn.utils.clip_grad_norm_(params, clip)
    return torch.sqrt(sum((p.grad ** 2).sum() for p in params))


def run_steps(params, opt, hp, objective, log=None):
    """hp["steps"] steps: set the step's learning rate, objective(s) -> (loss, record), backward,
    gradient norm (and clip), AdamW. Returns (records, lrs, gnorms), one entry per step."""
    N = hp["steps"]
    records, lrs, gnorms = [], [], []
    for s in range(N):
        lr = get_lr(s, hp["lr"], hp["min_lr"], hp["warmup"], N)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad(set_to_none=True)
        loss, record = objective(s)
        loss.backward()
        gn = grad_norm(params, hp["clip"])
        opt.step()
        records.append(record)
        lrs.append(lr)
        gnorms.append(float(gn))
        if log:
            log(f"step {s + 1}/{N} loss {loss.item():.6g} lr {lr:.6g} gnorm {float(gn):.6g}")
    return records, lrs, gnorms


def next_token_loss(toks, s, B, T, forward, aux_coef=None):
    """Step s's objective of ./train: the mean cross-entropy over the B*T targets, plus
    aux_coef * (1/B) * the sum over rows of forward's aux when aux_coef is given.
    forward(row (T)) -> (logits (T, V), aux or None). Returns (loss, the cross-entropy as a float:
    what ./train prints)."""
    ce, aux = 0.0, 0.0
    for _, row in step_rows(toks, s, B, T):
        logits, ax = forward(row[:T])
        ce = ce + F.cross_entropy(logits, row[1:], reduction="sum")
        aux = aux + ax if ax is not None else aux
    ce = ce / (B * T)
    loss = ce if aux_coef is None else ce + aux_coef * aux / B
    return loss, ce.item()


def train_next_token(w32, names, tokens, hp, forward, log=None):
    """Trains every parameter of names on next_token_loss (with hp["aux_coef"] if hp has one).
    forward(row (T), w) -> (logits (T, V), aux or None). Returns (losses, lrs, gnorms, final
    weights as float64 numpy)."""
    w = trainable(w32, names)
    B, T = hp["B"], hp["T"]
    assert len(tokens) >= T + 1, "too few tokens for one row"
    toks = torch.from_numpy(tokens.astype(np.int64))
    losses, lrs, gnorms = run_steps(
        [w[n] for n in names], adamw_decay_2d(w, names, hp), hp,
        lambda s: next_token_loss(toks, s, B, T, lambda row: forward(row, w), hp.get("aux_coef")), log)
    return losses, lrs, gnorms, {k: v.detach().numpy() for k, v in w.items()}


def hparams_row(hp, *extra):
    """hparams.npy's row: HPARAM_FIELDS in order, then a generator's own numbers."""
    return np.array([hp[k] for k in HPARAM_FIELDS] + list(extra), np.float64)


def save_run(d, hparams, curves, final=None):
    """d/hparams.npy (None: not written), d/<curve>.npy for each curve (one value per step) and
    d/final/<name>.npy for each final weight (None: not written)."""
    if hparams is not None:
        save_npy(os.path.join(d, "hparams.npy"), hparams)
    for name, values in curves.items():
        save_npy(os.path.join(d, name + ".npy"), np.array(values))
    for name, x in (final or {}).items():
        save_npy(os.path.join(d, "final", name + ".npy"), x)
