"""train_variants.py: the float64 PyTorch reference for training the block variants of
lib/nn/block.h - mixtures of experts in place of the FFN (block.moe_experts) and multi-head latent
attention in place of attention (block.mla_*, the layer lib/nn/mla.h), alone or together
(DeepSeek-V3's arrangement) - and the one generator of their ten-step goldens. Its entry points hold
the cases: gen_train_moe.py (data/golden/train_moe/, tests/test_moe_model.c) and gen_train_mla.py
(data/golden/train_mla/, tests/test_mla_model.c).

For each case: a seeded initial model (init.bin, the TWMX format of lib/train/moe_file.h: version
1 for experts alone, version 2 with latent attention; written here and read back), a token file
(tokens.bin), then ten steps of ./train's deterministic rule (train_common.py: --no-shuffle rows,
AdamW with decay on 2+-dim parameters, clipping, warm-up + cosine) on the objective

    mean cross-entropy over the B*T targets + aux_coef * (1/B) sum_b sum_layers aux(b, layer)

where aux(b, layer) = E sum_i f_i P_i over sequence b's T tokens (Switch Transformer's form,
lib/nn/router.h), 0 for a dense FFN: f_i the fraction of the T*k choices that went to expert i (a
constant: it comes from the discrete choice), P_i the mean router probability of expert i. The
router's gradient flows through the gate weights (and P), never through the choice. The model is
gen_train.py's llama/qwen3 block (pre-norm, SwiGLU, final norm) with its attention (QK-norm and
RoPE as the style has them) or gen_mla.py's latent attention on the block's pre-norm input.
Written: the cross-entropy of every step (losses.npy: what ./train prints), lrs.npy, gnorms.npy
(the norm of the whole objective's gradient, before clipping), hparams.npy (HPARAM_FIELDS order,
then aux_coef), and every parameter after the last step (final/<name>.npy).

Ties: the C router takes the lower expert index among equal scores (router.h). Here no choice is
left to a tie or a near-tie: at every step, layer and token the k-th and (k+1)-th router logits
differ by at least MIN_GAP (asserted), far above the float32-against-float64 drift of ten steps
(weights within 1e-4, logits within ~1e-4), so both sides choose the same experts.

Precision: float64 throughout, as gen_train.py.
"""
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

import gen_mla
from gen_train import (attention, config_bytes, markov_tokens, norm, param_table, params_bytes,
                       read_config, read_params, read_tokens, tiny_config, write_tokens)
from train_common import hparams_row, save_run, train_next_token

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)
MOE_FIELDS = ["n_experts", "top_k", "n_shared", "norm_topk"]
MLA_FIELDS = ["q_rank", "kv_rank", "d_nope", "d_rope", "d_v"]
MIN_GAP = 1e-3
ROUTER_STD = 0.5   # router weights: logits of order 1, so no choice is a near-tie (see Ties)


def has_mla(c):
    return "q_rank" in c


# ---- the parameter table and the TWMX file ----

def moe_params(p, c):
    """layers.L.moe.* (p = "layers.L."): what replaces layers.L.ffn.*."""
    C, Fh, E = c["d_model"], c["ffn_hidden"], c["n_experts"]
    Fs = c["n_shared"] * Fh
    t = [(p + "moe.router", (E, C)), (p + "moe.gate", (E * Fh, C)), (p + "moe.up", (E * Fh, C)),
         (p + "moe.down", (E * C, Fh))]
    if Fs:
        t += [(p + "moe.shared_gate", (Fs, C)), (p + "moe.shared_up", (Fs, C)),
              (p + "moe.shared_down", (C, Fs))]
    return t


def mla_params(p, c):
    """layers.L.attn.q_a .. .o (p = "layers.L."): what replaces layers.L.attn.wq .. wo."""
    C, H = c["d_model"], c["n_head"]
    rq, rkv, dn, dr, dv = (c[k] for k in MLA_FIELDS)
    return [(p + "attn.q_a", (rq, C)), (p + "attn.q_a_norm", (rq,)),
            (p + "attn.q_b", (H * (dn + dr), rq)), (p + "attn.kv_a", (rkv + dr, C)),
            (p + "attn.kv_a_norm", (rkv,)), (p + "attn.kv_b", (H * (dn + dv), rkv)),
            (p + "attn.o", (C, H * dv))]


