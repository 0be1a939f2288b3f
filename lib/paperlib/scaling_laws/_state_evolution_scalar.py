"""The scalar channel of the LASSO state evolution and its prior (private).

This module holds the scalar building blocks of :mod:`paperlib.scaling_laws.state_evolution`: soft
thresholding ``η(u; t)`` and the closed-form Gaussian moments of ``η(θ + τZ; t)``, the mean square of
soft-thresholded pure noise with the smallest threshold at which a fixed point exists, and the
compression of a long ``θ*`` into a few weighted atoms (the prior), together with the input checks
that reject booleans. The fixed-point solvers live in the public module, which re-exports every
public name defined here; import it from there.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ..core._validation import as_array, check_int

_PHI0 = 1.0 / np.sqrt(2.0 * np.pi)


def _reject_bool(name, value):
    if isinstance(value, (bool, np.bool_)) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        raise ValueError(f"{name} must be a real number or array of real numbers, got a boolean {value!r}")


def _real(name, value, **kwargs):
    """``as_array`` that also rejects booleans (which numpy would silently turn into 0/1)."""
    _reject_bool(name, value)
    return as_array(name, value, **kwargs)


def _pdf(x):
    return _PHI0 * np.exp(-0.5 * x * x)


def soft_threshold(u, threshold):
    """Soft-thresholding ``η(u; t) = sign(u) max(|u| - t, 0)``.

    Parameters
    ----------
    u : array_like
        Input values (any shape).
    threshold : float or array_like
        Threshold ``t >= 0``, broadcast against ``u``.

    Returns
    -------
    ndarray
        ``η(u; t)``, the shape of ``u`` broadcast with ``threshold``.

    Raises
    ------
    ValueError
        If ``u`` or ``threshold`` is empty or not finite, or ``threshold`` is negative.

    Examples
    --------
    >>> soft_threshold([-2.0, 0.5, 3.0], 1.0).tolist()
    [-1.0, 0.0, 2.0]
    """
    u = _real("u", u, min_size=1)
    t = _real("threshold", threshold, min_size=1)
    if np.any(t < 0):
        raise ValueError("threshold must be non-negative")
    return np.sign(u) * np.maximum(np.abs(u) - t, 0.0)


def _moments(theta, tau, t):
    """Unchecked closed forms: (mse, P(active), mean) of η(θ + τZ; t), broadcast."""
    a = (t - theta) / tau
    b = (-t - theta) / tau
    pa, pb = _pdf(a), _pdf(b)
    up = special.ndtr(-a)  # P(θ + τZ > t)
    lo = special.ndtr(b)  # P(θ + τZ < -t)
    mid = np.clip(1.0 - up - lo, 0.0, 1.0)
    tau2 = tau * tau
    mse = (
        theta * theta * mid
        + tau2 * (up + a * pa) - 2.0 * t * tau * pa + t * t * up
        + tau2 * (lo - b * pb) - 2.0 * t * tau * pb + t * t * lo
    )
    mean = (theta - t) * up + tau * pa + (theta + t) * lo - tau * pb
    return np.maximum(mse, 0.0), up + lo, mean


def soft_threshold_moments(theta, tau, threshold):
    """Closed-form moments of ``η(θ + τZ; t)`` for ``Z ~ N(0, 1)``.

    With ``a = (t - θ)/τ`` and ``b = (-t - θ)/τ`` (``Φ``, ``φ`` the normal cdf and pdf),

    * ``mse = E(η - θ)² = θ²[Φ(a) - Φ(b)] + τ²[Φ(-a) + aφ(a)] - 2tτφ(a) + t²Φ(-a)
      + τ²[Φ(b) - bφ(b)] - 2tτφ(b) + t²Φ(b)``,
    * ``active = P(|θ + τZ| > t) = Φ(-a) + Φ(b)``,
    * ``mean = E η = (θ - t)Φ(-a) + τφ(a) + (θ + t)Φ(b) - τφ(b)``.

    Parameters
    ----------
    theta : array_like
        True coefficient(s) ``θ`` (any shape).
    tau : float or array_like
        Effective noise level ``τ > 0``, broadcast against ``theta``.
    threshold : float or array_like
        Threshold ``t >= 0``, broadcast against ``theta``.

    Returns
    -------
    mse, active, mean : ndarray
        The three moments, broadcast shape.

    Raises
    ------
    ValueError
        If an input is empty or not finite, ``tau <= 0`` or ``threshold < 0``.

    Examples
    --------
    >>> mse, active, mean = soft_threshold_moments(0.0, 1.0, 0.0)   # no threshold: η(Z) = Z
    >>> float(mse), float(active), float(mean)
    (1.0, 1.0, 0.0)
    """
    theta = _real("theta", theta, min_size=1)
    tau = _real("tau", tau, min_size=1)
    t = _real("threshold", threshold, min_size=1)
    if np.any(tau <= 0):
        raise ValueError("tau must be positive")
    if np.any(t < 0):
        raise ValueError("threshold must be non-negative")
    return _moments(theta, tau, t)


def _noise_mse(alpha):
    """E η(Z; α)² = 2[(1 + α²)Φ(-α) - αφ(α)] (unchecked, vectorised)."""
    return 2.0 * ((1.0 + alpha * alpha) * special.ndtr(-alpha) - alpha * _pdf(alpha))


def noise_only_mse(alpha):
    """Mean square of soft-thresholded pure noise, ``m(α) = E η(Z; α)² = 2[(1+α²)Φ(-α) - αφ(α)]``.

    ``m`` decreases from ``m(0) = 1`` to 0; the state evolution has a solution at threshold ``α``
    only if ``m(α) < δ`` (:func:`minimal_threshold`).

    Parameters
    ----------
    alpha : float or array_like
        Threshold in units of the effective noise, ``α >= 0``.

    Returns
    -------
    ndarray
        ``m(α)``, same shape as ``alpha``.

    Raises
    ------
    ValueError
        If ``alpha`` is empty, not finite or negative.

    Examples
    --------
    >>> round(float(noise_only_mse(0.0)), 6), round(float(noise_only_mse(1.0)), 4)
    (1.0, 0.1507)
    """
    alpha = _real("alpha", alpha, min_size=1)
    if np.any(alpha < 0):
        raise ValueError("alpha must be non-negative")
    return _noise_mse(alpha)


def _alpha_min(delta):
    """Vectorised bisection for m(α) = δ (0 where δ >= 1)."""
    delta = np.asarray(delta, dtype=float)
    lo = np.zeros_like(delta)
    hi = np.full_like(delta, 12.0)
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        above = _noise_mse(mid) > delta
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return np.where(delta >= 1.0, 0.0, hi)


def minimal_threshold(delta):
    """Smallest threshold ``α_min(δ)`` at which the state evolution has a fixed point.

    It solves ``m(α) = δ`` (:func:`noise_only_mse`) for ``δ < 1`` and is 0 for ``δ >= 1``. Below it
    the effective noise ``τ`` diverges: the LASSO at ``δ < 1`` with a vanishing penalty tends to
    basis pursuit, whose threshold in ``τ`` units is ``α_0 > α_min``.

    Parameters
    ----------
    delta : float or array_like
        Sampling ratio ``δ = n/d > 0``.

    Returns
    -------
    ndarray
        ``α_min(δ)``, same shape as ``delta``.

    Raises
    ------
    ValueError
        If ``delta`` is empty, not finite or not positive.

    Examples
    --------
    >>> round(float(minimal_threshold(0.5)), 4), float(minimal_threshold(2.0))
    (0.4052, 0.0)
    """
    delta = _real("delta", delta, min_size=1)
    if np.any(delta <= 0):
        raise ValueError("delta must be positive")
    return _alpha_min(delta)


def binned_prior(values, *, n_bins: int = 400, n_exact: int = 50):
    """Compress a long coefficient vector into a few weighted atoms for the state evolution.

    The state evolution depends on ``θ*`` only through averages over its entries, and only through
    ``|θ*_i|`` (soft thresholding is odd). The largest ``n_exact`` magnitudes are kept as their own
    atoms; the rest are sorted and split into ``n_bins - n_exact`` groups of geometrically growing
    size, each replaced by the root-mean-square of its members, so ``⟨θ²⟩`` is preserved exactly.

    Parameters
    ----------
    values : array_like, shape (d,)
        The coefficients ``θ*`` (finite, at least one).
    n_bins : int, default 400
        Total number of atoms, ``n_bins >= 1``. If ``d <= n_bins`` every entry is its own atom.
    n_exact : int, default 50
        Number of largest magnitudes kept exactly, ``0 <= n_exact <= n_bins``.

    Returns
    -------
    atoms : ndarray, shape (k,)
        Non-negative atom values, sorted in decreasing order, ``k <= n_bins``.
    weights : ndarray, shape (k,)
        Fractions of coordinates per atom (sum to 1).

    Raises
    ------
    ValueError
        If ``values`` is not a non-empty 1-d finite array, or the bin counts are out of range.

    Notes
    -----
    The binning is ours, to make the state evolution cost independent of ``d``; the unit tests
    check it against the unbinned state evolution at ``d = 10⁴``.

    Examples
    --------
    >>> atoms, weights = binned_prior(1.0 / np.arange(1, 11), n_bins=4, n_exact=2)
    >>> np.round(atoms, 3).tolist(), weights.tolist()
    ([1.0, 0.5, 0.295, 0.145], [0.1, 0.1, 0.2, 0.6])
    """
    values = _real("values", values, ndim=1, min_size=1)
    n_bins = check_int("n_bins", n_bins, minimum=1)
    n_exact = check_int("n_exact", n_exact, minimum=0, maximum=n_bins)
    mags = np.sort(np.abs(values))[::-1]
    d = mags.size
    if d <= n_bins:
        return mags.copy(), np.full(d, 1.0 / d)
    rest = d - n_exact
    n_groups = n_bins - n_exact
    if n_groups == 0:
        raise ValueError(f"n_exact must be < n_bins when d = {d} > n_bins = {n_bins}")
    # group edges: geometric in the index of the remaining coordinates, at least one per group
    edges = np.unique(np.round(np.geomspace(1, rest + 1, n_groups + 1)).astype(int)) - 1
    edges[-1] = rest
    tail = mags[n_exact:]
    sq = np.add.reduceat(tail * tail, edges[:-1])
    counts = np.diff(edges)
    atoms = np.concatenate([mags[:n_exact], np.sqrt(sq / counts)])
    weights = np.concatenate([np.ones(n_exact), counts]) / d
    return atoms, weights
