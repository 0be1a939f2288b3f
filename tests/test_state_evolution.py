"""paperlib.scaling_laws.state_evolution against quadrature, Monte Carlo, closed-form limits and simulation."""

import doctest

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.linear_model import Lasso

from paperlib.scaling_laws import state_evolution as se


def _quad_moments(theta, tau, t):
    """E(η - θ)², P(|θ+τZ| > t) and E η by numerical integration over Z."""
    pdf = stats.norm.pdf

    def eta(z):
        u = theta + tau * z
        return np.sign(u) * max(abs(u) - t, 0.0)

    mse = integrate.quad(lambda z: (eta(z) - theta) ** 2 * pdf(z), -12, 12, points=[(t - theta) / tau, (-t - theta) / tau], limit=200)[0]
    mean = integrate.quad(lambda z: eta(z) * pdf(z), -12, 12, points=[(t - theta) / tau, (-t - theta) / tau], limit=200)[0]
    active = stats.norm.sf((t - theta) / tau) + stats.norm.cdf((-t - theta) / tau)
    return mse, active, mean


@pytest.mark.parametrize("theta,tau,t", [(0.0, 1.0, 0.5), (0.3, 0.5, 0.4), (2.0, 0.7, 0.1), (-1.0, 1.3, 2.0), (5.0, 0.2, 3.0)])
def test_moments_match_quadrature(theta, tau, t):
    got = se.soft_threshold_moments(theta, tau, t)
    want = _quad_moments(theta, tau, t)
    np.testing.assert_allclose([float(g) for g in got], want, rtol=1e-7, atol=1e-10)


def test_noise_only_mse_is_the_theta_zero_moment_and_minimal_threshold_solves_it():
    alpha = np.array([0.0, 0.3, 1.0, 2.5])
    np.testing.assert_allclose(se.noise_only_mse(alpha), se.soft_threshold_moments(0.0, 1.0, alpha)[0], rtol=1e-12)
    for delta in (0.1, 0.5, 0.9):
        a = se.minimal_threshold(delta)
        assert float(se.noise_only_mse(a)) == pytest.approx(delta, rel=1e-9)
    assert float(se.minimal_threshold(1.5)) == 0.0


def test_binned_prior_keeps_second_moment_and_matches_unbinned_state_evolution():
    d = 10_000
    theta = np.arange(1, d + 1) ** -1.0
    atoms, weights = se.binned_prior(theta, n_bins=400)
    assert weights.sum() == pytest.approx(1.0)
    assert np.dot(weights, atoms**2) == pytest.approx(np.mean(theta**2), rel=1e-12)
    n = np.array([200, 2_000, 20_000])
    kw = dict(delta=n / d, noise_var=1.0 / n, penalty=np.sqrt(d) / n)
    exact = se.lasso_state_evolution(theta, **kw)
    binned = se.lasso_state_evolution(atoms, weights, **kw)
    np.testing.assert_allclose(binned.mse, exact.mse, rtol=1e-3)


def test_fixed_point_and_calibration_hold_at_the_solution():
    atoms = np.array([1.0, 0.5, 0.0])
    weights = np.array([0.2, 0.3, 0.5])
    delta, sigma2 = np.array([0.4, 1.0, 3.0]), 0.05
    res = se.lasso_state_evolution(atoms, weights, delta=delta, noise_var=sigma2, penalty=0.1)
    for k in range(3):
        tau, t = res.tau[k], res.alpha[k] * res.tau[k]
        mse, act, _ = se.soft_threshold_moments(atoms, tau, t)
        assert tau**2 == pytest.approx(sigma2 + np.dot(weights, mse) / delta[k], rel=1e-9)
        assert t * (1 - np.dot(weights, act) / delta[k]) == pytest.approx(0.1, rel=1e-8)
        assert res.mse[k] == pytest.approx(np.dot(weights, mse), rel=1e-8)


def test_penalty_solver_inverts_threshold_solver_and_calibration_is_monotone():
    atoms = np.arange(1, 201) ** -1.0
    alphas = np.linspace(0.8, 4.0, 30)
    at = se.lasso_state_evolution_at_threshold(atoms, delta=0.5, noise_var=0.01, alpha=alphas)
    assert np.all(np.diff(at.penalty) > 0)
    back = se.lasso_state_evolution(atoms, delta=0.5, noise_var=0.01, penalty=at.penalty)
    np.testing.assert_allclose(back.alpha, alphas, rtol=1e-7)


def test_below_the_minimal_threshold_there_is_no_fixed_point():
    res = se.lasso_state_evolution_at_threshold([1.0, 0.0], delta=0.5, noise_var=0.1, alpha=0.2)
    assert np.isnan(res.tau)