def variant_param_table(c):
    """tw_model_init's table with the variants: gen_train.param_table, each layer's ffn.* replaced
    by moe.* when n_experts > 0 and its attn.* by the latent attention's when the model has it."""
    t = []
    for name, shape in param_table(c):
        if c["n_experts"] and ".ffn." in name:
            if name.endswith(".ffn.gate"):
                t += moe_params(name[:-len("ffn.gate")], c)
        elif has_mla(c) and ".attn." in name:
            if name.endswith(".attn.wq"):
                t += mla_params(name[:-len("attn.wq")], c)
        else:
            t.append((name, shape))
    return t


def write_twmx(path, c, w):
    """TWMX version 1 (experts), or 2 when c has latent attention (lib/train/moe_file.h)."""
    head = b"TWMX" + struct.pack("<i", 2 if has_mla(c) else 1) + config_bytes(c)
    head += struct.pack("<4i", *[int(c[k]) for k in MOE_FIELDS])
    if has_mla(c):
        head += struct.pack("<5i", *[int(c[k]) for k in MLA_FIELDS])
    with open(path, "wb") as f:
        f.write(head + params_bytes(variant_param_table(c), w))


def read_twmx(path):
    """TWMX version 1 or 2. Returns (config dict, {name: array})."""
    b = open(path, "rb").read()
    assert b[:4] == b"TWMX", f"{path}: not a TWMX file"
    (version,) = struct.unpack_from("<i", b, 4)
    assert version in (1, 2), f"{path}: version {version}"
    c, off = read_config(b, 8)
    c.update(zip(MOE_FIELDS, struct.unpack_from("<4i", b, off))); off += 16
    if version == 2:
        c.update(zip(MLA_FIELDS, struct.unpack_from("<5i", b, off))); off += 20
    return c, read_params(b, off, variant_param_table(c), path)


# ---- the layers and the model ----

def swiglu(x, g, u, d):
    return F.linear(F.silu(F.linear(x, g)) * F.linear(x, u), d)


def moe(x, w, p, c, gaps):
    """x: (T, C) -> (T, C) and the layer's aux loss, as tw_moe_forward with a softmax router.
    Appends to gaps the smallest gap between the k-th and (k+1)-th router logit."""
    T, C = x.shape
    E, k, Fh = c["n_experts"], c["top_k"], c["ffn_hidden"]
    logits = F.linear(x, w[p + "moe.router"])                       # (T, E)
    probs = torch.softmax(logits, dim=-1)
    srt = torch.sort(logits.detach(), dim=-1, descending=True).values
    if k < E:
        gaps.append(float((srt[:, k - 1] - srt[:, k]).min()))
    sel = torch.topk(logits.detach(), k, dim=-1).indices             # (T, k) best first
    gate = probs.gather(1, sel)
    if c["norm_topk"]:
        gate = gate / gate.sum(dim=-1, keepdim=True)
    G, U, D = w[p + "moe.gate"], w[p + "moe.up"], w[p + "moe.down"]
    y = torch.zeros(T, C)
    for e in range(E):
        rows, slot = (sel == e).nonzero(as_tuple=True)
        if rows.numel() == 0:
            continue
        out = swiglu(x[rows], G[e * Fh:(e + 1) * Fh], U[e * Fh:(e + 1) * Fh], D[e * C:(e + 1) * C])
        y = y.index_add(0, rows, gate[rows, slot].unsqueeze(1) * out)
    if c["n_shared"]:
        y = y + swiglu(x, w[p + "moe.shared_gate"], w[p + "moe.shared_up"], w[p + "moe.shared_down"])
    f = torch.bincount(sel.reshape(-1), minlength=E).to(torch.float64) / (T * k)   # constant
    aux = E * (f * probs.mean(dim=0)).sum()
    return y, aux


def mla_attention(x, w, p, c):
    """x: (T, C) -> (T, C): nn/mla.h's forward (eps = norm_eps, theta = rope_theta)."""
    T = x.shape[0]
    H = c["n_head"]
    rq, rkv, dn, dr, dv = (c[k] for k in MLA_FIELDS)
    eps, theta = c["norm_eps"], c["rope_theta"]
    cq = gen_mla.rmsnorm(x @ w[p + "attn.q_a"].T, w[p + "attn.q_a_norm"], eps)
    q = (cq @ w[p + "attn.q_b"].T).reshape(T, H, dn + dr)
    qn, qp = q[..., :dn], gen_mla.rope_adjacent(q[..., dn:], theta)
    kva = x @ w[p + "attn.kv_a"].T
    lat = gen_mla.rmsnorm(kva[:, :rkv], w[p + "attn.kv_a_norm"], eps)
    kp = gen_mla.rope_adjacent(kva[:, rkv:], theta)
    kv = (lat @ w[p + "attn.kv_b"].T).reshape(T, H, dn + dv)
    kn, v = kv[..., :dn], kv[..., dn:]
    s = (torch.einsum("thd,shd->hts", qn, kn) + torch.einsum("thd,sd->hts", qp, kp)) / (dn + dr) ** 0.5
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    pr = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    o = torch.einsum("hts,shd->thd", pr, v).reshape(T, H * dv)
    return o @ w[p + "attn.o"].T


