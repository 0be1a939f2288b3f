"""Unit tests for paperlib.distributed.moreau and paperlib.distributed.fedexprox against independent computations."""

import math

import numpy as np
import pytest
from scipy import optimize, stats

from paperlib.distributed import fedexprox as fx
from paperlib.distributed import moreau as mo


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def clients(rng):
    return mo.quadratic_clients(5, 4, rank=2, log10_eig=(-1.0, 1.0), rng=rng)


# ---------------------------------------------------------------------------------------------
# instances and envelope constants
# ---------------------------------------------------------------------------------------------


def test_quadratic_clients_structure(rng):
    As = mo.quadratic_clients(6, 5, rank=3, log10_eig=(-2.0, 1.0), rng=rng)
    assert As.shape == (6, 5, 5)
    np.testing.assert_allclose(As, np.swapaxes(As, 1, 2))
    w = np.linalg.eigvalsh(As)
    assert np.all(w[:, :2] < 1e-10) and np.all(w[:, 2:] >= 10**-2 - 1e-12) and np.all(w <= 10 + 1e-9)
    # one common null direction: the mean has rank d - 1
    assert np.sum(np.linalg.eigvalsh(As.mean(0)) > 1e-9) == 4


def test_isotropic_clients_have_flat_envelope(rng):
    As = mo.quadratic_clients(8, 6, rank=2, log10_eig=(0.0, 0.0), rng=rng)
    k0 = np.divide(*mo.spectral_constants(As.mean(0)))
    for g in (0.01, 1.0, 100.0):
        assert np.divide(*mo.spectral_constants(mo.moreau_hessian(As, g))) == pytest.approx(k0, rel=1e-9)


def test_diagonal_clients_example_44():
    As = mo.diagonal_clients(14, 7, log10_eig=(-2.0, 2.0))
    L, mu = mo.spectral_constants(As.mean(0))
    assert L / mu == pytest.approx(1e4)
    Lg, mug = mo.spectral_constants(mo.moreau_hessian(As, 100.0))   # gamma = 1 / min a
    assert Lg / mug <= 2.0


def test_moreau_hessian_matches_envelope_by_scipy(clients, rng):
    """The envelope value from scipy.optimize equals 1/2 x^T H_gamma x (b = 0, x_* = 0)."""
    gamma = 0.7
    H = mo.moreau_hessian(clients, gamma)
    x = rng.standard_normal(4)
    env = 0.0
    for A in clients:
        res = optimize.minimize(lambda z: 0.5 * z @ A @ z + np.sum((z - x) ** 2) / (2 * gamma), x,
                                jac=lambda z: A @ z + (z - x) / gamma, method="BFGS", options={"gtol": 1e-12})
        env += res.fun / len(clients)
    assert env == pytest.approx(0.5 * x @ H @ x, rel=1e-8)


def test_moreau_hessian_limits(clients):
    np.testing.assert_allclose(mo.moreau_hessian(clients, 0.0), clients.mean(0), atol=1e-12)
    # gamma -> infinity: gamma H_gamma -> mean of the range projectors
    P = np.mean([(np.linalg.eigh(A)[1][:, np.linalg.eigvalsh(A) > 1e-9]) @ (np.linalg.eigh(A)[1][:, np.linalg.eigvalsh(A) > 1e-9]).T
                 for A in clients], axis=0)
    np.testing.assert_allclose(1e8 * mo.moreau_hessian(clients, 1e8), P, atol=1e-6)


