r"""Lipschitz constants measured on grids, and the error floor they impose on explicit models.

A map :math:`g` is :math:`L`-Lipschitz when :math:`|g(x)-g(x')|\le L|x-x'|`. If a target :math:`F` takes
values :math:`F(x_i)` and :math:`F(x_j)` that differ by more than :math:`L|x_i-x_j|`, any
:math:`L`-Lipschitz :math:`g` must miss one of them by at least half the excess, so

.. math:: \sup_i |g(x_i)-F(x_i)| \;\ge\; \mathrm{floor}(L)
          = \tfrac12 \max_{i,j}\big(|F(x_i)-F(x_j)| - L|x_i-x_j|\big)_+ .

The bound is attained: the midpoint of the largest :math:`L`-Lipschitz minorant and the smallest
:math:`L`-Lipschitz majorant of the data (McShane and Whitney extensions) is :math:`L`-Lipschitz and
misses by exactly :math:`\mathrm{floor}(L)`. On a line both envelopes are running minima and maxima,
so everything here costs :math:`O(M)`. The module also holds a small explicit network whose Lipschitz
constant is capped by construction, trained to face that floor.

These tools make the claim of Liu et al. (2026) falsifiable: an explicit model with a Lipschitz
budget :math:`L` cannot beat :math:`\mathrm{floor}(L)`, whereas an implicit model whose operator has
the same budget can, by iterating.

References
----------
J. Liu, L. Ding, S. Osher, W. Yin, "Implicit Models: Expressive Power Scales with Test-Time
Compute", ICLR 2026, arXiv:2510.03638.
E. J. McShane, "Extension of range of functions", Bull. AMS 40 (1934) 837-842.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_key, check_real, is_traced
from ..models.training import TrainResult, train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "grid_lipschitz",
    "lipschitz_floor",
    "best_lipschitz_fit",
    "reciprocal_floor",
    "perturbation_lipschitz",
    "capped_mlp_init",
    "capped_mlp",
    "fit_capped_mlp",
]


def _grid(name: str, x) -> np.ndarray:
    x = as_array(name, x, ndim=1, min_size=2)
    if not np.all(np.diff(x) > 0):
        raise ValueError(f"{name} must be strictly increasing")
    return x


def grid_lipschitz(x, y) -> np.ndarray:
    r"""Empirical Lipschitz constant of sampled curves: the largest slope between neighbours.

    .. math:: \hat L = \max_i \frac{|y_{i+1}-y_i|}{x_{i+1}-x_i}.

    On a strictly increasing 1-D grid this is the exact Lipschitz constant of the piecewise-linear
    interpolant of the samples, and a lower bound on that of any function through them.

    Parameters
    ----------
    x : array_like, shape (M,)
        Strictly increasing grid, ``M >= 2``.
    y : array_like, shape (..., M)
        One or several curves sampled on ``x`` (leading axes are batch axes, e.g. iterations).

    Returns
    -------
    numpy.ndarray, shape (...)
        The empirical Lipschitz constant of each curve.

    Raises
    ------
    ValueError
        If ``x`` is not strictly increasing, or ``y`` is not finite or its last axis is not ``M``.

    Notes
    -----
    The paper's case studies use finite-perturbation ratios averaged or maximised over inputs; on a
    1-D input the sup over neighbouring grid points is the natural analogue.

    Examples
    --------
    >>> x = np.linspace(0.0, 1.0, 11)
    >>> round(float(grid_lipschitz(x, 3.0 * x ** 2)), 6)
    5.7
    """
    x = _grid("x", x)
    y = as_array("y", y, ndim=range(1, 8))
    if y.shape[-1] != x.size:
        raise ValueError(f"y must have last axis {x.size} (the grid), got shape {y.shape}")
    return np.max(np.abs(np.diff(y, axis=-1)) / np.diff(x), axis=-1)


def _envelopes(x: np.ndarray, f: np.ndarray, lip: float):
    """Largest L-Lipschitz minorant and smallest L-Lipschitz majorant of (x_i, f_i), in O(M)."""
    # lower(x_i) = min_j f_j + L|x_i - x_j|: split j <= i and j >= i, each a running minimum
    left = lip * x + np.minimum.accumulate(f - lip * x)
    right = -lip * x + np.minimum.accumulate((f + lip * x)[::-1])[::-1]
    lower = np.minimum(left, right)
    left = -lip * x + np.maximum.accumulate(f + lip * x)
    right = lip * x + np.maximum.accumulate((f - lip * x)[::-1])[::-1]
    upper = np.maximum(left, right)
    return lower, upper


def best_lipschitz_fit(x, f, lip: float):
    r"""The best sup-norm approximation of samples by an ``lip``-Lipschitz function, and its error.

    The fit is :math:`g=\tfrac12(\ell+u)` with :math:`\ell(x)=\min_j f_j+L|x-x_j|` and
    :math:`u(x)=\max_j f_j-L|x-x_j|`; its error :math:`\max_i|g(x_i)-f_i|` equals
    :func:`lipschitz_floor`, which no ``lip``-Lipschitz function can beat.

    Parameters
    ----------
    x : array_like, shape (M,)
        Strictly increasing sample locations.
    f : array_like, shape (M,)
        Target values.
    lip : float
        Lipschitz budget ``L > 0``.

    Returns
    -------
    fit : numpy.ndarray, shape (M,)
        The optimal fit at ``x``.
    error : float
        Its sup error, equal to the floor.

    Raises
    ------
    ValueError
        If ``x`` is not strictly increasing, ``f`` has the wrong shape or is not finite, or ``lip``
        is not a positive real.

    Examples
    --------
    >>> x = np.array([0.0, 1.0, 2.0])
    >>> fit, err = best_lipschitz_fit(x, np.array([0.0, 4.0, 0.0]), 1.0)
    >>> fit.round(2).tolist(), round(err, 2)
    ([1.5, 2.5, 1.5], 1.5)
    """
    x = _grid("x", x)
    f = as_array("f", f, shape=(x.size,))
    lip = check_real("lip", lip, minimum=0.0, strict_min=True)
    lower, upper = _envelopes(x, f, lip)
    fit = 0.5 * (lower + upper)
    return fit, float(np.max(np.abs(fit - f)))


def lipschitz_floor(x, f, lip: float) -> float:
    r"""Smallest sup error on the samples that any ``lip``-Lipschitz function can reach.

    .. math:: \mathrm{floor}(L)=\tfrac12\max_{i,j}\big(|f_i-f_j|-L|x_i-x_j|\big)_+ .

    Parameters
    ----------
    x : array_like, shape (M,)
        Strictly increasing sample locations.
    f : array_like, shape (M,)
        Target values.
    lip : float
        Lipschitz budget ``L > 0``.

    Returns
    -------
    float
        The floor; zero when the samples themselves are ``lip``-Lipschitz.

    Raises
    ------
    ValueError
        As :func:`best_lipschitz_fit`.

    Examples
    --------
    >>> x = np.linspace(0.1, 1.0, 901)
    >>> round(lipschitz_floor(x, 1 / x, 10.0), 3)
    2.338
    """
    return best_lipschitz_fit(x, f, lip)[1]


def reciprocal_floor(delta: float, lip: float) -> float:
    r"""Closed-form floor for :math:`F(x)=1/x` on :math:`[\delta,1]` (our derivation).

    The worst pair has :math:`x=\delta` and :math:`x'=\min(1,\max(\delta,L^{-1/2}))`, so for
    :math:`1\le L\le\delta^{-2}`

    .. math:: \mathrm{floor}(L)=\frac{(1-\delta\sqrt L)^2}{2\delta},

    and the floor vanishes once :math:`L\ge\delta^{-2}=\mathrm{Lip}(F)`.

    Parameters
    ----------
    delta : float
        Left end of the domain, ``0 < delta < 1``.
    lip : float
        Lipschitz budget ``L > 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1) or ``lip`` is not positive.

    Examples
    --------
    >>> round(reciprocal_floor(0.05, 10.0), 3)
    7.088
    """
    delta = check_real("delta", delta, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    lip = check_real("lip", lip, minimum=0.0, strict_min=True)
    xp = min(1.0, max(delta, lip ** -0.5))
    return max(0.0, 0.5 * (1.0 / delta - 1.0 / xp - lip * (xp - delta)))


def perturbation_lipschitz(fn: Callable, x, directions, *, scale: float = 1e-2) -> np.ndarray:
    r"""Largest finite-perturbation ratio of a map, over inputs and directions.

    .. math:: \hat L=\max_{b,k}\frac{\|f(x_b+s\,d_k)-f(x_b)\|}{\|s\,d_k\|},

    the imaging metric of the authors' public code (there the directions are singular vectors of the
    blur at several frequencies and the maximum runs over test images).

    Parameters
    ----------
    fn : callable
        Maps inputs of shape ``(B, n)`` to outputs of shape ``(..., B, m)``; leading axes (e.g. the
        iteration index of a trajectory) are kept.
    x : array_like, shape (B, n)
        Base inputs.
    directions : array_like, shape (K, n)
        Perturbation directions (need not be normalised).
    scale : float, default 1e-2
        Step ``s`` along each unit direction.

    Returns
    -------
    numpy.ndarray, shape (...)
        The ratio, maximised over the ``B`` inputs and ``K`` directions.

    Raises
    ------
    ValueError
        If ``fn`` is not callable, an array has the wrong rank or a zero direction, or ``scale`` is
        not positive.

    Examples
    --------
    >>> f = lambda v: 3.0 * v
    >>> round(float(perturbation_lipschitz(f, np.ones((2, 3)), np.eye(3))), 6)
    3.0
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {type(fn).__name__}")
    x = as_array("x", x, ndim=2)
    directions = as_array("directions", directions, ndim=2)
    if directions.shape[1] != x.shape[1]:
        raise ValueError(f"directions must have shape (K, {x.shape[1]}), got {directions.shape}")
    scale = check_real("scale", scale, minimum=0.0, strict_min=True)
    norms = np.linalg.norm(directions, axis=1)
    if np.any(norms == 0):
        raise ValueError("directions must not contain a zero vector")
    base = np.asarray(fn(x))
    best = None
    for d in directions / norms[:, None] * scale:
        diff = np.linalg.norm(np.asarray(fn(x + d)) - base, axis=-1) / scale
        ratio = diff.max(axis=-1)
        best = ratio if best is None else np.maximum(best, ratio)
    return best


