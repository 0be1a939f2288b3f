"""Diagonal two-layer linear networks with weight decay, their LASSO twin and its state evolution.

The network ``f(x) = aᵀ(w ⊙ x)/√d = Σ_i a_i w_i x_i/√d`` (first layer ``W = diag(w)``) is trained on
``n`` pairs ``(x_μ, y_μ)`` by minimising

.. math::

    L(w, a) = \\sum_{\\mu=1}^n \\big(y_\\mu - f(x_\\mu)\\big)^2 + \\lambda\\,(\\lVert w\\rVert^2 + \\lVert a\\rVert^2).

With ``θ = a ⊙ w/√d`` and ``w_i² + a_i² ≥ 2|a_i w_i| = 2√d|θ_i|`` (equality iff ``|w_i| = |a_i|``),
its global minima are exactly the balanced factorisations of the LASSO solution

.. math::

    \\hat\\theta = \\arg\\min_\\theta \\sum_\\mu (y_\\mu - \\theta^\\top x_\\mu)^2 + 2\\sqrt d\\,\\lambda\\,\\lVert\\theta\\rVert_1 .

**Normalisation conventions (the only place they live).** Dividing by ``2n`` puts this LASSO in
scikit-learn's form ``(1/2n)‖y - Xθ‖² + α‖θ‖₁`` with ``α = √d λ / n`` (:func:`lasso_penalty`). With
``A = X/√n`` (entries ``N(0, 1/n)``) and ``ỹ = y/√n`` it is Bayati and Montanari's
``½‖ỹ - Aθ‖² + α‖θ‖₁`` with the same ``α``, noise variance ``σ² = Δ/n`` and ``δ = n/d``; the excess
risk ``R = E_x(f*(x) - f(x))² = ‖θ̂ - θ*‖²`` is ``d`` times the state evolution's per-coordinate
error. :func:`network_state_evolution` applies these conversions and calls
:mod:`paperlib.scaling_laws.state_evolution`.

References
----------
L. Defilippis, Y. Xu, J. Girardin, E. Troiani, V. Erba, L. Zdeborová, B. Loureiro, F. Krzakala,
"Scaling Laws and Spectra of Shallow Neural Networks in the Feature Learning Regime", ICLR 2026,
arXiv:2509.24882 (diagonal network, its LASSO reformulation and the state-evolution conjecture).
P. D. Hoff, "Lasso, fractional norm and structured sparse estimation using a Hadamard product
parametrization", Computational Statistics & Data Analysis 115, 2017.
"""

from __future__ import annotations

from typing import NamedTuple

import jax  # noqa: F401  (the docstring examples, which the bad-input probe runs in this namespace, use it)
import numpy as np

from ..core import fitting
from ..core._validation import check_int, check_rng
from .state_evolution import _real as as_array  # as_array that also rejects booleans
from ._diagonal_networks_theory import (  # noqa: F401
    check_real,
    _sizes,
    power_law_teacher,
    sample_data,
    lasso_penalty,
    weight_decay_from_penalty,
    NetworkSE,
    network_state_evolution,
    network_state_evolution_optimal,
    state_evolution_weights,
)
from ._diagonal_networks_training import (  # noqa: F401
    fit_lasso,
    network_loss,
    DiagonalNetwork,
    train_diagonal_network,
    zero_solution_weight_decay,
)

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "power_law_teacher",
    "sample_data",
    "lasso_penalty",
    "weight_decay_from_penalty",
    "network_state_evolution",
    "network_state_evolution_optimal",
    "NetworkSE",
    "fit_lasso",
    "network_loss",
    "DiagonalNetwork",
    "train_diagonal_network",
    "zero_solution_weight_decay",
    "weight_spectrum",
    "state_evolution_weights",
    "ridge_excess_risk",
    "excess_risk",
    "LassoGrid",
    "lasso_risk_grid",
    "plateau_end",
    "rank_slope",
]

_CLOSED_FORM_N = ("a sample size in a closed-form float64 formula (no allocation, no jit): "
                  "a count past 2**31 is valid")