def test_loewner_sandwich_on_random_instances(rng):
    for _ in range(30):
        n, d = rng.integers(1, 8), rng.integers(2, 6)
        As = mo.quadratic_clients(int(n), int(d), rank=int(rng.integers(1, d)), log10_eig=(-2, 2), rng=rng)
        L_max = np.linalg.eigvalsh(As)[:, -1].max()
        for g in (1e-3, 0.3, 30.0):
            H, A = mo.moreau_hessian(As, g), As.mean(0)
            assert np.linalg.eigvalsh(A - H).min() >= -1e-10                     # H_gamma <= A
            assert np.linalg.eigvalsh(H - A / (1 + g * L_max)).min() >= -1e-10    # H_gamma >= A / (1 + g L_max)
            assert mo.old_bound_factor(As, g) >= 1 - 1e-10
            kg, k = np.divide(*mo.spectral_constants(H)), np.divide(*mo.spectral_constants(A))
            assert (1 + g * L_max) * kg >= k * (1 - 1e-10)


def test_spectral_constants_and_range_basis():
    H = np.diag([5.0, 0.0, 0.25, 1e-14])
    assert mo.spectral_constants(H) == (5.0, 0.25)
    B = mo.range_basis(H)
    assert B.shape == (4, 2)
    np.testing.assert_allclose(B @ B.T, np.diag([1.0, 0.0, 1.0, 0.0]), atol=1e-12)


def test_theory_rounds_closed_form():
    assert mo.theory_rounds(2.0, 1e-6) == pytest.approx(math.log(1e6) / (2 * math.log(2)))
    assert mo.theory_rounds(1.0, 1e-6) == 0.0
    k = np.array([10.0, 100.0])
    np.testing.assert_allclose(mo.theory_rounds(k, 1e-4), np.log(1e4) / (-2 * np.log1p(-1 / k)))


def test_local_steps():
    assert mo.local_steps(0.0, 50.0) == 1
    assert mo.local_steps(1.0, 9.0) == 10
    assert mo.local_steps(1.0, 9.0, log_factor=0.5) == 5


def test_sampled_smoothness_limits_and_formula(clients):
    g = 0.5
    Lg = mo.spectral_constants(mo.moreau_hessian(clients, g))[0]
    assert mo.sampled_smoothness(clients, g, len(clients)) == pytest.approx(Lg)
    L_max = np.linalg.eigvalsh(clients)[:, -1].max()
    assert mo.sampled_smoothness(clients, g, 1) == pytest.approx(L_max / (1 + g * L_max))


def test_sampled_smoothness_bounds_second_moment(clients, rng):
    """E||mean of S sampled grad M_i||^2 <= 2 L_{gamma,S} M(x): brute force over all subsets."""
    from itertools import combinations

    g, S = 0.3, 2
    n = len(clients)
    Hi = np.array([A @ np.linalg.inv(np.eye(4) + g * A) for A in clients])
    LS = mo.sampled_smoothness(clients, g, S)
    for _ in range(20):
        x = rng.standard_normal(4)
        grads = Hi @ x
        second = np.mean([np.sum(grads[list(c)].mean(0) ** 2) for c in combinations(range(n), S)])
        M = 0.5 * x @ Hi.mean(0) @ x
        assert second <= 2 * LS * M * (1 + 1e-10)


# ---------------------------------------------------------------------------------------------
# the algorithm
# ---------------------------------------------------------------------------------------------


def test_prox_against_scipy(clients, rng):
    gamma, x = 0.4, rng.standard_normal(4)
    z = fx.prox_quadratic(clients, x, gamma)
    for A, zi in zip(clients, z):
        res = optimize.minimize(lambda u: 0.5 * u @ A @ u + np.sum((u - x) ** 2) / (2 * gamma), x,
                                jac=lambda u: A @ u + (u - x) / gamma, method="BFGS", options={"gtol": 1e-12})
        np.testing.assert_allclose(zi, res.x, atol=1e-7)
    assert fx.prox_quadratic(clients, np.c_[x, 2 * x], gamma).shape == (5, 4, 2)


