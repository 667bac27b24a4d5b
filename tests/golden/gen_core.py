#!/usr/bin/python3
"""gen_core.py: golden vectors for the core primitives of lib/ (tests/test_*.c of the core group).

Run from the top of the checkout with Debian's Python, which has PyTorch:
    /usr/bin/python3 tests/golden/gen_core.py
It rewrites data/golden/core/*.npy. Inputs are float32 (what the C code receives) and are stored
beside the outputs; every reference output is computed by PyTorch in float64 from those float32
inputs and rounded to float32 once, so the goldens are as exact as float32 can hold them.

The C tests index cases with Check's loop index _i over the same tables as below (SIZES etc.):
keep the two in step when changing either.
"""
import math
import os
import struct

import numpy as np
import torch
import torch.nn.functional as F

from golden_io import save_npy

OUT = os.path.join("data", "golden", "core")
SIZES = [1, 3, 7, 64, 65]                     # the sizes every table-driven test loops over
written = []


def save(name, arr):
    """Writes arr as data/golden/core/<name>.npy (golden_io.save_npy)."""
    written.append(save_npy(os.path.join(OUT, name + ".npy"), arr))



def rand(gen, *shape, lo=-1.0, hi=1.0):
    """Uniform float32 test inputs from torch's seeded generator."""
    return (torch.rand(*shape, generator=gen, dtype=torch.float64) * (hi - lo) + lo).float()


def f64(t):
    return t.double()


# ---- splitmix64 port (lib/core/rng.c), so tests/test_rng.c can check the C stream bit for bit ----

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):      # top 24 bits times 2^-24, exact in float32
        return np.float32(self.next() >> 40) * np.float32(1.0 / 16777216.0)

    def normal(self):       # Box-Muller in double, rounded to float32
        u1 = ((self.next() >> 11) + 1.0) * (1.0 / 9007199254740992.0)
        u2 = (self.next() >> 11) * (1.0 / 9007199254740992.0)
        return np.float32(math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586476925 * u2))


def gen_rng():
    r = SplitMix64(42)
    bits = [r.next() for _ in range(64)]
    # 64-bit words stored as (hi, lo) 32-bit halves: .npy int32 is all lib/formats/npy.c reads.
    halves = np.array([[b >> 32, b & 0xFFFFFFFF] for b in bits], dtype=np.uint64).astype(np.uint32)
    save("rng_next_seed42", halves.view(np.int32))
    r = SplitMix64(7)
    save("rng_uniform_seed7", np.array([r.uniform() for _ in range(257)], dtype=np.float32))
    r = SplitMix64(11)
    save("rng_normal_seed11", np.array([r.normal() for _ in range(257)], dtype=np.float32))
    # tw_rng_fill_uniform: lo + (hi - lo) * u, every operation in float32 as in C.
    r = SplitMix64(3)
    lo, hi = np.float32(-2.5), np.float32(1.25)
    save("rng_fill_uniform_seed3", np.array([lo + (hi - lo) * r.uniform() for _ in range(100)],
                                            dtype=np.float32))


# ---- npy reader/writer fixtures, written by numpy itself ----

def npy_values(n, dtype):
    """The values the C test expects in the npy fixtures: i * 0.25 - 1 (f32), 3 * i - 7 (i32)."""
    i = np.arange(n)
    return (i * 0.25 - 1).astype(np.float32) if dtype == np.float32 else (3 * i - 7).astype(np.int32)


NPY_CASES = [("f32_0d", np.float32, ()), ("f32_1d", np.float32, (5,)), ("f32_2d", np.float32, (3, 4)),
             ("f32_3d", np.float32, (2, 3, 4)), ("i32_0d", np.int32, ()), ("i32_1d", np.int32, (1,)),
             ("i32_2d", np.int32, (4, 7)), ("f32_empty", np.float32, (0, 3))]


def gen_npy():
    for name, dt, shape in NPY_CASES:
        n = int(np.prod(shape)) if shape else 1
        save("npy_" + name, npy_values(n, dt).reshape(shape))
    # Files the reader must reject with TW_ERR_FORMAT.
    bad = os.path.join(OUT, "bad")
    np.save(bad + "_fortran.npy", np.asfortranarray(npy_values(6, np.float32).reshape(2, 3)))
    np.save(bad + "_f64.npy", np.arange(4, dtype=np.float64))
    np.save(bad + "_bigendian.npy", np.arange(4, dtype=">f4"))
    np.save(bad + "_truncated.npy", npy_values(12, np.float32).reshape(3, 4))
    with open(bad + "_truncated.npy", "r+b") as f:
        f.truncate(os.path.getsize(bad + "_truncated.npy") - 4)    # lose the last element
    with open(bad + "_magic.npy", "wb") as f:
        f.write(b"\x93NUMPZ" + open(os.path.join(OUT, "npy_f32_1d.npy"), "rb").read()[6:])
    written.extend(bad + s for s in ("_fortran.npy", "_f64.npy", "_bigendian.npy",
                                     "_truncated.npy", "_magic.npy"))


