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

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path, lasso_path

from ..core import fitting
from . import state_evolution as _se
from ..core._validation import check_int, check_rng
from ..core._validation import check_real as _check_real
from .state_evolution import _real as as_array  # as_array that also rejects booleans
from .state_evolution import _reject_bool


def check_real(name, value, **kwargs):
    """``_validation.check_real`` that also rejects booleans (``True`` is not a weight decay)."""
    _reject_bool(name, value)
    return _check_real(name, value, **kwargs)

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


def _sizes(name, value):
    """Positive, integer-valued sample size(s) as a float array (any shape)."""
    arr = as_array(name, value, min_size=1)
    if np.any(arr <= 0) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must be positive integer(s), got {value!r}")
    return arr


def _check_key(key):
    ok = False
    try:
        dtype = key.dtype
        ok = jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key) or (
            dtype == np.uint32 and tuple(key.shape) == (2,)
        )
    except AttributeError:
        pass
    if not ok:
        raise ValueError(f"key must be a jax.random key (jax.random.key(seed)), got {key!r}")


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


def fit_lasso(X, y, *, weight_decay, method: str = "auto", tol: float = 1e-8, max_iter: int = 200_000) -> np.ndarray:
    """The diagonal network's global minimum, computed as a LASSO by scikit-learn.

    The penalty is ``α = √d λ / n`` (:func:`lasso_penalty`) in scikit-learn's objective
    ``(1/2n)‖y - Xθ‖² + α‖θ‖₁``, without intercept. Two scikit-learn solvers:

    * ``"lars"``: ``sklearn.linear_model.lars_path`` with the LASSO modification, run once down
      to the smallest penalty; the path is piecewise linear in ``α``, so every requested penalty is
      read off exactly by interpolation between breakpoints. Fast when ``n <= d``, where coordinate
      descent crawls at small penalties (near basis pursuit).
    * ``"cd"``: ``sklearn.linear_model.lasso_path``, coordinate descent with warm starts and the
      Gram matrix precomputed when ``n >= d``; fast when ``n > d``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Inputs.
    y : array_like, shape (n,)
        Labels.
    weight_decay : float or array_like, shape (k,)
        Weight decay(s) ``λ > 0`` of the network.
    method : {"auto", "lars", "cd"}, default "auto"
        ``"auto"`` is ``"lars"`` for ``n <= d`` and ``"cd"`` otherwise.
    tol : float, default 1e-8
        Coordinate descent's duality-gap tolerance (scikit-learn's ``tol``), ``> 0``.
    max_iter : int, default 200000
        Maximum coordinate-descent sweeps per penalty (LARS: maximum path steps).

    Returns
    -------
    ndarray, shape (d,) or (k, d)
        ``θ̂`` for each weight decay (in the order given).

    Raises
    ------
    ValueError
        If shapes disagree, an input is not finite, a weight decay is not positive, ``method`` is
        unknown, or coordinate descent did not reach ``tol`` (its ``ConvergenceWarning`` becomes
        this error).

    Examples
    --------
    >>> X, y = sample_data(power_law_teacher(5), 50, noise_var=0.01, rng=np.random.default_rng(0))
    >>> np.round(fit_lasso(X, y, weight_decay=3.0), 2).tolist()
    [0.78, 0.45, 0.19, 0.11, 0.14]
    """
    X = as_array("X", X, ndim=2, min_size=1)
    n, d = X.shape
    y = as_array("y", y, shape=(n,))
    lam = as_array("weight_decay", weight_decay, ndim=(0, 1), min_size=1)
    if np.any(lam <= 0):
        raise ValueError("weight_decay must be positive")
    if method not in ("auto", "lars", "cd"):
        raise ValueError(f"method must be 'auto', 'lars' or 'cd', got {method!r}")
    tol = check_real("tol", tol, minimum=0.0, strict_min=True)
    max_iter = check_int("max_iter", max_iter, minimum=1)
    alphas = np.atleast_1d(lasso_penalty(lam, n=n, d=d))
    if method == "auto":
        method = "lars" if n <= d else "cd"
    if method == "lars":
        path_alphas, _, coefs = lars_path(X, y, alpha_min=float(alphas.min()), method="lasso", max_iter=max_iter)
        # path_alphas decreases; the solution is linear in α between breakpoints and 0 above the first
        out = np.stack([np.interp(-alphas, -path_alphas, c) for c in coefs], axis=1)
        return out[0] if lam.ndim == 0 else out
    order = np.argsort(-alphas)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        try:
            _, coefs, _ = lasso_path(
                X, y, alphas=alphas[order], precompute=bool(n >= d), tol=tol, max_iter=max_iter
            )
        except ConvergenceWarning as exc:
            raise ValueError(f"LASSO did not converge to tol={tol}: {exc}") from None
    out = np.empty((alphas.size, d))
    out[order] = coefs.T
    return out[0] if lam.ndim == 0 else out


