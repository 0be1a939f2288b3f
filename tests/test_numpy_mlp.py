"""Tests of paperlib.numpy_mlp: the hand-written gradient against jax.grad, budgets and pairing."""

import numpy as np
import pytest

from paperlib import numpy_mlp as nm


def test_mlp_gradient_matches_jax_grad(x64):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(0)
    p = nm.mlp_init_numpy(5, 7, 3, 2, rng=rng)
    p = (p[0], rng.standard_normal((2, 7)) * 0.1, p[2], rng.standard_normal((2, 3)) * 0.1)
    xb, yb = rng.standard_normal((2, 6, 5)), rng.integers(0, 3, (2, 6))
    new = nm.mlp_sgd_step(p, xb, yb, lr=1.0)

    def loss(W1, b1, W2, b2, x, y):
        logits = jnp.maximum(x @ W1 + b1, 0) @ W2 + b2
        return jnp.mean(jax.nn.logsumexp(logits, -1) - logits[jnp.arange(len(y)), y])

    for r in range(2):
        g = jax.grad(loss, argnums=(0, 1, 2, 3))(*(jnp.asarray(a[r]) for a in p), jnp.asarray(xb[r]), yb[r])
        for a, b, ga in zip(p, new, g):
            np.testing.assert_allclose(a[r] - b[r], np.asarray(ga), rtol=1e-9, atol=1e-12)


def test_mlp_switch_runs_budget_pairing_and_horizon():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16, y[:300]
    kw = dict(width=8, lr=0.1, batch_small=4, batch_large=16, data=640, runs=3, every=8)
    a = nm.mlp_switch_runs(X, y, fractions=[0.0, 0.5, 1.0], rng=np.random.default_rng(3), **kw)
    b = nm.mlp_switch_runs(X, y, fractions=[0.0, 0.5, 1.0], rng=np.random.default_rng(3), horizon=200, **kw)
    np.testing.assert_array_equal(a.final_loss, b.final_loss)  # the horizon does not change the budget runs
    assert [len(s) for s in a.steps] == [5, 12, 20]  # 40 steps; 80 + 16 (each phase a multiple of 8); 160 steps; / 8
    assert [len(s) for s in b.steps] == [25, 25, 25]
    assert np.all(np.isfinite(a.final_loss)) and a.final_loss.shape == (3, 3)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="batch_large"):
        nm.mlp_switch_runs(np.ones((4, 2)), [0, 1, 0, 1], width=2, lr=0.1, batch_small=4, batch_large=4,
                           data=100, fractions=[0.5], runs=2, every=1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        nm.mlp_init_numpy(2, 2, 2, 2, rng=1)
    p = nm.mlp_init_numpy(3, 4, 2, 1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="lr"):
        nm.mlp_sgd_step(p, np.ones((1, 5, 3)), np.zeros((1, 5), int), float("nan"))
    with pytest.raises(ValueError, match="yb"):
        nm.mlp_sgd_step(p, np.ones((1, 5, 3)), np.full((1, 5), 2), 0.1)
    with pytest.raises(ValueError, match="xb"):
        nm.mlp_sgd_step(p, np.ones((1, 5, 4)), np.zeros((1, 5), int), 0.1)
