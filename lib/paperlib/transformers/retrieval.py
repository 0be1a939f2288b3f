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

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from paperlib.core._validation import as_array, check_int, check_key, check_real, check_rng
from paperlib.models.attention import MultiHeadParams, init_multi_head, multi_head_attention
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


_PROBE_EXEMPTIONS = {
    "retrieval_target": {"x": {"array_rank": "leading axes of x are batch axes: (..., T, 2P) is valid"}},
}


# --------------------------------------------------------------------------------------------- task
def _target(x, num_retrievals):
    """Traceable target; ``num_retrievals`` may be a traced integer (so D can be ``vmap``-ed)."""
    p = x.shape[-1] // 2
    r, c = x[..., :p], x[..., p:]
    idx = jnp.argmin(r, axis=-2)  # (..., p): position of the smallest key r_i
    u = 2.0 * jnp.take_along_axis(c, idx[..., None, :], axis=-2)[..., 0, :] - 1.0
    active = jnp.arange(p) < num_retrievals
    kappa = 3.0 ** ((num_retrievals - 1) / 2.0)
    return jnp.sum(jnp.where(active, u, 0.0), -1) + kappa * jnp.prod(jnp.where(active, u, 1.0), -1)


_target_jit = jax.jit(_target, static_argnums=1)