def _loss(params, X, y, weight_decay):
    w, a = params
    resid = y - X @ (w * a) / jnp.sqrt(X.shape[1])
    return jnp.sum(resid**2) + weight_decay * (jnp.sum(w**2) + jnp.sum(a**2))


def network_loss(w, a, X, y, *, weight_decay) -> float:
    """Training objective ``L = Σ_μ (y_μ - aᵀ(w ⊙ x_μ)/√d)² + λ(‖w‖² + ‖a‖²)``.

    Parameters
    ----------
    w, a : array_like, shape (d,)
        First-layer diagonal ``w`` and second layer ``a``.
    X : array_like, shape (n, d)
        Inputs.
    y : array_like, shape (n,)
        Labels.
    weight_decay : float
        ``λ >= 0``.

    Returns
    -------
    float
        The loss.

    Raises
    ------
    ValueError
        If shapes disagree, an input is not finite or ``weight_decay < 0``.

    Examples
    --------
    >>> network_loss(np.ones(2), np.ones(2), np.eye(2), np.zeros(2), weight_decay=0.5)
    3.0
    """
    X = as_array("X", X, ndim=2, min_size=1)
    n, d = X.shape
    w = as_array("w", w, shape=(d,))
    a = as_array("a", a, shape=(d,))
    y = as_array("y", y, shape=(n,))
    lam = check_real("weight_decay", weight_decay, minimum=0.0)
    resid = y - X @ (w * a) / np.sqrt(d)
    return float(resid @ resid + lam * (w @ w + a @ a))


class DiagonalNetwork(NamedTuple):
    """A trained diagonal network.

    Attributes
    ----------
    w, a : ndarray, shape (d,)
        First-layer diagonal and second-layer weights.
    theta : ndarray, shape (d,)
        The linear predictor ``a ⊙ w/√d`` it computes.
    losses : ndarray, shape (steps,)
        Training objective at every step (``nan`` after an early stop).
    grad_norm : float or ndarray
        ``‖∇L‖₂`` at the returned weights (stationarity residual).
    """

    w: np.ndarray
    a: np.ndarray
    theta: np.ndarray
    losses: np.ndarray
    grad_norm: float


