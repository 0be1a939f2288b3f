"""Tests of paperlib.distributed.collaborative_learning and paperlib.distributed.multi_agent_systems.

The learners are checked against a plain-numpy loop over agents that follows the paper's Algorithm 1
line by line on the same sampled states; the exact asymptotics against brute-force enumeration of the
joint state space and the exact covariance recursion; the systems against Monte Carlo and closed forms.
"""

import doctest
import itertools

import numpy as np
import pytest
from scipy import stats

from paperlib.distributed import collaborative_learning as cl
from paperlib.distributed import multi_agent_systems as mas


# ---------------------------------------------------------------------------------------------
# an independent reference implementation of Algorithm 1 (loops over agents, float64)
# ---------------------------------------------------------------------------------------------


def _reference_run(features, theta, x_star, alphas):
    """features[t] -> (A_s (n,d,d), Phi_s (n,d,d), rho (n,n)); returns errors (T, 4, n)."""
    n, d = theta.shape
    x_il, x_aff, x_abl = np.zeros((n, d)), np.zeros((n, d)), np.zeros((n, d))
    x_c, th_c = np.zeros(d), np.zeros(d)
    errs = []
    for t, alpha in enumerate(alphas):
        A_s, Phi_s, rho = features(t)
        b = [Phi_s[j] @ theta[j] for j in range(n)]
        g_cdl = sum(A_s[j] @ x_c - b[j] for j in range(n)) / n
        g_coe = sum(Phi_s[j] @ th_c - b[j] for j in range(n)) / n
        to_j = [A_s[j] @ x_c - Phi_s[j] @ th_c for j in range(n)]          # g^{c->j}(x^c)
        new_il, new_aff, new_abl = x_il.copy(), x_aff.copy(), x_abl.copy()
        for i in range(n):
            new_il[i] -= alpha * (A_s[i] @ x_il[i] - b[i])
            imp = sum(rho[i, j] * to_j[j] for j in range(n)) / n            # g^{c=>i}(x^c)
            new_aff[i] -= alpha * (A_s[i] @ x_aff[i] - b[i] + imp - to_j[i])
            flat = sum(to_j[j] for j in range(n)) / n
            new_abl[i] -= alpha * (A_s[i] @ x_abl[i] - b[i] + flat - to_j[i])
        x_il, x_aff, x_abl = new_il, new_aff, new_abl
        x_c, th_c = x_c - alpha * g_cdl, th_c - alpha * g_coe
        sq = lambda x: ((x - x_star) ** 2).sum(-1)
        errs.append([sq(x_il), sq(np.broadcast_to(x_c, x_star.shape)), sq(x_aff), sq(x_abl)])
    return np.array(errs)


def test_finite_batched_simulation_matches_loop_reference():
    rng = np.random.default_rng(0)
    systems = [mas.tv_system(3, dl, shared_states=4, d=3, rng=rng) for dl in (0.3, 0.0)]
    steps, runs, alpha, t0 = 25, 2, 0.5, 10.0
    out = cl.simulate(systems, steps=steps, runs=runs, alpha=alpha, t0=t0, rng=np.random.default_rng(7))
    assert out["affpcl"].shape == (2, runs, steps, 3)
    np.testing.assert_array_equal(out["t"], np.arange(1, steps + 1))
    noise = np.random.default_rng(7).random((2, steps, runs, 3), dtype=np.float32)
    alphas = alpha * t0 / (np.arange(steps) + t0)
    for k, system in enumerate(systems):
        cdf = np.cumsum(system.mu, axis=1).astype(np.float32)
        x_star = mas.solutions(system).x_star
        for r in range(runs):
            def features(t):
                idx = np.minimum((noise[k, t, r][:, None] >= cdf).sum(1), system.mu.shape[1] - 1)
                mu_at = system.mu[:, idx]                                    # mu_i(s^j)
                return system.A[idx], system.Phi[idx], mu_at / system.mu.mean(0)[idx]
            ref = _reference_run(features, system.theta, x_star, alphas)
            for m, name in enumerate(cl.METHODS):
                np.testing.assert_allclose(out[name][k, r], ref[:, m], rtol=2e-4, atol=1e-6)


