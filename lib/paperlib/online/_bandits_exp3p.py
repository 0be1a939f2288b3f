"""EXP3.P of :mod:`paperlib.online.bandits`: its per-round building blocks and its runner.

This private module holds the bandit learner of :mod:`paperlib.online.bandits`: the pure per-round
functions (:func:`exp3p_probabilities`, :func:`observation_probabilities`,
:func:`exp3p_gain_estimates`, usable inside ``jax.lax.scan``), the jitted scan that plays EXP3.P
against an oblivious loss sequence with optional feedback graphs (:func:`exp3p`, :class:`BanditRun`),
and the module's validation helpers (Hedge uses ``_check_rate`` too). Everything here is re-exported by
:mod:`paperlib.online.bandits`, which is where it is documented and should be imported from.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


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
