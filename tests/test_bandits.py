"""paperlib.online.bandits against brute-force loops, exact expectations and known regret bounds."""

import math

import jax
import numpy as np
import pytest

from paperlib.online import bandits


def _exp3p_loop(losses, uniforms, eta, gamma, beta, graphs, index, lo=0.0, hi=1.0):
    """EXP3.P written round by round in float64 numpy, from the textbook formulas."""
    t_max, k = losses.shape
    cum = np.zeros(k)
    arms, probs = [], []
    for t in range(t_max):
        w = np.exp(eta * (cum - cum.max()))
        p = (1 - gamma) * w / w.sum() + gamma / k
        arm = min(int(np.searchsorted(np.cumsum(p), uniforms[t], side="right")), k - 1)
        graph = graphs[index[t]]
        q = np.array([sum(p[a] for a in range(k) if graph[a, j]) for j in range(k)])
        gains = (hi - losses[t]) / (hi - lo)
        est = np.array([(gains[j] / q[j] if graph[arm, j] else 0.0) + beta / p[j] for j in range(k)])
        cum = cum + est
        arms.append(arm)
        probs.append(p)
    return np.array(arms), np.array(probs)


def _threshold_graphs(k):
    return np.stack([[[a < j or c >= a for c in range(k)] for a in range(k)] for j in range(k + 1)])


# ---------------------------------------------------------------------------------------------
# Hedge
# ---------------------------------------------------------------------------------------------


def test_hedge_matches_loop():
    rng = np.random.default_rng(0)
    losses = rng.random((50, 4))
    p = bandits.hedge_probabilities(losses, eta=0.7)
    cum = np.zeros(4)
    for t in range(50):
        w = np.exp(-0.7 * cum)
        np.testing.assert_allclose(p[t], w / w.sum(), rtol=1e-12)
        cum += losses[t]


def test_hedge_regret_below_bound_on_adversarial_sequence():
    # an adversary that always gives loss 1 to the arm Hedge currently favours (ties -> arm 0)
    k, t_max = 5, 2000
    eta = math.sqrt(8 * math.log(k) / t_max)
    losses = np.zeros((t_max, k))
    cum = np.zeros(k)
    for t in range(t_max):
        fav = int(np.argmin(cum))          # Hedge's highest-probability arm
        losses[t, fav] = 1.0
        cum += losses[t]
    probs = bandits.hedge_probabilities(losses, eta=eta)
    reg = bandits.expected_regret(losses, probs)[-1]
    assert 0 < reg <= bandits.hedge_regret_bound(t_max, k, eta=eta)
    assert bandits.hedge_regret_bound(t_max, k, eta=eta) == pytest.approx(math.sqrt(t_max * math.log(k) / 2))


# ---------------------------------------------------------------------------------------------
# EXP3.P
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("feedback", ["bandit", "threshold", "full"])
def test_exp3p_matches_textbook_loop(feedback):
    rng = np.random.default_rng(1)
    t_max, k = 300, 5
    losses = rng.random((t_max, k))
    if feedback == "bandit":
        graphs, index = np.eye(k, dtype=bool)[None], np.zeros(t_max, int)
    elif feedback == "threshold":
        graphs, index = _threshold_graphs(k), rng.integers(1, k + 1, size=t_max)
    else:
        graphs, index = np.ones((1, k, k), bool), np.zeros(t_max, int)
    eta, gamma, beta = 0.05, 0.1, 0.01
    run = bandits.exp3p(losses, eta=eta, gamma=gamma, beta=beta, feedback_graphs=graphs,
                        feedback_index=index, rng=np.random.default_rng(7))
    uniforms = np.random.default_rng(7).random(t_max, dtype=np.float32)
    arms, probs = _exp3p_loop(losses, uniforms, eta, gamma, beta, graphs, index)
    np.testing.assert_array_equal(np.asarray(run.arms), arms)
    np.testing.assert_allclose(np.asarray(run.probs), probs, atol=2e-5)


