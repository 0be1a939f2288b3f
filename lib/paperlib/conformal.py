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
* **a bandit over thresholds** (Yang, Kim and Park, 2026): EXP3.P (:func:`paperlib.bandits.exp3p`)
  with the thresholds as arms and the loss :math:`\ell_t(k) = m_t(k) + \lambda\,|C_{\pi_k}(x_t)|/|\mathcal Y|`.
  Under semi-bandit feedback the learner learns whether its set covered; if it did, the label is
  revealed, so every arm's loss is known ("unlocked"); if it missed, every larger threshold missed too.
  :func:`threshold_feedback_graphs` encodes this as a feedback graph.

Streams: :func:`synthetic_stream` (a softmax "classifier" whose margin an oblivious adversary
varies), :func:`reactive_bandit_run` (an adaptive adversary that reacts to the learner's last
outcome), and :func:`digits_stream` (scikit-learn's bundled digits with a fitted logistic
regression, made non-i.i.d. by growing pixel noise or a label-sorted order).

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
from ._validation import as_array, check_int, check_probability, check_real

__all__ = [
    "threshold_grid",
    "CoverageTable",
    "coverage_table",
    "interval_coverage_table",
    "conformal_losses",
    "threshold_feedback_graphs",
    "online_conformal_bandit",
    "miscoverage_bound",
    "synthetic_stream",
    "reactive_bandit_run",
    "DigitsModel",
    "fit_digits_model",
    "digits_stream",
    "diabetes_residuals",
    "split_conformal_threshold",
    "quantile_tracking",
]


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_probs(name, probs, ndim=(2, 3)):
    probs = as_array(name, probs, ndim=ndim, min_size=1)
    if np.any(probs < 0) or np.any(probs > 1 + 1e-6):
        raise ValueError(f"{name} must hold scores in [0, 1]")
    return probs


def threshold_grid(num_arms, *, low=0.01, high=0.9):
    r"""The arms: :math:`\pi_0 = 0` (the full label set) and :math:`K-1` geometrically spaced thresholds.

    Parameters
    ----------
    num_arms : int
        Number of thresholds :math:`K \ge 2`.
    low, high : float, default 0.01 and 0.9
        Smallest and largest positive threshold, :math:`0 < \text{low} < \text{high} \le 1`.

    Returns
    -------
    ndarray, shape (K,)
        Increasing thresholds.

    Raises
    ------
    ValueError
        If ``num_arms < 2`` or the range is invalid.

    Notes
    -----
    A geometric grid puts arms where the :math:`\alpha`-quantile of softmax scores lies (often at
    0.01–0.3); a uniform grid on [0, 1] wastes most arms on thresholds that miss far too often. The
    paper treats the grid as given.

    Examples
    --------
    >>> threshold_grid(4, low=0.01, high=1.0).round(3).tolist()
    [0.0, 0.01, 0.1, 1.0]
    """
    num_arms = check_int("num_arms", num_arms, minimum=2)
    low = check_real("low", low, minimum=0.0, strict_min=True)
    high = check_real("high", high, maximum=1.0)
    if not low < high:
        raise ValueError(f"low must be < high, got low={low}, high={high}")
    return np.concatenate([[0.0], np.geomspace(low, high, num_arms - 1)])


class CoverageTable(NamedTuple):
    """What every threshold would have done in every round (the evaluation view of a stream).

    Attributes
    ----------
    misses : ndarray of bool, shape (..., T, K)
        :math:`m_t(k) = \\mathbb 1[s_t < \\pi_k]`.
    sizes : ndarray, shape (..., T, K)
        :math:`|C_{\\pi_k}(x_t)|` (number of labels, or interval length), observable from :math:`x_t`
        alone.
    num_covering : ndarray of int, shape (..., T)
        :math:`j_t = \\#\\{k : \\pi_k \\le s_t\\}`: arms ``0 .. j_t - 1`` cover, the rest miss.
    size_scale : float
        Size of the largest possible set (:math:`|\\mathcal Y|` for classification, the widest
        interval's length for regression); losses use ``sizes / size_scale`` in [0, 1].
    """

    misses: np.ndarray
    sizes: np.ndarray
    num_covering: np.ndarray
    size_scale: float


