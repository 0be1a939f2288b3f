"""Optimal batch-size schedules at a fixed data budget (private).

This module holds the schedule optimisers of :mod:`paperlib.scaling_laws.batch_schedules` and their
result containers: the exact-risk-optimal schedule with ``S`` equal-step segments (L-BFGS-B over the
log-batches) and the FSL-optimal continuous schedule ``b*(z) = max(B_min, c q(z))`` with its optimal
horizon. The two-stage switch and catch-up analyses live in the public module, which re-exports every
public name defined here; import it from there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq, minimize, minimize_scalar

from ..core._validation import as_array, check_int, check_real
from .functional_scaling import (
    _check_lam,
    _propagate,
    sgd_moment_operator,
)


class PiecewiseSchedule(NamedTuple):
    """Output of :func:`optimal_piecewise_schedule`.

    Attributes
    ----------
    batches : ndarray, shape (S,)
        Batch size of each segment.
    steps_per_segment : float
        Steps in every segment (``D / sum(batches)``).
    risk : float
        Final excess risk.
    constant_batch, constant_risk : float
        The best constant batch (the optimiser's starting point) and its risk.
    """

    batches: np.ndarray
    steps_per_segment: float
    risk: float
    constant_batch: float
    constant_risk: float


class FSLSchedule(NamedTuple):
    """Output of :func:`fsl_optimal_schedule`.

    Attributes
    ----------
    time : ndarray, shape (p,)
        Intrinsic times ``z`` in ``[0, T*]`` (dense near the end).
    batches : ndarray, shape (p,)
        Optimal batch ``b*(z)``.
    horizon : float
        Optimal intrinsic horizon ``T*`` (``T* / eta`` steps).
    risk : float
        FSL excess risk of the optimum.
    growth_fraction : float
        Fraction of ``[0, T*]`` where ``b* > B_min`` (1 when the floor never binds).
    """

    time: np.ndarray
    batches: np.ndarray
    horizon: float
    risk: float
    growth_fraction: float


def optimal_piecewise_schedule(lam, m0, *, eta, sigma2, data, segments=8, b_min=1.0):
    """Exact-risk-optimal batch schedule with ``S`` segments of equal step count, at data budget ``D``.

    Minimises the exact final excess risk over the log-batches ``v_i = log b_i >= log B_min`` of ``S``
    segments, each of ``D / sum(b)`` steps, with L-BFGS-B from the best constant batch; the gradient
    is a forward difference in which only the perturbed segment's operator is rebuilt.

    Parameters
    ----------
    lam, m0 : array_like, shape (n,)
        Spectrum and initial second moments (:func:`paperlib.scaling_laws.functional_scaling.power_law_task`).
    eta : float
        Learning rate, ``> 0``.
    sigma2 : float
        Label-noise variance, ``>= 0``.
    data : float
        Budget ``D`` of samples, ``> 0``.
    segments : int, default 8
        Number of equal-step segments, ``>= 1``.
    b_min : float, default 1.0
        Smallest admissible batch, ``>= 1``.

    Returns
    -------
    PiecewiseSchedule

    Raises
    ------
    ValueError
        Bad inputs, or ``eta`` unstable at ``b_min``.

    Notes
    -----
    Batches are real numbers (the closed form interpolates the recursion), as in the paper's
    continuous treatment; a local optimum of a non-convex problem.

    Examples
    --------
    >>> from paperlib.scaling_laws import functional_scaling as fs
    >>> lam, m0 = fs.power_law_task(30, beta=3.0, s=1.5)
    >>> res = optimal_piecewise_schedule(lam, m0, eta=0.3, sigma2=1.0, data=3e3, segments=3)
    >>> bool(np.all(np.diff(res.batches) > 0)), bool(res.risk <= res.constant_risk)
    (True, True)
    """
    lam = _check_lam(lam)
    m0 = as_array("m0", m0, ndim=1, shape=(lam.size,))
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    sigma2 = check_real("sigma2", sigma2, minimum=0.0)
    data = check_real("data", data, minimum=0.0, strict_min=True)
    segments = check_int("segments", segments, minimum=1)
    b_min = check_real("b_min", b_min, minimum=1.0)
    if b_min > data:
        raise ValueError(f"b_min must not exceed data, got b_min={b_min}, data={data}")
    cache = {}

    def op(b):
        if b not in cache:
            if len(cache) > 400:
                cache.clear()
            cache[b] = sgd_moment_operator(lam, eta=eta, batch=b, sigma2=sigma2)
        return cache[b]

    def log_risk(v):
        b = np.exp(np.asarray(v, dtype=float))
        m = m0
        for bk in b:
            m = _propagate(m, op(float(bk)), data / b.sum())
        return float(np.log(0.5 * m @ lam))

    def grad(v, h=1e-6):
        f0, g = log_risk(v), np.empty(len(v))
        for k in range(len(v)):
            w = np.array(v, dtype=float)
            w[k] += h
            g[k] = (log_risk(w) - f0) / h
        return g

    lo, hi = np.log(b_min), np.log(data)
    const = minimize_scalar(lambda v: log_risk([v] * segments), bounds=(lo, hi), method="bounded",
                            options={"xatol": 1e-6})
    res = minimize(log_risk, np.full(segments, const.x), jac=grad, method="L-BFGS-B",
                   bounds=[(lo, hi)] * segments)
    b = np.exp(res.x)
    return PiecewiseSchedule(b, float(data / b.sum()), float(np.exp(res.fun)),
                             float(np.exp(const.x)), float(np.exp(const.fun)))


def fsl_optimal_schedule(lam, m0, *, eta, sigma2, data, b_min=1.0, points=600):
    """FSL-optimal continuous batch schedule at data budget ``D``: ``b*(z) = max(B_min, c q(z))``.

    For a horizon ``T`` (intrinsic time), minimising the FSL noise term
    ``eta int_0^T K(T - z) (e(z) + sigma2) / b(z) dz`` subject to ``int_0^T b dz = eta D`` and
    ``b >= B_min`` gives (KKT) ``b(z) = max(B_min, c q(z))`` with ``q(z)^2 = K(T - z) (e(z) + sigma2)``
    and ``c`` fixed by the budget; ``T`` is then optimised in ``(0, eta D / B_min]``.

    Parameters
    ----------
    lam, m0 : array_like, shape (n,)
        Spectrum and initial second moments.
    eta : float
        Learning rate, ``> 0``.
    sigma2 : float
        Label-noise variance, ``> 0``.
    data : float
        Budget ``D`` of samples, ``> 0``.
    b_min : float, default 1.0
        Smallest admissible batch, ``> 0``.
    points : int, default 600
        Quadrature points in ``u = T - z`` (geometric, dense near the end of training), ``>= 50``.

    Returns
    -------
    FSLSchedule

    Raises
    ------
    ValueError
        Bad inputs.

    Notes
    -----
    The optimal-schedule theorem of Wang et al. (3.1 in published summaries) states the solution with power-law ``e`` and ``K`` and ``sigma2``
    dominating, ``b* ∝ (T* - z + 1)^(1/(2 beta) - 1)`` (easy tasks); keeping ``e(z)`` in the weight and
    the exact sums is our variant of the same KKT argument.

    Examples
    --------
    >>> from paperlib.scaling_laws import functional_scaling as fs
    >>> lam, m0 = fs.power_law_task(40, beta=3.0, s=0.2)
    >>> res = fsl_optimal_schedule(lam, m0, eta=0.3, sigma2=1.0, data=1e4)
    >>> round(res.growth_fraction, 2), bool(res.batches[-1] > res.batches[0])
    (0.03, True)
    """
    lam = _check_lam(lam)
    m0 = as_array("m0", m0, ndim=1, shape=(lam.size,))
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    sigma2 = check_real("sigma2", sigma2, minimum=0.0, strict_min=True)
    data = check_real("data", data, minimum=0.0, strict_min=True)
    b_min = check_real("b_min", b_min, minimum=0.0, strict_min=True)
    points = check_int("points", points, minimum=50)
    w = lam * m0
    budget = eta * data

    def profile(T):
        u = np.concatenate([[0.0], np.geomspace(1e-4, T, points - 1)])
        K = np.exp(-2 * np.outer(u, lam)) @ lam**2
        e = np.exp(-2 * np.outer(T - u, lam)) @ w
        q = np.sqrt(K * (e + sigma2))
        du = np.diff(u)

        def spent(c):
            b = np.maximum(b_min, c * q)
            return float(np.sum(0.5 * (b[1:] + b[:-1]) * du)) - budget

        if spent(0.0) >= 0:  # the floor alone spends the budget: b = B_min throughout
            b = np.full_like(q, b_min)
        else:
            hi = 1.0
            while spent(hi) < 0:
                hi *= 2.0
            b = np.maximum(b_min, brentq(spent, 0.0, hi, xtol=1e-14, rtol=1e-12) * q)
        f = q**2 / b
        noise = eta * float(np.sum(0.5 * (f[1:] + f[:-1]) * du))
        risk = 0.5 * (float(w @ np.exp(-2 * lam * T)) + noise)
        grow = float(np.sum(du[(b[1:] > b_min * (1 + 1e-9)) | (b[:-1] > b_min * (1 + 1e-9))]) / T)
        return u, b, risk, grow

    t_max = budget / b_min
    res = minimize_scalar(lambda x: profile(np.exp(x))[2], bounds=(np.log(min(1.0, t_max)), np.log(t_max)),
                          method="bounded", options={"xatol": 1e-6})
    T = float(np.exp(res.x))
    u, b, risk, grow = profile(T)
    return FSLSchedule(T - u[::-1], b[::-1], T, float(risk), min(grow, 1.0))
