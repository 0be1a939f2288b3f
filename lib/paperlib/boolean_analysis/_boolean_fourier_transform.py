"""Truth tables and their Fourier transform, for :mod:`paperlib.boolean_analysis.boolean_fourier`.

This private module holds the representation role: the cube {-1, 1}^n in truth-table order
(``all_inputs``), the degree of every coefficient index (``fourier_degrees``), the fast
Walsh-Hadamard transform (``walsh_hadamard``), the Fourier coefficients of a truth table
(``fourier_coefficients``) and their level weights (``level_weights``), with the size limit
``_MAX_N`` and the table-length check. The quantities computed from the level weights (noise
stability and sensitivity, influence, tail weight) and their Monte Carlo estimators stay in the
public module :mod:`paperlib.boolean_analysis.boolean_fourier`, which re-exports and documents
everything here; import it from there.
"""

from __future__ import annotations

import numpy as np

from ..core._validation import as_array, check_int

_MAX_N = 24  # 2**24 float64 = 128 MiB per table; larger is not "exact analysis at laptop scale"


def _num_vars_of_table(name: str, length: int) -> int:
    n = int(length).bit_length() - 1
    if length < 1 or (1 << n) != length:
        raise ValueError(f"{name} must have a last axis of length 2**n, got length {length}")
    return n


def all_inputs(n: int) -> np.ndarray:
    """All ``2**n`` points of the cube {-1, 1}^n in truth-table order.

    Parameters
    ----------
    n : int
        Number of input bits, ``0 <= n <= 24``.

    Returns
    -------
    ndarray of float32, shape (2**n, n)
        Row ``i`` is ``x^(i)`` with ``x^(i)_j = 1 - 2 * bit_j(i)``: bit 0 of ``i`` is coordinate 0.

    Raises
    ------
    ValueError
        If ``n`` is not an integer in ``[0, 24]``.

    Examples
    --------
    >>> all_inputs(2).tolist()
    [[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]]
    """
    n = check_int("n", n, minimum=0, maximum=_MAX_N)
    idx = np.arange(1 << n, dtype=np.int64)[:, None]
    bits = (idx >> np.arange(n, dtype=np.int64)[None, :]) & 1
    return (1 - 2 * bits).astype(np.float32)


def fourier_degrees(n: int) -> np.ndarray:
    """Degree ``|S| = popcount(S)`` of every Fourier coefficient index ``S`` in ``0 .. 2**n - 1``.

    Parameters
    ----------
    n : int
        Number of input bits, ``0 <= n <= 24``.

    Returns
    -------
    ndarray of int64, shape (2**n,)

    Raises
    ------
    ValueError
        If ``n`` is not an integer in ``[0, 24]``.

    Examples
    --------
    >>> fourier_degrees(3).tolist()
    [0, 1, 1, 2, 1, 2, 2, 3]
    """
    n = check_int("n", n, minimum=0, maximum=_MAX_N)
    deg = np.zeros(1 << n, dtype=np.int64)
    for j in range(n):  # popcount table built bit by bit: deg[i + 2^j] = deg[i] + 1
        deg[1 << j : 1 << (j + 1)] = deg[: 1 << j] + 1
    return deg


def walsh_hadamard(values) -> np.ndarray:
    """Unnormalised fast Walsh-Hadamard transform along the last axis: ``H_n @ v``.

    ``H_n`` is the Sylvester-Hadamard matrix, ``(H_n)_{S,i} = (-1)^popcount(S & i)``. The fast
    transform applies ``n`` butterfly stages: at stage ``h = 1, 2, 4, ..., 2**(n-1)`` every pair of
    entries ``(a, b)`` whose indices differ only in the bit ``h`` becomes ``(a + b, a - b)``. Cost
    ``n 2^n`` additions instead of ``4^n`` for the matrix product.

    Parameters
    ----------
    values : array_like, shape (2**n,) or (R, 2**n)
        Finite numbers: one table, or a batch of ``R`` tables; the transform acts on the last axis.

    Returns
    -------
    ndarray of float64, shape (2**n,) or (R, 2**n)

    Raises
    ------
    ValueError
        If ``values`` is not 1-d or 2-d, the last axis is not a power of two or an entry is not finite.

    Examples
    --------
    >>> walsh_hadamard([1.0, 0.0, 0.0, 0.0]).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    a = as_array("values", values, ndim=(1, 2), dtype=np.float64, min_size=1)
    if a.ndim == 0:
        raise ValueError("values must have at least one dimension, got a scalar")
    n = _num_vars_of_table("values", a.shape[-1])
    a = a.copy()
    batch = a.shape[:-1]
    h = 1
    for _ in range(n):
        # indices i = (high, bit, low) with low < h: pair (bit = 0, bit = 1)
        blocks = a.reshape(*batch, -1, 2, h)
        lo = blocks[..., 0, :].copy()
        hi = blocks[..., 1, :]
        blocks[..., 0, :] += hi
        blocks[..., 1, :] = lo - hi
        h *= 2
    return a


def fourier_coefficients(truth_table) -> np.ndarray:
    """Fourier coefficients ``f_hat(S) = 2^{-n} sum_x f(x) chi_S(x)`` of a truth table.

    Parameters
    ----------
    truth_table : array_like, shape (2**n,) or (R, 2**n)
        Values ``f(x^(i))`` in the order of :func:`all_inputs` (any real values; Boolean
        functions take values in {-1, 1}).

    Returns
    -------
    ndarray of float64, shape (2**n,) or (R, 2**n)
        Entry ``S`` (an integer mask) is ``f_hat(S)``.

    Raises
    ------
    ValueError
        As :func:`walsh_hadamard`.

    Examples
    --------
    >>> fourier_coefficients([1.0, 1.0, 1.0, -1.0]).tolist()  # AND-like: 1/2 + x0/2 + x1/2 - x0 x1/2
    [0.5, 0.5, 0.5, -0.5]
    """
    table = as_array("truth_table", truth_table, ndim=(1, 2), dtype=np.float64, min_size=1)
    _num_vars_of_table("truth_table", table.shape[-1])
    a = walsh_hadamard(table)
    return a / a.shape[-1]


def level_weights(coefficients) -> np.ndarray:
    """Fourier weight at each degree, ``W_k = sum_{|S| = k} f_hat(S)^2``.

    Parameters
    ----------
    coefficients : array_like, shape (2**n,) or (R, 2**n)
        Fourier coefficients from :func:`fourier_coefficients`.

    Returns
    -------
    ndarray of float64, shape (n + 1,) or (R, n + 1)
        For a {-1, 1}-valued ``f`` the weights sum to 1 (Parseval).

    Raises
    ------
    ValueError
        If the last axis is not a power of two or entries are not finite.

    Examples
    --------
    >>> level_weights([0.5, 0.5, 0.5, -0.5]).tolist()
    [0.25, 0.5, 0.25]
    """
    c = as_array("coefficients", coefficients, ndim=(1, 2), dtype=np.float64, min_size=1)
    if c.ndim == 0:
        raise ValueError("coefficients must have at least one dimension, got a scalar")
    n = _num_vars_of_table("coefficients", c.shape[-1])
    deg = fourier_degrees(n)
    onehot = deg[:, None] == np.arange(n + 1)[None, :]
    return (c**2) @ onehot.astype(np.float64)