def train_diagonal_network(
    X, y, *, weight_decay, steps: int = 6000, gtol: float = 1e-10, init_scale: float = 0.1, key
):
    """Train diagonal networks by full-batch L-BFGS (optax) on the loss of :func:`network_loss`.

    A batch of ``b`` independent problems (``X`` of shape ``(b, n, d)``) shares one compiled
    program. Rows of zeros in ``X`` and ``y`` contribute nothing to the loss, so problems with
    different sample sizes can share a batch by zero-padding.

    Parameters
    ----------
    X : array_like, shape (n, d) or (b, n, d)
        Inputs.
    y : array_like, shape (n,) or (b, n)
        Labels.
    weight_decay : float or array_like, shape (b,)
        ``λ > 0`` per problem.
    steps : int, default 6000
        Maximum L-BFGS iterations (each with a zoom line search), inside one ``lax.while_loop``.
    gtol : float, default 1e-10
        Stop early once the gradient norm ``‖∇L‖₂`` falls below ``gtol`` (``> 0``).
    init_scale : float, default 0.1
        Standard deviation of the Gaussian initialisation of ``w`` and ``a`` (``> 0``).
    key : jax.random key
        Keyword-only; draws the initialisations.

    Returns
    -------
    DiagonalNetwork
        Weights, predictor, loss trajectory and final gradient norm; arrays gain a leading batch
        axis ``b`` for batched input (``grad_norm`` is then an array of shape ``(b,)``).

    Raises
    ------
    ValueError
        If shapes disagree, an input is not finite, a hyper-parameter is out of range or ``key`` is
        not a JAX random key.

    Notes
    -----
    The paper trains to the global minimum with L-BFGS in PyTorch (its Appendix F); we use optax's
    L-BFGS in JAX. Precision follows JAX's default dtype (enable ``jax_enable_x64`` for float64).

    Examples
    --------
    >>> X, y = sample_data(power_law_teacher(30), 20, noise_var=0.5, rng=np.random.default_rng(1))
    >>> net = train_diagonal_network(X, y, weight_decay=1.0, steps=3000, key=jax.random.key(0))
    >>> bool(np.allclose(net.theta, fit_lasso(X, y, weight_decay=1.0), atol=1e-5))   # the LASSO solution
    True
    """
    X = as_array("X", X, ndim=(2, 3), min_size=1)
    batched = X.ndim == 3
    Xb = X if batched else X[None]
    b, n, d = Xb.shape
    y = as_array("y", y, shape=(b, n) if batched else (n,))
    yb = y if batched else y[None]
    lam = as_array("weight_decay", weight_decay, ndim=(0, 1), min_size=1)
    if np.any(lam <= 0):
        raise ValueError("weight_decay must be positive")
    if lam.ndim == 1 and (not batched or lam.size != b):
        raise ValueError(f"weight_decay must be a scalar or have shape ({b},) for a batch of {b}, got {lam.shape}")
    lam = np.broadcast_to(lam, (b,))
    steps = check_int("steps", steps, minimum=1)
    gtol = check_real("gtol", gtol, minimum=0.0, strict_min=True)
    init_scale = check_real("init_scale", init_scale, minimum=0.0, strict_min=True)
    _check_key(key)
    kw, ka = jax.random.split(key)
    params = (init_scale * jax.random.normal(kw, (b, d)), init_scale * jax.random.normal(ka, (b, d)))
    results = [
        _lbfgs_jit(jnp.asarray(Xb[i]), jnp.asarray(yb[i]), float(lam[i]), (params[0][i], params[1][i]), steps, gtol)
        for i in range(b)
    ]  # a Python loop over problems: one compilation per shape, and each stops at its own pace
    w, a = (np.stack([np.asarray(r[0][j], dtype=float) for r in results]) for j in range(2))
    losses = np.stack([np.asarray(r[1]) for r in results])
    gnorm = np.array([float(r[2]) for r in results])
    out = DiagonalNetwork(
        w=w, a=a, theta=w * a / np.sqrt(d), losses=np.asarray(losses), grad_norm=np.asarray(gnorm, dtype=float)
    )
    if batched:
        return out
    return DiagonalNetwork(*(np.asarray(x)[0] for x in out[:4]), grad_norm=float(out.grad_norm[0]))


def _lbfgs(X, y, lam, params, steps, gtol):
    def fun(p):
        return _loss(p, X, y, lam)

    opt = optax.lbfgs()
    value_and_grad = optax.value_and_grad_from_state(fun)

    def cond(carry):
        _, _, it, gnorm, _ = carry
        return (it < steps) & (gnorm > gtol)

    def body(carry):
        p, state, it, _, losses = carry
        value, grad = value_and_grad(p, state=state)
        updates, state = opt.update(grad, state, p, value=value, grad=grad, value_fn=fun)
        gnorm = optax.tree_utils.tree_norm(grad)
        return optax.apply_updates(p, updates), state, it + 1, gnorm, losses.at[it].set(value)

    losses = jnp.full((steps,), jnp.nan, dtype=X.dtype)
    init = (params, opt.init(params), 0, jnp.asarray(jnp.inf, dtype=X.dtype), losses)
    params, _, _, _, losses = jax.lax.while_loop(cond, body, init)
    gnorm = optax.tree_utils.tree_norm(jax.grad(fun)(params))
    return params, losses, gnorm


_lbfgs_jit = jax.jit(_lbfgs, static_argnums=(4,))


def zero_solution_weight_decay(X, y) -> float:
    """Smallest weight decay at which the trained network is identically zero: ``‖Xᵀy‖_∞/√d``.

    At ``θ = 0`` the LASSO's optimality condition reads ``2|X_jᵀy| <= 2√d λ`` for every ``j``.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like, shape (n,)

    Returns
    -------
    float
        ``λ_0 = max_j |X_jᵀy| / √d``.

    Raises
    ------
    ValueError
        If shapes disagree or an input is not finite.

    Examples
    --------
    >>> zero_solution_weight_decay(np.eye(4), np.array([1.0, -3.0, 0.0, 2.0]))
    1.5
    """
    X = as_array("X", X, ndim=2, min_size=1)
    y = as_array("y", y, shape=(X.shape[0],))
    return float(np.max(np.abs(X.T @ y)) / np.sqrt(X.shape[1]))


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