def retrieval_target(x, num_retrievals: int):
    r"""The generalized :math:`D`-retrieval target of our instance.

    Each token is :math:`x=(r_1,\dots,r_P,c_1,\dots,c_P)\in[0,1]^{2P}`. For :math:`i\le D` let
    :math:`s_i^*=\arg\min_s r_i^{(s)}` (the paper's :math:`f_i(x)=r_i`) and
    :math:`u_i=2c_i^{(s_i^*)}-1`. The target is

    .. math:: y = \sum_{i=1}^{D} u_i + \kappa_D \prod_{i=1}^{D} u_i,\qquad \kappa_D = 3^{(D-1)/2}.

    Pairs :math:`D<i\le P` are distractors that the target ignores. For i.i.d. uniform tokens,
    :math:`u_i\sim U[-1,1]` independently, each term has variance :math:`1/3` and
    :math:`\operatorname{Var}(y)=(D+1)/3`.

    Parameters
    ----------
    x : array, shape (..., T, 2P)
        Token sequences (keys first, then contents).
    num_retrievals : int
        :math:`D`, with ``1 <= D <= P``.

    Returns
    -------
    array, shape (...)

    Raises
    ------
    ValueError
        If ``x`` has fewer than 2 dims, an odd last axis, NaNs, or ``num_retrievals`` is out of range.

    References
    ----------
    Yu et al. (2026), the generalized D-retrieval task (our choice of :math:`f_i` and outer function;
    the paper's exact synthetic instance was not available to us).

    Examples
    --------
    >>> x = np.array([[[0.2, 0.9], [0.1, 0.3], [0.5, 0.6]]])   # T = 3 tokens (r_1, c_1)
    >>> np.round(np.asarray(retrieval_target(x, 1), dtype=float), 4).tolist()
    [-0.8]
    """
    xa = as_array("x", x, dtype=None)
    if xa.ndim < 2 or xa.shape[-1] % 2 or xa.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., T, 2P) with an even, positive last axis; got {xa.shape}")
    if xa.shape[-2] < 1:
        raise ValueError("x must contain at least one token (axis -2)")
    check_int("num_retrievals", num_retrievals, minimum=1, maximum=xa.shape[-1] // 2)
    return _target_jit(jnp.asarray(x), num_retrievals)


def sample_retrieval(key, batch: int, seq_len: int, num_retrievals: int, *, num_pairs: int | None = None):
    """Draw ``batch`` i.i.d. uniform sequences and their D-retrieval targets.

    Parameters
    ----------
    key : jax.random key
    batch, seq_len : int
        :math:`B\\ge1` sequences of :math:`T\\ge1` tokens.
    num_retrievals : int
        :math:`D\\ge1`.
    num_pairs : int, optional
        :math:`P\\ge D` (key, content) pairs per token; default ``D``.

    Returns
    -------
    x : array, shape (B, T, 2P), uniform on [0, 1]
    y : array, shape (B,), see :func:`retrieval_target`

    Raises
    ------
    ValueError
        On non-positive sizes or ``num_pairs < num_retrievals``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x, y = sample_retrieval(jax.random.key(0), 2, 3, 2)
    >>> x.shape, y.shape
    ((2, 3, 4), (2,))
    """
    key = check_key("key", key)
    check_int("batch", batch, minimum=1)
    check_int("seq_len", seq_len, minimum=1)
    check_int("num_retrievals", num_retrievals, minimum=1)
    p = num_retrievals if num_pairs is None else check_int("num_pairs", num_pairs, minimum=num_retrievals)
    x = jax.random.uniform(key, (batch, seq_len, 2 * p))
    return x, _target(x, num_retrievals)


def bottleneck_nmse(num_heads: int, num_retrievals: int) -> float:
    r"""Normalised MSE of the best predictor that sees only :math:`\min(h, D)` of the :math:`D` items.

    If the model can retrieve only :math:`h<D` of the :math:`u_i` (each head at most one), the best it can
    do is the conditional mean :math:`\sum_{i\in S} u_i` (:math:`|S|=h`; the product term has conditional
    mean 0 because a missing :math:`u_j` is symmetric). The residual is :math:`D-h` sum terms plus the
    product term, each of variance :math:`1/3`, so

    .. math:: \mathrm{NMSE}(h) = \frac{D+1-h}{D+1}\quad (h<D), \qquad 0 \quad (h\ge D).

    Parameters
    ----------
    num_heads, num_retrievals : int
        :math:`h\ge1`, :math:`D\ge1`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On non-positive arguments.

    Examples
    --------
    >>> bottleneck_nmse(1, 3), bottleneck_nmse(3, 3)
    (0.75, 0.0)
    """
    h = check_int("num_heads", num_heads, minimum=1)
    d = check_int("num_retrievals", num_retrievals, minimum=1)
    return (d + 1 - h) / (d + 1) if h < d else 0.0


def token_bottleneck_nmse(num_heads: int, num_retrievals: int, seq_len: int, *, n_samples: int = 200_000,
                          rng: np.random.Generator | None = None) -> float:
    r"""Monte Carlo NMSE of the Bayes predictor that sees the *whole* tokens :math:`x^{(s_1^*)},\dots,x^{(s_h^*)}`.

    :func:`bottleneck_nmse` assumes each head delivers only its item :math:`u_i`. A head that copies
    the whole retrieved token also sees that token's other keys and contents: if the token happens to
    minimise a missing key :math:`r_j` too (probability about :math:`1/T`), it carries :math:`u_j`. Given
    the retrieved tokens, let :math:`\rho_j` be the smallest :math:`r_j` among them and :math:`m` the number
    of distinct retrieved tokens; the other :math:`T-m` keys :math:`r_j` are still i.i.d. uniform, so that
    token is the minimiser of :math:`r_j` with probability :math:`q_j=(1-\rho_j)^{T-m}`, and
    :math:`\mathbb E[u_j\mid\cdot] = q_j(2c_j-1)` with :math:`c_j` its content. The Bayes predictor is
    :math:`\sum_i \bar u_i + \kappa_D\prod_i \bar u_i` with :math:`\bar u_i` these conditional means
    (independent across :math:`j`). This is a floor below :func:`bottleneck_nmse` for a model whose
    heads retrieve one token each; for :math:`h=1` it equals
    :math:`[(D-1)(1-\gamma)+1-\gamma^{D-1}]/(D+1)` with :math:`\gamma=1/(2T-1)`. Our derivation, not the paper's.

    Parameters
    ----------
    num_heads, num_retrievals, seq_len : int
        :math:`h\ge1`, :math:`D\ge1`, :math:`T\ge1`.
    n_samples : int, default 200_000
        Monte Carlo sequences (relative standard error about :math:`\sqrt{2/n}` on the variance ratio).
    rng : numpy Generator, optional
        Source of randomness; default ``np.random.default_rng(0)``.

    Returns
    -------
    float
        0 when :math:`h\ge D`.

    Raises
    ------
    ValueError
        On non-positive sizes.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> round(token_bottleneck_nmse(1, 2, 4, n_samples=2000, rng=np.random.default_rng(0)), 3)
    0.595
    """
    if rng is not None:
        rng = check_rng("rng", rng)
    h = check_int("num_heads", num_heads, minimum=1)
    d = check_int("num_retrievals", num_retrievals, minimum=1)
    t = check_int("seq_len", seq_len, minimum=1)
    n = check_int("n_samples", n_samples, minimum=2)
    if h >= d:
        return 0.0
    rng = np.random.default_rng(0) if rng is None else rng
    x = rng.uniform(size=(n, t, 2 * d))
    r, c = x[..., :d], x[..., d:]
    idx = r.argmin(1)                                               # (n, D) minimiser of each key
    u = 2.0 * np.take_along_axis(c, idx[:, None, :], 1)[:, 0, :] - 1.0
    kappa = 3.0 ** ((d - 1) / 2)
    y = u.sum(1) + kappa * u.prod(1)
    ret = idx[:, :h]                                                # tokens retrieved by the h heads
    srt = np.sort(ret, axis=1)
    m = 1 + np.count_nonzero(np.diff(srt, axis=1), axis=1)          # distinct retrieved tokens
    rows = np.arange(n)[:, None]
    r_ret = r[rows, ret, :]                                         # (n, h, D) keys of retrieved tokens
    best = r_ret.argmin(1)                                          # (n, D) which retrieved token has smallest r_j
    rho = np.take_along_axis(r_ret, best[:, None, :], 1)[:, 0, :]
    tok = np.take_along_axis(ret, best, 1)                          # (n, D) token index
    c_tok = np.take_along_axis(c, tok[:, None, :], 1)[:, 0, :]      # content c_j of that token
    ubar = (1.0 - rho) ** (t - m)[:, None] * (2.0 * c_tok - 1.0)
    ubar[:, :h] = u[:, :h]
    pred = ubar.sum(1) + kappa * ubar.prod(1)
    return float(np.mean((y - pred) ** 2) / np.var(y))


# -------------------------------------------------------------------------------------------- model
class RetrievalTransformer(NamedTuple):
    r"""Parameters of the paper's one-layer model, read out at a trainable classification token.

    Attributes
    ----------
    w_embed : array, shape (input_dim, E)
        Token encoder :math:`\hat x^{(s)} = x^{(s)} W + b` (no positional code: the task is
        permutation invariant).
    b_embed : array, shape (E,)
    cls : array, shape (E,)
        The classification token :math:`\hat c_0`.
    attention : MultiHeadParams
        ``H_max`` heads of dimension :math:`n`; :math:`W_O` maps the concatenation back to :math:`E`.
    w_ff1 : array, shape (E, F)
    b_ff1 : array, shape (F,)
    w_ff2 : array, shape (F,)
    b_ff2 : array, shape ()
        The feed-forward block :math:`\hat F(z) = w_2^\top \mathrm{gelu}(z W_1 + b_1) + b_2`.
    """

    w_embed: jax.Array
    b_embed: jax.Array
    cls: jax.Array
    attention: MultiHeadParams
    w_ff1: jax.Array
    b_ff1: jax.Array
    w_ff2: jax.Array
    b_ff2: jax.Array


def _init(key, input_dim, d_model, num_heads, d_head, d_ff):
    k = jax.random.split(key, 5)
    return RetrievalTransformer(
        w_embed=jax.random.normal(k[0], (input_dim, d_model)) / math.sqrt(input_dim),
        b_embed=jnp.zeros(d_model),
        cls=jax.random.normal(k[1], (d_model,)),
        attention=init_multi_head(d_model, num_heads, d_head, key=k[2]),
        w_ff1=jax.random.normal(k[3], (d_model, d_ff)) / math.sqrt(d_model),
        b_ff1=jnp.zeros(d_ff),
        w_ff2=jax.random.normal(k[4], (d_ff,)) / math.sqrt(d_ff),
        b_ff2=jnp.zeros(()),
    )


_init_jit = jax.jit(_init, static_argnums=(1, 2, 3, 4, 5))


def init_transformer(input_dim: int, *, d_model: int = 32, num_heads: int = 4, d_head: int = 8,
                     d_ff: int = 64, key) -> RetrievalTransformer:
    """Initialise :class:`RetrievalTransformer` with variance-preserving normal weights.

    Parameters
    ----------
    input_dim : int
        Token dimension :math:`d` (``2P`` for :func:`sample_retrieval`).
    d_model, num_heads, d_head, d_ff : int
        :math:`E`, :math:`H_{\\max}`, :math:`n`, FFN width :math:`F` (all positive).
    key : jax.random key (keyword-only)

    Raises
    ------
    ValueError
        If a size is not a positive integer.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> params = init_transformer(4, d_model=8, num_heads=2, d_head=4, d_ff=16, key=jax.random.key(0))
    >>> params.w_embed.shape, params.attention.w_q.shape
    ((4, 8), (2, 8, 4))
    """
    key = check_key("key", key)
    for name, v in (("input_dim", input_dim), ("d_model", d_model), ("num_heads", num_heads),
                    ("d_head", d_head), ("d_ff", d_ff)):
        check_int(name, v, minimum=1)
    return _init_jit(key, input_dim, d_model, num_heads, d_head, d_ff)


def _forward(params, x, head_mask):
    e = x @ params.w_embed + params.b_embed  # (B, T, E)

    def attend(tokens):  # classification token queries the T tokens
        return multi_head_attention(params.attention, params.cls[None, :], tokens, head_mask=head_mask)[0]

    z = params.cls + jax.vmap(attend)(e)  # residual at the classification position, (B, E)
    return jax.nn.gelu(z @ params.w_ff1 + params.b_ff1) @ params.w_ff2 + params.b_ff2


_forward_jit = jax.jit(_forward)


def transformer_forward(params: RetrievalTransformer, x, head_mask=None):
    r"""The model's prediction :math:`\hat y = \hat F\big(\hat c_0 + W_O\,\mathrm{Concat}_i[\mathrm{head}_i]\big)`.

    Head :math:`i` computes :math:`\sum_t \operatorname{softmax}_t\big((W_{Q,i}\hat c_0)^\top W_{K,i}\hat x^{(t)}/\sqrt n\big)
    W_{V,i}\hat x^{(t)}` (Yu et al., 2026, the one-layer model of their setting).

    Parameters
    ----------
    params : RetrievalTransformer
    x : array, shape (B, T, input_dim)
    head_mask : array, shape (H_max,), optional
        0/1 per head; a model "with h heads" is ``head_mask = [1]*h + [0]*(H_max-h)``. Default: all on.

    Returns
    -------
    array, shape (B,)

    Raises
    ------
    ValueError
        If ``x`` has the wrong rank or feature size, contains NaN, or ``head_mask`` has the wrong shape.

    Examples
    --------
    >>> params = init_transformer(4, d_model=8, num_heads=2, d_head=4, d_ff=16, key=jax.random.key(0))
    >>> x = np.linspace(0.0, 1.0, 24).reshape(2, 3, 4)
    >>> y = transformer_forward(params, x, np.array([1.0, 0.0]))
    >>> y.shape, bool(np.all(np.isfinite(y)))
    ((2,), True)
    """
    xa = as_array("x", x)
    dim = params.w_embed.shape[0]
    if xa.ndim != 3 or xa.shape[-1] != dim or xa.shape[1] < 1:
        raise ValueError(f"x must have shape (B, T, {dim}) with T >= 1; got {xa.shape}")
    h = params.attention.w_q.shape[0]
    mask = jnp.ones(h) if head_mask is None else jnp.asarray(as_array("head_mask", head_mask, shape=(h,)))
    return _forward_jit(params, jnp.asarray(xa), mask)


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


# ------------------------------------------------------------------------------------ single head
def memorizing_single_head(seq_len: int, token_dim: int) -> RetrievalTransformer:
    r"""The explicit one-head layer that stores the whole input: embedding dimension :math:`E = Td`.

    Positional encoder :math:`\hat x^{(s)} = e_s\otimes x^{(s)}\in\mathbb R^{Td}` (token :math:`s` written into
    its own block), query weights zero (so the softmax is uniform, weight :math:`1/T`), values and output
    the identity scaled by :math:`T`. The head output at the classification token is then exactly
    :math:`\mathrm{vec}(X_T)`, so the feed-forward block sees the entire sequence and the approximation
    burden is the FFN's alone: the single-head, :math:`E=O(T)` memorisation regime of Yu et al. (2026).
    ``cls`` is zero and the FFN is left empty (``d_ff = 1`` of zeros): read ``z`` with
    :func:`single_head_features`.

    Parameters
    ----------
    seq_len, token_dim : int
        :math:`T`, :math:`d` (positive).

    Returns
    -------
    RetrievalTransformer
        With ``w_embed`` of shape ``(d, T*d)``; the positional block placement is done by
        :func:`single_head_features` (the encoder :math:`\phi(x, s)` of the paper may use :math:`s`).

    Raises
    ------
    ValueError
        On non-positive sizes.

    Examples
    --------
    >>> params = memorizing_single_head(3, 2)
    >>> params.w_embed.shape, params.attention.w_v.shape
    ((2, 6), (1, 6, 6))
    """
    t = check_int("seq_len", seq_len, minimum=1)
    d = check_int("token_dim", token_dim, minimum=1)
    e = t * d
    eye = jnp.eye(e)
    attn = MultiHeadParams(w_q=jnp.zeros((1, e, 1)), w_k=jnp.zeros((1, e, 1)), w_v=eye[None], w_o=t * eye[None])
    return RetrievalTransformer(jnp.zeros((d, e)), jnp.zeros(e), jnp.zeros(e), attn,
                                jnp.zeros((e, 1)), jnp.zeros(1), jnp.zeros(1), jnp.zeros(()))


def single_head_features(params: RetrievalTransformer, x):
    """Input of the FFN, :math:`\\hat c_0 + W_O\\,\\mathrm{head}`, for the positional encoder :math:`e_s\\otimes x^{(s)}`.

    Parameters
    ----------
    params : RetrievalTransformer
        From :func:`memorizing_single_head` (one head, ``E = T d``).
    x : array, shape (B, T, d)

    Returns
    -------
    array, shape (B, T*d)

    Raises
    ------
    ValueError
        If ``x`` does not have shape ``(B, T, d)`` with ``T d = E``, or contains NaN.

    Examples
    --------
    >>> x = np.arange(6.0).reshape(1, 3, 2)
    >>> np.asarray(single_head_features(memorizing_single_head(3, 2), x)).round(4).tolist()
    [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]
    """
    e = params.cls.shape[0]
    xa = as_array("x", x, ndim=3)
    b, t, d = xa.shape
    if t * d != e:
        raise ValueError(f"x must have shape (B, T, d) with T*d = E = {e}; got {xa.shape}")
    return _features_jit(params, jnp.asarray(xa))


@jax.jit
def _features_jit(params, x):
    b, t, d = x.shape
    tokens = jnp.einsum("st,btd->bstd", jnp.eye(t), x).reshape(b, t, t * d)  # e_s ⊗ x^(s)
    att = jax.vmap(lambda tok: multi_head_attention(params.attention, params.cls[None, :], tok)[0])(tokens)
    return params.cls + att
