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

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_int, check_real

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
# validation helpers
# ----------------------------------------------------------------------------------------------


def _traced(*xs) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in xs)


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_rate(name, value, *, allow_zero=False):
    return check_real(name, value, minimum=0.0, strict_min=not allow_zero)


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
# EXP3.P building blocks (usable inside lax.scan)
# ----------------------------------------------------------------------------------------------


def exp3p_probabilities(cum_gain_estimates, *, eta, gamma):
    r"""EXP3.P's distribution :math:`(1-\gamma)\,\mathrm{softmax}(\eta \tilde G) + \gamma/K`.

    Parameters
    ----------
    cum_gain_estimates : array_like, shape (K,) or (R, K)
        Cumulative gain estimates :math:`\tilde G_{t-1}`; only differences between arms matter.
    eta : float
        Learning rate :math:`\eta > 0`.
    gamma : float
        Exploration rate :math:`\gamma \in [0, 1]`.

    Returns
    -------
    array, shape (K,) or (R, K)
        Probabilities, each at least :math:`\gamma/K`, summing to one over the last axis.

    Raises
    ------
    ValueError
        On concrete (non-traced) input: if ``cum_gain_estimates`` is empty or not finite, ``eta`` is
        not positive or ``gamma`` is outside [0, 1]. Inside ``jit`` only shapes are checked.

    Examples
    --------
    >>> p = exp3p_probabilities(np.array([0.0, 10.0]), eta=0.1, gamma=0.2)
    >>> [round(float(x), 3) for x in p]
    [0.315, 0.685]
    """
    if not _traced(cum_gain_estimates, eta, gamma):
        cum_gain_estimates = as_array("cum_gain_estimates", cum_gain_estimates, ndim=(1, 2), min_size=1)
        eta = _check_rate("eta", eta)
        gamma = check_real("gamma", gamma, minimum=0.0, maximum=1.0)
    g = jnp.asarray(cum_gain_estimates)
    k = g.shape[-1]
    return (1.0 - gamma) * jax.nn.softmax(eta * g, axis=-1) + gamma / k


def observation_probabilities(probs, graph):
    r"""Probability :math:`q(k) = \sum_a p(a)\,G[a, k]` that arm :math:`k`'s loss is observed.

    Parameters
    ----------
    probs : array_like, shape (K,)
        The learner's distribution over arms in this round.
    graph : array_like of bool, shape (K, K)
        Feedback graph: ``graph[a, k]`` is true when playing arm ``a`` reveals arm ``k``'s loss.
        Every arm must observe itself (true diagonal).

    Returns
    -------
    array, shape (K,)
        :math:`q \ge p` entrywise (because of the diagonal).

    Raises
    ------
    ValueError
        On concrete input: a wrong shape, probabilities that are negative or do not sum to one, or a
        graph with a false diagonal entry.

    Examples
    --------
    >>> G = np.array([[True, True], [False, True]])     # arm 0 also reveals arm 1
    >>> [round(float(x), 3) for x in observation_probabilities(np.array([0.25, 0.75]), G)]
    [0.25, 1.0]
    """
    if not _traced(probs, graph):
        probs = as_array("probs", probs, ndim=1, min_size=1)
        if np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-5:
            raise ValueError(f"probs must be a probability vector (non-negative, sum 1), got sum {probs.sum():.6g}")
        graph = np.asarray(graph)
        if graph.dtype != bool:
            raise ValueError(f"graph must be a boolean array, got dtype {graph.dtype}")
        if graph.shape != (probs.size, probs.size):
            raise ValueError(f"graph must have shape ({probs.size}, {probs.size}), got {graph.shape}")
        if not np.all(np.diag(graph)):
            raise ValueError("graph must have a true diagonal: every arm observes its own loss")
    return jnp.asarray(probs) @ jnp.asarray(graph).astype(jnp.result_type(float))