def test_least_squares_limit():
    # δ > 1 and a vanishing penalty: τ² = σ²/(1 - 1/δ), so mse = σ² δ/(δ - 1) per coordinate
    delta, sigma2 = 4.0, 0.02
    res = se.lasso_state_evolution(np.linspace(0, 1, 50), delta=delta, noise_var=sigma2, penalty=1e-9)
    assert float(res.mse) == pytest.approx(sigma2 * delta / (delta - 1), rel=1e-5)


def test_interpolation_peak_closed_form():
    # δ = 1, λ → 0: mse ≈ σ²/(cα) with α = (2λ/(√c σ))^{2/3}, c = 2√(2/π) (derived in the chapter)
    sigma2, c = 1e-3, 2 * np.sqrt(2 / np.pi)
    lam = np.array([1e-6, 1e-5])
    res = se.lasso_state_evolution(np.zeros(10), delta=1.0, noise_var=sigma2, penalty=lam)
    alpha = (2 * lam / (np.sqrt(c) * np.sqrt(sigma2))) ** (2 / 3)
    np.testing.assert_allclose(res.mse, sigma2 / (c * alpha), rtol=0.02)


def test_optimal_penalty_minimises_the_error_over_a_grid():
    atoms = np.arange(1, 301) ** -1.0
    opt = se.lasso_state_evolution_optimal(atoms, delta=0.5, noise_var=0.005)
    grid = se.lasso_state_evolution(atoms, delta=0.5, noise_var=0.005, penalty=np.geomspace(1e-3, 1, 60))
    assert float(opt.mse) <= grid.mse.min() * (1 + 1e-6)
    assert np.min(np.abs(np.log(grid.penalty / float(opt.penalty)))) < 0.1  # the grid brackets it


def test_state_evolution_predicts_a_simulated_lasso():
    # proportional regime, independent solver (scikit-learn), 4 data sets: within 8%
    rng = np.random.default_rng(0)
    d, n, sigma2, pen = 500, 1000, 0.25, 0.05
    theta = np.where(rng.random(d) < 0.1, rng.standard_normal(d), 0.0)
    risks = []
    for _ in range(4):
        A = rng.standard_normal((n, d)) / np.sqrt(n)
        y = A @ theta + np.sqrt(sigma2) * rng.standard_normal(n)
        coef = Lasso(alpha=pen / n, fit_intercept=False, tol=1e-10, max_iter=100_000).fit(A, y).coef_
        risks.append(np.mean((coef - theta) ** 2))
    # scikit-learn's objective is (1/2n)|y - Aθ|² + α|θ|₁, i.e. α = penalty/n in these units
    pred = se.lasso_state_evolution(theta, delta=n / d, noise_var=sigma2, penalty=pen)
    assert np.mean(risks) == pytest.approx(float(pred.mse), rel=0.08)


def test_soft_threshold_matches_its_definition():
    u = np.array([-3.0, -0.5, 0.0, 0.2, 4.0])
    np.testing.assert_array_equal(se.soft_threshold(u, 1.0), [-2.0, 0.0, 0.0, 0.0, 3.0])


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: se.soft_threshold([1.0], -1.0), "threshold"),
        (lambda: se.soft_threshold([np.nan], 1.0), "u"),
        (lambda: se.soft_threshold_moments(0.0, 0.0, 1.0), "tau"),
        (lambda: se.noise_only_mse(-1.0), "alpha"),
        (lambda: se.minimal_threshold(0.0), "delta"),
        (lambda: se.binned_prior([[1.0]]), "values"),
        (lambda: se.binned_prior([1.0, 2.0], n_bins=2.5), "n_bins"),
        (lambda: se.lasso_state_evolution([1.0], [0.5], delta=1.0, noise_var=1.0, penalty=1.0), "weights"),
        (lambda: se.lasso_state_evolution([1.0], delta=True, noise_var=1.0, penalty=1.0), "delta"),
        (lambda: se.lasso_state_evolution([1.0], delta=1.0, noise_var=-1.0, penalty=1.0), "noise_var"),
        (lambda: se.lasso_state_evolution([1.0], delta=1.0, noise_var=1.0, penalty=np.inf), "penalty"),
        (lambda: se.lasso_state_evolution_at_threshold([1.0], delta=1.0, noise_var=1.0, alpha="a"), "alpha"),
        (lambda: se.lasso_state_evolution_optimal([], delta=1.0, noise_var=1.0), "atoms"),
    ],
)
def test_bad_input_is_loud(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()


def test_doctests():
    assert doctest.testmod(se, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
