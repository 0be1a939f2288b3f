r"""Self-correction with verifier feedback as online learning over a pool of experts.

A model answers a stream of binary queries :math:`x_1, x_2, \dots` that all come from one hidden task
:math:`\tau \in [K]`. It has a pool of :math:`K` experts, one per task (expert :math:`j` answers
:math:`\hat y_{t,j}`); the correct answer is :math:`\hat y_{t,\tau}`. After each answer a verifier says
whether it was right. With binary answers that verdict reveals the label, so the model can score every
expert after every attempt: self-correction becomes **online learning with expert advice**.

* **Halving** answers with the majority of the experts that agree with every verdict so far; with a
  perfect verifier it makes at most :math:`\log_2 K` mistakes.
* **Hedge** (exponentially weighted majority) answers with the vote
  :math:`\sum_j \mathrm{softmax}(-\eta L_t)_j\,\hat y_{t,j}`, where :math:`L_{t,j}` counts expert
  :math:`j`'s disagreements with the verifier so far; it makes at most
  :math:`(\eta L^\star + \ln K)/\ln(2/(1+e^{-\eta}))` mistakes against the verifier's reports, where
  :math:`L^\star` is the best expert's count (Littlestone and Warmuth, 1994).
* Two ways of spending test-time compute **without** feedback serve as controls: a fixed single-task
  model (one expert for the whole session) and i.i.d. resampling (a fresh expert every round).

The exponential weights come from :func:`paperlib.online.bandits.hedge_probabilities`, the book's one
implementation of Hedge. The Transformer that runs Hedge from its own context lives in
:mod:`paperlib.online.in_context_hedge`.

References
----------
B. Huang, S. Li, T. Wu, Y. Yang, A. Talwalkar, K. Ramchandran, M. I. Jordan, J. Jiao,
"Sample Complexity and Representation Ability of Test-time Scaling Paradigms", ICLR 2026,
arXiv:2506.05295 (Section 4: self-correction as test-time online learning over experts).
N. Littlestone, M. K. Warmuth, "The weighted majority algorithm", Information and Computation 108,
1994 (Theorem 2.1 for the mistake bound).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from . import bandits
from ..core._validation import as_array, check_int, check_option, check_real
from .test_time_scaling import MonteCarloEstimate

__all__ = [
    "STRATEGIES",
    "TIE_TOLERANCE",
    "make_experts",
    "disagreement_rates",
    "pool_majority_error",
    "Sessions",
    "draw_sessions",
    "online_mistakes",
    "weighted_majority_bound",
]

#: Ways of spending test-time compute on a stream of queries, see :func:`online_mistakes`.
STRATEGIES = ("halving", "hedge", "fixed", "random")

#: A vote within this distance of 1/2 is a tie and answers 1 (so rounding cannot split a tie).
TIE_TOLERANCE = 1e-9


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _binary(name, value, **kw):
    arr = as_array(name, value, dtype=np.int8, **kw)
    if np.any((arr != 0) & (arr != 1)):
        raise ValueError(f"{name} must hold only 0 and 1")
    return arr


def make_experts(num_experts, dim, *, rng):
    r"""A pool of :math:`K` linear-threshold experts; expert :math:`j` answers :math:`\mathbb 1[w_j\cdot x > 0]`.

    Each expert stands for one task that a single-task model could solve.

    Parameters
    ----------
    num_experts : int
        :math:`K \ge 1`.
    dim : int
        Input dimension :math:`d \ge 1`.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    ndarray, shape (K, d)
        Standard Gaussian weight vectors.

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``rng`` is not a Generator.

    Examples
    --------
    >>> make_experts(3, 2, rng=np.random.default_rng(0)).shape
    (3, 2)
    """
    num_experts = check_int("num_experts", num_experts, minimum=1)
    dim = check_int("dim", dim, minimum=1)
    return _check_rng(rng).standard_normal((num_experts, dim))


def disagreement_rates(experts):
    r"""Probability that two experts disagree on a query :math:`x \sim N(0, I_d)`: :math:`\theta_{jk}/\pi`.

    Two halfspaces through the origin disagree exactly on the wedge between them, whose Gaussian
    measure is the angle :math:`\theta_{jk} = \arccos\big(w_j\cdot w_k/(\|w_j\|\,\|w_k\|)\big)` over
    :math:`\pi`. Averaged over a uniformly random pair (diagonal included) this is the expected error
    rate of the two no-feedback controls of :func:`online_mistakes` on this pool.

    Parameters
    ----------
    experts : array_like, shape (K, d)
        Expert weight vectors (non-zero).

    Returns
    -------
    ndarray, shape (K, K)
        Symmetric, zero diagonal, entries in [0, 1].

    Raises
    ------
    ValueError
        If ``experts`` is not a finite 2-D array or has a zero row.

    Examples
    --------
    >>> disagreement_rates(np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])).round(2).tolist()
    [[0.0, 0.5, 1.0], [0.5, 0.0, 0.5], [1.0, 0.5, 0.0]]
    """
    experts = as_array("experts", experts, ndim=2)
    norms = np.linalg.norm(experts, axis=1)
    if np.any(norms == 0):
        raise ValueError("experts must have non-zero rows")
    unit = experts / norms[:, None]
    return np.arccos(np.clip(unit @ unit.T, -1.0, 1.0)) / np.pi


def pool_majority_error(experts, *, samples=20_000, rng):
    r"""Error rate of the pool's plain majority against a uniformly random member of the pool.

    With no verdict yet (or none to trust) the learners answer with the majority of all :math:`K`
    experts; the hidden task is a uniformly random expert :math:`\tau`, so their error rate is

    .. math:: u = \mathbb E_x\Big[\frac1K \sum_{\tau=1}^K \mathbb 1\big[\mathrm{maj}(x) \ne \hat y_\tau(x)\big]\Big]
              = \mathbb E_x\big[\min(B_x, K - B_x)\big]/K \quad(\text{ties answer } 1),

    with :math:`B_x` the number of experts answering 1. Estimated by Monte Carlo over
    :math:`x \sim N(0, I_d)` for this particular pool.

    Parameters
    ----------
    experts : array_like, shape (K, d)
        Expert weight vectors.
    samples : int, default 20000
        Monte Carlo queries.
    rng : numpy.random.Generator
        Source of the queries (keyword-only).

    Returns
    -------
    MonteCarloEstimate
        ``mean`` (the rate :math:`u`) and ``stderr``.

    Raises
    ------
    ValueError
        If ``experts`` is not a finite 2-D array, ``samples`` is not a positive integer or ``rng`` is
        not a Generator.

    Examples
    --------
    >>> W = np.array([[1.0, 0.0], [-1.0, 0.0]])      # two opposite experts: the tie answers 1
    >>> round(pool_majority_error(W, samples=1000, rng=np.random.default_rng(0)).mean, 3)
    0.5
    """
    experts = as_array("experts", experts, ndim=2)
    samples = check_int("samples", samples, minimum=2)
    x = _check_rng(rng).standard_normal((samples, experts.shape[1]))
    ones = (x @ experts.T > 0).sum(axis=1)
    k = experts.shape[0]
    err = np.where(2 * ones >= k, k - ones, ones) / k
    return MonteCarloEstimate(float(err.mean()), float(err.std(ddof=1) / math.sqrt(samples)))


class Sessions(NamedTuple):
    """Sessions of queries from hidden tasks, as drawn by :func:`draw_sessions`.

    Attributes
    ----------
    preds : int8 ndarray, shape (S, T, K)
        Every expert's answer to every query.
    labels : int8 ndarray, shape (S, T)
        The true answers (those of the hidden task's expert).
    feedback : int8 ndarray, shape (S, T)
        The label the verifier's verdict implies (``labels`` with lies flipped).
    task : int ndarray, shape (S,)
        The hidden task of each session.
    queries : ndarray, shape (S, T, d)
        The queries :math:`x_t` themselves (for models that compute the experts' answers).
    """

    preds: np.ndarray
    labels: np.ndarray
    feedback: np.ndarray
    task: np.ndarray
    queries: np.ndarray


def draw_sessions(experts, *, rounds, sessions, feedback_flip=0.0, rng):
    r"""Draw multi-task sessions: a hidden task, queries, the experts' answers and the verifier's reports.

    Each session draws a task :math:`\tau` uniform in :math:`[K]` and ``rounds`` queries
    :math:`x_t \sim N(0, I_d)`; the true answer is expert :math:`\tau`'s (the realizable setting). The
    verifier's verdict is a lie with probability ``feedback_flip``, independently in every round.

    Parameters
    ----------
    experts : array_like, shape (K, d)
        Expert weight vectors (see :func:`make_experts`).
    rounds : int
        Queries per session, :math:`T \ge 1`.
    sessions : int
        Number of sessions, :math:`S \ge 1`.
    feedback_flip : float, default 0.0
        Probability in [0, 1/2) that a verdict is a lie.
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    Sessions

    Raises
    ------
    ValueError
        On invalid sizes, ``feedback_flip`` outside [0, 1/2) or a bad ``rng``.

    Examples
    --------
    >>> s = draw_sessions(np.eye(3), rounds=4, sessions=2, rng=np.random.default_rng(0))
    >>> s.preds.shape, s.labels.shape
    ((2, 4, 3), (2, 4))
    """
    experts = as_array("experts", experts, ndim=2)
    rounds = check_int("rounds", rounds, minimum=1)
    sessions = check_int("sessions", sessions, minimum=1)
    feedback_flip = check_real("feedback_flip", feedback_flip, minimum=0.0, maximum=0.5, strict_max=True)
    rng = _check_rng(rng)
    k, d = experts.shape
    task = rng.integers(k, size=sessions)
    x = rng.standard_normal((sessions, rounds, d))
    preds = np.empty((sessions, rounds, k), np.int8)
    for i in range(0, sessions, 16):  # chunks bound the float temporary at 16 * T * K entries
        preds[i:i + 16] = x[i:i + 16] @ experts.T > 0
    labels = preds[np.arange(sessions), :, task]
    flips = (rng.random((sessions, rounds)) < feedback_flip).astype(np.int8)
    return Sessions(preds, labels, labels ^ flips, task, x)


def online_mistakes(expert_preds, labels, feedback, *, strategy, eta=1.0, rng):
    r"""Mistakes of one test-time strategy on sessions of queries from one hidden task.

    Round :math:`t` of a session: the model sees the experts' answers :math:`\hat y_{t,j}`, answers
    :math:`\hat y_t`, and the verifier's verdict then implies the label ``feedback[t]``. Expert
    :math:`j`'s loss before round :math:`t` is :math:`L_{t,j} = \sum_{s<t} \mathbb 1[\hat y_{s,j} \ne
    \text{feedback}_s]`; it does not depend on the model's own answers, so all rounds are computed at
    once.

    * ``"halving"``: majority of the experts with :math:`L_{t,j} = 0` (the version space); when no
      expert is left (only with a lying verifier), majority of all experts.
    * ``"hedge"``: weighted majority with Hedge's weights
      :func:`paperlib.online.bandits.hedge_probabilities` (losses ``1[pred != feedback]``, rate ``eta``).
    * ``"fixed"``: one expert drawn at the start of the session and kept (a single-task model).
    * ``"random"``: a fresh expert every round, ignoring feedback (i.i.d. resampling).

    A vote at least :math:`1/2 -` :data:`TIE_TOLERANCE` answers 1.

    Parameters
    ----------
    expert_preds : {0,1} int array, shape (S, T, K)
        Answers of :math:`K` experts to :math:`T` queries in each of :math:`S` sessions.
    labels : {0,1} int array, shape (S, T)
        True answers; mistakes are counted against these.
    feedback : {0,1} int array, shape (S, T)
        The labels the verdicts imply (equal to ``labels`` for a truthful verifier).
    strategy : {"halving", "hedge", "fixed", "random"}
    eta : float, default 1.0
        Hedge's learning rate (> 0); ignored by the other strategies.
    rng : numpy.random.Generator
        Used by ``"fixed"`` and ``"random"`` (keyword-only).

    Returns
    -------
    bool ndarray, shape (S, T)
        ``True`` where the strategy's answer was wrong.

    Raises
    ------
    ValueError
        On shape mismatches, entries other than 0/1, an unknown ``strategy`` or a non-positive ``eta``.

    Notes
    -----
    Halving makes at most :math:`\log_2 K` mistakes with a truthful verifier (each mistake removes at
    least half the version space); weighted majority makes at most
    :func:`weighted_majority_bound` mistakes against the verifier's reports.

    Examples
    --------
    >>> preds = np.array([[[1, 0, 1, 0], [0, 0, 1, 1]]])           # 1 session, 2 rounds, K = 4
    >>> y = preds[..., 2]                                          # the hidden task is expert 2
    >>> online_mistakes(preds, y, y, strategy="halving", rng=np.random.default_rng(0)).astype(int).tolist()
    [[0, 0]]
    """
    preds = _binary("expert_preds", expert_preds, ndim=3)
    s, t, k = preds.shape
    labels = _binary("labels", labels, shape=(s, t))
    feedback = _binary("feedback", feedback, shape=(s, t))
    strategy = check_option("strategy", strategy, STRATEGIES)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    rng = _check_rng(rng)
    if strategy in ("halving", "hedge"):
        wrong = preds != feedback[..., None]  # (S, T, K): expert j disagreed with the verdict
        if strategy == "halving":
            ever = np.logical_or.accumulate(wrong, axis=1)
            alive = np.ones_like(wrong)
            alive[:, 1:] = ~ever[:, :-1]  # no disagreement before round t
            alive |= ~alive.any(axis=-1, keepdims=True)  # empty version space: all experts
            vote = (alive & (preds == 1)).sum(-1) / alive.sum(-1)
        else:
            vote = np.stack([np.sum(bandits.hedge_probabilities(wrong[i].astype(float), eta=eta) * preds[i], -1)
                             for i in range(s)])
        answer = (vote >= 0.5 - TIE_TOLERANCE).astype(np.int8)
    elif strategy == "fixed":
        j = rng.integers(k, size=(s, 1, 1))
        answer = np.take_along_axis(preds, np.broadcast_to(j, (s, t, 1)), axis=-1)[..., 0]
    else:
        j = rng.integers(k, size=(s, t, 1))
        answer = np.take_along_axis(preds, j, axis=-1)[..., 0]
    return answer != labels


def weighted_majority_bound(num_experts, *, eta, best_loss=0.0):
    r"""Weighted majority's mistake bound :math:`(\eta L^\star + \ln K)/\ln\big(2/(1+e^{-\eta})\big)`.

    Every mistake of the weighted vote (against the reported labels) multiplies the total weight by
    at most :math:`(1+e^{-\eta})/2`, while the best expert keeps weight :math:`e^{-\eta L^\star}` out of
    an initial total :math:`K` (Littlestone and Warmuth, 1994).

    Parameters
    ----------
    num_experts : int
        :math:`K \ge 1`.
    eta : float
        Learning rate :math:`\eta > 0`.
    best_loss : float or array_like, default 0.0
        :math:`L^\star \ge 0`, the best expert's number of disagreements with the reports (0 for a
        truthful verifier, the number of lies at most otherwise).

    Returns
    -------
    float or ndarray, shape like ``best_loss``

    Raises
    ------
    ValueError
        If ``num_experts`` is not a positive integer, ``eta`` is not positive or ``best_loss`` is
        negative or not finite.

    Examples
    --------
    >>> round(weighted_majority_bound(256, eta=1.0), 2)
    14.6
    """
    num_experts = check_int("num_experts", num_experts, minimum=1)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    best = as_array("best_loss", best_loss, ndim=(0, 1))
    if np.any(best < 0):
        raise ValueError("best_loss must be non-negative")
    out = (eta * best + math.log(num_experts)) / math.log(2.0 / (1.0 + math.exp(-eta)))
    return float(out) if out.ndim == 0 else out
