#!/usr/bin/python3
"""gen_dpo.py: the PyTorch reference for DPO (lib/train/seq_logprob.c, lib/train/dpo.c,
lib/train/dpo_step.c, ./train --dpo) and the goldens of tests/test_dpo.c, in data/golden/dpo/.

    /usr/bin/python3 tests/golden/gen_dpo.py

Written:
  seq/<case>/{logits,targets,meta,logp,dlogits}.npy   log pi(y|x) = sum over the counted positions of
      log_softmax(logits)[target] (targets -100 not counted) and its gradient for an upstream
      scalar dlogp (meta = [T, V, dlogp])
  loss/{inputs,outputs}.npy   per row (pw, pl, rw, rl, beta) -> (loss, margin, d loss/d pw, d loss/d pl)
      with loss = -logsigmoid(beta ((pw - rw) - (pl - rl))), by autograd
  train/<case>/: pairs.bin (the pairs file, docs/preferences.md), hparams.npy (train_common.py's
      HPARAM_FIELDS, T unused), beta.npy, losses.npy, margins.npy, accuracies.npy, gnorms.npy and
      final/<name>.npy (full training) or final.lora (LoRA): ten steps of ./train --dpo --no-shuffle,
      pair r of step s being pair (s*B + r) mod n of the file, the loss the mean over the step's pairs,
      the reference log-probabilities those of the --ref model (default: the initial weights; with
      LoRA the base without adapters), computed once.
Precision as gen_train.py: float64 throughout, goldens rounded to float32 on saving.
"""
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_io import save_npy  # noqa: E402
from gen_train import logits_of, param_table, read_any, seeded_init, write_llama2c  # noqa: E402
from gen_lora import adapter_arrays, adapter_tensors, merged, read_lora, write_lora  # noqa: E402
from train_common import (adamw_decay_2d, adamw_decay_all, frozen, hparams_row, run_steps,  # noqa: E402
                          save_run, trainable)

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "dpo")


# ---- log pi(y | x) and the pair loss ----

def seq_logprob(logits, targets):
    keep = targets != -100
    lp = F.log_softmax(logits, dim=-1)
    return lp[keep, targets[keep]].sum()


