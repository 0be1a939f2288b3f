"""Tests of paperlib.scaling_laws.functional_scaling against brute force, closed forms, quadrature and simulation."""

import numpy as np
import pytest
from scipy import integrate

from paperlib.scaling_laws import functional_scaling as fs

LAM, M0 = fs.power_law_task(6, beta=2.0, s=0.4)


def _full_covariance_steps(theta_star, lam, eta, batches, sigma2):
    """Brute force: propagate the full matrix E[(theta-theta*)(theta-theta*)^T] step by step with
    the Gaussian fourth-moment identity, independently of the diagonal recursion."""
    H = np.diag(lam)
    E = np.outer(theta_star, theta_star)
    out = [0.5 * np.trace(H @ E)]
    for B in batches:
        M = np.eye(lam.size) - eta * H
        E = M @ E @ M + (eta**2 / B) * (H @ E @ H + np.trace(H @ E) * H + sigma2 * H)
        out.append(0.5 * np.trace(H @ E))
    return np.array(out)


def test_power_law_task_normalisation_and_source_condition():
    lam, m0 = fs.power_law_task(50, beta=3.0, s=0.2, excess0=2.0)
    assert fs.excess_risk(lam, m0) == pytest.approx(2.0)
    energy = lam * m0
    j = np.arange(1, 51)
    np.testing.assert_allclose(energy[1:] / energy[:-1], (j[1:] / j[:-1]) ** -(0.2 * 3 + 1))
    np.testing.assert_allclose(lam, j**-3.0)


def test_recursion_equals_full_covariance_brute_force():
    batches = [1] * 7 + [4] * 5 + [2] * 3
    eta, sigma2 = 0.4, 0.7
    brute = _full_covariance_steps(np.sqrt(M0), LAM, eta, batches, sigma2)
    ops = {b: fs.sgd_moment_operator(LAM, eta=eta, batch=b, sigma2=sigma2) for b in (1, 2, 4)}
    # step by step through propagate(…, 1), and in three jumps through schedule_risk
    m, exact = M0, [fs.excess_risk(LAM, M0)]
    for B in batches:
        m = fs.propagate(m, ops[B], 1)
        exact.append(fs.excess_risk(LAM, m))
    np.testing.assert_allclose(exact, brute, rtol=1e-10)
    jumps = fs.schedule_risk(M0, [ops[1], ops[4], ops[2]], [7, 5, 3])
    assert jumps == pytest.approx(brute[-1], rel=1e-10)
    curve = fs.schedule_risk(M0, [ops[1], ops[4], ops[2]], [7, 5, 3], at=np.arange(16))
    np.testing.assert_allclose(curve, brute, rtol=1e-10)


def test_propagate_semigroup_and_fixed_point():
    op = fs.sgd_moment_operator(LAM, eta=0.3, batch=3, sigma2=1.0)
    two = fs.propagate(fs.propagate(M0, op, 17.5), op, 40.25)
    np.testing.assert_allclose(two, fs.propagate(M0, op, 57.75), rtol=1e-11)
    # the stationary second moments solve m = A m + c (direct linear solve, no eigen-decomposition)
    eta, B, lam = 0.3, 3, LAM
    A = np.diag((1 - eta * lam) ** 2 + eta**2 * lam**2 / B) + (eta**2 / B) * np.outer(lam, lam)
    c = (eta**2 / B) * lam
    m_inf = np.linalg.solve(np.eye(lam.size) - A, c)
    np.testing.assert_allclose(fs.propagate(M0, op, 1e9), m_inf, rtol=1e-8)
    np.testing.assert_allclose(fs.propagate(np.stack([M0, m_inf]), op, [0.0, 5.0]), np.stack([M0, m_inf]), rtol=1e-10)


def test_noise_free_single_mode_closed_form():
    # one mode, sigma2 = 0: m_k = E[(1 - eta H_hat)^2]^k m_0 with Var(H_hat) = 2 lam^2 / B (Gaussian x)
    lam, eta, B = np.array([0.8]), 0.2, 5
    op = fs.sgd_moment_operator(lam, eta=eta, batch=B, sigma2=0.0)
    k = np.array([1.0, 10.0, 123.0])
    rate = (1 - eta * 0.8) ** 2 + 2 * eta**2 * 0.64 / B
    np.testing.assert_allclose(fs.propagate(np.array([[2.0]] * 3), op, k)[:, 0], 2.0 * rate**k, rtol=1e-12)


