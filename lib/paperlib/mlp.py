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

from ._validation import check_int

__all__ = ["mlp_init", "mlp_apply", "mlp_flops"]


def _check_sizes(sizes) -> tuple[int, ...]:
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
    """
    return _mlp_init(key, _check_sizes(sizes))


@partial(jax.jit, static_argnums=1)  # one compiled program instead of many eager ops
def _mlp_init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [
        (jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
        for k, m, n in zip(keys, sizes[:-1], sizes[1:])
    ]


def mlp_apply(params, h):
    """ReLU MLP with a linear last layer: ``h`` of shape ``(..., in)`` -> ``(..., out)``."""
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
    """
    sizes = _check_sizes(sizes)
    total = 0
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:])):
        last = i == len(sizes) - 2
        total += 2 * m * n + n + (n if (not last or output_nonlinearity) else 0)
    return int(total)