def gen_seq(rng):
    for case, (T, V, dlogp) in {"one_row": (1, 5, 1.0), "ignored_prompt": (7, 13, 0.7),
                                "wide": (12, 65, -1.3), "big_logits": (5, 9, 2.0)}.items():
        scale = 40.0 if case == "big_logits" else 3.0
        logits = torch.tensor(rng.standard_normal((T, V)).astype(np.float32) * np.float32(scale),
                              dtype=torch.float64, requires_grad=True)
        targets = rng.integers(0, V, T)
        if T > 1:
            targets[: T // 3 + 1] = -100   # a prompt
        lp = seq_logprob(logits, torch.from_numpy(targets))
        (lp * dlogp).backward()
        d = os.path.join(OUT, "seq", case)
        save_npy(os.path.join(d, "logits.npy"), logits.detach())
        save_npy(os.path.join(d, "targets.npy"), targets.astype(np.int32))
        save_npy(os.path.join(d, "meta.npy"), np.array([T, V, dlogp]))
        save_npy(os.path.join(d, "logp.npy"), np.array([lp.item()]))
        save_npy(os.path.join(d, "dlogits.npy"), logits.grad)


def pair_loss(pw, pl, rw, rl, beta):
    return -F.logsigmoid(beta * ((pw - rw) - (pl - rl)))


def gen_loss(rng):
    rows = [(-10.0, -12.0, -10.0, -12.0, 0.1),     # policy == reference: log 2
            (-5.0, -9.0, -7.0, -6.0, 0.5),
            (-30.0, -20.0, -25.0, -25.0, 2.0),
            (0.0, -1000.0, 0.0, 0.0, 1.0),          # z = 1000: loss ~ 0, no overflow
            (-1000.0, 0.0, 0.0, 0.0, 1.0)]          # z = -1000: loss ~ 1000
    for _ in range(20):
        r = rng.uniform(-40, -1, 4).tolist()
        rows.append((*r, float(rng.choice([0.05, 0.1, 0.5, 1.0, 3.0]))))
    ins, outs = [], []
    for row in rows:
        # Inputs rounded to float32 first: the golden file holds float32, and the C side must
        # start from exactly the numbers PyTorch used.
        pw, pl, rw, rl, beta = (float(np.float32(v)) for v in row)
        x = torch.tensor([pw, pl], requires_grad=True)
        loss = pair_loss(x[0], x[1], torch.tensor(rw), torch.tensor(rl), beta)
        loss.backward()
        z = beta * ((pw - rw) - (pl - rl))
        ins.append([pw, pl, rw, rl, beta])
        outs.append([loss.item(), z, x.grad[0].item(), x.grad[1].item()])
    save_npy(os.path.join(OUT, "loss", "inputs.npy"), np.array(ins))
    save_npy(os.path.join(OUT, "loss", "outputs.npy"), np.array(outs))


# ---- ten steps ----

def random_pairs(rng, V, n, max_seq):
    pairs = []
    for _ in range(n):
        P = int(rng.integers(1, 6))
        lw, ll = int(rng.integers(2, 12)), int(rng.integers(2, 12))
        assert P + max(lw, ll) - 1 <= max_seq
        pairs.append((rng.integers(0, V, P), rng.integers(0, V, lw), rng.integers(0, V, ll)))
    return pairs


def write_pairs(path, pairs):
    with open(path, "wb") as f:
        f.write(b"pref" + struct.pack("<ii", 1, len(pairs)))
        for x, yw, yl in pairs:
            f.write(struct.pack("<iii", len(x), len(yw), len(yl)))
            f.write(np.concatenate([x, yw, yl]).astype("<u2").tobytes())


def completion_logprob(w, c, x, y):
    seq = torch.from_numpy(np.concatenate([x, y]).astype(np.int64))
    targets = seq[1:].clone()
    targets[: len(x) - 1] = -100   # positions that predict a prompt token
    return seq_logprob(logits_of(seq[:-1], w, c), targets)


def dpo_train(c, w_ref, w0, pairs, hp, beta, lora=None):
    """Ten steps. lora: (base weights, adapters, r, alpha, kinds) trains the adapters only."""
    with torch.no_grad():
        ref = [(completion_logprob(w_ref, c, x, yw).item(), completion_logprob(w_ref, c, x, yl).item())
               for x, yw, yl in pairs]
    if lora is None:
        names = [n for n, _ in param_table(c)]
        w = trainable(w0, names)
        params = [w[n] for n in names]
        opt = adamw_decay_2d(w, names, hp)
    else:
        _, adapters, r, alpha, kinds = lora
        base = frozen(w0)
        AB, params = adapter_tensors(adapters)
        opt = adamw_decay_all(params, hp)
    B, n = hp["B"], len(pairs)

    def objective(s):
        wt = w if lora is None else merged(base, AB, c, kinds, alpha / r)
        loss, margin, right = 0.0, 0.0, 0
        for b in range(B):
            i = (s * B + b) % n
            x, yw, yl = pairs[i]
            pw, pl = completion_logprob(wt, c, x, yw), completion_logprob(wt, c, x, yl)
            li = pair_loss(pw, pl, torch.tensor(ref[i][0]), torch.tensor(ref[i][1]), beta)
            z = beta * ((pw.item() - ref[i][0]) - (pl.item() - ref[i][1]))
            loss, margin, right = loss + li, margin + z, right + (z > 0)
        loss = loss / B
        return loss, (loss.item(), margin / B, right / B)
    records, _, gnorms = run_steps(params, opt, hp, objective)
    losses, margins, accuracies = zip(*records)
    out = dict(losses=losses, margins=margins, accuracies=accuracies, gnorms=gnorms)
    final = {k: v.detach().numpy() for k, v in w.items()} if lora is None else adapter_arrays(AB)
    return out, final


TRAIN_CASES = {
    # case: (beta, --ref given, LoRA, hyper-parameters); the llama case of gen_train.py
    "llama": (0.5, False, False, dict(B=3, T=0, steps=10, lr=5e-3, warmup=0, min_lr=5e-3, weight_decay=0.1,
                                      beta1=0.9, beta2=0.99, eps=1e-8, clip=1.0)),
    "llama_ref": (2.0, True, False, dict(B=2, T=0, steps=10, lr=1e-2, warmup=2, min_lr=1e-3, weight_decay=0.0,
                                         beta1=0.9, beta2=0.95, eps=1e-8, clip=0.0)),
    "llama_lora": (1.0, False, True, dict(B=2, T=0, steps=10, lr=1e-2, warmup=0, min_lr=1e-3, weight_decay=0.1,
                                          beta1=0.9, beta2=0.95, eps=1e-8, clip=1.0)),
}


def gen_train(rng):
    src = os.path.join("data", "golden", "train", "llama")
    c, w0 = read_any(os.path.join(src, "init.bin"))
    for case, (beta, with_ref, lora, hp) in TRAIN_CASES.items():
        d = os.path.join(OUT, "train", case)
        os.makedirs(d, exist_ok=True)
        pairs = random_pairs(rng, c["vocab"], 7, c["max_seq"])
        write_pairs(os.path.join(d, "pairs.bin"), pairs)
        w_ref = {k: torch.tensor(v.astype(np.float64)) for k, v in w0.items()}
        if with_ref:   # another model of the same shape: the init plus seeded noise
            noise = seeded_init(c, rng)
            wr = {k: (w0[k] + 0.5 * (noise[k] - noise[k].mean())).astype(np.float32) for k in w0}
            write_llama2c(os.path.join(d, "ref.bin"), c, wr)
            _, wr = read_any(os.path.join(d, "ref.bin"))
            w_ref = {k: torch.tensor(v.astype(np.float64)) for k, v in wr.items()}
        lora_args = None
        if lora:
            r, alpha, kinds, adapters = read_lora(os.path.join("data", "golden", "lora", "train", "llama",
                                                               "init.lora"), c)
            lora_args = (w0, adapters, r, alpha, kinds)
        out, final = dpo_train(c, w_ref, w0, pairs, hp, beta, lora_args)
        save_npy(os.path.join(d, "beta.npy"), np.array([beta]))
        save_run(d, hparams_row(hp), out, None if lora else final)
        if lora:
            write_lora(os.path.join(d, "final.lora"), r, alpha, kinds, final)
        print(f"dpo {case}: loss {out['losses'][0]:.4f} -> {out['losses'][-1]:.4f}, "
              f"margin {out['margins'][-1]:.4f}, accuracy {out['accuracies'][-1]:.2f}")


def main():
    rng = np.random.default_rng(3030)
    gen_seq(rng)
    gen_loss(rng)
    gen_train(rng)


if __name__ == "__main__":
    main()
