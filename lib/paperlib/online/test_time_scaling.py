r"""Test-time scaling: self-consistency, best-of-n, and self-correction as online learning.

A model answers a question by sampling a final answer :math:`o` from a distribution :math:`p` over
answers; :math:`o^\star` is the correct one and the **gap** is

.. math:: \Delta = p(o^\star) - \max_{o \ne o^\star} p(o) \in (0, 1).

Two repeated-sampling strategies draw :math:`n` i.i.d. answers and pick one:

* **self-consistency (SC)** returns the most frequent answer (ties split uniformly at random);
* **best-of-n (BoN)** returns the answer a reward model ranks highest; with a perfect reward model it
  is correct as soon as :math:`o^\star` was drawn once.

Huang et al. (2026, Theorems 3.1 and 3.2) show that, in the worst case over distributions with gap
:math:`\Delta`, SC needs :math:`\Theta(1/\Delta^2)` samples and BoN :math:`\Theta(1/\Delta)`. This module gives
exact success probabilities on the two instances that attain those worst cases, a Monte Carlo
simulator of SC on any answer distribution, and the smallest :math:`n` reaching a success target.

The paper's second result, self-correction with verifier feedback as online learning over a pool
of experts, lives in :mod:`paperlib.online.self_correction` and :mod:`paperlib.online.in_context_hedge`.

References
----------
B. Huang, S. Li, T. Wu, Y. Yang, A. Talwalkar, K. Ramchandran, M. I. Jordan, J. Jiao,
"Sample Complexity and Representation Ability of Test-time Scaling Paradigms", ICLR 2026,
arXiv:2506.05295.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from scipy import stats

from ..core._validation import as_array, check_int, check_probability
from ._test_time_scaling_exact import (  # noqa: F401  (re-exported: part of this module's API)
    _check_gap,
    distribution_with_gap,
    sc_success_exact,
)

__all__ = [
    "sc_success_two_answer",
    "sc_success_diffuse",
    "bon_success",
    "MonteCarloEstimate",
    "self_consistency_mc",
    "sample_complexity",
    "sc_sample_complexity_normal",
    "bon_sample_complexity",
    "distribution_with_gap",
    "sc_success_exact",
]

_CLOSED_FORM_N = ("a sample count in a closed-form expression (binomial tails, powers; no allocation): "
                  "n past 2**31 is valid")
_PROBE_EXEMPTIONS = {
    "sc_success_two_answer": {"n": {"int_past_int32": _CLOSED_FORM_N}},
    "sc_success_diffuse": {"n": {"int_past_int32": _CLOSED_FORM_N}},
    "bon_success": {"n": {"int_past_int32": _CLOSED_FORM_N}},
}


# ----------------------------------------------------------------------------------------------
# Part 1: repeated sampling
# ----------------------------------------------------------------------------------------------


def _check_n(n) -> np.ndarray:
    arr = np.asarray(n)
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"n must be a positive integer (or an integer array), got {n!r}")
    if np.any(arr < 1):
        raise ValueError(f"n must be >= 1, got minimum {int(arr.min())}")
    return arr


def sc_success_two_answer(n, gap):
    r"""Exact success probability of self-consistency on the two-answer (SC-hard) instance.

    The instance has two answers with :math:`p(o^\star) = (1+\Delta)/2` and :math:`p(o_2) = (1-\Delta)/2`.
    With :math:`X \sim \mathrm{Bin}(n, (1+\Delta)/2)` the number of correct samples, SC is correct when
    :math:`X > n/2` and, on an exact tie :math:`X = n/2`, with probability 1/2:

    .. math:: P_{SC}(n) = P(X > n/2) + \tfrac12 P(X = n/2).

    Parameters
    ----------
    n : int or int array, shape (m,)
        Number of samples (>= 1).
    gap : float
        The gap :math:`\Delta` in (0, 1).

    Returns
    -------
    float or ndarray, shape like ``n``
        :math:`P_{SC}(n)`.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer (array) or ``gap`` is not in (0, 1).

    Notes
    -----
    This is the instance on which Huang et al. (2026, Theorem 3.1) prove the :math:`\Omega(1/\Delta^2)`
    lower bound; the tie rule is ours.

    Examples
    --------
    >>> round(float(sc_success_two_answer(1, 0.2)), 3)
    0.6
    """
    n = _check_n(n)
    gap = _check_gap("gap", gap)
    p = 0.5 * (1.0 + gap)
    tail = stats.binom.sf(n // 2, n, p)
    tie = np.where(n % 2 == 0, stats.binom.pmf(n // 2, n, p), 0.0)
    out = tail + 0.5 * tie
    return float(out) if out.ndim == 0 else out


def sc_success_diffuse(n, p_star):
    r"""Exact success probability of self-consistency on the diffuse (BoN-hard) instance.

    The correct answer has probability :math:`p^\star`; the remaining mass :math:`1-p^\star` is spread
    over so many wrong answers that none is ever drawn twice (the limit of :math:`M \to \infty` wrong
    answers of mass :math:`(1-p^\star)/M`, where the gap tends to :math:`p^\star`). With :math:`C` the count
    of :math:`o^\star`, SC is correct if :math:`C \ge 2`, and with probability :math:`1/n` if :math:`C = 1` (an
    :math:`n`-way tie of singletons):

    .. math:: P_{SC}(n) = 1 - (1-p^\star)^n - (n-1)\,p^\star (1-p^\star)^{n-1}.

    Parameters
    ----------
    n : int or int array, shape (m,)
        Number of samples (>= 1).
    p_star : float
        :math:`p(o^\star)` in (0, 1).

    Returns
    -------
    float or ndarray, shape like ``n``

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer (array) or ``p_star`` is not in (0, 1).

    Examples
    --------
    >>> round(float(sc_success_diffuse(1, 0.3)), 3)
    0.3
    """
    n = _check_n(n)
    p = _check_gap("p_star", p_star)
    q = 1.0 - p
    out = 1.0 - q**n - (n - 1) * p * q ** (n - 1)
    return float(out) if np.ndim(out) == 0 else out


def bon_success(n, p_star):
    r"""Success probability of best-of-n with a perfect reward model: :math:`1 - (1-p^\star)^n`.

    BoN is correct exactly when :math:`o^\star` appears among the :math:`n` samples (Huang et al., 2026,
    proof of Theorem 3.2).

    Parameters
    ----------
    n : int or int array, shape (m,)
        Number of samples (>= 1).
    p_star : float
        :math:`p(o^\star)` in (0, 1).

    Returns
    -------
    float or ndarray, shape like ``n``

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer (array) or ``p_star`` is not in (0, 1).

    Examples
    --------
    >>> round(float(bon_success(2, 0.5)), 3)
    0.75
    """
    n = _check_n(n)
    p = _check_gap("p_star", p_star)
    out = 1.0 - (1.0 - p) ** n
    return float(out) if np.ndim(out) == 0 else out


class MonteCarloEstimate(NamedTuple):
    """A Monte Carlo probability estimate and its standard error."""

    mean: float
    stderr: float


def self_consistency_mc(n, probs, *, diffuse_mass=0.0, trials=20_000, rng):
    r"""Monte Carlo success probability of self-consistency on any answer distribution.

    Draws the answer counts of ``trials`` independent runs of SC with ``n`` samples each
    (``rng.multinomial``), finds the most frequent answer(s), and scores a run by the probability that
    the uniform tie-break picks :math:`o^\star` (1 if it wins outright, :math:`1/k` in a :math:`k`-way tie,
    0 otherwise). Scoring the tie-break by its conditional probability instead of flipping a coin
    lowers the variance without changing the mean.

    Parameters
    ----------
    n : int
        Samples per SC run (>= 1).
    probs : array_like, shape (m,)
        Probabilities of the explicit answers, the correct answer :math:`o^\star` first.
    diffuse_mass : float, default 0.0
        Probability of a fresh wrong answer that never repeats (count 1 each, so it can only tie at
        the top when every count is 1). ``probs.sum() + diffuse_mass`` must be 1.
    trials : int, default 20000
        Independent SC runs.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    MonteCarloEstimate
        ``mean`` (estimated success probability) and ``stderr`` (its standard error).

    Raises
    ------
    ValueError
        If ``n`` or ``trials`` is not a positive integer, ``probs`` is not a 1-D vector of
        probabilities, or the masses do not sum to 1.

    Examples
    --------
    >>> est = self_consistency_mc(3, [0.6, 0.4], trials=20_000, rng=np.random.default_rng(0))
    >>> abs(est.mean - 0.648) < 4 * est.stderr       # exact: P(at least 2 of 3 correct) = 0.648
    True
    """
    n = check_int("n", n, minimum=1)
    trials = check_int("trials", trials, minimum=1)
    probs = as_array("probs", probs, ndim=1, min_size=1)
    diffuse_mass = check_probability("diffuse_mass", diffuse_mass)
    if np.any(probs < 0) or np.any(probs > 1):
        raise ValueError("probs must lie in [0, 1]")
    if abs(probs.sum() + diffuse_mass - 1.0) > 1e-9:
        raise ValueError(
            f"probs.sum() + diffuse_mass must be 1, got {probs.sum():.6g} + {diffuse_mass:.6g}"
        )
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    pvals = np.append(probs, diffuse_mass)
    pvals = pvals / pvals.sum()
    counts = rng.multinomial(n, pvals, size=trials)  # (trials, m + 1)
    explicit, singletons = counts[:, :-1], counts[:, -1]
    top = np.maximum(explicit.max(axis=1), (singletons > 0).astype(counts.dtype))
    n_tied = (explicit == top[:, None]).sum(axis=1) + np.where(top == 1, singletons, 0)
    score = (explicit[:, 0] == top) / n_tied
    return MonteCarloEstimate(float(score.mean()), float(score.std(ddof=1) / np.sqrt(trials)))


def sample_complexity(success: Callable, target: float, *, n_max: int = 10**8) -> int:
    r"""Smallest :math:`n` with ``success(n) >= target`` for a non-decreasing success curve.

    Doubles :math:`n` until the target is reached, then bisects. This is the sample complexity
    :math:`n^\star(\delta)` for ``target`` :math:`= 1-\delta`.

    Parameters
    ----------
    success : callable
        ``success(n) -> float`` for an integer ``n >= 1``; must be non-decreasing in ``n``.
    target : float
        Success probability to reach, in (0, 1).
    n_max : int, default 1e8
        Give up above this ``n``.

    Returns
    -------
    int
        The smallest such ``n``.

    Raises
    ------
    ValueError
        If ``target`` is not in (0, 1), or the target is not reached by ``n_max``.

    Examples
    --------
    >>> sample_complexity(lambda n: bon_success(n, 0.5), 0.9)
    4
    """
    target = check_probability("target", target, open_interval=True)
    n_max = check_int("n_max", n_max, minimum=1)
    hi = 1
    while success(np.int64(hi)) < target:
        hi *= 2
        if hi > 2 * n_max:
            raise ValueError(f"success(n) stays below target={target} up to n_max={n_max}")
    lo = hi // 2  # success(lo) < target, or lo == 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if success(np.int64(mid)) >= target:
            hi = mid
        else:
            lo = mid
    if hi > n_max:
        raise ValueError(f"success(n) stays below target={target} up to n_max={n_max}")
    return int(hi)


def sc_sample_complexity_normal(gap, fail_prob):
    r"""Normal-approximation sample complexity of SC on the two-answer instance.

    The vote margin :math:`2X - n` has mean :math:`n\Delta` and variance :math:`n(1-\Delta^2)`, so
    :math:`P_{SC}(n) \approx \Phi\big(\sqrt n\,\Delta/\sqrt{1-\Delta^2}\big)` and

    .. math:: n^\star_{SC}(\delta) \approx z_{1-\delta}^2\,(1-\Delta^2)/\Delta^2 .

    Parameters
    ----------
    gap : float or array, shape (m,)
        :math:`\Delta` in (0, 1).
    fail_prob : float
        :math:`\delta` in (0, 1).

    Returns
    -------
    float or ndarray, shape like ``gap`` (not rounded to an integer)

    Raises
    ------
    ValueError
        If ``gap`` or ``fail_prob`` is outside (0, 1).

    Examples
    --------
    >>> round(sc_sample_complexity_normal(0.1, 0.1), 1)     # 1.2816**2 * 0.99 / 0.01
    162.6
    """
    gap = as_array("gap", gap, ndim=(0, 1))
    if np.any(gap <= 0) or np.any(gap >= 1):
        raise ValueError("gap must lie in (0, 1)")
    fail_prob = check_probability("fail_prob", fail_prob, open_interval=True)
    z = stats.norm.isf(fail_prob)
    out = z**2 * (1.0 - gap**2) / gap**2
    return float(out) if out.ndim == 0 else out


def bon_sample_complexity(p_star, fail_prob):
    r"""Exact sample complexity of best-of-n: :math:`\lceil \ln\delta / \ln(1-p^\star) \rceil`.

    For small :math:`p^\star = \Delta` (the worst case) this is :math:`\approx \ln(1/\delta)/\Delta`.

    Parameters
    ----------
    p_star : float or array, shape (m,)
        :math:`p(o^\star)` in (0, 1).
    fail_prob : float
        :math:`\delta` in (0, 1).

    Returns
    -------
    int or int ndarray, shape like ``p_star``

    Raises
    ------
    ValueError
        If ``p_star`` or ``fail_prob`` is outside (0, 1).

    Examples
    --------
    >>> bon_sample_complexity(0.1, 0.1)          # ln(0.1) / ln(0.9) = 21.85
    22
    """
    p = as_array("p_star", p_star, ndim=(0, 1))
    if np.any(p <= 0) or np.any(p >= 1):
        raise ValueError("p_star must lie in (0, 1)")
    fail_prob = check_probability("fail_prob", fail_prob, open_interval=True)
    # tiny slack so that exact powers (e.g. p=1/2, delta=1/4) are not pushed up by rounding
    out = np.ceil(np.log(fail_prob) / np.log1p(-p) - 1e-9).astype(np.int64)
    return int(out) if out.ndim == 0 else out