def test_local_gd_prox_matches_loop(clients, rng):
    gamma, t = 2.0, 7
    x = rng.standard_normal((4, 3))
    closed = fx.local_gd_prox(clients, x, gamma, steps=t)
    for A, zc in zip(clients, closed):
        step = 1.0 / (np.linalg.eigvalsh(A)[-1] + 1.0 / gamma)
        z = x.copy()
        for _ in range(t):
            z = z - step * (A @ z + (z - x) / gamma)
        np.testing.assert_allclose(zc, z, atol=1e-12)
    # many steps converge to the exact prox
    np.testing.assert_allclose(fx.local_gd_prox(clients, x, gamma, steps=20000), fx.prox_quadratic(clients, x, gamma),
                               atol=1e-9)


def test_exact_round_is_gd_on_envelope(clients):
    g = 1.3
    H = mo.moreau_hessian(clients, g)
    Lg = mo.spectral_constants(H)[0]
    np.testing.assert_allclose(fx.round_matrix(clients, g), np.eye(4) - H / Lg, atol=1e-12)
    np.testing.assert_allclose(fx.round_matrix(clients, g, alpha=1.0), np.eye(4) - g * H, atol=1e-12)
    A = clients.mean(0)
    np.testing.assert_allclose(fx.round_matrix(clients, 0.0), np.eye(4) - A / mo.spectral_constants(A)[0], atol=1e-12)


def test_step_matches_round_matrix(clients, rng):
    x = rng.standard_normal((4, 2))
    for local in (None, 3):
        T = fx.round_matrix(clients, 0.5, alpha=1.7, local=local)
        np.testing.assert_allclose(fx.fedexprox_step(clients, x, 0.5, alpha=1.7, local=local), T @ x, atol=1e-12)


def test_local_prox_sandwich(rng):
    """(1 - e^{-c}) H <= H_tilde <= H for t = ceil(c (1 + gamma L_max)) local steps (our item 3)."""
    As = mo.quadratic_clients(6, 5, log10_eig=(-3, 2), rng=rng)
    L_max = np.linalg.eigvalsh(As)[:, -1].max()
    for g in (0.01, 1.0, 50.0):
        for c in (1.0, 2.0):
            t = mo.local_steps(g, L_max, log_factor=c)
            Ht = (np.eye(5) - fx.round_matrix(As, g, alpha=1.0 / g, local=t))    # alpha gamma = 1: H_tilde
            H = mo.moreau_hessian(As, g)
            assert np.linalg.eigvalsh(H - 0.5 * (Ht + Ht.T)).min() >= -1e-10
            assert np.linalg.eigvalsh(0.5 * (Ht + Ht.T) - (1 - math.exp(-c)) * H).min() >= -1e-10


def test_count_rounds_against_direct_iteration(clients, rng):
    T = fx.round_matrix(clients, 0.2)
    B = mo.range_basis(clients.mean(0))
    x0 = rng.standard_normal((4, 6))
    k = fx.count_rounds(T, x0, eps=1e-8, basis=B)
    d0 = np.sum((B.T @ x0) ** 2, 0)
    x, direct = x0.copy(), 0
    while np.max(np.sum((B.T @ x) ** 2, 0) / d0) > 1e-8:
        x, direct = T @ x, direct + 1
    assert k == direct


def test_rounds_follow_theory_on_worst_start(clients):
    """Starting on the slowest eigenvector, the measured count is the ceiling of K(kappa_gamma)."""
    g = 0.5
    H = mo.moreau_hessian(clients, g)
    w, v = np.linalg.eigh(H)
    pos = w > 1e-9 * w[-1]
    slow = v[:, pos][:, :1]
    k = fx.count_rounds(fx.round_matrix(clients, g), slow, eps=1e-6, basis=mo.range_basis(H))
    assert k == math.ceil(mo.theory_rounds(w[pos][-1] / w[pos][0], 1e-6))


def test_sweep_rounds_gd_row_and_bounds(clients, rng):
    x0 = rng.standard_normal((4, 16))
    B = mo.range_basis(clients.mean(0))
    out = fx.sweep_rounds(clients, [0.0, 0.1, 10.0], x0, eps=1e-8, basis=B)
    assert out["local"][0] == out["exact"][0] == out["fedprox"][0]
    assert np.all(out["local"] <= out["upper"])
    assert np.all(out["exact"] <= np.ceil(out["theory"]))


