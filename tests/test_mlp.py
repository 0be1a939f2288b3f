"""The shared MLP against a hand-written forward pass, its He initialisation, and its FLOP count."""

import jax
import numpy as np
import pytest

from paperlib.models.mlp import mlp_apply, mlp_flops, mlp_init


def test_mlp_matches_numpy_forward_and_init_scale():
    params = mlp_init(jax.random.key(0), (400, 300, 2))
    assert [w.shape for w, _ in params] == [(400, 300), (300, 2)]
    # He init: the empirical variance of W_1 is 2 / fan_in within sampling error (120k entries)
    assert np.var(np.asarray(params[0][0])) == pytest.approx(2 / 400, rel=0.02)
    x = np.random.default_rng(0).normal(size=(5, 400)).astype(np.float32)
    (w1, b1), (w2, b2) = [(np.asarray(w), np.asarray(b)) for w, b in params]
    ref = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(np.asarray(mlp_apply(params, x)), ref, rtol=1e-4, atol=1e-4)


def test_mlp_flops_by_hand_and_bad_sizes():
    # 3->4 (ReLU) ->1: 2*3*4 + 4 + 4, then 2*4*1 + 1 (+1 with an output nonlinearity)
    assert mlp_flops((3, 4, 1)) == 24 + 4 + 4 + 8 + 1
    assert mlp_flops((3, 4, 1), output_nonlinearity=True) == 24 + 4 + 4 + 8 + 1 + 1
    for bad in [(3,), (3, 0, 1), (3, -1)]:
        with pytest.raises(ValueError, match="sizes"):
            mlp_init(jax.random.key(0), bad)
        with pytest.raises(ValueError, match="sizes"):
            mlp_flops(bad)
