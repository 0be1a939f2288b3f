"""Random-features model: feature map, min-norm/ridge fit and predictions against independent computations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from paperlib.wide_networks import random_features as rf


def _sigma(z, name):
    return {
        "relu": np.maximum(z, 0),
        "relu_tanh": np.maximum(z, 0) + np.tanh(z),
        "tanh": np.tanh(z),
        "linear": z,
    }[name]


def test_sphere_and_weights_both_sources():
    for X in (rf.sample_sphere(5, 7, key=jax.random.key(1)), rf.sample_sphere(5, 7, rng=np.random.default_rng(1))):
        np.testing.assert_allclose(np.linalg.norm(np.asarray(X), axis=1), np.sqrt(7), rtol=1e-6)
    Vj = rf.random_feature_weights(10_000, 5, key=jax.random.key(0))
    Vn = rf.random_feature_weights(10_000, 5, rng=np.random.default_rng(0))
    assert isinstance(Vj, jax.Array) and isinstance(Vn, np.ndarray) and Vn.dtype == np.float64
    for V in (np.asarray(Vj), Vn):  # entries N(0, 1/d): variance 0.2 within 4 standard errors
        assert abs(V.var() - 0.2) < 4 * 0.2 * np.sqrt(2 / V.size)
        assert abs(V.mean()) < 4 * np.sqrt(0.2 / V.size)
    # on the sphere every pre-activation (V x)_k is N(0, 1)
    x = rf.sample_sphere(1, 5, rng=np.random.default_rng(2))[0]
    z = Vn @ x
    assert abs(z.var() - 1.0) < 4 * np.sqrt(2 / z.size)


@pytest.mark.parametrize("name", rf.ACTIVATIONS)
def test_feature_map_matches_a_loop(name):
    rng = np.random.default_rng(3)
    X, V = rng.normal(size=(4, 3)), rng.normal(size=(6, 3))
    ref = np.array([[_sigma(V[k] @ X[i], name) for k in range(6)] for i in range(4)])
    np.testing.assert_allclose(rf.feature_map(X, V, activation=name), ref, rtol=1e-12)
    out = rf.feature_map(jnp.asarray(X), jnp.asarray(V), activation=name)
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5, atol=1e-6)


def test_min_norm_fit_is_pinv_interpolates_and_lies_in_the_span():
    rng = np.random.default_rng(4)
    Phi, y = rng.normal(size=(5, 12)), rng.normal(size=5)
    theta = rf.fit(Phi, y)
    np.testing.assert_allclose(theta, np.linalg.pinv(Phi) @ y, atol=1e-12)
    np.testing.assert_allclose(Phi @ theta, y, atol=1e-12)  # p >= n: labels interpolated
    coef = np.linalg.lstsq(Phi.T, theta, rcond=None)[0]  # θ = Φᵀc exactly: in the row space
    np.testing.assert_allclose(Phi.T @ coef, theta, atol=1e-12)
    # any other interpolator is longer
    null = rng.normal(size=12)
    null -= Phi.T @ np.linalg.lstsq(Phi.T, null, rcond=None)[0]
    assert np.linalg.norm(theta + 0.1 * null) > np.linalg.norm(theta)
    # p < n: least squares, residual orthogonal to the columns
    Phi2 = rng.normal(size=(9, 4))
    theta2 = rf.fit(Phi2, rng.normal(size=9))
    assert theta2.shape == (4,)


def test_ridge_primal_equals_dual_and_tends_to_min_norm():
    rng = np.random.default_rng(5)
    for n, p in [(4, 10), (10, 4)]:
        Phi, Y = rng.normal(size=(n, p)), rng.normal(size=(n, 2))
        lam = 0.3
        primal = np.linalg.solve(Phi.T @ Phi + lam * np.eye(p), Phi.T @ Y)
        np.testing.assert_allclose(rf.fit(Phi, Y, ridge=lam), primal, atol=1e-10)
    Phi, y = rng.normal(size=(4, 10)), rng.normal(size=4)
    np.testing.assert_allclose(rf.fit(Phi, y, ridge=1e-10), rf.fit(Phi, y), atol=1e-7)


def test_predict_and_jax_path_is_traceable():
    rng = np.random.default_rng(6)
    X, V, th = rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.normal(size=5)
    np.testing.assert_allclose(rf.predict(X, V, th, activation="tanh"), np.tanh(X @ V.T) @ th, rtol=1e-12)
    f = jax.jit(lambda X, V, y: rf.predict(X, V, rf.fit(rf.feature_map(X, V), y), activation="relu"))
    out = f(jnp.asarray(rng.normal(size=(3, 2))), jnp.asarray(rng.normal(size=(8, 2))), jnp.ones(3))
    np.testing.assert_allclose(np.asarray(out), 1.0, atol=1e-4)  # interpolation survives jit


def test_bad_input_is_loud():
    with pytest.raises(ValueError, match="activation"):
        rf.feature_map(np.ones((2, 2)), np.ones((3, 2)), activation="gelu")
    with pytest.raises(ValueError, match="X must have d"):
        rf.feature_map(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="key"):
        rf.random_feature_weights(3, 2, key=0)
    with pytest.raises(ValueError, match="exactly one"):
        rf.sample_sphere(3, 2)
    with pytest.raises(ValueError, match="exactly one"):
        rf.sample_sphere(3, 2, key=jax.random.key(0), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        rf.sample_sphere(3, 2, rng=0)
    with pytest.raises(ValueError, match="y must have n"):
        rf.fit(np.ones((3, 4)), np.ones(2))
    with pytest.raises(ValueError, match="ridge"):
        rf.fit(np.ones((3, 4)), np.ones(3), ridge=-1.0)
    with pytest.raises(ValueError, match="theta"):
        rf.predict(np.ones((2, 2)), np.ones((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="p must be"):
        rf.random_feature_weights(0, 2, rng=np.random.default_rng(0))


def test_two_layer_gradient_descent_matches_numpy():
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(3, 4)), np.array([1.0, -1.0, 0.5])
    m, lr, steps = 20, 0.05, 5
    with jax.enable_x64(True):
        net = rf.train_two_layer(X, y, m, activation="tanh", steps=steps, learning_rate=lr, rng=np.random.default_rng(0))
    init = np.random.default_rng(0)
    W, a = init.normal(size=(m, 4)) / 2.0, init.normal(size=m) / np.sqrt(m)
    np.testing.assert_allclose(net.W0, W)
    losses = []
    for _ in range(steps):  # hand-written gradient of (1/n) Σ (aᵀ tanh(W x_i) - y_i)²
        H = np.tanh(X @ W.T)
        e = H @ a - y
        losses.append(np.mean(e**2))
        ga = 2 * H.T @ e / 3
        gW = 2 * ((e[:, None] * (1 - H**2) * a[None, :]).T @ X) / 3
        W, a = W - lr * gW, a - lr * ga
    np.testing.assert_allclose(net.losses, losses, rtol=1e-10)
    np.testing.assert_allclose(net.W, W, rtol=1e-10)
    np.testing.assert_allclose(net.a, a, rtol=1e-10)
    with pytest.raises(ValueError, match="width"):
        rf.train_two_layer(X, y, 0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="learning_rate"):
        rf.train_two_layer(X, y, 3, learning_rate=-1.0, rng=np.random.default_rng(0))
