r"""Exponential weights for online learning: Hedge (full information) and EXP3.P (bandit feedback).

A learner picks one of :math:`K` arms (experts, actions) in each round :math:`t = 1, \dots, T`; the
environment assigns every arm a loss :math:`\ell_t(k) \in [\ell_{\min}, \ell_{\max}]`; the learner
pays :math:`\ell_t(a_t)`. Its **regret** against the best fixed arm in hindsight is

.. math:: R_T = \sum_{t=1}^T \ell_t(a_t) - \min_k \sum_{t=1}^T \ell_t(k).

* **Hedge** sees every loss and plays :math:`p_t(k) \propto \exp(-\eta L_{t-1}(k))`, where
  :math:`L_{t-1}` is the cumulative loss (Freund and Schapire, 1997).
* **EXP3.P** sees only what its feedback allows (Auer, Cesa-Bianchi, Freund and Schapire, 2002). It
  works with gains :math:`g = (\ell_{\max} - \ell)/(\ell_{\max} - \ell_{\min}) \in [0, 1]`, mixes
  exponential weights with uniform exploration,

  .. math:: p_t(k) = (1-\gamma)\,\frac{\exp(\eta \tilde G_{t-1}(k))}{\sum_j \exp(\eta \tilde G_{t-1}(j))}
            + \frac{\gamma}{K},

  and updates :math:`\tilde G_t = \tilde G_{t-1} + \tilde g_t` with the importance-weighted estimate

  .. math:: \tilde g_t(k) = \frac{g_t(k)\,\mathbb 1[k \text{ observed}]}{q_t(k)} + \frac{\beta}{p_t(k)},
            \qquad q_t(k) = \sum_a p_t(a)\, G_t[a, k].

**Feedback graphs.** Which losses the learner sees is described by a boolean matrix :math:`G_t` of
shape ``(K, K)``: playing arm :math:`a` reveals the loss of every arm :math:`k` with
:math:`G_t[a, k]` true (Alon, Cesa-Bianchi, Gentile and Mansour, 2013). The identity is plain bandit
feedback (then :math:`q_t = p_t` and the estimate is EXP3.P's), all-true is full information. Arm
:math:`k` is seen with probability :math:`q_t(k)`, so dividing by :math:`q_t(k)` makes the first
term of :math:`\tilde g_t(k)` an unbiased estimate of :math:`g_t(k)`. Graphs may change every round:
they are given as a small table ``feedback_graphs`` of shape ``(S, K, K)`` and an index
``feedback_index[t]`` into it, which the learner may use only after playing (the "informed" setting).

The per-round building blocks (:func:`exp3p_probabilities`, :func:`observation_probabilities`,
:func:`exp3p_gain_estimates`) are pure functions that can be called inside ``jax.lax.scan``; this is
how an adaptive adversary, whose losses depend on the learner's past arms, is simulated
(:mod:`paperlib.online.conformal`). :func:`exp3p` runs the learner against an oblivious loss sequence.

References
----------
Y. Freund, R. E. Schapire, "A decision-theoretic generalization of on-line learning and an
application to boosting", J. Computer and System Sciences, 1997.
P. Auer, N. Cesa-Bianchi, Y. Freund, R. E. Schapire, "The nonstochastic multiarmed bandit problem",
SIAM J. Computing, 2002 (EXP3.P, Section 6).
S. Bubeck, N. Cesa-Bianchi, "Regret analysis of stochastic and nonstochastic multi-armed bandit
problems", Foundations and Trends in ML, 2012 (Theorem 3.3: the parameters of
:func:`exp3p_parameters` and the bound of :func:`exp3p_regret_bound`).
N. Alon, N. Cesa-Bianchi, C. Gentile, Y. Mansour, "From bandits to experts: a tale of domination and
independence", NeurIPS 2013 (feedback graphs).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax  # noqa: F401  (kept: the bad-input probe finds JAX modules by their globals)
import jax.numpy as jnp  # noqa: F401
import numpy as np

from ..core._validation import as_array, check_int, check_real
from ._bandits_exp3p import (  # noqa: F401  (re-exported: part of this module's API)
    BanditRun,
    _check_rate,
    _check_rng,
    _exp3p_batched,
    _exp3p_jit,
    _exp3p_scan,
    _traced,
    exp3p,
    exp3p_gain_estimates,
    exp3p_probabilities,
    observation_probabilities,
)

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "hedge_probabilities",
    "hedge_regret_bound",
    "exp3p_probabilities",
    "observation_probabilities",
    "exp3p_gain_estimates",
    "BanditRun",
    "exp3p",
    "Exp3pParameters",
    "exp3p_parameters",
    "exp3p_regret_bound",
    "regret",
    "expected_regret",
]


# ----------------------------------------------------------------------------------------------
# Hedge
# ----------------------------------------------------------------------------------------------


def hedge_probabilities(losses, *, eta):
    r"""Hedge's probabilities :math:`p_t(k) \propto \exp(-\eta \sum_{s<t} \ell_s(k))` for every round.

    Parameters
    ----------
    losses : array_like, shape (T, K)
        Loss of every arm (expert) in every round; full information, any real values.
    eta : float
        Learning rate :math:`\eta > 0`.

    Returns
    -------
    ndarray, shape (T, K)
        Row ``t`` is the distribution played in round ``t`` (before ``losses[t]`` is seen); row 0 is
        uniform. Rows sum to one.

    Raises
    ------
    ValueError
        If ``losses`` is not a finite non-empty 2-D array or ``eta`` is not a positive number.

    Notes
    -----
    Computed in closed form from an exclusive cumulative sum and a stabilised softmax, with no loop
    over rounds. For losses in [0, 1], Hedge's expected regret is at most
    :math:`\ln K/\eta + \eta T/8` (:func:`hedge_regret_bound`).

    References
    ----------
    Freund and Schapire (1997); Cesa-Bianchi and Lugosi, *Prediction, Learning, and Games*, 2006,
    Theorem 2.2.

    Examples
    --------
    >>> p = hedge_probabilities([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]], eta=1.0)
    >>> np.round(p, 3).tolist()
    [[0.5, 0.5], [0.731, 0.269], [0.881, 0.119]]
    """
    losses = as_array("losses", losses, ndim=2, min_size=1)
    eta = _check_rate("eta", eta)
    cum = np.cumsum(losses, axis=0) - losses            # losses before round t
    z = -eta * cum
    z = z - z.max(axis=1, keepdims=True)
    w = np.exp(z)
    return w / w.sum(axis=1, keepdims=True)


def hedge_regret_bound(horizon, num_arms, *, eta):
    r"""Hedge's regret bound :math:`\ln K/\eta + \eta T/8` for losses in [0, 1].

    Parameters
    ----------
    horizon : int
        Number of rounds :math:`T \ge 1`.
    num_arms : int
        Number of arms :math:`K \ge 1`.
    eta : float
        Learning rate :math:`\eta > 0`; :math:`\eta = \sqrt{8\ln K/T}` minimises the bound to
        :math:`\sqrt{T\ln K/2}`.

    Returns
    -------
    float
        The bound on the expected regret :math:`\sum_t \langle p_t, \ell_t\rangle - \min_k L_T(k)`.

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``eta`` is not positive.

    Examples
    --------
    >>> round(hedge_regret_bound(1000, 10, eta=0.1), 3)
    35.526
    """
    horizon = check_int("horizon", horizon, minimum=1)
    num_arms = check_int("num_arms", num_arms, minimum=1)
    eta = _check_rate("eta", eta)
    return math.log(num_arms) / eta + eta * horizon / 8


# ----------------------------------------------------------------------------------------------
# EXP3.P's tuned parameters and regret bound (the EXP3.P learner is in _bandits_exp3p)
# ----------------------------------------------------------------------------------------------


class Exp3pParameters(NamedTuple):
    """EXP3.P's parameters (Bubeck and Cesa-Bianchi, 2012, Theorem 3.3)."""

    eta: float
    gamma: float
    beta: float


