"""Adaptive kernels: closed forms, the mean-field recursion and the trainers against independent computations."""

import numpy as np
import pytest

from paperlib.wide_networks import adaptive_kernels as ak
from paperlib.wide_networks import mean_field_networks as mf
from paperlib.wide_networks import random_features as rf


def _unit(D, k, rng):
    v = np.zeros(D)
    v[k] = 1.0
    return v


# ---------------------------------------------------------------- closed forms


def test_spike_strength_limits():
    g = np.array([1e-3, 0.1])
    np.testing.assert_allclose(ak.spike_strength(g), g**2 / 2, rtol=1e-2)  # lazy: γ²/2
    assert abs(ak.spike_strength(1e4) - (1e4 - 1)) < 1e-3                   # rich: γ − 1
    assert ak.spike_strength(0.0) == 0.0


def test_finetune_formula_limits_and_the_papers_form():
    nu2, a, chi = np.meshgrid(np.linspace(0, 1, 6), np.linspace(-1, 1, 5), [0.0, 0.3, 2.0, 50.0])
    nu2, a, chi = nu2.ravel(), a.ravel(), chi.ravel()
    L = ak.finetune_loss_spiked(nu2, a, chi)
    papers = (1 - nu2) * (1 - 2 * chi * a**2 * nu2 / (1 + chi * nu2) + chi**2 * a**2 * nu2**2 / (1 + chi * nu2) ** 2)
    np.testing.assert_allclose(L, papers, atol=1e-12)
    assert np.all(L <= 1 - nu2 + 1e-12)                                   # never worse than scratch
    np.testing.assert_allclose(ak.finetune_loss_spiked(nu2, a, 0.0), 1 - nu2)  # lazy: no transfer
    np.testing.assert_allclose(ak.finetune_loss_spiked(nu2, 0.0, chi), 1 - nu2)  # orthogonal task
    np.testing.assert_allclose(ak.finetune_loss_spiked(0.4, 0.7, 1e9), 0.6 * (1 - 0.49), rtol=1e-6)


def test_finetune_formula_is_the_large_D_limit_of_the_deterministic_equivalent():
    D, chi, alpha = 500, 3.0, 0.8
    u, w = _unit(D, 0, None), _unit(D, 1, None)
    Sigma = np.eye(D) + chi * np.outer(u, u)
    v = alpha * u + np.sqrt(1 - alpha**2) * w
    for nu2 in (0.1, 0.5, 0.9):
        de = ak.kernel_regression_risk(Sigma, v, int(nu2 * D))
        assert abs(de - ak.finetune_loss_spiked(nu2, alpha, chi)) < 4e-3  # O(1/D)


def test_deterministic_equivalent_isotropic_and_rank_deficient():
    D = 50
    V = np.eye(D)
    np.testing.assert_allclose(ak.kernel_regression_risk(np.eye(D), V, 20), 1 - 20 / D, atol=1e-10)
    # rank 2 < n, ridgeless: the part of v outside the span, inflated by n/(n - r)
    S = np.diag([2.0, 1.0] + [0.0] * (D - 2))
    v = np.array([0.6, 0.0, 0.8] + [0.0] * (D - 3))
    assert abs(ak.kernel_regression_risk(S, v, 10) - 0.64 / (1 - 2 / 10)) < 1e-12
    assert ak.kernel_regression_risk(S, v, 2) == np.inf
    # a small ridge gives nearly the same answer through the κ equation
    assert abs(ak.kernel_regression_risk(S, v, 10, ridge=1e-9) - 0.8) < 1e-4


def test_deterministic_equivalent_matches_monte_carlo():
    rng = np.random.default_rng(0)
    D, n, R = 80, 40, 300
    Q = np.linalg.qr(rng.standard_normal((D, D)))[0]
    Sigma = (Q * rng.uniform(0.2, 3.0, D)) @ Q.T
    v = rng.standard_normal(D)
    v /= np.linalg.norm(v)
    mc = ak.readout_risk(Sigma, v, rng.standard_normal((R, n, D)))
    de = ak.kernel_regression_risk(Sigma, v, n)
    assert abs(mc.mean() - de) < 4 * mc.std() / np.sqrt(R) + 0.02


def test_readout_risk_is_the_readout_of_the_network_features():
    rng = np.random.default_rng(1)
    N, D, n = 300, 12, 7
    V = rf.random_feature_weights(N, D, rng=rng)
    v = rng.standard_normal(D)
    X2 = rng.standard_normal((1, n, D))
    Phi = rf.feature_map(X2[0], V, activation="linear")          # the N network features v_i·x
    theta = np.linalg.pinv(Phi) @ (X2[0] @ v)                      # min-norm readout in R^N
    direct = np.sum((V.T @ theta - v) ** 2)
    assert abs(ak.readout_risk(D * V.T @ V / N, v, X2)[0] - direct) < 1e-8
    # isotropic kernel: the loss is the part of v outside the span of the samples
    P = np.linalg.pinv(X2[0]) @ X2[0]
    assert abs(ak.readout_risk(np.eye(D), v, X2)[0] - np.sum(((np.eye(D) - P) @ v) ** 2)) < 1e-10


# ---------------------------------------------------------------- weight decay fixed point


