"""Exact approximation floors of restricted classes of set networks, and a trained network beside them.

A restricted class of :mod:`paperlib.geometry.equivariant` networks (``sum_i f(x_i)``, ``(f(x_i))_i``,
``(g(x_i, s))_i``) is, in L2 of a product law, a linear space; its best member ``f*`` for a target
``F`` is a conditional expectation, and the relative floor ``E|F - f*|^2 / Var F`` is the smallest
relative mean squared error any member of the class can reach. :func:`class_optimum` and
:func:`exact_floor` compute them exactly for polynomial targets (Gauss-Legendre product rules), or for
any target under a finite marginal; :func:`compare_with_floor` puts a trained network beside the
Monte Carlo floor on the same test sets, with the standard error that makes the comparison a test.
"""

from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_option

__all__ = [
    "RESTRICTED_CLASSES",
    "FloorComparison",
    "class_optimum",
    "exact_floor",
    "compare_with_floor",
    "power_sum_residual",
]

#: Restricted classes with an exact floor: ``"CI"`` (invariant ``sum_i f(x_i)``), ``"C"``
#: (equivariant ``(f(x_i))_i``, any depth) and ``"PC"`` (equivariant ``(g(x_i, s))_i``, n = 3).
RESTRICTED_CLASSES = ("CI", "C", "PC")


def _marginal(marginal, order):
    if marginal is None:
        z, w = np.polynomial.legendre.leggauss(order)
        return z, w / 2.0  # uniform density 1/2 on [-1, 1]
    if not isinstance(marginal, (tuple, list)) or len(marginal) != 2:
        raise ValueError("marginal must be None or a pair (nodes, probabilities)")
    z = as_array("marginal nodes", marginal[0], ndim=1)
    w = as_array("marginal probabilities", marginal[1], shape=(z.size,))
    if np.any(w < 0) or abs(w.sum() - 1.0) > 1e-9:
        raise ValueError(f"marginal probabilities must be non-negative and sum to 1, got sum {w.sum()}")
    return z, w


def _eval_target(target, pts, n, equivariant_index=None):
    vals = np.asarray(target(pts), dtype=float)
    want = pts.shape[:-1] + ((n,) if equivariant_index is not None else ())
    if vals.shape != want:
        raise ValueError(f"target must map (..., n) to {'(..., n)' if equivariant_index is not None else '(...,)'}; "
                         f"got shape {vals.shape} for input {pts.shape}")
    return vals if equivariant_index is None else vals[..., equivariant_index]


def _given_entry(target, x, i, z, w, equivariant):
    """E[F(x)(_i) | x_i] at the rows of x, by the product rule (z, w) on the other coordinates."""
    n = x.shape[-1]
    others = [j for j in range(n) if j != i]
    grid = np.array(list(itertools.product(z, repeat=n - 1))).reshape(-1, n - 1)
    wts = np.prod(np.array(list(itertools.product(w, repeat=n - 1))).reshape(-1, n - 1), axis=1)
    pts = np.empty(x.shape[:-1] + (len(wts), n))
    pts[..., i] = x[..., i, None]
    pts[..., others] = grid
    return _eval_target(target, pts, n, i if equivariant else None) @ wts


def _given_entry_and_sum(target, x, i, order):
    """E[F_i | x_i, s] for n = 3: the other two are (t + d)/2, (t - d)/2 with d ~ U[-m, m], m = 2 - |t|."""
    z, w = np.polynomial.legendre.leggauss(order)
    t = x.sum(-1) - x[..., i]
    d = (2.0 - np.abs(t))[..., None] * z
    pts = np.empty(x.shape[:-1] + (order, 3))
    j, k = [a for a in range(3) if a != i]
    pts[..., i] = x[..., i, None]
    pts[..., j] = (t[..., None] + d) / 2
    pts[..., k] = (t[..., None] - d) / 2
    return _eval_target(target, pts, 3, i) @ (w / 2.0)


