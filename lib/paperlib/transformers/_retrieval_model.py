"""Generalized :math:`D`-retrieval: the one-layer, :math:`h`-head transformer and the memorising single head.

This private module holds the model side of :mod:`paperlib.transformers.retrieval`: the parameters
of the paper's one-layer model (:class:`RetrievalTransformer`), their initialisation
(:func:`init_transformer`) and forward pass (:func:`transformer_forward`), and the explicit
single-head layer of embedding dimension :math:`E=Td` (:func:`memorizing_single_head`,
:func:`single_head_features`). Its public names are re-exported by
:mod:`paperlib.transformers.retrieval`, where they are documented; import them from there.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np  # noqa: F401  (used by the docstring examples)

from ..core._validation import as_array, check_int, check_key
from ..models.attention import MultiHeadParams, init_multi_head, multi_head_attention

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


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
