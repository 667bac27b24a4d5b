#!/usr/bin/python3
"""gen_model.py: golden vectors for attention, multi-head attention, the FFN, the transformer block
and the four tiny models of lib/ (tests/test_attention.c, test_mha.c, test_ffn.c, test_block.c,
test_model.c).

Run from the top of the checkout with Debian's Python, which has PyTorch:
    /usr/bin/python3 tests/golden/gen_model.py
It rewrites data/golden/model/**. Weights and inputs are drawn here (numpy, fixed seed), rounded
to float32 (what the C code receives) and stored beside the outputs under the names the C library
uses (tw_param names: "attn.wq", "layers.0.ffn.gate", ...). Every reference is computed by PyTorch
in float64 from those float32 values, and rounded to float32 once on saving.

Each case directory also holds cfg.npy (int32) and fcfg.npy (float32) describing its
configuration, so the C tests read sizes and options from here rather than repeating them. The
field order of every cfg vector is given by the *_FIELDS lists below and mirrored in the tests.

The references use torch's own building blocks: nn.Linear, F.layer_norm, an RMSNorm as in
Llama/Qwen, explicit float64 softmax attention (this torch predates F.scaled_dot_product_attention),
repeat_interleave for GQA, Hugging Face's rotate_half RoPE and Meta Llama's complex-number RoPE.
One attention case is also checked against torch.nn.MultiheadAttention before it is written.
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from golden_io import save_npy

torch.set_default_dtype(torch.float64)
OUT = os.path.join("data", "golden", "model")
RNG = np.random.default_rng(1729)
written = []

ROPE = {"none": 0, "adjacent": 1, "halves": 2}                  # tw_rope_kind
ACT = {"relu": 0, "gelu": 1, "gelu_tanh": 2, "silu": 3}          # tw_act
SDPA_FIELDS = ["T", "S", "D", "causal", "offset", "has_mask"]
ATTN_FIELDS = ["C", "H", "G", "D", "T", "S", "causal", "rope", "qk_norm", "bias", "pos0",
               "cross", "has_mask"]                              # fcfg: theta, qk-norm eps
FFN_FIELDS = ["T", "C", "F", "act", "bias", "swiglu"]
BLOCK_FIELDS = ATTN_FIELDS + ["prenorm", "rms", "swiglu", "act", "F"]  # fcfg: theta, qk eps, norm eps


# ---- saving and drawing ----

def save(rel, arr):
    """Writes arr as data/golden/model/<rel>.npy (golden_io.save_npy)."""
    written.append(save_npy(os.path.join(OUT, rel + ".npy"), arr))



def randn(*shape, std=1.0):
    """float32 normal draws, returned as float64 tensors holding exactly those float32 values."""
    a = (RNG.standard_normal(shape) * std).astype(np.float32)
    return torch.from_numpy(a.astype(np.float64))


def linear_w(c_out, c_in):
    """A Linear weight with std 1/sqrt(C_in), so activations stay O(1) through the layers and the
    attention maps are far from uniform (the tests then see every part of the math)."""
    return randn(c_out, c_in, std=1.0 / math.sqrt(c_in))


# ---- reference components (float64) ----

def linear(x, w, b=None):
    """torch.nn.Linear with the given weight (C_out, C_in) and bias."""
    lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=b is not None)
    with torch.no_grad():
        lin.weight.copy_(w)
        if b is not None:
            lin.bias.copy_(b)
        return lin(x)


def rmsnorm(x, w, eps):
    """RMSNorm as in Llama/Qwen: x / sqrt(mean(x^2) + eps) * w, over the last axis."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope_adjacent(x, pos, theta):
    """Meta Llama's complex form: pairs (2i, 2i+1) become complex numbers times e^{i p f_i}.
    x: (T, n, D)   pos: (T)"""
    T, n, D = x.shape
    freqs = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D)          # (D/2)
    cis = torch.polar(torch.ones(T, D // 2), torch.outer(pos.double(), freqs))         # (T, D/2)
    xc = torch.view_as_complex(x.reshape(T, n, D // 2, 2).contiguous())
    return torch.view_as_real(xc * cis[:, None, :]).reshape(T, n, D)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_halves(x, pos, theta):
    """Hugging Face form: pairs (i, i + D/2), x cos + rotate_half(x) sin.   x: (T, n, D)"""
    D = x.shape[-1]
    freqs = 1.0 / theta ** (torch.arange(0, D, 2, dtype=torch.float64) / D)
    ang = torch.outer(pos.double(), freqs)
    emb = torch.cat((ang, ang), dim=-1)                                              # (T, D)
    cos, sin = emb.cos()[:, None, :], emb.sin()[:, None, :]
    return x * cos + rotate_half(x) * sin


def rope(x, kind, pos, theta):
    if kind == "adjacent":
        return rope_adjacent(x, pos, theta)
    if kind == "halves":
        return rope_halves(x, pos, theta)
    return x


def attend(q, k, v, causal, offset, mask):
    """Scaled dot-product attention per head, explicit softmax in float64.
    q: (n, T, D)   k, v: (n, S, D)   mask: (T, S) additive or None.
    Returns out (n, T, D), scores (n, T, S) with -inf where hidden, weights (n, T, S)."""
    T, S, D = q.shape[-2], k.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(D)
    if mask is not None:
        scores = scores + mask
    if causal:
        t = torch.arange(T)[:, None]
        s = torch.arange(S)[None, :]
        scores = scores.masked_fill(s > t + offset, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, scores, weights


def mha(x, w, c, x_kv=None, mask=None):
    """Multi-head / grouped-query attention, step by step. x: (T, C). w: dict of weights by tw
    name. c: dict with H, G, D, causal, rope, theta, qk_norm, eps, pos0. Returns every step."""
    T = x.shape[0]
    H, G, D = c["H"], c["G"], c["D"]
    src = x if x_kv is None else x_kv
    S = src.shape[0]
    q = linear(x, w["attn.wq"], w.get("attn.bq"))
    k = linear(src, w["attn.wk"], w.get("attn.bk"))
    v = linear(src, w["attn.wv"], w.get("attn.bv"))
    qh, kh = q.reshape(T, H, D), k.reshape(S, G, D)
    if c["qk_norm"]:
        qh = rmsnorm(qh, w["attn.q_norm"], c["eps"])
        kh = rmsnorm(kh, w["attn.k_norm"], c["eps"])
    if x_kv is None:
        pos = torch.arange(c["pos0"], c["pos0"] + T)
        qh = rope(qh, c["rope"], pos, c["theta"])
        kh = rope(kh, c["rope"], pos, c["theta"])
    vh = v.reshape(S, G, D)
    # GQA: query head h reads kv head h // (H / G) (repeat_interleave, as HF's repeat_kv).
    kr = kh.repeat_interleave(H // G, dim=1).transpose(0, 1)                      # (H, S, D)
    vr = vh.repeat_interleave(H // G, dim=1).transpose(0, 1)
    z, scores, weights = attend(qh.transpose(0, 1), kr, vr,
                                c["causal"] and x_kv is None, 0, mask)
    z = z.transpose(0, 1).reshape(T, H * D)
    out = linear(z, w["attn.wo"], w.get("attn.bo"))
    return dict(q=q, k=k, v=v, q_rot=qh.reshape(T, H * D), k_rot=kh.reshape(S, G * D),
                scores=scores, weights=weights, z=z, out=out)


def attn_weights(C, H, G, D, bias, qk_norm, prefix=""):
    w = {prefix + "attn.wq": linear_w(H * D, C), prefix + "attn.wk": linear_w(G * D, C),
         prefix + "attn.wv": linear_w(G * D, C), prefix + "attn.wo": linear_w(C, H * D)}
    if bias:
        w[prefix + "attn.bq"] = randn(H * D, std=0.1)
        w[prefix + "attn.bk"] = randn(G * D, std=0.1)
        w[prefix + "attn.bv"] = randn(G * D, std=0.1)
        w[prefix + "attn.bo"] = randn(C, std=0.1)
    if qk_norm:
        w[prefix + "attn.q_norm"] = 1.0 + randn(D, std=0.2)
        w[prefix + "attn.k_norm"] = 1.0 + randn(D, std=0.2)
    return w


def ffn(x, w, act, swiglu, prefix=""):
    """Classic FFN act(x W1^T + b1) W2^T + b2, or SwiGLU (silu(x Wg^T) * x Wu^T) Wd^T.
    Returns (out, dict of intermediates)."""
    if swiglu:
        gate = linear(x, w[prefix + "ffn.gate"])
        up = linear(x, w[prefix + "ffn.up"])
        a = F.silu(gate) * up
        return linear(a, w[prefix + "ffn.down"]), dict(gate=gate, up=up, act=a)
    h = linear(x, w[prefix + "ffn.w1"], w.get(prefix + "ffn.b1"))
    h = {"relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"),
         "silu": F.silu}[act](h)
    return linear(h, w[prefix + "ffn.w2"], w.get(prefix + "ffn.b2")), dict(hidden=h)


def ffn_weights(C, Fh, bias, swiglu, prefix=""):
    if swiglu:
        return {prefix + "ffn.gate": linear_w(Fh, C), prefix + "ffn.up": linear_w(Fh, C),
                prefix + "ffn.down": linear_w(C, Fh)}
    w = {prefix + "ffn.w1": linear_w(Fh, C), prefix + "ffn.w2": linear_w(C, Fh)}
    if bias:
        w[prefix + "ffn.b1"] = randn(Fh, std=0.1)
        w[prefix + "ffn.b2"] = randn(C, std=0.1)
    return w


def norm(x, w, name, rms, eps):
    if rms:
        return rmsnorm(x, w[name + ".w"], eps)
    return F.layer_norm(x, (x.shape[-1],), w[name + ".w"], w.get(name + ".b"), eps)


def block(x, w, c, prefix=""):
    """One block, pre-norm (h = x + Attn(N1(x)), y = h + FFN(N2(h))) or post-norm
    (h = N1(x + Attn(x)), y = N2(h + FFN(h))). Returns y and the intermediates by scratch name."""
    lw = {k[len(prefix):]: v for k, v in w.items() if k.startswith(prefix)}
    r = {}
    if c["prenorm"]:
        r["norm1"] = norm(x, lw, "norm1", c["rms"], c["norm_eps"])
        a = mha(r["norm1"], lw, c)
        r["resid_mid"] = x + a["out"]
        r["norm2"] = norm(r["resid_mid"], lw, "norm2", c["rms"], c["norm_eps"])
        r["ffn_out"], f = ffn(r["norm2"], lw, c["act"], c["swiglu"])
        y = r["resid_mid"] + r["ffn_out"]
    else:
        a = mha(x, lw, c)
        r["norm1"] = norm(x + a["out"], lw, "norm1", c["rms"], c["norm_eps"])
        r["resid_mid"] = r["norm1"]
        r["ffn_out"], f = ffn(r["resid_mid"], lw, c["act"], c["swiglu"])
        r["norm2"] = norm(r["resid_mid"] + r["ffn_out"], lw, "norm2", c["rms"], c["norm_eps"])
        y = r["norm2"]
    r["attn_out"] = a["out"]
    r["attn_weights"] = a["weights"]
    r["q_rot"] = a["q_rot"]
    r.update({"ffn_" + k: v for k, v in f.items()})
    r["out"] = y
    return y, r


def norm_weights(C, bias, name, prefix=""):
    w = {prefix + name + ".w": 1.0 + randn(C, std=0.2)}
    if bias:
        w[prefix + name + ".b"] = randn(C, std=0.2)
    return w


def save_dict(case, d):
    for k, v in d.items():
        save(f"{case}/{k}", v)


# ---- scaled dot-product attention (test_attention.c) ----

SDPA_CASES = [
    # name            T  S  D  causal offset has_mask
    ("causal_T3",     3, 3, 8, 1, 0, 0),
    ("single_T1",     1, 1, 1, 1, 0, 0),
    ("padmask_T7",    7, 7, 5, 1, 0, 1),
    ("cross_T3_S7",   3, 7, 4, 0, 0, 0),
    ("offset_T3_S7",  3, 7, 6, 1, 4, 0),
    ("bias_T2_S65",   2, 65, 3, 0, 0, 1),
]


def gen_sdpa():
    for name, T, S, D, causal, offset, has_mask in SDPA_CASES:
        q, k, v = randn(T, D), randn(S, D), randn(S, D)
        mask = None
        if has_mask:
            if causal:   # a padding mask: the last two keys are padding for every query
                mask = torch.zeros(T, S)
                mask[:, S - 2:] = float("-inf")
            else:        # a finite additive bias (e.g. ALiBi-like), plus one padded key
                mask = randn(T, S)
                mask[:, 0] = float("-inf")
        out, scores, weights = attend(q[None], k[None], v[None], causal, offset, mask)
        case = f"sdpa/{name}"
        save(f"{case}/cfg", np.array([T, S, D, causal, offset, has_mask], np.int32))
        save_dict(case, dict(q=q, k=k, v=v, out=out[0], scores=scores[0], weights=weights[0]))
        if mask is not None:
            save(f"{case}/mask", mask)


# ---- multi-head attention (test_mha.c) ----

MHA_CASES = [
    # name          C   H  G  D  T  S causal rope        theta  qk bias pos0 cross mask
    ("mha_g1",      24, 4, 4, 6, 5, 5, 1, "none",     1e4,   0, 1,   0,   0,    0),
    ("gqa2_adj",    16, 4, 2, 4, 7, 7, 1, "adjacent", 1e4,   0, 0,   3,   0,    0),
    ("gqa4_halves", 16, 8, 2, 2, 3, 3, 1, "halves",   1e6,   0, 1,   5,   0,    0),
    ("gqa8",        16, 16, 2, 2, 7, 7, 1, "adjacent", 1e6,  0, 0,   0,   0,    0),
    ("mqa",         16, 4, 1, 4, 7, 7, 1, "halves",   1e4,   0, 0,   2,   0,    0),
    ("qwen_headdim", 20, 4, 2, 6, 7, 7, 1, "halves",  1e6,   1, 0,   2,   0,    0),
    ("qknorm_adj_T1", 16, 2, 1, 10, 1, 1, 1, "adjacent", 1e4, 1, 1, 9,   0,    0),
    ("cross_mask",  16, 2, 2, 8, 3, 5, 0, "none",     1e4,   0, 1,   0,   1,    1),
    ("cross_gqa",   12, 4, 2, 3, 7, 3, 0, "none",     1e4,   0, 0,   0,   1,    0),
    ("noncausal",   16, 4, 4, 4, 7, 7, 0, "none",     1e4,   0, 1,   0,   0,    0),
]


def check_against_torch_mha(x, w, c, out):
    """Independent check of the reference on the plain MHA case: torch.nn.MultiheadAttention."""
    C, H = x.shape[1], c["H"]
    m = torch.nn.MultiheadAttention(C, H, bias=True, batch_first=True)
    with torch.no_grad():
        m.in_proj_weight.copy_(torch.cat([w["attn.wq"], w["attn.wk"], w["attn.wv"]]))
        m.in_proj_bias.copy_(torch.cat([w["attn.bq"], w["attn.bk"], w["attn.bv"]]))
        m.out_proj.weight.copy_(w["attn.wo"])
        m.out_proj.bias.copy_(w["attn.bo"])
        T = x.shape[0]
        causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
        y, _ = m(x[None], x[None], x[None], attn_mask=causal if c["causal"] else None)
    err = (y[0] - out).abs().max().item()
    assert err < 1e-12, f"reference MHA disagrees with torch.nn.MultiheadAttention by {err}"


def gen_mha():
    for (name, C, H, G, D, T, S, causal, rope_kind, theta, qk, bias, pos0, cross,
         has_mask) in MHA_CASES:
        c = dict(H=H, G=G, D=D, causal=causal, rope=rope_kind, theta=theta, qk_norm=qk,
                 eps=1e-6, pos0=pos0)
        w = attn_weights(C, H, G, D, bias, qk)
        x = randn(T, C)
        x_kv = randn(S, C) if cross else None
        mask = None
        if has_mask:   # padding: the last key is padding for every query
            mask = torch.zeros(T, S)
            mask[:, S - 1] = float("-inf")
        r = mha(x, w, c, x_kv, mask)
        if name == "mha_g1":
            check_against_torch_mha(x, w, c, r["out"])
        case = f"mha/{name}"
        save(f"{case}/cfg", np.array([C, H, G, D, T, S, causal, ROPE[rope_kind], qk, bias, pos0,
                                      cross, has_mask], np.int32))
        save(f"{case}/fcfg", np.array([theta, c["eps"]], np.float32))
        save_dict(case, w)
        save(f"{case}/x", x)
        if cross:
            save(f"{case}/x_kv", x_kv)
        if mask is not None:
            save(f"{case}/mask", mask)
        save_dict(case, {k: r[k] for k in ("q_rot", "k_rot", "v", "weights", "z", "out")})


# ---- feed-forward (test_ffn.c) ----

FFN_CASES = [
    # name           T  C  F   act          bias swiglu
    ("relu_bias",    3, 7, 13, "relu",      1, 0),
    ("gelu_bias_F65", 1, 7, 65, "gelu",     1, 0),
    ("gelu_tanh",    3, 8, 13, "gelu_tanh", 0, 0),
    ("swiglu",       3, 7, 13, "silu",      0, 1),
    ("swiglu_T7",    7, 3, 65, "silu",      0, 1),
]


def gen_ffn():
    for name, T, C, Fh, act, bias, swiglu in FFN_CASES:
        w = ffn_weights(C, Fh, bias, swiglu)
        x = randn(T, C, std=2.0)   # std 2 reaches well into the activations' curved parts
        out, inter = ffn(x, w, act, swiglu)
        case = f"ffn/{name}"
        save(f"{case}/cfg", np.array([T, C, Fh, ACT[act], bias, swiglu], np.int32))
        save_dict(case, w)
        save(f"{case}/x", x)
        save(f"{case}/out", out)
        save_dict(case, inter)


# ---- one block (test_block.c) ----

BLOCK_CASES = [
    # name, attention (as MHA_CASES, C..mask), prenorm, rms, swiglu, act, F, norm eps
    ("prenorm_llama",   (16, 4, 2, 4, 7, 7, 1, "adjacent", 1e4, 0, 0, 0, 0, 0),
     1, 1, 1, "silu", 48, 1e-5),
    ("prenorm_gpt2",    (12, 3, 3, 4, 5, 5, 1, "none", 1e4, 0, 1, 0, 0, 0),
     1, 0, 0, "gelu_tanh", 65, 1e-5),
    ("postnorm_2017",   (16, 2, 2, 8, 7, 7, 1, "none", 1e4, 0, 1, 0, 0, 0),
     0, 0, 0, "relu", 64, 1e-5),
    ("prenorm_qwen3_pos3", (16, 4, 2, 6, 3, 3, 1, "halves", 1e6, 1, 0, 3, 0, 0),
     1, 1, 1, "silu", 24, 1e-6),
]


def gen_block():
    for name, a, prenorm, rms, swiglu, act, Fh, norm_eps in BLOCK_CASES:
        C, H, G, D, T, S, causal, rope_kind, theta, qk, bias, pos0, cross, has_mask = a
        c = dict(H=H, G=G, D=D, causal=causal, rope=rope_kind, theta=theta, qk_norm=qk,
                 eps=1e-6, pos0=pos0, prenorm=prenorm, rms=rms, swiglu=swiglu, act=act,
                 norm_eps=norm_eps)
        ln_bias = bias and not rms
        w = {}
        w.update(norm_weights(C, ln_bias, "norm1"))
        w.update(attn_weights(C, H, G, D, bias, qk))
        w.update(norm_weights(C, ln_bias, "norm2"))
        w.update(ffn_weights(C, Fh, bias, swiglu))
        x = randn(T, C)
        y, r = block(x, w, c)
        case = f"block/{name}"
        save(f"{case}/cfg", np.array([C, H, G, D, T, S, causal, ROPE[rope_kind], qk, bias, pos0,
                                      cross, has_mask, prenorm, rms, swiglu, ACT[act], Fh],
                                     np.int32))
        save(f"{case}/fcfg", np.array([theta, 1e-6, norm_eps], np.float32))
        save_dict(case, w)
        save(f"{case}/x", x)
        save_dict(case, r)


# ---- the four tiny models (test_model.c); sizes mirror tw_model_config_preset ----

MODELS = {
    "2017":  dict(V=65, max_seq=16, L=2, C=24, H=4, G=4, D=6, F=96, prenorm=0, rms=0, eps=1e-5,
                  swiglu=0, act="relu", rope="none", theta=1e4, qk=0, pos="sinusoidal",
                  embed_scale=1, final_norm=0, tied=1, bias=1),
    "gpt2":  dict(V=65, max_seq=16, L=2, C=24, H=4, G=4, D=6, F=96, prenorm=1, rms=0, eps=1e-5,
                  swiglu=0, act="gelu_tanh", rope="none", theta=1e4, qk=0, pos="learned",
                  embed_scale=0, final_norm=1, tied=1, bias=1),
    "llama": dict(V=65, max_seq=32, L=2, C=24, H=4, G=2, D=6, F=64, prenorm=1, rms=1, eps=1e-5,
                  swiglu=1, act="silu", rope="adjacent", theta=1e4, qk=0, pos="none",
                  embed_scale=0, final_norm=1, tied=0, bias=0),
    "qwen3": dict(V=65, max_seq=32, L=2, C=24, H=4, G=2, D=8, F=64, prenorm=1, rms=1, eps=1e-6,
                  swiglu=1, act="silu", rope="halves", theta=1e6, qk=1, pos="none",
                  embed_scale=0, final_norm=1, tied=1, bias=0),
}
MODEL_T = 7


def sinusoidal(T, C):
    """Vaswani et al. 3.5: pe[p, 2i] = sin(p / 10000^(2i/C)), pe[p, 2i+1] = cos(...)."""
    pos = torch.arange(T, dtype=torch.float64)[:, None]
    i2 = torch.arange(0, C, 2, dtype=torch.float64)
    ang = pos / 10000.0 ** (i2 / C)
    pe = torch.zeros(T, C)
    pe[:, 0::2] = torch.sin(ang)
    pe[:, 1::2] = torch.cos(ang)[:, : C // 2]
    return pe


def gen_model(style, m):
    C, V = m["C"], m["V"]
    ln_bias = m["bias"] and not m["rms"]
    # Parameters in the order of tw_model_init (lib/nn/model.h); names are the tw_param names.
    w = {"tok_emb": randn(V, C, std=1.0 if style == "2017" else 0.5)}
    names = ["tok_emb"]
    if m["pos"] == "learned":
        w["pos_emb"] = randn(m["max_seq"], C, std=0.3)
    for l in range(m["L"]):
        p = f"layers.{l}."
        w.update(norm_weights(C, ln_bias, "norm1", p))
        w.update(attn_weights(C, m["H"], m["G"], m["D"], m["bias"], m["qk"], p))
        w.update(norm_weights(C, ln_bias, "norm2", p))
        w.update(ffn_weights(C, m["F"], m["bias"], m["swiglu"], p))
    if m["final_norm"]:
        w.update(norm_weights(C, ln_bias, "final_norm"))
    if not m["tied"]:
        w["head"] = linear_w(V, C)
    names = list(w.keys())

    tokens = torch.from_numpy(RNG.integers(0, V, size=MODEL_T))
    tokens[0], tokens[-1] = 0, V - 1          # the first and last ids of the table are exercised
    emb = torch.nn.Embedding(V, C)
    with torch.no_grad():
        emb.weight.copy_(w["tok_emb"])
        x = emb(tokens)
    if m["embed_scale"]:
        x = x * math.sqrt(C)
    if m["pos"] == "sinusoidal":
        x = x + sinusoidal(MODEL_T, C)
    elif m["pos"] == "learned":
        x = x + w["pos_emb"][:MODEL_T]
    c = dict(H=m["H"], G=m["G"], D=m["D"], causal=1, rope=m["rope"], theta=m["theta"],
             qk_norm=m["qk"], eps=m["eps"], pos0=0, prenorm=m["prenorm"], rms=m["rms"],
             swiglu=m["swiglu"], act=m["act"], norm_eps=m["eps"])
    inter = {"x": x}
    h = x
    for l in range(m["L"]):
        h, r = block(h, w, c, f"layers.{l}.")
        inter[f"layer{l}_out"] = h
        if l == 0:
            inter["layer0_attn_weights"] = r["attn_weights"]
            inter["layer0_q_rot"] = r["q_rot"]
    final = norm(h, w, "final_norm", m["rms"], m["eps"]) if m["final_norm"] else h
    logits = linear(final, w["tok_emb"] if m["tied"] else w["head"])
    inter["final"] = final
    inter["logits"] = logits

    case = f"models/{style}"
    save(f"{case}/n_params", np.array([len(names)], np.int32))
    save_dict(case, w)
    save(f"{case}/tokens", tokens.to(torch.int32))
    save_dict(case, inter)


def main():
    gen_sdpa()
    gen_mha()
    gen_ffn()
    gen_block()
    for style, m in MODELS.items():
        gen_model(style, m)
    total = sum(os.path.getsize(p) for p in written)
    print(f"wrote {len(written)} files, {total} bytes, under {OUT}")


if __name__ == "__main__":
    main()
