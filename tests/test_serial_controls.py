"""Unit tests of paperlib.complexity.serial_controls against independent computations."""

import jax
import numpy as np
import pytest

from paperlib.complexity import serial as S
from paperlib.complexity import serial_controls as C


def sharp_rule_params(gain=40.0):
    """The module's hand-built Rule 110 step, with a gain that saturates the sigmoid."""
    return S.exact_rule_params(110, gain=gain)


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


def test_learning_curve_matches_train_oneshot_and_its_own_final_accuracy():
    # same keys as paperlib.complexity.serial.train_oneshot, so the same final parameters (independent code path);
    # the last recorded accuracy is that of the final parameters on x_eval
    # tiny sizes: compilation dominates the cost of this test; train_oneshot's arguments are those of
    # test_serial.py::test_vmapped_training_and_sampler_shapes, so a shared session reuses its program
    x = np.random.default_rng(3).integers(0, 2, size=(32, 5))
    depths = np.array([1, 2])
    # model 0 learns Rule 110 (compared with train_oneshot), model 1 Rule 90 on the same inputs
    p, losses, acc = C.oneshot_learning_curve(jax.random.key(0), depths, x, rules=[110, 90], hidden=2, layers=1,
                                              steps=2, batch=2, eval_every=1)
    q, lq = S.train_oneshot(jax.random.key(0), depths, width=5, hidden=2, layers=1, steps=2, batch=2)
    assert losses.shape == (2, 2) and acc.shape == (2, 2)
    np.testing.assert_allclose(np.asarray(losses)[0], np.asarray(lq)[0], rtol=1e-5, atol=1e-6)
    for (a, _), (b, _) in zip(p, q):
        np.testing.assert_allclose(np.asarray(a)[0], np.asarray(b)[0], rtol=1e-5, atol=1e-6)
    y = np.stack([np.asarray(S.centre_trajectory(x, 2, rule=r))[:, L - 1] for r, L in zip([110, 90], depths)])
    final = [np.mean((np.asarray(S.oneshot_logits([(w[j], b[j]) for w, b in p], x)) > 0) == y[j]) for j in range(2)]
    np.testing.assert_allclose(np.asarray(acc)[:, -1], final, atol=1e-6)


@pytest.mark.parametrize("L", [1, 3, 4, 7, 8])
def test_rule90_centre_is_parity_of_odd_binomial_cells(L):
    # Rule 90 is linear over GF(2): after L steps the centre is the XOR of x[c - L + 2i] over the i with
    # binomial(L, i) odd, 2 ** popcount(L) cells (independent closed form, against the automaton)
    from math import comb
    x = np.random.default_rng(L).integers(0, 2, size=(128, 17))
    cells = [8 - L + 2 * i for i in range(L + 1) if comb(L, i) % 2]
    assert len(cells) == 2 ** bin(L).count("1")
    np.testing.assert_array_equal(np.asarray(S.centre_trajectory(x, 8, rule=90))[:, L - 1], x[:, cells].sum(axis=1) % 2)


def test_learning_curve_value_errors():
    x = np.zeros((4, 9), dtype=int)
    with pytest.raises(ValueError, match="eval_every"):
        C.oneshot_learning_curve(jax.random.key(0), [1], x, steps=10, eval_every=3)
    with pytest.raises(ValueError, match="x_eval"):
        C.oneshot_learning_curve(jax.random.key(0), [1], np.zeros((4, 8), dtype=int), steps=10, eval_every=5)
    with pytest.raises(ValueError, match="depths"):
        C.oneshot_learning_curve(jax.random.key(0), [5], x, steps=10, eval_every=5)
    with pytest.raises(ValueError, match="rules"):
        C.oneshot_learning_curve(jax.random.key(0), [1], x, rules=256, steps=10, eval_every=5)
    with pytest.raises(ValueError, match="rules"):
        C.oneshot_learning_curve(jax.random.key(0), [1], x, rules=[110, 90], steps=10, eval_every=5)