def test_gaussian_simulation_matches_loop_reference():
    system = mas.gaussian_system(3, 0.4, 0.3, d=2, rng=np.random.default_rng(1))
    steps, runs, alpha = 20, 1, 0.01
    out = cl.simulate(system, steps=steps, runs=runs, alpha=alpha, rng=np.random.default_rng(3))
    z = np.random.default_rng(3).standard_normal((1, steps, runs, 3, 2), dtype=np.float32)[0, :, 0]
    x_star = mas.solutions(system).x_star
    dens = [stats.multivariate_normal(m, np.eye(2)) for m in system.means]

    def features(t):
        s = system.means + z[t]
        A_s = np.stack([(np.eye(2) + system.eps_A * np.outer(v, v)) @ system.A_base for v in s])
        Phi_s = np.stack([(np.eye(2) + system.eps_Phi * np.outer(v, v)) @ system.Phi_base for v in s])
        p = np.array([[dens[i].pdf(s[j]) for j in range(3)] for i in range(3)])
        return A_s, Phi_s, p / p.mean(0)

    ref = _reference_run(features, system.theta, x_star, np.full(steps, alpha))
    for m, name in enumerate(cl.METHODS):
        np.testing.assert_allclose(out[name][0], ref[:, m], rtol=2e-3, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# exact asymptotics against brute force
# ---------------------------------------------------------------------------------------------


def _brute_force_noise_covariances(system):
    """Noise covariances at the fixed point by enumerating every joint state (s^1..s^n)."""
    A, Phi, mu, theta = system
    n, d = theta.shape
    sol = mas.solutions(system)
    mu0 = mu.mean(0)
    r = lambda s: A[s] @ sol.x_c - Phi[s] @ sol.theta_c
    q_il, q_aff = np.zeros((n, d, d)), np.zeros((n, d, d))
    for states in itertools.product(range(mu.shape[1]), repeat=n):
        p = np.prod([mu[j, s] for j, s in enumerate(states)])
        if p == 0:
            continue
        for i in range(n):
            xi = A[states[i]] @ sol.x_star[i] - Phi[states[i]] @ theta[i]
            corr = sum(mu[i, s] / mu0[s] * r(s) for s in states) / n - r(states[i])
            q_il[i] += p * np.outer(xi, xi)
            q_aff[i] += p * np.outer(xi + corr, xi + corr)
    return q_il, q_aff


def _limit_by_recursion(A_bar, Q, a, t0, steps=20_000):
    """(t + t0) tr P_t for P_{t+1} = (I - a_t A) P (I - a_t A)^T + a_t^2 Q, iterated exactly.

    The approach to the limit is O(1/t): Richardson extrapolation from t and 2t removes it.
    """
    d = A_bar.shape[0]
    P = np.zeros((d, d))
    values = []
    for t in range(2 * steps):
        alpha = a / (t + t0)
        M = np.eye(d) - alpha * A_bar
        P = M @ P @ M.T + alpha**2 * Q
        if t + 1 in (steps, 2 * steps):
            values.append(np.trace(P) * (t + 1 + t0))
    return 2 * values[1] - values[0]


def test_asymptotic_mse_matches_enumeration_and_recursion():
    system = mas.tv_system(2, 0.4, shared_states=3, d=2, rng=np.random.default_rng(5))
    alpha, t0 = 0.5, 20.0
    lim = cl.asymptotic_mse(system, alpha=alpha, t0=t0)
    q_il, q_aff = _brute_force_noise_covariances(system)
    A_bar = np.einsum("ns,sij->nij", system.mu, system.A)
    for i in range(2):
        assert lim.independent[i] == pytest.approx(_limit_by_recursion(A_bar[i], q_il[i], alpha * t0, t0), rel=2e-3)
        assert lim.affpcl[i] == pytest.approx(_limit_by_recursion(A_bar[i], q_aff[i], alpha * t0, t0), rel=2e-3)


def test_homogeneous_ratio_is_exactly_one_over_n_and_free_rider_centre():
    for n in (2, 5):
        lim = cl.asymptotic_mse(mas.tv_system(n, 0.0, rng=np.random.default_rng(n)), alpha=0.5, t0=20.0)
        np.testing.assert_allclose(lim.affpcl / lim.independent, 1 / n, rtol=1e-9)
        np.testing.assert_allclose(lim.no_rho_bias, 0.0, atol=1e-20)
    fr = mas.free_ride_system(6, 0.9, rng=np.random.default_rng(0))
    sol = mas.solutions(fr)
    np.testing.assert_allclose(sol.x_star[0], sol.x_c, atol=1e-10)
    h = mas.heterogeneity(fr)
    assert h.delta_cen[0] == pytest.approx(0.0, abs=1e-12)
    assert h.delta_env == pytest.approx(0.9)
    assert np.min(0.5 * np.abs(fr.mu[0] - fr.mu[1:]).sum(1)) == pytest.approx(0.9 * 4 / 5)


def test_simulation_converges_to_asymptotic_prediction_and_ablation_bias():
    system = mas.tv_system(2, 0.5, shared_states=3, d=2, rng=np.random.default_rng(11))
    alpha, t0, steps = 0.5, 20.0, 1500
    out = cl.simulate(system, steps=steps, runs=400, alpha=alpha, t0=t0, record_every=steps,
                      rng=np.random.default_rng(12))
    lim = cl.asymptotic_mse(system, alpha=alpha, t0=t0)
    for name, pred in (("independent", lim.independent), ("affpcl", lim.affpcl)):
        measured = out[name][:, -1].mean(0) * (steps + t0)
        np.testing.assert_allclose(measured, pred, rtol=0.2)                  # 400 runs: se ~ 7%
    floor = out["affpcl_no_rho"][:, -1].mean(0)
    np.testing.assert_allclose(floor, lim.no_rho_bias + lim.affpcl / (steps + t0), rtol=0.25)


# ---------------------------------------------------------------------------------------------
# systems
# ---------------------------------------------------------------------------------------------


def test_tv_system_levels_are_exact():
    for n, delta in ((2, 0.1), (7, 0.6)):
        h = mas.heterogeneity(mas.tv_system(n, delta, rng=np.random.default_rng(0)))
        assert h.delta_env == pytest.approx(delta)
        np.testing.assert_allclose(h.tv_centre, delta * (n - 1) / n)
        assert 0 <= h.delta_obj <= 1


def test_gaussian_expectations_and_tv_against_monte_carlo():
    rng = np.random.default_rng(3)
    system = mas.gaussian_system(3, 0.3, 0.2, d=3, rng=rng)
    s = system.means[1] + rng.standard_normal((200_000, 3))
    A_mc = np.mean([np.eye(3) + system.eps_A * np.outer(v, v) for v in s[:20_000]], axis=0) @ system.A_base
    A_bar, _ = mas._expectations(system)
    np.testing.assert_allclose(A_mc, A_bar[1], rtol=0.05, atol=0.3)
    h = mas.heterogeneity(system, rng=np.random.default_rng(1), samples=50_000)
    p1 = stats.multivariate_normal(system.means[1], np.eye(3))
    p2 = stats.multivariate_normal(system.means[2], np.eye(3))
    tv_mc = np.mean(np.clip(1 - p2.pdf(s) / p1.pdf(s), 0, None))             # TV(mu_1, mu_2)
    gaps = np.linalg.norm(system.means[:, None] - system.means[None], axis=-1)
    assert 2 * stats.norm.cdf(gaps[1, 2] / 2) - 1 == pytest.approx(tv_mc, abs=0.01)
    assert h.delta_env == pytest.approx((2 * stats.norm.cdf(gaps / 2) - 1).max())
    mix = lambda v: np.mean([stats.multivariate_normal(m, np.eye(3)).pdf(v) for m in system.means], axis=0)
    assert h.tv_centre[1] == pytest.approx(np.mean(np.clip(1 - mix(s[:50_000]) / p1.pdf(s[:50_000]), 0, None)), abs=0.01)


def test_solutions_solve_the_systems():
    system = mas.tv_system(4, 0.3, rng=np.random.default_rng(9))
    sol = mas.solutions(system)
    for i in range(4):
        A_i = sum(system.mu[i, s] * system.A[s] for s in range(system.mu.shape[1]))
        b_i = sum(system.mu[i, s] * system.Phi[s] @ system.theta[i] for s in range(system.mu.shape[1]))
        np.testing.assert_allclose(A_i @ sol.x_star[i], b_i, atol=1e-12)


def test_pooled_ratio_against_formula():
    rng = np.random.default_rng(0)
    a, b = rng.random((50, 3)) + 0.5, rng.random((50, 3)) + 1.0
    r, se = cl.pooled_ratio(a, b)
    np.testing.assert_allclose(r, a.mean(0) / b.mean(0))
    boot = [np.log(a[k].mean(0) / b[k].mean(0)) for k in rng.integers(0, 50, (2000, 50))]
    np.testing.assert_allclose(se, np.std(boot, axis=0), rtol=0.15)


# ---------------------------------------------------------------------------------------------
# loud failures
# ---------------------------------------------------------------------------------------------


def test_bad_inputs_raise_naming_the_argument():
    rng = np.random.default_rng(0)
    good = mas.tv_system(3, 0.2, rng=rng)
    with pytest.raises(ValueError, match="mu"):
        mas.FiniteSystem(good.A, good.Phi, good.mu * 2, good.theta)
    with pytest.raises(ValueError, match="theta"):
        mas.FiniteSystem(good.A, good.Phi, good.mu, good.theta[:, :2])
    with pytest.raises(ValueError, match="A"):
        mas.FiniteSystem(good.A[..., :2], good.Phi, good.mu, good.theta)
    with pytest.raises(ValueError, match="eps_A"):
        mas.GaussianSystem([[0.0]], [[1.0]], [[1.0]], -1.0, 0.5, [[1.0]])
    with pytest.raises(ValueError, match="delta"):
        mas.tv_system(3, 1.0, rng=rng)
    with pytest.raises(ValueError, match="n"):
        mas.free_ride_system(1, 0.5, rng=rng)
    with pytest.raises(ValueError, match="rng"):
        mas.tv_system(3, 0.2, rng=0)
    with pytest.raises(ValueError, match="rng"):
        mas.heterogeneity(mas.gaussian_system(2, 0.1, 0.1, rng=rng))
    with pytest.raises(ValueError, match="system"):
        mas.solutions("not a system")
    with pytest.raises(ValueError, match="steps"):
        cl.simulate(good, steps=10, runs=1, alpha=0.1, record_every=3, rng=rng)
    with pytest.raises(ValueError, match="alpha"):
        cl.simulate(good, steps=10, runs=1, alpha=float("nan"), rng=rng)
    with pytest.raises(ValueError, match="runs"):
        cl.simulate(good, steps=10, runs=2.5, alpha=0.1, rng=rng)
    with pytest.raises(ValueError, match="system"):
        cl.simulate([good, mas.tv_system(4, 0.2, rng=rng)], steps=10, runs=1, alpha=0.1, rng=rng)
    with pytest.raises(ValueError, match="t0"):
        cl.asymptotic_mse(good, alpha=0.01, t0=1.0)
    with pytest.raises(ValueError, match="system"):
        cl.asymptotic_mse(mas.gaussian_system(2, 0.1, 0.1, rng=rng), alpha=0.5, t0=20.0)
    with pytest.raises(ValueError, match="denominator"):
        cl.pooled_ratio([1.0, 2.0], [1.0, -2.0])
    with pytest.raises(ValueError, match="alpha"):
        cl.simulate(good, steps=10, runs=1, alpha=True, rng=rng)
    with pytest.raises(ValueError, match="theta"):
        mas.FiniteSystem(good.A, good.Phi, good.mu, good.theta + 1j)
    grid = dict(instances=1, runs=2, steps=100, alpha=0.5, t0=20.0, rng=rng)
    with pytest.raises(ValueError, match="ns"):
        cl.affinity_grid([1], [0.0], **grid)
    with pytest.raises(ValueError, match="deltas"):
        cl.affinity_grid([2], [1.0], **grid)
    with pytest.raises(ValueError, match="curve"):
        cl.affinity_grid([2], [0.0], curve=(4, 0.0), **grid)
    with pytest.raises(ValueError, match="steps"):
        cl.affinity_grid([2], [0.0], **{**grid, "steps": 110})


@pytest.mark.parametrize("module", [cl, mas])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
