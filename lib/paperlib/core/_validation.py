"""Input checks shared by the public functions of :mod:`paperlib`.

Every check raises :class:`ValueError` whose message names the offending argument, says what was
expected and shows what was received, so a reader who passes a wrong shape, a negative size, a NaN,
a bool or a string where a number belongs, a complex number, or a value that a silent cast would
change gets told exactly what to fix instead of a silent wrong answer.

Semantic checks (issue 28):

* **float32.** A module whose computations run in JAX's float32 declares ``_JAX_FLOAT32 = True``;
  :func:`check_real` and :func:`as_array` called from it (anywhere down its call stack) then also refuse finite values beyond
  float32's range (``|x| > 3.4028235e38``), which the cast would turn into inf. ``float32=False`` at a
  call site opts an argument that stays in float64 NumPy out; ``float32=True`` opts one in anywhere.
* **Huge integers.** :func:`check_int` refuses ints past ``2**31 - 1`` (``INT32_MAX``) unless the call
  site raises ``limit``: a size or count that large would reach ``jit`` as an int32 overflow or
  allocate without end. :func:`check_real` refuses ints past float range (no ``OverflowError``).
* **Memory.** :func:`check_memory` refuses an allocation whose estimate exceeds :func:`memory_limit`
  (8 GiB, or ``$PAPERLIB_MAX_BYTES``), naming the argument, the estimate and the limit.
* **Random state.** :func:`check_rng` and :func:`check_key` refuse seeds, ``RandomState`` objects and
  other stand-ins for a ``numpy.random.Generator`` or a JAX PRNG key.
* **Text.** :func:`check_single_line` refuses every character ``str.splitlines`` splits on.
"""

from __future__ import annotations

import math
import os
import sys
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
    "check_memory",
    "memory_limit",
    "check_rng",
    "check_key",
    "check_single_line",
    "check_float32",
    "FLOAT32_MAX",
    "INT32_MAX",
]

FLOAT32_MAX = float(np.finfo(np.float32).max)
INT32_MAX = 2**31 - 1
DEFAULT_MAX_BYTES = 8 * 2**30
MAX_BYTES_ENV_VAR = "PAPERLIB_MAX_BYTES"
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _caller_float32() -> bool:
    """True when a ``paperlib`` module up the call stack declares ``_JAX_FLOAT32 = True``.

    The whole stack, not only the direct caller, so that a JAX module's arguments are checked when it
    validates them through another module's helper (``collaborative_learning`` through
    ``multi_agent_systems``).
    """
    frame = sys._getframe(1)
    while frame is not None:
        g = frame.f_globals
        if g.get("_JAX_FLOAT32", False) and str(g.get("__name__", "")).startswith("paperlib."):
            return True
        frame = frame.f_back
    return False


def check_float32(name: str, value, *, all_finite: bool = False) -> None:
    """Raise ValueError if a finite ``value`` (scalar or array) lies beyond float32's range.

    JAX runs in float32 here, where such a value becomes inf and the result NaN. ``all_finite`` says
    the array is known to be finite (no temporary mask is then made).
    """
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f" or value.size == 0 or value.dtype.itemsize <= 4:
            return
        if all_finite:
            big = np.array([value.max(), -value.min()])
        else:
            big = np.abs(value[np.isfinite(value)])
        if big.size and float(big.max()) > FLOAT32_MAX:
            raise ValueError(
                f"{name} must lie within float32's range (|x| <= {FLOAT32_MAX:.7g}): this code runs in "
                f"JAX float32, where {float(big.max()):.4g} would become inf"
            )
    elif abs(value) > FLOAT32_MAX:
        raise ValueError(
            f"{name} must lie within float32's range (|x| <= {FLOAT32_MAX:.7g}): this code runs in "
            f"JAX float32, where {value:.4g} would become inf"
        )

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


