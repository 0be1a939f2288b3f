"""Part 2 of :mod:`paperlib.online.test_time_scaling`: self-consistency on any answer distribution, exactly.

This private module holds the exact computations used by the search over answer distributions: an
answer distribution with a prescribed gap and given competitor proportions
(:func:`distribution_with_gap`) and the exact success probability of self-consistency on any finite
answer distribution (:func:`sc_success_exact`), together with the gap validator shared with Part 1.
Everything here is re-exported by :mod:`paperlib.online.test_time_scaling`, which is where it is
documented and should be imported from.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from ..core._validation import as_array, check_int, check_probability


def _check_gap(name, value) -> float:
    return check_probability(name, value, open_interval=True)


# ----------------------------------------------------------------------------------------------
# Part 2: SC on any finite answer distribution, exactly (for the search over distributions)
# ----------------------------------------------------------------------------------------------


def distribution_with_gap(gap, competitor_weights):
    r"""An answer distribution with gap :math:`\Delta` whose wrong answers are in given proportions.

    With weights :math:`c_2,\dots,c_m > 0` the wrong answers get :math:`p(o_i) = a\,c_i/\max_j c_j` and the
    correct one :math:`p(o^\star) = a + \Delta`, where :math:`a = (1-\Delta)/(1 + \sum_i c_i/\max_j c_j)`
    makes the total 1. So the most likely wrong answer has probability :math:`a` and the gap is exactly
    :math:`\Delta`. Equal weights give the equal-competitor family
    :math:`p = \big(\tfrac{1+(m-1)\Delta}{m}, \tfrac{1-\Delta}{m}, \dots\big)`.

    Parameters
    ----------
    gap : float
        :math:`\Delta` in (0, 1).
    competitor_weights : array_like, shape (m - 1,)
        Positive, finite weights of the wrong answers (only their ratios matter).

    Returns
    -------
    ndarray, shape (m,)
        :math:`p`, correct answer first.

    Raises
    ------
    ValueError
        If ``gap`` is not in (0, 1) or a weight is not positive and finite.

    Examples
    --------
    >>> distribution_with_gap(0.1, [1.0, 1.0]).round(4).tolist()
    [0.4, 0.3, 0.3]
    """
    gap = _check_gap("gap", gap)
    c = as_array("competitor_weights", competitor_weights, ndim=1)
    if np.any(c <= 0):
        raise ValueError("competitor_weights must be positive")
    c = c / c.max()
    a = (1.0 - gap) / (1.0 + c.sum())
    return np.concatenate([[a + gap], a * c])


def sc_success_exact(n, probs):
    r"""Exact success probability of self-consistency on any finite answer distribution.

    With :math:`n_1 \sim \mathrm{Bin}(n, p_1)` copies of :math:`o^\star` (``probs[0]``), the other counts are
    multinomial with :math:`R = n - n_1` trials. SC is right with probability :math:`1/(1+J)` when no wrong
    answer has more than :math:`n_1` votes and :math:`J` of them have exactly :math:`n_1` (ties split
    uniformly at random):

    .. math:: P_{SC}(n) = \sum_{k\ge1} P(n_1 = k)\;
              \mathbb E\Big[\tfrac{1}{1+J_k}\,\mathbb 1[\max_{i\ge2} n_i \le k] \,\Big|\, n_1 = k\Big].

    The conditional expectation is computed exactly by Poissonization: independent
    :math:`\mathrm{Poisson}(R q_i)` counts, :math:`q_i = p_i / (1 - p_1)`, conditioned on their sum being
    :math:`R`, are multinomial. The joint generating function
    :math:`\prod_i \big(\sum_{c<k} \pi_i(c)\,x^c + y\,\pi_i(k)\,x^k\big)` is multiplied out with an FFT
    (no aliasing: its length exceeds the degree), its coefficient of :math:`x^R` is integrated over
    :math:`y \in [0,1]` by Gauss-Legendre quadrature (exact, since it is a polynomial in :math:`y` of degree
    at most :math:`m-1`, and :math:`\int_0^1 y^J dy = 1/(1+J)`), and divided by
    :math:`P(\mathrm{Poisson}(R) = R)`. Values of :math:`k` with :math:`P(n_1 = k) < 10^{-17}` are skipped.

    Parameters
    ----------
    n : int
        Number of samples (>= 1).
    probs : array_like, shape (m,)
        :math:`p`, correct answer first; non-negative, summing to 1 (to 1e-9), ``m >= 2``.

    Returns
    -------
    float
        :math:`P_{SC}(n)`, accurate to about 1e-12.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer or ``probs`` is not a distribution with at least two entries.

    Notes
    -----
    Cost :math:`O(W\,(m-1)\,N\log N)` with :math:`W \approx 15\sqrt{n}` values of :math:`n_1` and
    :math:`N \approx (m-1)\max k`; a few milliseconds at :math:`n \approx 700`. The two-answer case agrees
    with :func:`sc_success_two_answer`; the unit tests also compare with brute-force enumeration.

    Examples
    --------
    >>> round(sc_success_exact(3, [0.4, 0.3, 0.3]), 4)
    0.424
    """
    n = check_int("n", n, minimum=1)
    p = as_array("probs", probs, ndim=1)
    if p.size < 2 or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
        raise ValueError("probs must be a distribution (non-negative, summing to 1) over at least 2 answers")
    p1, rest = float(p[0]), p[1:][p[1:] > 0]
    if rest.size == 0:
        return 1.0
    ks = np.arange(1, n + 1)
    w1 = stats.binom.pmf(ks, n, p1)
    keep = w1 > 1e-17
    ks, w1 = ks[keep], w1[keep]
    total = float(w1[ks == n].sum())                      # R = 0: o* is the only answer drawn
    ks, w1 = ks[ks < n], w1[ks < n]
    if ks.size == 0:
        return total
    r = n - ks
    q = rest / rest.sum()
    deg = np.minimum(ks, r)                                # a wrong answer cannot exceed R (nor k) votes
    size = int(2 ** np.ceil(np.log2(max(rest.size * deg.max(), r.max()) + 2)))
    grid = np.arange(deg.max() + 1)
    nodes, weights = np.polynomial.legendre.leggauss(max(1, (rest.size + 2) // 2))
    nodes, weights = (nodes + 1) / 2, weights / 2          # Gauss-Legendre on [0, 1]
    shift = np.exp(-2j * np.pi * np.outer(ks, np.arange(size // 2 + 1)) / size)   # x^k
    prod = np.ones((nodes.size, ks.size, size // 2 + 1), complex)
    for qi in q:
        lam = r * qi
        pmf = stats.poisson.pmf(grid[None, :], lam[:, None])
        below = np.where(grid[None, :] < ks[:, None], pmf, 0.0)
        at_k = np.where(ks <= r, stats.poisson.pmf(ks, lam), 0.0)
        spec = np.fft.rfft(below, size, axis=1)
        prod *= spec[None] + nodes[:, None, None] * (at_k[:, None] * shift)[None]
    coef = np.fft.irfft(prod, size, axis=2)[:, np.arange(ks.size), r]      # (nodes, rows)
    cond = (weights @ coef) / stats.poisson.pmf(r, r)
    return total + float(np.sum(w1 * np.clip(cond, 0.0, 1.0)))
