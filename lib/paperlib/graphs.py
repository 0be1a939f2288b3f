"""Graph neural networks at the minimax limit: hard instances, real graphs, controls, diagnostics.

This module carries the chapter on Ghasemi & Pishro-Nik (ICLR 2026), *Minimax Sample Complexity of
Graph Neural Networks: Lower Bounds and Structural Effects*. It has two halves.

Theorem 1 (inductive, worst case)
    :func:`path_graph_readout_weights`, :func:`sample_graph_features` (one linear message-passing
    layer plus mean readout on random path graphs), :func:`sparse_packing_targets` (the
    constant-weight first-layer coordinate selectors of the Fano packing), :func:`lasso_fista`
    (an l1-constrained estimator) and :func:`worst_case_excess_risk` (the maximum over the packing
    of the estimator's excess risk).

Theorem 2 (transductive, spectral homophily) and its controls
    :func:`load_cora` (the Cora citation graph shipped inside the ``graphdatascience`` wheel),
    :func:`normalized_laplacian_lambda2`, :func:`edge_homophily`, :func:`contextual_sbm`,
    :func:`degree_preserving_rewire`, :func:`sgc_features`, :func:`ridge_learning_curve` and the
    paper's ratio diagnostic :func:`ratio_diagnostics`.

Everything is numpy/scipy/networkx in float64; the graph sizes (a few thousand nodes) make
dense per-training-set linear algebra cheaper than any iterative trainer.

References
----------
.. [1] A. Ghasemi and H. Pishro-Nik, "Minimax Sample Complexity of Graph Neural Networks: Lower
   Bounds and Structural Effects", ICLR 2026, https://openreview.net/forum?id=P2GIT8LpV2
   (Eq. 1 message passing, Theorem 1 / Eq. 6-7, Theorem 2 / Eq. 8, Section 6 ratio diagnostics).
.. [2] F. Wu et al., "Simplifying Graph Convolutional Networks", ICML 2019 (SGC features).
"""

from __future__ import annotations

import importlib.util
import os
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

import networkx as nx
import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.csgraph
import scipy.sparse.linalg

from ._validation import as_array, check_int, check_real
from .fitting import power_law_fit

__all__ = [
    "path_graph_readout_weights",
    "sample_graph_features",
    "sparse_packing_targets",
    "lasso_fista",
    "worst_case_excess_risk",
    "CoraGraph",
    "load_cora",
    "largest_component",
    "normalized_laplacian_lambda2",
    "edge_homophily",
    "contextual_sbm",
    "degree_preserving_rewire",
    "sgc_features",
    "sgc_gram",
    "ridge_learning_curve",
    "RatioDiagnostics",
    "ratio_diagnostics",
]


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_adjacency(name: str, A) -> sp.csr_matrix:
    """Return ``A`` as a float64 CSR matrix after checking it is a square symmetric 0/1-weighted graph."""
    if not sp.issparse(A):
        A = as_array(name, A, ndim=2)
    A = sp.csr_matrix(A, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square adjacency matrix, got shape {A.shape}")
    if A.shape[0] < 2:
        raise ValueError(f"{name} must have at least 2 nodes, got {A.shape[0]}")
    if A.nnz and (not np.all(np.isfinite(A.data)) or np.any(A.data < 0)):
        raise ValueError(f"{name} must have finite non-negative weights")
    if A.nnz and abs(A - A.T).max() > 1e-12:
        raise ValueError(f"{name} must be symmetric (an undirected graph)")
    return A


# ---------------------------------------------------------------------------------------------
# Theorem 1: hard instances on path graphs
# ---------------------------------------------------------------------------------------------


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


@partial(jax.jit, static_argnames=("iters",))
def _fista_batched(Z, Y, lam, *, iters):
    """FISTA for a batch of independent lasso problems; shapes (S, n, d), (S, n, K) -> (S, d, K)."""

    def one(Z, Y):
        n, d = Z.shape
        c = Z.T @ Y / n
        if n >= d:  # gradient through the d x d Gram matrix
            G = Z.T @ Z / n
            L = jnp.linalg.eigvalsh(G)[-1]
            grad = lambda V: G @ V - c  # noqa: E731
        else:  # cheaper through Z itself when n < d
            L = jnp.linalg.eigvalsh(Z @ Z.T / n)[-1]
            grad = lambda V: Z.T @ (Z @ V) / n - c  # noqa: E731
        step = 1.0 / jnp.maximum(L, 1e-12)

        def body(_, state):
            B, V, t = state
            U = V - step * grad(V)
            B_new = jnp.sign(U) * jnp.maximum(jnp.abs(U) - step * lam, 0.0)
            t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * t * t))
            V = B_new + ((t - 1.0) / t_new) * (B_new - B)
            return B_new, V, t_new

        B0 = jnp.zeros_like(c)
        B, _, _ = jax.lax.fori_loop(0, iters, body, (B0, B0, jnp.ones((), c.dtype)))
        return B

    return jax.vmap(one)(Z, Y)


