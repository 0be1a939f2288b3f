r"""Subquadratic softmax attention at any temperature, for small head dimension.

Attention here is the un-scaled form used by Alman & Song (2023) and Gupta et al. (2026),

.. math:: \operatorname{Att}(Q,K,V) = D^{-1} A V,\qquad A = \exp(QK^\top)\ \text{(entrywise)},
          \qquad D = \operatorname{diag}(A\mathbf 1),

with :math:`Q, K \in [-B, B]^{n\times d}`. A temperature is absorbed into the entry bound :math:`B`.

:func:`fast_attention` uses the three ingredients of Gupta et al. (2026, arXiv:2505.14840):

1. **prune** keys whose logit is far (:math:`R=\ln(n/\varepsilon)`) below the row maximum;
2. **approximate** :math:`\exp` by a low-degree polynomial on a bounded logit interval;
3. **sum polynomial moments over space** with a range-searching structure.

It is a practical variant, not the paper's algorithm: ingredient 3 is a balanced kd-tree
(sorted dyadic blocks in 1-D) instead of simplex range searching, and ingredient 2 is a local
Taylor expansion of degree ``p`` on every tree cell whose logit range for the query is at most
``w``, instead of one global polynomial of degree :math:`O(\log(n/\varepsilon))`. Its error bound
(:func:`error_bound`) is rigorous for every input; its running time is subquadratic for
roughly uniform data, not for adversarial point sets.

The traversal is vectorised level by level over all (query, node) pairs; the only Python loops
run over tree levels and over distinct tree nodes (at most :math:`2n/b` of them), never over
queries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial import ConvexHull
from scipy.special import gammaln

from ._validation import as_array, check_int, check_real

__all__ = [
    "KeyTree",
    "multi_indices",
    "monomials",
    "build_tree",
    "row_max",
    "fast_attention",
    "global_poly_attention",
    "error_bound",
]


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
        If ``d < 1`` or ``p < 0``.
    """
    d = check_int("d", d, minimum=1)
    p = check_int("p", p, minimum=0)
    grids = np.stack(np.meshgrid(*([np.arange(p + 1)] * d), indexing="ij"), -1).reshape(-1, d)
    grids = grids[grids.sum(1) <= p]
    order = np.lexsort((*grids.T[::-1], grids.sum(1)))
    return grids[order]


def monomials(X, A) -> np.ndarray:
    r"""Monomials :math:`X_i^{\alpha}=\prod_t X_{it}^{\alpha_t}` from cumulative powers.

    Parameters
    ----------
    X : array, shape (m, d)
    A : int array, shape (n_alpha, d)
        Multi-indices (e.g. from :func:`multi_indices`).

    Returns
    -------
    ndarray, shape (m, n_alpha)

    Raises
    ------
    ValueError
        If ``X`` is not finite 2-D or the widths of ``X`` and ``A`` differ.
    """
    X = as_array("X", X, ndim=2)
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[1] != X.shape[1] or np.any(A < 0):
        raise ValueError(f"A must be a non-negative int array of shape (n_alpha, {X.shape[1]}), got {A.shape}")
    return _monomials(X, A)


def _monomials(X, A):
    """(m, n_alpha) monomials, one multiplication per multi-index (see :func:`_monomials_t`)."""
    return np.ascontiguousarray(_monomials_t(X, A).T)


def _monomials_t(X, A):
    """Transposed monomials, shape (n_alpha, m): row alpha = row (alpha - e_t) times X[:, t]."""
    out = np.empty((A.shape[0], X.shape[0]))
    index = {tuple(a): i for i, a in enumerate(A.tolist())}
    Xt = np.ascontiguousarray(X.T)
    for i, a in enumerate(A.tolist()):
        if not any(a):
            out[i] = 1.0
            continue
        t = next(t for t, at in enumerate(a) if at > 0)
        parent = list(a)
        parent[t] -= 1
        np.multiply(out[index[tuple(parent)]], Xt[t], out=out[i])
    return out


