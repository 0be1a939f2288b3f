r"""Implicit models: fixed points of a learned operator, iterated at test time.

An implicit model is an operator :math:`G(y,x)`; its output is the fixed point
:math:`y_\star(x)=G(y_\star(x),x)`, computed at test time by Picard iteration from :math:`y_0=0`,

.. math:: y_t(x)=G(y_{t-1}(x),x),\qquad t=1,2,\dots

The number of iterations :math:`t` is the test-time compute. Liu et al. (2026) call :math:`G`
*regular* when :math:`x\mapsto G(y,x)` is globally Lipschitz with a constant growing at most linearly
in :math:`\|y\|` and :math:`y\mapsto G(y,x)` is a contraction. They prove that regular operators have
exactly the locally Lipschitz maps as fixed-point maps, so a simple operator can express a complex
map, and that the complexity of :math:`y_t` grows with :math:`t`.

This module holds the iteration (:func:`picard_iterates`), a differentiable fixed-point solver
(:func:`fixed_point`, implicit differentiation as in deep equilibrium models), the partial derivatives
that make an operator regular or not (:func:`operator_partials`), and the paper's closed-form
sufficiency construction (:func:`adaptive_step_iterates` and the toy target of its figure). The
trained scalar operator lives in :mod:`paperlib.implicit.deep_equilibrium`, Lipschitz measurements, the
explicit error floor and explicit networks with a Lipschitz cap in :mod:`paperlib.implicit.lipschitz`, and the
deblurring operator in :mod:`paperlib.implicit.plug_and_play`.

References
----------
J. Liu, L. Ding, S. Osher, W. Yin, "Implicit Models: Expressive Power Scales with Test-Time
Compute", ICLR 2026, arXiv:2510.03638.
S. Bai, J. Z. Kolter, V. Koltun, "Deep equilibrium models", NeurIPS 2019.
"""

from __future__ import annotations

import functools
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_int, check_option, check_real, is_traced

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "picard_iterates",
    "fixed_point",
    "operator_partials",
    "adaptive_step_iterates",
    "paper_toy_target",
    "paper_toy_step",
]


def _callable(name: str, fn) -> Callable:
    if not callable(fn):
        raise ValueError(f"{name} must be callable, got {type(fn).__name__}")
    return fn


def _maybe_array(name: str, value, **kw):
    return value if is_traced(value) else jnp.asarray(as_array(name, value, dtype=None, **kw))


def _check_params(params):
    return jax.tree_util.tree_map(
        lambda leaf: leaf if is_traced(leaf) else jnp.asarray(as_array("params (a leaf)", leaf, dtype=None, ndim=range(0, 8))),
        params)


# ---------------------------------------------------------------------------------------------
# Iteration and fixed points
@functools.partial(jax.jit, static_argnames=("operator", "num_steps"))
def _picard(operator, x, y0, num_steps):
    def step(y, _):
        y = operator(y, x)
        return y, y

    return jax.lax.scan(step, y0, None, length=num_steps)[1]


def picard_iterates(operator: Callable, x, *, num_steps: int, y0=None):
    r"""All Picard iterates :math:`y_1,\dots,y_T` of :math:`y_t=G(y_{t-1},x)` (one ``lax.scan``).

    Parameters
    ----------
    operator : callable ``(y, x) -> y``
        The operator :math:`G`; must be traceable by JAX and hashable (a function, not a lambda
        rebuilt at every call, if you want the compiled scan reused).
    x : array_like
        The input, any shape the operator accepts.
    num_steps : int
        Number of iterations :math:`T \ge 1`.
    y0 : array_like, optional
        Starting point; default zeros of the shape of ``x`` (the paper's :math:`y_0=0`).

    Returns
    -------
    jax.Array, shape (num_steps, *y0.shape)
        Row ``t - 1`` is :math:`y_t`.

    Raises
    ------
    ValueError
        If ``operator`` is not callable, ``num_steps`` is not a positive integer, or ``x`` or ``y0``
        is not a finite real array.

    Examples
    --------
    >>> G = lambda y, x: 0.5 * y + x          # contraction with fixed point 2x
    >>> ys = picard_iterates(G, jnp.array([1.0, 2.0]), num_steps=30)
    >>> ys.shape, [round(float(v), 4) for v in ys[-1]]
    ((30, 2), [2.0, 4.0])
    """
    operator = _callable("operator", operator)
    num_steps = check_int("num_steps", num_steps, minimum=1)
    x = _maybe_array("x", x, ndim=range(0, 8))
    y0 = jnp.zeros_like(x) if y0 is None else _maybe_array("y0", y0, ndim=range(0, 8))
    return _picard(operator, x, y0, num_steps)


