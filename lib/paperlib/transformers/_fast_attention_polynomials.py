"""Subquadratic attention: the polynomial bookkeeping, the Taylor error bound and the global polynomial method.

This private module holds the polynomial side of :mod:`paperlib.transformers.fast_attention`: the
multi-indices and monomials of the Taylor expansion and their cached tables
(:func:`multi_indices`, :func:`monomials`), the provable error bound of :func:`fast_attention`
(:func:`error_bound`), and the polynomial method without pruning or localisation
(:func:`global_poly_attention`). Its public names are re-exported by
:mod:`paperlib.transformers.fast_attention`, where they are documented; import them from there.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from ..core._validation import as_array, check_int, check_memory, check_real


# --------------------------------------------------------------------------------------------
# Polynomial bookkeeping
# --------------------------------------------------------------------------------------------
def multi_indices(d: int, p: int) -> np.ndarray:
    r"""All multi-indices :math:`\alpha\in\mathbb N^d` with :math:`|\alpha|\le p`, by total degree.

    Parameters
    ----------
    d : int
        Dimension (>= 1).
    p : int
        Maximum total degree (>= 0).

    Returns
    -------
    ndarray of int, shape (C(p+d, d), d)

    Raises
    ------
    ValueError
        If ``d < 1`` or ``p < 0``, or the ``(p + 1)**d``-row grid the indices are drawn from would exceed
        ``paperlib.core._validation.memory_limit`` (8 GiB by default; ``d = 10`` with ``p = 24`` needs
        about 14,000 TiB).

    Examples
    --------
    >>> multi_indices(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [0, 2], [1, 1], [2, 0]]
    """
    d = check_int("d", d, minimum=1)
    p = check_int("p", p, minimum=0)
    _check_table_memory(d, p)
    grids = np.stack(np.meshgrid(*([np.arange(p + 1)] * d), indexing="ij"), -1).reshape(-1, d)
    grids = grids[grids.sum(1) <= p]
    order = np.lexsort((*grids.T[::-1], grids.sum(1)))
    return grids[order]


def _check_table_memory(d: int, p: int) -> None:
    """Refuse ``(d, p)`` whose multi-index grid (``(p+1)**d`` rows, built twice) exceeds the memory limit."""
    name = f"d={d} with p={p}" if d > 1 else f"p={p} with d={d}"
    log2_rows = d * math.log2(p + 1)  # in logs first: (p+1)**d itself is too slow to form for huge d
    if log2_rows > 80:
        check_memory(name, math.inf, what=f"the (p+1)**d = 2**{log2_rows:.4g}-row grid of multi-indices")
    check_memory(name, 2 * d * 8 * (p + 1) ** d,
                 what=f"the (p+1)**d = {(p + 1) ** d:.3g}-row grid of multi-indices")


def _n_alpha(d: int, p: int) -> int:
    return math.comb(p + d, d)


def monomials(X, A) -> np.ndarray:
    r"""Monomials :math:`X_i^{\alpha}=\prod_t X_{it}^{\alpha_t}`, one multiplication per multi-index.

    Parameters
    ----------
    X : array, shape (m, d)
    A : int array, shape (n_alpha, d)
        Multi-indices sorted by total degree (e.g. from :func:`multi_indices`).

    Returns
    -------
    ndarray, shape (m, n_alpha)

    Raises
    ------
    ValueError
        If ``X`` is not finite 2-D, or ``A`` is not a non-negative integer array of width ``d``.

    Examples
    --------
    >>> monomials([[2.0, 3.0]], multi_indices(2, 2)).tolist()
    [[1.0, 3.0, 2.0, 9.0, 6.0, 4.0]]
    """
    X = as_array("X", X, ndim=2)
    A = as_array("A", A, ndim=2, shape=(None, X.shape[1]), dtype=np.int64)
    if np.any(A < 0) or np.any(np.diff(A.sum(1)) < 0):
        raise ValueError("A must hold non-negative multi-indices sorted by total degree")
    parent, coord = _parents(A)
    out = np.ones((X.shape[0], len(A)))
    for i in range(1, len(A)):
        out[:, i] = out[:, parent[i]] * X[:, coord[i]]
    return out


def _parents(A):
    """For every multi-index (but the zero one): the index of ``alpha - e_t`` and that ``t``."""
    index = {tuple(a): i for i, a in enumerate(A.tolist())}
    parent, coord = np.zeros(len(A), np.int64), np.zeros(len(A), np.int64)
    for i, a in enumerate(A.tolist()):
        if any(a):
            t = next(t for t, at in enumerate(a) if at > 0)
            parent[i] = index[tuple(a[:t] + [a[t] - 1] + a[t + 1:])]
            coord[i] = t
    return parent, coord


@lru_cache(maxsize=None)
def _tables(d, p):
    """Multi-indices, their parents, 1/alpha!, and ``down[t, alpha]`` = index of alpha - e_t (-1 if none)."""
    A = multi_indices(d, p)
    parent, coord = _parents(A)
    inv_fact = np.exp(-gammaln(A + 1.0).sum(1))
    index = {tuple(a): i for i, a in enumerate(A.tolist())}
    down = np.full((d, len(A)), -1, np.int64)
    for i, a in enumerate(A.tolist()):
        for t in range(d):
            if a[t] > 0:
                down[t, i] = index[tuple(a[:t] + [a[t] - 1] + a[t + 1:])]
    return A, parent, coord, inv_fact, down


def error_bound(w: float = 8.0, p: int = 24, eps: float = 1e-6) -> float:
    r"""Provable entrywise error bound of :func:`fast_attention`, in units of :math:`\max|V|`.

    Every accepted cell has :math:`|q\cdot(k-c)|\le w/2`, so the degree-``p`` Taylor polynomial
    has relative error at most :math:`\eta = e^{w}(w/2)^{p+1}/(p+1)!`; pruned keys carry less than
    :math:`\varepsilon` of the (row-max shifted) mass :math:`Z\ge 1`. Hence

    .. math:: |\hat O_{ij} - O_{ij}| \le \frac{2(\eta+\varepsilon)}{1-\eta-\varepsilon}\,\max|V|.

    Parameters
    ----------
    w : float, default 8.0
        Maximum logit range of an accepted cell (> 0).
    p : int, default 24
        Taylor degree (>= 0).
    eps : float, default 1e-6
        Pruning mass (in (0, 1)).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On out-of-range arguments, or if :math:`\eta+\varepsilon\ge 1` (no bound).

    Examples
    --------
    >>> f"{error_bound(w=8.0, p=24, eps=1e-6):.3e}"
    '2.433e-06'
    """
    w = check_real("w", w, minimum=0.0, strict_min=True)
    p = check_int("p", p, minimum=0)
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    eta = math.exp(w + (p + 1) * math.log(w / 2) - math.lgamma(p + 2))
    if eta + eps >= 1:
        raise ValueError(f"w={w}, p={p}, eps={eps} give eta+eps >= 1: no error bound")
    return 2 * (eta + eps) / (1 - eta - eps)


def global_poly_attention(Q, K, V, *, p: int = 24) -> np.ndarray:
    r"""The polynomial method without pruning or localisation (the contrast in the style of Alman & Song).

    Replaces :math:`\exp(q\cdot k)` by its degree-``p`` Taylor polynomial about
    :math:`q\cdot k = 0` for every pair, evaluated in :math:`O(n\binom{p+d}{d})` time through
    global moments :math:`\sum_j k_j^\alpha [V_j, 1]`. Accurate only while the logit range
    :math:`dB^2` is small compared with ``p`` (high temperature).

    Parameters
    ----------
    Q : array, shape (n_q, d)
    K : array, shape (n, d)
    V : array, shape (n, d_v)
    p : int, default 24
        Polynomial degree (>= 0).

    Returns
    -------
    ndarray, shape (n_q, d_v)

    Raises
    ------
    ValueError
        On wrong shapes, non-finite entries or ``p < 0``, or when the multi-indices or monomials of
        degree ``p`` would exceed ``paperlib.core._validation.memory_limit`` (8 GiB by default).

    Examples
    --------
    >>> Q = [[0.1, 0.2]]; K = [[0.3, -0.1], [0.0, 0.2]]; V = [[1.0], [-1.0]]
    >>> round(float(global_poly_attention(Q, K, V, p=12)[0, 0]), 6)   # exact: tanh(-0.015)
    -0.014999
    """
    K = as_array("K", K, ndim=2, min_size=1)
    Q = as_array("Q", Q, ndim=2, shape=(None, K.shape[1]))
    V = as_array("V", V, ndim=2, shape=(K.shape[0], None))
    p = check_int("p", p, minimum=0)
    _check_table_memory(K.shape[1], p)
    check_memory("p", 8 * (Q.shape[0] + K.shape[0]) * _n_alpha(K.shape[1], p), what="the monomials of Q and K")
    A, _, _, inv_fact, _ = _tables(K.shape[1], p)
    S = monomials(K, A).T @ np.hstack([V, np.ones((K.shape[0], 1))])
    num = (monomials(Q, A) * inv_fact) @ S
    return num[:, :-1] / num[:, -1:]
