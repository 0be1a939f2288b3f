"""Score smoothing (Chen, ICLR 2026): the smoothed piecewise-linear empirical score and its flow.

Data ``y_1 < ... < y_n`` uniformly spaced on a line with spacing ``2a`` (midpoints ``c_j = y_j + a``).
As ``t -> 0`` the exact empirical score (ESF, :func:`paperlib.generative.diffusion.empirical_score`) tends to the
piecewise-linear ESF ``(y_nearest(x) - x) / t``, whose jumps at the midpoints send every trajectory of
the probability-flow ODE to a training point (memorisation). The **smoothed** PL-ESF (S-PL-ESF)
replaces each jump by a linear ramp of half-width ``a (1 - delta)``, which spans almost the whole gap;
what is left of the collapsing pull towards each training point is a zone of half-width ``a delta``:

* ``s(x) = (y_k - x) / t``                       if ``|x - y_k| <= a delta``   (and beyond the end points),
* ``s(x) = delta / (1 - delta) * (x - c_j) / t`` if ``|x - c_j| <  a (1 - delta)``,

continuous at the ramp ends. With ``delta_t = kappa sqrt(t) / a`` (Proposition 1 of
:cite:`chen2026scoresmoothing`; the paper's two-point case is ``a = 1``) the collapsing zone has
half-width ``kappa sqrt(t)`` and the flow has a closed form (:func:`flow_map_spl`): ramps are stretched
linearly onto the gaps, so a fraction ``~ Phi(-kappa)`` of the samples lands *between* training points.

All functions are numpy float64. References: Z. Chen, *On the Interpolation Effect of Score Smoothing
in Diffusion Models*, ICLR 2026, arXiv:2502.19499, Sections 3-5.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from ..core._validation import as_array, check_int, check_real
from ._score_smoothing_metrics import (  # noqa: F401
    icosahedron_vertices,
    polygon_metrics,
    sample_metrics,
    sphere_metrics,
)

__all__ = [
    "smoothing_delta",
    "smoothed_score_1d",
    "smoothed_score_line",
    "flow_map_spl",
    "interpolating_mass",
    "noised_nodes",
    "fit_delta",
    "sample_metrics",
    "polygon_metrics",
    "icosahedron_vertices",
    "sphere_metrics",
]


def _check_grid(grid):
    grid = as_array("grid", grid, ndim=1, min_size=2)
    gaps = np.diff(grid)
    if np.any(gaps <= 0) or not np.allclose(gaps, gaps[0], rtol=1e-9, atol=0):
        raise ValueError(f"grid must be strictly increasing and uniformly spaced, got {grid}")
    return grid, 0.5 * float(gaps[0])


def smoothing_delta(t, grid, *, kappa):
    """Smoothing parameter ``delta_t = min(kappa sqrt(t) / a, 1)`` (Proposition 1, rescaled by ``a``).

    ``a delta_t = kappa sqrt(t)`` is the half-width of the **collapsing zone** around each training
    point; the ramp across each gap has half-width ``a (1 - delta_t)``, almost the whole gap.

    Parameters
    ----------
    t : float, noise variance ``> 0``
    grid : array_like, shape (n,), uniformly spaced training points (half-spacing ``a``)
    kappa : float, ``>= 0``; smaller ``kappa`` = stronger smoothing

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        If ``grid`` is not uniformly spaced and increasing, ``t <= 0`` or ``kappa < 0``.

    Examples
    --------
    >>> round(smoothing_delta(0.04, [-1.0, 1.0], kappa=0.5), 6)  # 0.5 * 0.2 / 1
    0.1
    """
    _, a = _check_grid(grid)
    t = check_real("t", t, minimum=0.0, strict_min=True)
    kappa = check_real("kappa", kappa, minimum=0.0)
    return float(min(kappa * np.sqrt(t) / a, 1.0))


def _locate(u, grid, a):
    """Nearest midpoint ``c_j`` (clipped to the gaps) and nearest training point of each ``u``."""
    n = grid.size
    j = np.clip(np.floor((u - grid[0]) / (2 * a)), 0, n - 2).astype(int)
    k = np.clip(np.rint((u - grid[0]) / (2 * a)), 0, n - 1).astype(int)
    return grid[j] + a, grid[k]


def smoothed_score_1d(u, t, grid, *, kappa=None, delta=None):
    """Smoothed piecewise-linear empirical score ``s_hat_{t, delta}(u)`` on a uniform 1-D grid.

    Parameters
    ----------
    u : array_like, shape (N,)
        Points on the line.
    t : float
        Noise variance ``> 0``.
    grid : array_like, shape (n,), n >= 2
        Uniformly spaced, increasing training points ``y_k`` (half-spacing ``a``).
    kappa : float, optional
        Proposition-1 scaling ``delta = min(kappa sqrt(t) / a, 1)``.
    delta : float in [0, 1], optional
        A fixed smoothing parameter instead (``delta = 1``: the unsmoothed PL-ESF). Give exactly one.

    Returns
    -------
    ndarray, shape (N,)

    Raises
    ------
    ValueError
        Bad shapes, NaN, non-uniform grid, ``t <= 0``, ``delta`` outside [0, 1], or not exactly one of
        ``kappa`` / ``delta``.

    Notes
    -----
    For ``grid = [-1, 1]`` this is the paper's S-PL-ESF (Section 3). The multi-point version is the
    two-point one applied in every gap, rescaled by ``a`` (our derivation; see the chapter).

    Examples
    --------
    >>> float(smoothed_score_1d([0.25], 0.01, [-1.0, 1.0], delta=0.5)[0])  # ramp: 0.5/0.5 * 0.25 / 0.01
    25.0
    """
    grid, a = _check_grid(grid)
    u = as_array("u", u, ndim=1)
    t = check_real("t", t, minimum=0.0, strict_min=True)
    if (kappa is None) == (delta is None):
        raise ValueError("give exactly one of kappa= (delta = kappa sqrt(t)/a) or delta= (fixed)")
    if kappa is not None:
        delta = smoothing_delta(t, grid, kappa=kappa)
    delta = check_real("delta", delta, minimum=0.0, maximum=1.0)
    c, y = _locate(u, grid, a)
    on_ramp = np.abs(u - c) < a * (1.0 - delta)
    slope = delta / (1.0 - delta) if delta < 1.0 else 0.0
    return np.where(on_ramp, slope * (u - c) / t, (y - u) / t)


def smoothed_score_line(x, t, grid, *, kappa):
    """High-dimensional S-PL-ESF for data on the first axis: smooth tangentially, linear normally.

    ``s(x) = (s_hat_{t,delta_t}(x_1), -x_2 / t, ..., -x_d / t)``: the normal part is the exact ESF's,
    which is already linear (:cite:`chen2026scoresmoothing`, Section 5).

    Parameters
    ----------
    x : array_like, shape (N, d), d >= 1
    t : float, ``> 0``
    grid : array_like, shape (n,), positions of the training points on the first axis
    kappa : float, ``>= 0``

    Returns
    -------
    ndarray, shape (N, d)

    Raises
    ------
    ValueError
        As :func:`smoothed_score_1d`, or if ``x`` is not 2-D.

    Examples
    --------
    >>> smoothed_score_line([[0.0, 0.1]], 0.01, [-1.0, 1.0], kappa=1.0).round(6).tolist()
    [[0.0, -10.0]]
    """
    x = as_array("x", x, ndim=2)
    out = -x / check_real("t", t, minimum=0.0, strict_min=True)
    out[:, 0] = smoothed_score_1d(x[:, 0], t, grid, kappa=kappa)
    return out


def flow_map_spl(u, t, grid, *, kappa, s=0.0):
    """Closed-form flow map ``phi_{s|t}`` of ``du/dt = -s_hat_{t, kappa sqrt(t)/a}(u) / 2``.

    On ramp ``j`` (``|u - c_j| < a (1 - delta_t)``): ``phi(u) = c_j + (u - c_j) (1 - delta_s) / (1 - delta_t)``;
    elsewhere (nearest point ``y_k``): ``phi(u) = y_k + (u - y_k) sqrt(s / t)``. For ``s = 0`` the ramp
    is stretched onto the whole gap and the rest collapses onto ``y_k``
    (:cite:`chen2026scoresmoothing`, Section 4, two-point case ``phi(x) = x/(1-delta_t)`` or ``sgn x``).

    Parameters
    ----------
    u : array_like, shape (N,), positions at time ``t``
    t : float, start time ``> 0``
    grid : array_like, shape (n,)
    kappa : float, ``>= 0``
    s : float, end time in ``[0, t]``

    Returns
    -------
    ndarray, shape (N,), positions at time ``s``

    Raises
    ------
    ValueError
        Bad grid or ``u``, ``t <= 0``, ``s`` outside ``[0, t]`` or ``kappa < 0``.

    Examples
    --------
    >>> flow_map_spl([0.4, 0.95], 0.04, [-1.0, 1.0], kappa=0.5).round(4).tolist()  # 0.4 / 0.9, snap
    [0.4444, 1.0]
    """
    grid, a = _check_grid(grid)
    u = as_array("u", u, ndim=1)
    t = check_real("t", t, minimum=0.0, strict_min=True)
    s = check_real("s", s, minimum=0.0, maximum=t)
    d_t = smoothing_delta(t, grid, kappa=kappa)
    d_s = smoothing_delta(s, grid, kappa=kappa) if s > 0 else 0.0
    c, y = _locate(u, grid, a)
    on_ramp = np.abs(u - c) < a * (1.0 - d_t)
    ramp = c + (u - c) * (1.0 - d_s) / max(1.0 - d_t, 1e-300)
    return np.where(on_ramp, ramp, y + (u - y) * np.sqrt(s / t))


def interpolating_mass(t0, grid, *, kappa, margin=0.0):
    """Probability that ``phi_{0|t0}(x)`` with ``x ~ p_{t0}`` lies farther than ``margin`` from every ``y_k``.

    ``(1/n) sum_k sum_j P(|y_k + sqrt(t0) Z - c_j| < (a - margin)(1 - delta_t0))``, ``Z ~ N(0, 1)``.
    For two points and ``margin = 0`` it is ``Phi(-kappa) - Phi(-(2 - delta)/sqrt(t0)) ~ Phi(-kappa)``,
    independent of ``t0`` (:cite:`chen2026scoresmoothing`, Section 4).

    Parameters
    ----------
    t0 : float, ``> 0``
    grid : array_like, shape (n,)
    kappa : float, ``>= 0``
    margin : float in [0, a)

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        Bad grid, ``t0 <= 0``, ``kappa < 0`` or ``margin`` outside ``[0, a)``.

    Examples
    --------
    >>> round(interpolating_mass(0.01, [-1.0, 1.0], kappa=1.0), 4)  # Phi(-1)
    0.1587
    """
    grid, a = _check_grid(grid)
    t0 = check_real("t0", t0, minimum=0.0, strict_min=True)
    margin = check_real("margin", margin, minimum=0.0, maximum=a, strict_max=True)
    w = (a - margin) * (1.0 - smoothing_delta(t0, grid, kappa=kappa))
    c = grid[:-1] + a
    z = (c[None, :] - grid[:, None]) / np.sqrt(t0)  # (n, n-1)
    r = w / np.sqrt(t0)
    return float(np.mean(np.sum(norm.cdf(z + r) - norm.cdf(z - r), axis=1)))


def noised_nodes(t, grid, *, num=241, zmax=6.0):
    """Quadrature nodes and weights of ``p_t = (1/n) sum_k N(y_k, t)`` on the line.

    Parameters
    ----------
    t : float, ``> 0``
    grid : array_like, shape (n,), training points
    num : int, ``>= 3``, nodes per component; zmax : float, ``> 0``, half-width in units of ``sqrt t``

    Returns
    -------
    u : ndarray, shape (n * num,)
        Nodes ``y_k + sqrt(t) z``.
    weights : ndarray, shape (n * num,)
        Trapezoid weights times ``phi(z) / n``, summing to 1.

    Raises
    ------
    ValueError
        If ``grid`` is not 1-D and finite, ``t <= 0``, ``num < 3`` or ``zmax <= 0``.

    Examples
    --------
    >>> u, w = noised_nodes(0.01, [-1.0, 1.0], num=5)
    >>> u.round(2).tolist(), round(float(w.sum()), 6)
    ([-1.6, -1.3, -1.0, -0.7, -0.4, 0.4, 0.7, 1.0, 1.3, 1.6], 1.0)
    """
    grid = as_array("grid", grid, ndim=1, min_size=1)
    t = check_real("t", t, minimum=0.0, strict_min=True)
    num = check_int("num", num, minimum=3)
    zmax = check_real("zmax", zmax, minimum=0.0, strict_min=True)
    z = np.linspace(-zmax, zmax, num)
    w = norm.pdf(z) * np.gradient(z)
    w = np.tile(w / w.sum(), grid.size) / grid.size
    return (grid[:, None] + np.sqrt(t) * z[None, :]).ravel(), w


def fit_delta(values, u, weights, t, grid):
    """Least-squares smoothing parameter: ``argmin_delta t sum_i w_i (values_i - s_hat_{t,delta}(u_i))^2``.

    Measures how smooth a learned score is, in the units of the paper's S-PL family: ``delta = 1`` is
    the unsmoothed PL-ESF, ``delta -> 0`` a flat score between the training points.

    Parameters
    ----------
    values : array_like, shape (M,), score values at ``u``
    u : array_like, shape (M,), nodes on the line (e.g. from :func:`noised_nodes`)
    weights : array_like, shape (M,), non-negative, not all zero
    t : float, ``> 0``
    grid : array_like, shape (n,), uniformly spaced training points

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    ValueError
        On shape mismatch, NaN/inf, negative or all-zero ``weights``, ``t <= 0`` or a bad ``grid``.

    Examples
    --------
    >>> u, w = noised_nodes(0.01, [-1.0, 1.0])
    >>> round(fit_delta(smoothed_score_1d(u, 0.01, [-1.0, 1.0], delta=0.3), u, w, 0.01, [-1.0, 1.0]), 4)
    0.3
    """
    u = as_array("u", u, ndim=1)
    values = as_array("values", values, shape=(u.size,))
    weights = as_array("weights", weights, shape=(u.size,))
    if np.any(weights < 0) or not np.any(weights > 0):
        raise ValueError("weights must be non-negative and not all zero")
    t = check_real("t", t, minimum=0.0, strict_min=True)
    grid, _ = _check_grid(grid)

    def err(delta):
        return t * np.sum(weights * (values - smoothed_score_1d(u, t, grid, delta=delta)) ** 2)

    return float(minimize_scalar(err, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-7}).x)
