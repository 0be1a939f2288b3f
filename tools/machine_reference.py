"""A fixed reference workload, timed beside every chapter run so that runtimes from different machines compare.

The "2 CPU cores" of two machines are not the same: the book's whole execution recorded 688 s on one
such machine and about 300 s on another a day later, with unchanged code. ``tools/regenerate.py``
therefore times this workload in a fresh interpreter just before it executes a chapter and stores the
seconds beside the chapter's own (``run.reference_seconds`` in the notebook metadata); the status page
shows both. A chapter whose runtime grew while its reference did not got slower; one whose reference
grew with it ran on a slower machine.

The workload mixes what the chapters spend their time on (no chapter code is imported, so it never
changes when a chapter does):

* JAX: compile and run a ``lax.scan`` of 2000 full-batch gradient steps of a 2-64-64-1 tanh network
  on 512 points (float32), the shape of most training loops in the book;
* NumPy/LAPACK: eigendecomposition of a 600 x 600 symmetric matrix, three times;
* Python: a pure-Python loop of 300 000 floating-point updates (ledgers, samplers, tree walks).

Usage::

    python tools/machine_reference.py      # prints the seconds of one run in this interpreter
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def vector_isa() -> str | None:
    """``"AVX-512"``, ``"AVX2"`` or ``None``: the widest x86 vector instruction set NumPy dispatches to here.

    Several chapters print slightly different numbers on AVX-512 processors than on the machines whose
    outputs CI reproduces (book/status.md); ``tools/regenerate.py`` and ``conftest.py`` say so.
    ``None`` also when NumPy's private feature table is missing.
    """
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        return None
    return "AVX-512" if features.get("AVX512F") else "AVX2" if features.get("AVX2") else None


def workload() -> float:
    """Run the reference workload once in this interpreter; return its wall time in seconds."""
    t0 = time.perf_counter()
    import jax
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((512, 2)), jnp.float32)
    y = jnp.sin(3 * x[:, :1]) * jnp.cos(2 * x[:, 1:])
    sizes = [(2, 64), (64, 64), (64, 1)]
    params = [(jnp.asarray(rng.standard_normal(s) / np.sqrt(s[0]), jnp.float32), jnp.zeros(s[1], jnp.float32))
              for s in sizes]

    def loss(p):
        h = x
        for w, b in p[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = p[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    @jax.jit
    def train(p):
        def step(p, _):
            g = jax.grad(loss)(p)
            return jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g), None

        p, _ = jax.lax.scan(step, p, None, length=2000)
        return loss(p)

    float(train(params))
    a = rng.standard_normal((600, 600))
    for _ in range(3):
        np.linalg.eigh(a + a.T)
    s = 0.0
    for i in range(300_000):
        s = 0.5 * s + (i % 7) * 1e-3
    return time.perf_counter() - t0


def reference_seconds(repeats: int = 2) -> float:
    """The fastest of ``repeats`` runs of :func:`workload`, each in a fresh interpreter (imports included).

    Returns seconds rounded to 0.01 (about 1.3 s on the machine of 2026-12-02; single runs scatter by
    about 10-20 %, hence the minimum).
    """
    times = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, __file__], capture_output=True, text=True, check=True,
                             env={**os.environ, "JAX_PLATFORMS": "cpu"})
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return round(min(times), 2)


if __name__ == "__main__":
    print(f"{workload():.3f}")