def _log_factorials(A):
    return gammaln(A + 1.0).sum(1)


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
    """
    w = check_real("w", w, minimum=0.0, strict_min=True)
    p = check_int("p", p, minimum=0)
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    eta = math.exp(w + (p + 1) * math.log(w / 2) - math.lgamma(p + 2))
    if eta + eps >= 1:
        raise ValueError(f"w={w}, p={p}, eps={eps} give eta+eps >= 1: no error bound")
    return 2 * (eta + eps) / (1 - eta - eps)


# --------------------------------------------------------------------------------------------
# The key tree
# --------------------------------------------------------------------------------------------
@dataclass
class KeyTree:
    """Balanced kd-tree over the keys with Taylor moments per node (built by :func:`build_tree`).

    Attributes
    ----------
    keys : ndarray, shape (N, d)
        Keys permuted into tree order and padded to ``N = leaf * 2**depth`` (pads repeat a key).
    values : ndarray, shape (N, d_v + 1)
        ``[V, 1]`` in tree order; pad rows are zero (they contribute nothing).
    lo, hi, centre : list of ndarray, each of shape (2**l, d)
        Bounding box of every node at level ``l``.
    moments : dict level -> (computed mask, dense moments)
        Cache of ``S[node, alpha] = sum_j (k_j - c)^alpha [V_j, 1]`` about the box centre ``c``,
        filled lazily by :meth:`dense_moments` for the nodes some query accepts.
    alphas : int ndarray, shape (n_alpha, d)
    log_fact : ndarray, shape (n_alpha,)
        ``log(alpha!)``.
    n : int
        Number of real keys.
    leaf : int
    depth : int
        Number of levels below the root (leaves are at level ``depth``).
    hull : ndarray, shape (h, d)
        Keys that can attain a row maximum (convex-hull vertices; min and max in 1-D).
    moment_work : int
        Monomial evaluations spent so far on node moments (``keys x n_alpha`` per computed node).
    """

    keys: np.ndarray
    values: np.ndarray
    lo: list
    hi: list
    centre: list
    moments: dict
    alphas: np.ndarray
    log_fact: np.ndarray
    n: int
    leaf: int
    depth: int
    hull: np.ndarray = field(repr=False)
    moment_work: int = 0

    @property
    def d(self) -> int:
        return self.keys.shape[1]

    def node_moments(self, level: int, nodes) -> np.ndarray:
        """Taylor moments of the given nodes at ``level``, shape (len(nodes), n_alpha, d_v + 1)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        N, d = self.keys.shape
        size = N >> level
        nv = self.values.shape[1]
        S = np.empty((nodes.size, len(self.alphas), nv))
        self.moment_work += int(nodes.size) * size * len(self.alphas)
        step = max(1, (1 << 20) // (size * len(self.alphas)))  # bound memory
        for s in range(0, nodes.size, step):
            nd = nodes[s:s + step]
            idx = (nd[:, None] * size + np.arange(size)).reshape(-1)
            u = self.keys[idx].reshape(nd.size, size, d) - self.centre[level][nd][:, None, :]
            mono = _monomials_t(u.reshape(-1, d), self.alphas).reshape(len(self.alphas), nd.size, size)
            vals = self.values[idx].reshape(nd.size, size, nv)
            for v in range(nv):
                S[s:s + step, :, v] = (mono * vals[None, :, :, v]).sum(-1).T
        return S

    def dense_moments(self, level: int, nodes) -> np.ndarray:
        """Dense moments of ``nodes``, shape (len(nodes), p+1, (p+1)**(d-1) * (d_v+1)), cached.

        Entry ``[i, a0, (a1, ..., v)]`` is ``S[node_i, alpha, v]`` for ``|alpha| <= p`` and 0
        otherwise, so that one product contracts the first coordinate's powers. Moments are
        computed on first use, only for nodes that some query accepts.
        """
        p, d, nv = int(self.alphas.sum(1).max()), self.d, self.values.shape[1]
        if level not in self.moments:
            self.moments[level] = (np.zeros(2**level, bool),
                                   np.zeros((2**level, p + 1, (p + 1) ** (d - 1) * nv)))
        done, cache = self.moments[level]
        nodes = np.asarray(nodes, dtype=np.int64)
        new = np.unique(nodes[~done[nodes]])
        if new.size:
            S = self.node_moments(level, new)
            dense = np.zeros((new.size, (p + 1) ** d, nv))
            dense[:, np.ravel_multi_index(tuple(self.alphas.T), (p + 1,) * d), :] = S
            cache[new] = dense.reshape(new.size, p + 1, -1)
            done[new] = True
        return cache[nodes]


def build_tree(K, V, *, leaf: int = 64, p: int = 24) -> KeyTree:
    r"""Build the balanced kd-tree over the keys (keys only, no queries).

    Level by level, every block of keys is sorted along its widest coordinate and cut in half
    (vectorised over blocks), until blocks hold ``leaf`` keys. Node moments about the box centres
    are computed lazily, only for nodes that some query accepts.

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
        On wrong shapes, non-finite entries or bad sizes.
    """
    K = as_array("K", K, ndim=2, min_size=1)
    V = as_array("V", V, ndim=2)
    if V.shape[0] != K.shape[0]:
        raise ValueError(f"V must have one row per key: K has {K.shape[0]} rows, V has {V.shape[0]}")
    leaf = check_int("leaf", leaf, minimum=1)
    p = check_int("p", p, minimum=0)
    n, d = K.shape
    depth = max(0, math.ceil(math.log2(max(n / leaf, 1.0))))
    N = leaf * 2**depth
    pad = N - n
    keys = np.concatenate([K, np.repeat(K[-1:], pad, 0)])
    vals = np.concatenate([np.hstack([V, np.ones((n, 1))]), np.zeros((pad, V.shape[1] + 1))])
    perm = np.arange(N)
    for level in range(depth):
        blocks = keys[perm].reshape(2**level, -1, d)
        spread = blocks.max(1) - blocks.min(1)
        axis = spread.argmax(1)
        coord = np.take_along_axis(blocks, axis[:, None, None], 2)[..., 0]
        order = np.argsort(coord, axis=1, kind="stable")
        perm = np.take_along_axis(perm.reshape(2**level, -1), order, 1).reshape(-1)
    keys, vals = keys[perm], vals[perm]
    alphas = multi_indices(d, p)
    lo, hi, centre = [], [], []
    for level in range(depth + 1):
        blocks = keys.reshape(2**level, -1, d)
        l, h = blocks.min(1), blocks.max(1)
        lo.append(l), hi.append(h), centre.append((l + h) / 2)
    if d == 1:
        hull = np.array([[K.min()], [K.max()]])
    else:
        try:
            hull = K[ConvexHull(K).vertices]
        except Exception:  # degenerate (collinear / too few points): every key is a candidate
            hull = K
    return KeyTree(keys, vals, lo, hi, centre, {}, alphas, _log_factorials(alphas),
                   n, leaf, depth, hull)


def row_max(Q, tree: KeyTree) -> np.ndarray:
    r"""Exact row maxima :math:`M_i=\max_j q_i\cdot k_j`, over the convex-hull vertices only.

    A linear function attains its maximum over a point set at a vertex of its convex hull, so
    the cost is :math:`O(n h)` with ``h`` hull vertices (2 in 1-D; ~10-30 for uniform 2-D data).

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
    """
    Q = as_array("Q", Q, ndim=2, shape=(None, tree.d))
    return np.einsum("it,ht->ih", Q, tree.hull).max(1)


# --------------------------------------------------------------------------------------------
# The query phase
# --------------------------------------------------------------------------------------------
def _groups(node):
    """Sort pair indices by node; yield (node id, pair indices) per distinct node."""
    if node.size == 0:
        return
    order = np.argsort(node, kind="stable")
    sn = node[order]
    cuts = np.flatnonzero(np.diff(sn)) + 1
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [len(sn)]])
    for s, e in zip(starts, ends):
        yield int(sn[s]), order[s:e]