def _check_space(space, n, marginal):
    space = check_option("space", space, RESTRICTED_CLASSES)
    if space == "PC" and (n != 3 or marginal is not None):
        raise ValueError(f"space 'PC' is implemented for n = 3 and the uniform marginal only, got n = {n}")
    return space


def class_optimum(target: Callable, x, space: str, *, order: int = 8, marginal=None):
    """The L2-best member ``f*`` of a restricted class for ``target``, evaluated at the rows of ``x``.

    With independent coordinates, the projection onto each class is a conditional expectation:

    - ``"CI"`` (closure of U(C, I), invariant ``sum_i f(x_i)``):
      ``f*(x) = sum_i E[F | x_i] - (n - 1) E[F]`` (first-order ANOVA term; ``F`` symmetric);
    - ``"C"`` (closure of U^d(C) for any depth, ``(f(x_i))_i``): ``f*_i(x) = E[F_i | x_i]``;
    - ``"PC"`` (closure of U(P, C), ``(g(x_i, s))_i``, n = 3): ``f*_i(x) = E[F_i | x_i, s]``.

    Parameters
    ----------
    target : callable
        ``F``: maps ``(..., n)`` to ``(...,)`` for ``"CI"`` or to ``(..., n)`` (equivariant) for
        ``"C"`` and ``"PC"``; vectorised over leading axes.
    x : array, shape (N, n)
        Points at which to evaluate ``f*``.
    space : {"CI", "C", "PC"}
        The restricted class.
    order : int, default 8
        Gauss-Legendre nodes per integrated coordinate; exact for polynomial targets of degree
        ``<= 2 * order - 1`` in each coordinate.
    marginal : None or (nodes, probabilities), default None
        Distribution of each coordinate: ``None`` for uniform on ``[-1, 1]``, else a finite one
        (then the expectations are exact sums; ``"CI"`` and ``"C"`` only).

    Returns
    -------
    numpy array, shape (N,) or (N, n)

    Raises
    ------
    ValueError
        On an unknown ``space``, ``"PC"`` with ``n != 3`` or a finite marginal, bad ``x``, ``order``
        or ``marginal``, or a target of the wrong output shape.

    References
    ----------
    Pacini, Petrache, Lepri, Trivedi, Walters, "On Universality of Deep Equivariant Networks",
    ICLR 2026 (Example 3, Theorem 3); Pacini, Santin, Lepri, Trivedi, "On Universality Classes of
    Equivariant Networks", NeurIPS 2025 (Proposition 16). The projections are ours.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.5, -0.2, 0.1]])
    >>> np.round(class_optimum(lambda v: v * v.sum(-1, keepdims=True), x, "C"), 4)   # E[x_i s | x_i] = x_i^2
    array([[0.25, 0.04, 0.01]])
    """
    x = as_array("x", x, ndim=2)
    order = check_int("order", order, minimum=1)
    n = x.shape[1]
    space = _check_space(space, n, marginal)
    if space == "PC":
        return np.stack([_given_entry_and_sum(target, x, i, order) for i in range(n)], axis=-1)
    z, w = _marginal(marginal, order)
    if space == "C":
        return np.stack([_given_entry(target, x, i, z, w, True) for i in range(n)], axis=-1)
    grid = np.array(list(itertools.product(z, repeat=n)))
    wts = np.prod(np.array(list(itertools.product(w, repeat=n))), axis=1)
    mean = _eval_target(target, grid, n) @ wts
    return sum(_given_entry(target, x, i, z, w, False) for i in range(n)) - (n - 1) * mean


