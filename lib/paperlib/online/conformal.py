r"""Conformal prediction sets: split conformal, quantile tracking, and a bandit over thresholds.

A classifier gives a score :math:`f(x, y) \in [0, 1]` to every label (here its softmax probability).
A threshold :math:`\pi` defines the prediction set :math:`C_\pi(x) = \{y : f(x, y) \ge \pi\}`, which
misses the true label exactly when :math:`s = f(x, y) < \pi`. On a finite grid
:math:`0 = \pi_0 < \pi_1 < \dots < \pi_{K-1}` the miss indicator :math:`m_t(k) = \mathbb 1[s_t < \pi_k]`
is non-decreasing in :math:`k` and the set size non-increasing.

Three ways of choosing the threshold online are implemented:

* **split conformal** (Vovk et al., 2005): a fixed threshold, the :math:`\lfloor\alpha(n+1)\rfloor`-th
  smallest score of :math:`n` labelled calibration points; miscoverage at most :math:`\alpha` when the
  stream is exchangeable with the calibration data;
* **quantile tracking**, the threshold form of adaptive conformal inference (Gibbs and Candès, 2021):
  :math:`\pi_{t+1} = \pi_t - \text{lr}\,(m_t - \alpha)`, which reads only the miss indicator of its
  own set;
* **a bandit over thresholds** (Yang, Kim and Park, 2026): EXP3.P (:func:`paperlib.online.bandits.exp3p`)
  with the thresholds as arms and the loss :math:`\ell_t(k) = m_t(k) + \lambda\,|C_{\pi_k}(x_t)|/|\mathcal Y|`.
  Under semi-bandit feedback the learner learns whether its set covered; if it did, the label is
  revealed, so every arm's loss is known ("unlocked"); if it missed, every larger threshold missed too.
  :func:`threshold_feedback_graphs` encodes this as a feedback graph.

The streams used by the book (synthetic, adaptive, digits and diabetes) are in
:mod:`paperlib.online.conformal_streams`.

References
----------
J. Yang, K. Kim, S. Park, "Online Conformal Prediction with Adversarial Semi-bandit Feedback via
Regret Minimization", ICLR 2026, arXiv:2604.17984.
I. Gibbs, E. Candès, "Adaptive conformal inference under distribution shift", NeurIPS 2021.
V. Vovk, A. Gammerman, G. Shafer, *Algorithmic Learning in a Random World*, Springer, 2005.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import bandits
from ..core._validation import as_array, check_int, check_probability, check_real, check_rng
from ._conformal_tables import (  # noqa: F401  (re-exported: part of this module's API)
    CoverageTable,
    _check_probs,
    conformal_losses,
    coverage_table,
    interval_coverage_table,
    threshold_grid,
)

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "threshold_grid",
    "CoverageTable",
    "coverage_table",
    "interval_coverage_table",
    "conformal_losses",
    "threshold_feedback_graphs",
    "online_conformal_bandit",
    "Outcomes",
    "outcomes",
    "miscoverage_bound",
    "split_conformal_threshold",
    "quantile_tracking",
]


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# ----------------------------------------------------------------------------------------------
# the bandit over thresholds (the coverage tables and losses are in _conformal_tables)
# ----------------------------------------------------------------------------------------------


def threshold_feedback_graphs(num_arms):
    r"""Semi-bandit feedback of nested prediction sets as a table of feedback graphs.

    With :math:`j` covering arms (``0 .. j-1``), playing arm :math:`a` reveals arm :math:`k`'s loss iff

    .. math:: G^{(j)}[a, k] = \mathbb 1[a < j] \;\lor\; \mathbb 1[k \ge a]:

    a covering set reveals the label, hence every arm; a missing set reveals that every larger
    threshold also misses.

    Parameters
    ----------
    num_arms : int
        Number of thresholds :math:`K \ge 1`.

    Returns
    -------
    ndarray of bool, shape (K + 1, K, K)
        ``graphs[j]``; index it with :attr:`CoverageTable.num_covering`.

    Raises
    ------
    ValueError
        If ``num_arms`` is not a positive integer.

    Notes
    -----
    The learner may use :math:`j_t` only after playing. After a miss it does not know :math:`j_t`, but
    it needs :math:`q_t(k) = \sum_a p_t(a) G^{(j_t)}[a, k]` only for the revealed arms
    :math:`k \ge a_t`, and there it equals :math:`\sum_{a \le k} p_t(a)` whatever :math:`j_t \le a_t`
    is. The unit tests check that a run does not change when :math:`s_t` is altered on rounds where
    the learner missed.

    References
    ----------
    Yang, Kim and Park (2026): "unlocking"; Alon et al. (2013): feedback graphs.

    Examples
    --------
    >>> threshold_feedback_graphs(2).astype(int).tolist()
    [[[1, 1], [0, 1]], [[1, 1], [0, 1]], [[1, 1], [1, 1]]]
    """
    k = check_int("num_arms", num_arms, minimum=1)
    a = np.arange(k)[:, None]
    col = np.arange(k)[None, :]
    return np.stack([(a < j) | (col >= a) for j in range(k + 1)])


def online_conformal_bandit(table, *, lam, eta, gamma, beta=0.0, unlock=True, rng):
    r"""EXP3.P over conformal thresholds under semi-bandit feedback (the paper's learner).

    Parameters
    ----------
    table : CoverageTable
        The stream (shape ``(T, K)`` or ``(R, T, K)``); the learner reads a loss only when the
        feedback reveals it.
    lam : float
        Size penalty :math:`\lambda \ge 0` of :func:`conformal_losses`.
    eta, gamma, beta : float or array_like of shape (R,)
        EXP3.P's parameters (:func:`paperlib.online.bandits.exp3p`).
    unlock : bool, default True
        Use every loss the feedback reveals (feedback graphs of :func:`threshold_feedback_graphs`).
        With ``False`` the learner uses only its own arm's loss (plain bandit feedback).
    rng : numpy.random.Generator
        Draws the uniforms that pick the arms.

    Returns
    -------
    paperlib.online.bandits.BanditRun

    Raises
    ------
    ValueError
        If ``table`` is not a CoverageTable, ``unlock`` is not a bool, or a parameter is invalid.
        Also if ``rng`` is not a numpy.random.Generator.

    References
    ----------
    Yang, Kim and Park (2026): EXP3.P-CP and its unlocking variant. Our importance weights divide by
    the probability that an arm is observed (a cumulative sum of :math:`p_t` over arms), as the
    feedback-graph estimator requires.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> probs, labels = rng.dirichlet(np.ones(10), size=500), rng.integers(10, size=500)
    >>> tab = coverage_table(probs, labels, threshold_grid(8))
    >>> run = online_conformal_bandit(tab, lam=0.1, eta=0.1, gamma=0.01, rng=rng)
    >>> run.arms.shape
    (500,)
    """
    rng = check_rng("rng", rng)
    if not isinstance(table, CoverageTable):
        raise ValueError(f"table must be a CoverageTable (from coverage_table), got {type(table).__name__}")
    if not isinstance(unlock, bool):
        raise ValueError(f"unlock must be True or False, got {unlock!r}")
    losses = conformal_losses(table, lam=lam)
    graphs = _graphs(losses.shape[-1], unlock)
    # unrevealed losses are hidden from the learner by the feedback graphs; plain bandit feedback
    # uses a table of identities of the same shape (one compiled kernel for both learners)
    return bandits.exp3p(losses, eta=eta, gamma=gamma, beta=beta, loss_range=(0.0, 1.0 + float(lam)),
                         feedback_graphs=graphs, feedback_index=table.num_covering, rng=rng)


def _graphs(k, unlock):
    if unlock:
        return threshold_feedback_graphs(k)
    return np.broadcast_to(np.eye(k, dtype=bool), (k + 1, k, k)).copy()


class Outcomes(NamedTuple):
    """What the played thresholds did, round by round (:func:`outcomes`).

    Attributes
    ----------
    missed : ndarray of bool, shape (..., T)
        :math:`m_t(a_t)`.
    size : ndarray, shape (..., T)
        Normalised set size :math:`|C_{\\pi_{a_t}}(x_t)|` / ``size_scale`` in [0, 1].
    regret : ndarray, shape (..., T)
        Realised regret after each round (:func:`paperlib.online.bandits.regret`), in loss units.
    """

    missed: np.ndarray
    size: np.ndarray
    regret: np.ndarray


def outcomes(table, arms, *, lam):
    r"""Miss indicators, normalised set sizes and regret of a sequence of played thresholds.

    Parameters
    ----------
    table : CoverageTable
        The stream, shape ``(T, K)`` or ``(R, T, K)``.
    arms : array_like of int, shape (T,) or (R, T)
        Played arm indices (e.g. ``run.arms`` of :func:`online_conformal_bandit`).
    lam : float
        Size penalty :math:`\lambda \ge 0` of the loss used for the regret.

    Returns
    -------
    Outcomes

    Raises
    ------
    ValueError
        If ``table`` is not a CoverageTable, ``arms`` has the wrong shape or range, or ``lam < 0``.

    Examples
    --------
    >>> tab = coverage_table([[0.7, 0.2, 0.1], [0.5, 0.4, 0.1]], [1, 0], [0.0, 0.3, 0.6])
    >>> out = outcomes(tab, [1, 2], lam=0.5)
    >>> out.missed.tolist(), out.size.round(3).tolist(), out.regret.round(3).tolist()
    ([True, True], [0.333, 0.0], [0.667, 1.167])
    """
    losses = conformal_losses(table, lam=lam)
    arms = np.asarray(arms)
    if not np.issubdtype(arms.dtype, np.integer) or arms.shape != losses.shape[:-1]:
        raise ValueError(f"arms must be integers of shape {losses.shape[:-1]}, got {arms.dtype} {arms.shape}")
    if arms.min() < 0 or arms.max() >= losses.shape[-1]:
        raise ValueError(f"arms must lie in [0, {losses.shape[-1] - 1}]")
    pick = lambda a: np.take_along_axis(a, arms[..., None], axis=-1)[..., 0]
    return Outcomes(pick(table.misses), pick(table.sizes) / table.size_scale, bandits.regret(losses, arms))


def miscoverage_bound(regret, mean_size, *, lam, horizon):
    r"""Our regret-to-miscoverage bridge: :math:`\mathrm{MC}(T) \le R_T/T + \lambda\,(1 - \bar S)`.

    Parameters
    ----------
    regret : float or array_like
        Realised regret :math:`R_T` of the learner in loss units (:func:`paperlib.online.bandits.regret`).
    mean_size : float or array_like
        Mean normalised set size :math:`\bar S = \frac1T\sum_t |C_{\pi_{a_t}}(x_t)|/|\mathcal Y| \in [0, 1]`.
    lam : float
        Size penalty :math:`\lambda \ge 0`.
    horizon : int
        :math:`T \ge 1`.

    Returns
    -------
    float or ndarray
        The bound on the learner's miscoverage rate; with :math:`\lambda \le \alpha` it is at most
        :math:`\alpha + R_T/T`.

    Raises
    ------
    ValueError
        If an input is not finite, ``mean_size`` is outside [0, 1] or ``lam`` is negative.

    Notes
    -----
    Deterministic and valid for every arm sequence (ours): the full set :math:`\pi_0 = 0` never
    misses and has loss :math:`\lambda` each round, so
    :math:`R_T \ge T\,\mathrm{MC}(T) + \lambda T \bar S - \lambda T`. The paper's conversion lemma
    (Yang, Kim and Park, 2026, Lemma 1) has the same shape with its own loss and an extra term
    :math:`C_{\mathrm{MC}}(T)` that vanishes when the size term does.

    References
    ----------
    Yang, Kim and Park (2026), Lemma 1 (the paper's version).

    Examples
    --------
    >>> round(float(miscoverage_bound(30.0, 0.4, lam=0.1, horizon=1000)), 3)
    0.09
    """
    regret = as_array("regret", regret)
    mean_size = as_array("mean_size", mean_size)
    if np.any((mean_size < 0) | (mean_size > 1)):
        raise ValueError("mean_size must lie in [0, 1] (normalised by the number of labels)")
    lam = check_real("lam", lam, minimum=0.0)
    horizon = check_int("horizon", horizon, minimum=1)
    return regret / horizon + lam * (1.0 - mean_size)


# ----------------------------------------------------------------------------------------------
# baselines
# ----------------------------------------------------------------------------------------------


def split_conformal_threshold(scores, *, alpha):
    r"""Split conformal threshold: the :math:`\lfloor \alpha(n+1) \rfloor`-th smallest calibration score.

    Parameters
    ----------
    scores : array_like, shape (n,)
        True-label scores :math:`f(x_i, y_i)` of :math:`n \ge 1` fully labelled calibration points.
    alpha : float
        Target miscoverage in (0, 1).

    Returns
    -------
    float
        :math:`\tau`; the set :math:`\{y : f(x, y) \ge \tau\}` misses a new exchangeable point with
        probability in :math:`[\alpha - 1/(n+1), \alpha]` (no ties). It is 0 (the full set) when
        :math:`\alpha(n+1) < 1`.

    Raises
    ------
    ValueError
        If ``scores`` is empty or not finite, or ``alpha`` is outside (0, 1).

    References
    ----------
    Vovk, Gammerman and Shafer (2005); split (inductive) conformal prediction.

    Examples
    --------
    >>> split_conformal_threshold([0.9, 0.1, 0.5, 0.7, 0.3, 0.8, 0.6, 0.4, 0.2], alpha=0.2)
    0.2
    """
    scores = as_array("scores", scores, ndim=1, min_size=1)
    alpha = check_probability("alpha", alpha, open_interval=True)
    k = int(np.floor(alpha * (scores.size + 1)))
    return 0.0 if k < 1 else float(np.sort(scores)[k - 1])


def _tracking_scan(step, init, xs):
    return jax.lax.scan(step, init, xs)


def quantile_tracking(scores, *, alpha, lr, init=0.0):
    r"""Adaptive conformal inference on the threshold: :math:`\pi_{t+1} = \pi_t - \text{lr}\,(m_t - \alpha)`.

    Parameters
    ----------
    scores : array_like, shape (T,) or (R, T)
        True-label scores :math:`s_t`; the rule reads only :math:`m_t = \mathbb 1[s_t < \pi_t]`,
        which semi-bandit feedback always reveals.
    alpha : float
        Target miscoverage in (0, 1).
    lr : float
        Step size :math:`> 0`.
    init : float, default 0.0
        :math:`\pi_1 \in [0, 1]`.

    Returns
    -------
    thresholds : ndarray, shape like ``scores``
        :math:`\pi_t` used in round :math:`t`.
    misses : ndarray of bool, shape like ``scores``

    Raises
    ------
    ValueError
        If ``scores`` is not finite or outside [0, 1], or a parameter is out of range.

    Notes
    -----
    For scores in [0, 1], :math:`\pi_t \in [-\text{lr}\,\alpha, 1 + \text{lr}\,(1-\alpha)]` for all :math:`t`,
    and summing the update gives, for **any** sequence, :math:`|\mathrm{MC}(T) - \alpha| \le
    (1 + \text{lr})/(\text{lr}\,T)` (Gibbs and Candès, 2021, Proposition 4.1, on the score scale).

    References
    ----------
    Gibbs and Candès (2021), adaptive conformal inference, Section 2.

    Examples
    --------
    >>> th, m = quantile_tracking([0.5, 0.05, 0.5, 0.5], alpha=0.1, lr=0.1, init=0.1)
    >>> th.round(3).tolist(), m.tolist()
    ([0.1, 0.11, 0.02, 0.03], [False, True, False, False])
    """
    scores = as_array("scores", scores, ndim=(1, 2), min_size=1)
    if np.any((scores < 0) | (scores > 1)):
        raise ValueError("scores must lie in [0, 1]")
    alpha = check_probability("alpha", alpha, open_interval=True)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    init = check_probability("init", init)
    batch = scores.reshape(-1, scores.shape[-1]).T.astype(np.float32)

    def step(pi, s):
        miss = s < pi
        return pi - lr * (miss - alpha), (pi, miss)

    _, (th, miss) = _tracking_scan(step, jnp.full(batch.shape[1], init, jnp.float32), jnp.asarray(batch))
    th, miss = np.asarray(th, dtype=float).T, np.asarray(miss).T
    return th.reshape(scores.shape), miss.reshape(scores.shape)
