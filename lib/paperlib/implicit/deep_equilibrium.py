r"""A deep equilibrium operator with a Lipschitz budget in its input, trained through its fixed point.

The operator is generic in :math:`y` (a one-hidden-layer tanh network of :math:`(y,x)` with a linear
skip term) and its :math:`x`-Lipschitz constant is capped by construction, which is condition (i) of a
*regular* operator in Liu et al. (2026). Condition (ii), contraction in :math:`y`, is not built in:
whether training produces it is something the chapter measures. Training follows deep equilibrium
models: the loss is taken at the fixed point, found by Newton's method, and differentiated implicitly
(:func:`paperlib.implicit.implicit_models.fixed_point`); a truncated-unrolling alternative is the control.

References
----------
J. Liu, L. Ding, S. Osher, W. Yin, "Implicit Models: Expressive Power Scales with Test-Time
Compute", ICLR 2026, arXiv:2510.03638.
S. Bai, J. Z. Kolter, V. Koltun, "Deep equilibrium models", NeurIPS 2019.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_key, check_real, is_traced
from .implicit_models import fixed_point
from ..models.training import TrainResult, train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["capped_operator_init", "capped_operator", "fit_capped_operator"]


def _maybe_array(name: str, value, **kw):
    return value if is_traced(value) else jnp.asarray(as_array(name, value, dtype=None, **kw))

def _tanh_layer_init(key, width, scales):
    keys = jax.random.split(key, len(scales))
    return [s * jax.random.normal(k, (width,)) for k, s in zip(keys, scales)]


def capped_operator_init(key, width: int = 32) -> dict:
    r"""Initial parameters of :func:`capped_operator`: a contraction with modulus about 0.95.

    Parameters
    ----------
    key : jax.random key
    width : int, default 32
        Hidden units.

    Returns
    -------
    dict of jax.Array
        ``w_y, w_x, b, w_out`` of shape ``(width,)``, scalars ``b_out`` and ``skip``.

    Raises
    ------
    ValueError
        If ``width`` is not a positive integer.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> p = capped_operator_init(jax.random.key(0), 8)
    >>> sorted(p), p["w_y"].shape
    (['b', 'b_out', 'skip', 'w_out', 'w_x', 'w_y'], (8,))
    """
    key = check_key("key", key)
    width = check_int("width", width, minimum=1)
    w_y, w_x, b, w_out = _tanh_layer_init(key, width, (1.0, 1.0, 1.0, 0.1 / np.sqrt(width)))
    return {"w_y": w_y, "w_x": w_x, "b": b, "w_out": w_out, "b_out": jnp.zeros(()), "skip": jnp.ones(())}


def capped_operator(params: dict, y, x, *, lip_x: float, y_scale: float):
    r"""A generic scalar operator whose :math:`x`-Lipschitz constant is at most ``lip_x`` by construction.

    .. math:: G(y,x)=y-\Big(s\,u+\sum_i w^{\rm out}_i\tanh\big(w^y_iu+c\,w^x_ix+b_i\big)+b^{\rm out}\Big),
              \quad u=y/y_{\rm scale},\quad c=\min\Big(1,\frac{L_x}{\sum_i|w^{\rm out}_iw^x_i|}\Big).

    Since :math:`|\tanh'|\le1`, :math:`|\partial G/\partial x|\le c\sum_i|w^{\rm out}_iw^x_i|\le L_x`
    for every :math:`(y,x)`: condition (i) of a regular operator holds with budget :math:`L_x`.
    Nothing makes :math:`y\mapsto G(y,x)` a contraction: condition (ii) is left to training.

    Parameters
    ----------
    params : dict
        From :func:`capped_operator_init`.
    y, x : array_like, same shape
        Current iterate and input (sample-wise: entry ``i`` of the output depends on entry ``i``).
    lip_x : float
        The budget :math:`L_x>0`.
    y_scale : float
        Typical size of ``y`` (positive), so that the hidden units see inputs of order one.

    Returns
    -------
    jax.Array, shaped like ``y``

    Raises
    ------
    ValueError
        If ``lip_x`` or ``y_scale`` is not positive, or (outside ``jit``) ``y``/``x`` are not finite
        arrays of one shape.

    Examples
    --------
    >>> p = capped_operator_init(jax.random.key(0), 8)
    >>> capped_operator(p, jnp.zeros(3), jnp.array([0.1, 0.5, 1.0]), lip_x=2.0, y_scale=10.0).shape
    (3,)
    """
    lip_x = check_real("lip_x", lip_x, minimum=0.0, strict_min=True)
    y_scale = check_real("y_scale", y_scale, minimum=0.0, strict_min=True)
    y = _maybe_array("y", y, ndim=range(0, 8))
    x = _maybe_array("x", x, ndim=range(0, 8))
    if y.shape != x.shape:
        raise ValueError(f"y and x must have one shape, got {y.shape} and {x.shape}")
    c = jnp.minimum(1.0, lip_x / jnp.sum(jnp.abs(params["w_out"] * params["w_x"])))
    u = y / y_scale
    h = jnp.tanh(u[..., None] * params["w_y"] + x[..., None] * (c * params["w_x"]) + params["b"])
    return y - (params["skip"] * u + h @ params["w_out"] + params["b_out"])


def fit_capped_operator(x, target, *, key, lip_x: float, y_scale: float, width: int = 32,
                        steps: int = 2000, learning_rate: float = 1e-2, solver_steps: int = 12,
                        unroll: int | None = None) -> TrainResult:
    r"""Train :func:`capped_operator` so that its fixed point matches ``target`` on the grid ``x``.

    Loss :math:`\frac1M\sum_i\big((y_i-F_i)/y_{\rm scale}\big)^2`, Adam with a cosine-decayed step,
    full batch. By default :math:`y` is the fixed point, found by Newton's method and differentiated
    implicitly (:func:`~paperlib.implicit.implicit_models.fixed_point`), as in deep equilibrium models; Picard iteration is used only at
    test time. With ``unroll=T`` the loss is taken instead at the :math:`T`-th Picard iterate from
    :math:`y_0=0` and differentiated through the :math:`T` steps (truncated unrolling), a control.

    Parameters
    ----------
    x, target : array_like, shape (M,)
        Training inputs and target values.
    key : jax.random key
        Keyword-only; initialises the operator.
    lip_x, y_scale : float
        As in :func:`capped_operator`.
    width : int, default 32
    steps : int, default 2000
        Adam steps.
    learning_rate : float, default 1e-2
        Initial step of the cosine schedule.
    solver_steps : int, default 12
        Newton steps of the forward solve.
    unroll : int, optional
        If given, train through this many Picard steps instead of the fixed point.

    Returns
    -------
    paperlib.models.training.TrainResult
        Trained parameters and the loss at every step.

    Raises
    ------
    ValueError
        On wrong shapes, non-finite values, or non-positive sizes and rates.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x = jnp.linspace(0.5, 1.0, 8)
    >>> res = fit_capped_operator(x, 1 / x, key=jax.random.key(0), lip_x=5.0, y_scale=2.0, steps=300)
    >>> bool(res.losses[-1] < 1e-3)
    True
    """
    key = check_key("key", key)
    x = jnp.asarray(as_array("x", x, ndim=1))
    target = jnp.asarray(as_array("target", target, shape=x.shape))
    lip_x = check_real("lip_x", lip_x, minimum=0.0, strict_min=True)
    y_scale = check_real("y_scale", y_scale, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=1)
    solver_steps = check_int("solver_steps", solver_steps, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    if unroll is not None:
        unroll = check_int("unroll", unroll, minimum=1)
    operator = functools.partial(capped_operator, lip_x=lip_x, y_scale=y_scale)

    def loss(params, _key):
        if unroll is None:
            y = fixed_point(operator, params, x, num_steps=solver_steps, method="newton")
        else:
            y = jax.lax.fori_loop(0, unroll, lambda i, v: operator(params, v, x), jnp.zeros_like(x))
        return jnp.mean(((y - target) / y_scale) ** 2)

    optimizer = optax.adam(optax.cosine_decay_schedule(learning_rate, steps))
    params = capped_operator_init(key, width)
    return jax.jit(lambda p, k: train(loss, p, optimizer, steps=steps, key=k))(params, key)


_PROBE_EXEMPTIONS = {
    "capped_operator": {a: {"array_rank": "sample-wise operator: any shape is valid"} for a in ("y", "x")},
}
