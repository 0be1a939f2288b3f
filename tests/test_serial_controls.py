"""Unit tests of paperlib.serial_controls against independent computations."""

import itertools

import jax
import numpy as np
import pytest

from paperlib import serial as S
from paperlib import serial_controls as C


def sharp_rule_params(gain=40.0):
    """One-hot hidden layer over the 8 neighbourhoods; output logit +-gain/2 from the Rule 110 table."""
    corners = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))
    W2 = ((2.0 * S.rule_table(110) - 1.0) * gain)[:, None]
    return [(corners.T, -2.0 * np.ones(8)), (W2, np.array([-gain / 2]))]


def test_soft_rollout_with_sharp_rule_matches_the_automaton():
    # with a saturated sigmoid the soft rollout is the hard automaton: its centre logits must have the
    # sign of the true labels at every depth (independent check: centre_trajectory)
    x = np.random.default_rng(0).integers(0, 2, size=(64, 13))
    logits = np.asarray(C.soft_rollout(sharp_rule_params(), x))
    assert logits.shape == (64, 6)
    np.testing.assert_array_equal((logits > 0).astype(int), np.asarray(S.centre_trajectory(x, 6)))


def test_soft_rollout_centre_depends_only_on_light_cone():
    # zero padding must not reach the centre within (W - 1) / 2 steps: changing cells outside the
    # light cone of depth L leaves the depth-L logit unchanged
    rng = np.random.default_rng(1)
    params = [(rng.standard_normal((3, 5)), rng.standard_normal(5)), (rng.standard_normal((5, 1)), np.zeros(1))]
    x = rng.integers(0, 2, size=(8, 11))
    y = x.copy()
    y[:, :3] = 1 - y[:, :3]   # cells 0..2 lie outside the cone of depth L <= 2 around centre 5
    a, b = np.asarray(C.soft_rollout(params, x)), np.asarray(C.soft_rollout(params, y))
    np.testing.assert_allclose(a[:, :2], b[:, :2], rtol=1e-6)
    assert not np.allclose(a[:, 4], b[:, 4])


def test_end_to_end_training_decreases_loss_and_shapes():
    params, losses = C.train_serial_end_to_end(jax.random.key(0), 1, n_models=2, hidden=8, steps=150)
    assert losses.shape == (2, 150) and params[0][0].shape == (2, 3, 8)
    assert float(losses[:, -20:].mean()) < float(losses[:, :20].mean())


def test_xla_flop_counts_agree_with_analytic_counts():
    ps = S.mlp_init(jax.random.key(0), [3, 16, 1])
    po = S.mlp_init(jax.random.key(1), [33, 128, 128, 1])
    s, o = C.xla_flop_counts(ps, po, L=16, width=33)
    # within 5 % of the analytic counts (XLA also counts the 2x - 1 encoding)
    assert s == pytest.approx(S.serial_flops(16), rel=0.05)
    assert o == pytest.approx(S.oneshot_flops(), rel=0.05)


def test_value_errors():
    with pytest.raises(ValueError, match="x"):
        C.soft_rollout(sharp_rule_params(), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="x"):
        C.soft_rollout(sharp_rule_params(), np.full((2, 5), 2))
    with pytest.raises(ValueError, match="L"):
        C.train_serial_end_to_end(jax.random.key(0), 17)
    with pytest.raises(ValueError, match="n_models"):
        C.train_serial_end_to_end(jax.random.key(0), 2, n_models=0)
    with pytest.raises(ValueError, match="learning_rate"):
        C.train_serial_end_to_end(jax.random.key(0), 2, learning_rate=-1.0)
    with pytest.raises(ValueError, match="width"):
        C.xla_flop_counts([], [], L=2, width=8)
