"""Theorem 1 of the GNN minimax chapter: hard instances on path graphs and their worst-case risk.

Ghasemi & Pishro-Nik (ICLR 2026) prove the graph-level lower bound ``√(log d / n)`` with a Fano
packing of first-layer coordinate selectors on path graphs. :func:`path_graph_readout_weights` and
:func:`sample_graph_features` build the read-out features of one linear message-passing layer plus
mean readout on random path graphs; :func:`sparse_packing_targets` draws the constant-weight
selectors; :func:`worst_case_excess_risk` fits the lasso readout (:func:`paperlib.graphs.lasso.lasso_fista`)
to every target and returns the excess risks, whose maximum over the packing is the worst case.

References
----------
.. [#gnn-hard-instances-1] A. Ghasemi and H. Pishro-Nik, "Minimax Sample Complexity of Graph Neural Networks: Lower
   Bounds and Structural Effects", ICLR 2026, https://openreview.net/forum?id=P2GIT8LpV2
   (Eq. 1 message passing, Theorem 1 / Eq. 6-7).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..core._validation import as_array, check_bool, check_int, check_real
from .graph_structure import _check_rng
from .lasso import lasso_fista

__all__ = [
    "path_graph_readout_weights",
    "sample_graph_features",
    "sparse_packing_targets",
    "worst_case_excess_risk",
]


def path_graph_readout_weights(m: int) -> np.ndarray:
    """Node weights of a 1-layer mean-aggregation GNN plus mean readout on the path graph P_m.

    With self-loops and row-normalised aggregation ``Â = D^{-1}(A + I)`` on the path
    ``0 - 1 - ... - (m-1)``, one linear message-passing layer followed by a mean readout maps node
    features ``X`` (shape ``(m, d)``) to ``z = (1/m) 1ᵀ Â X = wᵀ X``. Returns ``w / ||w||_2`` so that
    ``z ~ N(0, I_d)`` when ``X`` has i.i.d. standard normal entries (the feature law of the proofs).

    Parameters
    ----------
    m : int
        Number of nodes of the path, ``m >= 2``.

    Returns
    -------
    ndarray, shape (m,)
        Unit-norm, positive node weights.

    Raises
    ------
    ValueError
        If ``m`` is not an integer ``>= 2``.

    Notes
    -----
    Ghasemi & Pishro-Nik, Theorem 1 (Section 4): the packing is realised on path graphs with a
    first-layer coordinate selector; this is the aggregation-plus-readout part of that network.

    Examples
    --------
    >>> w = path_graph_readout_weights(3)
    >>> np.round(w, 3).tolist()
    [0.468, 0.749, 0.468]
    """
    m = check_int("m", m, minimum=2)
    A = sp.diags([np.ones(m - 1), np.ones(m - 1)], [-1, 1]) + sp.identity(m)
    A = sp.csr_matrix(A)
    A_hat = sp.diags(1.0 / np.asarray(A.sum(axis=1)).ravel()) @ A
    w = np.asarray(A_hat.sum(axis=0)).ravel() / m
    return w / np.linalg.norm(w)


def sample_graph_features(n: int, d: int, *, m: int = 8, rng: np.random.Generator) -> np.ndarray:
    """Read-out features of ``n`` independent random path graphs with N(0, I_d) node features.

    Each graph is ``P_m`` with node features ``X_g ∈ R^{m×d}``, i.i.d. N(0, 1); the graph-level
    representation is ``z_g = wᵀ X_g`` with ``w`` from :func:`path_graph_readout_weights`.

    Parameters
    ----------
    n : int
        Number of graphs (training sample size), ``n >= 1``.
    d : int
        Feature dimension, ``d >= 1``.
    m : int, default 8
        Nodes per path graph, ``m >= 2``.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    ndarray, shape (n, d)
        Graph-level features; each row is exactly N(0, I_d) distributed.

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``rng`` is not a Generator.

    Examples
    --------
    >>> Z = sample_graph_features(3, 2, m=4, rng=np.random.default_rng(0))
    >>> np.round(Z, 3).tolist()
    [[0.648, 0.603], [-2.498, -0.923], [-0.334, 1.401]]
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    w = path_graph_readout_weights(m)
    rng = _check_rng(rng)
    X = rng.standard_normal((n, m, d))
    return np.einsum("m,nmd->nd", w, X)


def sparse_packing_targets(d: int, ks, *, radius: float = 1.0, rng: np.random.Generator) -> np.ndarray:
    """Constant-weight sparse coefficient vectors on the l1 sphere of radius ``radius``.

    For each sparsity ``k`` a support of size ``k`` is drawn uniformly and given signs ``±radius/k``,
    so ``||β||_1 = radius``: a first-layer coordinate selector of the paper's Varshamov-Gilbert
    packing (Theorem 1 proof, Eq. 6) with l1 budget ``v_s / L = radius``.

    Parameters
    ----------
    d : int
        Feature dimension.
    ks : sequence of int, shape (K,)
        Sparsities, each in ``[1, d]``.
    radius : float, default 1.0
        l1 norm of every target, ``> 0``.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    ndarray, shape (d, K)
        Column ``j`` is a ``ks[j]``-sparse vector with l1 norm ``radius``.

    Raises
    ------
    ValueError
        If ``d`` is not a positive integer, a ``k`` is outside ``[1, d]``, or ``radius <= 0``.

    Examples
    --------
    >>> B = sparse_packing_targets(4, [1, 2], rng=np.random.default_rng(0))
    >>> B.tolist()
    [[0.0, 0.0], [0.0, -0.5], [0.0, 0.0], [1.0, -0.5]]
    """
    d = check_int("d", d, minimum=1)
    ks = [check_int("ks[i]", int(k) if isinstance(k, np.integer) else k, minimum=1, maximum=d) for k in ks]
    if not ks:
        raise ValueError("ks must contain at least one sparsity")
    radius = check_real("radius", radius, minimum=0.0, strict_min=True)
    rng = _check_rng(rng)
    B = np.zeros((d, len(ks)))
    for j, k in enumerate(ks):
        support = rng.choice(d, size=k, replace=False)
        B[support, j] = rng.choice([-1.0, 1.0], size=k) * radius / k
    return B


