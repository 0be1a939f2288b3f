"""Compiled kernels of :mod:`paperlib.transformers.fast_attention` (numba, private).

The inputs are validated by the public functions of :mod:`paperlib.transformers.fast_attention`; nothing here
checks them. Every kernel takes a half-open range ``[i0, i1)`` of independent work items (leaves,
nodes of one level, queries) and releases the GIL, so :func:`paperlib.transformers.fast_attention._in_threads`
can spread the range over the cores.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_FM = {"reassoc", "contract", "nsz", "arcp"}  # lets LLVM vectorise dot products; no NaN/inf assumptions


@njit(cache=True, nogil=True, fastmath=_FM)
def _leaf_moments(i0, i1, keys, vals, centre, h0, size, parent, coord, inv_fact, T):
    """T[h] = sum_j (k_j - c_h)^alpha / alpha! [v_j, 1] for the leaves h = h0 + i, i0 <= i < i1."""
    n_alpha, nv = T.shape[2], vals.shape[1]
    mono = np.empty(n_alpha)
    for i in range(i0, i1):
        h = h0 + i
        mono[0] = 1.0
        for j in range(i * size, (i + 1) * size):
            for a in range(1, n_alpha):
                mono[a] = mono[parent[a]] * (keys[j, coord[a]] - centre[h, coord[a]])
            for c in range(nv):
                for a in range(n_alpha):
                    T[h, c, a] += mono[a] * vals[j, c]
        for c in range(nv):
            for a in range(n_alpha):
                T[h, c, a] *= inv_fact[a]


@njit(cache=True, nogil=True, fastmath=_FM)
def _shift_moments(i0, i1, centre, h0, down, T):
    """Inner nodes from their children, one coordinate at a time (the shift factorises over t):
    T_a(c) = sum_k (c'_t - c_t)^k / k! T_{a - k e_t}(c'), applied for t = 1..d."""
    nv, n_alpha, d = T.shape[1], T.shape[2], centre.shape[1]
    src, dst = np.empty((nv, n_alpha)), np.empty((nv, n_alpha))
    for i in range(i0, i1):
        h = h0 + i
        for child in range(2 * h + 1, 2 * h + 3):
            for c in range(nv):
                for a in range(n_alpha):
                    src[c, a] = T[child, c, a]
            for t in range(d):
                delta = centre[child, t] - centre[h, t]
                for a in range(n_alpha):
                    for c in range(nv):
                        dst[c, a] = 0.0
                    idx, coef, k = a, 1.0, 0
                    while idx >= 0:
                        for c in range(nv):
                            dst[c, a] += coef * src[c, idx]
                        k += 1
                        coef *= delta / k
                        idx = down[t, idx]
                src, dst = dst, src
            for c in range(nv):
                for a in range(n_alpha):
                    T[h, c, a] += src[c, a]


@njit(cache=True, nogil=True)
def _widest_axis(blocks):
    """Coordinate of largest spread of every block; blocks has shape (n_blocks, size, d)."""
    nb, size, d = blocks.shape
    axis = np.zeros(nb, np.int64)
    for b in range(nb):
        best = -1.0
        for t in range(d):
            lo, hi = blocks[b, 0, t], blocks[b, 0, t]
            for j in range(size):
                lo, hi = min(lo, blocks[b, j, t]), max(hi, blocks[b, j, t])
            if hi - lo > best:
                best, axis[b] = hi - lo, t
    return axis


@njit(cache=True)
def _boxes(keys, depth, leaf):
    """Bounding boxes of all nodes in heap order: leaves from their keys, parents from children."""
    d, first = keys.shape[1], (1 << depth) - 1
    lo, hi = np.empty((2 * first + 1, d)), np.empty((2 * first + 1, d))
    for i in range(1 << depth):
        for t in range(d):
            lo[first + i, t], hi[first + i, t] = np.inf, -np.inf
            for j in range(i * leaf, (i + 1) * leaf):
                lo[first + i, t] = min(lo[first + i, t], keys[j, t])
                hi[first + i, t] = max(hi[first + i, t], keys[j, t])
    for h in range(first - 1, -1, -1):
        for t in range(d):
            lo[h, t] = min(lo[2 * h + 1, t], lo[2 * h + 2, t])
            hi[h, t] = max(hi[2 * h + 1, t], hi[2 * h + 2, t])
    return lo, hi


@njit(cache=True, fastmath=_FM)
def _box(q, lo, hi, h):
    """Largest and smallest logit q.k over the bounding box of node h."""
    smax, smin = 0.0, 0.0
    for t in range(q.shape[0]):
        a, b = q[t] * lo[h, t], q[t] * hi[h, t]
        smax += max(a, b)
        smin += min(a, b)
    return smax, smin


@njit(cache=True, fastmath=_FM)
def _max_logit(q, keys, lo, hi, leaf, stack, cnt):
    """Branch and bound for max_j q.k_j: visit the more promising child first, skip hopeless boxes."""
    best, top = -np.inf, 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, keys.shape[0]
    while top >= 0:
        h, start, size = stack[top, 0], stack[top, 1], stack[top, 2]
        top -= 1
        cnt[6] += 1
        if _box(q, lo, hi, h)[0] <= best:
            continue
        if size == leaf:
            cnt[7] += size
            for j in range(start, start + size):
                s = 0.0
                for t in range(q.shape[0]):
                    s += q[t] * keys[j, t]
                best = max(best, s)
            continue
        half, a, b = size // 2, 2 * h + 1, 2 * h + 2
        first = a if _box(q, lo, hi, a)[0] < _box(q, lo, hi, b)[0] else b
        for child in (first, a + b - first):      # the better child is pushed last, popped first
            top += 1
            stack[top, 0], stack[top, 2] = child, half
            stack[top, 1] = start if child == a else start + half
    return best


@njit(cache=True, nogil=True, fastmath=_FM)
def _row_max(i0, i1, Q, keys, lo, hi, depth, leaf, M):
    stack, cnt = np.empty((2 * depth + 4, 3), np.int64), np.zeros(8, np.int64)
    for i in range(i0, i1):
        M[i] = _max_logit(Q[i], keys, lo, hi, leaf, stack, cnt)


@njit(cache=True, nogil=True, fastmath=_FM)
def _traverse(i0, i1, Q, keys, vals, lo, hi, T, depth, leaf, R, w, parent, coord, acc, counts):
    """Queries i0..i1-1: row max, then a depth-first walk that prunes, accepts or evaluates leaves."""
    d, nv, n_alpha = Q.shape[1], vals.shape[1], T.shape[2]
    stack = np.empty((2 * depth + 4, 3), np.int64)
    mono = np.empty(n_alpha)
    for i in range(i0, i1):
        q, cnt = Q[i], counts[i]
        M = _max_logit(q, keys, lo, hi, leaf, stack, cnt)
        floor = M - R
        mono[0] = 1.0
        for a in range(1, n_alpha):
            mono[a] = mono[parent[a]] * q[coord[a]]
        top = 0
        stack[0, 0], stack[0, 1], stack[0, 2] = 0, 0, keys.shape[0]
        while top >= 0:
            h, start, size = stack[top, 0], stack[top, 1], stack[top, 2]
            top -= 1
            cnt[0] += 1
            smax, smin = _box(q, lo, hi, h)
            if smax < floor:                      # every key weighs < eps / N
                cnt[1] += 1
            elif smax - smin <= w:                # local Taylor expansion about the centre
                scale = math.exp(0.5 * (smax + smin) - M)
                for c in range(nv):
                    s = 0.0
                    for a in range(n_alpha):
                        s += mono[a] * T[h, c, a]
                    acc[i, c] += scale * s
                cnt[2] += 1
                cnt[3] += size
            elif size == leaf:                    # direct evaluation (pruned keys skipped)
                cnt[4] += size
                for j in range(start, start + size):
                    s = 0.0
                    for t in range(d):
                        s += q[t] * keys[j, t]
                    if s >= floor:
                        e = math.exp(s - M)
                        cnt[5] += 1
                        for c in range(nv):
                            acc[i, c] += e * vals[j, c]
            else:
                half = size // 2
                top += 1
                stack[top, 0], stack[top, 1], stack[top, 2] = 2 * h + 1, start, half
                top += 1
                stack[top, 0], stack[top, 1], stack[top, 2] = 2 * h + 2, start + half, half