_PROBE_EXEMPTIONS = {
    "lasso_penalty": {"n": {"int_past_int32": _CLOSED_FORM_N}},
    "weight_decay_from_penalty": {"n": {"int_past_int32": _CLOSED_FORM_N}},
    "network_state_evolution": {"n": {"int_past_int32": _CLOSED_FORM_N}},
    "network_state_evolution_optimal": {"n": {"int_past_int32": _CLOSED_FORM_N}},
}


def weight_spectrum(theta) -> np.ndarray:
    """Singular values of the first layer ``W = diag(w)`` of a balanced network computing ``θ``.

    At a global minimum ``|w_i| = |a_i| = (√d |θ_i|)^{1/2}``, so the spectrum is this vector sorted
    in decreasing order.

    Parameters
    ----------
    theta : array_like, shape (d,) or (k, d)
        Linear predictor(s) of the network, one per row.

    Returns
    -------
    ndarray, shape (d,) or (k, d)
        Singular values, largest first (row by row).

    Raises
    ------
    ValueError
        If ``theta`` is not a finite non-empty 1-d or 2-d array.

    Examples
    --------
    >>> weight_spectrum([0.0, -0.5, 2.0]).round(3).tolist()
    [1.861, 0.931, 0.0]
    """
    theta = as_array("theta", theta, ndim=(1, 2), min_size=1)
    return np.sort(np.sqrt(np.sqrt(theta.shape[-1]) * np.abs(theta)), axis=-1)[..., ::-1]


def ridge_excess_risk(X, y, theta, *, weight_decay) -> np.ndarray:
    """Excess risk ``‖θ̂_ridge - θ*‖²`` of ridge regression, ``Σ(y - θᵀx)² + λ‖θ‖²``, for many ``λ``.

    The one-layer linear model with the same weight decay: its penalty is a squared ℓ₂ norm, so
    it never sets a coefficient to zero. One eigendecomposition of the smaller Gram matrix
    (``XXᵀ`` or ``XᵀX``) serves every ``λ``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    weight_decay : float or array_like, shape (k,)
        Ridge penalties ``λ > 0``.

    Returns
    -------
    ndarray, shape () or (k,)
        Excess risks.

    Raises
    ------
    ValueError
        If shapes disagree, an input is not finite or a penalty is not positive.

    Examples
    --------
    >>> X = np.eye(3) * 2.0
    >>> ridge_excess_risk(X, X @ np.ones(3), np.ones(3), weight_decay=[1e-9, 4.0]).round(3).tolist()
    [0.0, 0.75]
    """
    X = as_array("X", X, ndim=2, min_size=1)
    n, d = X.shape
    y = as_array("y", y, shape=(n,))
    theta = as_array("theta", theta, shape=(d,))
    lam = as_array("weight_decay", weight_decay, ndim=(0, 1), min_size=1)
    if np.any(lam <= 0):
        raise ValueError("weight_decay must be positive")
    lam1 = np.atleast_1d(lam)[:, None]
    if n <= d:  # θ̂ = Xᵀ(XXᵀ + λ)⁻¹y = Xᵀ U c with XXᵀ = U diag(s) Uᵀ and c = Uᵀy / (s + λ)
        s, U = np.linalg.eigh(X @ X.T)
        c = (U.T @ y)[None, :] / (s[None, :] + lam1)
        cross = U.T @ (X @ theta)
        risk = np.sum(s[None, :] * c**2, axis=1) - 2.0 * c @ cross + theta @ theta
    else:  # θ̂ = V c with XᵀX = V diag(s) Vᵀ and c = VᵀXᵀy / (s + λ)
        s, V = np.linalg.eigh(X.T @ X)
        c = (V.T @ (X.T @ y))[None, :] / (s[None, :] + lam1)
        risk = np.sum((c - (V.T @ theta)[None, :]) ** 2, axis=1)
    return risk[0] if lam.ndim == 0 else risk


