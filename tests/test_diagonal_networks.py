"""paperlib.scaling_laws.diagonal_networks against independent solvers, optimality conditions and closed forms."""

import doctest

import jax
import numpy as np
import pytest

from paperlib.scaling_laws import diagonal_networks as dn
from paperlib.graphs import lasso

pytestmark = pytest.mark.usefixtures("x64")  # float64 references; the flag must not leak to other modules
STEPS = 3000


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(1)
    theta = dn.power_law_teacher(30)
    X, y = dn.sample_data(theta, 20, noise_var=0.5, rng=rng)
    return theta, X, y


def _kkt_violation(X, y, theta_hat, lam):
    """Largest violation of the LASSO optimality conditions of Σ(y - Xθ)² + 2√d λ|θ|₁."""
    d = X.shape[1]
    g = X.T @ (y - X @ theta_hat)  # = √d λ sign(θ_j) on the support, |g_j| <= √d λ off it
    on = theta_hat != 0
    bound = np.sqrt(d) * lam
    return max(np.max(np.abs(g[on] - bound * np.sign(theta_hat[on])), initial=0.0), np.max(np.abs(g[~on]) - bound, initial=0.0))


def test_penalty_conversions_are_inverse():
    a = dn.lasso_penalty(np.array([0.1, 2.0]), n=50, d=400)
    np.testing.assert_allclose(a, np.sqrt(400) * np.array([0.1, 2.0]) / 50)
    np.testing.assert_allclose(dn.weight_decay_from_penalty(a, n=50, d=400), [0.1, 2.0])


@pytest.mark.parametrize("n", [20, 60])
@pytest.mark.parametrize("method", ["lars", "cd"])
def test_fit_lasso_satisfies_kkt_and_matches_fista(n, method):
    rng = np.random.default_rng(n)
    theta = dn.power_law_teacher(30)
    X, y = dn.sample_data(theta, n, noise_var=0.5, rng=rng)
    lams = np.array([0.05, 0.5, 3.0])
    sol = dn.fit_lasso(X, y, weight_decay=lams, method=method)
    for lam, th in zip(lams, sol):
        scale = np.sqrt(30) * lam
        assert _kkt_violation(X, y, th, lam) < 1e-5 * max(scale, 1.0)
    if n == 60:  # an independent solver: FISTA from paperlib.graphs.lasso on (1/2n)|y - Xθ|² + α|θ|₁
        alpha = float(dn.lasso_penalty(0.5, n=n, d=30))
        fista = lasso.lasso_fista(X, y[:, None], alpha, iters=20_000)[:, 0]
        np.testing.assert_allclose(sol[1], fista, atol=1e-5)


def test_network_loss_at_balanced_factorisation_equals_lasso_objective(small):
    theta, X, y = small
    th = np.linspace(-0.5, 0.5, 30)
    d, lam = 30, 0.7
    w = np.sqrt(np.sqrt(d) * np.abs(th))
    a = np.sign(th) * w
    lasso = np.sum((y - X @ th) ** 2) + 2 * np.sqrt(d) * lam * np.abs(th).sum()
    assert dn.network_loss(w, a, X, y, weight_decay=lam) == pytest.approx(lasso, rel=1e-12)
    # any unbalanced factorisation of the same θ costs more (AM-GM)
    assert dn.network_loss(2 * w, a / 2, X, y, weight_decay=lam) > lasso


def test_trained_network_reaches_the_lasso_solution(small):
    theta, X, y = small
    lams = np.array([0.1, 1.0, 20.0])
    Xb = np.stack([X] * 3)
    yb = np.stack([y] * 3)
    net = dn.train_diagonal_network(Xb, yb, weight_decay=lams, steps=STEPS, key=jax.random.key(0))
    ref = dn.fit_lasso(X, y, weight_decay=lams)
    np.testing.assert_allclose(net.theta, ref, atol=1e-6)
    np.testing.assert_allclose(np.abs(net.w), np.abs(net.a), atol=1e-6)
    assert np.all(net.grad_norm < 1e-6)