def coverage_table(probs, labels, grid):
    r"""Miss indicators and set sizes of every threshold of ``grid`` in every round.

    Parameters
    ----------
    probs : array_like, shape (..., T, C)
        Scores :math:`f(x_t, y)` of every label, in [0, 1].
    labels : array_like of int, shape (..., T)
        True labels :math:`y_t \in \{0, \dots, C-1\}`.
    grid : array_like, shape (K,)
        Increasing thresholds in [0, 1] starting at 0 (:func:`threshold_grid`).

    Returns
    -------
    CoverageTable

    Raises
    ------
    ValueError
        If shapes disagree, scores are outside [0, 1], a label is out of range, or the grid is not
        increasing from 0.

    Examples
    --------
    >>> tab = coverage_table([[0.7, 0.2, 0.1]], [1], [0.0, 0.15, 0.5])
    >>> tab.misses.tolist(), tab.sizes.tolist(), tab.num_covering.tolist()
    ([[False, False, True]], [[3, 2, 1]], [2])
    """
    probs = _check_probs("probs", probs)
    labels = np.asarray(labels)
    if not np.issubdtype(labels.dtype, np.integer) or labels.shape != probs.shape[:-1]:
        raise ValueError(f"labels must be integers of shape {probs.shape[:-1]}, got {labels.dtype} {labels.shape}")
    c = probs.shape[-1]
    if labels.min() < 0 or labels.max() >= c:
        raise ValueError(f"labels must lie in [0, {c - 1}]")
    grid = as_array("grid", grid, ndim=1, min_size=2)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0) or grid[-1] > 1:
        raise ValueError("grid must increase strictly from 0 within [0, 1]")
    scores = np.take_along_axis(probs, labels[..., None], axis=-1)[..., 0]
    misses = scores[..., None] < grid
    sizes = (probs[..., None, :] >= grid[:, None]).sum(-1)
    return CoverageTable(misses, sizes, (~misses).sum(-1), float(c))


def interval_coverage_table(residuals, grid, *, max_radius):
    r"""Coverage table of symmetric prediction intervals for regression.

    The score is :math:`s_t = 1 - |y_t - \hat y_t|/r_{\max}` and threshold :math:`\pi_k` gives the
    interval :math:`\hat y_t \pm (1-\pi_k)\,r_{\max}`, so the same grid and learner serve
    classification and regression. Arm 0 (:math:`\pi_0 = 0`) is the widest interval,
    :math:`\pm r_{\max}`.

    Parameters
    ----------
    residuals : array_like, shape (..., T)
        Absolute residuals :math:`|y_t - \hat y_t| \ge 0` of a fitted regressor.
    grid : array_like, shape (K,)
        Increasing thresholds in [0, 1) starting at 0.
    max_radius : float
        :math:`r_{\max} > 0`; residuals beyond it are missed even by arm 0.

    Returns
    -------
    CoverageTable
        ``sizes`` are interval lengths :math:`2(1-\pi_k)\,r_{\max}` and ``size_scale`` is
        :math:`2 r_{\max}`.

    Raises
    ------
    ValueError
        If a residual is negative or not finite, the grid is invalid, or ``max_radius`` is not positive.

    Examples
    --------
    >>> tab = interval_coverage_table([10.0, 60.0], [0.0, 0.5, 0.8], max_radius=100.0)
    >>> tab.misses.tolist(), tab.sizes[0].tolist()
    ([[False, False, False], [False, True, True]], [200.0, 100.0, 40.0])
    """
    residuals = as_array("residuals", residuals, ndim=(1, 2), min_size=1)
    if np.any(residuals < 0):
        raise ValueError("residuals must be absolute values (>= 0)")
    grid = as_array("grid", grid, ndim=1, min_size=2)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0) or grid[-1] >= 1:
        raise ValueError("grid must increase strictly from 0 within [0, 1)")
    max_radius = check_real("max_radius", max_radius, minimum=0.0, strict_min=True)
    scores = 1.0 - residuals / max_radius
    misses = scores[..., None] < grid
    sizes = np.broadcast_to(2 * (1 - grid) * max_radius, misses.shape).copy()
    return CoverageTable(misses, sizes, (~misses).sum(-1), 2 * max_radius)


