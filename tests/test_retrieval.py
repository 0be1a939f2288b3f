"""Tests for paperlib.transformers.retrieval against independent computations (loops, Monte Carlo, identities)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from paperlib.transformers import retrieval as R
from paperlib.models.attention import MultiHeadParams


def _brute_target(x, d):
    """Plain-Python loop over sequences and retrievals."""
    p = x.shape[-1] // 2
    out = []
    for seq in x:
        us = []
        for i in range(d):
            s_star = min(range(len(seq)), key=lambda s: seq[s][i])
            us.append(2 * seq[s_star][p + i] - 1)
        out.append(sum(us) + 3 ** ((d - 1) / 2) * np.prod(us))
    return np.array(out)


@pytest.mark.parametrize("d,p", [(1, 1), (2, 3), (3, 3)])
def test_target_matches_brute_force(d, p):
    x = np.random.default_rng(d + p).uniform(size=(5, 4, 2 * p))
    np.testing.assert_allclose(R.retrieval_target(x, d), _brute_target(x, d), rtol=1e-5, atol=1e-6)


def test_target_variance_and_bottleneck_by_monte_carlo():
    # Var(y) = (D+1)/3; the predictor sum_{i<=h} u_i has NMSE (D+1-h)/(D+1). With N = 20 000 sequences the
    # sampling standard error of Var(y) (about 4/3 * sqrt(2/N) ~ 0.013) and of an NMSE (~0.01) are well
    # inside the tolerances (about 4 standard errors).
    d, n = 3, 20_000
    x = np.random.default_rng(0).uniform(size=(n, 6, 2 * d)).astype(np.float32)
    y = np.asarray(R.retrieval_target(x, d), dtype=float)
    assert abs(y.var() - (d + 1) / 3) < 0.05
    r, c = x[..., :d], x[..., d:]
    u = 2 * np.take_along_axis(c, r.argmin(1)[:, None, :], 1)[:, 0, :] - 1
    for h in (1, 2):
        nmse = np.mean((y - u[:, :h].sum(1)) ** 2) / y.var()
        assert abs(nmse - R.bottleneck_nmse(h, d)) < 0.04
    assert R.bottleneck_nmse(3, 3) == 0.0 and R.bottleneck_nmse(4, 3) == 0.0


@pytest.mark.parametrize("d,t", [(2, 8), (3, 8), (3, 3)])
def test_token_bottleneck_h1_matches_closed_form(d, t):
    # h = 1: NMSE = [(D-1)(1-g) + 1 - g^(D-1)]/(D+1), g = 1/(2T-1) (E[(1-rho)^(2(T-1))] = 1/(2T-1)).
    g = 1 / (2 * t - 1)
    exact = ((d - 1) * (1 - g) + 1 - g ** (d - 1)) / (d + 1)
    mc = R.token_bottleneck_nmse(1, d, t, n_samples=40_000, rng=np.random.default_rng(1))
    assert abs(mc - exact) < 0.03  # ~4 sampling standard errors at n = 40 000


def test_token_bottleneck_limits():
    rng = np.random.default_rng(2)
    # T = 1: every key is minimised by the single token, so the retrieved token carries every item.
    assert R.token_bottleneck_nmse(2, 3, 1, n_samples=1000, rng=rng) < 1e-12
    # T large: coincidences have probability ~1/T, so the floor approaches the items-only value.
    assert abs(R.token_bottleneck_nmse(2, 3, 100, n_samples=20_000, rng=rng) - R.bottleneck_nmse(2, 3)) < 0.03
    # Below the items-only value (extra information can only help), zero when h >= D.
    assert R.token_bottleneck_nmse(2, 3, 8, n_samples=20_000, rng=rng) < R.bottleneck_nmse(2, 3) - 0.03
    assert R.token_bottleneck_nmse(3, 3, 8) == 0.0


def _numpy_forward(params, x, mask):
    """Loop-over-heads NumPy version of the model (independent of paperlib.models.attention)."""
    p = {k: np.asarray(v, dtype=float) for k, v in params._asdict().items() if k != "attention"}
    a = params.attention
    e = x @ p["w_embed"] + p["b_embed"]                      # (B, T, E)
    out = np.zeros((x.shape[0], p["cls"].shape[0]))
    for i in range(len(mask)):
        q = p["cls"] @ np.asarray(a.w_q[i], float)           # (n,)
        k = e @ np.asarray(a.w_k[i], float)                  # (B, T, n)
        v = e @ np.asarray(a.w_v[i], float)
        s = k @ q / np.sqrt(q.shape[0])                      # (B, T)
        w = np.exp(s - s.max(1, keepdims=True))
        w /= w.sum(1, keepdims=True)
        out += mask[i] * np.einsum("bt,btn->bn", w, v) @ np.asarray(a.w_o[i], float)
    z = p["cls"] + out
    gelu = lambda t: 0.5 * t * (1 + np.tanh(np.sqrt(2 / np.pi) * (t + 0.044715 * t ** 3)))  # jax's default
    return gelu(z @ p["w_ff1"] + p["b_ff1"]) @ p["w_ff2"] + p["b_ff2"]


def _numpy_params(rng, dim=6, e=8, h=3, n=4, f=5):
    g = lambda *s: rng.normal(size=s).astype(np.float32) / np.sqrt(s[-2] if len(s) > 1 else 1)
    attn = MultiHeadParams(w_q=g(h, e, n), w_k=g(h, e, n), w_v=g(h, e, n), w_o=g(h, n, e))
    return R.RetrievalTransformer(g(dim, e), g(e), g(e), attn, g(e, f), g(f), g(f), np.float32(0.1))


def test_forward_matches_numpy_reference_and_properties():
    params = _numpy_params(np.random.default_rng(0))
    x = np.random.default_rng(1).uniform(size=(4, 5, 6)).astype(np.float32)
    mask = np.array([1.0, 0.0, 1.0])
    y = np.asarray(R.transformer_forward(params, x, mask))
    np.testing.assert_allclose(y, _numpy_forward(params, x.astype(float), mask), rtol=1e-4, atol=1e-4)
    # permutation invariance (no positional code) and "mask = zeroed W_O of the head"
    np.testing.assert_allclose(y, R.transformer_forward(params, x[:, ::-1], mask), rtol=1e-5, atol=1e-5)
    zeroed = params._replace(attention=params.attention._replace(w_o=params.attention.w_o * mask[:, None, None]))
    np.testing.assert_allclose(y, R.transformer_forward(zeroed, x), rtol=1e-5, atol=1e-5)


def test_init_transformer_shapes():
    # eval_shape traces without compiling (the initialiser's compile is covered by the grid test).
    p = jax.eval_shape(lambda k: R.init_transformer(6, d_model=8, num_heads=3, d_head=4, d_ff=5, key=k),
                       jax.random.key(0))
    assert p.w_embed.shape == (6, 8) and p.cls.shape == (8,) and p.w_ff1.shape == (8, 5)
    assert p.attention.w_q.shape == (3, 8, 4) and p.attention.w_o.shape == (3, 4, 8)


def test_memorizing_single_head_stores_whole_sequence():
    t, d = 5, 3
    x = np.random.default_rng(2).uniform(size=(7, t, d))
    z = R.single_head_features(R.memorizing_single_head(t, d), x)
    np.testing.assert_allclose(z, x.reshape(7, t * d), atol=1e-5)



def test_train_head_grids_shapes_order_and_equal_to_separate_grids_exactly():
    # one compilation for several grids must not change a single bit of any grid's result
    kw = dict(d_model=4, max_heads=2, d_head=2, d_ff=4, steps=3, batch=4, n_test=16)
    # (the second grid alone is the reference: it is the one whose position in the merged program moved;
    # every extra grid costs a compilation of its own, which dominates this test's time)
    keys = [jax.random.key(0), jax.random.key(5)]
    both = R.train_head_grids([((1, 2), (1, 2), 3), ((2,), (2,), 5)], 2, keys=keys, **kw)
    two = R.train_head_grid((2,), (2,), 2, seq_len=5, key=keys[1], **kw)
    # shapes and order of a grid (retrievals x heads x seeds, seeds fastest); every extra grid in a test costs a
    # compilation of its own, so the first grid of the merged run serves as the tiny run
    expected = list(itertools.product((1, 2), (1, 2), range(2)))
    assert list(zip(both[0].num_retrievals, both[0].num_heads, both[0].seed)) == expected
    assert both[0].nmse.shape == (2 * 2 * 2,) and np.all(np.isfinite(both[0].nmse))
    for a, b in zip(both[1], two):
        np.testing.assert_array_equal(a, b)

@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: R.retrieval_target(np.zeros((2, 3, 2)), 2), "num_retrievals"),
        (lambda: R.retrieval_target(np.zeros((2, 3, 3)), 1), "even"),
        (lambda: R.retrieval_target(np.full((2, 3, 2), np.nan), 1), "x must be finite"),
        (lambda: R.sample_retrieval(jax.random.key(0), 0, 3, 1), "batch"),
        (lambda: R.sample_retrieval(jax.random.key(0), 2, 3, 2, num_pairs=1), "num_pairs"),
        (lambda: R.bottleneck_nmse(0, 2), "num_heads"),
        (lambda: R.token_bottleneck_nmse(1, 2, 0), "seq_len"),
        (lambda: R.init_transformer(-1, key=jax.random.key(0)), "input_dim"),
        (lambda: R.train_head_grid((2,), (5,), 1, seq_len=4, key=jax.random.key(0)), "head_counts"),
        (lambda: R.train_head_grid((2,), (1,), 1, seq_len=4, learning_rate=-1.0, key=jax.random.key(0)),
         "learning_rate"),
        (lambda: R.train_head_grids([((2,), (1,))], 1, keys=[jax.random.key(0)]), "grids"),
        (lambda: R.train_head_grids(3, 1, keys=[jax.random.key(0)]), "grids"),
        (lambda: R.train_head_grids([((2,), (1,), 4)], 1, keys=[]), "keys"),
        (lambda: R.train_head_grids([((2,), (1,), 0)], 1, keys=[jax.random.key(0)]), "seq_len"),
        (lambda: R.memorizing_single_head(0, 2), "seq_len"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_forward_shape_errors():
    params = _numpy_params(np.random.default_rng(0), dim=4, e=4, h=2, n=2, f=3)
    with pytest.raises(ValueError, match="x must have shape"):
        R.transformer_forward(params, np.zeros((2, 3, 5)))
    with pytest.raises(ValueError, match="head_mask"):
        R.transformer_forward(params, np.zeros((2, 3, 4)), np.ones(3))
    with pytest.raises(ValueError, match="T\\*d"):
        R.single_head_features(R.memorizing_single_head(2, 2), np.zeros((1, 3, 2)))
