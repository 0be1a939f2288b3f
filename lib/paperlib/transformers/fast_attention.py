r"""Subquadratic softmax attention at any temperature, for small head dimension.

Attention here is the un-scaled form used by Alman & Song (2023) and Gupta et al. (2026),

.. math:: \operatorname{Att}(Q,K,V) = D^{-1} A V,\qquad A = \exp(QK^\top)\ \text{(entrywise)},
          \qquad D = \operatorname{diag}(A\mathbf 1),

with :math:`Q, K \in [-B, B]^{n\times d}`. A temperature is absorbed into the entry bound :math:`B`.

:func:`fast_attention` uses the three ingredients of Gupta et al. (2026, arXiv:2505.14840):

1. **prune** keys whose logit is more than :math:`R=\ln(N/\varepsilon)` below the row maximum;
2. **approximate** :math:`\exp` by a polynomial of fixed degree on a bounded logit interval;
3. **sum polynomial moments over space** with a range-searching structure.

It is a practical variant, not the paper's algorithm: ingredient 3 is a balanced kd-tree (sorted
dyadic blocks in 1-D) instead of simplex range searching (Matousek 1992), and ingredient 2 is a local
Taylor expansion of degree ``p`` on every tree cell whose logit range for the query is at most ``w``,
instead of one polynomial of degree :math:`O(\log(n/\varepsilon))`. Its error bound
(:func:`error_bound`) is rigorous for every input; its running time is subquadratic for well-spread
data, not for adversarial point sets.

Implementation: the build (kd order, boxes) is vectorised numpy; the moments of every node (about
its box centre, leaves directly, inner nodes by the exact binomial shift of their children's) and
the per-query traversal are compiled with numba (``_fast_attention_kernels``) and run on all cores
in threads (leaves, nodes of a level and queries are independent).

References
----------
.. [#fast-attention-1] S. Gupta, B. Huang, B. Saha, Y. Xu, C. Ye, "Subquadratic Algorithms and Hardness for
   Attention with Any Temperature", ICLR 2026 (arXiv:2505.14840), main upper bound.
.. [#fast-attention-2] J. Alman, Z. Song, "Fast Attention Requires Bounded Entries", NeurIPS 2023.
.. [#fast-attention-3] J. Matousek, "Efficient Partition Trees", Discrete Comput. Geom. 8(3):315-334, 1992.
.. [#fast-attention-4] J. L. Bentley, "Multidimensional Binary Search Trees Used for Associative Searching",
   Commun. ACM 18(9):509-517, 1975.
.. [#fast-attention-5] L. Greengard, J. Strain, "The Fast Gauss Transform", SIAM J. Sci. Stat. Comput.
   12(1):79-94, 1991 (moments about cell centres and their shift to the parent cell).
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ._fast_attention_kernels import _boxes, _leaf_moments, _row_max, _shift_moments, _traverse, _widest_axis
from ..core._validation import as_array, check_bool, check_int, check_memory, check_option, check_real

__all__ = [
    "KeyTree",
    "multi_indices",
    "monomials",
    "build_tree",
    "row_max",
    "fast_attention",
    "global_poly_attention",
    "error_bound",
    "attention_inputs",
]

# the polynomial bookkeeping, the error bound and the global polynomial method live in a private module
from ._fast_attention_polynomials import (  # noqa: F401
    _check_table_memory,
    _n_alpha,
    _parents,
    _tables,
    error_bound,
    global_poly_attention,
    monomials,
    multi_indices,
)

_COUNTS = ("visits", "pruned", "accepted", "accepted_keys", "direct", "exps", "max_visits", "max_evals")


def _in_threads(kernel, n, *args):
    """Run ``kernel(i0, i1, *args)`` over chunks of ``range(n)`` on all cores (the kernels release the GIL)."""
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if workers == 1 or n < 256:
        kernel(0, n, *args)
        return
    cuts = np.linspace(0, n, 8 * workers + 1).astype(int)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda k: kernel(cuts[k], cuts[k + 1], *args), range(len(cuts) - 1)))


# --------------------------------------------------------------------------------------------
# The key tree
# --------------------------------------------------------------------------------------------
@dataclass
class KeyTree:
    """Balanced kd-tree over the keys with Taylor moments of every node (built by :func:`build_tree`).

    Nodes are numbered in heap order: the root is 0, the children of ``h`` are ``2h+1`` and
    ``2h+2``; a node at level ``l`` covers a contiguous block of ``leaf * 2**(depth - l)`` keys.

    Attributes
    ----------
    keys : ndarray, shape (N, d)
        Keys permuted into tree order and padded to ``N = leaf * 2**depth`` (pads repeat a key).
    values : ndarray, shape (N, d_v + 1)
        ``[V, 1]`` in tree order; pad rows are zero (they contribute nothing).
    lo, hi, centre : ndarray, shape (2N/leaf - 1, d)
        Bounding box of every node and its centre.
    moments : ndarray, shape (2N/leaf - 1, d_v + 1, n_alpha)
        ``T[h, v, alpha] = sum_j (k_j - c_h)^alpha / alpha! * [V_j, 1]_v``.
    alphas : int ndarray, shape (n_alpha, d)
    n, leaf, depth : int
        Number of real keys, leaf size, number of levels below the root.
    moment_work : int
        Multiply-adds spent on the moments (``N * n_alpha`` at the leaves plus the shifts).
    """

    keys: np.ndarray
    values: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    centre: np.ndarray
    moments: np.ndarray = field(repr=False)
    alphas: np.ndarray
    n: int
    leaf: int
    depth: int
    moment_work: int

    @property
    def d(self) -> int:
        return self.keys.shape[1]

    @property
    def p(self) -> int:
        return int(self.alphas.sum(1).max())


def build_tree(K, V, *, leaf: int = 64, p: int = 24) -> KeyTree:
    r"""Build the balanced kd-tree over the keys, with the Taylor moments of every node.

    Level by level, every block of keys is sorted along its widest coordinate and cut in half,
    until blocks hold ``leaf`` keys. Moments about the box centres are computed directly at the
    leaves and shifted exactly to the parents,
    :math:`T_\alpha(c)=\sum_{\beta\le\alpha}\frac{(c'-c)^{\alpha-\beta}}{(\alpha-\beta)!}T_\beta(c')`,
    one coordinate at a time.

    Parameters
    ----------
    K : array, shape (n, d)
        Keys.
    V : array, shape (n, d_v)
        Values.
    leaf : int, default 64
        Leaf size ``b`` (>= 1).
    p : int, default 24
        Taylor degree (>= 0); with ``w = 8`` the error bound is 2.4e-6 (:func:`error_bound`).

    Returns
    -------
    KeyTree

    Raises
    ------
    ValueError
        On wrong shapes, non-finite entries or bad sizes, or when the padded keys (``leaf * 2**depth``
        rows), the multi-index table or the node moments would exceed
        ``paperlib.core._validation.memory_limit`` (8 GiB by default), naming ``leaf`` or ``p``.

    Examples
    --------
    >>> K = np.linspace(-1.0, 1.0, 8)[:, None]; V = np.ones((8, 1))
    >>> tree = build_tree(K, V, leaf=2, p=3)
    >>> tree.depth, tree.moments.shape, float(tree.moments[0, 1, 0])   # root: 8 keys, degree 0
    (2, (7, 2, 4), 8.0)
    """
    K = as_array("K", K, ndim=2, min_size=1)
    V = as_array("V", V, ndim=2, shape=(None, None))
    if V.shape[0] != K.shape[0]:
        raise ValueError(f"V must have one row per key: K has {K.shape[0]} rows, V has {V.shape[0]}")
    leaf = check_int("leaf", leaf, minimum=1)
    p = check_int("p", p, minimum=0)
    n, d = K.shape
    depth = max(0, math.ceil(math.log2(max(n / leaf, 1.0))))
    N = leaf * 2**depth
    check_memory("leaf", 8 * N * (d + V.shape[1] + 2), what=f"{N} padded keys and values (N = leaf * 2**depth)")
    _check_table_memory(d, p)
    check_memory("p", 8 * (2 * 2**depth - 1) * (V.shape[1] + 1) * _n_alpha(d, p),
                 what="the moments of every tree node")
    keys = np.concatenate([K, np.repeat(K[-1:], N - n, 0)])
    vals = np.concatenate([np.hstack([V, np.ones((n, 1))]), np.zeros((N - n, V.shape[1] + 1))])
    perm = np.arange(N)
    for level in range(depth):                     # sort every block along its widest coordinate
        blocks = keys[perm].reshape(2**level, -1, d)
        axis = _widest_axis(blocks) if d > 1 else np.zeros(2**level, np.int64)
        coord = np.take_along_axis(blocks, axis[:, None, None], 2)[..., 0]
        order = np.argsort(coord, axis=1, kind="stable")
        perm = np.take_along_axis(perm.reshape(2**level, -1), order, 1).reshape(-1)
    keys, vals = np.ascontiguousarray(keys[perm]), np.ascontiguousarray(vals[perm])
    lo, hi = _boxes(keys, depth, leaf)
    centre = (lo + hi) / 2
    A, parent, coord, inv_fact, down = _tables(d, p)
    T = np.zeros((len(lo), vals.shape[1], len(A)))
    _in_threads(_leaf_moments, 2**depth, keys, vals, centre, 2**depth - 1, leaf, parent, coord, inv_fact, T)
    for level in range(depth - 1, -1, -1):
        _in_threads(_shift_moments, 2**level, centre, 2**level - 1, down, T)
    work = N * len(A) + (2**depth - 1) * 2 * int(A.sum() + d * len(A))
    return KeyTree(keys, vals, lo, hi, centre, T, A, n, leaf, depth, work)


def row_max(Q, tree: KeyTree) -> np.ndarray:
    r"""Exact row maxima :math:`M_i=\max_j q_i\cdot k_j` by branch and bound on the tree.

    A box whose largest possible logit does not beat the best key found so far is skipped; the
    more promising child is searched first. In 1-D this walks straight to the extreme key.

    Parameters
    ----------
    Q : array, shape (n_q, d)
    tree : KeyTree

    Returns
    -------
    ndarray, shape (n_q,)

    Raises
    ------
    ValueError
        If ``Q`` is not finite or its width differs from the keys'.

    Examples
    --------
    >>> tree = build_tree([[-1.0], [0.5], [2.0]], [[1.0], [2.0], [3.0]], leaf=1, p=2)
    >>> row_max([[1.0], [-1.0]], tree).tolist()
    [2.0, 1.0]
    """
    Q = as_array("Q", Q, ndim=2, shape=(None, tree.d))
    M = np.empty(Q.shape[0])
    _in_threads(_row_max, Q.shape[0], np.ascontiguousarray(Q), tree.keys, tree.lo, tree.hi, tree.depth, tree.leaf, M)
    return M


# --------------------------------------------------------------------------------------------
# The query phase
# --------------------------------------------------------------------------------------------
def fast_attention(Q, tree: KeyTree, *, eps: float = 1e-6, w: float = 8.0, prune: bool = True,
                   stats: dict | None = None):
    r"""Approximate :math:`\operatorname{Att}(Q,K,V)=\operatorname{softmax}(QK^\top)V` in subquadratic time.

    For every query a depth-first walk of ``tree``; a node whose box gives logits in
    :math:`[s_{\min}, s_{\max}]` is

    * **pruned** if :math:`s_{\max} < M_i - \ln(N/\varepsilon)` (each key weighs < eps/N);
    * **accepted** if :math:`s_{\max}-s_{\min}\le w`: it adds
      :math:`e^{q_i\cdot c - M_i}\sum_{|\alpha|\le p} q_i^\alpha T_\alpha(\text{node})`;
    * **evaluated directly** at a leaf (keys below :math:`M_i-\ln(N/\varepsilon)` skipped);
    * otherwise **split** into its two children.

    Parameters
    ----------
    Q : array, shape (n_q, d)
        Queries (no temperature scaling: logits are ``Q @ K.T``).
    tree : KeyTree
        From :func:`build_tree` (holds keys, values, moments and the Taylor degree).
    eps : float, default 1e-6
        Pruned mass, relative to the row's (max-shifted) partition function; in (0, 1).
    w : float, default 8.0
        Maximum logit range of an accepted cell (> 0).
    prune : bool, default True
        ``False`` switches pruning off (a control: every key is then expanded or evaluated, and
        the error bound drops its ``eps`` part).
    stats : dict, optional
        If given, filled with operation counts: ``visits`` (nodes examined), ``pruned``,
        ``accepted``, ``accepted_keys`` (keys inside accepted cells), ``direct`` (keys examined in
        leaves), ``exps`` (of those, the ones exponentiated), ``max_visits`` and ``max_evals``
        (nodes and keys of the row-max search), ``n_alpha``, ``moments`` (the tree's moment
        multiply-adds) and the total ``work`` = ``visits + accepted * n_alpha + direct +
        max_visits + max_evals + moments``, to compare with the ``n_q * n`` kernel
        evaluations of exact attention.

    Returns
    -------
    ndarray, shape (n_q, d_v)
        Error at most ``error_bound(w, p, eps) * max|V|`` per entry.

    Raises
    ------
    ValueError
        On a wrong shape, non-finite queries, or out-of-range ``eps`` / ``w``.

    Notes
    -----
    Gupta et al. (2026), main upper bound (constant d): prune, polynomial approximation, range
    searching. Here a kd-tree and local Taylor expansions (see the module docstring).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Q, K = rng.uniform(-30, 30, (2, 500, 1)); V = rng.uniform(-1, 1, (500, 1))
    >>> out = fast_attention(Q, build_tree(K, V, leaf=16), eps=1e-6, w=8.0)
    >>> S = Q @ K.T; P = np.exp(S - S.max(1, keepdims=True))
    >>> bool(np.abs(out - P @ V / P.sum(1, keepdims=True)).max() < error_bound())
    True
    """
    Q = np.ascontiguousarray(as_array("Q", Q, ndim=2, shape=(None, tree.d)))
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    w = check_real("w", w, minimum=0.0, strict_min=True)
    prune = check_bool("prune", prune)
    nq = Q.shape[0]
    _, parent, coord, _, _ = _tables(tree.d, tree.p)
    order = np.lexsort(Q.T[::-1])      # neighbouring queries visit the same cells: better cache use
    acc = np.zeros((nq, tree.values.shape[1]))
    counts = np.zeros((nq, len(_COUNTS)), np.int64)
    _in_threads(_traverse, nq, np.ascontiguousarray(Q[order]), tree.keys, tree.values, tree.lo, tree.hi, tree.moments, tree.depth, tree.leaf,
              math.log(tree.keys.shape[0] / eps) if prune else math.inf, w, parent, coord, acc, counts)
    if stats is not None:
        stats.clear()
        stats.update(zip(_COUNTS, (int(c) for c in counts.sum(0))))
        stats["n_alpha"] = len(tree.alphas)
        stats["moments"] = tree.moment_work
        stats["work"] = (stats["visits"] + stats["accepted"] * stats["n_alpha"] + stats["direct"]
                         + stats["max_visits"] + stats["max_evals"] + stats["moments"])
    out = np.empty((nq, acc.shape[1] - 1))
    out[order] = acc[:, :-1] / acc[:, -1:]
    return out


_LAYOUTS = ("uniform", "axis", "mixture", "band")


def attention_inputs(n: int, d: int, B: float, *, layout: str = "uniform", rng):
    r"""Queries, keys and values with entries bounded by ``B``, in one of four layouts.

    * ``"uniform"``: :math:`Q, K` uniform on :math:`[-B, B]^{n\times d}`;
    * ``"axis"``: keys uniform as above, queries on the first coordinate axis,
      :math:`q_i = (s_i, 0, \dots, 0)` with :math:`s_i` uniform on :math:`[-B, B]`: every query's
      pruning window is then a strip along a face of the key cube (the hardest spread input we found
      for our kd-tree);
    * ``"mixture"``: queries uniform, keys from a mixture of 5 Gaussians (centres uniform on
      :math:`[-0.7, 0.7]^d`, standard deviation 0.1) rescaled so that :math:`\max|K| = B`;
    * ``"band"`` (``d >= 2``): keys on a thin band along the diagonal of the first two coordinates,
      :math:`k = (a,\ a + g z, 0, \dots)` with :math:`a` uniform on :math:`[-(B-g), B-g]`, :math:`z`
      uniform on :math:`[-1, 1]` and :math:`g = \min(8/B, B/2)`; queries across it,
      :math:`q = (t, -t, 0, \dots)` with :math:`t` uniform on :math:`[B/2, B]`. Every logit
      :math:`q\cdot k = -t g z` lies in :math:`[-8, 8]`, so no key is ever pruned, while an
      axis-aligned box of sides :math:`\Delta_1, \Delta_2` has logit range :math:`t(\Delta_1+\Delta_2)`:
      a Taylor cell of range at most :math:`w` has area at most :math:`(w/2t)^2`, so covering the band
      (area about :math:`4Bg = 32` when :math:`B \ge 4`) takes about :math:`32B^2/w^2` cells per query
      (an area count). An input that is bad for every method whose Taylor cells are axis-aligned boxes
      (ours): at ``B = sqrt(n)/2`` no cell is accepted and every key is evaluated directly.

    Values are uniform on :math:`[-1, 1]^{n\times 1}`.

    Parameters
    ----------
    n : int
        Number of tokens (>= 1).
    d : int
        Head dimension (>= 1).
    B : float
        Entry bound (> 0); a temperature :math:`\tau` corresponds to :math:`B/\sqrt\tau`.
    layout : {"uniform", "axis", "mixture", "band"}, default "uniform"
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    Q, K : ndarray, shape (n, d)
    V : ndarray, shape (n, 1)

    Raises
    ------
    ValueError
        On a non-positive size or bound, an unknown layout, ``layout="band"`` with ``d < 2``, an
        ``rng`` that is not a Generator, or ``n * d`` too large for
        ``paperlib.core._validation.memory_limit`` (8 GiB by default).

    Examples
    --------
    >>> Q, K, V = attention_inputs(4, 2, 3.0, layout="axis", rng=np.random.default_rng(0))
    >>> Q.shape, K.shape, V.shape, float(np.abs(Q[:, 1]).max()), bool(np.abs(K).max() <= 3.0)
    ((4, 2), (4, 2), (4, 1), 0.0, True)
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    B = check_real("B", B, minimum=0.0, strict_min=True)
    layout = check_option("layout", layout, _LAYOUTS)
    check_memory("n", 8 * 4 * n * d, what="the arrays Q and K of shape (n, d)")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    if layout == "band" and d < 2:
        raise ValueError(f"layout='band' needs d >= 2 (a band along the diagonal of two coordinates), got d={d}")
    Q = rng.uniform(-B, B, (n, d))
    K = rng.uniform(-B, B, (n, d))
    if layout == "band":
        g = min(8.0 / B, B / 2.0)
        a = rng.uniform(-(B - g), B - g, n)
        K = np.zeros((n, d))
        K[:, 0], K[:, 1] = a, a + g * rng.uniform(-1.0, 1.0, n)
        t = rng.uniform(B / 2.0, B, n)
        Q = np.zeros((n, d))
        Q[:, 0], Q[:, 1] = t, -t
    elif layout == "axis":
        Q[:, 1:] = 0.0
    elif layout == "mixture":
        centres = rng.uniform(-0.7, 0.7, (5, d))
        K = centres[rng.integers(0, 5, n)] + 0.1 * rng.standard_normal((n, d))
        K *= B / np.abs(K).max()
    return Q, K, rng.uniform(-1, 1, (n, 1))
