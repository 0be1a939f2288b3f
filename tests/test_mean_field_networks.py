"""Mean-field two-layer networks: the trainers against explicit gradient descent in numpy."""

import jax
import numpy as np
import pytest

from paperlib.wide_networks import mean_field_networks as mf


def test_train_linear_network_is_plain_gd_with_the_mean_field_scaling():
    rng = np.random.default_rng(6)
    N, D, g, lr, lam, steps = 7, 3, 1.5, 0.03, 0.1, 5
    V0, z0 = rng.standard_normal((N, D)) / np.sqrt(D), rng.standard_normal(N)
    A = np.eye(D) + 0.1
    b = rng.standard_normal(D)
    W, z = np.sqrt(D) * V0, z0.copy()
    beta0 = W.T @ z / (g * N)
    for _ in range(steps):                                     # explicit gradients, numpy
        r = b - A @ (W.T @ z / (g * N) - beta0)
        W, z = W + lr * (g * np.outer(z, r) - lam * W), z + lr * (g * W @ r - lam * z)
    with jax.enable_x64(True):
        V, zz, beta = mf.train_linear_network(V0, z0, A, b, g, lr=lr, steps=steps, weight_decay=lam)
    np.testing.assert_allclose(np.sqrt(D) * V, W, atol=1e-10)
    np.testing.assert_allclose(zz, z, atol=1e-10)
    np.testing.assert_allclose(beta, W.T @ z / (g * N) - beta0, atol=1e-10)


def test_train_network_linear_activation_equals_the_moment_form():
    rng = np.random.default_rng(7)
    N, D, P, g = 50, 4, 9, 1.2
    X, y = rng.standard_normal((P, D)), rng.standard_normal(P)
    V0, z0 = rng.standard_normal((N, D)) / np.sqrt(D), rng.standard_normal(N)
    with jax.enable_x64(True):
        V1, z1, losses = mf.train_network(X, y, V0, z0, g, lr=0.05, steps=30, activation="linear")
        V2, z2, _ = mf.train_linear_network(V0, z0, X.T @ X / P, X.T @ y / P, g, lr=0.05, steps=30)
    np.testing.assert_allclose(V1, V2, atol=1e-10)
    np.testing.assert_allclose(z1, z2, atol=1e-10)
    np.testing.assert_allclose(losses[0], 0.5 * np.mean(y**2), rtol=1e-10)   # f = 0 at the start


def test_train_network_relu_one_step_matches_explicit_gradients():
    rng = np.random.default_rng(8)
    N, D, P, g, lr = 6, 3, 5, 0.7, 0.1
    X, y = rng.standard_normal((P, D)), rng.standard_normal(P)
    V0, z0 = rng.standard_normal((N, D)) / np.sqrt(D), rng.standard_normal(N)
    W = np.sqrt(D) * V0
    H = X @ W.T / np.sqrt(D)
    delta = y - 0.0                                            # f − f₀ = 0 at the start
    gW = -(g * np.sqrt(D) / P) * ((delta[:, None] * (H > 0) * z0).T @ X) / np.sqrt(D)
    gz = -(g * np.sqrt(D) / P) * np.maximum(H, 0).T @ delta
    with jax.enable_x64(True):
        V, z, _ = mf.train_network(X, y, V0, z0, g, lr=lr, steps=1)
    np.testing.assert_allclose(np.sqrt(D) * V, W - lr * gW, atol=1e-10)
    np.testing.assert_allclose(z, z0 - lr * gz, atol=1e-10)


def test_bad_input_names_the_argument():
    D = 3
    with pytest.raises(ValueError, match="z0"):
        mf.train_linear_network(np.ones((4, D)), np.ones(5), np.eye(D), np.ones(D), 1.0, lr=0.1, steps=2)
    with pytest.raises(ValueError, match="b"):
        mf.train_linear_network(np.ones((4, D)), np.ones(4), np.eye(D), np.ones(D + 1), 1.0, lr=0.1, steps=2)
    with pytest.raises(ValueError, match="activation"):
        mf.train_network(np.ones((2, D)), np.ones(2), np.ones((4, D)), np.ones(4), 1.0, lr=0.1, steps=2,
                         activation="gelu")
    with pytest.raises(ValueError, match="gamma"):
        mf.train_network(np.ones((2, D)), np.ones(2), np.ones((4, D)), np.ones(4), 0.0, lr=0.1, steps=2)
