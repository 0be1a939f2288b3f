r"""Personalized collaborative learning: AffPCL against independent and federated learning.

There are :math:`n` agents. Agent :math:`i` wants the solution :math:`x^i_*` of its own linear system
:math:`\bar A^i x^i_* = \bar b^i`, where :math:`\bar A^i = \mathbb E_{\mu_i} A(s)` and
:math:`\bar b^i = \mathbb E_{\mu_i} \Phi(s)\theta^i` are expectations over its **environment**
:math:`\mu_i`. The feature maps :math:`A(s)` and :math:`\Phi(s)` are shared; agents differ in
:math:`\mu_i` (environment heterogeneity) and in :math:`\theta^i` (objective heterogeneity). At every
step each agent draws one fresh state :math:`s^i_t \sim \mu_i` and talks to a server.

Three learners are run on common random numbers (the same states for all of them):

* **independent learning (IL)**: :math:`x^i \leftarrow x^i - \alpha_t\,g^i_t(x^i)`,
  :math:`g^i_t(x) = A(s^i_t)x - b^i(s^i_t)`;
* **federated averaging (FedAvg)**, which is also AffPCL's central decision learning (CDL):
  :math:`x^c \leftarrow x^c - \alpha_t \frac1n\sum_j g^j_t(x^c)`; with it, central objective estimation
  (COE) :math:`\theta^c \leftarrow \theta^c - \alpha_t\frac1n\sum_j(\Phi(s^j_t)\theta^c - b^j(s^j_t))`;
* **AffPCL** (Zhang & Azizan, eq. 8 and Algorithm 1):
  :math:`x^i \leftarrow x^i - \alpha_t\big[g^i_t(x^i) + g^{c\Rightarrow i}_t(x^c) - g^{c\to i}_t(x^c)\big]`
  with the bias correction :math:`g^{c\to i}_t(x) = A(s^i_t)x - \Phi(s^i_t)\theta^c` at the agent's own
  state and the importance-corrected central direction
  :math:`g^{c\Rightarrow i}_t(x) = \frac1n\sum_j \rho^i(s^j_t)\,g^{c\to j}_t(x)`,
  :math:`\rho^i = \mu_i/\mu^0`, :math:`\mu^0 = \frac1n\sum_j\mu_j`. The ablation without importance
  correction sets :math:`\rho^i \equiv 1`.

The systems (a finite state space, where every expectation and asymptotic error is exact, and the
paper's Gaussian construction of Appendix B) live in :mod:`paperlib.distributed.multi_agent_systems`.

References
----------
C. Zhang, N. Azizan, "Personalized Collaborative Learning with Affinity-Based Variance Reduction",
ICLR 2026, arXiv:2510.16232 (eq. 4, 5, 7, 8; Algorithm 1; Definitions 1-2; Theorem 1; eq. 9; App. B).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import check_int, check_memory
from ._collaborative_learning_asymptotics import AsymptoticMSE, _cov  # noqa: F401
from ._collaborative_learning_asymptotics import asymptotic_mse, pooled_ratio  # noqa: F401
from .multi_agent_systems import (FiniteSystem, GaussianSystem, _check_rng, _check_system,
                                  free_ride_system, heterogeneity, solutions, tv_system)
from .multi_agent_systems import _strict_array as as_array  # refuses bool, str, complex too
from .multi_agent_systems import _strict_real as check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["METHODS", "simulate", "asymptotic_mse", "pooled_ratio", "affinity_grid"]

_PROBE_EXEMPTIONS = {
    "pooled_ratio": {"axis": {"negative": "a negative axis counts from the end (numpy convention); "
                                          "one out of range is refused"}},
}

#: The learners run side by side by :func:`simulate`, in the order of its output.
METHODS = ("independent", "fedavg", "affpcl", "affpcl_no_rho")


# ---------------------------------------------------------------------------------------------
# the learners
# ---------------------------------------------------------------------------------------------


def _draw(kind, arrays, noise):
    """One state per agent from pre-drawn noise: A(s^j) (n,d,d), Phi(s^j) (n,d,d), rho[i, j] (n,n).

    ``rho[i, j] = mu_i(s^j) / mu^0(s^j)`` is the exact density ratio. ``noise`` is (n,) uniforms for a
    finite system (inverse-CDF sampling) and (n, d) standard normals for a Gaussian one.
    """
    if kind == "finite":
        A, Phi, mu, cdf = arrays
        idx = jnp.minimum(jnp.sum(noise[:, None] >= cdf, axis=1), mu.shape[1] - 1)
        p = mu[:, idx]                                   # (i, j): mu_i(s^j)
        return A[idx], Phi[idx], p / p.mean(0, keepdims=True)
    means, A_base, Phi_base, eps_A, eps_Phi = arrays
    n = means.shape[0]
    s = means + noise
    A_s = A_base + eps_A * jnp.einsum("ni,nj,jk->nik", s, s, A_base)
    Phi_s = Phi_base + eps_Phi * jnp.einsum("ni,nj,jk->nik", s, s, Phi_base)
    logp = -0.5 * jnp.sum((s[None, :, :] - means[:, None, :]) ** 2, -1)      # (i, j)
    rho = jnp.exp(logp - jax.scipy.special.logsumexp(logp, axis=0, keepdims=True) + jnp.log(n))
    return A_s, Phi_s, rho


def _affpcl_direction(x, A_s, b_s, r, rho):
    """AffPCL's personal direction, eq. (8): g^i(x^i) + g^{c=>i}(x^c) - g^{c->i}(x^c), all agents at once."""
    n = r.shape[0]
    return jnp.einsum("nij,nj->ni", A_s, x) - b_s + rho @ r / n - r