def lasso_fista(Z, Y, lam: float, *, iters: int = 200) -> np.ndarray:
    """l1-penalised least squares for several right-hand sides at once, by FISTA.

    Minimises ``(1/2n) ||Y - Z B||_F^2 + lam ||B||_1`` over ``B ∈ R^{d×K}`` (each column is an
    independent lasso sharing the design ``Z``), with step ``1/L``, ``L`` the largest eigenvalue of
    ``ZᵀZ / n``, and Nesterov momentum (Beck & Teboulle 2009). A leading batch axis solves
    independent designs at once (one jitted, vmapped XLA program).

    Parameters
    ----------
    Z : array_like, shape (n, d) or (S, n, d)
        Design (graph-level features), optionally a batch of ``S`` designs.
    Y : array_like, shape (n, K) or (S, n, K)
        Responses, one column per target.
    lam : float
        Penalty, ``>= 0``.
    iters : int, default 200
        Number of FISTA iterations, ``>= 1``.

    Returns
    -------
    ndarray, shape (d, K) or (S, d, K)
        Estimated coefficients (numpy, in JAX's default float precision).

    Raises
    ------
    ValueError
        If shapes disagree, entries are not finite, ``lam < 0`` or ``iters < 1``.

    Notes
    -----
    The estimator is one member of the GNN class F_GNN(v_s, L) of the paper (a linear readout of
    aggregated features, which a ReLU layer represents through ``ReLU(z) - ReLU(-z) = z``); Theorem 1
    bounds *every* estimator's worst-case risk from below, so any reasonable one can be used to see
    the rate. Runs in JAX: thin matrix products inside a Python loop are slow under multi-threaded
    BLAS on a busy machine.

    Examples
    --------
    >>> Z = np.eye(4) * 2.0                      # n = d = 4, ZᵀZ/n = I
    >>> Y = Z @ np.array([[1.0], [0.1], [0.0], [-2.0]])
    >>> np.round(lasso_fista(Z, Y, 0.5), 3).ravel().tolist()   # soft-threshold by 0.5
    [0.5, 0.0, 0.0, -1.5]
    """
    Z = as_array("Z", Z, ndim=(2, 3), min_size=1)
    batched = Z.ndim == 3
    Y = as_array("Y", Y, ndim=Z.ndim, shape=Z.shape[:-1] + (None,))
    lam = check_real("lam", lam, minimum=0.0)
    iters = check_int("iters", iters, minimum=1)
    if not batched:
        Z, Y = Z[None], Y[None]
    B = np.asarray(_fista_batched(jnp.asarray(Z), jnp.asarray(Y), lam, iters=iters))
    return B if batched else B[0]