def exact_floor(target: Callable, n: int, space: str, *, order: int = 8, marginal=None) -> float:
    """Relative L2 floor ``E|F - f*|^2 / Var F`` of a restricted class on ``target`` (exact).

    The expectations run over ``x ~ U[-1, 1]^n`` (or the product of a finite ``marginal``) with a
    Gauss-Legendre product rule, exact for polynomial targets of low enough degree. For ``"PC"``
    the outer integral is over ``(x_i, t = s - x_i, d)``, with ``t`` triangular on ``[-2, 2]`` (each
    half integrated separately, where the integrand is polynomial) and ``d`` uniform on
    ``[-(2 - |t|), 2 - |t|]``. Equivariant targets average numerator and denominator over entries.

    Parameters
    ----------
    target : callable
        As in :func:`class_optimum`.
    n : int
        Set size (at least 2; exactly 3 for ``"PC"``).
    space : {"CI", "C", "PC"}
        The restricted class.
    order : int, default 8
        Gauss-Legendre nodes per coordinate.
    marginal : None or (nodes, probabilities), default None
        As in :func:`class_optimum`.

    Returns
    -------
    float
        In ``[0, 1]``: 0 when the target is in the class, 1 when the class cannot beat a constant.

    Raises
    ------
    ValueError
        As :func:`class_optimum`; also if ``n < 2`` or the target is constant.

    Examples
    --------
    >>> round(exact_floor(lambda v: v.sum(-1) ** 2, 3, "CI"), 4)   # s^2 against sum_i f(x_i): 5/6
    0.8333
    """
    n = check_int("n", n, minimum=2)
    order = check_int("order", order, minimum=1)
    space = _check_space(space, n, marginal)
    z, w = _marginal(marginal, order)
    grid = np.array(list(itertools.product(z, repeat=n)))
    wts = np.prod(np.array(list(itertools.product(w, repeat=n))), axis=1)
    if space == "CI":
        vals = _eval_target(target, grid, n)
        var = wts @ (vals - wts @ vals) ** 2
        num = wts @ (vals - class_optimum(target, grid, "CI", order=order, marginal=marginal)) ** 2
    else:
        vals = np.stack([_eval_target(target, grid, n, i) for i in range(n)], axis=-1)
        var = np.mean(wts @ (vals - wts @ vals) ** 2)
        if space == "C":
            num = np.mean(wts @ (vals - class_optimum(target, grid, "C", order=order, marginal=marginal)) ** 2)
        else:
            zt, wt = np.polynomial.legendre.leggauss(order)
            u = np.concatenate([(zt - 1.0), (zt + 1.0)])            # t on [-2, 0] and [0, 2]
            wu = np.concatenate([wt, wt]) * (2.0 - np.abs(u)) / 4.0  # triangular density of t
            xi, tt = np.meshgrid(z, u, indexing="ij")
            wx = np.outer(w, wu).ravel()
            num = 0.0
            for i in range(3):                                      # x_i = xi, s - x_i = t
                pts = np.zeros((xi.size, 3))
                pts[:, i], pts[:, (i + 1) % 3] = xi.ravel(), tt.ravel()
                mean_i = _given_entry_and_sum(target, pts, i, order)
                sq_i = _given_entry_and_sum(lambda v: target(v) ** 2, pts, i, order)
                num += wx @ (sq_i - mean_i**2) / 3
    if var <= 1e-14:
        raise ValueError("target must not be constant (its variance is zero)")
    return float(max(num, 0.0) / var)


class FloorComparison(NamedTuple):
    """Output of :func:`compare_with_floor` (all relative to the test-set variance of the target)."""

    model: float
    """Relative test MSE of the trained model."""
    floor: float
    """Relative test MSE of the class optimum ``f*`` on the same test set (Monte Carlo floor)."""
    floor_se: float
    """Standard error of ``floor`` (delta method over test points)."""
    cross_se: float
    """Standard error of the zero-mean cross term in ``model - floor`` (see Notes)."""