def test_run_fedexprox_constant_matches_matrix(clients, rng):
    B = mo.range_basis(clients.mean(0))
    x0 = rng.standard_normal((4, 3))
    d2 = fx.run_fedexprox(clients, x0, 0.5, rounds=4, basis=B)
    x = np.linalg.matrix_power(fx.round_matrix(clients, 0.5), 4) @ x0
    np.testing.assert_allclose(d2[-1], np.sum((B.T @ x) ** 2, 0), rtol=1e-10)


def test_partial_participation_expected_contraction(clients, rng):
    """Monte Carlo: one sampled round shrinks E dist^2 by at least 1 - mu_gamma / L_{gamma,S} (our derivation)."""
    g, S = 0.5, 2
    B = mo.range_basis(clients.mean(0))
    x0 = np.tile(rng.standard_normal((4, 1)), (1, 20000))
    d2 = fx.run_fedexprox(clients, x0, g, rounds=1, basis=B, sample_size=S, rng=rng)
    mu = mo.spectral_constants(mo.moreau_hessian(clients, g))[1]
    assert d2[1].mean() <= (1 - mu / mo.sampled_smoothness(clients, g, S)) * d2[0, 0]
    assert d2[1].std() > 0                                          # the rounds are random
    full = fx.run_fedexprox(clients, x0[:, :2], g, rounds=3, basis=B, sample_size=len(clients), rng=rng)
    np.testing.assert_allclose(full, fx.run_fedexprox(clients, x0[:, :2], g, rounds=3, basis=B), rtol=1e-12)


def test_adaptive_rules_stops_and_grads_values():
    As = np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 3.0]]])
    x = np.ones((2, 1))
    # hand computation at gamma = 1: prox points (1/2, 1) and (1, 1/4)
    d_grads = fx.run_fedexprox(As, x, 1.0, rounds=1, basis=np.eye(2), rule="grads")
    assert d_grads[1, 0] == pytest.approx(0.3125)
    # StoPS: M = mean of f_i(p_i) + |p_i - x|^2 / 2 = (3/8 + 3/32) / 2 ... step = M / |grad M|^2
    disp = np.array([[0.5, 0.0], [0.0, 0.75]])
    M = np.mean([0.5 * 0.25 + 0.125, 0.5 * 3 / 16 + 0.75**2 / 2])
    g = disp.mean(0)
    x1 = x[:, 0] - M / np.sum(g**2) * g
    d_stops = fx.run_fedexprox(As, x, 1.0, rounds=1, basis=np.eye(2), rule="stops")
    assert d_stops[1, 0] == pytest.approx(np.sum(x1**2))


def test_stops_contraction_bound(clients, rng):
    B = mo.range_basis(clients.mean(0))
    for g in (0.05, 5.0):
        k = np.divide(*mo.spectral_constants(mo.moreau_hessian(clients, g)))
        d2 = fx.run_fedexprox(clients, rng.standard_normal((4, 8)), g, rounds=5, basis=B, rule="stops")
        assert np.all(d2[1:] / d2[:-1] <= 1 - 3 / (4 * k) + 1e-9)


# ---------------------------------------------------------------------------------------------
# smooth hinge
# ---------------------------------------------------------------------------------------------


def test_hinge_data_separable_and_loss(rng):
    X, y = fx.hinge_clients(3, 5, 4, margin=0.5, rng=rng)
    assert X.shape == (3, 5, 4) and set(np.unique(y)) <= {-1.0, 1.0}
    # a linear-programming feasibility check: some x has all margins >= 1
    A_ub = -(y[..., None] * X).reshape(-1, 4)
    res = optimize.linprog(np.zeros(4), A_ub=A_ub, b_ub=-np.ones(15), bounds=[(None, None)] * 4)
    assert res.status == 0
    assert fx.smooth_hinge_loss(X, y, res.x[:, None])[0] == pytest.approx(0.0, abs=1e-9)
    # h(0.5) = 1/8, h(-1) = 3/2
    assert fx.smooth_hinge_loss(np.ones((1, 1, 1)), np.ones((1, 1)), np.array([[0.5, -1.0]])).tolist() == [0.125, 1.5]


