#!/usr/bin/python3
"""gen_moe.py: float64 PyTorch goldens for the mixture-of-experts layer (lib/nn/router.c,
lib/nn/moe.c; tests/test_moe.c).

Run from the top of the checkout with Debian's Python, which has PyTorch:
    /usr/bin/python3 tests/golden/gen_moe.py
It rewrites data/golden/moe/<case>/. The reference below is written from the formulas, token by
token (no batching trick shared with the C code): scores (softmax over E or sigmoid), the choice
(best k by score + bias, ties to the lower index, within the best topk_group groups scored by the
sum of their two best), gate weights (renormalised over the chosen if norm_topk, times scale),
y_t = sum_j w_tj SwiGLU_e(x_t) + SwiGLU_shared(x_t), and aux = E sum_i f_i P_i. Gradients are
those of L = sum(dy * y) + aux_coef * aux by autograd, the choice held fixed.

Inputs are drawn, rounded to float32 and redrawn while any token's choice is within 1e-4 of
changing (k-th against (k+1)-th score, or the last chosen group against the next) unless the two
are exactly equal: the C code computes the scores in float32 and must make the same choice. The
exact ties come from duplicated router rows, which give equal logits in any precision.

Files per case: cfg (int32: T C E k F Fs score norm n_group topk_group has_bias), fcfg (float32:
scale aux_coef), x, router, bias, gate, up, down, s_gate, s_up, s_down, probs, sel (int32), w, y,
aux, dy, and d_x, d_router, d_gate, d_up, d_down, d_s_gate, d_s_up, d_s_down.
"""
import os

import numpy as np
import torch
import torch.nn.functional as F

from golden_io import save_npy

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
OUT = os.path.join("data", "golden", "moe")
RNG = np.random.default_rng(20261128)

# name: T C E k F Fs score(0 softmax, 1 sigmoid) norm n_group topk_group bias scale aux_coef dup
#   dup: pairs of router rows made equal (exact ties)
CASES = {
    "mixtral":      (5, 6, 4, 2, 7, 0, 0, 1, 1, 1, 0, 1.0, 0.02, []),
    "qwen2_shared": (3, 5, 5, 3, 3, 4, 0, 0, 1, 1, 0, 1.0, 0.1, []),
    "T1_C1":        (1, 1, 3, 1, 1, 0, 0, 1, 1, 1, 0, 1.0, 0.5, []),
    "E1":           (4, 5, 1, 1, 6, 0, 0, 1, 1, 1, 0, 1.0, 0.3, []),
    "k_eq_E":       (3, 4, 3, 3, 5, 0, 0, 1, 1, 1, 0, 1.0, 0.3, []),
    "k_eq_E_nonorm": (2, 3, 4, 4, 2, 0, 0, 0, 1, 1, 0, 1.0, 0.0, []),
    "ties":         (4, 5, 4, 2, 3, 0, 0, 1, 1, 1, 0, 1.0, 0.1, [(1, 2)]),
    "ties_k1":      (4, 5, 4, 1, 3, 0, 0, 0, 1, 1, 0, 1.0, 0.1, [(0, 3), (1, 2)]),
    "deepseek":     (6, 8, 8, 3, 3, 5, 1, 1, 4, 2, 1, 2.5, 0.01, []),
    "deepseek_ties": (5, 7, 6, 2, 2, 3, 1, 1, 3, 2, 1, 2.5, 0.05, [(0, 1)]),
    "sigmoid_plain": (3, 5, 5, 2, 4, 0, 1, 0, 1, 1, 0, 1.0, 0.2, []),
}


