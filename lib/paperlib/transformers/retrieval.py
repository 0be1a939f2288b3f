r"""Generalized :math:`D`-retrieval and the one-layer, :math:`h`-head transformer that approximates it.

Yu, Bao, Jiang, Yu and Li (ICLR 2026, arXiv:2510.06662) define a *generalized D-retrieval task*: from a
sequence :math:`X_T=(x^{(1)},\dots,x^{(T)})`, :math:`x^{(s)}\in[0,1]^d`, pick for each of :math:`D` scoring
functions :math:`f_i` the token that minimises it, and combine the :math:`D` retrieved items with a
continuous outer function. They prove that a single attention layer with :math:`h\ge D` heads
approximates such targets with a parameter count independent of :math:`T` (one head per retrieval),
while with :math:`h<D` heads the parameter count must grow like :math:`(1/\varepsilon)^{cT}`.

This module holds our concrete member of that class (keys :math:`f_i(x)=r_i`, contents :math:`c_i`,
outer function "sum plus scaled product"), the paper's one-layer model built on
:func:`paperlib.models.attention.multi_head_attention`, a trainer that fits every (D, h, seed) configuration in one
compiled, ``vmap``-ed run (heads switched off by a 0/1 ``head_mask`` so all shapes agree), the
information-bottleneck error level for :math:`h<D`, and the explicit single-head "memorising" layer of
the paper's single-head result (embedding dimension :math:`E=Td`). Chapter: ``attention_heads_approximation``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from paperlib.core._validation import check_int, check_key, check_real
from paperlib.models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "retrieval_target",
    "sample_retrieval",
    "bottleneck_nmse",
    "token_bottleneck_nmse",
    "RetrievalTransformer",
    "init_transformer",
    "transformer_forward",
    "HeadGridResult",
    "train_head_grid",
    "train_head_grids",
    "memorizing_single_head",
    "single_head_features",
]

# the task and its bottleneck levels, and the model and the memorising single head, live in private modules
from ._retrieval_task import (  # noqa: F401
    _target,
    _target_jit,
    bottleneck_nmse,
    retrieval_target,
    sample_retrieval,
    token_bottleneck_nmse,
)
from ._retrieval_model import (  # noqa: F401
    RetrievalTransformer,
    _features_jit,
    _forward,
    _forward_jit,
    _init,
    _init_jit,
    init_transformer,
    memorizing_single_head,
    single_head_features,
    transformer_forward,
)


_PROBE_EXEMPTIONS = {
    "retrieval_target": {"x": {"array_rank": "leading axes of x are batch axes: (..., T, 2P) is valid"}},
}


# ----------------------------------------------------------------------------------------- training
class HeadGridResult(NamedTuple):
    """One trained model per (D, h, seed) configuration, flattened in that loop order.

    Attributes
    ----------
    num_retrievals, num_heads, seed : np.ndarray of int, shape (K,)
        The configuration of each model.
    nmse : np.ndarray, shape (K,)
        Test MSE divided by the empirical variance of the test targets.
    final_loss : np.ndarray, shape (K,)
        Mean training loss over the last 50 steps (fresh batches, so an unbiased risk estimate).
    """

    num_retrievals: np.ndarray
    num_heads: np.ndarray
    seed: np.ndarray
    nmse: np.ndarray
    final_loss: np.ndarray


def _grid_fn(seq_len, num_pairs, batch, steps, lr, n_test, sizes):
    opt = optax.adam(optax.cosine_decay_schedule(lr, steps))

    def one(d, mask, init_key, train_key, test_key):
        params = _init(init_key, 2 * num_pairs, *sizes)

        def loss(p, k):
            x = jax.random.uniform(k, (batch, seq_len, 2 * num_pairs))
            return jnp.mean((_forward(p, x, mask) - _target(x, d)) ** 2)

        res = train(loss, params, opt, steps=steps, key=train_key)
        xt = jax.random.uniform(test_key, (n_test, seq_len, 2 * num_pairs))
        yt = _target(xt, d)
        nmse = jnp.mean((_forward(res.params, xt, mask) - yt) ** 2) / jnp.var(yt)
        return nmse, jnp.mean(res.losses[-50:])

    return one


def _prepare_grid(retrievals, head_counts, num_seeds, seq_len, d_model, max_heads, d_head, d_ff, steps,
                  batch, learning_rate, n_test, key):
    """Validate one grid and build its configuration table and vmapped arguments (no compilation)."""
    max_heads = check_int("max_heads", max_heads, minimum=1)
    ds = [check_int("retrievals[i]", d, minimum=1) for d in retrievals]
    hs = [check_int("head_counts[i]", h, minimum=1, maximum=max_heads) for h in head_counts]
    if not ds or not hs:
        raise ValueError("retrievals and head_counts must be non-empty")
    for name, v in (("num_seeds", num_seeds), ("seq_len", seq_len), ("d_model", d_model),
                    ("d_head", d_head), ("d_ff", d_ff), ("steps", steps), ("batch", batch),
                    ("n_test", n_test)):
        check_int(name, v, minimum=1)
    check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    cfg = np.array([(d, h, s) for d in ds for h in hs for s in range(num_seeds)])
    masks = (np.arange(max_heads)[None, :] < cfg[:, 1:2]).astype(np.float32)
    # Re-key to rbg: one independent 128-bit state per (model, role).
    bits = jax.random.bits(key, (len(cfg), 3, 4), jnp.uint32)
    keys = jax.random.wrap_key_data(bits, impl="rbg")
    # Models with the same (D, seed) share the initialisation; models with the same D share the test set.
    d_idx = np.searchsorted(np.unique(cfg[:, 0]), cfg[:, 0])
    first = {tuple(r): i for i, r in reversed(list(enumerate(zip(d_idx, cfg[:, 2]))))}
    init_keys = keys[np.array([first[(a, b)] for a, b in zip(d_idx, cfg[:, 2])]), 0]
    test_first = {a: i for i, a in reversed(list(enumerate(d_idx)))}
    test_keys = keys[np.array([test_first[a] for a in d_idx]), 2]
    static = (int(seq_len), max(ds), int(batch), int(steps), float(learning_rate), int(n_test),
              (int(d_model), max_heads, int(d_head), int(d_ff)))
    args = (jnp.asarray(cfg[:, 0]), jnp.asarray(masks), init_keys, keys[:, 1], test_keys)
    return cfg, static, args


def _run_grids(prepared):
    """Train every prepared grid in ONE compiled XLA program (one compilation for all grids)."""
    fns = [jax.vmap(_grid_fn(*static)) for _, static, _ in prepared]
    run = jax.jit(lambda all_args: [fn(*a) for fn, a in zip(fns, all_args)])
    outs = run([a for _, _, a in prepared])
    return [HeadGridResult(cfg[:, 0], cfg[:, 1], cfg[:, 2], np.asarray(nmse, float), np.asarray(last, float))
            for (cfg, _, _), (nmse, last) in zip(prepared, outs)]


def train_head_grid(retrievals, head_counts, num_seeds: int, *, seq_len: int, d_model: int = 32,
                    max_heads: int = 4, d_head: int = 8, d_ff: int = 64, steps: int = 800,
                    batch: int = 128, learning_rate: float = 5e-3, n_test: int = 4096,
                    key) -> HeadGridResult:
    """Train one model per (D, h, seed) on fresh D-retrieval batches, all in one compiled ``vmap``.

    Every model has the same parameter shapes (``max_heads`` heads); "h heads" means heads
    ``h+1..max_heads`` are multiplied by 0 (``head_mask``), so the whole grid is a single XLA program
    (:func:`paperlib.models.training.train` inside ``jax.vmap``). All tokens carry ``P = max(retrievals)``
    (key, content) pairs; for smaller D the extra pairs are distractors. Adam with cosine learning-rate
    decay, a fresh minibatch every step (no reuse, so no overfitting), then NMSE on ``n_test`` fresh
    sequences (the same test set for every model with the same D).

    Parameters
    ----------
    retrievals : sequence of int
        Values of :math:`D` (each >= 1).
    head_counts : sequence of int
        Values of :math:`h`, each in ``[1, max_heads]``.
    num_seeds : int
        Independent initialisations per (D, h).
    seq_len : int
        :math:`T`.
    d_model, max_heads, d_head, d_ff : int
        :math:`E`, :math:`H_{\\max}`, :math:`n`, :math:`F`.
    steps, batch, n_test : int
        Optimiser steps, minibatch size, test-set size.
    learning_rate : float
        Peak Adam learning rate (> 0).
    key : jax.random key (keyword-only)
        All randomness. Internally re-keyed to the ``rbg`` PRNG, which compiles several times faster
        on CPU than threefry inside the training loop.

    Returns
    -------
    HeadGridResult

    Raises
    ------
    ValueError
        On empty or out-of-range ``retrievals``/``head_counts`` or non-positive sizes.
        Also if ``key`` is not a JAX PRNG key.

    See Also
    --------
    train_head_grids : several grids (e.g. several :math:`T`) in one compilation.

    Examples
    --------
    >>> res = train_head_grid([1], [1], 1, seq_len=2, d_model=4, max_heads=1, d_head=2, d_ff=4,
    ...                       steps=2, batch=2, n_test=8, key=jax.random.key(0))
    >>> res.num_retrievals.tolist(), res.num_heads.tolist(), res.nmse.shape
    ([1], [1], (1,))
    """
    key = check_key("key", key)
    return _run_grids([_prepare_grid(retrievals, head_counts, num_seeds, seq_len, d_model, max_heads, d_head,
                                     d_ff, steps, batch, learning_rate, n_test, key)])[0]


def train_head_grids(grids, num_seeds: int, *, d_model: int = 32, max_heads: int = 4, d_head: int = 8,
                     d_ff: int = 64, steps: int = 800, batch: int = 128, learning_rate: float = 5e-3,
                     n_test: int = 4096, keys) -> list:
    """Several :func:`train_head_grid` runs (e.g. at several sequence lengths) compiled as one XLA program.

    ``train_head_grids([(ds, hs, T)], ..., keys=[key])[0]`` equals
    ``train_head_grid(ds, hs, ..., seq_len=T, key=key)`` exactly (same keys, same random streams, same
    arithmetic); with several grids the only difference is that XLA compiles them together once
    instead of once per grid (on CPU the compilation of one grid costs about as much as training it).

    Parameters
    ----------
    grids : sequence of (retrievals, head_counts, seq_len)
        One triple per grid, with the meaning of the arguments of :func:`train_head_grid`.
    num_seeds : int
        Independent initialisations per (D, h), for every grid.
    d_model, max_heads, d_head, d_ff, steps, batch, learning_rate, n_test
        As in :func:`train_head_grid`, shared by every grid.
    keys : sequence of jax.random key (keyword-only)
        One key per grid: grid ``j`` is trained exactly as ``train_head_grid(..., key=keys[j])``.

    Returns
    -------
    list of HeadGridResult
        One per grid, in the order of ``grids``.

    Raises
    ------
    ValueError
        If ``grids`` is empty or not a sequence of triples, ``keys`` does not have one key per grid, or
        any grid fails the checks of :func:`train_head_grid`.

    Examples
    --------
    >>> res = train_head_grids([([1], [1], 2), ([1], [1], 3)], 1, d_model=4, max_heads=1, d_head=2, d_ff=4,
    ...                        steps=2, batch=2, n_test=8, keys=[jax.random.key(0), jax.random.key(1)])
    >>> [r.nmse.shape for r in res]
    [(1,), (1,)]
    """
    try:
        grids = [tuple(g) for g in grids]
    except TypeError:
        raise ValueError("grids must be a sequence of (retrievals, head_counts, seq_len) triples") from None
    if not grids or any(len(g) != 3 for g in grids):
        raise ValueError("grids must be a non-empty sequence of (retrievals, head_counts, seq_len) triples")
    try:
        keys = list(keys)
    except TypeError:
        raise ValueError("keys must be a sequence of jax.random keys, one per grid") from None
    if len(keys) != len(grids):
        raise ValueError(f"keys must hold one key per grid ({len(grids)}), got {len(keys)}")
    return _run_grids([_prepare_grid(ds, hs, num_seeds, t, d_model, max_heads, d_head, d_ff, steps, batch,
                                     learning_rate, n_test, k) for (ds, hs, t), k in zip(grids, keys)])
