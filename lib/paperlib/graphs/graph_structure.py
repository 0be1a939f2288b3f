"""Graph structure for the GNN minimax chapter: validation, components, spectra, random models.

The structural side of Theorem 2 of Ghasemi & Pishro-Nik (ICLR 2026): the spectral gap
:func:`normalized_laplacian_lambda2` of the normalised Laplacian (the paper's spectral-homophily
condition ``λ₂(𝓛) ≤ κ / log n``), :func:`edge_homophily`, :func:`largest_component`, and the two
random graph models the chapter uses as controls: :func:`contextual_sbm` (a contextual stochastic
block model with prescribed homophily) and :func:`degree_preserving_rewire` (double-edge swaps).

References
----------
.. [#graph-structure-1] A. Ghasemi and H. Pishro-Nik, "Minimax Sample Complexity of Graph Neural Networks: Lower
   Bounds and Structural Effects", ICLR 2026, https://openreview.net/forum?id=P2GIT8LpV2
   (Theorem 2 / Eq. 8, Table 1 spectral gaps).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph
import scipy.sparse.linalg

from ..core._validation import as_array, check_int, check_memory, check_real

__all__ = [
    "largest_component",
    "normalized_laplacian_lambda2",
    "edge_homophily",
    "contextual_sbm",
    "degree_preserving_rewire",
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
        On invalid sizes or probabilities above one, or when the dense ``N x N`` draw (about
        ``18 N**2`` bytes) would exceed ``paperlib.core._validation.memory_limit`` (8 GiB by default).

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
    # P and U (float64) and two boolean N x N masks, before the sparse matrix: estimated before any of them
    check_memory("N", N * N * (8 + 8 + 1 + 1) + 8 * N * d, what="the dense N x N edge draw")
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