def check_int(name: str, value, *, minimum: int | None = None, maximum: int | None = None,
              limit: int | None = INT32_MAX) -> int:
    """Return ``value`` as ``int`` after checking it is an integer within ``[minimum, maximum]``.

    Bools, strings and floats (even integral ones such as ``3.0``) are rejected: a size or a count is
    an integer, and a silent cast of ``2.5`` would change it. ``|value|`` must also not exceed
    ``limit`` (``2**31 - 1`` by default; ``None`` or an explicit larger ``maximum`` lifts it): past
    it a size or a count would overflow int32 inside ``jit`` or ask for an impossible allocation.
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
    value = int(value)
    if limit is not None and maximum is not None and maximum > limit:
        limit = None  # an explicit wider maximum lifts the int32 limit
    if limit is not None and abs(value) > limit:
        what = " (2**31 - 1: an int32)" if limit == INT32_MAX else ""
        raise ValueError(f"{name} must be at most {limit} in magnitude{what}, got {_short_int(value)}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return value


def _short_int(value: int) -> str:
    """``value`` in digits when short, else its size in bits (``str`` of a huge int may itself raise)."""
    return str(value) if value.bit_length() <= 96 else f"an integer of {value.bit_length()} bits"


def check_real(
    name: str,
    value,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict_min: bool = False,
    strict_max: bool = False,
    float32: bool | None = None,
) -> float:
    """Return ``value`` as ``float`` after checking it is a finite real number in the given range.

    Accepts Python and numpy integers and floats and 0-d real arrays; rejects bools, strings,
    complex numbers, NaN and infinities, and ints past float range. ``strict_min``/``strict_max`` make
    a bound exclusive. ``float32`` (default: the calling module's ``_JAX_FLOAT32``) also rejects
    values beyond float32's range.
    """
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating, np.integer)):
        raise ValueError(f"{name} must be a real number, got {value!r} of type {type(value).__name__}")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite real number, got an integer too large for a float: "
                         f"{_short_int(int(value))}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if float32 is None:
        float32 = _caller_float32()
    if float32:
        check_float32(name, value)
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
        name, value, minimum=0.0, maximum=1.0, strict_min=open_interval, strict_max=open_interval,
        float32=False,
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
    float32: bool | None = None,
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
    float32 : bool, optional
        Also reject finite entries beyond float32's range (``|x| > 3.4e38``). Default: the calling
        module's ``_JAX_FLOAT32`` (the module runs JAX in float32).

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
    if arr.dtype.kind == "f" and (_caller_float32() if float32 is None else float32):
        check_float32(name, arr, all_finite=finite)
    return arr


def memory_limit() -> int:
    """Bytes one allocation may take: ``$PAPERLIB_MAX_BYTES`` if set, else 8 GiB."""
    raw = os.environ.get(MAX_BYTES_ENV_VAR, "").strip()
    if not raw:
        return DEFAULT_MAX_BYTES
    try:
        limit = int(float(raw))
    except ValueError:
        raise ValueError(f"environment variable {MAX_BYTES_ENV_VAR} must be a number of bytes, got {raw!r}") from None
    if limit <= 0:
        raise ValueError(f"environment variable {MAX_BYTES_ENV_VAR} must be positive, got {raw!r}")
    return limit


def _bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


def check_memory(name: str, nbytes, *, what: str = "") -> None:
    """Raise ValueError naming ``name`` if an estimated allocation of ``nbytes`` exceeds :func:`memory_limit`.

    Call it before allocating, with an estimate computed in Python ints or floats (no overflow).
    ``what`` says what would be allocated.
    """
    limit = memory_limit()
    if nbytes > limit:
        thing = f" for {what}" if what else ""
        need = "more than 2**80 bytes" if nbytes == math.inf else f"about {_bytes(nbytes)}"
        raise ValueError(
            f"{name} is too large: it needs {need}{thing}, over the limit of "
            f"{_bytes(limit)} (set ${MAX_BYTES_ENV_VAR} to raise it)"
        )


def check_rng(name: str, rng) -> np.random.Generator:
    """Return ``rng`` after checking it is a ``numpy.random.Generator`` (not a seed or a RandomState)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{name} must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)), "
            f"got {type(rng).__name__}"
        )
    return rng


def check_key(name: str, key):
    """Return ``key`` after checking it is a JAX PRNG key: a typed key, or raw uint32 key data (last axis 2 or 4)."""
    try:
        import jax
    except ImportError:  # pragma: no cover
        raise ValueError(f"{name} must be a JAX PRNG key, but JAX is not installed") from None
    if is_traced(key):
        return key
    dtype = getattr(key, "dtype", None)
    ok = dtype is not None and (
        jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
        or (np.dtype(dtype) == np.uint32 and len(getattr(key, "shape", ())) >= 1 and key.shape[-1] in (2, 4))
    )
    if not ok:
        raise ValueError(
            f"{name} must be a JAX PRNG key (jax.random.key(seed) or jax.random.PRNGKey(seed)), got "
            f"{type(key).__name__}" + (f" of dtype {dtype} and shape {getattr(key, 'shape', None)}" if dtype is not None else "")
        )
    return key


def check_single_line(name: str, text: str) -> str:
    """Return ``text`` after checking it holds no line break ``str.splitlines`` splits on."""
    bad = [c for c in LINE_BREAKS if c in text]
    if bad:
        raise ValueError(f"{name} must be a single line of text, got the line break {bad[0]!r} in {text!r}")
    return text