@functools.lru_cache(maxsize=64)
def _solver(operator, num_steps, method, adjoint_steps, with_constants):
    def G(params, y, x, c):
        return operator(params, y, x, c) if with_constants else operator(params, y, x)

    def residual_slope(params, x, c, y):
        return jax.jvp(lambda v: G(params, v, x, c), (y,), (jnp.ones_like(y),))

    def forward(params, x, y0, c):
        if method == "picard":
            return jax.lax.fori_loop(0, num_steps, lambda i, y: G(params, y, x, c), y0)

        def newton(i, y):
            g, dg = residual_slope(params, x, c, y)
            d = 1.0 - dg
            d = jnp.where(jnp.abs(d) < 1e-6, jnp.where(d < 0, -1e-6, 1e-6), d)
            return y - (y - g) / d

        return jax.lax.fori_loop(0, num_steps, newton, y0)

    @jax.custom_vjp
    def solve(params, x, y0, c):
        return forward(params, x, y0, c)

    def solve_fwd(params, x, y0, c):
        y = forward(params, x, y0, c)
        return y, (params, x, y, c)

    def solve_bwd(res, g):
        params, x, y, c = res
        if method == "newton":  # sample-wise scalar operator: the Jacobian in y is diagonal
            u = g / (1.0 - residual_slope(params, x, c, y)[1])
        else:  # u = g + (dG/dy)^T u, solved by the same fixed-point iteration
            _, vjp_y = jax.vjp(lambda v: G(params, v, x, c), y)
            u = jax.lax.fori_loop(0, adjoint_steps, lambda i, u: g + vjp_y(u)[0], g)
        _, vjp = jax.vjp(lambda p, xx: G(p, y, xx, c), params, x)
        dp, dx = vjp(u)
        return dp, dx, jnp.zeros_like(y), jax.tree_util.tree_map(jnp.zeros_like, c)

    solve.defvjp(solve_fwd, solve_bwd)
    return solve