def excess_risk(theta_hat, theta) -> np.ndarray:
    """Excess risk ``E_x(θ̂ᵀx - θ*ᵀx)² = ‖θ̂ - θ*‖²`` for ``x ~ N(0, I_d)``.

    Parameters
    ----------
    theta_hat : array_like, shape (d,) or (k, d)
        Learned predictor(s).
    theta : array_like, shape (d,)
        Teacher.

    Returns
    -------
    ndarray, shape () or (k,)

    Raises
    ------
    ValueError
        If shapes disagree or an input is not finite.

    Examples
    --------
    >>> float(excess_risk([1.0, 0.0], [0.0, 0.0]))
    1.0
    """
    theta = as_array("theta", theta, ndim=1, min_size=1)
    theta_hat = as_array("theta_hat", theta_hat, ndim=(1, 2), min_size=1)
    if theta_hat.shape[-1] != theta.size:
        raise ValueError(f"theta_hat must have last dimension {theta.size}, got shape {theta_hat.shape}")
    return np.sum((theta_hat - theta) ** 2, axis=-1)


class LassoGrid(NamedTuple):
    """Output of :func:`lasso_risk_grid` (axes: seed, sample size, weight decay).

    Attributes
    ----------
    risk : ndarray, shape (s, m, k)
        Excess risks ``‖θ̂ - θ*‖²``.
    active : ndarray, shape (s, m, k)
        Fractions of non-zero coordinates of ``θ̂``.
    coefs : dict
        ``{(seed, j): ndarray (k, d)}``, the solutions at the sample sizes listed in ``keep``.
    """

    risk: np.ndarray
    active: np.ndarray
    coefs: dict


def lasso_risk_grid(theta, ns, weight_decays, *, noise_var: float, rngs, keep=()):
    """Simulate the trained network (its LASSO) on a grid of sample sizes and weight decays.

    For each generator in ``rngs`` and each ``n`` in ``ns``, draw a data set with
    :func:`sample_data` and solve every weight decay of that row with :func:`fit_lasso` (one LARS
    path or one warm-started coordinate-descent path per data set).

    Parameters
    ----------
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    ns : array_like of int, shape (m,)
        Sample sizes.
    weight_decays : array_like, shape (k,) or (m, k)
        Weight decays ``λ > 0``; one row per sample size to let them depend on ``n``.
    noise_var : float
        Label-noise variance ``Δ >= 0``.
    rngs : sequence of numpy.random.Generator, length s
        One generator per independent repetition (seed).
    keep : sequence of int, default ()
        Indices ``j`` into ``ns`` whose solutions are returned in ``coefs``.

    Returns
    -------
    LassoGrid
        Risks, non-zero fractions and the kept solutions.

    Raises
    ------
    ValueError
        If an input is malformed (shapes, non-positive sizes or weight decays, bad generators).

    Examples
    --------
    >>> g = lasso_risk_grid(power_law_teacher(20), [10, 40], [0.5, 5.0], noise_var=0.1,
    ...                     rngs=[np.random.default_rng(0)])
    >>> g.risk.shape, np.round(g.risk[0, :, 1], 3).tolist()
    ((1, 2, 2), [1.596, 0.943])
    """
    theta = as_array("theta", theta, ndim=1, min_size=1)
    ns = _sizes("ns", ns)
    if ns.ndim != 1:
        raise ValueError(f"ns must be one-dimensional, got shape {ns.shape}")
    lam = as_array("weight_decays", weight_decays, ndim=(1, 2), min_size=1)
    if lam.ndim == 1:
        lam = np.broadcast_to(lam, (ns.size, lam.size))
    if lam.shape[0] != ns.size or np.any(lam <= 0):
        raise ValueError(f"weight_decays must be positive with shape (k,) or ({ns.size}, k), got {lam.shape}")
    noise_var = check_real("noise_var", noise_var, minimum=0.0)
    try:
        rngs = None if isinstance(rngs, np.random.Generator) else list(rngs)
    except TypeError:
        rngs = None
    if not rngs or not all(isinstance(r, np.random.Generator) for r in rngs):
        raise ValueError("rngs must be a non-empty sequence of numpy.random.Generator")
    keep = {check_int("keep", j, minimum=0, maximum=ns.size - 1) for j in keep}
    risk = np.empty((len(rngs), ns.size, lam.shape[1]))
    active = np.empty_like(risk)
    coefs = {}
    for s, rng in enumerate(rngs):
        for j, n in enumerate(ns.astype(int)):
            X, y = sample_data(theta, int(n), noise_var=noise_var, rng=rng)
            T = fit_lasso(X, y, weight_decay=lam[j])
            risk[s, j] = excess_risk(T, theta)
            active[s, j] = np.mean(T != 0, axis=1)
            if j in keep:
                coefs[s, j] = T
    return LassoGrid(risk=risk, active=active, coefs=coefs)


