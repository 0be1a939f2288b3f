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

    Several chapters print different numbers on AVX-512 processors than on processors without
    it (book/status.md); ``tools/regenerate.py`` and ``conftest.py`` warn when this processor's class
    differs from the one the committed outputs were executed on (:func:`recorded_vector_isas`).
    ``None`` also when NumPy's private feature table is missing.
    """
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:
        return None
    return "AVX-512" if features.get("AVX512F") else "AVX2" if features.get("AVX2") else None


def recorded_vector_isas(machines) -> dict[str, int]:
    """Count the vector instruction sets named in recorded machine strings.

    ``machines``: iterable of strings as ``tools/regenerate.py`` records them, e.g.
    ``"Linux x86_64, 2 CPU cores (AMD EPYC, family 26, AVX-512)"``. Returns ``{isa: count}`` with
    ``"AVX-512"``, ``"AVX2"`` or ``"not recorded"`` (older records, or a processor without either).
    Raises ``ValueError`` when an entry is not a string.
    """
    counts: dict[str, int] = {}
    for m in machines:
        if not isinstance(m, str):
            raise ValueError(f"machines: expected strings, got {type(m).__name__}")
        details = m.rpartition("(")[2]
        isa = next((x for x in ("AVX-512", "AVX2") if x in details.rstrip(")").split(", ")), "not recorded")
        counts[isa] = counts.get(isa, 0) + 1
    return counts


def isa_mismatch_note(machines) -> str | None:
    """A warning when this processor's vector instruction set is not the one the committed runs were made on.

    Strict nbval compares printed numbers exactly, and on 2026-12-02 nine chapters printed
    different numbers on an AVX-512 processor than on one without (NumPy's AVX-512 paths, XLA's code for
    the processor). ``machines``: the recorded machine strings of the committed runs. Returns ``None``
    when this processor's class matches every run that recorded one.
    """
    here = vector_isa() or "not recorded"
    counts = recorded_vector_isas(machines)
    known = {k: v for k, v in counts.items() if k != "not recorded"}
    if not known or set(known) == {here}:
        return None
    recorded = ", ".join(f"{v} on {k}" for k, v in sorted(known.items(), key=lambda kv: -kv[1]))
    return (f"this processor's widest vector instruction set is {here}, but the committed chapter runs were "
            f"executed {recorded}. Several chapters print different numbers on AVX-512 processors "
            f"than on others, so strict nbval may fail here although every claim check holds (book/status.md); "
            f"commit regenerated outputs only on the processor class CI uses.")


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
