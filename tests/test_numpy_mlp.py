"""Tests of paperlib.scaling_laws.numpy_mlp: the hand-written gradient against central differences, budgets, pairing."""

import numpy as np
import pytest

from paperlib.scaling_laws import numpy_mlp as nm


def _loss(params, xb, yb):
    W1, b1, W2, b2 = params
    logits = np.maximum(xb @ W1 + b1, 0) @ W2 + b2
    logits = logits - logits.max(-1, keepdims=True)
    return np.mean(np.log(np.exp(logits).sum(-1)) - logits[np.arange(len(yb)), yb])


def test_mlp_gradient_matches_central_differences():
    rng = np.random.default_rng(0)
    p = nm.mlp_init_numpy(5, 7, 3, 2, rng=rng)
    p = (p[0], rng.standard_normal((2, 7)) * 0.1, p[2], rng.standard_normal((2, 3)) * 0.1)
    xb, yb = rng.standard_normal((2, 6, 5)), rng.integers(0, 3, (2, 6))
    new = nm.mlp_sgd_step(p, xb, yb, lr=1.0)
    h = 1e-6
    for r in range(2):
        one = [a[r].copy() for a in p]
        for k, a in enumerate(one):
            grad = (p[k][r] - new[k][r]).ravel()  # lr = 1: the step is minus the gradient
            for i in range(a.size):
                up, down = [b.copy() for b in one], [b.copy() for b in one]
                up[k].flat[i] += h
                down[k].flat[i] -= h
                fd = (_loss(up, xb[r], yb[r]) - _loss(down, xb[r], yb[r])) / (2 * h)
                assert fd == pytest.approx(grad[i], rel=1e-5, abs=1e-8)


def test_mlp_switch_runs_budget_pairing_and_horizon():
    rng = np.random.default_rng(7)
    X = rng.uniform(size=(300, 64))
    y = (X[:, :10].argmax(axis=1)).astype(int)  # a learnable ten-class rule
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
