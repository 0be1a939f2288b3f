"""Dense ReLU multilayer perceptrons, once for the whole book.

Chapters that train small networks (score networks in ``score_smoothing_diffusion``, the one-shot,
diffusion and one-step learners in ``inherently_serial_problems``) build them here: He-initialised
weights ``[(W_1, b_1), ..., (W_n, b_n)]`` with ``W_i`` of shape ``(fan_in, fan_out)``, ReLU hidden
layers and a linear output, and an analytic FLOP count of one forward pass.
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

import jax
import jax.numpy as jnp

from ..core._validation import as_array, check_bool, check_int, check_key, is_traced

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["mlp_init", "mlp_apply", "mlp_flops"]


def _check_sizes(sizes) -> tuple[int, ...]:
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise ValueError(f"sizes must be a sequence of positive integers, got {sizes!r}")
    sizes = tuple(check_int("sizes[i]", s, minimum=1) for s in sizes)
    if len(sizes) < 2:
        raise ValueError(f"sizes must list at least an input and an output size, got {list(sizes)}")
    return sizes


def mlp_init(key, sizes: Sequence[int]):
    """He-initialised MLP parameters: ``W_i ~ N(0, 2 / fan_in)``, ``b_i = 0``.

    Parameters
    ----------
    key : jax.random key
        Split into one key per layer.
    sizes : sequence of int
        Layer widths, input first (at least two, each positive).

    Returns
    -------
    list of (W, b)
        ``W_i`` of shape ``(sizes[i], sizes[i+1])``, ``b_i`` of shape ``(sizes[i+1],)``.

    Raises
    ------
    ValueError
        If fewer than two sizes are given or a size is not a positive integer.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> import jax
    >>> params = mlp_init(jax.random.key(0), [3, 16, 1])
    >>> [W.shape for W, b in params]
    [(3, 16), (16, 1)]
    """
    key = check_key("key", key)
    return _mlp_init(key, _check_sizes(sizes))


@partial(jax.jit, static_argnums=1)  # one compiled program instead of many eager ops
def _mlp_init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        (jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
        for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def mlp_apply(params, h):
    """ReLU MLP with a linear last layer: ``h`` of shape ``(..., in)`` -> ``(..., out)``.

    Parameters
    ----------
    params : list of (W, b)
        As returned by :func:`mlp_init`.
    h : array, shape (..., in)
        Inputs; leading axes are batch axes.

    Returns
    -------
    array, shape (..., out)

    Raises
    ------
    ValueError
        If ``h`` (when concrete, i.e. outside ``jit``) is not a finite real array whose last axis
        matches the first layer's input size.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> params = mlp_init(jax.random.key(0), [3, 8, 2])
    >>> mlp_apply(params, jnp.ones((5, 3))).shape
    (5, 2)
    """
    if not is_traced(h):
        h = as_array("h", h, dtype=None)
        if h.ndim < 1 or h.shape[-1] != params[0][0].shape[0]:
            raise ValueError(f"h must have shape (..., {params[0][0].shape[0]}), got {h.shape}")
    for W, b in params[:-1]:
        h = jax.nn.relu(h @ W + b)
    W, b = params[-1]
    return h @ W + b


def mlp_flops(sizes: Sequence[int], *, output_nonlinearity: bool = False) -> int:
    """Floating-point operations of one forward pass of a dense MLP, per example.

    A dense layer ``in -> out`` costs ``2 * in * out`` (multiply and add), ``out`` bias additions and,
    for hidden layers, ``out`` ReLU evaluations. ``output_nonlinearity`` adds ``out`` for a final
    tanh/threshold.

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, input first.
    output_nonlinearity : bool, default False

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If fewer than two sizes are given or a size is not a positive integer.

    Examples
    --------
    >>> mlp_flops([3, 8, 2])   # (2*3*8 + 8 bias + 8 ReLU) + (2*8*2 + 2 bias)
    98
    """
    sizes = _check_sizes(sizes)
    output_nonlinearity = check_bool("output_nonlinearity", output_nonlinearity)
    total = 0
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        last = i == len(sizes) - 2
        total += 2 * m * n + n + (n if (not last or output_nonlinearity) else 0)
    return int(total)


_PROBE_EXEMPTIONS = {
    "mlp_apply": {"h": {"array_rank": "leading axes of h are batch axes: (..., in) is valid"}},
}
