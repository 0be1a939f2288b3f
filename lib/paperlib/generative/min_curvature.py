"""Proposition 1 of Chen (ICLR 2026): score-matching loss against non-smoothness, and the smoothest score.

Two training points ``+-1``. :func:`loss_limit` and :func:`two_point_loss` give the loss of the
smoothed score (:mod:`paperlib.generative.score_smoothing`) in closed form, :func:`score_loss_1d` computes any
score's loss by quadrature, and :func:`total_curvature` its non-smoothness on a grid.

For a two-layer ReLU network ``f(x) = sum_i a_i relu(w_i x + b_i) + c`` trained with weight decay
``lambda/2 (||a||^2 + ||w||^2)``, the cost of representing a 1-D function is its **non-smoothness**
``R[f] = int |f''(x)| dx`` (Savarese et al., 2019). Proposition 1 of :cite:`chen2026scoresmoothing`
compares the smoothed piecewise-linear score with the smoothest function that fits the empirical
score to a given loss,

``r*_{t, eps} = inf { R[f] : L_t[f] <= eps },    L_t[f] = t E_{x ~ p_t} (f(x) - grad log p_t(x))^2``,

for two training points ``+-1``. This module computes that infimum **exactly** (up to a grid of
knots): a function with kinks at the knots ``k_j`` is ``f = beta x + sum_j theta_j relu(x - k_j)``
and ``R[f]`` is ``sum_j |theta_j|``, so the problem is a weighted lasso whose whole solution path
(every ``eps`` at once) scikit-learn's LARS computes (``sklearn.linear_model.lars_path``).
"""

from __future__ import annotations

import warnings
from typing import Callable, NamedTuple

import numpy as np
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path

from ..core._validation import as_array, check_int, check_real
from .diffusion import empirical_score

__all__ = [
    "loss_limit",
    "two_point_loss",
    "score_loss_1d",
    "total_curvature",
    "SmoothestScore",
    "smoothest_score",
]

_TWO = np.array([[-1.0], [1.0]])


def loss_limit(kappa):
    """``F(kappa) = lim_{t -> 0} L_t[s_hat_{t, kappa sqrt t}] = (1 + kappa^2) Phi(-kappa) - kappa phi(kappa)``.

    Our closed form of the limit that Proposition 1 of :cite:`chen2026scoresmoothing` defines: with
    ``x = 1 + sqrt(t) z``, the smoothed score differs from the empirical one by ``(kappa + z)/sqrt(t)``
    on the ramp ``z < -kappa`` and by nothing elsewhere, so ``F = E[(kappa + Z)^2 ; Z < -kappa]``.

    Parameters
    ----------
    kappa : float, ``>= 0``

    Returns
    -------
    float in (0, 1/2]

    Raises
    ------
    ValueError
        If ``kappa`` is negative or not a finite real number.

    Examples
    --------
    >>> round(loss_limit(0.0), 4), round(loss_limit(1.0), 4)
    (0.5, 0.0753)
    """
    kappa = check_real("kappa", kappa, minimum=0.0)
    return float((1 + kappa**2) * norm.cdf(-kappa) - kappa * norm.pdf(kappa))


def two_point_loss(t, *, kappa=None, delta=None):
    """Exact ``L_t[s_hat_{t, delta}]`` for two points ``+-1``: ``F(delta / sqrt t) / (1 - delta)^2``.

    On the ramp ``sqrt(t) (s_hat - PL-ESF) = (kappa + z) / (1 - delta)`` exactly, with
    ``kappa = delta / sqrt t``; the rest differs from the empirical score by ``O(e^{-1/(2t)})``
    (our derivation, used to make Proposition 1's ``t``-independence quantitative).

    Parameters
    ----------
    t : float, ``> 0``
    kappa : float, ``>= 0``, optional
        ``delta = kappa sqrt(t)`` (must stay below 1).
    delta : float in [0, 1), optional
        A fixed smoothing parameter instead. Give exactly one.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``t <= 0``, not exactly one of ``kappa`` / ``delta`` is given, or ``delta`` is outside [0, 1).

    Examples
    --------
    >>> round(two_point_loss(1e-4, kappa=1.0), 5)  # F(1) / 0.99**2
    0.07687
    """
    t = check_real("t", t, minimum=0.0, strict_min=True)
    if (kappa is None) == (delta is None):
        raise ValueError("give exactly one of kappa= or delta=")
    if kappa is not None:
        delta = check_real("kappa", kappa, minimum=0.0) * np.sqrt(t)
        if delta >= 1.0:
            raise ValueError(f"kappa * sqrt(t) must be < 1, got {delta}")
    delta = check_real("delta", delta, minimum=0.0, maximum=1.0, strict_max=True)
    return loss_limit(delta / np.sqrt(t)) / (1.0 - delta) ** 2