# ---- Linear ----

def linear_shape(i):
    """Case i of the Linear table: (T, C_in, C_out) drawn cyclically from SIZES."""
    return SIZES[i], SIZES[(i + 1) % 5], SIZES[(i + 2) % 5]


def gen_linear(g):
    for i in range(5):
        T, C_in, C_out = linear_shape(i)
        x, W, b = rand(g, T, C_in), rand(g, C_out, C_in), rand(g, C_out)
        save(f"linear_{i}_x", x)
        save(f"linear_{i}_W", W)
        save(f"linear_{i}_b", b)
        save(f"linear_{i}_y_bias", F.linear(f64(x), f64(W), f64(b)))
        save(f"linear_{i}_y_nobias", F.linear(f64(x), f64(W)))


# ---- Embedding ----

def gen_embedding(g):
    V, C, T = 11, 7, 9
    table = rand(g, V, C)
    ids = torch.tensor([0, 10, 3, 3, 7, 1, 10, 0, 5], dtype=torch.int64)
    save("embedding_table", table)
    save("embedding_ids", ids.numpy().astype(np.int32))
    save("embedding_out", F.embedding(ids, table))


# ---- LayerNorm and RMSNorm ----

NORM_EPS = [1e-5, 1e-6, 1e-2, 1e-5, 1e-6]


def norm_shape(i):
    return SIZES[(i + 1) % 5], SIZES[i]          # (T, C)


def gen_norm(g):
    for i in range(5):
        T, C = norm_shape(i)
        eps = NORM_EPS[i]
        # An offset mean and a larger scale exercise the centring (and two-pass variance).
        x = rand(g, T, C, lo=-3.0, hi=5.0)
        gamma, beta = rand(g, C, lo=0.5, hi=1.5), rand(g, C)
        xd = f64(x)
        save(f"norm_{i}_x", x)
        save(f"norm_{i}_gamma", gamma)
        save(f"norm_{i}_beta", beta)
        save(f"norm_{i}_ln", F.layer_norm(xd, (C,), f64(gamma), f64(beta), eps))
        save(f"norm_{i}_ln_nobias", F.layer_norm(xd, (C,), f64(gamma), None, eps))
        var = xd.var(dim=-1, unbiased=False)
        save(f"norm_{i}_ln_mean", xd.mean(dim=-1))
        save(f"norm_{i}_ln_rstd", torch.rsqrt(var + eps))
        # torch 1.13 has no F.rms_norm: this is the Llama formula written out.
        ms = xd.pow(2).mean(dim=-1, keepdim=True)
        save(f"norm_{i}_rms", xd * torch.rsqrt(ms + eps) * f64(gamma))
        save(f"norm_{i}_rms_unit", xd * torch.rsqrt(ms + eps))
        save(f"norm_{i}_rms_stat", torch.sqrt(ms + eps).squeeze(-1))


# ---- Activations ----

def gen_activation():
    core = torch.linspace(-20.0, 20.0, 801, dtype=torch.float64)          # step 0.05
    extra = torch.tensor([-1e4, -1e3, -100.0, -50.0, -1e-3, -1e-6, 0.0, 1e-6, 1e-3, 50.0, 100.0,
                          1e3, 1e4], dtype=torch.float64)
    x = torch.cat([core, extra]).float()
    xd = f64(x)
    save("act_x", x)
    save("act_relu", F.relu(xd))
    save("act_gelu_erf", F.gelu(xd, approximate="none"))
    save("act_gelu_tanh", F.gelu(xd, approximate="tanh"))
    save("act_silu", F.silu(xd))


# ---- Softmax ----

SOFTMAX_TEMPS = [1.0, 0.5, 2.0, 0.7, 1.3]


def softmax_shape(i):
    return SIZES[(i + 1) % 5], SIZES[i]          # (rows, cols)