def plateau_end(theta, n_max: int, weight_decays, *, noise_var: float, rng: np.random.Generator) -> np.ndarray:
    """Sample size at which the trained network stops being identically zero, for each weight decay.

    Samples arrive one at a time; the network trained on the first ``n`` is zero iff
    ``λ >= ‖X_nᵀ y_n‖_∞/√d`` (:func:`zero_solution_weight_decay`), and ``X_nᵀ y_n`` is a running
    sum, so one pass over ``n_max`` samples gives the end of the plateau for every ``λ``.

    Parameters
    ----------
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    n_max : int
        Number of samples streamed (``>= 1``).
    weight_decays : array_like, shape (k,)
        Weight decays ``λ > 0``.
    noise_var : float
        Label-noise variance ``Δ >= 0``.
    rng : numpy.random.Generator
        Source of the data.

    Returns
    -------
    ndarray, shape (k,)
        The smallest ``n`` at which the network is non-zero (``n_max + 1`` if it is zero throughout).

    Raises
    ------
    ValueError
        If an input is malformed.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> plateau_end(power_law_teacher(50), 400, [1.0, 20.0], noise_var=1.0, rng=np.random.default_rng(0)).tolist()
    [7, 152]
    """
    rng = check_rng("rng", rng)
    theta = as_array("theta", theta, ndim=1, min_size=1)
    n_max = check_int("n_max", n_max, minimum=1)
    lam = as_array("weight_decays", weight_decays, ndim=1, min_size=1)
    if np.any(lam <= 0):
        raise ValueError("weight_decays must be positive")
    X, y = sample_data(theta, n_max, noise_var=noise_var, rng=rng)
    running = np.max(np.abs(np.cumsum(X * y[:, None], axis=0)), axis=1) / np.sqrt(theta.size)
    above = running[None, :] > lam[:, None]
    return np.where(above.any(axis=1), above.argmax(axis=1) + 1, n_max + 1)


def rank_slope(spectrum, *, lo: int = 2, hi: int = 16):
    """Log-log slope of a rank-ordered spectrum over ranks ``lo..hi``.

    A 1-d spectrum is fitted with :func:`paperlib.core.fitting.power_law_fit`; a 2-d array of spectra
    (one per row) gets the same least-squares slope row by row, vectorised.

    Parameters
    ----------
    spectrum : array_like, shape (d,) or (k, d)
        Values sorted in decreasing order (e.g. :func:`weight_spectrum`).
    lo, hi : int, default 2 and 16
        First and last rank (1-based, ``1 <= lo < hi <= d``).

    Returns
    -------
    float or ndarray, shape (k,)
        The fitted exponent(s); ``nan`` where a value in the window is zero.

    Raises
    ------
    ValueError
        If the spectrum is malformed or the window is out of range.

    Examples
    --------
    >>> round(rank_slope(weight_spectrum(power_law_teacher(100, gamma=1.0))), 6)
    -0.5
    """
    spectrum = as_array("spectrum", spectrum, ndim=(1, 2), min_size=2)
    lo = check_int("lo", lo, minimum=1)
    hi = check_int("hi", hi, minimum=lo + 1, maximum=spectrum.shape[-1])
    window = spectrum[..., lo - 1 : hi]
    ranks = np.arange(lo, hi + 1)
    if spectrum.ndim == 1:
        if np.any(window <= 0):
            return float("nan")
        return fitting.power_law_fit(ranks, window).slope
    lx = np.log(ranks) - np.log(ranks).mean()
    with np.errstate(divide="ignore"):
        ly = np.log(np.where(window > 0, window, np.nan))
    return (ly - ly.mean(axis=1, keepdims=True)) @ lx / (lx @ lx)