def test_zero_padding_rows_changes_nothing(small):
    theta, X, y = small  # same padded shape and steps as above: the compiled program is reused
    pad = dn.train_diagonal_network(np.pad(X[:12], ((0, 8), (0, 0))), np.pad(y[:12], (0, 8)), weight_decay=1.0,
                                    steps=STEPS, key=jax.random.key(3))
    plain = dn.fit_lasso(X[:12], y[:12], weight_decay=1.0)
    np.testing.assert_allclose(pad.theta, plain, atol=1e-6)


def test_zero_solution_threshold_is_sharp(small):
    theta, X, y = small
    lam0 = dn.zero_solution_weight_decay(X, y)
    assert np.all(dn.fit_lasso(X, y, weight_decay=lam0 * 1.001) == 0)
    assert np.any(dn.fit_lasso(X, y, weight_decay=lam0 * 0.999) != 0)


def test_plateau_end_matches_the_kkt_threshold_on_prefixes():
    theta = dn.power_law_teacher(40)
    lams = np.array([2.0, 6.0])
    n_c = dn.plateau_end(theta, 200, lams, noise_var=1.0, rng=np.random.default_rng(5))
    X, y = dn.sample_data(theta, 200, noise_var=1.0, rng=np.random.default_rng(5))
    for lam, n in zip(lams, n_c):
        assert np.all(dn.fit_lasso(X[: n - 1], y[: n - 1], weight_decay=lam) == 0) if n > 1 else True
        assert np.any(dn.fit_lasso(X[:n], y[:n], weight_decay=lam) != 0)


def test_weight_spectrum_is_balanced_factor_magnitude():
    th = np.array([0.2, -1.0, 0.0, 0.5])
    sv = dn.weight_spectrum(th)
    np.testing.assert_allclose(np.sort(sv**2)[::-1], np.sort(np.sqrt(4) * np.abs(th))[::-1])
    assert np.all(np.diff(sv) <= 0)
    np.testing.assert_allclose(dn.weight_spectrum(np.stack([th, 2 * th]))[1], np.sqrt(2) * sv)


def test_rank_slope_vectorised_matches_power_law_fit():
    spectra = dn.weight_spectrum(np.random.default_rng(0).standard_normal((4, 60)))
    np.testing.assert_allclose(dn.rank_slope(spectra), [dn.rank_slope(s) for s in spectra], rtol=1e-12)
    assert dn.rank_slope(dn.weight_spectrum(dn.power_law_teacher(80, gamma=2.0))) == pytest.approx(-1.0)


@pytest.mark.parametrize("n", [20, 50])
def test_ridge_excess_risk_matches_a_direct_solve(n):
    rng = np.random.default_rng(n)
    theta = rng.standard_normal(30)
    X, y = dn.sample_data(theta, n, noise_var=1.0, rng=rng)
    lams = np.array([0.01, 1.0, 100.0])
    direct = [np.sum((np.linalg.solve(X.T @ X + lam * np.eye(30), X.T @ y) - theta) ** 2) for lam in lams]
    np.testing.assert_allclose(dn.ridge_excess_risk(X, y, theta, weight_decay=lams), direct, rtol=1e-8)


def test_network_state_evolution_units():
    # least squares: n ≫ d, tiny weight decay -> R = Δ d/(n - d)
    theta = dn.power_law_teacher(50)
    res = dn.network_state_evolution(theta, n=1000, noise_var=2.0, weight_decay=1e-8)
    assert float(res.risk) == pytest.approx(2.0 * 50 / 950, rel=1e-4)
    # huge weight decay: the zero network, R = |θ*|²
    res = dn.network_state_evolution(theta, n=100, noise_var=1.0, weight_decay=1e6)
    assert float(res.risk) == pytest.approx(np.sum(theta**2), rel=1e-9)
    # the optimum is no worse than the paper's three weight decays
    opt = dn.network_state_evolution_optimal(theta, n=40, noise_var=1.0)
    fixed = dn.network_state_evolution(theta, n=40, noise_var=1.0, weight_decay=np.array([1 / 50, 1.0, np.sqrt(50)]))
    assert float(opt.risk) <= fixed.risk.min()


