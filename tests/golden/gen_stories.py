#!/usr/bin/python3
"""gen_stories.py: golden tensors for the real model (stories260K, tests/test_llama2c.c) and token
ids for the tokenizer tests (tests/test_tokenizer.c).

Run from the top of the checkout, after `make model`, with Debian's Python (it has PyTorch):
    /usr/bin/python3 tests/golden/gen_stories.py
It rewrites data/golden/stories/*.npy.

This is an independent implementation, written from the file format and the architecture in
../shared/models/README.md, not from lib/: it reads the checkpoint and the tokenizer with numpy,
encodes with its own BPE, and runs the forward pass in PyTorch float64 (weights are the file's
float32 values, widened). Every tensor of `./generate --dump` is written for PROMPT, rounded to
float32 once, under the same names (tokens.npy, embed.npy, L{l}.*.npy, final_norm.npy, logits.npy).
"""
import os
import struct

import numpy as np
import torch

from golden_io import save_npy

MODEL = os.path.join("data", "models", "stories260K.bin")
TOKENIZER = os.path.join("data", "models", "tok512.bin")
OUT = os.path.join("data", "golden", "stories")
PROMPT = "Once upon a time"
# Prompts whose token ids tests/test_tokenizer.c checks (keep in step with TOKEN_CASES there).
TOKEN_CASES = ["Once upon a time", "", "  two leading spaces", "caf\u00e9 \u4e2d",
               "Lily's ball\nwas red.", "The end!"]
EPS = 1e-5
THETA = 10000.0
written = []


def save(name, arr):
    """Writes arr as data/golden/stories/<name>.npy (golden_io.save_npy)."""
    written.append(save_npy(os.path.join(OUT, name + ".npy"), arr))



# ---- checkpoint ----

