#!/usr/bin/python3
"""gen_grpo.py: the PyTorch reference for GRPO (lib/train/grpo.c, ./train --grpo) and the goldens
of tests/test_grpo.c, in data/golden/grpo/.

    /usr/bin/python3 tests/golden/gen_grpo.py

1. objective/: fixed samples of n = 6 completions in 2 groups of G = 3 (lengths 3, 1, 4, 2, 5, 2
   tokens), per-token log-probs lp (the policy), lp_old (the sampling policy: lp plus noise, so
   that some ratios fall outside [1 - eps, 1 + eps]), lp_ref (the reference), rewards:
       A = (r - mean_group) / (std_group + eps_adv), std the population one (unbiased=False)
       J = mean_i mean_t [min(rho A_i, clamp(rho, 1 - eps, 1 + eps) A_i) - beta k3],
       rho = exp(lp - lp_old), k3 = exp(lp_ref - lp) - (lp_ref - lp) - 1
   loss = -J, kl = mean_i mean_t k3, dlp = d loss / d lp by autograd.
2. logprobs/: the log-probs of the completion tokens[start:] under softmax(logits / tau) and the
   gradient of sum_t w_t lp_t with respect to the logits.
3. train/: ten GRPO updates of gen_train.py's llama init (data/golden/train/llama/init.bin, also
   the reference) on replayed samples: samples/tokens.npy (steps, n, T_max) int32 (padding 0),
   samples/prompt_len.npy and samples/len.npy (steps, n) int32, samples/rewards.npy (steps, n),
   the layout ./train --grpo-replay DIR reads and --grpo-dump DIR writes. The tokens here are
   seeded random ones, not the policy's samples: with one update per batch (rho = 1) the
   objective is defined for any tokens, and the C trainer's own sampling is checked separately
   (dump, then replay, gives the same bits). losses.npy, kls.npy, gnorms.npy, hparams.npy
   (HPARAM_FIELDS then G, eps, beta, tau, eps_adv) and final/<name>.npy.
4. lora/: the same ten updates with LoRA adapters on the frozen llama init (which is also the
   reference), starting from gen_lora.py's data/golden/lora/train/llama/init.lora (r 2, alpha 4,
   all seven targets); only A and B train (AdamW decays both): losses.npy, kls.npy, gnorms.npy
   and final.lora.
5. sampled/: three updates of stories260K on samples ./train --grpo drew itself (the command is
   in gen_sampled's comment; samples/ is committed and only read here): losses, kls, gnorms,
   hparams and final/<name>.npy as in 3.
Precision: float64 throughout, goldens rounded to float32 once, on saving.
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_io import save_npy  # noqa: E402
from gen_train import logits_of, param_table, read_any  # noqa: E402
from gen_lora import adapter_arrays, adapter_tensors, merged, read_lora, write_lora  # noqa: E402
from train_common import (adamw_decay_2d, adamw_decay_all, frozen, hparams_row, run_steps,  # noqa: E402
                          save_run, trainable)

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "grpo")


def advantages(r, G, eps_adv):
    g = r.reshape(-1, G)
    return ((g - g.mean(1, keepdim=True)) / (g.std(1, unbiased=False, keepdim=True) + eps_adv)).reshape(-1)


def grpo_loss(lp, lp_old, lp_ref, adv, lens, eps, beta):
    """(-J, mean k3) over packed per-token log-probs."""
    J, K, off = 0.0, 0.0, 0
    for i, L in enumerate(lens):
        s = slice(off, off + L)
        rho = torch.exp(lp[s] - lp_old[s])
        surr = torch.minimum(rho * adv[i], torch.clamp(rho, 1 - eps, 1 + eps) * adv[i])
        x = lp_ref[s] - lp[s]
        k3 = torch.exp(x) - x - 1
        J = J + (surr - beta * k3).mean()
        K = K + k3.mean()
        off += L
    return -J / len(lens), K / len(lens)


def completion_logprobs(logits, tokens, start, tau):
    """lp[t - start] = log softmax(logits[t - 1] / tau)[tokens[t]], t in [start, T)."""
    logp = F.log_softmax(logits[start - 1:-1] / tau, dim=-1)
    return logp.gather(1, tokens[start:].unsqueeze(1)).squeeze(1)


def gen_objective(rng):
    lens = [3, 1, 4, 2, 5, 2]
    N, G, eps, beta, eps_adv = sum(lens), 3, 0.2, 0.04, 1e-4
    lp = -rng.uniform(0.1, 3.0, N)
    lp_old = lp + rng.normal(0, 0.3, N)
    lp_ref = lp + rng.normal(0, 0.5, N)
    rewards = np.array([1.0, 0.0, 1.0, 0.5, 2.0, -1.0])
    f32 = {k: v.astype(np.float32) for k, v in dict(lp=lp, lp_old=lp_old, lp_ref=lp_ref, rewards=rewards).items()}
    t = {k: torch.tensor(v.astype(np.float64)) for k, v in f32.items()}
    t["lp"].requires_grad_(True)
    adv = advantages(t["rewards"], G, eps_adv)
    loss, kl = grpo_loss(t["lp"], t["lp_old"], t["lp_ref"], adv, lens, eps, beta)
    loss.backward()
    d = os.path.join(OUT, "objective")
    for k, v in f32.items():
        save_npy(os.path.join(d, k + ".npy"), v)
    save_npy(os.path.join(d, "lens.npy"), np.array(lens, np.int32))
    save_npy(os.path.join(d, "meta.npy"), np.array([G, eps, beta, eps_adv], np.float64))
    save_npy(os.path.join(d, "adv.npy"), adv)
    save_npy(os.path.join(d, "loss.npy"), loss.detach().reshape(1))
    save_npy(os.path.join(d, "kl.npy"), kl.detach().reshape(1))
    save_npy(os.path.join(d, "dlp.npy"), t["lp"].grad)
    rho = np.exp(lp - lp_old)
    print(f"objective: loss {loss.item():.6f}, kl {kl.item():.6f}, "
          f"{int(((rho < 1 - eps) | (rho > 1 + eps)).sum())} of {N} ratios outside the clip range")


def gen_logprobs(rng):
    T, V, start, tau = 7, 11, 3, 0.7
    z32 = (2.0 * rng.standard_normal((T, V))).astype(np.float32)
    tokens = rng.integers(0, V, T)
    w32 = rng.standard_normal(T - start).astype(np.float32)
    z = torch.tensor(z32.astype(np.float64), requires_grad=True)
    lp = completion_logprobs(z, torch.tensor(tokens), start, tau)
    (lp * torch.tensor(w32.astype(np.float64))).sum().backward()
    d = os.path.join(OUT, "logprobs")
    save_npy(os.path.join(d, "logits.npy"), z32)
    save_npy(os.path.join(d, "tokens.npy"), tokens.astype(np.int32))
    save_npy(os.path.join(d, "w.npy"), w32)
    save_npy(os.path.join(d, "meta.npy"), np.array([start, tau], np.float64))
    save_npy(os.path.join(d, "lp.npy"), lp.detach())
    save_npy(os.path.join(d, "dlogits.npy"), z.grad)


TRAIN = dict(B=0, T=0, steps=10, lr=5e-3, warmup=0, min_lr=5e-3, weight_decay=0.1, beta1=0.9,
             beta2=0.99, eps=1e-8, clip=1.0)
GRPO = dict(G=3, n_groups=2, eps=0.2, beta=0.05, tau=0.8, eps_adv=1e-4, T_max=12)


def gen_samples(rng, V, steps):
    n, T_max = GRPO["G"] * GRPO["n_groups"], GRPO["T_max"]
    tokens = np.zeros((steps, n, T_max), np.int32)
    plen = rng.integers(1, 5, (steps, n)).astype(np.int32)
    length = np.minimum(plen + rng.integers(1, 9, (steps, n)), T_max).astype(np.int32)
    rewards = rng.integers(0, 3, (steps, n)).astype(np.float32)
    rewards[2, 0:3] = 1.0   # a group with no signal: its advantages are 0
    for s in range(steps):
        for i in range(n):
            tokens[s, i, :length[s, i]] = rng.integers(0, V, length[s, i])
    return tokens, plen, length, rewards


def grpo_step_loss(s, w, ref, c, samples, gp):
    """Step s's GRPO loss on the replayed samples (tokens, prompt_len, len, rewards), the policy's
    weights w and the reference's ref: (loss, (loss, kl) as floats)."""
    tokens, plen, length, rewards = samples
    lps, refs, lens = [], [], []
    for i in range(tokens.shape[1]):
        tok = torch.tensor(tokens[s, i, :length[s, i]].astype(np.int64))
        st = int(plen[s, i])
        lps.append(completion_logprobs(logits_of(tok, w, c), tok, st, gp["tau"]))
        with torch.no_grad():
            refs.append(completion_logprobs(logits_of(tok, ref, c), tok, st, gp["tau"]))
        lens.append(len(tok) - st)
    lp = torch.cat(lps)
    adv = advantages(torch.tensor(rewards[s].astype(np.float64)), gp["G"], gp["eps_adv"])
    loss, kl = grpo_loss(lp, lp.detach(), torch.cat(refs), adv, lens, gp["eps"], gp["beta"])
    return loss, (loss.item(), kl.item())


