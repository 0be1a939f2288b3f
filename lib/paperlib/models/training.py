"""A jitted training loop: optax optimiser, ``lax.scan`` over steps, fresh minibatch keys.

Chapters that train small models (attention heads, softmax vs linear attention, score networks,
serial tasks) call :func:`train` instead of writing their own Python loop, so the whole run is one
compiled XLA program.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import optax

from ..core._validation import as_array, check_int, check_key, check_memory, is_traced

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["TrainResult", "train"]


class TrainResult(NamedTuple):
    """Output of :func:`train`.

    Attributes
    ----------
    params : pytree
        Final parameters.
    losses : array, shape (steps,)
        Loss at every step (before the update of that step).
    """

    params: Any
    losses: jax.Array


def train(
    loss_fn: Callable[[Any, jax.Array], jax.Array],
    params,
    optimizer: optax.GradientTransformation,
    *,
    steps: int,
    key,
) -> TrainResult:
    """Minimise ``loss_fn(params, key)`` with ``optimizer`` for ``steps`` steps inside ``lax.scan``.

    Parameters
    ----------
    loss_fn : callable ``(params, key) -> scalar``
        The objective; ``key`` is a fresh JAX key at each step, to draw that step's minibatch.
        Must be traceable by JAX.
    params : pytree of arrays
        Initial parameters.
    optimizer : optax.GradientTransformation
        E.g. ``optax.adam(1e-3)``.
    steps : int
        Number of optimisation steps (positive).
    key : jax.random key
        Keyword-only; split into one key per step.

    Returns
    -------
    TrainResult
        Final parameters and the loss trajectory.

    Raises
    ------
    ValueError
        If ``steps`` is not a positive integer (at most ``2**31 - 1``) or its keys and losses would
        exceed ``paperlib.core._validation.memory_limit``, if ``key`` is not a JAX PRNG key, or if a
        leaf of ``params`` is not finite or lies beyond float32's range.

    Notes
    -----
    The function is pure, so ``jax.vmap(lambda p, k: train(loss_fn, p, opt, steps=S, key=k))`` trains
    many models (seeds, head counts, ...) at once.

    Examples
    --------
    >>> import jax, jax.numpy as jnp, optax
    >>> loss = lambda p, key: jnp.sum((p - 3.0) ** 2)
    >>> res = train(loss, jnp.zeros(2), optax.sgd(0.1), steps=50, key=jax.random.key(0))
    >>> [round(float(x), 3) for x in res.params]
    [3.0, 3.0]
    """
    if not callable(loss_fn):
        raise ValueError(f"loss_fn must be callable, got {type(loss_fn).__name__}")
    steps = check_int("steps", steps, minimum=1)
    key = check_key("key", key)
    # one key per step (split up front) and one float32 loss per step
    check_memory("steps", steps * (2 * 8 + 4), what="a PRNG key and a loss per step")
    params = jax.tree_util.tree_map(
        lambda leaf: leaf if is_traced(leaf) else jnp.asarray(as_array("params (a leaf)", leaf, dtype=None)),
        params,
    )
    opt_state = optimizer.init(params)
    value_and_grad = jax.value_and_grad(loss_fn)

    def step(carry, k):
        p, s = carry
        loss, g = value_and_grad(p, k)
        updates, s = optimizer.update(g, s, p)
        p = optax.apply_updates(p, updates)
        return (p, s), loss

    keys = jax.random.split(key, int(steps))
    (params, _), losses = jax.lax.scan(step, (params, opt_state), keys)
    return TrainResult(params=params, losses=jnp.asarray(losses))


_PROBE_EXEMPTIONS = {
    "train": {"params": {"array_rank": "params is any pytree of arrays: a leaf may have any shape"}},
}