def forward(tokens, w, c, gaps):
    """tokens: (T) -> logits (T, V) and the sum over the layers of their aux losses (0.0 when no
    layer has experts)."""
    x = w["tok_emb"][tokens]
    aux = 0.0
    for l in range(c["n_layer"]):
        p = f"layers.{l}."
        h = norm(x, w, p + "norm1", c)
        x = x + (mla_attention(h, w, p, c) if has_mla(c) else attention(h, w, p, c))
        h = norm(x, w, p + "norm2", c)
        if c["n_experts"]:
            y, a = moe(h, w, p, c, gaps)
            aux = aux + a
        else:
            y = swiglu(h, w[p + "ffn.gate"], w[p + "ffn.up"], w[p + "ffn.down"])
        x = x + y
    x = norm(x, w, "final_norm", c)
    return F.linear(x, w["tok_emb"] if c["tied"] else w["head"]), aux


# ---- the goldens ----

def seeded_variant_init(c, rng, std):
    """Norm gains 1 + N(0, 0.1), router weights N(0, ROUTER_STD), the token embedding N(0, 0.02),
    every other matrix N(0, std); float32."""
    w = {}
    for name, shape in variant_param_table(c):
        leaf = name.split(".")[-1]
        if leaf == "w" or leaf.endswith("_norm"):
            w[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        elif leaf == "router":
            w[name] = (ROUTER_STD * rng.standard_normal(shape)).astype(np.float32)
        else:
            scale = 0.02 if name == "tok_emb" else std
            w[name] = (scale * rng.standard_normal(shape)).astype(np.float32)
    return w


def gen_cases(out, cases, seed, std):
    """Writes out/<case>/ for each case: dict(style, moe=MOE_FIELDS values, mla=MLA_FIELDS values
    (optional), hp=hyper-parameters with aux_coef, seed (optional)). The cases draw from one
    random stream seeded with seed, in order; a case with its own seed starts a fresh stream
    there. std: the init's matrix scale (seeded_variant_init)."""
    rng = np.random.default_rng(seed)
    for case, spec in cases.items():
        if "seed" in spec:
            rng = np.random.default_rng(spec["seed"])
        d = os.path.join(out, case)
        os.makedirs(d, exist_ok=True)
        c = tiny_config(spec["style"])
        c.update(spec["moe"], **spec.get("mla", {}))
        if c["n_experts"]:
            c.update(ffn_hidden=16)
        w = seeded_variant_init(c, rng, std)
        path = os.path.join(d, "init.bin")
        write_twmx(path, c, w)
        c2, w2 = read_twmx(path)   # the reader agrees with the writer
        assert all(np.array_equal(w[k], w2[k]) for k in w) and c2 == c
        write_tokens(os.path.join(d, "tokens.bin"), markov_tokens(rng, c["vocab"], 300))
        hp = spec["hp"]
        gaps = []
        names = [n for n, _ in variant_param_table(c)]
        tokens = read_tokens(os.path.join(d, "tokens.bin"))
        losses, lrs, gnorms, final = train_next_token(w, names, tokens, hp,
                                                      lambda row, wt: forward(row, wt, c, gaps))
        if c["n_experts"] and c["top_k"] < c["n_experts"]:
            assert min(gaps) >= MIN_GAP, f"{case}: a near-tie in the router ({min(gaps):.3g}): change the seed"
        save_run(d, hparams_row(hp, hp["aux_coef"]), dict(losses=losses, lrs=lrs, gnorms=gnorms), final)
        print(f"{case}: loss {losses[0]:.4f} -> {losses[-1]:.4f} (ln V = {math.log(c['vocab']):.4f}), "
              f"gnorm {gnorms[0]:.3f} -> {gnorms[-1]:.3f}"
              + (f", smallest router gap {min(gaps):.3g}" if gaps else ""))
