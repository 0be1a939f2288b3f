r"""Attention, once for the whole book.

Softmax attention of queries :math:`Q\in\mathbb R^{n\times d}`, keys :math:`K\in\mathbb R^{m\times d}`
and values :math:`V\in\mathbb R^{m\times d_v}` at inverse temperature (scale) :math:`\beta` is

.. math:: \operatorname{Att}(Q,K,V) = \operatorname{softmax}_{\text{row}}\!\big(\beta\,QK^\top\big)\,V,

computed with the row maximum subtracted before exponentiating, so large entries (high inverse
temperature) never overflow. *Linear* attention drops the softmax,
:math:`\operatorname{Lin}(Q,K,V) = \beta\,QK^\top V`, and is computed as :math:`\beta\,Q(K^\top V)` in
:math:`O((n+m) d d_v)` time. Multi-head attention splits the model dimension into heads that attend
independently and mixes their outputs with :math:`W_O` (Vaswani et al., 2017).

Functions are written for one sequence; leading batch axes broadcast (``(..., n, d)``), or use
``jax.vmap``. Chapters: ``attention_heads_approximation``, ``softmax_vs_linear_attention``,
``fast_attention_large_entries``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_bool, check_int, check_key, check_real, is_traced

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "softmax_attention",
    "chunked_softmax_attention",
    "linear_attention",
    "MultiHeadParams",
    "init_multi_head",
    "multi_head_attention",
]


def _as_input(name, a, *, allow_bool=False):
    """A concrete input is checked (real, finite, non-empty); a tracer under ``jit`` passes through."""
    if is_traced(a):
        return a
    return jnp.asarray(as_array(name, a, dtype=None, allow_bool=allow_bool))


def _check_mask(mask, n, m):
    """A concrete mask must be boolean, broadcast to ``(..., n, m)`` and leave no query without a key."""
    if mask is None or is_traced(mask):
        return mask
    mk = as_array("mask", mask, dtype=bool)
    try:
        full = np.broadcast_to(mk, mk.shape[:-2] + (n, m) if mk.ndim >= 2 else (n, m))
    except ValueError:
        raise ValueError(f"mask must broadcast to (..., {n}, {m}), got shape {mk.shape}") from None
    if not full.any(axis=-1).all():
        raise ValueError("mask must allow every query at least one key (a row of mask has no True entry)")
    return jnp.asarray(mk)


def _check_qkv(q, k, v):
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim < 2:
            raise ValueError(f"{name} must have shape (..., length, dim), got {a.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must share the last (feature) dimension, got q {q.shape} and k {k.shape}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must have the same number of tokens (axis -2), got k {k.shape} and v {v.shape}"
        )
    if k.shape[-2] == 0:
        raise ValueError("k and v must contain at least one token")


def _scale(scale, d):
    if scale is None:
        return 1.0 / math.sqrt(d)
    if is_traced(scale):
        return scale
    return check_real("scale", scale)


def softmax_attention(q, k, v, *, scale=None, mask=None):
    r"""Exact softmax attention, row-max shifted.

    Parameters
    ----------
    q : array, shape (..., n, d)
        Queries.
    k : array, shape (..., m, d)
        Keys.
    v : array, shape (..., m, d_v)
        Values.
    scale : float, optional
        Inverse temperature :math:`\beta` multiplying :math:`QK^\top`; default :math:`1/\sqrt d`.
    mask : bool array, broadcastable to (..., n, m), optional
        ``True`` where a query may attend to a key. Every row needs at least one ``True``.

    Returns
    -------
    array, shape (..., n, d_v)

    Raises
    ------
    ValueError
        On mismatched shapes, no keys, non-finite, complex or boolean inputs, or a mask row without a
        ``True`` entry (values are checked outside ``jit`` only).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> q = jnp.array([[1.0, 0.0]]); k = jnp.array([[1.0, 0.0], [0.0, 1.0]]); v = jnp.array([[1.0], [3.0]])
    >>> round(float(softmax_attention(q, k, v, scale=0.0)[0, 0]), 4)   # uniform weights: mean of v
    2.0
    """
    q, k, v = _as_input("q", q), _as_input("k", k), _as_input("v", v)
    _check_qkv(q, k, v)
    mask = _check_mask(mask, q.shape[-2], k.shape[-2])
    s = _scale(scale, q.shape[-1]) * jnp.einsum("...nd,...md->...nm", q, k)
    if mask is not None:
        s = jnp.where(mask, s, -jnp.inf)
    s = s - jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    w = jnp.exp(s)
    w = w / jnp.sum(w, axis=-1, keepdims=True)
    return jnp.einsum("...nm,...mv->...nv", w, v)


def chunked_softmax_attention(q, k, v, *, scale=None, chunk_size: int = 1024):
    r"""Exact softmax attention in query chunks: :math:`O(n m)` time, :math:`O(\text{chunk}\cdot m)` memory.

    The reference implementation for long sequences (where the full ``(n, m)`` score matrix
    would not fit in memory). Unbatched: ``q`` is ``(n, d)``, ``k`` is ``(m, d)``, ``v`` is ``(m, d_v)``.

    Parameters
    ----------
    q, k, v : arrays of shape (n, d), (m, d), (m, d_v)
    scale : float, optional
        Inverse temperature; default :math:`1/\sqrt d`.
    chunk_size : int, default 1024
        Queries per chunk (positive). ``n`` is zero-padded up to a multiple of it.

    Returns
    -------
    array, shape (n, d_v)

    Raises
    ------
    ValueError
        On wrong ranks or shapes, non-finite, complex or boolean inputs, or a non-positive
        ``chunk_size``.

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> q = jnp.ones((5, 2)); k = jnp.ones((3, 2)); v = jnp.arange(3.0)[:, None]
    >>> chunked_softmax_attention(q, k, v, chunk_size=2).ravel().tolist()   # equal scores: mean of v
    [1.0, 1.0, 1.0, 1.0, 1.0]
    """
    q, k, v = _as_input("q", q), _as_input("k", k), _as_input("v", v)
    for name, a in (("q", q), ("k", k), ("v", v)):
        if a.ndim != 2:
            raise ValueError(f"{name} must be 2-D (length, dim), got shape {a.shape}")
    _check_qkv(q, k, v)
    chunk_size = check_int("chunk_size", chunk_size, minimum=1)
    beta = _scale(scale, q.shape[-1])
    n = q.shape[0]
    chunk = int(min(chunk_size, max(n, 1)))
    pad = (-n) % chunk
    qp = jnp.pad(q, ((0, pad), (0, 0))).reshape(-1, chunk, q.shape[1])
    return _chunked(qp, k, v, beta)[:n]


@jax.jit
def _chunked(qp, k, v, beta):
    def one(qc):
        s = beta * (qc @ k.T)
        s = s - jnp.max(s, axis=-1, keepdims=True)
        w = jnp.exp(s)
        return (w @ v) / jnp.sum(w, axis=-1, keepdims=True)

    out = jax.lax.map(one, qp)
    return out.reshape(-1, v.shape[1])


def linear_attention(q, k, v, *, scale=1.0):
    r"""Linear attention :math:`\beta\,QK^\top V`, computed as :math:`\beta\,Q(K^\top V)`.

    Parameters
    ----------
    q : array, shape (..., n, d)
    k : array, shape (..., m, d)
    v : array, shape (..., m, d_v)
    scale : float, default 1.0
        The factor :math:`\beta` (e.g. ``1/m`` for the averaged variant).

    Returns
    -------
    array, shape (..., n, d_v)

    Raises
    ------
    ValueError
        On mismatched shapes or non-finite, complex or boolean inputs (values checked outside ``jit``).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> q = jnp.array([[1.0, 2.0]]); k = jnp.array([[1.0, 0.0], [0.0, 1.0]]); v = jnp.array([[1.0], [3.0]])
    >>> float(linear_attention(q, k, v)[0, 0])   # 1*1 + 2*3
    7.0
    """
    q, k, v = _as_input("q", q), _as_input("k", k), _as_input("v", v)
    _check_qkv(q, k, v)
    scale = _scale(scale, q.shape[-1])
    kv = jnp.einsum("...md,...mv->...dv", k, v)
    return scale * jnp.einsum("...nd,...dv->...nv", q, kv)


class MultiHeadParams(NamedTuple):
    """Weights of one multi-head attention layer (no biases).

    Attributes
    ----------
    w_q, w_k : array, shape (heads, d_model, d_head)
    w_v : array, shape (heads, d_model, d_value)
    w_o : array, shape (heads, d_value, d_model)
    """

    w_q: jax.Array
    w_k: jax.Array
    w_v: jax.Array
    w_o: jax.Array


def init_multi_head(d_model: int, num_heads: int, d_head: int, *, d_value: int | None = None, key):
    """Initialise :class:`MultiHeadParams` with variance-preserving normal weights.

    Parameters
    ----------
    d_model, num_heads, d_head : int
        Positive sizes.
    d_value : int, optional
        Per-head value dimension; default ``d_head``.
    key : jax.random key
        Randomness (keyword-only).

    Raises
    ------
    ValueError
        If a size is not a positive integer.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> import jax
    >>> p = init_multi_head(8, 2, 4, key=jax.random.key(0))
    >>> p.w_q.shape, p.w_o.shape
    ((2, 8, 4), (2, 4, 8))
    """
    key = check_key("key", key)
    d_value = d_head if d_value is None else d_value
    d_model = check_int("d_model", d_model, minimum=1)
    num_heads = check_int("num_heads", num_heads, minimum=1)
    d_head = check_int("d_head", d_head, minimum=1)
    d_value = check_int("d_value", d_value, minimum=1)
    kq, kk, kv, ko = jax.random.split(key, 4)
    h = num_heads
    return MultiHeadParams(
        w_q=jax.random.normal(kq, (h, d_model, d_head)) / math.sqrt(d_model),
        w_k=jax.random.normal(kk, (h, d_model, d_head)) / math.sqrt(d_model),
        w_v=jax.random.normal(kv, (h, d_model, d_value)) / math.sqrt(d_model),
        w_o=jax.random.normal(ko, (h, d_value, d_model)) / math.sqrt(h * d_value),
    )


def multi_head_attention(params: MultiHeadParams, x_query, x_context=None, *, scale=None, head_mask=None, return_weights=False):
    r"""Multi-head softmax attention :math:`\sum_h \operatorname{Att}(X W_Q^h, Y W_K^h, Y W_V^h)\,W_O^h`.

    Parameters
    ----------
    params : MultiHeadParams
        Weights with ``heads`` leading axis.
    x_query : array, shape (n, d_model)
        Tokens that ask (queries).
    x_context : array, shape (m, d_model), optional
        Tokens attended to; default ``x_query`` (self-attention).
    scale : float, optional
        Inverse temperature; default ``1/sqrt(d_head)``.
    head_mask : array, shape (heads,), optional
        Multiplies each head's output (e.g. 0/1 to switch heads off while keeping parameter shapes
        fixed, so models with different head counts can be ``vmap``-ed together).
    return_weights : bool, default False
        Also return the attention weights, shape ``(heads, n, m)``.

    Returns
    -------
    array, shape (n, d_model) (and the weights if requested)

    Raises
    ------
    ValueError
        If the inputs' model dimension does not match the weights, ``head_mask`` has the wrong length,
        or an input is empty, non-finite, complex or boolean (values checked outside ``jit``).

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> p = init_multi_head(4, 2, 2, key=jax.random.key(0))
    >>> multi_head_attention(p, jnp.ones((3, 4))).shape
    (3, 4)
    """
    x_query = _as_input("x_query", x_query)
    x_context = x_query if x_context is None else _as_input("x_context", x_context)
    if head_mask is not None:
        head_mask = _as_input("head_mask", head_mask)
    return_weights = check_bool("return_weights", return_weights)
    h, d_model, d_head = params.w_q.shape
    for name, a in (("x_query", x_query), ("x_context", x_context)):
        if a.ndim != 2 or a.shape[-1] != d_model:
            raise ValueError(f"{name} must have shape (length, {d_model}), got {a.shape}")
    if head_mask is not None and jnp.shape(head_mask) != (h,):
        raise ValueError(f"head_mask must have shape ({h},), got {jnp.shape(head_mask)}")
    q = jnp.einsum("nd,hde->hne", x_query, params.w_q)
    k = jnp.einsum("md,hde->hme", x_context, params.w_k)
    v = jnp.einsum("md,hde->hme", x_context, params.w_v)
    beta = _scale(scale, d_head)
    s = beta * jnp.einsum("hne,hme->hnm", q, k)
    w = jax.nn.softmax(s, axis=-1)
    heads = jnp.einsum("hnm,hme->hne", w, v)
    if head_mask is not None:
        heads = heads * jnp.asarray(head_mask)[:, None, None]
    out = jnp.einsum("hne,hed->nd", heads, params.w_o)
    return (out, w) if return_weights else out


_BATCH = "leading batch axes broadcast: (..., length, dim) is a valid input"
_PROBE_EXEMPTIONS = {
    "softmax_attention": {a: {"array_rank": _BATCH} for a in ("q", "k", "v", "mask")},
    "linear_attention": {a: {"array_rank": _BATCH} for a in ("q", "k", "v")},
}