def conformal_losses(table, *, lam):
    r"""The learner's loss :math:`\ell_t(k) = m_t(k) + \lambda\,|C_{\pi_k}(x_t)|/|\mathcal Y|`.

    Parameters
    ----------
    table : CoverageTable
        From :func:`coverage_table`.
    lam : float
        Size penalty :math:`\lambda \ge 0`; losses lie in :math:`[0, 1+\lambda]`.

    Returns
    -------
    ndarray, shape (..., T, K)

    Raises
    ------
    ValueError
        If ``table`` is not a CoverageTable or ``lam`` is negative.

    Notes
    -----
    The paper's loss adds a term rewarding coverage and penalising a miss (with constants depending on
    :math:`\alpha`) to a size term weighted by :math:`\lambda`. Any such term is affine in
    :math:`m_t(k)`, say :math:`c_0 + u\,m_t(k)` with :math:`u > 0`; EXP3.P normalises losses to
    [0, 1], so that loss runs the same learner as this one with :math:`\lambda` replaced by
    :math:`\lambda/u`. We use the simplest form.

    Examples
    --------
    >>> tab = coverage_table([[0.7, 0.2, 0.1]], [1], [0.0, 0.15, 0.5])
    >>> conformal_losses(tab, lam=0.3).round(2).tolist()
    [[0.3, 0.2, 1.1]]
    """
    if not isinstance(table, CoverageTable):
        raise ValueError(f"table must be a CoverageTable (from coverage_table), got {type(table).__name__}")
    lam = check_real("lam", lam, minimum=0.0)
    return table.misses + lam * table.sizes / table.size_scale


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
        EXP3.P's parameters (:func:`paperlib.bandits.exp3p`).
    unlock : bool, default True
        Use every loss the feedback reveals (feedback graphs of :func:`threshold_feedback_graphs`).
        With ``False`` the learner uses only its own arm's loss (plain bandit feedback).
    rng : numpy.random.Generator
        Draws the uniforms that pick the arms.

    Returns
    -------
    paperlib.bandits.BanditRun

    Raises
    ------
    ValueError
        If ``table`` is not a CoverageTable, ``unlock`` is not a bool, or a parameter is invalid.

    References
    ----------
    Yang, Kim and Park (2026): EXP3.P-CP and its unlocking variant. Our importance weights divide by
    the probability that an arm is observed (a cumulative sum of :math:`p_t` over arms), as the
    feedback-graph estimator requires.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> probs, labels = synthetic_stream("iid", 500, rng=rng)
    >>> tab = coverage_table(probs, labels, threshold_grid(8))
    >>> run = online_conformal_bandit(tab, lam=0.1, eta=0.1, gamma=0.01, rng=rng)
    >>> run.arms.shape
    (500,)
    """
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


def miscoverage_bound(regret, mean_size, *, lam, horizon):
    r"""Our regret-to-miscoverage bridge: :math:`\mathrm{MC}(T) \le R_T/T + \lambda\,(1 - \bar S)`.

    Parameters
    ----------
    regret : float or array_like
        Realised regret :math:`R_T` of the learner in loss units (:func:`paperlib.bandits.regret`).
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
    :math:`R_T \ge T\,\mathrm{MC}(T) + \lambda T \bar S - \lambda T`.

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
# streams
# ----------------------------------------------------------------------------------------------

_KINDS = ("iid", "shift", "periodic")


