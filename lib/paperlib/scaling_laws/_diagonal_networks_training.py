"""The diagonal network's global minimum, computed as a LASSO and by training the network (private).

This module holds the training side of :mod:`paperlib.scaling_laws.diagonal_networks`: the LASSO
solved by scikit-learn (LARS or coordinate descent), the network's training objective, full-batch
L-BFGS training of the network itself (optax, in JAX) and the weight decay above which the trained
network is identically zero. Every public name defined here is re-exported by
:mod:`paperlib.scaling_laws.diagonal_networks`; import it from there.
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

from ..core._validation import check_int
from .state_evolution import _real as as_array  # as_array that also rejects booleans
from ._diagonal_networks_theory import check_real, lasso_penalty
from ._diagonal_networks_theory import power_law_teacher, sample_data  # noqa: F401  (docstring examples)

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


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
