"""Batch-size schedules at a fixed data budget: two-stage switches, catch-up, optimal schedules.

Built on the exact SGD risk and the functional scaling law of :mod:`paperlib.scaling_laws.functional_scaling`.
A schedule spends a budget of ``D`` fresh samples; a stage of ``k`` steps at batch ``B`` spends
``k B`` of them and advances the intrinsic time ``t = eta k``.

* :func:`two_stage_risk`, :func:`optimal_switch`: batch ``B_1`` for the first ``P`` samples, then
  ``B_2 > B_1`` for the remaining ``D - P``; the data-optimal switch ``P*_D`` (the two-stage theorem of Wang et al.; numbered 3.2 in published summaries, not verified).
* :func:`catch_up`, :func:`catch_up_lag`: the excess of a run switched at step ``k_0`` over the run
  that used ``B_2`` from the start, at equal step counts (the fast catch-up effect).
* :func:`optimal_piecewise_schedule`: the exact-risk-optimal schedule with ``S`` equal-step segments.
* :func:`fsl_optimal_schedule`: the FSL-optimal continuous schedule ``b(z) = max(B_min, c q(z))``,
  ``q(z)^2 = K(T - z) (e(z) + sigma2)`` (the optimal-schedule theorem of Wang et al.; our KKT derivation with exact sums).

References: J. Wang, B. Li, Z. Zhou, M. Wang, Y. Sun, J. Zhang, X. Cai, L. Wu, *Fast Catch-Up, Late
Switching: Optimal Batch Size Scheduling via Functional Scaling Laws*, ICLR 2026, arXiv:2602.14208,
the optimal-schedule and two-stage theorems (3.1-3.2 in published summaries; numbering not verified); B. Li et al., *Functional Scaling Laws in Kernel Regression*, NeurIPS 2025,
arXiv:2509.19189.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq, minimize_scalar

from ..core._validation import as_array, check_int, check_real
from .functional_scaling import (
    MomentOperator,
    _check_op,
    _propagate,
    fsl_risk,
)
from ._batch_schedules_optimal import (  # noqa: F401
    PiecewiseSchedule,
    FSLSchedule,
    optimal_piecewise_schedule,
    fsl_optimal_schedule,
)

__all__ = [
    "SwitchResult",
    "CatchUp",
    "PiecewiseSchedule",
    "FSLSchedule",
    "two_stage_risk",
    "optimal_switch",
    "catch_up",
    "catch_up_lag",
    "optimal_piecewise_schedule",
    "fsl_optimal_schedule",
]


class SwitchResult(NamedTuple):
    """Output of :func:`optimal_switch`.

    Attributes
    ----------
    fraction : float
        Optimal switch point ``P*_D / D`` in [0, 1].
    risk : float
        Final excess risk at the optimum.
    grid : ndarray, shape (g,)
        The grid of switch fractions searched first.
    grid_risk : ndarray, shape (g,)
        Final excess risk on that grid.
    grid_minima : int
        Number of local minima of ``grid_risk`` (1 for a unimodal curve).
    """

    fraction: float
    risk: float
    grid: np.ndarray
    grid_risk: np.ndarray
    grid_minima: int


class CatchUp(NamedTuple):
    """Output of :func:`catch_up`, at steps ``switch_step + lags`` (arrays of shape (K,)).

    Attributes
    ----------
    gap : ndarray
        ``E_switched - E_large``: excess of the switched run over the constant-``B_2`` run.
    rel_gap : ndarray
        ``gap / E_large``.
    risk_switched, risk_large : ndarray
        The two risks.
    """

    gap: np.ndarray
    rel_gap: np.ndarray
    risk_switched: np.ndarray
    risk_large: np.ndarray


def _check_pair(m0, op_small, op_large):
    op_small, op_large = _check_op("op_small", op_small), _check_op("op_large", op_large)
    if not np.array_equal(op_small.lam, op_large.lam) or op_small.eta != op_large.eta:
        raise ValueError("op_small and op_large must share lam and eta")
    m0 = as_array("m0", m0, ndim=1, shape=(op_small.lam.size,))
    if np.any(m0 < 0):
        raise ValueError("m0 must be non-negative")
    return m0, op_small, op_large


def two_stage_risk(m0, op_small, op_large, *, data, switch, model="exact"):
    """Final excess risk of the two-stage schedule that switches from ``B_1`` to ``B_2`` after ``P`` samples.

    The run takes ``P / B_1`` steps at ``B_1`` and then ``(D - P) / B_2`` steps at ``B_2``.

    Parameters
    ----------
    m0 : array_like, shape (n,)
        Initial second moments.
    op_small, op_large : MomentOperator
        The steps at ``B_1`` and at ``B_2`` (same ``lam`` and ``eta``).
    data : float
        Budget ``D`` of samples, ``> 0``.
    switch : float or array_like, shape (K,)
        Samples ``P`` spent before the switch, in ``[0, D]``.
    model : {"exact", "fsl"}, default "exact"
        The exact risk recursion or the first-order FSL (:func:`paperlib.scaling_laws.functional_scaling.fsl_risk`).

    Returns
    -------
    float, or ndarray of shape (K,)

    Raises
    ------
    ValueError
        Bad operators or ``m0``; ``data <= 0``; ``switch`` outside ``[0, D]``; unknown ``model``.

    Examples
    --------
    >>> from paperlib.scaling_laws import functional_scaling as fs
    >>> lam, m0 = fs.power_law_task(40, beta=3.0, s=0.2)
    >>> op1, op8 = (fs.sgd_moment_operator(lam, eta=0.3, batch=b, sigma2=1.0) for b in (1, 8))
    >>> np.round(two_stage_risk(m0, op1, op8, data=1e3, switch=[0.0, 500.0, 1e3]), 4).tolist()
    [0.2399, 0.1621, 0.3161]
    """
    m0, op_small, op_large = _check_pair(m0, op_small, op_large)
    data = check_real("data", data, minimum=0.0, strict_min=True)
    switch = as_array("switch", switch, ndim=(0, 1))
    if np.any(switch < 0) or np.any(switch > data):
        raise ValueError(f"switch must lie in [0, data] = [0, {data:g}]")
    if model not in ("exact", "fsl"):
        raise ValueError(f"model must be 'exact' or 'fsl', got {model!r}")
    k1, k2 = switch / op_small.batch, (data - switch) / op_large.batch
    if model == "exact":
        m = _propagate(_propagate(m0, op_small, k1), op_large, k2)
        out = 0.5 * m @ op_small.lam
    else:
        out = np.array([fsl_risk(m0, [op_small, op_large], [a, b]) for a, b in zip(np.ravel(k1), np.ravel(k2))])
        out = out.reshape(switch.shape)
    return float(out) if np.ndim(out) == 0 else out


def optimal_switch(m0, op_small, op_large, *, data, grid=21, model="exact"):
    """Data-optimal switch point ``P*_D / D`` of the two-stage schedule ``B_1 -> B_2``.

    A grid of ``grid`` equally spaced fractions in [0, 1], then a bounded scalar minimisation
    (``xatol = 1e-7``) between the neighbours of the best grid point; an end point is kept when the
    refinement does not improve on it.

    Parameters
    ----------
    m0, op_small, op_large, model
        As in :func:`two_stage_risk`.
    data : float
        Budget ``D`` of samples, ``> 0``.
    grid : int, default 21
        Grid points, ``>= 3``.

    Returns
    -------
    SwitchResult

    Raises
    ------
    ValueError
        As :func:`two_stage_risk`, or ``grid < 3``.

    Examples
    --------
    >>> from paperlib.scaling_laws import functional_scaling as fs
    >>> lam, m0 = fs.power_law_task(40, beta=3.0, s=0.2)
    >>> op1, op8 = (fs.sgd_moment_operator(lam, eta=0.3, batch=b, sigma2=1.0) for b in (1, 8))
    >>> res = optimal_switch(m0, op1, op8, data=1e3)
    >>> round(res.fraction, 3), res.grid_minima
    (0.846, 1)
    """
    m0, op_small, op_large = _check_pair(m0, op_small, op_large)
    data = check_real("data", data, minimum=0.0, strict_min=True)
    grid = check_int("grid", grid, minimum=3)
    fracs = np.linspace(0.0, 1.0, grid)
    risks = np.atleast_1d(two_stage_risk(m0, op_small, op_large, data=data, switch=fracs * data, model=model))
    i = int(np.argmin(risks))
    lo, hi = fracs[max(i - 1, 0)], fracs[min(i + 1, grid - 1)]
    res = minimize_scalar(lambda f: two_stage_risk(m0, op_small, op_large, data=data, switch=f * data, model=model),
                          bounds=(lo, hi), method="bounded", options={"xatol": 1e-7})
    best_f, best_r = (float(res.x), float(res.fun)) if res.fun < risks[i] else (float(fracs[i]), float(risks[i]))
    interior = np.sum((risks[1:-1] < risks[:-2]) & (risks[1:-1] < risks[2:]))
    ends = int(risks[0] < risks[1]) + int(risks[-1] < risks[-2])
    return SwitchResult(best_f, best_r, fracs, risks, int(interior + ends))


def catch_up(m0, op_small, op_large, *, switch_step, lags):
    """Risk of a run switched from ``B_1`` to ``B_2`` at step ``k_0`` against the constant-``B_2`` run, at equal steps.

    Parameters
    ----------
    m0, op_small, op_large
        As in :func:`two_stage_risk`.
    switch_step : float
        ``k_0 >= 0``, steps taken at ``B_1``.
    lags : array_like, shape (K,)
        Steps ``>= 0`` after the switch at which to compare.

    Returns
    -------
    CatchUp

    Raises
    ------
    ValueError
        Bad operators, ``m0``, ``switch_step`` or ``lags``.

    Examples
    --------
    >>> from paperlib.scaling_laws import functional_scaling as fs
    >>> lam, m0 = fs.power_law_task(40, beta=3.0, s=0.2)
    >>> op1, op8 = (fs.sgd_moment_operator(lam, eta=0.3, batch=b, sigma2=1.0) for b in (1, 8))
    >>> np.round(catch_up(m0, op1, op8, switch_step=1e3, lags=[0.0, 10.0, 100.0]).rel_gap, 3).tolist()
    [1.375, 0.107, 0.021]
    """
    m0, op_small, op_large = _check_pair(m0, op_small, op_large)
    k0 = check_real("switch_step", switch_step, minimum=0.0)
    lags = as_array("lags", lags, ndim=1, min_size=1)
    if np.any(lags < 0):
        raise ValueError("lags must be >= 0")
    lam = op_small.lam
    sw = 0.5 * _propagate(_propagate(m0, op_small, k0), op_large, lags) @ lam
    big = 0.5 * _propagate(m0, op_large, k0 + lags) @ lam
    return CatchUp(sw - big, (sw - big) / big, sw, big)


def catch_up_lag(m0, op_small, op_large, *, switch_step, threshold):
    """Steps after the switch until the relative gap ``(E_switched - E_large) / E_large`` first falls to ``threshold``.

    The relative gap is scanned on a geometric grid of lags up to ``1000 k_0`` and the first crossing
    is located by Brent's method (lags are real numbers: the closed form interpolates between steps).

    Parameters
    ----------
    m0, op_small, op_large
        As in :func:`two_stage_risk`.
    switch_step : float
        ``k_0 >= 1``.
    threshold : float
        Relative gap in (0, 1).

    Returns
    -------
    float
        The lag ``Delta k`` (0 if the gap is already below ``threshold`` at the switch; ``inf`` if it
        never falls below it within ``1000 k_0`` steps).

    Raises
    ------
    ValueError
        Bad operators or ``m0``; ``switch_step < 1``; ``threshold`` outside (0, 1).

    Examples
    --------
    >>> from paperlib.scaling_laws import functional_scaling as fs
    >>> lam, m0 = fs.power_law_task(40, beta=3.0, s=0.2)
    >>> op1, op8 = (fs.sgd_moment_operator(lam, eta=0.3, batch=b, sigma2=1.0) for b in (1, 8))
    >>> round(catch_up_lag(m0, op1, op8, switch_step=1e3, threshold=0.05), 1)
    32.4
    """
    m0, op_small, op_large = _check_pair(m0, op_small, op_large)
    k0 = check_real("switch_step", switch_step, minimum=1.0)
    thr = check_real("threshold", threshold, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)

    def excess(lag):
        return float(catch_up(m0, op_small, op_large, switch_step=k0, lags=[lag]).rel_gap[0]) - thr

    if excess(0.0) <= 0:
        return 0.0
    lags = np.concatenate([[0.0], np.geomspace(1e-2, 1e3 * k0, 400)])
    rel = catch_up(m0, op_small, op_large, switch_step=k0, lags=lags).rel_gap - thr
    below = np.flatnonzero(rel <= 0)
    if below.size == 0:
        return float("inf")
    j = int(below[0])
    return float(brentq(excess, lags[j - 1], lags[j], xtol=1e-9, rtol=1e-10))