def compare_with_floor(prediction, optimum, target) -> FloorComparison:
    """Relative test MSE of a model beside the Monte Carlo floor of its class on the same points.

    For a model ``f`` in a class whose closure is a linear space with L2 projection ``f*``,
    ``r(f) - r(f*) = [mean|f - f*|^2 + 2 mean<y - f*, f* - f>] / var(y)``. The first term is
    non-negative and the cross term has mean zero when ``f`` was fitted on other data; hence
    ``r(f) >= r(f*) - k * cross_se`` except with Gaussian tail probability at ``k`` standard errors.

    Parameters
    ----------
    prediction, optimum, target : array, shape (N,) or (N, n)
        Model output, class optimum and target at the same ``N`` test points.

    Returns
    -------
    FloorComparison

    Raises
    ------
    ValueError
        If the shapes differ, fewer than two points are given, an entry is not finite, or the target
        is constant.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([1.0, -1.0, 2.0, 0.0]); opt = np.array([0.5, -0.5, 1.0, 0.0])
    >>> [round(v, 3) for v in compare_with_floor(opt, opt, y)]
    [0.3, 0.3, 0.114, 0.0]
    """
    y = as_array("target", target, ndim=(1, 2))
    p = as_array("prediction", prediction, shape=y.shape)
    o = as_array("optimum", optimum, shape=y.shape)
    if y.shape[0] < 2:
        raise ValueError(f"target must hold at least two test points, got {y.shape[0]}")
    axes = tuple(range(1, y.ndim))
    var = np.var(y)
    if var <= 0:
        raise ValueError("target must not be constant")
    a = np.mean((y - o) ** 2, axis=axes) if axes else (y - o) ** 2      # per-point floor term
    b = np.mean((y - y.mean()) ** 2, axis=axes) if axes else (y - y.mean()) ** 2
    c = 2 * (np.mean((y - o) * (o - p), axis=axes) if axes else (y - o) * (o - p))
    r_floor = a.mean() / var
    N = y.shape[0]
    floor_se = float(np.std(a - r_floor * b) / var / np.sqrt(N))
    return FloorComparison(float(np.mean((p - y) ** 2) / var), float(r_floor), floor_se,
                           float(np.std(c) / var / np.sqrt(N)))


def power_sum_residual(x, y, degree: int, *, with_sum: bool = True) -> float:
    """Relative least-squares residual of ``y`` on the features ``sum_i x_i^a s^b``.

    With ``with_sum`` the features are ``sum_i x_i^a s^b`` for ``a + b <= degree``: sums of
    polynomials ``g(x_i, s)``, the polynomial part of the class U(P, I). Without, ``sum_i x_i^a``
    for ``a <= degree``: the polynomial part of U(C, I).

    Parameters
    ----------
    x : array, shape (N, n)
        Sample points.
    y : array, shape (N,)
        Invariant target values.
    degree : int
        Maximal total degree ``D`` (non-negative).
    with_sum : bool, default True
        Include the powers of ``s = sum_j x_j``.

    Returns
    -------
    float
        ``|y - Phi beta|^2 / |y - mean(y)|^2`` at the least-squares ``beta`` (float64).

    Raises
    ------
    ValueError
        On bad shapes, non-finite values or a negative ``degree``.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(-1, 1, (500, 3))
    >>> power_sum_residual(x, x.prod(1), 3) < 1e-20     # x1 x2 x3 = sum_i g(x_i, s) for n = 3
    True
    """
    x = as_array("x", x, ndim=2)
    y = as_array("y", y, shape=(x.shape[0],))
    degree = check_int("degree", degree, minimum=0)
    if not isinstance(with_sum, (bool, np.bool_)):
        raise ValueError(f"with_sum must be True or False, got {with_sum!r}")
    s = x.sum(1)
    pairs = [(a, b) for a in range(degree + 1) for b in range(degree + 1 - a) if with_sum or b == 0]
    phi = np.stack([np.sum(x**a, axis=1) * s**b for a, b in pairs], axis=1)
    phi /= np.maximum(np.linalg.norm(phi, axis=0), 1e-300)
    beta, *_ = np.linalg.lstsq(phi, y, rcond=None)
    resid = y - phi @ beta
    return float(resid @ resid / np.sum((y - y.mean()) ** 2))