def fixed_point(operator: Callable, params, x, *, num_steps: int = 100, method: str = "picard",
                adjoint_steps: int | None = None, y0=None, constants=None):
    r"""Fixed point :math:`y_\star=G_\theta(y_\star,x)`, differentiable by implicit differentiation.

    The forward pass runs ``num_steps`` iterations of the chosen solver without recording them. The
    backward pass uses the implicit function theorem: for a loss :math:`\ell(y_\star)`,

    .. math:: \nabla_\theta\ell=\Big(\frac{\partial G}{\partial\theta}\Big)^{\!\top}u,\qquad
              u=\nabla\ell+\Big(\frac{\partial G}{\partial y}\Big)^{\!\top}u,

    so memory does not grow with the number of iterations (deep equilibrium models, Bai et al. 2019).

    Parameters
    ----------
    operator : callable ``(params, y, x) -> y``
        The operator :math:`G_\theta`, traceable and hashable.
    params : pytree of arrays
        Its parameters :math:`\theta`.
    x : array_like
        The input.
    num_steps : int, default 100
        Solver iterations.
    method : {"picard", "newton"}, default "picard"
        ``"picard"``: :math:`y\leftarrow G(y,x)`, and the adjoint equation is solved by the same
        iteration. ``"newton"``: Newton's method on :math:`y-G(y,x)=0` for **sample-wise scalar**
        operators (each entry of ``y`` depends only on the same entry); the adjoint is then an exact
        division. Newton finds the root whether or not the Picard iteration would converge to it.
    adjoint_steps : int, optional
        Iterations of the adjoint solve for ``"picard"`` (default ``num_steps``).
    y0 : array_like, optional
        Starting point, default zeros shaped like ``x``.
    constants : pytree of arrays, optional
        Extra inputs held fixed (no gradient), passed as a fourth argument
        ``operator(params, y, x, constants)``; e.g. a blur operator's eigenbasis.

    Returns
    -------
    jax.Array
        The approximate fixed point, shaped like ``y0``.

    Raises
    ------
    ValueError
        If ``operator`` is not callable, a count is not a positive integer, ``method`` is unknown, or
        ``x``, ``y0`` or a leaf of ``params`` is not a finite real array.

    Notes
    -----
    The gradient is exact only at an exact fixed point; with too few forward steps it is the gradient
    of a slightly different problem. The paper's imaging models train this way (forward fixed-point
    iterations, a 20-step backward solve); its linear-programming models unroll a few iterations.

    Examples
    --------
    >>> G = lambda a, y, x: a * y + x           # fixed point x / (1 - a)
    >>> y = fixed_point(G, 0.5, jnp.array([1.0, 3.0]), num_steps=60)
    >>> [round(float(v), 4) for v in y]
    [2.0, 6.0]
    >>> g = jax.grad(lambda a: fixed_point(G, a, jnp.array([1.0]), num_steps=60).sum())(0.5)
    >>> round(float(g), 3)                      # d/da of 1 / (1 - a) at a = 0.5
    4.0
    """
    operator = _callable("operator", operator)
    num_steps = check_int("num_steps", num_steps, minimum=1)
    method = check_option("method", method, ("picard", "newton"))
    adjoint_steps = num_steps if adjoint_steps is None else check_int("adjoint_steps", adjoint_steps, minimum=1)
    params = _check_params(params)
    x = _maybe_array("x", x, ndim=range(0, 8))
    y0 = jnp.zeros_like(x) if y0 is None else _maybe_array("y0", y0, ndim=range(0, 8))
    solve = _solver(operator, num_steps, method, adjoint_steps, constants is not None)
    return solve(params, x, y0, () if constants is None else constants)


def operator_partials(operator: Callable, y, x):
    r"""Partial derivatives :math:`\partial G/\partial y` and :math:`\partial G/\partial x` of a scalar operator.

    For a sample-wise scalar :math:`G` evaluated at points :math:`(y_i,x_i)`: the contraction modulus
    is :math:`\max|\partial_yG|` and the :math:`x`-Lipschitz constant :math:`\max|\partial_xG|` over a
    region, the two numbers in the paper's definition of a regular operator.

    Parameters
    ----------
    operator : callable ``(y, x) -> y``
        Acts entry by entry.
    y, x : array_like, same shape
        Evaluation points.

    Returns
    -------
    dG_dy, dG_dx : jax.Array
        Shaped like ``y``.

    Raises
    ------
    ValueError
        If ``operator`` is not callable or ``y`` and ``x`` are not finite arrays of one shape.

    Examples
    --------
    >>> G = lambda y, x: y - 0.5 * (x * y - 1.0)  # the paper's operator for 1/x, step 1/2
    >>> gy, gx = operator_partials(G, jnp.array([2.0]), jnp.array([0.5]))
    >>> float(gy[0]), float(gx[0])
    (0.75, -1.0)
    """
    operator = _callable("operator", operator)
    y = _maybe_array("y", y, ndim=range(0, 8))
    x = _maybe_array("x", x, ndim=range(0, 8))
    if y.shape != x.shape:
        raise ValueError(f"y and x must have one shape, got {y.shape} and {x.shape}")
    one = jnp.ones_like(y)
    return (jax.jvp(lambda v: operator(v, x), (y,), (one,))[1],
            jax.jvp(lambda v: operator(y, v), (x,), (one,))[1])