def _step(kind, arrays, theta, state, noise, alpha_t):
    x_il, x_c, th_c, x_aff, x_abl = state
    A_s, Phi_s, rho = _draw(kind, arrays, noise)
    b_s = jnp.einsum("nij,nj->ni", Phi_s, theta)                             # b^j(s^j)
    g_il = jnp.einsum("nij,nj->ni", A_s, x_il) - b_s
    g_cdl = jnp.mean(A_s @ x_c - b_s, axis=0)                                 # eq. (4): FedAvg / CDL
    g_coe = jnp.mean(Phi_s @ th_c - b_s, axis=0)                              # eq. (7): COE
    r = A_s @ x_c - Phi_s @ th_c                                              # g^{c->j}(x^c), (n, d)
    g_aff = _affpcl_direction(x_aff, A_s, b_s, r, rho)
    g_abl = _affpcl_direction(x_abl, A_s, b_s, r, jnp.ones_like(rho))         # ablation: rho = 1
    return (x_il - alpha_t * g_il, x_c - alpha_t * g_cdl, th_c - alpha_t * g_coe,
            x_aff - alpha_t * g_aff, x_abl - alpha_t * g_abl)


def _errors(state, x_star):
    x_il, x_c, _, x_aff, x_abl = state
    sq = lambda x: jnp.sum((x - x_star) ** 2, axis=-1)
    return jnp.stack([sq(x_il), sq(jnp.broadcast_to(x_c, x_star.shape)), sq(x_aff), sq(x_abl)])


def _simulate_kernel(kind, arrays, theta, x_star, noise, alphas, every):
    """noise: (T, R, n[, d]); alphas: (T,). Returns squared errors (T / every, R, 4, n)."""
    R = noise.shape[1]
    n, d = x_star.shape
    z = jnp.zeros((R, n, d))
    state = (z, z[:, 0], z[:, 0], z, z)
    step = jax.vmap(lambda st, e, a: _step(kind, arrays, theta, st, e, a), in_axes=(0, 0, None))

    def body(carry, inp):
        carry = step(carry, *inp)
        return carry, jax.vmap(_errors, in_axes=(0, None))(carry, x_star)

    err = jax.lax.scan(body, state, (noise, alphas))[1]                      # (T, R, 4, n)
    return err[every - 1::every]


_simulate_jit = jax.jit(jax.vmap(_simulate_kernel, in_axes=(None, 0, 0, 0, 0, None, None)),
                        static_argnums=(0, 6))