def test_state_evolution_predicts_the_network_grid():
    theta = dn.power_law_teacher(300)
    rngs = np.random.default_rng(7).spawn(4)
    grid = dn.lasso_risk_grid(theta, [150, 600], [1.0], noise_var=1.0, rngs=rngs)
    pred = dn.network_state_evolution(theta, n=np.array([150, 600]), noise_var=1.0, weight_decay=1.0)
    np.testing.assert_allclose(grid.risk[:, :, 0].mean(0), pred.risk, rtol=0.15)
    np.testing.assert_allclose(grid.active[:, :, 0].mean(0), pred.active, atol=0.03)


def test_state_evolution_weights_are_soft_thresholded_noisy_teacher():
    theta = np.array([2.0, 0.0])
    w = dn.state_evolution_weights(theta, tau=0.5, threshold=0.3, rng=np.random.default_rng(0), draws=20_000)
    assert np.mean(w[:, 1] != 0) == pytest.approx(2 * (1 - 0.7257468822499265), abs=0.01)  # P(|Z| > 0.6)
    assert np.mean(w[:, 0]) == pytest.approx(1.7, abs=0.01)


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda: dn.power_law_teacher(0), "d"),
        (lambda: dn.power_law_teacher(5, gamma=0.4), "gamma"),
        (lambda: dn.sample_data(np.ones(3), 2.5, noise_var=1.0, rng=np.random.default_rng(0)), "n"),
        (lambda: dn.sample_data(np.ones(3), 2, noise_var=1.0, rng=0), "rng"),
        (lambda: dn.lasso_penalty(1.0, n=2.5, d=4), "n"),
        (lambda: dn.lasso_penalty(-1.0, n=2, d=4), "weight_decay"),
        (lambda: dn.weight_decay_from_penalty(1.0, n=2, d=True), "d"),
        (lambda: dn.network_state_evolution(np.ones(3), n=10, noise_var=0.0, weight_decay=1.0), "noise_var"),
        (lambda: dn.network_state_evolution_optimal(np.ones(3), n=[10, np.nan], noise_var=1.0), "n"),
        (lambda: dn.fit_lasso(np.ones((3, 2)), np.ones(4), weight_decay=1.0), "y"),
        (lambda: dn.fit_lasso(np.ones((3, 2)), np.ones(3), weight_decay=1.0, method="newton"), "method"),
        (lambda: dn.network_loss(np.ones(3), np.ones(2), np.ones((3, 2)), np.ones(3), weight_decay=1.0), "w"),
        (lambda: dn.train_diagonal_network(np.ones((3, 2)), np.ones(3), weight_decay=1.0, key=0), "key"),
        (lambda: dn.train_diagonal_network(np.ones((3, 2)), np.ones(3), weight_decay=0.0, key=jax.random.key(0)), "weight_decay"),
        (lambda: dn.zero_solution_weight_decay(np.ones((3, 2)), np.ones((3, 1))), "y"),
        (lambda: dn.weight_spectrum(np.ones((2, 2, 2))), "theta"),
        (lambda: dn.state_evolution_weights(np.ones(2), tau=0.0, threshold=1.0, rng=np.random.default_rng(0)), "tau"),
        (lambda: dn.ridge_excess_risk(np.ones((3, 2)), np.ones(3), np.ones(3), weight_decay=1.0), "theta"),
        (lambda: dn.excess_risk(np.ones(3), np.ones(2)), "theta_hat"),
        (lambda: dn.lasso_risk_grid(np.ones(3), [5], [1.0], noise_var=1.0, rngs=[1]), "rngs"),
        (lambda: dn.plateau_end(np.ones(3), 0, [1.0], noise_var=1.0, rng=np.random.default_rng(0)), "n_max"),
        (lambda: dn.rank_slope(np.ones(10), lo=2, hi=11), "hi"),
    ],
)
def test_bad_input_is_loud(call, arg):
    with pytest.raises(ValueError, match=arg):
        call()


def test_doctests():
    assert doctest.testmod(dn, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
