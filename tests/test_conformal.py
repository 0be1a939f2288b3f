"""paperlib.online.conformal against brute force, exchangeability, deterministic bounds and leak tests."""

import numpy as np
import pytest

from paperlib.online import bandits
from paperlib.online import conformal as cf
from paperlib.online import conformal_streams as cs


def test_coverage_table_matches_loops():
    rng = np.random.default_rng(0)
    probs, labels = cs.synthetic_stream("iid", 40, num_classes=4, rng=rng)
    grid = cf.threshold_grid(5, low=0.05, high=0.8)
    tab = cf.coverage_table(probs, labels, grid)
    for t in range(40):
        for k, pi in enumerate(grid):
            pred_set = [y for y in range(4) if probs[t, y] >= pi]
            assert tab.sizes[t, k] == len(pred_set)
            assert tab.misses[t, k] == (labels[t] not in pred_set)
        assert tab.num_covering[t] == sum(labels[t] in [y for y in range(4) if probs[t, y] >= pi] for pi in grid)
    # nested sets: misses non-decreasing and sizes non-increasing along the grid
    assert np.all(np.diff(tab.misses.astype(int), axis=1) >= 0)
    assert np.all(np.diff(tab.sizes, axis=1) <= 0)
    assert not tab.misses[:, 0].any()


def test_interval_table_matches_definition():
    res = np.array([0.0, 30.0, 99.0, 150.0])
    grid = np.array([0.0, 0.25, 0.5, 0.9])
    tab = cf.interval_coverage_table(res, grid, max_radius=100.0)
    radius = (1 - grid) * 100.0
    np.testing.assert_array_equal(tab.misses, res[:, None] > radius[None, :])
    np.testing.assert_allclose(tab.sizes[0], 2 * radius)
    assert tab.size_scale == 200.0


def test_feedback_graphs_match_definition():
    k = 5
    graphs = cf.threshold_feedback_graphs(k)
    for j in range(k + 1):
        for a in range(k):
            for c in range(k):
                covered = a < j
                assert graphs[j, a, c] == (covered or c >= a)


def test_learner_never_uses_the_score_after_a_miss():
    """Changing s_t on rounds where the learner missed (keeping it a miss) must not change the run."""
    rng = np.random.default_rng(1)
    t_max, k = 600, 8
    probs, labels = cs.synthetic_stream("shift", t_max, rng=rng)
    grid = cf.threshold_grid(k)
    tab = cf.coverage_table(probs, labels, grid)
    kw = dict(lam=0.1, eta=0.2, gamma=0.05, beta=0.0, unlock=True)
    run = cf.online_conformal_bandit(tab, **kw, rng=np.random.default_rng(2))
    arms = np.asarray(run.arms)
    missed = tab.misses[np.arange(t_max), arms]
    assert missed.sum() > 20
    # move the true label's score anywhere below the played threshold: j_t changes, m_t(a_t) does not
    new_j = np.where(missed, rng.integers(1, np.maximum(arms, 1) + 1), tab.num_covering)
    new_misses = np.arange(k)[None, :] >= new_j[:, None]
    tab2 = cf.CoverageTable(new_misses, tab.sizes, new_j, tab.size_scale)
    assert (tab2.num_covering != tab.num_covering).any()
    run2 = cf.online_conformal_bandit(tab2, **kw, rng=np.random.default_rng(2))
    np.testing.assert_array_equal(np.asarray(run2.arms), arms)
    np.testing.assert_allclose(np.asarray(run2.probs), np.asarray(run.probs), rtol=1e-6)