def exp3p_parameters(horizon, num_arms, *, delta=0.05):
    r"""EXP3.P's horizon-tuned parameters for a regret bound holding with probability :math:`1-\delta`.

    .. math:: \beta = \sqrt{\frac{\ln(K/\delta)}{TK}}, \quad \eta = 0.95\sqrt{\frac{\ln K}{TK}},
              \quad \gamma = 1.05\sqrt{\frac{K\ln K}{T}}.

    Parameters
    ----------
    horizon : int
        Number of rounds :math:`T \ge 1`.
    num_arms : int
        Number of arms :math:`K \ge 2`.
    delta : float, default 0.05
        Failure probability in (0, 1).

    Returns
    -------
    Exp3pParameters
        ``(eta, gamma, beta)``; ``gamma`` is capped at 1.

    Raises
    ------
    ValueError
        If a size is out of range or ``delta`` is outside (0, 1).

    References
    ----------
    Bubeck and Cesa-Bianchi (2012), Theorem 3.3.

    Examples
    --------
    >>> p = exp3p_parameters(30_000, 20, delta=0.05)
    >>> round(p.eta, 5), round(p.gamma, 4), round(p.beta, 5)
    (0.00212, 0.0469, 0.00316)
    """
    horizon = check_int("horizon", horizon, minimum=1)
    num_arms = check_int("num_arms", num_arms, minimum=2)
    delta = check_real("delta", delta, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    t, k = horizon, num_arms
    return Exp3pParameters(
        eta=0.95 * math.sqrt(math.log(k) / (t * k)),
        gamma=min(1.0, 1.05 * math.sqrt(k * math.log(k) / t)),
        beta=math.sqrt(math.log(k / delta) / (t * k)),
    )


def exp3p_regret_bound(horizon, num_arms, *, delta=0.05):
    r"""EXP3.P's high-probability regret bound :math:`5.15\sqrt{TK\ln(K/\delta)}` (gains in [0, 1]).

    Parameters
    ----------
    horizon : int
        Number of rounds :math:`T \ge 1`.
    num_arms : int
        Number of arms :math:`K \ge 2`.
    delta : float, default 0.05
        Failure probability in (0, 1).

    Returns
    -------
    float
        With the parameters of :func:`exp3p_parameters`, the regret (in gain units) is below this
        value with probability at least :math:`1-\delta`, against any adaptive adversary.

    Raises
    ------
    ValueError
        If a size is out of range or ``delta`` is outside (0, 1).

    Examples
    --------
    >>> round(exp3p_regret_bound(30_000, 20, delta=0.05) / 30_000, 3)
    0.325
    """
    horizon = check_int("horizon", horizon, minimum=1)
    num_arms = check_int("num_arms", num_arms, minimum=2)
    delta = check_real("delta", delta, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    return 5.15 * math.sqrt(horizon * num_arms * math.log(num_arms / delta))


# ----------------------------------------------------------------------------------------------
# regret
# ----------------------------------------------------------------------------------------------


def regret(losses, arms):
    r"""Realised regret over every prefix: :math:`R_t = \sum_{s\le t}\ell_s(a_s) - \min_k \sum_{s \le t}\ell_s(k)`.

    Parameters
    ----------
    losses : array_like, shape (T, K) or (R, T, K)
        Loss of every arm in every round (evaluation only: the full matrix).
    arms : array_like of int, shape (T,) or (R, T)
        The arms played.

    Returns
    -------
    ndarray, shape (T,) or (R, T)
        Cumulative regret after each round against the best fixed arm **of that prefix**.

    Raises
    ------
    ValueError
        If the shapes disagree, the losses are not finite, or an arm is out of range.

    Examples
    --------
    >>> regret([[0.0, 1.0], [0.0, 1.0], [1.0, 0.0]], [1, 0, 0]).tolist()
    [1.0, 1.0, 1.0]
    """
    losses = as_array("losses", losses, ndim=(2, 3), min_size=1)
    arms = np.asarray(arms)
    if not np.issubdtype(arms.dtype, np.integer) or arms.shape != losses.shape[:-1]:
        raise ValueError(f"arms must be an integer array of shape {losses.shape[:-1]}, got {arms.dtype} {arms.shape}")
    k = losses.shape[-1]
    if arms.min() < 0 or arms.max() >= k:
        raise ValueError(f"arms must lie in [0, {k - 1}]")
    paid = np.take_along_axis(losses, arms[..., None], axis=-1)[..., 0]
    return np.cumsum(paid, axis=-1) - np.cumsum(losses, axis=-2).min(axis=-1)


def expected_regret(losses, probs):
    r"""Regret of the played distributions: :math:`\sum_{s\le t}\langle p_s, \ell_s\rangle - \min_k \sum_{s\le t}\ell_s(k)`.

    This removes the learner's own sampling noise from :func:`regret` (its mean over the draws of
    the arms when the losses are oblivious).

    Parameters
    ----------
    losses : array_like, shape (T, K) or (R, T, K)
        Loss of every arm in every round.
    probs : array_like, shape like ``losses``
        The learner's distribution in every round.

    Returns
    -------
    ndarray, shape (T,) or (R, T)
        Cumulative expected regret after each round.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, or a row of ``probs`` is not a distribution.

    Examples
    --------
    >>> expected_regret([[0.0, 1.0], [0.0, 1.0]], [[0.5, 0.5], [0.9, 0.1]]).round(3).tolist()
    [0.5, 0.6]
    """
    losses = as_array("losses", losses, ndim=(2, 3), min_size=1)
    probs = as_array("probs", probs, shape=losses.shape)
    if np.any(probs < -1e-9) or np.any(np.abs(probs.sum(-1) - 1) > 1e-4):
        raise ValueError("probs must hold probability vectors along the last axis")
    paid = np.sum(probs * losses, axis=-1)
    return np.cumsum(paid, axis=-1) - np.cumsum(losses, axis=-2).min(axis=-1)