def worst_case_excess_risk(ns, d: int, ks, *, n_seeds: int = 8, sigma: float = 1.0,
                           radius: float = 1.0, m: int = 8, iters: int = 200,
                           per_seed: bool = False, rng: np.random.Generator) -> np.ndarray:
    """Excess risk of the lasso GNN readout for every sample size and every packing sparsity.

    For each ``n`` and seed: draw ``n`` path graphs (:func:`sample_graph_features`), one target per
    sparsity (:func:`sparse_packing_targets`), responses ``Y = Z β* + σ U`` with ``U ~ N(0, 1)``, fit
    :func:`~paperlib.graphs.lasso.lasso_fista` with the theory-set penalty ``λ = σ sqrt(2 log d / n)`` (no tuning on test
    data) and record the population excess risk ``E[(f̂ - f*)²] = ||β̂ - β*||²`` (the read-out
    features are isotropic). The worst case of Theorem 1 is ``max`` over the last axis.

    Parameters
    ----------
    ns : sequence of int, shape (N,)
        Training sample sizes (number of graphs), each ``>= 2``.
    d : int
        Feature dimension, ``>= 2`` (``log d > 0``).
    ks : sequence of int, shape (K,)
        Sparsities of the packing (each ``<= d``).
    n_seeds : int, default 8
        Independent repetitions averaged per (n, k).
    sigma : float, default 1.0
        Noise standard deviation σ, ``> 0``.
    radius : float, default 1.0
        l1 radius ``v_s / L`` of the targets, ``> 0``.
    m : int, default 8
        Nodes per path graph.
    iters : int, default 200
        FISTA iterations.
    per_seed : bool, default False
        Return every seed's excess risk instead of the mean (same random draws, so
        ``per_seed=True`` followed by ``.mean(axis=0)`` equals the default output); used for
        seed-level error bars such as a jackknife over seeds.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    ndarray, shape (N, K), or (n_seeds, N, K) if ``per_seed``
        Mean excess risk over seeds (or each seed's).

    Raises
    ------
    ValueError
        On invalid sizes, ``sigma <= 0`` or ``radius <= 0``.

    Notes
    -----
    Theorem 1 of Ghasemi & Pishro-Nik predicts ``max_k risk ≥ K σ (v_s/L) sqrt(log d / n)``; for
    the lasso the matching upper bound is of the same order, so ``max_k risk / sqrt(log d / n)``
    should be flat in ``n`` and ``d``. A single fixed ``k`` (a fixed target) converges faster.

    Examples
    --------
    >>> risk = worst_case_excess_risk([8, 16], 4, [1, 2], n_seeds=2, iters=50, rng=np.random.default_rng(0))
    >>> np.round(risk, 3).tolist()
    [[0.517, 0.339], [0.328, 0.298]]
    """
    ns = as_array("ns", ns, ndim=1, dtype=np.int64)
    if ns.min() < 2:
        raise ValueError(f"ns must be >= 2, got {ns.tolist()}")
    ns = ns.tolist()
    d = check_int("d", d, minimum=2)
    ks = as_array("ks", ks, ndim=1, dtype=np.int64)
    if ks.min() < 1 or ks.max() > d:
        raise ValueError(f"ks must lie in [1, d = {d}], got {ks.tolist()}")
    ks = ks.tolist()
    n_seeds = check_int("n_seeds", n_seeds, minimum=1)
    sigma = check_real("sigma", sigma, minimum=0.0, strict_min=True)
    check_real("radius", radius, minimum=0.0, strict_min=True)
    check_int("m", m, minimum=2)
    check_int("iters", iters, minimum=1)
    per_seed = check_bool("per_seed", per_seed)
    rng = _check_rng(rng)
    out = np.zeros((n_seeds, len(ns), len(ks)))
    for i, n in enumerate(ns):
        lam = sigma * np.sqrt(2.0 * np.log(d) / n)
        Z = np.stack([sample_graph_features(n, d, m=m, rng=rng) for _ in range(n_seeds)])
        B_star = np.stack([sparse_packing_targets(d, ks, radius=radius, rng=rng)
                           for _ in range(n_seeds)])
        Y = Z @ B_star + sigma * rng.standard_normal((n_seeds, n, len(ks)))
        B_hat = lasso_fista(Z, Y, lam, iters=iters)
        out[:, i] = np.sum((B_hat - B_star) ** 2, axis=1)
    return out if per_seed else out.mean(axis=0)
