"""Input checks shared by the public functions of :mod:`paperlib`.

Every check raises :class:`ValueError` whose message names the offending argument, says what was
expected and shows what was received, so a reader who passes a wrong shape, a negative size, a NaN,
a bool or a string where a number belongs, a complex number, or a value that a silent cast would
change gets told exactly what to fix instead of a silent wrong answer.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Sequence

import numpy as np

__all__ = [
    "as_array",
    "is_traced",
    "check_bool",
    "check_int",
    "check_real",
    "check_probability",
    "check_option",
]

_NUMERIC_KINDS = {"i": "integer", "u": "integer", "f": "real", "b": "boolean"}


def _scalar(value):
    """Unwrap 0-d numpy/JAX arrays to a numpy scalar; leave everything else alone."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and getattr(value, "shape", None) == ():
        try:
            return np.asarray(value)[()]
        except Exception:  # noqa: BLE001 - not convertible: the caller reports the type
            return value
    return value


def is_traced(value) -> bool:
    """True when ``value`` is a JAX tracer (inside ``jit``/``vmap``/``grad``): its values cannot be checked."""
    try:
        import jax
    except ImportError:  # pragma: no cover
        return False
    return isinstance(value, jax.core.Tracer)


def check_bool(name: str, value) -> bool:
    """Return ``value`` as ``bool`` after checking it is a Python or numpy boolean."""
    value = _scalar(value)
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r} of type {type(value).__name__}")
    return bool(value)


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as ``int`` after checking it is an integer within ``[minimum, maximum]``.

    Bools, strings and floats (even integral ones such as ``3.0``) are rejected: a size or a count is
    an integer, and a silent cast of ``2.5`` would change it.
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def check_real(
    name: str,
    value,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
    strict_max: bool = False,
) -> float:
    """Return ``value`` as ``float`` after checking it is a finite real number in the given range.

    Accepts Python and numpy integers and floats and 0-d real arrays; rejects bools, strings,
    complex numbers, NaN and infinities. ``strict_min``/``strict_max`` make a bound exclusive.
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if minimum is not None and (value < minimum or (strict_min and value == minimum)):
        op = ">" if strict_min else ">="
        raise ValueError(f"{name} must be {op} {minimum}, got {value}")
    if maximum is not None and (value > maximum or (strict_max and value == maximum)):
        op = "<" if strict_max else "<="
        raise ValueError(f"{name} must be {op} {maximum}, got {value}")
    return value


def check_probability(name: str, value, *, open_interval: bool = False) -> float:
    """Return ``value`` as ``float`` after checking it lies in [0, 1] (or (0, 1) if ``open_interval``)."""
    return check_real(
        name, value, minimum=0.0, maximum=1.0, strict_min=open_interval, strict_max=open_interval
    )


def check_option(name: str, value, options: Sequence[str]) -> str:
    """Return ``value`` after checking it is one of the strings in ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}; got {value!r}")
    return value


def as_array(
    name: str,
    value,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    dtype=float,
    finite: bool = True,
    min_size: int = 1,
    allow_bool: bool = False,
) -> np.ndarray:
    """Convert ``value`` to a numpy array and check its type, rank, shape, size and finiteness.

    Parameters
    ----------
    name : str
        Argument name used in error messages.
    value : array_like
        The input.
    ndim : int or sequence of int, optional
        Allowed number(s) of dimensions.
    shape : sequence of (int or None), optional
        Expected shape; ``None`` entries match any length.
    dtype : numpy dtype, default float
        Target dtype (``None`` keeps the input's). The input must be numeric (or boolean where the
        target is boolean); strings, objects and complex numbers are rejected, and so are booleans
        where numbers are expected and values that the cast would change (``2.5`` to an integer
        dtype, ``0.5`` to a boolean one).
    finite : bool, default True
        Reject NaN and infinite entries.
    min_size : int, default 1
        Minimum number of elements (an empty array is rejected unless ``min_size=0``).
    allow_bool : bool, default False
        With ``dtype=None``, accept a boolean input (a mask); otherwise booleans are rejected where
        numbers are expected.

    Raises
    ------
    ValueError
        If the conversion fails or any check does not hold.
    """
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be array-like of numbers: {exc}") from None
    target = None if dtype is None else np.dtype(dtype)
    kind = raw.dtype.kind
    if kind == "c":
        raise ValueError(f"{name} must be real, got complex values (dtype {raw.dtype})")
    if kind not in _NUMERIC_KINDS:
        raise ValueError(f"{name} must be array-like of numbers, got dtype {raw.dtype}")
    if kind == "b" and (target.kind != "b" if target is not None else not allow_bool):
        raise ValueError(f"{name} must hold numbers, got booleans (cast them explicitly if intended)")
    if target is not None and target.kind in "iub" and kind == "f":
        if not np.all(np.isfinite(raw)):
            raise ValueError(f"{name} must hold finite {_NUMERIC_KINDS[target.kind]} values, got NaN or inf")
        if target.kind == "b":
            if not np.all((raw == 0) | (raw == 1)):
                raise ValueError(f"{name} must be boolean (0/1), got values such as {raw[(raw != 0) & (raw != 1)].flat[0]}")
        elif not np.all(raw == np.round(raw)):
            bad = raw[raw != np.round(raw)].flat[0]
            raise ValueError(f"{name} must hold integers, got {bad} (a cast would change it)")
    if target is not None and target.kind in "iu" and kind in "iu" and raw.size:
        info = np.iinfo(target)
        if raw.min() < info.min or raw.max() > info.max:
            raise ValueError(f"{name} has values outside the range of {target} ({raw.min()}..{raw.max()})")
    arr = raw if target is None else raw.astype(target, copy=False)
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            raise ValueError(
                f"{name} must have {' or '.join(map(str, allowed))} dimension(s), "
                f"got shape {arr.shape}"
            )
    if shape is not None:
        if arr.ndim != len(shape) or any(
            s is not None and s != a for s, a in zip(shape, arr.shape)
        ):
            want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} element(s), got {arr.size} (shape {arr.shape})")
    if finite and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} must be finite, but {bad} entr{'y is' if bad == 1 else 'ies are'} NaN or inf")
    return arr