def test_hinge_rounds_converge_and_gd(rng):
    X, y = fx.hinge_clients(2, 3, 2, rng=rng)
    x0 = -2 * np.ones((2, 2))
    assert fx.hinge_rounds(X, y, x0, 0.0, eps=1e-6, max_rounds=20000) < 20000
    assert fx.hinge_rounds(X, y, x0, 1.0, eps=1e-6, max_rounds=20000) < 20000
    # shuffled labels break interpolation: the target is never reached
    y_bad = y.copy()
    y_bad[0, 0], y_bad[1, 0] = y[1, 0], -y[1, 0]
    X_bad = X.copy()
    X_bad[1, 0] = X[0, 0]                                # the same point with both labels
    y_bad[0, 0], y_bad[1, 0] = 1.0, -1.0
    assert fx.hinge_rounds(X_bad, y_bad, x0, 1.0, eps=1e-6, max_rounds=300) == math.inf


def _tolerance_loop(As, x0, gamma, eps, basis, tol):
    """Plain loop: local GD per client until the subproblem gradient shrinks tol-fold, then extrapolate."""
    L_g = mo.spectral_constants(mo.moreau_hessian(As, gamma))[0]
    alpha = 1.0 / (gamma * L_g)
    rounds, work = [], []
    for b in range(x0.shape[1]):
        x, d0, k, total = x0[:, b].copy(), np.sum((basis.T @ x0[:, b]) ** 2), 0, 0
        while np.sum((basis.T @ x) ** 2) / d0 > eps:
            zs, steps = [], []
            for A in As:
                L_i = np.linalg.eigvalsh(A)[-1]
                z, s = x.copy(), 0
                g0 = A @ z
                while np.linalg.norm(A @ z + (z - x) / gamma) > tol * np.linalg.norm(g0):
                    z = z - (A @ z + (z - x) / gamma) / (L_i + 1 / gamma)
                    s += 1
                zs.append(z)
                steps.append(s)
            x = x + alpha * (np.mean(zs, axis=0) - x)
            k, total = k + 1, total + max(steps)
        rounds.append(k)
        work.append(total)
    return np.array(rounds, float), np.array(work, float)


@pytest.mark.parametrize("gamma, tol", [(0.3, 0.1), (3.0, 0.01)])
def test_tolerance_run_matches_loop(clients, rng, gamma, tol):
    x0 = rng.standard_normal((4, 3))
    basis = mo.range_basis(clients.mean(axis=0))
    out = fx.tolerance_run(clients, x0, gamma, eps=1e-6, basis=basis, tol=tol)
    rounds, work = _tolerance_loop(clients, x0, gamma, 1e-6, basis, tol)
    np.testing.assert_array_equal(out["rounds"], rounds)
    np.testing.assert_array_equal(out["local_steps"], work)
    L_max = np.linalg.eigvalsh(clients)[:, -1].max()
    assert out["max_steps"].max() <= math.ceil(math.log(1 / tol) * (1 + gamma * L_max))