def test_monte_carlo_matches_recursion_within_sampling_error():
    lam, m0 = fs.power_law_task(8, beta=2.0, s=0.5)
    ops = [fs.sgd_moment_operator(lam, eta=0.4, batch=b, sigma2=1.0) for b in (1, 4)]
    at = np.array([5, 20, 40, 60])
    exact = fs.schedule_risk(m0, ops, [30, 30], at=at)
    runs = fs.sgd_monte_carlo(lam, np.sqrt(m0), eta=0.4, batches=[1, 4], steps=[30, 30], sigma2=1.0,
                              runs=4000, at=at, rng=np.random.default_rng(1))
    z = (runs.mean(axis=1) - exact) / (runs.std(axis=1, ddof=1) / np.sqrt(runs.shape[1]))
    assert np.all(np.abs(z) < 4), z
    # a recursion without the Gaussian fourth-moment terms is rejected by the same data
    wrong = []
    m = m0.copy()
    for b, n in ((1, 30), (4, 30)):
        for _ in range(n):
            m = (1 - 0.4 * lam) ** 2 * m + (0.16 / b) * lam
            wrong.append(0.5 * lam @ m)
    z_wrong = (runs[-1].mean() - wrong[-1]) / (runs[-1].std(ddof=1) / np.sqrt(runs.shape[1]))
    assert abs(z_wrong) > 4


def test_fsl_risk_equals_quadrature_of_its_definition():
    lam, m0 = fs.power_law_task(5, beta=2.0, s=0.5)
    eta, sigma2 = 0.2, 0.5
    ops = [fs.sgd_moment_operator(lam, eta=eta, batch=b, sigma2=sigma2) for b in (2, 6)]
    steps = [40, 25]
    T = eta * sum(steps)
    e = lambda z: np.sum(lam * m0 * np.exp(-2 * lam * z))
    K = lambda u: np.sum(lam**2 * np.exp(-2 * lam * u))
    t1 = eta * steps[0]
    q1 = integrate.quad(lambda z: K(T - z) * (e(z) + sigma2), 0, t1, epsabs=1e-13)[0]
    q2 = integrate.quad(lambda z: K(T - z) * (e(z) + sigma2), t1, T, epsabs=1e-13)[0]
    expected = 0.5 * (e(T) + eta / 2 * q1 + eta / 6 * q2)
    assert fs.fsl_risk(m0, ops, steps) == pytest.approx(expected, rel=1e-9)


def test_fsl_approaches_exact_risk_for_small_learning_rate():
    # the FSL drops O(eta lam) terms and the feedback of the risk into the noise: both vanish as eta -> 0
    lam, m0 = fs.power_law_task(30, beta=2.0, s=0.5)
    gaps = []
    for eta in (0.2, 0.02):
        ops = [fs.sgd_moment_operator(lam, eta=eta, batch=b, sigma2=1.0) for b in (1, 8)]
        steps = [40 / eta, 10 / eta]  # the same intrinsic times
        gaps.append(abs(fs.fsl_risk(m0, ops, steps) / fs.schedule_risk(m0, ops, steps) - 1))
    assert gaps[1] < 0.2 * gaps[0]
    assert gaps[1] < 0.01


def test_unstable_step_and_bad_inputs_raise():
    with pytest.raises(ValueError, match="unstable"):
        fs.sgd_moment_operator([1.0, 1.0], eta=2.5, batch=1, sigma2=1.0)
    with pytest.raises(ValueError, match="lam"):
        fs.sgd_moment_operator([1.0, -1.0], eta=0.1, batch=1, sigma2=1.0)
    with pytest.raises(ValueError, match="batch"):
        fs.sgd_moment_operator([1.0], eta=0.1, batch=0.5, sigma2=1.0)
    with pytest.raises(ValueError, match="beta"):
        fs.power_law_task(5, beta=1.0, s=0.2)
    with pytest.raises(ValueError, match="n"):
        fs.power_law_task(2.5, beta=2.0, s=0.2)
    op = fs.sgd_moment_operator(LAM, eta=0.1, batch=1, sigma2=1.0)
    with pytest.raises(ValueError, match="m must have"):
        fs.propagate(np.ones(3), op, 1)
    with pytest.raises(ValueError, match="steps"):
        fs.propagate(M0, op, -1)
    with pytest.raises(ValueError, match="op"):
        fs.propagate(M0, "op", 1)
    with pytest.raises(ValueError, match="ops"):
        fs.schedule_risk(M0, op, [1])
    with pytest.raises(ValueError, match="steps"):
        fs.schedule_risk(M0, [op], [1, 2])
    with pytest.raises(ValueError, match="at"):
        fs.schedule_risk(M0, [op], [5], at=[6])
    with pytest.raises(ValueError, match="batches"):
        fs.sgd_monte_carlo(LAM, np.sqrt(M0), eta=0.1, batches=[1.5], steps=[2], sigma2=1.0, runs=2,
                           at=[1], rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        fs.sgd_monte_carlo(LAM, np.sqrt(M0), eta=0.1, batches=[1], steps=[2], sigma2=1.0, runs=2,
                           at=[1], rng=0)
    with pytest.raises(ValueError, match="eta"):
        fs.fsl_risk(M0, [op, fs.sgd_moment_operator(LAM, eta=0.2, batch=1, sigma2=1.0)], [1, 1])