def run_grpo(c, w0, samples, hp, gp):
    """hp["steps"] GRPO updates on replayed samples (one update per step, rho = 1), the reference
    the initial weights w0; returns (losses, kls, gnorms, final weights as tensors)."""
    names = [n for n, _ in param_table(c)]
    ref = frozen(w0)
    w = trainable(w0, names)
    records, _, gnorms = run_steps([w[k] for k in names], adamw_decay_2d(w, names, hp), hp,
                                   lambda s: grpo_step_loss(s, w, ref, c, samples, gp))
    losses, kls = zip(*records)
    return losses, kls, gnorms, w


def save_grpo_run(d, hp, gp, losses, kls, gnorms, w):
    save_run(d, hparams_row(hp, gp["G"], gp["eps"], gp["beta"], gp["tau"], gp["eps_adv"]),
             dict(losses=losses, kls=kls, gnorms=gnorms), w)
    print(f"{os.path.basename(d)}: loss {losses[0]:.5f} -> {losses[-1]:.5f}, kl {kls[0]:.3g} -> {kls[-1]:.3g}, "
          f"gnorm {gnorms[0]:.4g} -> {gnorms[-1]:.4g}")


def gen_train(rng):
    c, w0 = read_any(os.path.join("data", "golden", "train", "llama", "init.bin"))
    hp, gp = TRAIN, GRPO
    tokens, plen, length, rewards = gen_samples(rng, c["vocab"], hp["steps"])
    d = os.path.join(OUT, "train")
    save_npy(os.path.join(d, "samples", "tokens.npy"), tokens)
    save_npy(os.path.join(d, "samples", "prompt_len.npy"), plen)
    save_npy(os.path.join(d, "samples", "len.npy"), length)
    save_npy(os.path.join(d, "samples", "rewards.npy"), rewards)
    save_grpo_run(d, hp, gp, *run_grpo(c, w0, (tokens, plen, length, rewards), hp, gp))


