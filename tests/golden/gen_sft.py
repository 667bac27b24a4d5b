#!/usr/bin/python3
"""gen_sft.py: the PyTorch reference for ./train --mask (supervised fine-tuning's loss mask,
lib/train/mask.c) and the goldens of tests/test_sft.c, in data/golden/sft/<case>/.

    /usr/bin/python3 tests/golden/gen_sft.py

For each case: the initial model, tokens and hyper-parameters of tests/golden/gen_train.py
(data/golden/train/<case>/) and a mask file written here (mask.bin: one byte per token; runs of 0
for a "prompt" and 1 for an "answer", as an instruction set has them), then ten steps of full
training in ./train's deterministic mode (--no-shuffle), where the target at token position p
counts only when mask[p] = 1 and the loss is the mean over the step's counted targets of all rows
together:
    loss = sum over rows and counted positions of CE / (number of counted targets in the step)
Written: hparams.npy (train_common.py's HPARAM_FIELDS), losses.npy, lrs.npy, gnorms.npy and
final/<name>.npy. Precision as gen_train.py: float64, goldens rounded to float32 on saving.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_train import CASES as TRAIN_CASES, logits_of, param_table, read_any, read_tokens  # noqa: E402
from train_common import adamw_decay_2d, hparams_row, run_steps, save_run, step_rows, trainable  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "sft")


def prompt_answer_mask(rng, n):
    """Alternating runs: a prompt of 3-8 tokens (0), an answer of 4-12 tokens (1)."""
    m = []
    while len(m) < n:
        m += [0] * int(rng.integers(3, 9)) + [1] * int(rng.integers(4, 13))
    return np.array(m[:n], np.uint8)


def train_masked(c, w32, tokens, mask, hp):
    names = [n for n, _ in param_table(c)]
    w = trainable(w32, names)
    B, T = hp["B"], hp["T"]
    toks = torch.from_numpy(tokens.astype(np.int64))

    def objective(s):
        total, counted = 0.0, 0
        for a, row in step_rows(toks, s, B, T):
            tgt = row[1:].clone()
            keep = torch.from_numpy(mask[a + 1:a + T + 1].astype(bool))
            tgt[~keep] = -100
            counted += int(keep.sum())
            total = total + F.cross_entropy(logits_of(row[:T], w, c), tgt, ignore_index=-100, reduction="sum")
        assert counted > 0, "a golden step without a counted target"
        loss = total / counted
        return loss, loss.item()
    losses, lrs, gnorms = run_steps([w[k] for k in names], adamw_decay_2d(w, names, hp), hp, objective)
    return losses, lrs, gnorms, {k: v.detach().numpy() for k, v in w.items()}


CASES = {case: TRAIN_CASES[case] for case in ("llama", "gpt2")}   # gen_train.py's hyper-parameters


def main():
    rng = np.random.default_rng(2727)
    for case, hp in CASES.items():
        src = os.path.join("data", "golden", "train", case)
        c, w = read_any(os.path.join(src, "init.bin"))
        tokens = read_tokens(os.path.join(src, "tokens.bin"))
        mask = prompt_answer_mask(rng, len(tokens))
        d = os.path.join(OUT, case)
        os.makedirs(d, exist_ok=True)
        mask.tofile(os.path.join(d, "mask.bin"))
        losses, lrs, gnorms, final = train_masked(c, w, tokens, mask, hp)
        save_run(d, hparams_row(hp), dict(losses=losses, lrs=lrs, gnorms=gnorms), final)
        print(f"sft {case}: {int(mask.sum())} of {len(mask)} tokens counted; loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