def capped_mlp_init(key, width: int = 32) -> dict:
    r"""Initial parameters of :func:`capped_mlp`.

    Parameters
    ----------
    key : jax.random key
    width : int, default 32

    Returns
    -------
    dict of jax.Array
        ``w_in, b, w_out`` of shape ``(width,)`` and scalar ``b_out``.

    Raises
    ------
    ValueError
        If ``width`` is not a positive integer.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> sorted(capped_mlp_init(jax.random.key(0), 4))
    ['b', 'b_out', 'w_in', 'w_out']
    """
    key = check_key("key", key)
    width = check_int("width", width, minimum=1)
    w_in, b, w_out = (s * jax.random.normal(k, (width,))
                      for k, s in zip(jax.random.split(key, 3), (5.0, 2.0, 1.0 / np.sqrt(width))))
    return {"w_in": w_in, "b": b, "w_out": w_out, "b_out": jnp.zeros(())}


def capped_mlp(params: dict, x, *, lip: float):
    r"""An explicit one-hidden-layer network :math:`g(x)=\sum_iw^{\rm out}_i\tanh(c\,w^{\rm in}_ix+b_i)+b^{\rm out}` with :math:`\mathrm{Lip}(g)\le` ``lip``.

    The factor :math:`c=\min(1,L/\sum_i|w^{\rm out}_iw^{\rm in}_i|)` enforces the budget for every
    parameter value, so no training can take the network below :func:`lipschitz_floor`.

    Parameters
    ----------
    params : dict
        From :func:`capped_mlp_init`.
    x : array_like
        Scalar inputs, any shape.
    lip : float
        Lipschitz budget ``L > 0``.

    Returns
    -------
    jax.Array, shaped like ``x``

    Raises
    ------
    ValueError
        If ``lip`` is not positive or ``x`` is not a finite real array.

    Examples
    --------
    >>> p = capped_mlp_init(jax.random.key(0), 4)
    >>> capped_mlp(p, jnp.linspace(0.0, 1.0, 5), lip=3.0).shape
    (5,)
    """
    lip = check_real("lip", lip, minimum=0.0, strict_min=True)
    x = x if is_traced(x) else jnp.asarray(as_array("x", x, ndim=range(0, 8)))
    c = jnp.minimum(1.0, lip / jnp.sum(jnp.abs(params["w_out"] * params["w_in"])))
    return jnp.tanh(x[..., None] * (c * params["w_in"]) + params["b"]) @ params["w_out"] + params["b_out"]