def read_checkpoint(path):
    raw = open(path, "rb").read()
    dim, hidden, n_layers, n_heads, n_kv, vocab, seq_len = struct.unpack("<7i", raw[:28])
    shared = vocab > 0
    vocab = abs(vocab)
    f = np.frombuffer(raw, dtype="<f4", offset=28).astype(np.float64)
    hd = dim // n_heads
    kv = n_kv * hd
    off = 0

    def take(*shape):
        nonlocal off
        n = int(np.prod(shape))
        a = f[off:off + n].reshape(shape)
        off += n
        return torch.from_numpy(a.copy())

    w = {"tok": take(vocab, dim), "rms_att": take(n_layers, dim), "wq": take(n_layers, dim, dim),
         "wk": take(n_layers, kv, dim), "wv": take(n_layers, kv, dim), "wo": take(n_layers, dim, dim),
         "rms_ffn": take(n_layers, dim), "w1": take(n_layers, hidden, dim),
         "w2": take(n_layers, dim, hidden), "w3": take(n_layers, hidden, dim), "rms_final": take(dim)}
    take(seq_len, hd // 2)
    take(seq_len, hd // 2)
    w["cls"] = w["tok"] if shared else take(vocab, dim)
    assert off == f.size, "file size does not match the header"
    cfg = dict(dim=dim, hidden=hidden, n_layers=n_layers, n_heads=n_heads, n_kv=n_kv,
               vocab=vocab, seq_len=seq_len, hd=hd)
    return cfg, w


# ---- tokenizer ----

def read_tokenizer(path, vocab_size):
    raw = open(path, "rb").read()
    off = 4
    vocab, scores = [], []
    for _ in range(vocab_size):
        score, n = struct.unpack("<fi", raw[off:off + 8])
        off += 8
        vocab.append(raw[off:off + n])
        off += n
        scores.append(score)
    assert off == len(raw)
    return vocab, scores


def encode(text, vocab, scores):
    index = {}
    for i, s in enumerate(vocab):
        index.setdefault(s, i)       # duplicates: the lowest id
    ids = [1]
    data = text.encode("utf-8")
    if data:
        ids.append(index[b" "])
    for ch in text:                  # one code point at a time
        b = ch.encode("utf-8")
        if b in index:
            ids.append(index[b])
        else:
            ids.extend(x + 3 for x in b)
    while True:
        best = None
        for i in range(len(ids) - 1):
            merged = vocab[ids[i]] + vocab[ids[i + 1]]
            j = index.get(merged)
            if j is not None and scores[j] > -1e10 and (best is None or scores[j] > best[0]):
                best = (scores[j], i, j)
        if best is None:
            break
        _, i, j = best
        ids[i:i + 2] = [j]
    return ids


# ---- forward pass, float64 ----

def rmsnorm(x, g):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + EPS) * g


def rope(x, hd):
    """x: (T, heads, hd), rotating adjacent pairs (2i, 2i+1) by t * THETA^(-2i/hd)."""
    T = x.shape[0]
    i = torch.arange(0, hd, 2, dtype=torch.float64)
    freq = THETA ** (-i / hd)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * freq[None, :]      # (T, hd/2)
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    a, b = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = a * c - b * s
    out[..., 1::2] = a * s + b * c
    return out


def forward(cfg, w, ids):
    T, hd, H, G = len(ids), cfg["hd"], cfg["n_heads"], cfg["n_kv"]
    x = w["tok"][torch.tensor(ids)]
    save("tokens", np.array(ids, dtype=np.int32))
    save("embed", x.numpy())
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    for l in range(cfg["n_layers"]):
        p = f"L{l}."
        save(p + "attn_in", x.numpy())
        xn = rmsnorm(x, w["rms_att"][l])
        q = (xn @ w["wq"][l].T).reshape(T, H, hd)
        k = (xn @ w["wk"][l].T).reshape(T, G, hd)
        v = (xn @ w["wv"][l].T).reshape(T, G, hd)
        qr, kr = rope(q, hd), rope(k, hd)
        rep = H // G                                     # query head h reads kv head h // rep
        kh = kr.repeat_interleave(rep, dim=1).permute(1, 0, 2)      # (H, T, hd)
        vh = v.repeat_interleave(rep, dim=1).permute(1, 0, 2)
        scores = qr.permute(1, 0, 2) @ kh.transpose(1, 2) / np.sqrt(hd)   # (H, T, T)
        scores = scores.masked_fill(mask, float("-inf"))
        pattern = torch.softmax(scores, dim=-1)
        z = (pattern @ vh).permute(1, 0, 2)              # (T, H, hd)
        attn_out = z.reshape(T, H * hd) @ w["wo"][l].T
        mid = x + attn_out
        fn = rmsnorm(mid, w["rms_ffn"][l])
        gate = fn @ w["w1"][l].T
        up = fn @ w["w3"][l].T
        act = torch.nn.functional.silu(gate) * up
        ffn_out = act @ w["w2"][l].T
        post = mid + ffn_out
        for name, t in [("attn_norm", xn), ("q", q), ("k", k), ("v", v), ("q_rot", qr),
                        ("k_rot", kr), ("scores", scores), ("pattern", pattern), ("z", z),
                        ("attn_out", attn_out), ("resid_mid", mid), ("ffn_norm", fn),
                        ("ffn_gate", gate), ("ffn_up", up), ("ffn_act", act),
                        ("ffn_out", ffn_out), ("resid_post", post)]:
            save(p + name, t.numpy())
        x = post
    fin = rmsnorm(x, w["rms_final"])
    save("final_norm", fin.numpy())
    logits = fin @ w["cls"].T
    save("logits", logits.numpy())
    return logits


def main():
    if not os.path.exists(MODEL):
        raise SystemExit(f"{MODEL} is missing: run `make model` first")
    os.makedirs(OUT, exist_ok=True)
    cfg, w = read_checkpoint(MODEL)
    vocab, scores = read_tokenizer(TOKENIZER, cfg["vocab"])
    ids = encode(PROMPT, vocab, scores)
    assert ids == [1, 403, 407, 261, 378], ids       # the ids the issue documents
    logits = forward(cfg, w, ids)
    print("prompt", PROMPT, "->", ids, "; greedy next token:", int(logits[-1].argmax()),
          repr(vocab[int(logits[-1].argmax())]))
    for i, text in enumerate(TOKEN_CASES):
        t = encode(text, vocab, scores)
        save(f"tok_case{i}", np.array(t, dtype=np.int32))
        print(f"tok_case{i}", repr(text), t)
    total = sum(os.path.getsize(p) for p in written)
    print(f"wrote {len(written)} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