def gen_softmax(g):
    for i in range(5):
        rows, cols = softmax_shape(i)
        x = rand(g, rows, cols, lo=-8.0, hi=8.0)
        save(f"softmax_{i}_x", x)
        save(f"softmax_{i}_y", torch.softmax(f64(x) / SOFTMAX_TEMPS[i], dim=-1))
    # Extreme and partly masked rows (each row has at least one finite entry, so torch defines it).
    inf = float("inf")
    x = torch.tensor([[1e4, -1e4, 0.0, 1e4 - 1.0, 9990.0],
                      [-1e4, -1e4, -1e4, -1e4, -1e4],
                      [-inf, 2.0, -inf, 1.0, -inf],
                      [-inf, -inf, -inf, -inf, -1e4],
                      [1e4, -inf, -1e4, -inf, 1e4]], dtype=torch.float32)
    save("softmax_extreme_x", x)
    save("softmax_extreme_y_t1", torch.softmax(f64(x), dim=-1))
    save("softmax_extreme_y_t3", torch.softmax(f64(x) / 3.0, dim=-1))


# ---- Positional encodings ----

SIN_POS0 = [0, 5, 100, 1000, 3]


def sinusoidal_shape(i):
    return SIZES[(i + 2) % 5], SIZES[i]          # (T, C): C runs over odd and even sizes


def sinusoidal_torch(T, C, pos0):
    """Vaswani et al. 2017, section 3.5, in float64; the last column of an odd C is a sine."""
    pos = torch.arange(pos0, pos0 + T, dtype=torch.float64).unsqueeze(1)   # (T, 1)
    two_i = torch.arange(0, C, 2, dtype=torch.float64)                      # 2i for each pair
    angle = pos / torch.pow(torch.tensor(10000.0, dtype=torch.float64), two_i / C)  # (T, ceil(C/2))
    pe = torch.zeros(T, C, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : C // 2])
    return pe


def gen_posenc(g):
    for i in range(5):
        T, C = sinusoidal_shape(i)
        save(f"sin_{i}", sinusoidal_torch(T, C, SIN_POS0[i]))
    # Learned positions: float32 addition is correctly rounded in both torch and C, so the golden
    # is computed in float32 and must match exactly.
    T, C, P, pos0 = 5, 7, 16, 9
    x, table = rand(g, T, C), rand(g, P, C)
    save("learned_x", x)
    save("learned_table", table)
    save("learned_out", x + table[pos0:pos0 + T])


# ---- RoPE ----

ROPE_D = [2, 6, 8, 64, 66]
ROPE_H = [1, 2, 3, 1, 2]
ROPE_POS0 = [0, 7, 100, 4096, 1]
ROPE_THETA = [10000.0, 1e6, 10000.0, 1e6, 10000.0]


def rope_freqs(T, D, pos0, theta):
    """Angles (T, D/2): position times theta^(-2i/D), float64."""
    inv = 1.0 / torch.pow(torch.tensor(theta, dtype=torch.float64),
                          torch.arange(0, D, 2, dtype=torch.float64) / D)
    pos = torch.arange(pos0, pos0 + T, dtype=torch.float64)
    return torch.outer(pos, inv)


def rope_adjacent_torch(x, pos0, theta):
    """Meta's Llama: pairs (2i, 2i+1) as complex numbers, multiplied by e^(i angle)."""
    T, H, D = x.shape
    xc = torch.view_as_complex(f64(x).reshape(T, H, D // 2, 2))
    ang = rope_freqs(T, D, pos0, theta)
    cis = torch.polar(torch.ones_like(ang), ang).unsqueeze(1)   # (T, 1, D/2)
    return torch.view_as_real(xc * cis).reshape(T, H, D)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_halves_torch(x, pos0, theta):
    """Hugging Face Llama/Qwen: x * cos + rotate_half(x) * sin, angles repeated over both halves."""
    T, H, D = x.shape
    ang = rope_freqs(T, D, pos0, theta)
    emb = torch.cat((ang, ang), dim=-1).unsqueeze(1)             # (T, 1, D)
    xd = f64(x)
    return xd * emb.cos() + rotate_half(xd) * emb.sin()


def gen_rope(g):
    for i in range(5):
        T, H, D = SIZES[i], ROPE_H[i], ROPE_D[i]
        x = rand(g, T, H, D, lo=-2.0, hi=2.0)
        save(f"rope_{i}_x", x)
        save(f"rope_{i}_adjacent", rope_adjacent_torch(x, ROPE_POS0[i], ROPE_THETA[i]))
        save(f"rope_{i}_halves", rope_halves_torch(x, ROPE_POS0[i], ROPE_THETA[i]))


def main():
    os.makedirs(OUT, exist_ok=True)
    g = torch.Generator().manual_seed(1234)
    gen_rng()
    gen_npy()
    gen_linear(g)
    gen_embedding(g)
    gen_norm(g)
    gen_activation()
    gen_softmax(g)
    gen_posenc(g)
    gen_rope(g)
    total = sum(os.path.getsize(p) for p in written)
    print(f"wrote {len(written)} files, {total} bytes, to {OUT}")


if __name__ == "__main__":
    main()