def simulate(system, *, steps: int, runs: int, alpha: float, t0: float | None = None,
             record_every: int = 1, rng: np.random.Generator) -> dict:
    r"""Run IL, FedAvg, AffPCL and AffPCL without importance correction on common random numbers.

    All iterates start at zero. One round :math:`t` draws :math:`s^j_t\sim\mu_j` for every agent and
    updates, synchronously from the round's starting values: IL, CDL (= FedAvg, eq. 4), COE (eq. 7),
    AffPCL (eq. 8) and the ablation with :math:`\rho\equiv1`. The step is
    :math:`\alpha_t = \alpha` (constant, ``t0=None``, as in the paper's experiments) or
    :math:`\alpha_t = \alpha\,t_0/(t+t_0)`. Runs, agents and (for a list) systems are vectorised with
    ``jax.vmap``; rounds with ``lax.scan``.

    Parameters
    ----------
    system : FiniteSystem or GaussianSystem, or a list of them
        A list must hold systems of one type and identical array shapes; they run as one batch.
    steps : int
        Number of rounds :math:`T` (samples per agent), >= 1, a multiple of ``record_every``.
    runs : int
        Independent repetitions, >= 1.
    alpha : float
        Step size (initial step if ``t0`` is given), > 0.
    t0 : float, optional
        Decay offset (> 0) of the diminishing step; ``None`` for a constant step.
    record_every : int, default 1
        Record the errors every this many rounds, >= 1.
    rng : numpy.random.Generator
        Source of all sampled states (keyword-only).

    Returns
    -------
    dict
        ``"t"``: (T / record_every,) round counts at which errors were recorded; and for each of
        ``"independent"``, ``"fedavg"``, ``"affpcl"``, ``"affpcl_no_rho"`` an array
        (runs, T / record_every, n) of squared errors :math:`\|x^i_t - x^i_*\|^2` (for FedAvg the one
        central model against each agent's :math:`x^i_*`), with a leading axis over systems when a
        list was given.

    Raises
    ------
    ValueError
        On a malformed system, systems of different shapes, or bad sizes and steps, or when the float32
        noise drawn up front (``4 * systems * steps * runs * n`` bytes, ``* d`` for a Gaussian system)
        would exceed ``paperlib.core._validation.memory_limit`` (8 GiB by default).

    Notes
    -----
    CDL uses the agents' true objectives :math:`b^j(s^j_t)` and the corrections use the learned
    :math:`\Phi(s)\theta^c_t`, as in the authors' code. The density ratios are exact (the paper's
    known-ratio setting, no DRE). The diminishing step with the last iterate is our choice; the paper's
    theory uses a constant :math:`\ln t/(\lambda t)` or a diminishing step with iterate averaging.
    Computation is in float32.

    Examples
    --------
    >>> sys = tv_system(4, 0.0, rng=np.random.default_rng(0))
    >>> out = simulate(sys, steps=200, runs=2, alpha=0.5, t0=20.0, record_every=100,
    ...                rng=np.random.default_rng(1))
    >>> out["t"].tolist(), out["affpcl"].shape
    ([100, 200], (2, 2, 4))
    """
    single = isinstance(system, (FiniteSystem, GaussianSystem))
    if not single and not (isinstance(system, (list, tuple)) and len(system) > 0):
        raise ValueError("system must be a FiniteSystem, a GaussianSystem or a non-empty list of them")
    systems = [_check_system(s) for s in ([system] if single else system)]
    if len({type(s) for s in systems}) > 1 or len({tuple(np.shape(a) for a in s) for s in systems}) > 1:
        raise ValueError("system: a list must hold systems of one type with identical shapes")
    steps = check_int("steps", steps, minimum=1)
    runs = check_int("runs", runs, minimum=1)
    alpha = check_real("alpha", alpha, minimum=0.0, strict_min=True)
    if t0 is not None:
        t0 = check_real("t0", t0, minimum=0.0, strict_min=True)
    record_every = check_int("record_every", record_every, minimum=1)
    if steps % record_every:
        raise ValueError(f"steps ({steps}) must be a multiple of record_every ({record_every})")
    rng = _check_rng(rng)
    n, d = systems[0].theta.shape
    # the float32 noise of every step and run is drawn up front: refuse it before drawing
    per_draw = n if isinstance(systems[0], FiniteSystem) else n * d
    check_memory("steps * runs", 4 * len(systems) * steps * runs * per_draw,
                 what=f"the float32 noise of {len(systems)} system(s) x steps x runs (steps={steps}, runs={runs})")
    f32 = lambda *arrays: jnp.asarray(np.stack(arrays), dtype=jnp.float32)
    if isinstance(systems[0], FiniteSystem):
        kind = "finite"
        arrays = (f32(*[s.A for s in systems]), f32(*[s.Phi for s in systems]),
                  f32(*[s.mu for s in systems]), f32(*[np.cumsum(s.mu, axis=1) for s in systems]))
        noise = rng.random((len(systems), steps, runs, n), dtype=np.float32)
    else:
        kind = "gaussian"
        arrays = tuple(f32(*[getattr(s, f) for s in systems])
                       for f in ("means", "A_base", "Phi_base", "eps_A", "eps_Phi"))
        noise = rng.standard_normal((len(systems), steps, runs, n, d), dtype=np.float32)
    t = np.arange(steps)
    alphas = jnp.asarray(alpha if t0 is None else alpha * t0 / (t + t0), dtype=jnp.float32) * jnp.ones(steps)
    x_star = f32(*[solutions(s).x_star for s in systems])
    err = np.asarray(_simulate_jit(kind, arrays, f32(*[s.theta for s in systems]), x_star, noise,
                                   alphas, record_every))                  # (B, blocks, R, 4, n)
    err = np.moveaxis(err, 2, 1)                                           # (B, R, blocks, 4, n)
    out = {"t": record_every * np.arange(1, steps // record_every + 1)}
    for m, name in enumerate(METHODS):
        out[name] = err[0, :, :, m, :] if single else err[:, :, :, m, :]
    return out


# ---------------------------------------------------------------------------------------------
# asymptotics (ours)
# ---------------------------------------------------------------------------------------------


class GridResult(NamedTuple):
    table: "pandas.DataFrame"      # one row per (n, delta)
    free_ride: "pandas.DataFrame"  # one row per n (empty without free_ride_delta)
    curves: dict                   # error trajectories of the cell ``curve``


def _pooled(out, name, sel, agents=slice(None)):
    """Pool the final errors of the systems ``sel`` over instances and runs (agents averaged)."""
    return out[name][sel, :, -1, agents].mean(-1).reshape(-1)


def affinity_grid(ns, deltas, *, instances: int, runs: int, steps: int, alpha: float, t0: float,
                  free_ride_delta: float | None = None, curve=None, rng: np.random.Generator):
    r"""Error of AffPCL relative to IL over a grid of agent counts and heterogeneity levels.

    For every :math:`n` in ``ns`` and :math:`\delta` in ``deltas`` it draws ``instances`` systems
    :func:`~paperlib.distributed.multi_agent_systems.tv_system` (:math:`\delta_{env} = \delta` exactly), runs every
    learner ``runs`` times for ``steps`` rounds with :math:`\alpha_t = \alpha t_0/(t+t_0)`, and pools
    the final errors over instances, runs and agents into the ratio :math:`\mathrm{MSE}^0_{AffPCL} /
    \mathrm{MSE}^0_{IL}` (the paper's agent-averaged error) with the standard error of its logarithm
    (:func:`pooled_ratio`). Beside it: the envelope :math:`\max\{n^{-1},\delta_{env},\delta_{obj}\}`
    of Theorem 1 (levels computed, not nominal), the exact asymptotic ratio of :func:`asymptotic_mse`
    pooled the same way, and the ratios of FedAvg and of the :math:`\rho\equiv1` ablation to IL.
    All systems of one :math:`n` run as one batch (one compilation per :math:`n`).

    Parameters
    ----------
    ns : sequence of int
        Agent counts, each >= 2.
    deltas : sequence of float
        Heterogeneity levels in [0, 1).
    instances : int
        Systems drawn per cell, >= 1.
    runs : int
        Runs per system, >= 2 (the standard error needs two units).
    steps : int
        Rounds :math:`T`, >= 20 (multiple of 20: trajectories are recorded 20 times).
    alpha, t0 : float
        Step :math:`\alpha_t = \alpha t_0/(t+t_0)`; :math:`\alpha t_0\lambda > 1/2` is required.
    free_ride_delta : float, optional
        If given, also run ``instances`` :func:`~paperlib.distributed.multi_agent_systems.free_ride_system` systems
        of this level per :math:`n` and report agent 0 (the centre) against the others.
    curve : (int, float), optional
        A cell ``(n, delta)`` of the grid whose error trajectories are returned.
    rng : numpy.random.Generator

    Returns
    -------
    GridResult
        ``table`` (columns ``n, delta, delta_env, delta_obj, envelope, ratio, se_log, predicted,
        fedavg_ratio, no_rho_ratio, no_rho_floor``, the last being the ablation's final error over its
        predicted bias plus AffPCL's predicted variance); ``free_ride`` (columns ``n, tv_to_others,
        delta_cen, ratio, se_log, predicted, others_ratio, others_se_log, others_predicted``);
        ``curves`` (``t`` and, per learner, the pooled mean error at each recorded round, plus
        ``predicted_affpcl``, ``predicted_independent`` and ``no_rho_bias``).

    Raises
    ------
    ValueError
        On bad sizes or levels, or a ``curve`` cell that is not in the grid.

    Notes
    -----
    The exact-TV instances, the diminishing step with the last iterate and the asymptotic prediction
    are ours. The paper's own experiments use its Gaussian construction and a constant step.

    Examples
    --------
    >>> res = affinity_grid([2], [0.0], instances=1, runs=2, steps=100, alpha=0.5, t0=20.0,
    ...                     rng=np.random.default_rng(0))
    >>> res.table[["n", "delta", "envelope"]].to_numpy().tolist()
    [[2.0, 0.0, 0.5]]
    """
    import pandas as pd

    ns = [check_int("ns", n, minimum=2) for n in np.atleast_1d(as_array("ns", ns, dtype=None, min_size=1))]
    deltas = [check_real("deltas", x, minimum=0.0, maximum=1.0, strict_max=True)
              for x in np.atleast_1d(as_array("deltas", deltas, min_size=1))]
    instances = check_int("instances", instances, minimum=1)
    runs = check_int("runs", runs, minimum=2)
    steps = check_int("steps", steps, minimum=20)
    if steps % 20:
        raise ValueError(f"steps must be a multiple of 20, got {steps}")
    alpha = check_real("alpha", alpha, minimum=0.0, strict_min=True)
    t0 = check_real("t0", t0, minimum=0.0, strict_min=True)
    if free_ride_delta is not None:
        free_ride_delta = check_real("free_ride_delta", free_ride_delta, minimum=0.0, maximum=1.0,
                                     strict_max=True)
    if curve is not None and (len(curve) != 2 or curve[0] not in ns or curve[1] not in deltas):
        raise ValueError(f"curve must be a cell (n, delta) of the grid, got {curve!r}")
    rng = _check_rng(rng)
    rows, fr_rows, curves = [], [], {}
    K = instances
    for n in ns:
        systems = [tv_system(n, dl, rng=rng) for dl in deltas for _ in range(K)]
        if free_ride_delta is not None:
            systems += [free_ride_system(n, free_ride_delta, rng=rng) for _ in range(K)]
        out = simulate(systems, steps=steps, runs=runs, alpha=alpha, t0=t0, record_every=steps // 20,
                       rng=rng)
        lims = [asymptotic_mse(s, alpha=alpha, t0=t0) for s in systems]
        for b, dl in enumerate(deltas):
            sel = slice(b * K, (b + 1) * K)
            het = [heterogeneity(s) for s in systems[sel]]
            env, obj = max(h.delta_env for h in het), max(h.delta_obj for h in het)
            il = _pooled(out, "independent", sel)
            ratio, se = pooled_ratio(_pooled(out, "affpcl", sel), il)
            pred = sum(l.affpcl.sum() for l in lims[sel]) / sum(l.independent.sum() for l in lims[sel])
            floor = np.mean([(l.no_rho_bias + l.affpcl / (steps + t0)).mean() for l in lims[sel]])
            rows.append(dict(n=n, delta=dl, delta_env=env, delta_obj=obj, envelope=max(1 / n, env, obj),
                             ratio=float(ratio), se_log=float(se), predicted=pred,
                             fedavg_ratio=float(_pooled(out, "fedavg", sel).mean() / il.mean()),
                             no_rho_ratio=float(_pooled(out, "affpcl_no_rho", sel).mean() / il.mean()),
                             no_rho_floor=float(_pooled(out, "affpcl_no_rho", sel).mean() / floor)))
            if curve is not None and (n, dl) == tuple(curve):
                curves["t"] = out["t"]
                for name in METHODS:
                    curves[name] = out[name][sel].mean(axis=(0, 1, 3))
                curves["predicted_affpcl"] = np.mean([l.affpcl.mean() for l in lims[sel]]) / (out["t"] + t0)
                curves["predicted_independent"] = (np.mean([l.independent.mean() for l in lims[sel]])
                                                   / (out["t"] + t0))
                curves["no_rho_bias"] = np.mean([l.no_rho_bias.mean() for l in lims[sel]])
        if free_ride_delta is not None:
            sel = slice(len(deltas) * K, None)
            fr = systems[sel]
            row = dict(n=n, tv_to_others=min(0.5 * np.abs(s.mu[0] - s.mu[1:]).sum(1).min() for s in fr),
                       delta_cen=max(heterogeneity(s).delta_cen[0] for s in fr))
            for tag, ag in (("", slice(0, 1)), ("others_", slice(1, None))):
                r, se = pooled_ratio(_pooled(out, "affpcl", sel, ag), _pooled(out, "independent", sel, ag))
                row[tag + "ratio"], row[tag + "se_log"] = float(r), float(se)
                row[tag + "predicted"] = (sum(l.affpcl[ag].sum() for l in lims[sel])
                                          / sum(l.independent[ag].sum() for l in lims[sel]))
            fr_rows.append(row)
    return GridResult(pd.DataFrame(rows), pd.DataFrame(fr_rows), curves)
