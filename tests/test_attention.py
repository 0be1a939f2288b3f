"""The shared attention module against jax.nn.dot_product_attention and brute force."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from paperlib.models import attention
from paperlib.models.training import train

pytestmark = pytest.mark.usefixtures("x64")  # float64 references; see conftest.py


def _qkv(n=5, m=7, d=4, dv=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(size=(m, d)), rng.normal(size=(m, dv))


def test_softmax_attention_matches_jax_reference():
    q, k, v = _qkv(d=4, dv=4)
    ref = jax.nn.dot_product_attention(q[None, :, None, :], k[None, :, None, :], v[None, :, None, :])[0, :, 0, :]
    # jax's reference computes in float32 internally
    np.testing.assert_allclose(attention.softmax_attention(q, k, v), ref, rtol=1e-5, atol=1e-6)


def test_softmax_attention_brute_force_and_large_scale_is_stable():
    q, k, v = _qkv()
    beta = 0.7
    s = beta * q @ k.T
    w = np.exp(s) / np.exp(s).sum(1, keepdims=True)
    np.testing.assert_allclose(attention.softmax_attention(q, k, v, scale=beta), w @ v, rtol=1e-12)
    # huge inverse temperature: hard max, no overflow
    out = attention.softmax_attention(q, k, v, scale=1e6)
    np.testing.assert_allclose(out, v[np.argmax(q @ k.T, axis=1)], atol=1e-9)


def test_softmax_attention_mask_and_batch():
    q, k, v = _qkv()
    mask = np.zeros((5, 7), bool)
    mask[:, 2] = True
    np.testing.assert_allclose(attention.softmax_attention(q, k, v, mask=mask), np.tile(v[2], (5, 1)))
    qb, kb, vb = (np.stack([a, 2 * a]) for a in (q, k, v))
    out = attention.softmax_attention(qb, kb, vb)
    np.testing.assert_allclose(out[1], attention.softmax_attention(2 * q, 2 * k, 2 * v))


def test_chunked_equals_full():
    q, k, v = _qkv(n=37, m=11, d=2, dv=2, seed=1)
    full = attention.softmax_attention(q, k, v, scale=3.0)
    for chunk in (1, 8, 37, 100):
        np.testing.assert_allclose(
            attention.chunked_softmax_attention(q, k, v, scale=3.0, chunk_size=chunk), full, rtol=1e-12
        )


def test_linear_attention_brute_force():
    q, k, v = _qkv()
    np.testing.assert_allclose(attention.linear_attention(q, k, v, scale=0.5), 0.5 * (q @ k.T) @ v, rtol=1e-12)


def test_multi_head_equals_sum_of_single_heads_and_mask():
    key = jax.random.key(0)
    p = attention.init_multi_head(6, 3, 2, key=key)
    x = np.random.default_rng(0).normal(size=(4, 6))
    out = attention.multi_head_attention(p, x)
    ref = sum(
        attention.softmax_attention(x @ p.w_q[h], x @ p.w_k[h], x @ p.w_v[h], scale=1 / math.sqrt(2)) @ p.w_o[h]
        for h in range(3)
    )
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    masked = attention.multi_head_attention(p, x, head_mask=jnp.array([1.0, 0.0, 0.0]))
    ref0 = attention.softmax_attention(x @ p.w_q[0], x @ p.w_k[0], x @ p.w_v[0], scale=1 / math.sqrt(2)) @ p.w_o[0]
    np.testing.assert_allclose(masked, ref0, rtol=1e-10)
    _, w = attention.multi_head_attention(p, x, return_weights=True)
    np.testing.assert_allclose(w.sum(-1), 1.0)


def test_attention_bad_inputs():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="q and k"):
        attention.softmax_attention(q[:, :3], k, v)
    with pytest.raises(ValueError, match="k and v"):
        attention.softmax_attention(q, k, v[:3])
    with pytest.raises(ValueError, match="NaN"):
        attention.softmax_attention(q, k, np.full_like(v, np.nan))
    with pytest.raises(ValueError, match="chunk_size"):
        attention.chunked_softmax_attention(q, k, v, chunk_size=0)
    with pytest.raises(ValueError, match="2-D"):
        attention.chunked_softmax_attention(q[None], k, v)
    with pytest.raises(ValueError, match="num_heads"):
        attention.init_multi_head(4, 0, 2, key=jax.random.key(0))
    p = attention.init_multi_head(4, 2, 2, key=jax.random.key(0))
    with pytest.raises(ValueError, match="x_query"):
        attention.multi_head_attention(p, np.zeros((3, 5)))
    with pytest.raises(ValueError, match="head_mask"):
        attention.multi_head_attention(p, np.zeros((3, 4)), head_mask=jnp.ones(3))


def test_train_reaches_least_squares_solution():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    w_true = np.array([1.0, -2.0, 0.5])
    y = X @ w_true

    def loss(w, key):
        return jnp.mean((X @ w - y) ** 2)

    res = train(loss, jnp.zeros(3), optax.adam(0.05), steps=800, key=jax.random.key(0))
    np.testing.assert_allclose(res.params, w_true, atol=1e-4)
    assert res.losses.shape == (800,) and res.losses[-1] < res.losses[0]
    with pytest.raises(ValueError, match="steps"):
        train(loss, jnp.zeros(3), optax.adam(0.05), steps=0, key=jax.random.key(0))