def test_weight_decay_fixed_point_population_and_stationarity():
    D = 6
    u = _unit(D, 0, None)
    beta, S = ak.weight_decay_fixed_point(np.eye(D), u, 4.0, 0.4)
    np.testing.assert_allclose(beta, (1 - 0.1) * u, atol=1e-10)
    np.testing.assert_allclose(S, 4.0 * 0.9 * np.outer(u, u), atol=1e-10)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((4, D))
    A, b = X.T @ X / 4, X.T @ (X @ u) / 4
    beta, S = ak.weight_decay_fixed_point(A, b, 3.0, 0.2)
    grad = A @ beta - b + (0.2 / 3.0) * beta / np.linalg.norm(beta)   # subgradient of the objective
    assert np.linalg.norm(grad) < 1e-10
    assert np.linalg.matrix_rank(S, tol=1e-10) == 1
    zero, S0 = ak.weight_decay_fixed_point(np.eye(D), 0.01 * u, 1.0, 0.5)  # ‖b‖ <= λ/γ: nothing learned
    assert not zero.any() and not S0.any()


# ---------------------------------------------------------------- the mean-field recursion


def test_recursion_population_spike_is_the_closed_form():
    D = 4
    u = _unit(D, 0, None)
    for g in (0.5, 2.0):
        C, betas = ak.mean_field_linear_gd(np.eye(D), u, g, lr=0.002 / np.sqrt(1 + g**2), steps=20_000)
        np.testing.assert_allclose(betas[-1], u, atol=1e-6)
        assert abs((C[0, 0] - 1) - ak.spike_strength(g)) < 0.01 * (1 + ak.spike_strength(g))
        np.testing.assert_allclose(C[1:D, 1:D], np.eye(D - 1), atol=1e-12)   # bulk untouched
    assert betas.shape == (20_001, D) and not betas[0].any()


def test_recursion_lazy_limit_is_min_norm_regression():
    rng = np.random.default_rng(3)
    D, P = 10, 4
    X = rng.standard_normal((P, D))
    y = X @ rng.standard_normal(D)
    C, betas = ak.mean_field_linear_gd(X.T @ X / P, X.T @ y / P, 1e-3, lr=0.05, steps=4000)
    np.testing.assert_allclose(betas[-1], np.linalg.pinv(X) @ y, atol=1e-5)
    np.testing.assert_allclose(C[:D, :D], np.eye(D), atol=1e-4)             # lazy: the NNGP kernel


def test_recursion_with_weight_decay_reaches_the_fixed_point():
    rng = np.random.default_rng(4)
    D, P = 6, 3
    X = rng.standard_normal((P, D))
    A, b = X.T @ X / P, X.T @ (X @ _unit(D, 0, None)) / P
    C, betas = ak.mean_field_linear_gd(A, b, 3.0, lr=0.02, steps=8000, weight_decay=0.3)
    beta, S = ak.weight_decay_fixed_point(A, b, 3.0, 0.3)
    np.testing.assert_allclose(betas[-1], beta, atol=1e-6)
    np.testing.assert_allclose(C[:D, :D], S, atol=1e-6)


def test_recursion_is_the_infinite_width_limit_of_the_network():
    rng = np.random.default_rng(5)
    D, P, N, g, lr, steps = 5, 3, 40_000, 2.0, 0.02, 400
    X = rng.standard_normal((P, D))
    A, b = X.T @ X / P, X.T @ (X @ _unit(D, 1, None)) / P
    C, betas = ak.mean_field_linear_gd(A, b, g, lr=lr, steps=steps)
    V0, z0 = rf.random_feature_weights(N, D, rng=rng), rng.standard_normal(N)
    V, z, beta = mf.train_linear_network(V0, z0, A, b, g, lr=lr, steps=steps)
    np.testing.assert_allclose(beta, betas[-1], atol=0.03)
    S = D * V.T @ V / N
    assert np.abs(S - C[:D, :D]).max() < 6 * np.sqrt(2 / N) * (1 + np.abs(C[:D, :D]).max())


# ---------------------------------------------------------------- bad input


def test_bad_input_names_the_argument():
    D = 3
    with pytest.raises(ValueError, match="gamma"):
        ak.spike_strength(-1.0)
    with pytest.raises(ValueError, match="nu2"):
        ak.finetune_loss_spiked(1.5, 0.5, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        ak.finetune_loss_spiked(0.5, 1.5, 1.0)
    with pytest.raises(ValueError, match="Sigma"):
        ak.kernel_regression_risk(np.ones((3, 2)), np.ones(3), 2)
    with pytest.raises(ValueError, match="Sigma"):
        ak.kernel_regression_risk(-np.eye(3), np.ones(3), 2)
    with pytest.raises(ValueError, match="v"):
        ak.kernel_regression_risk(np.eye(3), np.ones(4), 2)
    with pytest.raises(ValueError, match="n"):
        ak.kernel_regression_risk(np.eye(3), np.ones(3), 2.5)
    with pytest.raises(ValueError, match="b"):
        ak.mean_field_linear_gd(np.eye(D), np.ones(D + 1), 1.0, lr=0.1, steps=2)
    with pytest.raises(ValueError, match="C0"):
        ak.mean_field_linear_gd(np.eye(D), np.ones(D), 1.0, lr=0.1, steps=2, C0=np.eye(D))
    with pytest.raises(ValueError, match="weight_decay"):
        ak.weight_decay_fixed_point(np.eye(D), np.ones(D), 1.0, 0.0)
    with pytest.raises(ValueError, match="X2"):
        ak.readout_risk(np.eye(D), np.ones(D), np.ones((2, 3, D + 1)))