def test_exp3p_batched_equals_single_runs():
    rng = np.random.default_rng(2)
    losses = rng.random((3, 200, 4))
    eta = np.array([0.05, 0.1, 0.2])
    batch = bandits.exp3p(losses, eta=eta, gamma=0.05, rng=np.random.default_rng(3))
    u = np.random.default_rng(3).random((3, 200), dtype=np.float32)
    for r in range(3):
        arms, _ = _exp3p_loop(losses[r], u[r], eta[r], 0.05, 0.0, np.eye(4, dtype=bool)[None], np.zeros(200, int))
        np.testing.assert_array_equal(np.asarray(batch.arms[r]), arms)


def test_gain_estimate_is_unbiased_exactly_and_p_weights_are_not():
    # exact expectation over the played arm, for every covering count j of the threshold graph
    k = 6
    p = np.array([0.05, 0.3, 0.1, 0.25, 0.2, 0.1])
    gains = np.linspace(0.9, 0.1, k)
    for j in range(1, k + 1):
        graph = _threshold_graphs(k)[j]
        q = np.asarray(bandits.observation_probabilities(p, graph))
        # closed form: q(k) = CDF(max(k, j - 1))
        np.testing.assert_allclose(q, np.cumsum(p)[np.maximum(np.arange(k), j - 1)], rtol=1e-6)
        mean = sum(p[a] * np.asarray(bandits.exp3p_gain_estimates(gains, p, graph[a], q, beta=0.0))
                   for a in range(k))
        np.testing.assert_allclose(mean, gains, rtol=1e-5)
        broken = sum(p[a] * np.asarray(bandits.exp3p_gain_estimates(gains, p, graph[a], p, beta=0.0))
                     for a in range(k))
        if j < k:   # some arm is observed by more than one arm: dividing by p over-counts it
            assert np.max(broken / gains) > 1.5