def exp3p_gain_estimates(gains, probs, observed, obs_probs, *, beta):
    r"""Importance-weighted gain estimates :math:`g\,\mathbb 1[\text{obs}]/q + \beta/p`.

    Parameters
    ----------
    gains : array_like, shape (K,)
        Gains in [0, 1]. Entries of arms that were **not** observed are ignored (any finite
        placeholder will do).
    probs : array_like, shape (K,)
        The distribution :math:`p_t` the arm was drawn from.
    observed : array_like of bool, shape (K,)
        Which arms' gains the feedback revealed this round (row ``a_t`` of the feedback graph).
    obs_probs : array_like, shape (K,)
        :math:`q_t`, from :func:`observation_probabilities`; positive wherever ``observed``.
    beta : float
        EXP3.P's confidence bias :math:`\beta \ge 0` (0 gives EXP3's unbiased estimate).

    Returns
    -------
    array, shape (K,)
        :math:`\tilde g_t`. Conditionally on the past, :math:`\mathbb E[\tilde g_t(k)] = g_t(k) + \beta/p_t(k)`.

    Raises
    ------
    ValueError
        On concrete input: shapes that differ, gains of observed arms outside [0, 1], non-positive
        probabilities, or a negative ``beta``.

    Examples
    --------
    >>> est = exp3p_gain_estimates(np.array([1.0, 0.0]), np.array([0.5, 0.5]),
    ...                            np.array([True, False]), np.array([0.5, 0.5]), beta=0.0)
    >>> [float(x) for x in est]
    [2.0, 0.0]
    """
    if not _traced(gains, probs, observed, obs_probs, beta):
        observed = np.asarray(observed)
        if observed.dtype != bool or observed.ndim != 1 or observed.size == 0:
            raise ValueError(f"observed must be a non-empty 1-D boolean array, got {observed!r}")
        k = observed.size
        gains = as_array("gains", gains, shape=(k,))
        probs = as_array("probs", probs, shape=(k,))
        obs_probs = as_array("obs_probs", obs_probs, shape=(k,))
        g_obs = gains[observed]
        if np.any((g_obs < 0) | (g_obs > 1)):
            raise ValueError("gains of observed arms must lie in [0, 1]")
        if np.any(probs <= 0):
            raise ValueError("probs must be positive (use gamma > 0 or beta = 0 with care)")
        if np.any(obs_probs[observed] <= 0):
            raise ValueError("obs_probs must be positive for every observed arm")
        beta = check_real("beta", beta, minimum=0.0)
    gains, probs = jnp.asarray(gains), jnp.asarray(probs)
    q = jnp.where(observed, obs_probs, 1.0)
    seen = jnp.where(observed, gains, 0.0) / q
    return seen + beta / probs


# ----------------------------------------------------------------------------------------------
# EXP3.P over an oblivious loss sequence
# ----------------------------------------------------------------------------------------------


class BanditRun(NamedTuple):
    """Output of :func:`exp3p`.

    Attributes
    ----------
    arms : jax.Array of int, shape (T,) or (R, T)
        The arm played in each round.
    probs : jax.Array, shape (T, K) or (R, T, K)
        The distribution each arm was drawn from.
    """

    arms: jax.Array
    probs: jax.Array


def _exp3p_scan(gains, fb_index, fb_graphs, uniforms, eta, gamma, beta):
    k = gains.shape[-1]

    def step(cum, xs):
        g_t, j_t, u_t = xs
        p = exp3p_probabilities(cum, eta=eta, gamma=gamma)
        arm = jnp.minimum(jnp.searchsorted(jnp.cumsum(p), u_t, side="right"), k - 1)
        graph = fb_graphs[j_t]
        q = observation_probabilities(p, graph)
        est = exp3p_gain_estimates(g_t, p, graph[arm], q, beta=beta)
        cum = (cum + est).astype(cum.dtype)  # float32 carry whatever jax_enable_x64 says
        return cum - cum.max(), (arm, p)     # softmax is shift-invariant: keep values bounded

    _, (arms, probs) = jax.lax.scan(step, jnp.zeros(k, gains.dtype), (gains, fb_index, uniforms))
    return arms, probs


_exp3p_jit = jax.jit(_exp3p_scan)
_exp3p_batched = jax.jit(jax.vmap(_exp3p_scan, in_axes=(0, 0, None, 0, 0, 0, 0)))