def test_bandit_feedback_reads_only_the_played_arm():
    rng = np.random.default_rng(3)
    probs, labels = cs.synthetic_stream("iid", 500, rng=rng)
    tab = cf.coverage_table(probs, labels, cf.threshold_grid(6))
    kw = dict(lam=0.1, eta=0.2, gamma=0.05, unlock=False)
    arms = np.asarray(cf.online_conformal_bandit(tab, **kw, rng=np.random.default_rng(4)).arms)
    flip = np.ones_like(tab.misses)
    flip[np.arange(500), arms] = False                     # keep only the played arm's outcome
    scrambled = np.where(flip, rng.random(tab.misses.shape) < 0.5, tab.misses)
    tab2 = cf.CoverageTable(scrambled, tab.sizes, tab.num_covering, tab.size_scale)
    arms2 = np.asarray(cf.online_conformal_bandit(tab2, **kw, rng=np.random.default_rng(4)).arms)
    np.testing.assert_array_equal(arms2, arms)


def test_miscoverage_bound_holds_for_any_arm_sequence():
    rng = np.random.default_rng(5)
    probs, labels = cs.synthetic_stream("periodic", 3000, rng=rng)
    tab = cf.coverage_table(probs, labels, cf.threshold_grid(10))
    for lam in (0.0, 0.1, 0.5):
        losses = cf.conformal_losses(tab, lam=lam)
        for _ in range(5):
            arms = rng.integers(10, size=3000)
            mc = tab.misses[np.arange(3000), arms].mean()
            size = (tab.sizes[np.arange(3000), arms] / tab.size_scale).mean()
            reg = bandits.regret(losses, arms)[-1]
            assert mc <= cf.miscoverage_bound(reg, size, lam=lam, horizon=3000) + 1e-12
        # equality for the full-set arm itself: MC = 0 and regret = lam T - best
        arms = np.zeros(3000, int)
        reg = bandits.regret(losses, arms)[-1]
        assert cf.miscoverage_bound(reg, 1.0, lam=lam, horizon=3000) == pytest.approx(reg / 3000)


def test_split_conformal_coverage_on_exchangeable_data():
    rng = np.random.default_rng(6)
    n, alpha, reps = 99, 0.1, 20_000
    scores = rng.random((reps, n + 1))
    taus = np.array([cf.split_conformal_threshold(s[:n], alpha=alpha) for s in scores[:2000]])
    miss = (scores[:2000, n] < taus)
    # exact: P(miss) = floor(alpha (n+1)) / (n+1) = 0.1 for n = 99 (continuous scores)
    assert abs(miss.mean() - 0.1) < 4 * np.sqrt(0.09 / 2000)
    assert cf.split_conformal_threshold([0.5, 0.6], alpha=0.2) == 0.0    # alpha (n+1) < 1: full set


def test_quantile_tracking_loop_and_deterministic_bound():
    rng = np.random.default_rng(7)
    t_max, alpha, lr = 5000, 0.1, 0.05
    s = np.concatenate([rng.random(2500) ** 3, np.ones(1500), np.zeros(1000)])   # a nasty stream
    th, miss = cf.quantile_tracking(s, alpha=alpha, lr=lr, init=0.3)
    pi, s32 = 0.3, s.astype(np.float32)
    for t in range(t_max):               # one step of the recursion from the previous state
        assert th[t] == pytest.approx(pi, abs=1e-6)
        m = s32[t] < np.float32(th[t])
        assert miss[t] == m
        pi = th[t] - lr * (m - alpha)
    assert abs(miss.mean() - alpha) <= (1 + lr) / (lr * t_max)


def test_reactive_run_matches_loop():
    t_max, k, c = 200, 6, 5
    grid = cf.threshold_grid(k)
    kw = dict(lam=0.1, eta=0.3, gamma=0.05, beta=0.01, unlock=True, num_classes=c, easy=3.0, hard=0.5)
    run, tab = cs.reactive_bandit_run(t_max, grid, **kw, rng=np.random.default_rng(8))
    rng = np.random.default_rng(8)
    labels = rng.integers(c, size=(1, t_max))[0]
    noise = rng.standard_normal((1, t_max, c), dtype=np.float32)[0]
    u = rng.random((1, t_max), dtype=np.float32)[0]
    graphs = cf.threshold_feedback_graphs(k)
    cum, covered = np.zeros(k), False
    for t in range(t_max):
        z = noise[t].astype(float).copy()
        z[labels[t]] += 0.5 if covered else 3.0
        sc = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        misses = sc[labels[t]] < grid
        np.testing.assert_array_equal(tab.misses[t], misses)
        w = np.exp(0.3 * (cum - cum.max()))
        p = 0.95 * w / w.sum() + 0.05 / k
        arm = min(int(np.searchsorted(np.cumsum(p), u[t], side="right")), k - 1)
        assert int(run.arms[t]) == arm
        g = graphs[(~misses).sum()]
        q = p @ g
        gains = 1 - (misses + 0.1 * (sc[None, :] >= grid[:, None]).sum(1) / c) / 1.1
        cum = cum + np.where(g[arm], gains / q, 0.0) + 0.01 / p
        covered = not misses[arm]


