"""Data model, unit conversions and state-evolution prediction of the diagonal network (private).

This module holds the theory side of :mod:`paperlib.scaling_laws.diagonal_networks`: the power-law
teacher and its Gaussian samples, the conversion between the network's weight decay and the LASSO
penalty (the normalisation conventions stated in that module's docstring), and the state-evolution
prediction of the trained network in the network's units, solved by
:mod:`paperlib.scaling_laws.state_evolution`, with draws of the predicted weights. Every public name
defined here is re-exported by :mod:`paperlib.scaling_laws.diagonal_networks`; import it from there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import state_evolution as _se
from ..core._validation import check_int
from ..core._validation import check_real as _check_real
from .state_evolution import _real as as_array  # as_array that also rejects booleans
from .state_evolution import _reject_bool

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


def check_real(name, value, **kwargs):
    """``_validation.check_real`` that also rejects booleans (``True`` is not a weight decay)."""
    _reject_bool(name, value)
    return _check_real(name, value, **kwargs)


def _sizes(name, value):
    """Positive, integer-valued sample size(s) as a float array (any shape)."""
    arr = as_array(name, value, min_size=1)
    if np.any(arr <= 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be positive integer(s), got {value!r}")
    return arr


def power_law_teacher(d: int, *, gamma: float = 1.0) -> np.ndarray:
    """Teacher coefficients ``θ*_i = i^{-γ}``, ``i = 1..d``.

    Parameters
    ----------
    d : int
        Input dimension, ``d >= 1``.
    gamma : float, default 1.0
        Decay exponent ``γ > 1/2`` (so ``‖θ*‖²`` stays bounded as ``d → ∞``).

    Returns
    -------
    ndarray, shape (d,)
        The teacher.

    Raises
    ------
    ValueError
        If ``d < 1`` or ``gamma <= 1/2``.

    Notes
    -----
    The paper's teacher has a power-law ("quasi-sparse") profile with exponent ``γ``; the exact
    normalisation ``θ*_i = i^{-γ}`` (no ``d``-dependent factor) is our choice.

    Examples
    --------
    >>> power_law_teacher(4, gamma=1.0).tolist()
    [1.0, 0.5, 0.3333333333333333, 0.25]
    """
    d = check_int("d", d, minimum=1)
    gamma = check_real("gamma", gamma, minimum=0.5, strict_min=True)
    return np.arange(1, d + 1, dtype=float) ** (-gamma)


def sample_data(theta, n: int, *, noise_var: float, rng: np.random.Generator):
    """Draw ``x_μ ~ N(0, I_d)`` and ``y_μ = θ*ᵀx_μ + √Δ ξ_μ``, ``ξ_μ ~ N(0, 1)``.

    Parameters
    ----------
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    n : int
        Number of samples, ``n >= 1``.
    noise_var : float
        Label-noise variance ``Δ >= 0``.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    X : ndarray, shape (n, d)
    y : ndarray, shape (n,)

    Raises
    ------
    ValueError
        If ``theta`` is not a finite 1-d array, ``n < 1``, ``noise_var < 0`` or ``rng`` is not a
        numpy Generator.

    Examples
    --------
    >>> X, y = sample_data(np.ones(3), 5, noise_var=0.0, rng=np.random.default_rng(0))
    >>> X.shape, bool(np.allclose(y, X.sum(1)))
    ((5, 3), True)
    """
    theta = as_array("theta", theta, ndim=1, min_size=1)
    n = check_int("n", n, minimum=1)
    noise_var = check_real("noise_var", noise_var, minimum=0.0)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    X = rng.standard_normal((n, theta.size))
    y = X @ theta + np.sqrt(noise_var) * rng.standard_normal(n)
    return X, y


def lasso_penalty(weight_decay, *, n, d):
    """scikit-learn's (and Bayati–Montanari's) LASSO penalty ``α = √d λ / n`` for weight decay ``λ``.

    Parameters
    ----------
    weight_decay : float or array_like
        The network's weight decay ``λ >= 0`` (sum-over-samples loss, see the module docstring).
    n : int or array_like
        Number of samples (positive integers), broadcast with ``weight_decay``.
    d : int
        Input dimension (positive).

    Returns
    -------
    ndarray
        ``√d λ / n``, broadcast shape.

    Raises
    ------
    ValueError
        If an input is not finite, ``weight_decay < 0`` or a size is not positive.

    Examples
    --------
    >>> float(lasso_penalty(1.0, n=100, d=400))
    0.2
    """
    lam = as_array("weight_decay", weight_decay, min_size=1)
    if np.any(lam < 0):
        raise ValueError("weight_decay must be non-negative")
    n = _sizes("n", n)
    d = check_int("d", d, minimum=1)
    return np.sqrt(d) * lam / n


def weight_decay_from_penalty(penalty, *, n, d):
    """Inverse of :func:`lasso_penalty`: the weight decay ``λ = n α / √d``.

    Parameters
    ----------
    penalty : float or array_like
        LASSO penalty ``α >= 0`` (scikit-learn units).
    n : int or array_like
        Number of samples (positive integers).
    d : int
        Input dimension (positive).

    Returns
    -------
    ndarray
        ``n α / √d``.

    Raises
    ------
    ValueError
        If an input is not finite, ``penalty < 0`` or a size is not positive.

    Examples
    --------
    >>> float(weight_decay_from_penalty(0.2, n=100, d=400))
    1.0
    """
    pen = as_array("penalty", penalty, min_size=1)
    if np.any(pen < 0):
        raise ValueError("penalty must be non-negative")
    n = _sizes("n", n)
    d = check_int("d", d, minimum=1)
    return n * pen / np.sqrt(d)


class NetworkSE(NamedTuple):
    """State-evolution prediction for the diagonal network, in the network's units.

    Attributes
    ----------
    risk : ndarray
        Excess risk ``R = ‖θ̂ - θ*‖²`` (the test error minus the noise ``Δ``).
    weight_decay : ndarray
        Weight decay ``λ`` of the fixed point (the optimum for
        :func:`network_state_evolution_optimal`).
    tau : ndarray
        Effective noise of the scalar channel ``θ̂_i ≈ η(θ*_i + τ Z_i; t)``.
    threshold : ndarray
        Soft threshold ``t = α τ`` on the scale of ``θ``.
    active : ndarray
        Predicted fraction of non-zero coordinates (of weights ``w_i ≠ 0``).
    """

    risk: np.ndarray
    weight_decay: np.ndarray
    tau: np.ndarray
    threshold: np.ndarray
    active: np.ndarray


def _prior(theta, n_bins):
    theta = as_array("theta", theta, ndim=1, min_size=1)
    if n_bins is None:
        return theta, None, theta.size
    n_bins = check_int("n_bins", n_bins, minimum=2)
    atoms, weights = _se.binned_prior(theta, n_bins=n_bins, n_exact=min(50, n_bins - 1))
    return atoms, weights, theta.size


def _to_network(res, n, d):
    return NetworkSE(
        risk=d * res.mse,
        weight_decay=weight_decay_from_penalty(np.nan_to_num(np.maximum(res.penalty, 0.0)), n=n, d=d)
        * np.where(np.isfinite(res.penalty), 1.0, np.nan),
        tau=res.tau,
        threshold=res.alpha * res.tau,
        active=res.active,
    )


def network_state_evolution(theta, *, n, noise_var, weight_decay, n_bins=None):
    """State-evolution prediction of the trained diagonal network (LASSO) at weight decay ``λ``.

    Converts to the state evolution's units (``δ = n/d``, ``σ² = Δ/n``, penalty ``√dλ/n``), solves
    it with :func:`paperlib.scaling_laws.state_evolution.lasso_state_evolution` and converts back
    (``R = d × mse``).

    Parameters
    ----------
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    n : int or array_like
        Number(s) of samples (positive integers), broadcast with ``weight_decay``.
    noise_var : float
        Label-noise variance ``Δ > 0``.
    weight_decay : float or array_like
        Weight decay(s) ``λ > 0``.
    n_bins : int, optional
        Compress ``θ*`` to this many atoms (:func:`paperlib.scaling_laws.state_evolution.binned_prior`); use it
        for ``d`` beyond a few thousand. Default: every coordinate is an atom (the non-asymptotic
        state evolution of the paper).

    Returns
    -------
    NetworkSE
        Arrays of the broadcast shape of ``n`` and ``weight_decay``.

    Raises
    ------
    ValueError
        If an input is malformed or a parameter is not positive.

    Examples
    --------
    >>> se = network_state_evolution(power_law_teacher(100), n=200, noise_var=1.0, weight_decay=1.0)
    >>> round(float(se.risk), 3), round(float(se.active), 3)
    (0.258, 0.483)
    """
    atoms, weights, d = _prior(theta, n_bins)
    noise_var = check_real("noise_var", noise_var, minimum=0.0, strict_min=True)
    n = _sizes("n", n)
    lam = as_array("weight_decay", weight_decay, min_size=1)
    if np.any(lam <= 0):
        raise ValueError("weight_decay must be positive")
    n, lam = np.broadcast_arrays(n, lam)
    res = _se.lasso_state_evolution(
        atoms, weights, delta=n / d, noise_var=noise_var / n, penalty=lasso_penalty(lam, n=n, d=d)
    )
    return _to_network(res, n, d)


def network_state_evolution_optimal(theta, *, n, noise_var, n_bins=None):
    """State-evolution prediction at the weight decay that minimises the predicted excess risk.

    Parameters
    ----------
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    n : int or array_like
        Number(s) of samples (positive integers).
    noise_var : float
        Label-noise variance ``Δ > 0``.
    n_bins : int, optional
        As in :func:`network_state_evolution`.

    Returns
    -------
    NetworkSE
        ``weight_decay`` holds ``λ_opt(n)``, ``risk`` the optimal excess risk.

    Raises
    ------
    ValueError
        If an input is malformed or a parameter is not positive.

    Examples
    --------
    >>> se = network_state_evolution_optimal(power_law_teacher(100), n=200, noise_var=1.0)
    >>> round(float(se.risk), 3), round(float(se.weight_decay), 2)
    (0.232, 1.54)
    """
    atoms, weights, d = _prior(theta, n_bins)
    noise_var = check_real("noise_var", noise_var, minimum=0.0, strict_min=True)
    n = _sizes("n", n)
    res = _se.lasso_state_evolution_optimal(atoms, weights, delta=n / d, noise_var=noise_var / n)
    return _to_network(res, n, d)


def state_evolution_weights(theta, *, tau: float, threshold: float, rng: np.random.Generator, draws: int = 1):
    """Draw the learned predictor the state evolution predicts: ``θ̂_i = η(θ*_i + τ Z_i; t)``.

    Parameters
    ----------
    theta : array_like, shape (d,)
        Teacher ``θ*``.
    tau : float
        Effective noise ``τ > 0`` (from :func:`network_state_evolution`).
    threshold : float
        Threshold ``t >= 0`` on the scale of ``θ``.
    rng : numpy.random.Generator
        Source of the ``Z_i``.
    draws : int, default 1
        Number of independent draws.

    Returns
    -------
    ndarray, shape (draws, d)
        Predicted weights ``θ̂``.

    Raises
    ------
    ValueError
        If an input is malformed or out of range.

    Examples
    --------
    >>> state_evolution_weights([3.0, 0.5], tau=1e-9, threshold=1.0, rng=np.random.default_rng(0)).round(6).tolist()
    [[2.0, 0.0]]
    """
    theta = as_array("theta", theta, ndim=1, min_size=1)
    tau = check_real("tau", tau, minimum=0.0, strict_min=True)
    threshold = check_real("threshold", threshold, minimum=0.0)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    draws = check_int("draws", draws, minimum=1)
    u = theta[None, :] + tau * rng.standard_normal((draws, theta.size))
    return _se.soft_threshold(u, threshold)