def test_unobserved_losses_are_never_read():
    rng = np.random.default_rng(4)
    t_max, k = 400, 5
    losses = rng.random((t_max, k))
    index = rng.integers(1, k + 1, size=t_max)
    graphs = _threshold_graphs(k)
    kw = dict(eta=0.1, gamma=0.05, beta=0.01, feedback_graphs=graphs, feedback_index=index)
    run = bandits.exp3p(losses, **kw, rng=np.random.default_rng(5))
    arms = np.asarray(run.arms)
    hidden = ~graphs[index, arms]                    # (T, K): not revealed by the played arm
    assert hidden.any()
    scrambled = np.where(hidden, rng.random((t_max, k)), losses)   # change every hidden loss
    again = bandits.exp3p(scrambled, **kw, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(np.asarray(again.arms), arms)
    np.testing.assert_array_equal(np.asarray(again.probs), np.asarray(run.probs))


def test_exp3p_has_sublinear_regret_and_meets_its_bound():
    # stochastic instance with one good arm; EXP3.P's theory parameters
    k, t_max = 5, 20_000
    rng = np.random.default_rng(6)
    means = np.array([0.5, 0.5, 0.3, 0.5, 0.5])
    losses = (rng.random((4, t_max, k)) < means).astype(float)
    par = bandits.exp3p_parameters(t_max, k, delta=0.05)
    run = bandits.exp3p(losses, eta=par.eta, gamma=par.gamma, beta=par.beta, rng=rng)
    reg = bandits.regret(losses, np.asarray(run.arms))
    assert np.all(reg[:, -1] <= bandits.exp3p_regret_bound(t_max, k, delta=0.05))
    assert np.all(reg[:, -1] / t_max < 0.5 * 0.16)       # the uniform learner's regret is 0.16 T
    assert np.mean(np.asarray(run.arms)[:, -2000:] == 2) > 0.5


def test_regret_functions_match_brute_force():
    rng = np.random.default_rng(8)
    losses = rng.random((30, 3))
    arms = rng.integers(3, size=30)
    probs = rng.dirichlet(np.ones(3), size=30)
    for t in range(30):
        best = losses[: t + 1].sum(0).min()
        assert bandits.regret(losses, arms)[t] == pytest.approx(losses[np.arange(t + 1), arms[: t + 1]].sum() - best)
        assert bandits.expected_regret(losses, probs)[t] == pytest.approx(np.sum(probs[: t + 1] * losses[: t + 1]) - best)


def test_exp3p_parameters_formulas():
    par = bandits.exp3p_parameters(1000, 10, delta=0.1)
    assert par.eta == pytest.approx(0.95 * math.sqrt(math.log(10) / 10_000))
    assert par.gamma == pytest.approx(1.05 * math.sqrt(10 * math.log(10) / 1000))
    assert par.beta == pytest.approx(math.sqrt(math.log(100) / 10_000))
    assert bandits.exp3p_parameters(2, 50).gamma == 1.0


def test_exp3p_probabilities_floor_and_jit():
    p = bandits.exp3p_probabilities(np.array([0.0, 100.0, -5.0]), eta=1.0, gamma=0.3)
    assert float(np.min(p)) >= 0.1 - 1e-7 and float(np.sum(p)) == pytest.approx(1.0, abs=1e-6)
    jitted = jax.jit(lambda g: bandits.exp3p_probabilities(g, eta=1.0, gamma=0.3))
    np.testing.assert_allclose(jitted(np.array([0.0, 100.0, -5.0])), p, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# bad input is loud
# ---------------------------------------------------------------------------------------------


def test_errors_name_the_argument():
    L = np.random.default_rng(0).random((10, 3))
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="eta"):
        bandits.exp3p(L, eta=0.0, gamma=0.1, rng=rng)
    with pytest.raises(ValueError, match="gamma"):
        bandits.exp3p(L, eta=0.1, gamma=1.5, rng=rng)
    with pytest.raises(ValueError, match="gamma"):
        bandits.exp3p(L, eta=0.1, gamma=0.0, beta=0.1, rng=rng)
    with pytest.raises(ValueError, match="losses"):
        bandits.exp3p(L + 2.0, eta=0.1, gamma=0.1, rng=rng)
    with pytest.raises(ValueError, match="losses"):
        bandits.exp3p(np.full((5, 3), np.nan), eta=0.1, gamma=0.1, rng=rng)
    with pytest.raises(ValueError, match="feedback_graphs"):
        bandits.exp3p(L, eta=0.1, gamma=0.1, feedback_graphs=np.zeros((1, 3, 3), bool), rng=rng)
    with pytest.raises(ValueError, match="feedback_index"):
        bandits.exp3p(L, eta=0.1, gamma=0.1, feedback_graphs=np.ones((1, 3, 3), bool),
                      feedback_index=np.ones(10, int), rng=rng)
    with pytest.raises(ValueError, match="rng"):
        bandits.exp3p(L, eta=0.1, gamma=0.1, rng=0)
    with pytest.raises(ValueError, match="loss_range"):
        bandits.exp3p(L, eta=0.1, gamma=0.1, loss_range=(1.0, 0.0), rng=rng)
    with pytest.raises(ValueError, match="eta"):
        bandits.hedge_probabilities(L, eta=-1.0)
    with pytest.raises(ValueError, match="losses"):
        bandits.hedge_probabilities(np.ones(3), eta=1.0)
    with pytest.raises(ValueError, match="arms"):
        bandits.regret(L, np.full(10, 3))
    with pytest.raises(ValueError, match="probs"):
        bandits.expected_regret(L, np.ones((10, 3)))
    with pytest.raises(ValueError, match="delta"):
        bandits.exp3p_parameters(100, 5, delta=1.0)
    with pytest.raises(ValueError, match="horizon"):
        bandits.exp3p_regret_bound(2.5, 5)
    with pytest.raises(ValueError, match="graph"):
        bandits.observation_probabilities(np.array([0.5, 0.5]), np.zeros((2, 2), bool))
    with pytest.raises(ValueError, match="probs"):
        bandits.observation_probabilities(np.array([0.5, 0.6]), np.eye(2, dtype=bool))
    with pytest.raises(ValueError, match="gains"):
        bandits.exp3p_gain_estimates(np.array([2.0, 0.0]), np.array([0.5, 0.5]), np.array([True, True]),
                                     np.array([0.5, 0.5]), beta=0.0)
    with pytest.raises(ValueError, match="beta"):
        bandits.exp3p_gain_estimates(np.array([1.0, 0.0]), np.array([0.5, 0.5]), np.array([True, True]),
                                     np.array([0.5, 0.5]), beta=-1.0)
