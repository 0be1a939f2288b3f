"""Adaptive kernels: what pretraining does to a wide network's kernel, and what fine-tuning gains.

A two-layer network in the mean-field (µP) parameterisation (:mod:`paperlib.wide_networks.mean_field_networks`)
keeps learning features at infinite width. Its summary statistic is the feature kernel
``Φ(x, x') = N⁻¹ Σ_i φ(v_i·x) φ(v_i·x')``, which after training on a source task depends on the
source inputs *and labels*. Fine-tuning a fresh readout on a target task is kernel regression with
that adaptive kernel (Lauditi, Bordelon and Pehlevan 2026).

For linear ``φ`` and Gaussian inputs everything is explicit: the kernel is ``xᵀΣx'/D`` with
``Σ = WᵀW/N``; the infinite-width dynamics of gradient descent is a recursion for one
``(D+1)×(D+1)`` covariance matrix (:func:`mean_field_linear_gd`); pretraining on infinite source
data adds a rank-one spike of height :func:`spike_strength` along the source teacher; weight decay
collapses the kernel to rank one (:func:`weight_decay_fixed_point`); and the fine-tuning loss has a
closed form (:func:`finetune_loss_spiked`) or, for any ``Σ``, a deterministic equivalent
(:func:`kernel_regression_risk`). :func:`readout_risk` fine-tunes a readout exactly, with
:func:`paperlib.wide_networks.random_features.fit`.

Conventions: inputs ``x ~ N(0, I_D)``; a linear task is ``y = β·x`` and the loss of a predictor
``β̂·x`` is ``‖β̂ − β‖²`` (the test mean squared error on fresh Gaussian inputs). Richness ``γ`` and
weight decay ``λ`` are in the units of :mod:`paperlib.wide_networks.mean_field_networks`, where a unit-variance
linear target needs ``γ`` of order one to learn features.

References
----------
.. [#adaptive-kernels-1] C. Lauditi, B. Bordelon and C. Pehlevan, "Transfer Learning in Infinite Width Feature Learning
   Networks", ICLR 2026, arXiv:2507.04448 (v2: gradient flow, fine-tuning and jointly rich training).
.. [#adaptive-kernels-2] C. Lauditi, B. Bordelon and C. Pehlevan, "Adaptive kernel predictors from feature-learning
   infinite limits of neural networks", arXiv:2502.07998 (code: clarissalauditi/adaptive_kernel_predictors).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import brentq

from . import random_features as rf
from ..core._validation import as_array, check_int, check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "spike_strength",
    "finetune_loss_spiked",
    "kernel_regression_risk",
    "weight_decay_fixed_point",
    "mean_field_linear_gd",
    "readout_risk",
]


def _nonneg(name, value):
    arr = as_array(name, value, ndim=(0, 1))
    if np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0, got {arr[arr < 0].flat[0]}")
    return arr


def _out(x):
    """A 0-d result as a float, an array result as an array."""
    return float(x) if np.ndim(x) == 0 else np.asarray(x)


def spike_strength(gamma):
    """Height ``χ = √(1 + γ²) − 1`` of the kernel spike learned from infinite source data.

    After gradient flow on the population loss of a linear source task ``y = u·x`` (``‖u‖ = 1``),
    the infinite-width linear network's kernel is ``xᵀ(I + χ uuᵀ)x'/D``. Each neuron's overlap
    ``q = w·u`` and readout ``z`` rotate hyperbolically, ``q = q₀ cosh ς + z₀ sinh ς``, so
    ``⟨qz⟩ = sinh 2ς`` and ``⟨q²⟩ = cosh 2ς``; fitting the task needs ``⟨qz⟩ = γ``.

    Parameters
    ----------
    gamma : float or array_like of float, shape (k,)
        Richness ``γ >= 0`` in this module's units (the readout is ``√D/(γN)``).

    Returns
    -------
    float or ndarray, shape (k,)
        ``χ(γ)``; ``≈ γ²/2`` in the lazy limit, ``≈ γ − 1`` in the rich one.

    Raises
    ------
    ValueError
        If ``gamma`` is negative, not finite or not real.

    References
    ----------
    Lauditi, Bordelon and Pehlevan (2026), the linear model with infinite source data (there written
    ``√(1 + γ₁²) − 1``); the hyperbolic-rotation derivation is ours.

    Examples
    --------
    >>> round(spike_strength(1.0), 4)
    0.4142
    >>> spike_strength([0.0, 3.0]).round(3).tolist()
    [0.0, 2.162]
    """
    g = _nonneg("gamma", gamma)
    return _out(np.sqrt(1.0 + g**2) - 1.0)


def finetune_loss_spiked(nu2, alpha, chi):
    """Fine-tuning loss of a ridgeless readout on the kernel ``I + χuuᵀ`` (``D → ∞``, ``P₂ = ν₂D``).

    .. math::

        \\mathcal L(\\nu_2, \\alpha, \\chi) = (1-\\nu_2)\\Big[1-\\alpha^2+\\frac{\\alpha^2}{(1+\\chi\\nu_2)^2}\\Big]
        = (1-\\nu_2)\\Big[1-\\frac{2\\chi\\alpha^2\\nu_2}{1+\\chi\\nu_2}+\\frac{\\chi^2\\alpha^2\\nu_2^2}{(1+\\chi\\nu_2)^2}\\Big],

    for a target ``y = v·x`` with ``‖v‖ = 1`` and alignment ``α = u·v``. ``χ = 0`` (lazy, or no
    pretraining) gives ``1 − ν₂``, the minimum-norm regression from scratch; ``α = 0`` gives the same.

    Parameters
    ----------
    nu2 : float or array_like, shape (k,)
        Target samples per dimension, ``0 <= ν₂ <= 1``.
    alpha : float or array_like, shape (k,)
        Task alignment ``α``, ``-1 <= α <= 1``.
    chi : float or array_like, shape (k,)
        Spike height ``χ >= 0`` (:func:`spike_strength`). Arguments broadcast.

    Returns
    -------
    float or ndarray
        The test mean squared error (the target has unit variance).

    Raises
    ------
    ValueError
        If an argument is out of range, not finite or not real, or the shapes do not broadcast.

    References
    ----------
    Lauditi, Bordelon and Pehlevan (2026), the linear model with infinite source data (second form);
    the first form and its derivation are ours.

    Examples
    --------
    >>> round(finetune_loss_spiked(0.5, 0.9, 4.0), 4)
    0.14
    >>> finetune_loss_spiked(0.5, [0.0, 1.0], 0.0).tolist()
    [0.5, 0.5]
    """
    nu2 = _nonneg("nu2", nu2)
    alpha = as_array("alpha", alpha, ndim=(0, 1))
    chi = _nonneg("chi", chi)
    if np.any(nu2 > 1):
        raise ValueError(f"nu2 must be <= 1, got {nu2[nu2 > 1].flat[0]}")
    if np.any(np.abs(alpha) > 1):
        raise ValueError(f"alpha must lie in [-1, 1], got {alpha[np.abs(alpha) > 1].flat[0]}")
    try:
        nu2, alpha, chi = np.broadcast_arrays(nu2, alpha, chi)
    except ValueError:
        raise ValueError(f"nu2, alpha and chi must broadcast, got shapes {nu2.shape}, {alpha.shape}, {chi.shape}") from None
    return _out((1 - nu2) * (1 - alpha**2 + alpha**2 / (1 + chi * nu2) ** 2))


def _eig(name, Sigma):
    Sigma = as_array(name, Sigma, ndim=2)
    if Sigma.shape[0] != Sigma.shape[1]:
        raise ValueError(f"{name} must be square, got shape {Sigma.shape}")
    if not np.allclose(Sigma, Sigma.T, atol=1e-10 * (1 + np.abs(Sigma).max())):
        raise ValueError(f"{name} must be symmetric")
    lam, E = np.linalg.eigh(Sigma)
    if lam[0] < -1e-8 * max(lam[-1], 1e-300):
        raise ValueError(f"{name} must be positive semi-definite, smallest eigenvalue {lam[0]:.3g}")
    return np.clip(lam, 0.0, None), E


def _target(name, v, D):
    v = as_array(name, v, ndim=(1, 2))
    if v.shape[0] != D:
        raise ValueError(f"{name} must have D = {D} rows, got shape {v.shape}")
    return v


def kernel_regression_risk(Sigma, v, n, *, ridge=0.0):
    """Deterministic equivalent of the test loss of kernel (ridge) regression with ``k(x,x') = xᵀΣx'``.

    ``n`` inputs ``x ~ N(0, I_D)``, labels ``y = v·x`` (no noise), predictor
    ``β̂ = ΣXᵀ(XΣXᵀ + ρI)⁻¹Xv`` with ``ρ = ridge · tr(Σ)`` (``ridge`` is relative to the mean diagonal
    of the kernel matrix). With eigenpairs ``(λ_i, e_i)`` of ``Σ`` and ``c_i = (e_i·v)²``,

    .. math::

        \\kappa = \\frac{\\rho}{n} + \\frac{\\kappa}{n}\\sum_i\\frac{\\lambda_i}{\\lambda_i+\\kappa},\\qquad
        \\mathcal L \\approx \\frac{\\kappa^2\\sum_i c_i/(\\lambda_i+\\kappa)^2}
        {1-\\frac1n\\sum_i\\lambda_i^2/(\\lambda_i+\\kappa)^2}.

    Parameters
    ----------
    Sigma : array_like, shape (D, D)
        Symmetric positive semi-definite kernel matrix of the features (the adapted kernel).
    v : array_like, shape (D,) or (D, k)
        Target teacher(s), one per column.
    n : int
        Number of target samples, ``n >= 1``.
    ridge : float, default 0.0
        Relative ridge ``>= 0``. With ``ridge = 0`` and ``n`` at least the rank ``r`` of ``Σ``, the
        ridgeless limit ``Σ_{λ_i=0} c_i / (1 − r/n)`` is returned (``inf`` when ``r = n``).

    Returns
    -------
    float or ndarray, shape (k,)
        The predicted test mean squared error ``‖β̂ − v‖²``.

    Raises
    ------
    ValueError
        If ``Sigma`` is not square, symmetric and positive semi-definite, the shapes disagree, ``n`` is
        not a positive integer or ``ridge`` is negative.

    Notes
    -----
    This is the standard high-dimensional equivalent of ridge regression (exact as ``n, D → ∞`` at
    fixed ratio), applied to the features ``Σ^{1/2}x``; for ``Σ = I`` it is exactly ``1 − n/D``.
    The paper computes the same loss from its kernel theory; this closed form of it is ours.

    References
    ----------
    T. Hastie, A. Montanari, S. Rosset and R. Tibshirani, "Surprises in high-dimensional ridgeless
    least squares interpolation", Ann. Statist. 2022.

    Examples
    --------
    >>> round(kernel_regression_risk(np.eye(100), np.eye(100)[0], 30), 6)
    0.7
    """
    lam, E = _eig("Sigma", Sigma)
    D = lam.size
    v = _target("v", v, D)
    n = check_int("n", n, minimum=1)
    ridge = check_real("ridge", ridge, minimum=0.0)
    c = (E.T @ v) ** 2
    if c.ndim == 1:
        c = c[:, None]
    reg = ridge * lam.sum() / n
    pos = lam > 1e-12 * max(lam.max(), 1e-300)
    rank = int(pos.sum())
    if reg == 0.0 and rank <= n:
        den = 1.0 - rank / n
        risk = np.full(c.shape[1], np.inf) if den <= 0 else c[~pos].sum(0) / den
        return _out(risk if v.ndim == 2 else risk[0])

    def g(logk):
        k = np.exp(logk)
        return 1.0 - reg / k - np.sum(lam / (lam + k)) / n

    kappa = np.exp(brentq(g, np.log(1e-300) / 2, np.log(1e12 * (lam.max() + reg + 1.0)), xtol=1e-14))
    num = kappa**2 * np.sum(c / (lam[:, None] + kappa) ** 2, axis=0)
    den = 1.0 - np.sum(lam**2 / (lam + kappa) ** 2) / n
    risk = num / den
    return _out(risk if v.ndim == 2 else risk[0])


def _moments(A, b):
    A = as_array("A", A, ndim=2)
    if A.shape[0] != A.shape[1] or not np.allclose(A, A.T, atol=1e-10 * (1 + np.abs(A).max())):
        raise ValueError(f"A must be a symmetric square matrix, got shape {A.shape}")
    b = as_array("b", b, ndim=1)
    if b.shape[0] != A.shape[0]:
        raise ValueError(f"b must have D = {A.shape[0]} entries, got shape {b.shape}")
    return A, b


def weight_decay_fixed_point(A, b, gamma, weight_decay):
    """End point of infinite-width GD with weight decay on a linear task: a rank-one kernel.

    With weight decay ``λ > 0`` every direction of the first layer that the gradient does not feed
    decays, neurons become balanced (``w_i = a_i β̂``, ``z_i = a_i``), and the end point solves

    .. math::

        \\beta^* = \\arg\\min_\\beta\\; \\tfrac12\\beta^\\top A\\beta - b^\\top\\beta + \\frac{\\lambda}{\\gamma}\\|\\beta\\|,
        \\qquad \\Sigma^* = \\gamma\\,\\|\\beta^*\\|\\,\\hat\\beta\\hat\\beta^\\top ,

    so ``β* = (A + μI)⁻¹b`` with ``μ = λ/(γ‖β*‖)``, found by a scalar root search (``β* = 0`` when
    ``‖b‖ <= λ/γ``).

    Parameters
    ----------
    A : array_like, shape (D, D)
        Input second moment of the task, ``XᵀX/P`` (``I`` for the population of ``N(0, I)`` inputs).
    b : array_like, shape (D,)
        Input-label moment ``Xᵀy/P`` (``u`` for the population of ``y = u·x``).
    gamma : float
        Richness ``γ > 0``.
    weight_decay : float
        ``λ > 0``, in the units of :func:`paperlib.wide_networks.mean_field_networks.train_linear_network`.

    Returns
    -------
    beta : ndarray, shape (D,)
        The learned linear map ``β*``.
    Sigma : ndarray, shape (D, D)
        The rank-one kernel ``Σ* = WᵀW/N``.

    Raises
    ------
    ValueError
        If the shapes disagree, ``A`` is not symmetric positive semi-definite, or a parameter is out of range.

    Notes
    -----
    Ours: the stationarity conditions of the per-neuron flow ``dw = γzr − λw``, ``dz = γw·r − λz``
    (``r = b − Aβ``) force ``γ‖r‖ = λ`` and ``r ∥ β`` on every surviving neuron.

    Examples
    --------
    >>> beta, S = weight_decay_fixed_point(np.eye(3), [1.0, 0.0, 0.0], 4.0, 0.4)
    >>> beta.round(4).tolist(), round(float(np.trace(S)), 4)
    ([0.9, 0.0, 0.0], 3.6)
    """
    A, b = _moments(A, b)
    _eig("A", A)
    gamma = check_real("gamma", gamma, minimum=0.0, strict_min=True)
    lam = check_real("weight_decay", weight_decay, minimum=0.0, strict_min=True)
    D = b.size
    if np.linalg.norm(b) <= lam / gamma:
        return np.zeros(D), np.zeros((D, D))
    I = np.eye(D)

    def beta_of(s):
        return np.linalg.solve(A + lam / (gamma * s) * I, b)

    # s = ‖β(s)‖ has one root: ‖β(s)‖ increases from 0 to ‖A⁺b‖-ish while s increases
    hi = 1.0
    while np.linalg.norm(beta_of(hi)) > hi:
        hi *= 2.0
    s = brentq(lambda s: np.linalg.norm(beta_of(s)) - s, 1e-12 * hi, hi, xtol=1e-15, rtol=1e-13)
    beta = beta_of(s)
    bhat = beta / np.linalg.norm(beta)
    return beta, gamma * np.linalg.norm(beta) * np.outer(bhat, bhat)


@partial(jax.jit, static_argnames=("steps",))
def _mf_recursion(C0, A, b, gamma, lr, wd, *, steps):
    D = A.shape[0]
    m0 = C0[:D, D]

    def step(C, _):
        beta = (C[:D, D] - m0) / gamma
        r = b - A @ beta
        rt = jnp.concatenate([r, jnp.zeros(1)])
        eC = C[D]                      # eᵀC (C symmetric)
        rC = rt @ C                    # r̃ᵀC
        a, s = 1.0 - lr * wd, lr * gamma
        BC = s * (jnp.outer(rt, eC) + jnp.zeros_like(C).at[D].set(rC))        # B C with B = s(r̃eᵀ + er̃ᵀ)
        cee, cer, crr = C[D, D], rC[D], rC @ rt
        BCB = s**2 * (cee * jnp.outer(rt, rt)
                      + cer * (jnp.zeros_like(C).at[:, D].set(rt) + jnp.zeros_like(C).at[D].set(rt))
                      + jnp.zeros_like(C).at[D, D].set(crr))
        C = a * a * C + a * (BC + BC.T) + BCB
        return C, beta

    C, betas = jax.lax.scan(step, C0, None, length=steps)
    beta = (C[:D, D] - m0) / gamma
    return C, jnp.concatenate([betas, beta[None]])


def mean_field_linear_gd(A, b, gamma, *, lr, steps, weight_decay=0.0, C0=None):
    """Infinite-width gradient descent of the two-layer linear network: the covariance recursion.

    Each neuron ``ξ_i = (w_i, z_i) ∈ R^{D+1}`` moves by ``ξ ← [(1 − ηλ)I + ηγ(r̃eᵀ + er̃ᵀ)]ξ`` with the
    common residual ``r = b − Aβ`` (``r̃ = (r, 0)``, ``e`` the readout coordinate), and
    ``β = (⟨zw⟩ − ⟨zw⟩₀)/γ``. As ``N → ∞`` the neurons stay independent and Gaussian, so the
    covariance ``C = ⟨ξξᵀ⟩`` follows ``C ← G C Gᵀ`` exactly: this is the mean-field (DMFT) theory of
    GD with step ``η`` for linear activations, and ``η → 0`` is gradient flow.

    Parameters
    ----------
    A : array_like, shape (D, D)
        Input second moment of the task being trained (``I`` for the population).
    b : array_like, shape (D,)
        Input-label moment (``u`` for the population of ``y = u·x``).
    gamma : float
        Richness ``γ > 0``.
    lr : float
        Step ``η > 0`` (the same as in :func:`paperlib.wide_networks.mean_field_networks.train_linear_network`).
    steps : int
        Number of steps, ``>= 1``.
    weight_decay : float, default 0.0
        ``λ >= 0``.
    C0 : array_like, shape (D+1, D+1), optional
        Initial covariance; default ``I`` (random init). After pretraining with a fresh readout, pass
        ``C0`` with ``Σ`` in the top-left block, ``1`` in the corner and zeros elsewhere.

    Returns
    -------
    C : ndarray, shape (D+1, D+1)
        Final covariance; ``C[:D, :D]`` is the adapted kernel matrix ``Σ`` (``Φ(x, x') = xᵀΣx'/D``).
    betas : ndarray, shape (steps+1, D)
        The network's linear map ``β`` before every step and at the end.

    Raises
    ------
    ValueError
        If the shapes disagree or a parameter is out of range.

    References
    ----------
    Lauditi, Bordelon and Pehlevan (2026), the DMFT of two-layer networks (their field equations,
    specialised to linear activations and Gaussian data; the covariance form is ours).

    Examples
    --------
    >>> C, betas = mean_field_linear_gd(np.eye(2), [1.0, 0.0], 1.0, lr=0.005, steps=3000)
    >>> round(float(C[0, 0] - 1), 2), betas[-1].round(3).tolist()   # χ = √2 − 1 ≈ 0.41
    (0.41, [1.0, 0.0])
    """
    A, b = _moments(A, b)
    gamma = check_real("gamma", gamma, minimum=0.0, strict_min=True)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=1)
    wd = check_real("weight_decay", weight_decay, minimum=0.0)
    D = b.size
    if C0 is None:
        C0 = np.eye(D + 1)
    else:
        C0 = as_array("C0", C0, shape=(D + 1, D + 1))
        if not np.allclose(C0, C0.T):
            raise ValueError("C0 must be symmetric")
    with jax.enable_x64(True):  # float64 whatever the global setting: the spike can be 1e9 x the bulk
        C, betas = _mf_recursion(jnp.asarray(C0, jnp.float64), jnp.asarray(A, jnp.float64),
                                 jnp.asarray(b, jnp.float64), gamma, lr, wd, steps=steps)
        return np.asarray(C, dtype=float), np.asarray(betas, dtype=float)


def readout_risk(Sigma, v, X2, *, ridge=0.0):
    """Fine-tune a fresh readout on ``n`` target samples and return its exact test loss, per draw.

    Features ``Σ^{1/2}x`` (the kernel ``xᵀΣx'``) are fitted to ``y = v·x`` on each draw ``X2[r]`` with
    :func:`paperlib.wide_networks.random_features.fit` (minimum norm for ``ridge = 0``, else ridge
    ``ridge · tr(ΦΦᵀ)/n``); the predictor is ``β̂ = Σ^{1/2}θ`` and its test loss on fresh Gaussian
    inputs is ``‖β̂ − v‖²``. For a network this equals the readout fitted to its ``N`` features
    ``Wx/√D`` with ``Σ = WᵀW/N``: both are kernel regression with the same kernel.

    Parameters
    ----------
    Sigma : array_like, shape (D, D)
        Symmetric positive semi-definite kernel matrix.
    v : array_like, shape (D,) or (D, k)
        Target teacher(s).
    X2 : array_like, shape (R, n, D)
        ``R`` independent draws of ``n`` target inputs.
    ridge : float, default 0.0
        Relative ridge ``>= 0``.

    Returns
    -------
    ndarray, shape (R,) or (R, k)
        Test loss of each draw (and target).

    Raises
    ------
    ValueError
        If the shapes disagree, ``Sigma`` is not symmetric positive semi-definite, or ``ridge < 0``.

    Examples
    --------
    >>> X2 = np.random.default_rng(0).standard_normal((2, 3, 4))
    >>> readout_risk(np.eye(4), np.eye(4)[0], X2).round(3).tolist()
    [0.328, 0.115]
    """
    lam, E = _eig("Sigma", Sigma)
    D = lam.size
    v = _target("v", v, D)
    X2 = as_array("X2", X2, ndim=3)
    if X2.shape[2] != D:
        raise ValueError(f"X2 must have D = {D} columns, got shape {X2.shape}")
    ridge = check_real("ridge", ridge, minimum=0.0)
    root = (E * np.sqrt(lam)) @ E.T
    out = []
    for X in X2:
        Phi, Y = X @ root, X @ v
        theta = rf.fit(Phi, Y, ridge=ridge * np.einsum("ij,ij->", Phi, Phi) / X.shape[0])
        err = root @ theta - v
        out.append(np.sum(err**2, axis=0))
    return np.asarray(out)