def score_loss_1d(score_fn: Callable, t, grid, *, num=40_001, zmax=12.0):
    """``L_t[f] = t E_{x ~ p_t} (f(x) - grad log p_t(x))^2`` in 1-D by quadrature.

    The expectation is split over the mixture components, ``x = y_k + sqrt(t) z``, and each
    ``z``-integral is a trapezoid rule on ``[-zmax, zmax]`` with ``num`` nodes
    (:cite:`chen2026scoresmoothing`, Section 2 and Proposition 1).

    Parameters
    ----------
    score_fn : callable ``(u: (N,), t) -> (N,)``
    t : float, ``> 0``
    grid : array_like, shape (n,), training points (any spacing)
    num : int, ``>= 3``; zmax : float, ``> 0``

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``grid`` is not 1-D or finite, ``t <= 0``, ``num < 3`` or ``zmax <= 0``.

    Examples
    --------
    >>> round(score_loss_1d(lambda u, t: 0 * u, 0.01, [0.0]), 6)  # zero score: t E (x/t)^2 = 1
    1.0
    """
    grid = as_array("grid", grid, ndim=1, min_size=1)
    t = check_real("t", t, minimum=0.0, strict_min=True)
    num = check_int("num", num, minimum=3)
    zmax = check_real("zmax", zmax, minimum=0.0, strict_min=True)
    z = np.linspace(-zmax, zmax, num)
    u = (grid[:, None] + np.sqrt(t) * z[None, :]).ravel()
    exact = empirical_score(u[:, None], t, grid[:, None])[:, 0]
    err2 = ((np.asarray(score_fn(u, t)) - exact) ** 2).reshape(grid.size, num)
    return float(t * np.mean(np.trapezoid(err2 * norm.pdf(z), z, axis=1)))


def total_curvature(f_values, x):
    """Discrete ``R[f] = int |f''(x)| dx``: the total variation of the slope of a sampled function.

    For a 2-layer ReLU net this is the function-space cost of weight decay (Savarese et al., 2019),
    the regulariser of Proposition 1 in :cite:`chen2026scoresmoothing`.

    Parameters
    ----------
    f_values : array_like, shape (M,)
    x : array_like, shape (M,), strictly increasing, M >= 3

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``x`` is not strictly increasing with at least 3 entries, or ``f_values`` has another length.

    Examples
    --------
    >>> round(total_curvature([1.0, 0.0, 1.0], [-1.0, 0.0, 1.0]), 6)  # |x|: slope jumps by 2
    2.0
    """
    x = as_array("x", x, ndim=1, min_size=3)
    f = as_array("f_values", f_values, shape=(x.size,))
    if np.any(np.diff(x) <= 0):
        raise ValueError("x must be strictly increasing")
    slope = np.diff(f) / np.diff(x)
    return float(np.sum(np.abs(np.diff(slope))))


class SmoothestScore(NamedTuple):
    """Output of :func:`smoothest_score` (two training points ``+-1``).

    Attributes
    ----------
    x : ndarray, shape (num,)
        Quadrature nodes ``1 + sqrt(t) z`` around the training point ``+1`` (the function is odd).
    score : ndarray, shape (num,)
        The smoothest score ``f(x)`` at the nodes, in score units.
    loss : float
        Its loss ``L_t[f]``.
    curvature : float
        Its non-smoothness ``R[f]`` over the whole line (both kinks of the odd function).
    delta : float
        Distance from ``+1`` to its kink on the inner side (the edge of the collapsing zone, the
        quantity ``delta`` of the smoothed score); ``nan`` when the optimum has no kink (a linear fit).
    outer_slope : float
        ``-t f'(1)``: the slope at the training point relative to the empirical score's ``-1/t``.
    penalty : float
        The multiplier: ``f`` minimises ``L_t[f] + penalty * sqrt(t) * R[f]``.
    """

    x: np.ndarray
    score: np.ndarray
    loss: float
    curvature: float
    delta: float
    outer_slope: float
    penalty: float


