"""One seed per chapter, overridable from the environment.

Every chapter draws all of its randomness from a single integer seed: ``0`` by default, or the value
of the environment variable ``BOOK_SEED`` when it is set. Running a chapter twice with the same seed
prints the same numbers; running it with another seed (``BOOK_SEED=1``) is how a reader checks that a
claim does not hinge on one lucky draw.
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["SEED_ENV_VAR", "chapter_seed", "numpy_rng", "jax_key"]

_PROBE_EXEMPTIONS = {
    "numpy_rng": {
        "seed": {
            "int_past_int32": "numpy's SeedSequence takes any non-negative int: a seed past 2**31 is a valid seed",
            "int_past_float": "numpy's SeedSequence takes any non-negative int (10**400 is a valid seed; "
                              "-10**400 is refused as negative)",
        },
    },
    "jax_key": {
        "seed": {"int_past_int32": "seeds up to 2**32 - 1 are valid uint32 seeds; from 2**32 on they are refused"},
    },
    "chapter_seed": {
        "default": {
            "int_past_int32": "returns the seed unchanged: numpy takes any non-negative int, jax_key refuses >= 2**32",
            "int_past_float": "returns the seed unchanged: numpy takes any non-negative int, jax_key refuses >= 2**32",
        },
    },
}

SEED_ENV_VAR = "BOOK_SEED"


def chapter_seed(default: int = 0) -> int:
    """Return the chapter's seed: ``$BOOK_SEED`` if set, else ``default``.

    Parameters
    ----------
    default : int, default 0
        Seed used when ``BOOK_SEED`` is unset or empty. Must be a non-negative integer.

    Returns
    -------
    int
        A non-negative integer seed.

    Raises
    ------
    ValueError
        If ``default`` is negative or not an integer, or ``BOOK_SEED`` is not a non-negative integer.

    Examples
    --------
    >>> import os; os.environ.pop("BOOK_SEED", None) and None
    >>> chapter_seed()
    0
    """
    if isinstance(default, bool) or not isinstance(default, (int, np.integer)) or default < 0:
        raise ValueError(f"default must be a non-negative integer, got {default!r}")
    raw = os.environ.get(SEED_ENV_VAR, "").strip()
    if raw == "":
        return int(default)
    try:
        seed = int(raw)
    except ValueError:
        raise ValueError(
            f"environment variable {SEED_ENV_VAR} must be a non-negative integer, got {raw!r}"
        ) from None
    if seed < 0:
        raise ValueError(f"environment variable {SEED_ENV_VAR} must be non-negative, got {seed}")
    return seed


def numpy_rng(seed: int) -> np.random.Generator:
    """Return ``numpy.random.default_rng(seed)`` after checking the seed is a non-negative integer.

    Raises
    ------
    ValueError
        If ``seed`` is not a non-negative integer.

    Examples
    --------
    >>> round(float(numpy_rng(0).normal()), 4)
    0.1257
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(int(seed))


def jax_key(seed: int):
    """Return a typed JAX PRNG key ``jax.random.key(seed)`` after checking the seed.

    JAX is imported lazily so that numpy-only chapters do not pay for it.

    Raises
    ------
    ValueError
        If ``seed`` is not a non-negative integer, or is ``2**32`` or more: without x64, JAX keeps only
        its low 32 bits (``jax.random.key(2**40)`` equals ``jax.random.key(0)``), and past ``2**63`` it
        raises an OverflowError.

    Examples
    --------
    >>> jax_key(0).shape
    ()
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if seed > 2**32 - 1:
        raise ValueError(f"seed must be below 2**32 (JAX keeps only the low 32 bits of a seed without x64), "
                         f"got {seed if seed < 2**96 else f'an integer of {int(seed).bit_length()} bits'}")
    import jax

    return jax.random.key(int(seed))
