#!/usr/bin/env python
"""The paper's synthetic task for the attention-heads chapter, run outside the page (too slow for it).

Yu et al. (ICLR 2026), Sec. 6.1: tokens x_t ~ N(0, I_4), target y = sum_{i<=D} max_t a_i . x_t with D
orthonormal projections a_i. Model: a two-layer ReLU token encoder (width 64) into E = 32, a trainable
classification token that queries the T tokens with H_max masked heads of size n = 8 (h heads active),
W_O, and a GELU feed-forward block of width N read out to a scalar. Adam with cosine decay from 3e-3,
fresh batches of 256 (``paperlib.models.training.train``), NMSE on 4096 fresh sequences. All (h, seed) runs of
one (N, T) are one vmapped, compiled program.

Usage::

    python tools/outside_runs/attention_heads_paper_task.py --steps 1500 --lens 8,32 --widths 32,128,512
    python tools/outside_runs/attention_heads_paper_task.py --steps 6000 --lens 8,16,32 --widths 32
    python tools/outside_runs/attention_heads_paper_task.py --steps 6000 --lens 8,32 --widths 256
    python tools/outside_runs/attention_heads_paper_task.py --steps 24000 --lens 8,16,32,64 --widths 32
    python tools/outside_runs/attention_heads_paper_task.py --steps 24000 --lens 8,32 --widths 256

The chapter quotes the smallest NMSE over the seeds per h (as the paper does) and the single seeds.
Runtimes on two cores: 15 s (T = 8, 1500 steps) to about 5 minutes (T = 32, 6000 steps) per (N, T); at 24000
steps, 2 to 13 minutes per (N, T) on the faster machine of 2026-12-02 (book/status.md).
"""

from __future__ import annotations

import argparse
import math
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

from paperlib.models.training import train

TOKEN_DIM, ENCODER_WIDTH, D_MODEL, D_HEAD = 4, 64, 32, 8


def projections(num_retrievals: int):
    """(D, 4) orthonormal rows a_i, fixed by NumPy seed 0 (the task, not the training seed)."""
    q = np.linalg.qr(np.random.default_rng(0).standard_normal((TOKEN_DIM, TOKEN_DIM)))[0]
    return jnp.asarray(q[:, :num_retrievals].T)


def sample(key, a, batch: int, seq_len: int):
    """Sequences x (batch, T, 4) and targets y = sum_i max_t a_i . x_t, shape (batch,)."""
    x = jax.random.normal(key, (batch, seq_len, TOKEN_DIM))
    return x, jnp.sum(jnp.max(jnp.einsum("btx,dx->btd", x, a), axis=1), axis=-1)


def init(key, max_heads: int, width: int):
    """Parameters with 1/sqrt(fan-in) normal weights, zero biases."""
    k = jax.random.split(key, 9)

    def normal(kk, shape, fan_in):
        return jax.random.normal(kk, shape) / math.sqrt(fan_in)

    return dict(
        w1=normal(k[0], (TOKEN_DIM, ENCODER_WIDTH), TOKEN_DIM), b1=jnp.zeros(ENCODER_WIDTH),
        w2=normal(k[1], (ENCODER_WIDTH, D_MODEL), ENCODER_WIDTH), b2=jnp.zeros(D_MODEL),
        cls=jax.random.normal(k[2], (D_MODEL,)),
        wq=normal(k[3], (max_heads, D_MODEL, D_HEAD), D_MODEL),
        wk=normal(k[4], (max_heads, D_MODEL, D_HEAD), D_MODEL),
        wv=normal(k[5], (max_heads, D_MODEL, D_HEAD), D_MODEL),
        wo=normal(k[6], (max_heads * D_HEAD, D_MODEL), max_heads * D_HEAD),
        f1=normal(k[7], (D_MODEL, width), D_MODEL), fb1=jnp.zeros(width),
        f2=normal(k[8], (width,), width), fb2=jnp.zeros(()),
    )


def forward(p, x, mask):
    """Scalar predictions, shape (batch,); `mask` (H_max,) switches heads off."""
    e = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]                       # (B, T, E)
    q = jnp.einsum("e,hed->hd", p["cls"], p["wq"])
    k = jnp.einsum("bte,hed->bhtd", e, p["wk"])
    v = jnp.einsum("bte,hed->bhtd", e, p["wv"])
    w = jax.nn.softmax(jnp.einsum("hd,bhtd->bht", q, k) / math.sqrt(D_HEAD), axis=-1)
    heads = jnp.einsum("bht,bhtd->bhd", w, v) * mask[None, :, None]
    z = p["cls"] + heads.reshape(x.shape[0], -1) @ p["wo"]
    return jax.nn.gelu(z @ p["f1"] + p["fb1"]) @ p["f2"] + p["fb2"]


def train_and_test(key, mask, *, a, seq_len, width, steps, batch=256, lr=3e-3, n_test=4096):
    """Train one masked model on fresh batches; return its test NMSE."""
    k_init, k_train, k_test = jax.random.split(key, 3)
    params = init(k_init, mask.shape[0], width)
    opt = optax.adam(optax.cosine_decay_schedule(lr, steps))

    def loss_fn(p, k):
        x, y = sample(k, a, batch, seq_len)
        return jnp.mean((forward(p, x, mask) - y) ** 2)

    params = train(loss_fn, params, opt, steps=steps, key=k_train).params
    x, y = sample(k_test, a, n_test, seq_len)
    return jnp.mean((forward(params, x, mask) - y) ** 2) / jnp.var(y)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--retrievals", type=int, default=2, help="D")
    ap.add_argument("--max-heads", type=int, default=3, help="h runs over 1..H_max")
    ap.add_argument("--lens", default="8,32", help="sequence lengths T, comma-separated")
    ap.add_argument("--widths", default="32", help="feed-forward widths N, comma-separated")
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    a = projections(args.retrievals)
    hmax = args.max_heads
    masks = jnp.asarray([[1.0] * h + [0.0] * (hmax - h) for h in range(1, hmax + 1) for _ in range(args.seeds)])
    for width in (int(v) for v in args.widths.split(",")):
        for seq_len in (int(v) for v in args.lens.split(",")):
            t0 = time.time()
            keys = jax.random.split(jax.random.PRNGKey(seq_len * 1000 + width), len(masks))
            run = jax.jit(jax.vmap(lambda k, m: train_and_test(k, m, a=a, seq_len=seq_len, width=width,
                                                               steps=args.steps)))
            nmse = np.asarray(run(keys, masks)).reshape(hmax, args.seeds)
            cells = "  ".join(f"h={h + 1}: min {row.min():.3g} ({', '.join(f'{v:.3g}' for v in row)})"
                              for h, row in enumerate(nmse))
            print(f"D={args.retrievals} N={width} T={seq_len} steps={args.steps}: {cells} [{time.time() - t0:.0f} s]",
                  flush=True)


if __name__ == "__main__":
    main()
