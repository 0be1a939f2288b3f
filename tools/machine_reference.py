"""A fixed reference workload, timed beside every chapter run so that runtimes from different machines compare.

The "2 CPU cores" of two machines are not the same: the book's whole execution recorded 688 s on one
such machine type and about 300 s on another (2026-12-02), with unchanged code. ``tools/regenerate.py``
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

    Recorded in each run's machine string (``tools/regenerate.py``) and printed in the test header: the
    chapters print slightly different numbers on AVX-512 processors than on others, which the portable
    output comparison allows (``tools/nbval_portable.py``). ``None`` also when NumPy's private feature
    table is missing (not x86).
    """
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        return None
    return "AVX-512" if features.get("AVX512F") else "AVX2" if features.get("AVX2") else None


#: Budgets of the book (DEVELOPERS' guide): a chapter, and the whole book run one chapter after another,
#: on a 2-core machine.
CHAPTER_BUDGET_S = 60.0
BOOK_BUDGET_S = 600.0
#: The reference workload's seconds on the slowest 2-core machine the book was measured on (an idle AMD EPYC
#: of family 25 with AVX2 and no AVX-512, measured idle). The budgets hold on such a machine when a chapter's seconds,
#: divided by the reference seconds timed beside it, stay below these units.
SLOW_REFERENCE_S = 2.28
CHAPTER_BUDGET_UNITS = round(CHAPTER_BUDGET_S / SLOW_REFERENCE_S, 1)  # 26.3
BOOK_BUDGET_UNITS = round(BOOK_BUDGET_S / SLOW_REFERENCE_S, 0)  # 263


def units(seconds: float, reference: float) -> float:
    """A run's time in units of the reference workload timed beside it (``seconds / reference``).

    Raises ``ValueError`` when either is not a positive finite number.
    """
    for name, v in (("seconds", seconds), ("reference", reference)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < float("inf"):
            raise ValueError(f"{name} must be a positive number of seconds, got {v!r}")
    return seconds / reference


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