def fit_capped_mlp(x, target, *, key, lip: float, width: int = 32, steps: int = 2000,
                   learning_rate: float = 1e-2, scale: float = 1.0) -> TrainResult:
    r"""Train :func:`capped_mlp` on :math:`\frac1M\sum_i((g(x_i)-F_i)/s)^2` (Adam, cosine decay, full batch).

    Parameters
    ----------
    x, target : array_like, shape (M,)
        Training inputs and targets.
    key : jax.random key
        Keyword-only; initialises the network.
    lip : float
        Lipschitz budget, positive.
    width : int, default 32
    steps : int, default 2000
    learning_rate : float, default 1e-2
    scale : float, default 1.0
        Loss scale :math:`s` (the same as the implicit model's, for a like-for-like comparison).

    Returns
    -------
    paperlib.models.training.TrainResult

    Raises
    ------
    ValueError
        On wrong shapes, non-finite values, or non-positive sizes and rates.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x = jnp.linspace(0.0, 1.0, 16)
    >>> res = fit_capped_mlp(x, 2 * x, key=jax.random.key(0), lip=4.0, steps=300)
    >>> bool(res.losses[-1] < 1e-3)
    True
    """
    key = check_key("key", key)
    x = jnp.asarray(as_array("x", x, ndim=1))
    target = jnp.asarray(as_array("target", target, shape=x.shape))
    lip = check_real("lip", lip, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    scale = check_real("scale", scale, minimum=0.0, strict_min=True)

    def loss(params, _key):
        return jnp.mean(((capped_mlp(params, x, lip=lip) - target) / scale) ** 2)

    optimizer = optax.adam(optax.cosine_decay_schedule(learning_rate, steps))
    return jax.jit(lambda p, k: train(loss, p, optimizer, steps=steps, key=k))(capped_mlp_init(key, width), key)


_PROBE_EXEMPTIONS = {
    "grid_lipschitz": {"y": {"array_rank": "leading axes of y are batch axes (e.g. iterations)"}},
    "capped_mlp": {"x": {"array_rank": "elementwise network: any shape is valid"}},
}