def fast_attention(Q, tree: KeyTree, *, eps: float = 1e-6, w: float = 8.0, stats: dict | None = None):
    r"""Approximate :math:`\operatorname{Att}(Q,K,V)=\operatorname{softmax}(QK^\top)V` in subquadratic time.

    Level-synchronous traversal of ``tree`` for all queries at once. A (query ``i``, node) pair
    with logit range :math:`[s_{\min}, s_{\max}]` over the node's box is

    * **pruned** if :math:`s_{\max} < M_i - \ln(N/\varepsilon)` (each key weighs < eps/N);
    * **accepted** if :math:`s_{\max}-s_{\min}\le w` and the expansion is cheaper than the
      cell's keys (``r * n_alpha`` plus ``size * n_alpha`` for uncached moments, against
      ``r * size`` for the ``r`` queries accepting the node at this level): it adds
      :math:`e^{q_i\cdot c - M_i}\sum_{|\alpha|\le p} q_i^\alpha S_\alpha/\alpha!`;
    * **evaluated directly** at a leaf;
    * otherwise **split** into its two children.

    Parameters
    ----------
    Q : array, shape (n_q, d)
        Queries (no temperature scaling: logits are ``Q @ K.T``).
    tree : KeyTree
        From :func:`build_tree` (holds keys, values and the Taylor degree).
    eps : float, default 1e-6
        Pruned mass, relative to the row's (max-shifted) partition function; in (0, 1).
    w : float, default 8.0
        Maximum logit range of an accepted cell (> 0).
    stats : dict, optional
        If given, filled with operation counts: ``visits`` (pairs examined), ``accepted``,
        ``accepted_keys`` (keys inside accepted cells), ``direct`` (kernel evaluations at leaves),
        ``pruned``, ``n_alpha``, ``hull`` (hull size), ``moments`` (monomial evaluations for
        node moments computed in this call) and the total ``work`` =
        ``visits + accepted * n_alpha + direct + n_q * hull + moments``, to compare with the
        ``n_q * n`` kernel evaluations of exact attention.

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
    Gupta et al. (2026), Sec. on constant dimension: prune, polynomial approximation, range
    searching. Here kd-tree + local Taylor (see the module docstring for the departures).
    """
    Q = as_array("Q", Q, ndim=2, shape=(None, tree.d))
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    w = check_real("w", w, minimum=0.0, strict_min=True)
    nq = Q.shape[0]
    N = tree.keys.shape[0]
    R = math.log(N / eps)
    M = row_max(Q, tree)
    p = int(tree.alphas.sum(1).max())
    # PW[i, t, a] = q_it^a / a!  (powers of each coordinate, factorial folded in)
    PW = np.cumprod(np.concatenate([np.ones((nq, tree.d, 1)),
                                    Q[:, :, None] / np.arange(1, p + 1)], 2), axis=2)
    acc = np.zeros((nq, tree.values.shape[1]))
    st = dict(visits=0, accepted=0, accepted_keys=0, direct=0, pruned=0)
    moment_work0 = tree.moment_work
    qi = np.arange(nq)
    node = np.zeros(nq, dtype=np.int64)
    for level in range(tree.depth + 1):
        if qi.size == 0:
            break
        size = N >> level
        st["visits"] += qi.size
        q = Q[qi]
        a, b = q * tree.lo[level][node], q * tree.hi[level][node]
        smax, smin = np.maximum(a, b).sum(1), np.minimum(a, b).sum(1)
        keep = smax >= M[qi] - R
        st["pruned"] += int(qi.size - keep.sum())
        qi, node, smax, smin = qi[keep], node[keep], smax[keep], smin[keep]
        acc_mask = smax - smin <= w
        if acc_mask.any():
            # Use the Taylor expansion only where it is cheaper than evaluating the cell's keys:
            # r queries cost r * n_alpha, plus size * n_alpha once if the moments are not cached,
            # against r * size kernel evaluations. Otherwise the pair keeps descending (and is
            # evaluated directly at the leaf); the error bound is unaffected.
            n_alpha = len(tree.alphas)
            uniq, inv, count = np.unique(node[acc_mask], return_inverse=True, return_counts=True)
            cached = tree.moments[level][0][uniq] if level in tree.moments else np.zeros(uniq.size, bool)
            worth = count * n_alpha + np.where(cached, 0, size * n_alpha) < count * size
            acc_mask[acc_mask] = worth[inv]
        # accepted cells: local Taylor expansion about the box centre
        ia, na = qi[acc_mask], node[acc_mask]
        if ia.size:
            scale = np.exp((smax[acc_mask] + smin[acc_mask]) / 2 - M[ia])
            tree.dense_moments(level, np.unique(na))        # fill the moment cache once per level
            cache = tree.moments[level][1]
            for nd, idx in _groups(na):
                rows = ia[idx]
                pw = PW[rows]
                T = np.einsum("ra,ab->rb", pw[:, 0, :], cache[nd])  # contract the first coordinate
                for t in range(1, tree.d):       # then the others, one at a time
                    T = np.einsum("rab,ra->rb", T.reshape(rows.size, p + 1, -1), pw[:, t, :])
                acc[rows] += scale[idx, None] * T
            st["accepted"] += int(ia.size)
            st["accepted_keys"] += int(ia.size) * size
        rest = ~acc_mask
        if level == tree.depth:
            il, nl = qi[rest], node[rest]
            for nd, idx in _groups(nl):
                rows = il[idx]
                kb = tree.keys[nd * size:(nd + 1) * size]
                vb = tree.values[nd * size:(nd + 1) * size]
                logits = np.einsum("rt,jt->rj", Q[rows], kb) - M[rows, None]
                acc[rows] += np.einsum("rj,jv->rv", np.exp(logits), vb)
            st["direct"] += int(il.size) * size
        else:
            qi = np.repeat(qi[rest], 2)
            node = (2 * np.repeat(node[rest], 2)) + np.tile([0, 1], int(rest.sum()))
    if stats is not None:
        stats.clear()
        stats.update(st)
        stats["n_alpha"] = len(tree.alphas)
        stats["hull"] = len(tree.hull)
        stats["moments"] = tree.moment_work - moment_work0
        stats["work"] = (st["visits"] + st["accepted"] * len(tree.alphas) + st["direct"]
                         + nq * len(tree.hull) + stats["moments"])
    return acc[:, :-1] / acc[:, -1:]


def global_poly_attention(Q, K, V, *, p: int = 24) -> np.ndarray:
    r"""The polynomial method without pruning or localisation (Alman & Song-style contrast).

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
        On wrong shapes, non-finite entries or ``p < 0``.
    """
    K = as_array("K", K, ndim=2, min_size=1)
    Q = as_array("Q", Q, ndim=2, shape=(None, K.shape[1]))
    V = as_array("V", V, ndim=2, shape=(K.shape[0], None))
    p = check_int("p", p, minimum=0)
    A = multi_indices(K.shape[1], p)
    S = _monomials(K, A).T @ np.hstack([V, np.ones((K.shape[0], 1))])
    num = (_monomials(Q, A) * np.exp(-_log_factorials(A))) @ S
    return num[:, :-1] / num[:, -1:]