# ---------------------------------------------------------------------------------------------
# loud errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: mo.moreau_hessian(np.ones((2, 2, 3)), 1.0), "As"),
        (lambda: mo.moreau_hessian(np.array([[[1.0, 2.0], [0.0, 1.0]]]), 1.0), "As"),
        (lambda: mo.moreau_hessian(-np.eye(2)[None], 1.0), "As"),
        (lambda: mo.moreau_hessian(np.eye(2)[None], -1.0), "gamma"),
        (lambda: mo.moreau_hessian(np.eye(2)[None], float("nan")), "gamma"),
        (lambda: mo.spectral_constants(np.zeros((2, 2))), "H"),
        (lambda: mo.spectral_constants(np.eye(2), rel_cutoff=2.0), "rel_cutoff"),
        (lambda: mo.quadratic_clients(2.5, 3, rng=np.random.default_rng(0)), "n"),
        (lambda: mo.quadratic_clients(2, 3, rank=3, rng=np.random.default_rng(0)), "rank"),
        (lambda: mo.quadratic_clients(2, 3, log10_eig=(1.0, 0.0), rng=np.random.default_rng(0)), "log10_eig"),
        (lambda: mo.quadratic_clients(2, 3, rng=0), "rng"),
        (lambda: mo.diagonal_clients(2, 3), "n"),
        (lambda: mo.theory_rounds(0.5, 1e-3), "kappa"),
        (lambda: mo.theory_rounds(2.0, 1.0), "eps"),
        (lambda: mo.local_steps(1.0, 0.0), "L_max"),
        (lambda: mo.sampled_smoothness(np.eye(2)[None].repeat(3, 0), 1.0, 4), "sample_size"),
        (lambda: fx.prox_quadratic(np.eye(2)[None], np.ones(3), 1.0), "x"),
        (lambda: fx.prox_quadratic(np.eye(2)[None], np.ones(2), 0.0), "gamma"),
        (lambda: fx.local_gd_prox(np.eye(2)[None], np.ones(2), 1.0, steps=-1), "steps"),
        (lambda: fx.local_gd_prox(np.eye(2)[None], np.ones(2), 1.0, steps=1.5), "steps"),
        (lambda: fx.fedexprox_step(np.eye(2)[None], np.ones(2), 1.0, alpha=0.0), "alpha"),
        (lambda: fx.round_matrix(np.eye(2)[None], 0.0, alpha=1.0), "alpha"),
        (lambda: fx.count_rounds(np.eye(2), np.ones((2, 1)), eps=1e-3, basis=np.eye(2), max_rounds=100), "max_rounds"),
        (lambda: fx.count_rounds(0.5 * np.eye(2), np.ones((3, 1)), eps=1e-3, basis=np.eye(2)), "x0"),
        (lambda: fx.count_rounds(0.5 * np.eye(2), np.ones((2, 1)), eps=0.0, basis=np.eye(2)), "eps"),
        (lambda: fx.run_fedexprox(np.eye(2)[None].repeat(3, 0), np.ones((2, 1)), 1.0, rounds=1, basis=np.eye(2),
                                  rule="polyak"), "rule"),
        (lambda: fx.run_fedexprox(np.eye(2)[None].repeat(3, 0), np.ones((2, 1)), 1.0, rounds=1, basis=np.eye(2),
                                  sample_size=2), "rng"),
        (lambda: fx.tolerance_run(np.eye(2)[None], np.ones((2, 1)), 1.0, eps=1e-3, basis=np.eye(2), tol=1.0), "tol"),
        (lambda: fx.tolerance_run(np.array([np.diag([1.0, 0.0]), np.diag([0.0, 4.0])]), np.ones((2, 1)), 1.0,
                                  eps=1e-6, basis=np.eye(2), tol=0.1, max_rounds=1), "max_rounds"),
        (lambda: fx.hinge_clients(2, 2, 2, margin=0.0, rng=np.random.default_rng(0)), "margin"),
        (lambda: fx.smooth_hinge_loss(np.ones((1, 2, 2)), np.ones((1, 3)), np.ones((2, 1))), "y"),
        (lambda: fx.hinge_rounds(np.ones((1, 1, 1)), np.ones((1, 1)), np.array([[5.0]]), 1.0, eps=0.5,
                                 max_rounds=5), "x0"),
    ],
)
def test_bad_input_raises(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("module", [mo, fx])
def test_docstring_examples(module):
    import doctest

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