def select(choice, E, k, n_group, topk_group):
    """Chosen experts (best first) of one token and the smallest non-zero decision margin."""
    margins = []
    experts = list(range(E))
    if n_group > 1:
        size = E // n_group
        gscore = []
        for g in range(n_group):
            s = sorted(choice[g * size:(g + 1) * size], reverse=True)
            gscore.append(sum(s[:min(2, size)]))
        order = sorted(range(n_group), key=lambda g: (-gscore[g], g))
        if topk_group < n_group:
            margins.append(gscore[order[topk_group - 1]] - gscore[order[topk_group]])
        keep = set(order[:topk_group])
        experts = [e for e in experts if e // size in keep]
    order = sorted(experts, key=lambda e: (-choice[e], e))
    if k < len(order):
        margins.append(choice[order[k - 1]] - choice[order[k]])
    # margins between chosen ones do not matter for the set but decide the order "best first"
    for j in range(k - 1):
        margins.append(choice[order[j]] - choice[order[j + 1]])
    return order[:k], min([m for m in margins if m != 0.0], default=1.0)


def f32(*shape, scale=1.0):
    return (RNG.uniform(-1, 1, size=shape) * scale).astype(np.float32).astype(np.float64)


def swiglu(x, g, u, d):
    return F.linear(F.silu(F.linear(x, g)) * F.linear(x, u), d)


def reference(t, cfg):
    T, C, E, k, Fh, Fs, score, norm, n_group, topk_group, has_bias, scale, aux_coef, dup = cfg
    logits = F.linear(t["x"], t["router"])
    probs = torch.softmax(logits, dim=-1) if score == 0 else torch.sigmoid(logits)
    bias = t["bias"].detach().numpy() if has_bias else np.zeros(E)
    sel, margin = [], 1.0
    for i in range(T):
        s, m = select(probs[i].detach().numpy() + bias, E, k, n_group, topk_group)
        sel.append(s)
        margin = min(margin, m)
    ys, ws = [], []
    for i in range(T):
        p = probs[i, sel[i]]
        w = p / p.sum() if norm else p
        w = w * scale
        ws.append(w)
        yi = sum(w[j] * swiglu(t["x"][i], t["gate"][e], t["up"][e], t["down"][e])
                 for j, e in enumerate(sel[i]))
        if Fs > 0:
            yi = yi + swiglu(t["x"][i], t["s_gate"], t["s_up"], t["s_down"])
        ys.append(yi)
    y = torch.stack(ys)
    counts = np.zeros(E)
    for s in sel:
        for e in s:
            counts[e] += 1
    f = torch.tensor(counts / (T * k))
    aux = E * (f * probs.mean(dim=0)).sum()
    return probs, np.array(sel), torch.stack(ws), y, aux, margin


def gen_case(name, cfg):
    T, C, E, k, Fh, Fs, score, norm, n_group, topk_group, has_bias, scale, aux_coef, dup = cfg
    for attempt in range(1000):
        t = {"x": f32(T, C, scale=2.0), "router": f32(E, C, scale=1.5),
             "bias": f32(E, scale=0.3), "gate": f32(E, Fh, C), "up": f32(E, Fh, C),
             "down": f32(E, C, Fh)}
        for a, b in dup:
            t["router"][b] = t["router"][a]
            t["bias"][b] = t["bias"][a]
        if Fs > 0:
            t.update(s_gate=f32(Fs, C), s_up=f32(Fs, C), s_down=f32(C, Fs))
        t = {n: torch.from_numpy(v).requires_grad_(True) for n, v in t.items()}
        probs, sel, w, y, aux, margin = reference(t, cfg)
        if margin >= 1e-4:
            break
    else:
        raise SystemExit(f"{name}: no draw with a clear choice")
    dy = torch.from_numpy(f32(T, C))
    L = (dy * y).sum() + aux_coef * aux
    learn = [n for n in ("x", "router", "gate", "up", "down", "s_gate", "s_up", "s_down") if n in t]
    grads = torch.autograd.grad(L, [t[n] for n in learn])
    d = os.path.join(OUT, name)
    save_npy(os.path.join(d, "cfg.npy"),
             np.array([T, C, E, k, Fh, Fs, score, norm, n_group, topk_group, has_bias], np.int32))
    save_npy(os.path.join(d, "fcfg.npy"), np.array([scale, aux_coef], np.float32))
    for n, v in t.items():
        save_npy(os.path.join(d, n + ".npy"), v.detach())
    for n, v in (("probs", probs), ("w", w), ("y", y), ("dy", dy)):
        save_npy(os.path.join(d, n + ".npy"), v.detach())
    save_npy(os.path.join(d, "aux.npy"), aux.detach().reshape(1))
    save_npy(os.path.join(d, "sel.npy"), sel.astype(np.int32))
    for n, g in zip(learn, grads):
        save_npy(os.path.join(d, "d_" + n + ".npy"), g)
    print(f"{name}: T={T} C={C} E={E} k={k} sel={sel.tolist()} aux={aux.item():.6f} "
          f"draws={attempt + 1}")


if __name__ == "__main__":
    for name, cfg in CASES.items():
        gen_case(name, cfg)
