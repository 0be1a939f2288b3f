"""Input checks shared by the public functions of :mod:`paperlib`.

Every check raises :class:`ValueError` whose message names the offending argument, says what was
expected and shows what was received, so a reader who passes a wrong shape, a negative size or a NaN
gets told exactly what to fix instead of a silent wrong answer.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Sequence

import numpy as np

__all__ = [
    "as_array",
    "check_int",
    "check_real",
    "check_probability",
]


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """Return ``value`` as ``int`` after checking it is an integer within ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
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

    ``strict_min``/``strict_max`` make the corresponding bound exclusive.
    """
    if isinstance(value, bool) or not isinstance(value, (Real, np.floating, np.integer)):
        try:
            value = float(np.asarray(value).item())
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real number, got {value!r}") from None
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


def as_array(
    name: str,
    value,
    *,
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    dtype=float,
    finite: bool = True,
    min_size: int = 0,
) -> np.ndarray:
    """Convert ``value`` to a numpy array and check its rank, shape and finiteness.

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
        Target dtype (``None`` keeps the input's).
    finite : bool, default True
        Reject NaN and infinite entries.
    min_size : int, default 0
        Minimum number of elements.

    Raises
    ------
    ValueError
        If the conversion fails or any check does not hold.
    """
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be array-like of numbers: {exc}") from None
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
        raise ValueError(f"{name} must have at least {min_size} element(s), got {arr.size}")
    if finite and np.issubdtype(arr.dtype, np.number) and not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} must be finite, but {bad} entr{'y is' if bad == 1 else 'ies are'} NaN or inf")
    return arr