# ---------------------------------------------------------------------------------------------
# The paper's sufficiency construction and toy figure
def adaptive_step_iterates(target, step, steps) -> np.ndarray:
    r"""Closed-form iterates of the sufficiency construction :math:`G(y,x)=(1-\varepsilon(x))y+\varepsilon(x)F(x)`.

    From :math:`y_0=0`, :math:`y_t=\big(1-(1-\varepsilon)^t\big)F`, evaluated as
    ``-expm1(t * log1p(-eps)) * F`` so that it stays accurate for tiny :math:`\varepsilon` and huge
    :math:`t`. The step :math:`\varepsilon(x)\in(0,1]` is small where :math:`F` is steep, which keeps
    :math:`\varepsilon F` and :math:`\varepsilon` globally Lipschitz (the paper's proof sketch).

    Parameters
    ----------
    target : array_like, shape (M,)
        :math:`F` on a grid.
    step : array_like, shape (M,)
        :math:`\varepsilon` on the same grid, each in (0, 1].
    steps : array_like of int, shape (K,)
        Iteration counts :math:`t\ge0`.

    Returns
    -------
    numpy.ndarray, shape (K, M)

    Raises
    ------
    ValueError
        If shapes disagree, a step is outside (0, 1], or a count is negative or not an integer.

    Examples
    --------
    >>> adaptive_step_iterates(np.array([4.0]), np.array([0.5]), [1, 2, 10]).round(3).ravel().tolist()
    [2.0, 3.0, 3.996]
    """
    target = as_array("target", target, ndim=1)
    step = as_array("step", step, shape=target.shape)
    if np.any(step <= 0) or np.any(step > 1):
        raise ValueError("step must lie in (0, 1]")
    steps = as_array("steps", steps, ndim=1, dtype=np.int64)
    if np.any(steps < 0):
        raise ValueError("steps must be non-negative")
    return -np.expm1(steps[:, None] * np.log1p(-np.minimum(step, 1 - 1e-16))) * target


def _off_singularities(x):
    x = as_array("x", x, ndim=range(0, 8))
    if np.any(x == 0) or np.any(x == 1):
        raise ValueError("x must avoid the singularities 0 and 1")
    return x


def paper_toy_target(x) -> np.ndarray:
    r"""The target of the paper's toy figure: :math:`-x` for :math:`x<0`, :math:`1/x+1/(x-1)` on
    :math:`(0,1)`, :math:`1/(x-1)-1/x` for :math:`x>1` (locally, not globally, Lipschitz).

    Parameters
    ----------
    x : array_like
        Points other than 0 and 1.

    Returns
    -------
    numpy.ndarray, shaped like ``x``

    Raises
    ------
    ValueError
        If ``x`` contains 0 or 1 or is not a finite real array.

    Examples
    --------
    >>> paper_toy_target([-1.0, 0.5, 2.0]).tolist()
    [1.0, 0.0, 0.5]
    """
    x = _off_singularities(x)
    with np.errstate(divide="ignore"):
        return np.where(x < 0, -x, np.where(x < 1, 1 / x + 1 / (x - 1), 1 / (x - 1) - 1 / x))


def paper_toy_step(x) -> np.ndarray:
    r"""The adaptive step of the paper's toy figure: :math:`\min(c, x^2(x-1)^2)`, :math:`c=0.1` for
    :math:`x<0` and :math:`0.5` otherwise; it vanishes quadratically at both singularities.

    Parameters
    ----------
    x : array_like
        Points other than 0 and 1.

    Returns
    -------
    numpy.ndarray, shaped like ``x``

    Raises
    ------
    ValueError
        If ``x`` contains 0 or 1 or is not a finite real array.

    Examples
    --------
    >>> paper_toy_step([-1.0, 0.5, 2.0]).tolist()
    [0.1, 0.0625, 0.5]
    """
    x = _off_singularities(x)
    return np.minimum(np.where(x < 0, 0.1, 0.5), x ** 2 * (x - 1) ** 2)


_PROBE_EXEMPTIONS = {
    "picard_iterates": {"x": {"array_rank": "the operator defines the shape of x; any rank is valid"}},
    "fixed_point": {"x": {"array_rank": "the operator defines the shape of x; any rank is valid"},
                    "params": {"array_rank": "params is any pytree of arrays: a leaf may have any shape"}},
    "operator_partials": {a: {"array_rank": "sample-wise operators accept any shape"} for a in ("y", "x")},
    "paper_toy_target": {"x": {"array_rank": "elementwise: any shape is valid"}},
    "paper_toy_step": {"x": {"array_rank": "elementwise: any shape is valid"}},
}
