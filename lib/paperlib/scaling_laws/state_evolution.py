"""State evolution of the LASSO: the soft-threshold fixed point of approximate message passing.

For a design ``A`` with i.i.d. ``N(0, 1/n)`` entries, observations ``y = A θ* + w`` with noise
variance ``σ²`` per entry, and the LASSO

.. math::

    \\hat\\theta = \\arg\\min_\\theta \\tfrac12 \\lVert y - A\\theta \\rVert_2^2 + \\lambda \\lVert\\theta\\rVert_1 ,

the approximate-message-passing (AMP) state evolution predicts, for ``n, d → ∞`` with ``δ = n/d``
fixed, that each coordinate of the LASSO solution is distributed like a soft-thresholded noisy copy of
the truth, ``\\hat\\theta_i ≈ η(θ*_i + τ Z; ατ)`` with ``Z ~ N(0, 1)``, where ``(τ, α)`` solve

.. math::

    \\tau^2 = \\sigma^2 + \\frac1\\delta \\big\\langle \\mathbb E_Z (\\eta(\\theta+\\tau Z;\\alpha\\tau)-\\theta)^2 \\big\\rangle ,
    \\qquad
    \\lambda = \\alpha\\tau\\Big(1 - \\frac1\\delta \\big\\langle \\mathbb P(|\\theta+\\tau Z| > \\alpha\\tau)\\big\\rangle\\Big),

and ``⟨·⟩`` averages over the empirical distribution of the entries of ``θ*`` (the *prior*: atoms
with weights). The per-coordinate mean squared error is ``⟨E(η − θ)²⟩ = δ (τ² − σ²)``.

Everything here is in these generic (Bayati–Montanari) units. A model that maps onto the LASSO (the
diagonal network of :mod:`paperlib.scaling_laws.diagonal_networks`) converts its own units in one place and calls
:func:`lasso_state_evolution` or :func:`lasso_state_evolution_optimal`.

All solvers are vectorised over problem instances (``delta``, ``noise_var``, ``penalty`` broadcast
together) by nested bisection, so a whole phase diagram is one call.

References
----------
M. Bayati and A. Montanari, "The LASSO risk for Gaussian matrices", IEEE Trans. Inf. Theory 58(4),
2012, Eqs. (1.5)-(1.6) (the fixed point and the calibration of λ).
D. L. Donoho, A. Maleki and A. Montanari, "Message-passing algorithms for compressed sensing",
PNAS 106(45), 2009.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._state_evolution_scalar import (  # noqa: F401
    _reject_bool,
    _real,
    _moments,
    _noise_mse,
    _alpha_min,
    soft_threshold,
    soft_threshold_moments,
    noise_only_mse,
    minimal_threshold,
    binned_prior,
)

__all__ = [
    "soft_threshold",
    "soft_threshold_moments",
    "noise_only_mse",
    "minimal_threshold",
    "binned_prior",
    "LassoSE",
    "lasso_state_evolution_at_threshold",
    "lasso_state_evolution",
    "lasso_state_evolution_optimal",
]

#: Arguments the book's bad-input probe would flag but that are valid by design.
_PROBE_EXEMPTIONS = {
    "soft_threshold": {"u": {"array_rank": "elementwise: an array of any shape is valid"}},
}
_GOLDEN_ITERS = 48
_ALPHA_MAX = 40.0


class LassoSE(NamedTuple):
    """Fixed point of the LASSO state evolution (arrays broadcast over problem instances).

    Attributes
    ----------
    tau : ndarray
        Effective noise ``τ`` of the equivalent scalar channel ``θ + τZ``.
    alpha : ndarray
        Threshold in units of ``τ``; the threshold itself is ``α τ``.
    penalty : ndarray
        LASSO penalty ``λ`` (Bayati–Montanari units) at this fixed point.
    mse : ndarray
        Per-coordinate mean squared error ``⟨E(η - θ)²⟩ = δ(τ² - σ²)``.
    active : ndarray
        Fraction of non-zero coordinates ``⟨P(|θ + τZ| > ατ)⟩``.
    """

    tau: np.ndarray
    alpha: np.ndarray
    penalty: np.ndarray
    mse: np.ndarray
    active: np.ndarray


def _check_prior(atoms, weights):
    atoms = _real("atoms", atoms, ndim=1, min_size=1)
    if weights is None:
        weights = np.full(atoms.size, 1.0 / atoms.size)
    weights = _real("weights", weights, ndim=1, min_size=1)
    if weights.shape != atoms.shape:
        raise ValueError(f"weights must have the shape of atoms {atoms.shape}, got {weights.shape}")
    if np.any(weights < 0) or not np.isclose(weights.sum(), 1.0, rtol=1e-9, atol=1e-12):
        raise ValueError("weights must be non-negative and sum to 1")
    return np.abs(atoms), weights


def _positive(name, value):
    arr = _real(name, value, min_size=1)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be positive")
    return arr


def _illinois(f, lo, hi, flo, fhi, *, ftol, tol=1e-13, iters=100):
    """Vectorised Illinois (modified regula falsi) on brackets with ``flo >= 0 >= fhi``.

    Converges superlinearly on smooth monotone functions and never leaves the bracket; stops when
    every ``|f| <= ftol`` (array or float) or every bracket is shorter than ``tol``.
    """
    last = np.zeros(lo.shape, dtype=int)
    x = 0.5 * (lo + hi)
    for _ in range(iters):
        denom = flo - fhi
        x = np.where(denom > 0, (lo * (-fhi) + hi * flo) / np.where(denom > 0, denom, 1.0), 0.5 * (lo + hi))
        fx = f(x)
        right = fx > 0  # the root is above x: x replaces lo
        lo, flo = np.where(right, x, lo), np.where(right, fx, flo)
        hi, fhi = np.where(right, hi, x), np.where(right, fhi, fx)
        flo = np.where(~right & (last == -1), 0.5 * flo, flo)
        fhi = np.where(right & (last == 1), 0.5 * fhi, fhi)
        last = np.where(right, 1, -1)
        if np.all((np.abs(fx) <= ftol) | ((hi - lo) <= tol * (1.0 + np.abs(x)))):
            break
    return x


def _solve_tau(atoms, weights, delta, noise_var, alpha):
    """Fixed point τ at threshold α (all (m,) arrays), by Illinois in log τ."""
    second = float(np.dot(weights, atoms * atoms))
    slack = 1.0 - _noise_mse(alpha) / delta  # > 0 iff α > α_min
    ok = slack > 0
    hi2 = (noise_var + second / delta) / np.where(ok, slack, 1.0) * (1.0 + 1e-9)
    th = atoms[None, :]

    def g(s):  # decreasing in s = log τ; root at the fixed point
        tau = np.exp(s)[:, None]
        mse, _, _ = _moments(th, tau, alpha[:, None] * tau)
        return (noise_var + (mse @ weights) / delta) * np.exp(-2.0 * s) - 1.0

    lo, hi = 0.5 * np.log(noise_var), 0.5 * np.log(hi2)
    s = _illinois(g, lo, hi, g(lo), g(hi), ftol=1e-13)
    tau = np.exp(s)
    mse, act, _ = _moments(th, tau[:, None], alpha[:, None] * tau[:, None])
    mse, act = mse @ weights, act @ weights
    penalty = alpha * tau * (1.0 - act / delta)
    mse = delta * (tau * tau - noise_var)  # the fixed-point identity, exact at the root
    nan = np.where(ok, 1.0, np.nan)
    return LassoSE(tau * nan, alpha * nan, penalty * nan, mse * nan, act * nan)


def _instances(delta, noise_var, *extra):
    arrays = np.broadcast_arrays(delta, noise_var, *extra)
    return [np.atleast_1d(np.asarray(a, dtype=float)).ravel() for a in arrays], np.shape(arrays[0])


def lasso_state_evolution_at_threshold(atoms, weights=None, *, delta, noise_var, alpha):
    """Solve the LASSO state evolution at a given threshold ``α`` (in units of ``τ``).

    Finds ``τ`` from ``τ² = σ² + ⟨E(η(θ+τZ; ατ) - θ)²⟩/δ`` by bisection in ``log τ`` (the right side
    over ``τ²`` decreases in ``τ``), then returns the penalty ``λ`` that calibrates to ``α``.

    Parameters
    ----------
    atoms : array_like, shape (k,)
        Values of the entries of ``θ*`` (the prior's atoms; signs are irrelevant).
    weights : array_like, shape (k,), optional
        Their weights (non-negative, sum to 1); uniform by default.
    delta : float or array_like
        Sampling ratio ``δ = n/d > 0``.
    noise_var : float or array_like
        Noise variance ``σ² > 0`` per observation (in the units where ``A`` has ``N(0,1/n)`` entries).
    alpha : float or array_like
        Threshold ``α > α_min(δ)`` in units of ``τ``; broadcast with ``delta`` and ``noise_var``.

    Returns
    -------
    LassoSE
        Arrays of the broadcast shape; ``nan`` where ``α <= α_min(δ)`` (no fixed point).

    Raises
    ------
    ValueError
        If the prior is malformed or a parameter is not positive and finite.

    Examples
    --------
    >>> se = lasso_state_evolution_at_threshold([1.0, 0.0], delta=2.0, noise_var=0.1, alpha=1.5)
    >>> round(float(se.tau), 4), round(float(se.penalty), 4)
    (0.4909, 0.5821)
    """
    atoms, weights = _check_prior(atoms, weights)
    delta = _positive("delta", delta)
    noise_var = _positive("noise_var", noise_var)
    alpha = _positive("alpha", alpha)
    (dl, nv, al), shape = _instances(delta, noise_var, alpha)
    res = _solve_tau(atoms, weights, dl, nv, al)
    return LassoSE(*(np.reshape(x, shape) for x in res))


def lasso_state_evolution(atoms, weights=None, *, delta, noise_var, penalty):
    """Solve the LASSO state evolution at a given penalty ``λ``.

    The calibration ``λ(α) = ατ(α)(1 - ⟨P(|θ+τZ|>ατ)⟩/δ)`` increases in ``α`` on the branch where it
    is positive (Bayati and Montanari, 2012, Prop. 1.4), so ``α`` is found by bisection in
    ``log(α - α_min)``, each step solving the ``τ`` equation by an inner bisection. Both are
    vectorised over the broadcast problem instances.

    Parameters
    ----------
    atoms : array_like, shape (k,)
        Values of the entries of ``θ*`` (signs are irrelevant).
    weights : array_like, shape (k,), optional
        Their weights (non-negative, sum to 1); uniform by default.
    delta : float or array_like
        Sampling ratio ``δ = n/d > 0``.
    noise_var : float or array_like
        Noise variance ``σ² > 0`` per observation.
    penalty : float or array_like
        LASSO penalty ``λ > 0`` in the ``½‖y - Aθ‖² + λ‖θ‖₁`` convention (scikit-learn's ``alpha``
        when ``A = X/√n``, see :mod:`paperlib.scaling_laws.diagonal_networks`).

    Returns
    -------
    LassoSE
        Arrays of the broadcast shape of ``delta``, ``noise_var`` and ``penalty``.

    Raises
    ------
    ValueError
        If the prior is malformed or a parameter is not positive and finite.

    Notes
    -----
    Thresholds are searched up to ``α = 40``: a larger penalty than ``λ(40)`` returns the ``α = 40``
    fixed point, which is the all-zero estimator to double precision (``P(|Z| > 40) ≈ 1e-350``).

    Examples
    --------
    >>> se = lasso_state_evolution([1.0, 0.0], delta=2.0, noise_var=0.1, penalty=0.5821)
    >>> round(float(se.alpha), 3), round(float(se.mse), 4)
    (1.5, 0.282)
    """
    atoms, weights = _check_prior(atoms, weights)
    delta = _positive("delta", delta)
    noise_var = _positive("noise_var", noise_var)
    penalty = _positive("penalty", penalty)
    (dl, nv, pen), shape = _instances(delta, noise_var, penalty)
    amin = _alpha_min(dl)

    def f(x):  # increasing in x = log(α - α_min); root where λ(α) = penalty
        return pen - _solve_tau(atoms, weights, dl, nv, amin + np.exp(x)).penalty

    lo = np.full_like(dl, np.log(1e-10))
    hi = np.log(_ALPHA_MAX - amin)
    flo, fhi = f(lo), f(hi)
    x = _illinois(f, lo, hi, np.maximum(flo, 0.0), np.minimum(fhi, 0.0), ftol=1e-11 * pen)
    x = np.where(flo <= 0, lo, np.where(fhi >= 0, hi, x))  # penalty outside [λ(α_lo), λ(40)]: clip
    res = _solve_tau(atoms, weights, dl, nv, amin + np.exp(x))
    return LassoSE(*(np.reshape(x, shape) for x in res))


def lasso_state_evolution_optimal(atoms, weights=None, *, delta, noise_var):
    """The LASSO state evolution at the penalty that minimises the predicted error.

    Golden-section search over ``α`` on ``[α_0, 40]``, where ``α_0`` is the threshold of zero penalty
    (:func:`lasso_state_evolution` with ``λ → 0``), vectorised over instances. The predicted mean
    squared error is unimodal in ``α`` for the priors used in the book (checked on a grid in the
    unit tests).

    Parameters
    ----------
    atoms : array_like, shape (k,)
        Values of the entries of ``θ*``.
    weights : array_like, shape (k,), optional
        Their weights; uniform by default.
    delta : float or array_like
        Sampling ratio ``δ = n/d > 0``.
    noise_var : float or array_like
        Noise variance ``σ² > 0`` per observation.

    Returns
    -------
    LassoSE
        The fixed point at the optimal penalty (``penalty`` is ``λ_opt``).

    Raises
    ------
    ValueError
        If the prior is malformed or a parameter is not positive and finite.

    Examples
    --------
    >>> se = lasso_state_evolution_optimal([1.0, 0.0], delta=2.0, noise_var=0.1)
    >>> round(float(se.penalty), 3), round(float(se.mse), 4)
    (0.118, 0.1356)
    """
    atoms, weights = _check_prior(atoms, weights)
    delta = _positive("delta", delta)
    noise_var = _positive("noise_var", noise_var)
    (dl, nv), shape = _instances(delta, noise_var)
    a0 = lasso_state_evolution(atoms, weights, delta=dl, noise_var=nv, penalty=1e-12 * np.sqrt(nv)).alpha
    # golden section in log α; ties go left because the error is flat (all-zero estimator) at large α
    lo, hi = np.log(a0), np.full_like(dl, np.log(_ALPHA_MAX))
    gr = 0.5 * (np.sqrt(5.0) - 1.0)
    c, e = hi - gr * (hi - lo), lo + gr * (hi - lo)
    fc = _solve_tau(atoms, weights, dl, nv, np.exp(c)).mse
    fe = _solve_tau(atoms, weights, dl, nv, np.exp(e)).mse
    for _ in range(_GOLDEN_ITERS):
        left = fc <= fe  # the minimum lies in [lo, e]
        hi = np.where(left, e, hi)
        lo = np.where(left, lo, c)
        c_new = hi - gr * (hi - lo)
        e_new = lo + gr * (hi - lo)
        f_new = _solve_tau(atoms, weights, dl, nv, np.exp(np.where(left, c_new, e_new))).mse
        fe, fc = np.where(left, fc, f_new), np.where(left, f_new, fe)
        c, e = np.where(left, c_new, e), np.where(left, c, e_new)
    lo, hi = np.exp(lo), np.exp(hi)
    res = _solve_tau(atoms, weights, dl, nv, 0.5 * (lo + hi))
    return LassoSE(*(np.reshape(x, shape) for x in res))