def test_streams_have_the_advertised_structure():
    rng = np.random.default_rng(9)
    probs, labels = cs.synthetic_stream("shift", 4000, rng=rng)
    s = probs[np.arange(4000), labels]
    assert s[:2000].mean() > s[2000:].mean() + 0.2
    model = cs.fit_digits_model(n_train=400, rng=rng)
    p_sorted, y_sorted = cs.digits_stream(model, "sorted", 500, rng=rng)
    assert np.all(np.diff(y_sorted) >= 0)
    p_noise, y_noise = cs.digits_stream(model, "noise", 3000, noise_max=0.8, rng=rng)
    acc = (p_noise.argmax(1) == y_noise)
    assert acc[:500].mean() > acc[-500:].mean() + 0.2
    res = cs.diabetes_residuals("sorted", 2000, rng=rng)
    assert res.shape == (2000,) and res.min() >= 0


def test_errors_name_the_argument():
    rng = np.random.default_rng(0)
    probs, labels = cs.synthetic_stream("iid", 10, rng=rng)
    grid = cf.threshold_grid(4)
    with pytest.raises(ValueError, match="grid"):
        cf.coverage_table(probs, labels, [0.1, 0.5])
    with pytest.raises(ValueError, match="labels"):
        cf.coverage_table(probs, labels + 10, grid)
    with pytest.raises(ValueError, match="probs"):
        cf.coverage_table(probs * np.nan, labels, grid)
    with pytest.raises(ValueError, match="kind"):
        cs.synthetic_stream("drift", 10, rng=rng)
    with pytest.raises(ValueError, match="rng"):
        cs.synthetic_stream("iid", 10, rng=1)
    with pytest.raises(ValueError, match="lam"):
        cf.conformal_losses(cf.coverage_table(probs, labels, grid), lam=-0.1)
    with pytest.raises(ValueError, match="table"):
        cf.online_conformal_bandit(np.zeros((3, 3)), lam=0.1, eta=0.1, gamma=0.1, rng=rng)
    with pytest.raises(ValueError, match="unlock"):
        cf.online_conformal_bandit(cf.coverage_table(probs, labels, grid), lam=0.1, eta=0.1, gamma=0.1,
                                   unlock=1, rng=rng)
    with pytest.raises(ValueError, match="alpha"):
        cf.split_conformal_threshold([0.1, 0.2], alpha=1.0)
    with pytest.raises(ValueError, match="lr"):
        cf.quantile_tracking([0.1, 0.2], alpha=0.1, lr=0.0)
    with pytest.raises(ValueError, match="mean_size"):
        cf.miscoverage_bound(1.0, 1.5, lam=0.1, horizon=10)
    with pytest.raises(ValueError, match="num_arms"):
        cf.threshold_grid(1)
    with pytest.raises(ValueError, match="max_radius"):
        cf.interval_coverage_table([1.0], [0.0, 0.5], max_radius=0.0)
    with pytest.raises(ValueError, match="horizon"):
        cs.reactive_bandit_run(0, grid, lam=0.1, eta=0.1, gamma=0.1, rng=rng)
    with pytest.raises(ValueError, match="model"):
        cs.digits_stream(None, "iid", 10, rng=rng)
    with pytest.raises(ValueError, match="kind"):
        cs.diabetes_residuals("noise", 10, rng=rng)