def worst_case_excess_risk(ns, d: int, ks, *, n_seeds: int = 8, sigma: float = 1.0,
                           radius: float = 1.0, m: int = 8, iters: int = 200,
                           rng: np.random.Generator) -> np.ndarray:
    """Excess risk of the lasso GNN readout for every sample size and every packing sparsity.

    For each ``n`` and seed: draw ``n`` path graphs (:func:`sample_graph_features`), one target per
    sparsity (:func:`sparse_packing_targets`), responses ``Y = Z β* + σ U`` with ``U ~ N(0, 1)``, fit
    :func:`lasso_fista` with the theory-set penalty ``λ = σ sqrt(2 log d / n)`` (no tuning on test
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
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    ndarray, shape (N, K)
        Mean excess risk over seeds.

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
    rng = _check_rng(rng)
    out = np.zeros((len(ns), len(ks)))
    for i, n in enumerate(ns):
        lam = sigma * np.sqrt(2.0 * np.log(d) / n)
        Z = np.stack([sample_graph_features(n, d, m=m, rng=rng) for _ in range(n_seeds)])
        B_star = np.stack([sparse_packing_targets(d, ks, radius=radius, rng=rng)
                           for _ in range(n_seeds)])
        Y = Z @ B_star + sigma * rng.standard_normal((n_seeds, n, len(ks)))
        B_hat = lasso_fista(Z, Y, lam, iters=iters)
        out[i] = np.sum((B_hat - B_star) ** 2, axis=(0, 1))
    return out / n_seeds


# ---------------------------------------------------------------------------------------------
# Theorem 2: real graph, structure certificates and controls
# ---------------------------------------------------------------------------------------------


class CoraGraph(NamedTuple):
    """The Cora citation graph (largest connected component).

    Attributes
    ----------
    A : scipy.sparse.csr_matrix, shape (N, N)
        Symmetric 0/1 adjacency without self-loops.
    X : ndarray, shape (N, 1433)
        Binary bag-of-words features.
    y : ndarray of int, shape (N,)
        Subject labels in ``{0, ..., 6}``.
    n_edges_full : int
        Undirected edges of the whole graph (before restricting to the component).
    n_components_full : int
        Connected components of the whole graph.
    """

    A: sp.csr_matrix
    X: np.ndarray
    y: np.ndarray
    n_edges_full: int
    n_components_full: int


def largest_component(A) -> np.ndarray:
    """Indices (sorted) of the nodes of the largest connected component of an undirected graph.

    Parameters
    ----------
    A : sparse or array_like, shape (N, N)
        Symmetric adjacency.

    Returns
    -------
    ndarray of int, shape (N_lcc,)

    Raises
    ------
    ValueError
        If ``A`` is not a square symmetric non-negative matrix.

    Examples
    --------
    >>> largest_component(np.array([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])).tolist()
    [0, 1, 2]
    """
    A = _check_adjacency("A", A)
    _, labels = scipy.sparse.csgraph.connected_components(A, directed=False)
    big = np.argmax(np.bincount(labels))
    return np.flatnonzero(labels == big)


def load_cora(path: str | None = None) -> CoraGraph:
    """Load Cora from the parquet files shipped inside the ``graphdatascience`` wheel.

    The package is located with ``importlib.util.find_spec`` (it is *not* imported, so its own
    dependencies are not needed). Citations are symmetrised, self-loops and duplicates removed
    (5,278 undirected edges, 78 components), and the graph is restricted to its largest connected
    component (2,485 nodes).

    Parameters
    ----------
    path : str, optional
        Folder holding ``cora_nodes.parquet.gzip`` and ``cora_rels.parquet.gzip``; default: the
        ``resources/cora`` folder of the installed ``graphdatascience``.

    Returns
    -------
    CoraGraph

    Raises
    ------
    ModuleNotFoundError
        If ``path`` is not given and ``graphdatascience`` is not installed.

    Examples
    --------
    >>> cora = load_cora()
    >>> cora.A.shape, cora.X.shape, cora.n_edges_full, cora.n_components_full
    ((2485, 2485), (2485, 1433), 5278, 78)
    """
    import pandas as pd

    if path is None:
        spec = importlib.util.find_spec("graphdatascience")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(
                "graphdatascience is not installed; `pip install --no-deps graphdatascience` ships Cora"
            )
        path = os.path.join(spec.submodule_search_locations[0], "resources", "cora")
    nodes = pd.read_parquet(os.path.join(path, "cora_nodes.parquet.gzip"))
    rels = pd.read_parquet(os.path.join(path, "cora_rels.parquet.gzip"))
    index = pd.Series(np.arange(len(nodes)), index=nodes["nodeId"].to_numpy())
    src = index.loc[rels["sourceNodeId"].to_numpy()].to_numpy()
    dst = index.loc[rels["targetNodeId"].to_numpy()].to_numpy()
    N = len(nodes)
    A = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(N, N)).tocsr()
    A = ((A + A.T) > 0).astype(np.float64)
    A.setdiag(0)
    A.eliminate_zeros()
    A = sp.csr_matrix(A)
    n_comp, _ = scipy.sparse.csgraph.connected_components(A, directed=False)
    X = np.stack(nodes["features"].to_numpy()).astype(np.float64)
    y = nodes["subject"].to_numpy().astype(int)
    keep = largest_component(A)
    return CoraGraph(A=A[keep][:, keep].tocsr(), X=X[keep], y=y[keep],
                     n_edges_full=int(A.nnz // 2), n_components_full=int(n_comp))


def normalized_laplacian_lambda2(A) -> float:
    """Second-smallest eigenvalue λ₂ of ``𝓛 = I - D^{-1/2} A D^{-1/2}`` on the largest component.

    Small ``λ₂`` means slow mixing (a bottleneck). The paper's spectral-homophily condition
    (Theorem 2) is ``λ₂(𝓛) ≤ κ / log n``.

    Parameters
    ----------
    A : sparse or array_like, shape (N, N)
        Symmetric non-negative adjacency; the graph is restricted to its largest connected
        component first (otherwise λ₂ = 0 trivially).

    Returns
    -------
    float
        λ₂ in ``[0, 2]``.

    Raises
    ------
    ValueError
        If ``A`` is not square, symmetric and non-negative, or its largest component has < 2 nodes.

    Notes
    -----
    Dense ``eigvalsh`` up to 400 nodes; above, ``scipy.sparse.linalg.eigsh`` in shift-invert mode
    around ``σ = -1e-3`` (``𝓛 - σI`` is positive definite, so the factorisation is stable).

    Examples
    --------
    >>> round(normalized_laplacian_lambda2(np.array([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])), 4)
    1.0
    """
    A = _check_adjacency("A", A)
    keep = largest_component(A)
    if keep.size < 2:
        raise ValueError("A's largest connected component must have at least 2 nodes")
    A = A[keep][:, keep]
    L = scipy.sparse.csgraph.laplacian(A, normed=True)
    if A.shape[0] <= 400:
        return float(np.linalg.eigvalsh(L.toarray())[1])
    v0 = np.linspace(1.0, 2.0, A.shape[0])  # fixed start vector: ARPACK's default is random
    vals = scipy.sparse.linalg.eigsh(sp.csc_matrix(L), k=3, sigma=-1e-3, which="LM", v0=v0,
                                     return_eigenvectors=False)
    return float(np.sort(vals)[1])


def edge_homophily(A, y) -> float:
    """Fraction of edges whose two endpoints share a label.

    Parameters
    ----------
    A : sparse or array_like, shape (N, N)
        Symmetric adjacency (weights ignored beyond being non-zero).
    y : array_like of int, shape (N,)
        Node labels.

    Returns
    -------
    float
        Edge homophily in ``[0, 1]``.

    Raises
    ------
    ValueError
        If shapes disagree, ``y`` holds a non-integer, or the graph has no edges.

    Examples
    --------
    >>> edge_homophily(np.array([[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), np.array([0, 0, 1, 1]))
    0.5
    """
    A = _check_adjacency("A", A)
    y = as_array("y", y, ndim=1, shape=(A.shape[0],), dtype=np.int64)
    C = sp.triu(A, k=1).tocoo()
    if C.nnz == 0:
        raise ValueError("A must have at least one edge")
    return float(np.mean(y[C.row] == y[C.col]))


def contextual_sbm(N: int, K: int, avg_degree: float, h: float, d: int, mu: float, *,
                   rng: np.random.Generator):
    """A contextual stochastic block model with a prescribed edge homophily.

    ``K`` balanced classes; edge ``{u, v}`` present independently with probability ``p_in`` inside a
    class and ``p_out`` across, chosen so that the expected degree is ``avg_degree`` and the expected
    fraction of within-class edges is ``h``. Features ``x_v = M_{y_v} + ε_v`` with class means
    ``M_c ~ N(0, μ² I_d)`` and ``ε_v ~ N(0, I_d)``. The graph is restricted to its largest component.

    Parameters
    ----------
    N : int
        Number of nodes before taking the largest component, ``N >= 2K``.
    K : int
        Number of classes, ``>= 2``.
    avg_degree : float
        Expected degree, ``> 0``.
    h : float
        Expected edge homophily, in ``[0, 1]`` (``1/K`` = no homophily).
    d : int
        Feature dimension.
    mu : float
        Scale of the class means (signal strength), ``>= 0``.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    A : scipy.sparse.csr_matrix, shape (N', N')
    X : ndarray, shape (N', d)
    y : ndarray of int, shape (N',)

    Raises
    ------
    ValueError
        On invalid sizes or probabilities above one.

    Examples
    --------
    >>> A, X, y = contextual_sbm(20, 2, 4.0, 0.9, 3, 1.0, rng=np.random.default_rng(0))
    >>> A.shape, X.shape, np.bincount(y).tolist()
    ((20, 20), (20, 3), [10, 10])
    """
    N = check_int("N", N, minimum=4)
    K = check_int("K", K, minimum=2, maximum=N // 2)
    avg_degree = check_real("avg_degree", avg_degree, minimum=0.0, strict_min=True)
    h = check_real("h", h, minimum=0.0, maximum=1.0)
    d = check_int("d", d, minimum=1)
    mu = check_real("mu", mu, minimum=0.0)
    rng = _check_rng(rng)
    y = np.arange(N) % K
    size = N / K
    p_in = h * avg_degree / (size - 1)
    p_out = (1 - h) * avg_degree / (N - size)
    if p_in > 1 or p_out > 1:
        raise ValueError(f"avg_degree={avg_degree} and h={h} need edge probabilities > 1")
    P = np.where(y[:, None] == y[None, :], p_in, p_out)
    U = rng.random((N, N))
    upper = np.triu(U < P, k=1)
    A = sp.csr_matrix(upper | upper.T, dtype=np.float64)
    M = mu * rng.standard_normal((K, d))
    X = M[y] + rng.standard_normal((N, d))
    keep = largest_component(A)
    return A[keep][:, keep].tocsr(), X[keep], y[keep]


def degree_preserving_rewire(A, nswaps: int, *, rng: np.random.Generator) -> sp.csr_matrix:
    """Randomise a graph while keeping every node's degree (networkx ``double_edge_swap``).

    Each swap replaces edges ``u-v, x-y`` by ``u-x, v-y``; after many swaps the graph is a sample from
    the configuration model with the same degree sequence: degrees survive, homophily and community
    structure do not.

    Parameters
    ----------
    A : sparse or array_like, shape (N, N)
        Symmetric 0/1 adjacency.
    nswaps : int
        Number of double-edge swaps, ``>= 1``.
    rng : numpy.random.Generator
        Source of randomness (keyword-only); an integer seed for networkx is drawn from it.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (N, N)
        Rewired adjacency on the same node order (it may be disconnected).

    Raises
    ------
    ValueError
        If ``A`` is invalid or ``nswaps < 1``.

    Examples
    --------
    >>> ring = np.roll(np.eye(6), 1, axis=1) + np.roll(np.eye(6), -1, axis=1)   # the 6-cycle
    >>> B = degree_preserving_rewire(ring, 2, rng=np.random.default_rng(0))
    >>> np.asarray(B.sum(axis=1)).ravel().tolist()
    [2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    """
    A = _check_adjacency("A", A)
    nswaps = check_int("nswaps", nswaps, minimum=1)
    rng = _check_rng(rng)
    G = nx.from_scipy_sparse_array(A)
    nx.double_edge_swap(G, nswap=nswaps, max_tries=100 * nswaps, seed=int(rng.integers(2**31 - 1)))
    return sp.csr_matrix(nx.to_scipy_sparse_array(G, nodelist=range(A.shape[0]), dtype=np.float64))


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
    zeros, as Cora's bag of words is), which is far cheaper than ``F Fᵀ`` when ``d`` is large.

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
    if not sp.issparse(X) and np.mean(X != 0) < 0.1:
        X = sp.csr_matrix(X)
    K = X @ X.T
    K = K.toarray() if sp.issparse(K) else np.asarray(K)
    S = _sym_norm_adjacency(A)
    for _ in range(hops):
        K = np.asarray((S @ (S @ K).T).T)
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
            alpha = scipy.linalg.solve(K[np.ix_(S, S)] + lam * np.eye(n), Y[S], assume_a="pos")
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