def exp3p(losses, *, eta, gamma, beta=0.0, loss_range=(0.0, 1.0), feedback_graphs=None,
          feedback_index=None, rng):
    r"""Run EXP3.P (optionally with a feedback graph) against an oblivious sequence of losses.

    Parameters
    ----------
    losses : array_like, shape (T, K) or (R, T, K)
        Loss of every arm in every round, in ``loss_range``. With a leading axis ``R``, runs ``R``
        independent replicates (each with its own losses, feedback indices and uniforms), vectorised.
        Entries the feedback does not reveal are never read (the unit tests change them and check
        that the run does not change).
    eta : float or array_like of shape (R,)
        Learning rate :math:`\eta > 0`.
    gamma : float or array_like of shape (R,)
        Exploration rate :math:`\gamma \in [0, 1]`; positive unless ``beta = 0``.
    beta : float or array_like of shape (R,), default 0.0
        Confidence bias :math:`\beta \ge 0` of EXP3.P (0 gives EXP3).
    loss_range : tuple of float, default (0.0, 1.0)
        :math:`(\ell_{\min}, \ell_{\max})`; gains are :math:`(\ell_{\max}-\ell)/(\ell_{\max}-\ell_{\min})`.
    feedback_graphs : array_like of bool, shape (S, K, K), optional
        Table of feedback graphs (true diagonals). Default: the identity (bandit feedback).
    feedback_index : array_like of int, shape (T,) or (R, T), optional
        Which graph of the table applies in each round; revealed to the learner after it plays.
        Default: all zeros.
    rng : numpy.random.Generator
        Keyword-only. Draws one uniform number per round (and replicate), which decides the arm.

    Returns
    -------
    BanditRun
        ``arms`` (shape ``(T,)`` or ``(R, T)``) and ``probs`` (shape ``(T, K)`` or ``(R, T, K)``).

    Raises
    ------
    ValueError
        If shapes disagree, an observed loss is outside ``loss_range``, a graph has a false diagonal,
        an index is out of range, a rate is out of range (``gamma = 0`` with ``beta > 0``), or
        ``rng`` is not a numpy Generator.

    Notes
    -----
    The arm is drawn by inverting the cumulative distribution at the uniform number
    ``rng.random(T)[t]`` (``rng.random((R, T))`` when batched), so an independent loop with the same
    uniforms reproduces the run exactly. Drawing them with numpy keeps the kernel free of JAX's
    random-number code, which is slow to compile on CPU.
    Cumulative estimates are re-centred every round (softmax is shift-invariant), so float32 is safe.
    With ``feedback_graphs`` the estimate divides by the observation probability :math:`q_t`, not
    by :math:`p_t` (:func:`exp3p_gain_estimates`); this is the only change from Auer et al. (2002).

    References
    ----------
    Auer, Cesa-Bianchi, Freund and Schapire (2002), Section 6, EXP3.P; Bubeck and Cesa-Bianchi (2012),
    Section 3.2. Feedback graphs: Alon et al. (2013).

    Examples
    --------
    >>> L = np.tile([0.9, 0.1, 0.5], (200, 1))          # arm 1 is always best
    >>> run = exp3p(L, eta=0.1, gamma=0.05, rng=np.random.default_rng(0))
    >>> run.arms.shape, run.probs.shape
    ((200,), (200, 3))
    >>> bool(run.probs[-1, 1] > 0.9)
    True
    """
    losses = as_array("losses", losses, ndim=(2, 3), min_size=1)
    batched = losses.ndim == 3
    r = losses.shape[0] if batched else 1
    t, k = losses.shape[-2:]
    if t < 1 or k < 1:
        raise ValueError(f"losses must have at least one round and one arm, got shape {losses.shape}")
    if not (isinstance(loss_range, (tuple, list)) and len(loss_range) == 2):
        raise ValueError(f"loss_range must be a pair (low, high), got {loss_range!r}")
    lo = check_real("loss_range", loss_range[0])
    hi = check_real("loss_range", loss_range[1])
    if not hi > lo:
        raise ValueError(f"loss_range must have low < high, got {loss_range!r}")

    def rates(name, value, lo_, hi_, strict):
        arr = as_array(name, value, ndim=(0, 1))
        if arr.ndim == 1 and (not batched or arr.shape != (r,)):
            raise ValueError(f"{name} must be a scalar or have shape (R,) = ({r},), got {arr.shape}")
        if np.any(arr < lo_) or np.any(arr > hi_) or (strict and np.any(arr == lo_)):
            raise ValueError(f"{name} must lie in {'(' if strict else '['}{lo_}, {hi_}], got {value!r}")
        return np.broadcast_to(arr, (r,)).astype(np.float32)

    eta = rates("eta", eta, 0.0, np.inf, True)
    gamma = rates("gamma", gamma, 0.0, 1.0, False)
    beta = rates("beta", beta, 0.0, np.inf, False)
    if np.any((gamma == 0) & (beta > 0)):
        raise ValueError("gamma must be positive when beta > 0 (beta/p needs p bounded away from 0)")

    if feedback_graphs is None:
        graphs = np.eye(k, dtype=bool)[None]
    else:
        graphs = np.asarray(feedback_graphs)
        if graphs.dtype != bool or graphs.ndim != 3 or graphs.shape[1:] != (k, k) or graphs.shape[0] < 1:
            raise ValueError(f"feedback_graphs must be a boolean array of shape (S, {k}, {k}), got "
                             f"{graphs.dtype} {graphs.shape}")
        if not np.all(np.diagonal(graphs, axis1=1, axis2=2)):
            raise ValueError("feedback_graphs must have true diagonals: every arm observes its own loss")
    if feedback_index is None:
        index = np.zeros(losses.shape[:-1], dtype=np.int32)
    else:
        index = np.asarray(feedback_index)
        if not np.issubdtype(index.dtype, np.integer) or index.shape != losses.shape[:-1]:
            raise ValueError(f"feedback_index must be an integer array of shape {losses.shape[:-1]}, got "
                             f"{index.dtype} {index.shape}")
        if index.size and (index.min() < 0 or index.max() >= graphs.shape[0]):
            raise ValueError(f"feedback_index must lie in [0, {graphs.shape[0] - 1}]")
        index = index.astype(np.int32)

    gains = (hi - losses) / (hi - lo)
    if np.any((gains < -1e-9) | (gains > 1 + 1e-9)):
        raise ValueError(f"losses must lie within loss_range {tuple(loss_range)}")
    gains = np.clip(gains, 0.0, 1.0).astype(np.float32)

    rng = _check_rng(rng)
    if batched:
        uniforms = rng.random((r, t), dtype=np.float32)
        arms, probs = _exp3p_batched(gains, index, graphs, uniforms, eta, gamma, beta)
    else:
        uniforms = rng.random(t, dtype=np.float32)
        arms, probs = _exp3p_jit(gains, index, graphs, uniforms, eta[0], gamma[0], beta[0])
    return BanditRun(arms=arms, probs=probs)


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
