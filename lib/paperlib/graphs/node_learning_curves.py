"""Node-level learning curves on one graph and the paper's ratio diagnostic (Theorem 2 side).

:func:`sgc_features` and :func:`sgc_gram` give simplified-GCN representations (the paper's message
passing with a normalised-adjacency aggregator and the nonlinearity dropped);
:func:`ridge_learning_curve` is the transductive protocol of the paper's Eq. 3 for ridge regression
on one-hot labels; :func:`ratio_diagnostics` computes the paper's ``Ratio₁`` and ``Ratio₂`` and their
log-log slopes.

References
----------
.. [#node-learning-curves-1] A. Ghasemi and H. Pishro-Nik, "Minimax Sample Complexity of Graph Neural Networks: Lower
   Bounds and Structural Effects", ICLR 2026, https://openreview.net/forum?id=P2GIT8LpV2
   (Eq. 3 transductive risk, Section 4 ratio diagnostics).
.. [#node-learning-curves-2] F. Wu et al., "Simplifying Graph Convolutional Networks", ICML 2019 (SGC features).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..core._validation import as_array, check_int, check_real
from ..core.fitting import power_law_fit
from .graph_structure import _check_adjacency, _check_rng

__all__ = [
    "sgc_features",
    "sgc_gram",
    "ridge_learning_curve",
    "RatioDiagnostics",
    "ratio_diagnostics",
]


def _sym_norm_adjacency(A: sp.csr_matrix) -> sp.csr_matrix:
    """``D̃^{-1/2}(A + I)D̃^{-1/2}`` (self-loops added, symmetric normalisation)."""
    At = A + sp.identity(A.shape[0], format="csr")
    dinv = 1.0 / np.sqrt(np.asarray(At.sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(dinv) @ At @ sp.diags(dinv))


def sgc_features(A, X, *, hops: int = 2) -> np.ndarray:
    """Simplified-GCN features ``S^hops X`` with ``S = D̃^{-1/2}(A + I)D̃^{-1/2}``.

    ``hops`` rounds of the paper's message passing (Eq. 1) with the symmetric-normalised adjacency
    as aggregator (assumption A1) and the nonlinearity dropped (Wu et al. 2019).

    Parameters
    ----------
    A : sparse or array_like, shape (N, N)
        Symmetric adjacency.
    X : array_like, shape (N, d)
        Node features.
    hops : int, default 2
        Number of propagation steps, ``>= 0``.

    Returns
    -------
    ndarray, shape (N, d)

    Raises
    ------
    ValueError
        If shapes disagree, entries are not finite or ``hops < 0``.

    Examples
    --------
    >>> F = sgc_features(np.array([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), np.array([[1.0], [0.0], [0.0], [2.0]]), hops=1)
    >>> np.round(F, 4).ravel().tolist()
    [0.5, 0.4082, 0.0, 2.0]
    """
    A = _check_adjacency("A", A)
    X = as_array("X", X, ndim=2, shape=(A.shape[0], None))
    hops = check_int("hops", hops, minimum=0)
    S = _sym_norm_adjacency(A)
    F = X
    for _ in range(hops):
        F = S @ F
    return np.asarray(F)


def sgc_gram(A, X, *, hops: int = 2) -> np.ndarray:
    """Gram matrix ``K = F Fᵀ`` of the SGC features ``F = S^hops X`` without forming ``F``.

    Computed as ``S^hops (X Xᵀ) S^hops`` with sparse ``S`` (and sparse ``X`` when it is mostly
    zeros, as Cora's bag of words is), which is far cheaper than ``F Fᵀ`` when ``d`` is large; when
    ``X`` is dense with ``4 d <= N`` it forms ``F`` and returns ``F Fᵀ`` instead.

    Parameters
    ----------
    A : sparse or array_like, shape (N, N)
        Symmetric adjacency.
    X : array_like or sparse, shape (N, d)
        Node features.
    hops : int, default 2
        Propagation steps, ``>= 0`` (``hops = 0`` is the no-graph control ``X Xᵀ``).

    Returns
    -------
    ndarray, shape (N, N)
        Symmetric positive semi-definite Gram matrix.

    Raises
    ------
    ValueError
        As :func:`sgc_features`.

    Examples
    --------
    >>> K = sgc_gram(np.array([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), np.array([[1.0], [0.0], [0.0], [2.0]]), hops=1)
    >>> np.round(K, 4).tolist()
    [[0.25, 0.2041, 0.0, 1.0], [0.2041, 0.1667, 0.0, 0.8165], [0.0, 0.0, 0.0, 0.0], [1.0, 0.8165, 0.0, 4.0]]
    """
    A = _check_adjacency("A", A)
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else as_array("X", X, ndim=2)
    if X.shape[0] != A.shape[0]:
        raise ValueError(f"X must have shape ({A.shape[0]}, d), got {X.shape}")
    if sp.issparse(X) and not np.all(np.isfinite(X.data)):
        raise ValueError("X must be finite")
    hops = check_int("hops", hops, minimum=0)
    S = _sym_norm_adjacency(A)
    if not sp.issparse(X) and 4 * X.shape[1] <= X.shape[0]:   # few dense features: form F = S^hops X
        F = X
        for _ in range(hops):
            F = S @ F
        K = np.asarray(F) @ np.asarray(F).T
        return 0.5 * (K + K.T)
    if not sp.issparse(X) and np.mean(X != 0) < 0.1:
        X = sp.csr_matrix(X)
    K = X @ X.T
    K = K.toarray() if sp.issparse(K) else np.asarray(K)
    for _ in range(hops):   # K <- S K S; transposes made contiguous (sparse @ strided dense is slow)
        K = np.asarray(S @ np.ascontiguousarray(np.asarray(S @ K).T))
    return 0.5 * (K + K.T)


def ridge_learning_curve(K, y, ns, *, n_seeds: int = 5, lam: float = 1e-3,
                         rng: np.random.Generator):
    """Transductive learning curve of ridge regression on one-hot labels (paper's Eq. 3 protocol).

    For each ``n`` and seed a uniformly random set ``S`` of ``n`` labelled nodes is drawn, and ridge
    regression ``min_W ||Y_S - F_S W||² + lam ||W||²`` on the one-hot labels is fitted and evaluated
    on all unlabelled nodes ``T``. It is computed in the dual, which needs only the Gram matrix
    ``K = F Fᵀ``: predictions ``K_{TS} (K_{SS} + lam I)^{-1} Y_S`` (exactly the primal ridge
    predictions, for every ``n``).

    Parameters
    ----------
    K : array_like, shape (N, N)
        Gram matrix of the node representations (:func:`sgc_gram`; ``hops = 0`` for no graph).
    y : array_like of int, shape (N,)
        Labels in ``{0, ..., C-1}``.
    ns : sequence of int, shape (M,)
        Numbers of labelled nodes, each in ``[1, N-1]``.
    n_seeds : int, default 5
        Random label sets per ``n``.
    lam : float, default 1e-3
        Ridge penalty, ``> 0``, fixed across ``n``.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    err : ndarray, shape (M,)
        Mean misclassification rate on unlabelled nodes (argmax of the prediction).
    mse : ndarray, shape (M,)
        Mean squared error to the one-hot labels, summed over classes, averaged over nodes.

    Raises
    ------
    ValueError
        On a non-square ``K``, shape mismatch, non-finite entries, ``lam <= 0`` or an ``n``
        outside ``[1, N-1]``.

    Examples
    --------
    >>> F = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9], [1.0, 0.2], [0.2, 1.0]])
    >>> y = np.array([0, 0, 1, 1, 0, 1])
    >>> err, mse = ridge_learning_curve(F @ F.T, y, [2, 4], n_seeds=3, rng=np.random.default_rng(0))
    >>> np.round(err, 3).tolist(), np.round(mse, 3).tolist()
    ([0.5, 0.0], [0.949, 0.019])
    """
    K = as_array("K", K, ndim=2, min_size=4)
    N = K.shape[0]
    if K.shape != (N, N):
        raise ValueError(f"K must be a square Gram matrix, got shape {K.shape}")
    y = as_array("y", y, ndim=1, shape=(N,), dtype=np.int64).astype(int)
    if y.min() < 0:
        raise ValueError(f"y must hold labels in {{0, ..., C-1}}, got {y.min()}")
    ns = as_array("ns", ns, ndim=1, dtype=np.int64)
    if ns.min() < 1 or ns.max() > N - 1:
        raise ValueError(f"ns must lie in [1, N - 1 = {N - 1}], got {ns.tolist()}")
    ns = ns.tolist()
    n_seeds = check_int("n_seeds", n_seeds, minimum=1)
    lam = check_real("lam", lam, minimum=0.0, strict_min=True)
    rng = _check_rng(rng)
    C = int(y.max()) + 1
    Y = np.eye(C)[y]
    err = np.zeros(len(ns))
    mse = np.zeros(len(ns))
    for i, n in enumerate(ns):
        for _ in range(n_seeds):
            perm = rng.permutation(N)
            S, T = perm[:n], perm[n:]
            # Cholesky factor and solve: the LAPACK calls (potrf, potrs) of solve(assume_a="pos"), without its
            # condition-number estimate, which doubled the time (bitwise the same solution)
            alpha = scipy.linalg.cho_solve(scipy.linalg.cho_factor(K[np.ix_(S, S)] + lam * np.eye(n)), Y[S])
            P = K[np.ix_(T, S)] @ alpha
            err[i] += np.mean(np.argmax(P, axis=1) != y[T])
            mse[i] += np.mean(np.sum((P - Y[T]) ** 2, axis=1))
    return err / n_seeds, mse / n_seeds


class RatioDiagnostics(NamedTuple):
    """The paper's ratio diagnostics of a learning curve (Section 6).

    Attributes
    ----------
    ratio1 : ndarray, shape (M,)
        ``Err(n) / sqrt(log d / n)`` (Theorem 1 scale).
    ratio2 : ndarray, shape (M,)
        ``Err(n) / (d / log n)`` (Theorem 2 scale).
    slope_err, slope_ratio1, slope_ratio2 : float
        Least-squares slopes of ``log Err``, ``log Ratio₁``, ``log Ratio₂`` against ``log n``.
    """

    ratio1: np.ndarray
    ratio2: np.ndarray
    slope_err: float
    slope_ratio1: float
    slope_ratio2: float


def ratio_diagnostics(ns, err, d: int) -> RatioDiagnostics:
    """Ratio₁ and Ratio₂ of a learning curve and their log-log slopes (the paper's diagnostic).

    The paper reads "Ratio₂ flat, Ratio₁ rising" as the signature of the transductive
    ``d / log n`` regime of Theorem 2, and "Ratio₁ flat" as the worst-case ``sqrt(log d / n)`` regime
    of Theorem 1.

    Parameters
    ----------
    ns : array_like, shape (M,)
        Sample sizes, each ``>= 2``, at least two distinct.
    err : array_like, shape (M,)
        Positive errors ``Err(n)``.
    d : int
        Feature dimension, ``>= 2``.

    Returns
    -------
    RatioDiagnostics

    Raises
    ------
    ValueError
        If lengths differ, a size is ``< 2``, an error is non-positive or ``d < 2``.

    Notes
    -----
    ``slope_ratio1 = slope_err + 1/2`` exactly, and ``slope_ratio2 ≈ slope_err + 1/ln n``: both are
    fixed transforms of one learning-curve slope, which is why a flat Ratio₂ only says
    ``Err ∝ 1 / log n`` over the range, whatever produces it.

    Examples
    --------
    >>> diag = ratio_diagnostics([16, 64, 256], [0.4, 0.2, 0.1], 8)
    >>> round(diag.slope_err, 3), round(diag.slope_ratio1, 3), np.round(diag.ratio2, 4).tolist()
    (-0.5, 0.0, [0.1386, 0.104, 0.0693])
    """
    ns = as_array("ns", ns, ndim=1, dtype=np.int64, min_size=2).astype(float)
    err = as_array("err", err, ndim=1, shape=(ns.size,))
    d = check_int("d", d, minimum=2)
    if np.any(ns < 2):
        raise ValueError("ns must be >= 2 (log n > 0)")
    if np.any(err <= 0):
        raise ValueError("err must be positive")
    r1 = err / np.sqrt(np.log(d) / ns)
    r2 = err / (d / np.log(ns))
    return RatioDiagnostics(
        ratio1=r1,
        ratio2=r2,
        slope_err=power_law_fit(ns, err).slope,
        slope_ratio1=power_law_fit(ns, r1).slope,
        slope_ratio2=power_law_fit(ns, r2).slope,
    )