def _margins(kind, horizon, easy, hard, iid_margin, period):
    t = np.arange(horizon)
    if kind == "iid":
        return np.full(horizon, iid_margin)
    if kind == "shift":
        return np.where(t < horizon // 2, easy, hard)
    return np.where((t // period) % 2 == 0, easy, hard)


def synthetic_stream(kind, horizon, *, num_classes=10, easy=3.0, hard=0.7, iid_margin=2.0, period=500, rng):
    r"""A softmax classifier's scores on a stream whose difficulty an oblivious adversary sets.

    Round :math:`t`: the label is uniform, logits are :math:`z \sim N(0, I_C)` with a margin
    :math:`M_t` added to the true label's logit, and the scores are :math:`\mathrm{softmax}(z)`.

    Parameters
    ----------
    kind : {"iid", "shift", "periodic"}
        ``iid``: :math:`M_t` = ``iid_margin``; ``shift``: ``easy`` for the first half, ``hard``
        after; ``periodic``: ``easy`` and ``hard`` alternate every ``period`` rounds.
    horizon : int
        Number of rounds :math:`T \ge 1`.
    num_classes : int, default 10
        :math:`C \ge 2`.
    easy, hard, iid_margin : float, default 3.0, 0.7, 2.0
        Margins (logit units).
    period : int, default 500
        Half-period of the periodic stream, in rounds.
    rng : numpy.random.Generator

    Returns
    -------
    probs : ndarray, shape (T, C)
    labels : ndarray of int, shape (T,)

    Raises
    ------
    ValueError
        For an unknown ``kind`` or an invalid size, margin or ``rng``.

    Examples
    --------
    >>> probs, labels = synthetic_stream("shift", 4, num_classes=3, rng=np.random.default_rng(0))
    >>> probs.shape, labels.shape
    ((4, 3), (4,))
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    horizon = check_int("horizon", horizon, minimum=1)
    num_classes = check_int("num_classes", num_classes, minimum=2)
    easy = check_real("easy", easy)
    hard = check_real("hard", hard)
    iid_margin = check_real("iid_margin", iid_margin)
    period = check_int("period", period, minimum=1)
    rng = _check_rng(rng)
    labels = rng.integers(num_classes, size=horizon)
    z = rng.standard_normal((horizon, num_classes))
    z[np.arange(horizon), labels] += _margins(kind, horizon, easy, hard, iid_margin, period)
    z -= z.max(1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(1, keepdims=True), labels


def reactive_bandit_run(horizon, grid, *, lam, eta, gamma, beta=0.0, unlock=True, num_classes=10,
                        easy=3.0, hard=0.7, replicates=None, rng):
    r"""EXP3.P over thresholds against an adaptive adversary that reacts to the learner's outcome.

    The stream of :func:`synthetic_stream` with margin :math:`M_t` = ``hard`` if the learner's set
    covered in round :math:`t-1` and ``easy`` if it missed: the adversary makes the next round hard
    whenever the learner succeeded. Labels, logit noise and the learner's uniforms are drawn up front
    (with numpy); the margin, the learner and its feedback run in one ``lax.scan``.

    Parameters
    ----------
    horizon : int
        Number of rounds :math:`T \ge 1`.
    grid : array_like, shape (K,)
        Thresholds (:func:`threshold_grid`).
    lam, eta, gamma, beta, unlock
        As in :func:`online_conformal_bandit` (scalars).
    num_classes : int, default 10
    easy, hard : float, default 3.0 and 0.7
    replicates : int, optional
        With ``R``, run R independent replicates (vectorised); outputs gain a leading axis R.
    rng : numpy.random.Generator

    Returns
    -------
    run : paperlib.bandits.BanditRun
        Arms (T,) and probabilities (T, K).
    table : CoverageTable
        The realised stream (misses, sizes and covering counts of every arm), for evaluation.

    Raises
    ------
    ValueError
        For invalid sizes, parameters or rng.

    Examples
    --------
    >>> run, tab = reactive_bandit_run(300, threshold_grid(6), lam=0.1, eta=0.1, gamma=0.01,
    ...                                rng=np.random.default_rng(0))
    >>> run.arms.shape, tab.misses.shape
    ((300,), (300, 6))
    """
    horizon = check_int("horizon", horizon, minimum=1)
    grid = as_array("grid", grid, ndim=1, min_size=2)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0) or grid[-1] > 1:
        raise ValueError("grid must increase strictly from 0 within [0, 1]")
    lam = check_real("lam", lam, minimum=0.0)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    gamma = check_probability("gamma", gamma)
    beta = check_real("beta", beta, minimum=0.0)
    if gamma == 0 and beta > 0:
        raise ValueError("gamma must be positive when beta > 0")
    if not isinstance(unlock, bool):
        raise ValueError(f"unlock must be True or False, got {unlock!r}")
    num_classes = check_int("num_classes", num_classes, minimum=2)
    easy = check_real("easy", easy)
    hard = check_real("hard", hard)
    r = 1 if replicates is None else check_int("replicates", replicates, minimum=1)
    rng = _check_rng(rng)
    labels = rng.integers(num_classes, size=(r, horizon))
    noise = rng.standard_normal((r, horizon, num_classes), dtype=np.float32)
    uniforms = rng.random((r, horizon), dtype=np.float32)
    graphs = jnp.asarray(_graphs(grid.size, unlock))
    out = _reactive_batched(jnp.asarray(grid, jnp.float32), graphs, labels, noise, uniforms,
                            lam, eta, gamma, beta, easy, hard)
    if replicates is None:
        out = tuple(o[0] for o in out)
    misses, sizes, ncov = (np.asarray(o) for o in out[2:])
    return bandits.BanditRun(arms=out[0], probs=out[1]), CoverageTable(misses, sizes, ncov, float(num_classes))


def _reactive_impl(grid, graphs, labels, noise, uniforms, lam, eta, gamma, beta, easy, hard):
    k, c = grid.size, noise.shape[-1]
    span = 1.0 + lam

    def step(carry, xs):
        cum, covered_prev = carry
        label, z, u = xs
        z = z + jnp.where(covered_prev, hard, easy) * jax.nn.one_hot(label, c)
        scores = jax.nn.softmax(z)
        misses = scores[label] < grid
        sizes = (scores[None, :] >= grid[:, None]).sum(-1)
        ncov = k - misses.sum()
        gains = 1.0 - (misses + lam * sizes / c) / span
        p = bandits.exp3p_probabilities(cum, eta=eta, gamma=gamma)
        arm = jnp.minimum(jnp.searchsorted(jnp.cumsum(p), u, side="right"), k - 1)
        graph = graphs[ncov]
        q = bandits.observation_probabilities(p, graph)
        cum = cum + bandits.exp3p_gain_estimates(gains, p, graph[arm], q, beta=beta)
        return (cum - cum.max(), ~misses[arm]), (arm, p, misses, sizes, ncov)

    _, out = jax.lax.scan(step, (jnp.zeros(k), jnp.array(False)), (labels, noise, uniforms))
    return out


_reactive_batched = jax.jit(jax.vmap(_reactive_impl, in_axes=(None, None, 0, 0, 0) + (None,) * 6))


class DigitsModel(NamedTuple):
    """A multinomial logistic regression fitted on part of scikit-learn's digits, and the rest.

    Attributes
    ----------
    coef : ndarray, shape (10, 64)
    intercept : ndarray, shape (10,)
    X_pool : ndarray, shape (n, 64)
        Held-out images (pixels scaled to [0, 1]) that streams are drawn from.
    y_pool : ndarray of int, shape (n,)
    """

    coef: np.ndarray
    intercept: np.ndarray
    X_pool: np.ndarray
    y_pool: np.ndarray


def fit_digits_model(*, n_train=600, rng):
    r"""Fit scikit-learn's ``LogisticRegression`` on ``n_train`` random digits; keep the rest as a pool.

    Parameters
    ----------
    n_train : int, default 600
        Training images, in [20, 1700].
    rng : numpy.random.Generator
        Chooses the training split.

    Returns
    -------
    DigitsModel

    Raises
    ------
    ValueError
        If ``n_train`` is out of range or ``rng`` is not a Generator.

    Examples
    --------
    >>> m = fit_digits_model(n_train=300, rng=np.random.default_rng(0))
    >>> m.coef.shape, m.X_pool.shape
    ((10, 64), (1497, 64))
    """
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    n_train = check_int("n_train", n_train, minimum=20, maximum=1700)
    rng = _check_rng(rng)
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    perm = rng.permutation(len(y))
    tr, rest = perm[:n_train], perm[n_train:]
    clf = LogisticRegression(max_iter=2000).fit(X[tr], y[tr])
    return DigitsModel(clf.coef_, clf.intercept_, X[rest], y[rest])


def digits_stream(model, kind, horizon, *, noise_max=0.6, rng):
    r"""Scores of the fitted digits classifier on a stream drawn from the held-out pool.

    Parameters
    ----------
    model : DigitsModel
        From :func:`fit_digits_model`.
    kind : {"iid", "noise", "sorted"}
        ``iid``: images drawn with replacement; ``noise``: the same, plus Gaussian pixel noise whose
        standard deviation grows linearly from 0 to ``noise_max`` over the stream; ``sorted``: the
        i.i.d. draw reordered by label (all 0s, then all 1s, ...).
    horizon : int
        Number of rounds :math:`T \ge 1`.
    noise_max : float, default 0.6
        Final noise level (pixels are in [0, 1]).
    rng : numpy.random.Generator

    Returns
    -------
    probs : ndarray, shape (T, 10)
    labels : ndarray of int, shape (T,)

    Raises
    ------
    ValueError
        For an unknown ``kind`` or invalid arguments.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m = fit_digits_model(n_train=300, rng=rng)
    >>> probs, labels = digits_stream(m, "sorted", 50, rng=rng)
    >>> bool(np.all(np.diff(labels) >= 0))
    True
    """
    if not isinstance(model, DigitsModel):
        raise ValueError(f"model must be a DigitsModel (from fit_digits_model), got {type(model).__name__}")
    if kind not in ("iid", "noise", "sorted"):
        raise ValueError(f"kind must be one of ('iid', 'noise', 'sorted'), got {kind!r}")
    horizon = check_int("horizon", horizon, minimum=1)
    noise_max = check_real("noise_max", noise_max, minimum=0.0)
    rng = _check_rng(rng)
    idx = rng.integers(len(model.y_pool), size=horizon)
    if kind == "sorted":
        idx = idx[np.argsort(model.y_pool[idx], kind="stable")]
    X = model.X_pool[idx]
    if kind == "noise":
        X = X + noise_max * (np.arange(horizon) / horizon)[:, None] * rng.standard_normal(X.shape)
    z = X @ model.coef.T + model.intercept
    z -= z.max(1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(1, keepdims=True), model.y_pool[idx]


def diabetes_residuals(kind, horizon, *, n_train=150, alpha_ridge=1.0, rng):
    r"""Absolute residuals of a ridge regression on scikit-learn's bundled diabetes data, as a stream.

    Ridge regression (scikit-learn, penalty ``alpha_ridge``) is fitted on ``n_train`` random rows; the
    stream draws the remaining rows with replacement.

    Parameters
    ----------
    kind : {"iid", "sorted"}
        ``sorted`` orders the draw by body-mass index (covariate shift: the stream moves from lean to
        heavy patients).
    horizon : int
        Number of rounds :math:`T \ge 1`.
    n_train : int, default 150
        Training rows, in [20, 400].
    alpha_ridge : float, default 1.0
        Ridge penalty (positive).
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (T,)
        :math:`|y_t - \hat y_t|` (disease-progression units; targets range over 25–346).

    Raises
    ------
    ValueError
        For an unknown ``kind`` or invalid arguments.

    Examples
    --------
    >>> res = diabetes_residuals("sorted", 100, rng=np.random.default_rng(0))
    >>> res.shape, bool(res.min() >= 0)
    ((100,), True)
    """
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge

    if kind not in ("iid", "sorted"):
        raise ValueError(f"kind must be 'iid' or 'sorted', got {kind!r}")
    horizon = check_int("horizon", horizon, minimum=1)
    n_train = check_int("n_train", n_train, minimum=20, maximum=400)
    alpha_ridge = check_real("alpha_ridge", alpha_ridge, minimum=0.0, strict_min=True)
    rng = _check_rng(rng)
    X, y = load_diabetes(return_X_y=True)
    perm = rng.permutation(len(y))
    tr, rest = perm[:n_train], perm[n_train:]
    model = Ridge(alpha=alpha_ridge).fit(X[tr], y[tr])
    idx = rng.choice(rest, size=horizon)
    if kind == "sorted":
        idx = idx[np.argsort(X[idx, 2], kind="stable")]      # column 2 is body-mass index
    return np.abs(y[idx] - model.predict(X[idx]))


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