def smoothest_score(t, *, loss=None, penalty=None, num=241, zmax=6.0):
    """Smoothest function at a given score-matching loss (or a given penalty), two points ``+-1``.

    Solves ``min R[f]  s.t.  L_t[f] <= loss`` (Proposition 1's ``r*_{t, eps}``), or the penalised
    form ``min L_t[f] + penalty * sqrt(t) R[f]``, in which ``penalty`` is a weight decay on a network
    that predicts the noise ``-sqrt(t) f`` (a constant ``penalty`` across ``t`` is what one weight
    decay for all noise levels amounts to).

    Parameters
    ----------
    t : float
        Noise variance, ``0 < t < 1 / zmax**2`` (the two Gaussian windows must not overlap).
    loss : float in (0, 1), optional
        Loss level ``eps``; give exactly one of ``loss`` and ``penalty``.
    penalty : float, ``> 0``, optional
        Multiplier of ``sqrt(t) R[f]``.
    num : int, default 241
        Quadrature nodes (and knots) in ``1 + sqrt(t) [-zmax, zmax]``; the kink position is resolved to
        about ``2 zmax sqrt(t) / num``.
    zmax : float, default 6.0
        Half-width of the window in units of ``sqrt(t)``.

    Returns
    -------
    SmoothestScore

    Raises
    ------
    ValueError
        If ``t``, ``loss``, ``penalty``, ``num`` or ``zmax`` is out of range, or not exactly one of
        ``loss`` and ``penalty`` is given.
    RuntimeError
        If the LARS path stops before reaching ``loss`` (a degenerate path; refine ``num``).

    Notes
    -----
    The empirical score and the data distribution are odd/even about ``0``, so the optimum can be
    taken odd (average it with its mirror image: the loss and ``R`` do not increase) and only the
    component around ``+1`` is solved; the mass of the other component near ``+1`` is ``O(e^{-2/t})``.
    The linear term ``beta x`` is left unpenalised (a skip connection); a handful of knots between
    ``0`` and the window let the optimum shift by a constant there. ``R`` counts every kink, which
    for these odd functions is also Savarese et al.'s cost for a network without a skip connection.

    References
    ----------
    Z. Chen, *On the Interpolation Effect of Score Smoothing in Diffusion Models*, ICLR 2026,
    Proposition 1. P. Savarese, I. Evron, D. Soudry, N. Srebro, *How do infinite width bounded norm
    networks look in function space?*, COLT 2019.

    Examples
    --------
    >>> r = smoothest_score(1e-3, loss=0.1)
    >>> round(r.loss, 4), round(r.delta / 1e-3**0.5, 2), round(r.curvature * 1e-3, 2)
    (0.1, 2.35, 1.5)
    """
    t = check_real("t", t, minimum=0.0, strict_min=True)
    num = check_int("num", num, minimum=11)
    zmax = check_real("zmax", zmax, minimum=1.0)
    if zmax * np.sqrt(t) >= 1.0:
        raise ValueError(f"t must be < 1/zmax**2 = {1 / zmax**2:.4g} so that the windows do not overlap, got {t}")
    if (loss is None) == (penalty is None):
        raise ValueError("give exactly one of loss= (constrained form) or penalty= (penalised form)")
    if loss is not None:
        loss = check_real("loss", loss, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    else:
        penalty = check_real("penalty", penalty, minimum=0.0, strict_min=True)

    s = np.sqrt(t)
    z = np.linspace(-zmax, zmax, num)
    x = 1.0 + s * z
    w = norm.pdf(z) * np.gradient(z)
    w /= w.sum()
    y = s * empirical_score(x[:, None], t, _TWO)[:, 0]  # sqrt(t) * score: L_t = E (y_fit - y)^2
    knots = np.concatenate([np.linspace(0.0, x[0], 12)[1:-1], x[:-1]])
    X = np.maximum(x[:, None] - knots[None, :], 0.0)
    sw = np.sqrt(w)
    b = sw * x / np.linalg.norm(sw * x)  # the free linear term, projected out (weighted)
    Xs = sw[:, None] * X
    Xs -= np.outer(b, b @ Xs)
    ys = sw * y - b * (b @ (sw * y))
    alpha_min = 0.0 if penalty is None else penalty / num
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        alphas, _, coefs = lars_path(Xs, ys, Gram=Xs.T @ Xs, Xy=Xs.T @ ys, method="lasso",
                                     alpha_min=alpha_min, max_iter=20 * num)
    resid = ys[:, None] - Xs @ coefs
    path_loss = np.sum(resid**2, axis=0)
    if loss is not None:
        hit = np.nonzero(path_loss <= loss)[0]
        if hit.size == 0:
            raise RuntimeError(f"the LARS path stopped at loss {path_loss[-1]:.3g} > {loss}; refine num")
        i = int(hit[0])
        if i == 0:
            m = 0.0
            i = 1
        else:  # the loss is quadratic along a path segment: solve for the crossing
            r0, d = resid[:, i - 1], resid[:, i] - resid[:, i - 1]
            qa, qb, qc = d @ d, 2 * (r0 @ d), r0 @ r0 - loss
            m = float(np.clip((-qb - np.sqrt(max(qb * qb - 4 * qa * qc, 0.0))) / (2 * qa), 0.0, 1.0))
        coef = (1 - m) * coefs[:, i - 1] + m * coefs[:, i]
        alpha = (1 - m) * alphas[i - 1] + m * alphas[i]
    else:
        alpha = alpha_min
        if alpha >= alphas[0]:
            coef = np.zeros(knots.size)
        else:
            i = int(np.nonzero(alphas <= alpha)[0][0])
            m = (alphas[i - 1] - alpha) / (alphas[i - 1] - alphas[i])
            coef = (1 - m) * coefs[:, i - 1] + m * coefs[:, i]
    fitted = X @ coef
    beta = (sw * x) @ (sw * (y - fitted)) / ((sw * x) @ (sw * x))
    fitted = fitted + beta * x
    a = np.abs(coef)
    inner = (knots < 1.0) & (a > 1e-9 * max(a.max(), 1e-300))
    delta = float(1.0 - np.sum(knots[inner] * a[inner]) / np.sum(a[inner])) if inner.any() else float("nan")
    slope_at_1 = beta + np.sum(coef[knots < 1.0])
    return SmoothestScore(
        x=x, score=fitted / s, loss=float(np.sum(w * (fitted - y) ** 2)), curvature=float(2 * a.sum() / s),
        delta=delta, outer_slope=float(-s * slope_at_1), penalty=float(alpha * num),
    )
