#!/usr/bin/env python
"""Wall time of ``paperlib.transformers.fast_attention`` against the fastest exact attention we have, side by side.

Usage::

    python tools/bench_fast_attention.py                 # n = 2^12, 2^14, 2^16; writes the chapter's table
    python tools/bench_fast_attention.py --sizes 12 14 --no-write

For every size it first races the exact attention implementations on one input (d = 1), in float64
and in float32:

* ``paperlib.models.attention.chunked_softmax_attention``: row-max shifted, ``jax.lax.map`` over blocks of
  1024 queries, compiled by ``jax.jit`` into one XLA loop;
* the same algorithm written by hand with blocks of 256 and of 4096 queries;
* ``jax.nn.dot_product_attention``, which materialises the ``n x n`` scores (only for n <= 2^13).

Every implementation is compiled ahead of time, so compilation is never timed. Then, for every case
and size, it draws one input and times, in the same process and on the same input, the fast
algorithm (``build_tree`` + ``fast_attention``, numba, compiled before timing, float64) and the
fastest exact implementation of the race, in float64 (the precision of the fast algorithm) and in
float32 (for reference). Each time is the best of ``--repeats`` runs; beside the wall time it records
the CPU time of that run (all threads of the process), which a busy machine inflates much less.

It prints the race and the ratio table and, unless ``--no-write``, writes both next to the chapter
(``book/chapters/data/fast_attention_bench.csv`` and ``..._peers.csv``) with the date, the machine,
the load average before and after the run and the package versions, which the chapter shows. Wall
times depend on the machine and on its load: run it on an idle machine (check ``uptime``).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from paperlib.models.attention import chunked_softmax_attention  # noqa: E402
from paperlib.transformers.fast_attention import attention_inputs, build_tree, error_bound, fast_attention  # noqa: E402

OUT = ROOT / "book" / "chapters" / "data" / "fast_attention_bench.csv"
PEERS_OUT = OUT.with_name("fast_attention_bench_peers.csv")
W, P, EPS, LEAF = 8.0, 24, 1e-6, 64
C_STAR = (W**2 / math.comb(P + 2, 2)) ** 0.25          # the hardest constant of the d = 2 families
CASES = {                                             # name: (d, layout, c, gamma), B = c n^gamma
    "d=1, B=32": (1, "uniform", 32.0, 0.0),
    "d=1, B=1000": (1, "uniform", 1000.0, 0.0),
    "d=2, B=c* n^1/4, uniform": (2, "uniform", C_STAR, 0.25),
    "d=2, B=c* n^1/4, axis queries (hardest)": (2, "axis", C_STAR, 0.25),
    "d=2, B=c* n^1/4, mixture keys": (2, "mixture", C_STAR, 0.25),
}
DTYPES = {"f64": np.float64, "f32": np.float32}


def _blocked(block):
    """Exact attention written by hand: row-max shifted softmax over blocks of ``block`` queries."""

    @jax.jit
    def f(q, k, v):
        def one(qc):
            s = qc @ k.T
            e = jnp.exp(s - s.max(1, keepdims=True))
            return (e @ v) / e.sum(1, keepdims=True)

        pad = (-q.shape[0]) % block
        qp = jnp.pad(q, ((0, pad), (0, 0))).reshape(-1, block, q.shape[1])
        return jax.lax.map(one, qp).reshape(-1, v.shape[1])[: q.shape[0]]

    return f


def _dpa(q, k, v):
    """jax.nn.dot_product_attention needs value width = key width: pad V with zeros."""
    d = q.shape[1]
    vp = jnp.pad(v, ((0, 0), (0, d - v.shape[1])))
    return jax.nn.dot_product_attention(q[None, :, None], k[None, :, None], vp[None, :, None], scale=1.0)[0, :, 0, :1]


def exact_implementations(n):
    impls = {"paperlib chunked_softmax_attention (1024 queries)": jax.jit(partial(chunked_softmax_attention, scale=1.0)),
             "hand-written blocks of 256 queries": _blocked(256),
             "hand-written blocks of 4096 queries": _blocked(4096)}
    if n <= 2**13:
        impls["jax.nn.dot_product_attention (n x n scores)"] = jax.jit(_dpa)
    return impls


def best_of(fn, repeats):
    """Best wall time of ``repeats`` calls, the CPU time (all threads) of that call, and the output."""
    best, out = (math.inf, math.inf), None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best = min(best, (time.perf_counter() - t0, time.process_time() - c0))
    return best, out


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} cores, {platform.system()}"


def time_exact(fn, Q, K, V, dtype, repeats):
    args = [jax.device_put(a.astype(dtype)) for a in (Q, K, V)]
    compiled = fn.lower(*args).compile()
    return best_of(lambda: np.asarray(compiled(*args)), repeats)


def race(n, repeats, seed=0):
    """Time every exact implementation on one d = 1 input of size n; return the table and the winners."""
    Q, K, V = attention_inputs(n, 1, 32.0, rng=np.random.default_rng([seed, n]))
    rows = []
    for name, fn in exact_implementations(n).items():
        for label, dtype in DTYPES.items():
            (t, cpu), _ = time_exact(fn, Q, K, V, dtype, repeats)
            rows.append(dict(implementation=name, dtype=label, n=n, seconds=t, cpu_seconds=cpu, pairs_per_s=n * n / t))
            print(f"  exact {name:<50} {label} n={n:>6}: {t:7.3f} s  {n * n / t / 1e9:5.2f} G pairs/s", flush=True)
    table = pd.DataFrame(rows)
    winners = {label: table[table.dtype == label].sort_values("seconds").implementation.iloc[0] for label in DTYPES}
    return table, winners


def run(sizes, repeats, seed=0):
    rows, races = [], []
    for n in sizes:
        race_table, winners = race(n, repeats, seed)
        races.append(race_table)
        impls = exact_implementations(n)
        for name, (d, layout, c, gamma) in CASES.items():
            rng = np.random.default_rng([seed, n, d])
            Q, K, V = attention_inputs(n, d, c * n**gamma, layout=layout, rng=rng)
            fast = lambda: fast_attention(Q, build_tree(K, V, leaf=LEAF, p=P), eps=EPS, w=W)  # noqa: E731
            fast()                                                          # compile (numba cache)
            (t_fast, cpu_fast), out = best_of(fast, repeats)
            row = dict(case=name, d=d, n=n, fast_s=t_fast, fast_cpu_s=cpu_fast)
            for label, dtype in DTYPES.items():
                (t, cpu), ref = time_exact(impls[winners[label]], Q, K, V, dtype, repeats)
                row[f"exact_{label}_s"], row[f"speedup_{label}"] = t, t / t_fast
                row[f"exact_{label}_cpu_s"], row[f"cpu_speedup_{label}"] = cpu, cpu / cpu_fast
                row[f"exact_{label}_implementation"] = winners[label]
                if label == "f64":
                    row["max_error"] = float(np.abs(out - ref).max())
            rows.append(row)
            print(f"{name:<42} n={n:>6}  fast {t_fast:7.3f} s  exact f64 {row['exact_f64_s']:7.3f} s "
                  f"(x{row['speedup_f64']:5.1f})  f32 {row['exact_f32_s']:7.3f} s (x{row['speedup_f32']:5.1f})"
                  f"  max error {row['max_error']:.1e}  [CPU: fast {cpu_fast:.3f} s, exact f64 x{row['cpu_speedup_f64']:.1f}]",
                  flush=True)
    return pd.DataFrame(rows), pd.concat(races, ignore_index=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 14, 16], help="log2 of the sizes n")
    ap.add_argument("--repeats", type=int, default=2, help="best of this many timed runs")
    ap.add_argument("--no-write", action="store_true", help=f"do not write {OUT.relative_to(ROOT)}")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    started = _dt.datetime.now(_dt.timezone.utc)
    table, races = run([2**k for k in args.sizes], args.repeats)
    load1 = os.getloadavg()[0]
    meta = dict(date=started.strftime("%Y-%m-%d %H:%M UTC"), machine=machine(),
                load_before=round(load0, 2), load_after=round(load1, 2),
                versions=f"numba {numba.__version__}, jax {jax.__version__}, numpy {np.__version__}")
    print(f"\n{meta['date']}  {meta['machine']}  load average {load0:.2f} -> {load1:.2f}  ({meta['versions']})")
    print(f"error bound {error_bound(W, P, EPS):.2e}; worst max error {table.max_error.max():.1e}")
    big = table[table.n == table.n.max()]
    for d in (1, 2):
        worst = big[big.d == d].speedup_f64.min()
        print(f"n = {table.n.max()}: d = {d}, smallest speed-up over the fastest float64 exact attention: x{worst:.1f}")
    if not args.no_write:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        table.assign(**meta).to_csv(OUT, index=False, float_format="%.4g")
        races.assign(**meta).to_csv(PEERS_OUT, index=False, float_format="%.4g")
        print(f"wrote {OUT.relative_to(ROOT)} and {PEERS_OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