# 5. sampled/: ./train's own samples of stories260K, replayed. They were written once by
#   ./train --init data/models/stories260K.bin -z data/models/tok512.bin --grpo --grpo-prompts 2
#           --grpo-group 3 --grpo-len 16 --steps 3 --lr 1e-3 --seed 5 --reward length
#           --reward-length 12 --grpo-dump data/golden/grpo/sampled/samples
# (committed: this script only reads them) and are trained on here with ./train --grpo's defaults.
SAMPLED_TRAIN = dict(B=0, T=0, steps=3, lr=1e-3, warmup=0, min_lr=1e-3, weight_decay=0.0, beta1=0.9,
                     beta2=0.95, eps=1e-8, clip=1.0)
SAMPLED_GRPO = dict(G=3, eps=0.2, beta=0.04, tau=1.0, eps_adv=1e-4)


def gen_sampled():
    d = os.path.join(OUT, "sampled")
    c, w0 = read_any(os.path.join("data", "models", "stories260K.bin"))
    tokens, plen, length, rewards = (np.load(os.path.join(d, "samples", f + ".npy"))
                                     for f in ("tokens", "prompt_len", "len", "rewards"))
    hp, gp = SAMPLED_TRAIN, SAMPLED_GRPO
    save_grpo_run(d, hp, gp, *run_grpo(c, w0, (tokens, plen, length, rewards), hp, gp))


def gen_lora(rng_unused):
    c, w0 = read_any(os.path.join("data", "golden", "train", "llama", "init.bin"))
    r, alpha, kinds, adapters = read_lora(os.path.join("data", "golden", "lora", "train", "llama", "init.lora"), c)
    hp, gp = TRAIN, GRPO
    d = os.path.join(OUT, "train", "samples")
    samples = tuple(np.load(os.path.join(d, f + ".npy")) for f in ("tokens", "prompt_len", "len", "rewards"))
    base = frozen(w0)
    AB, params = adapter_tensors(adapters)
    records, _, gnorms = run_steps(params, adamw_decay_all(params, hp), hp,
                                   lambda s: grpo_step_loss(s, merged(base, AB, c, kinds, alpha / r), base, c,
                                                            samples, gp))
    losses, kls = zip(*records)
    d = os.path.join(OUT, "lora")
    save_run(d, None, dict(losses=losses, kls=kls, gnorms=gnorms))
    write_lora(os.path.join(d, "final.lora"), r, alpha, kinds, adapter_arrays(AB))
    print(f"lora: loss {losses[0]:.5f} -> {losses[-1]:.5f}, kl {kls[0]:.3g} -> {kls[-1]:.3g}, "
          f"gnorm {gnorms[0]:.4g} -> {gnorms[-1]:.4g}")


def main():
    rng = np.random.default_rng(30)
    gen_objective(rng)
    gen_logprobs(rng)
    gen_train(rng)
    gen_lora(rng)
    gen_sampled()


if __name__ == "__main__":
    main()
