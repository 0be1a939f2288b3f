"""The counting argument and the synthetic task: ranks against the count, derivatives against finite
differences of an independent least-squares projection, labels against interpolation."""

import numpy as np
import pytest

from paperlib.wide_networks import identifiability as idf


def _residual_lstsq(X_hat, theta, V, name):
    Phi = {"tanh": np.tanh, "linear": lambda z: z}[name](X_hat @ V.T)
    return theta - Phi.T @ np.linalg.lstsq(Phi.T, theta, rcond=None)[0]


def _sphere(rng, n, d):
    X = rng.normal(size=(n, d))
    return np.sqrt(d) * X / np.linalg.norm(X, axis=1, keepdims=True)


def test_tangent_jacobian_matches_finite_differences_along_the_sphere():
    rng = np.random.default_rng(2)
    n, d, p = 2, 4, 15
    X, V = _sphere(rng, n, d), rng.normal(size=(p, d)) / 2
    theta = np.linalg.pinv(np.tanh(X @ V.T)) @ np.array([1.0, -0.5])
    J = idf.tangent_jacobian(X, theta, V, activation="tanh")
    assert J.shape == (p, n * (d - 1))
    eps = 1e-6
    for i in range(n):
        T, _ = np.linalg.qr(np.column_stack([X[i], np.eye(d)]))
        for j in range(d - 1):
            t = T[:, 1 + j]
            Xp, Xm = X.copy(), X.copy()
            Xp[i] += eps * t
            Xm[i] -= eps * t
            fd = (_residual_lstsq(Xp, theta, V, "tanh") - _residual_lstsq(Xm, theta, V, "tanh")) / (2 * eps)
            np.testing.assert_allclose(J[:, i * (d - 1) + j], fd, atol=1e-6 * np.abs(J).max())


@pytest.mark.parametrize("name", ["relu_tanh", "tanh"])
def test_zero_loss_dimension_follows_the_count(name):
    rng = np.random.default_rng(3)
    n, d = 3, 5
    for p in [2, 3, 6, 10, 14, 15, 16, 30]:
        prob = idf.synthetic_problem(n, d, p, activation=name, rng=rng)
        predicted = max(0, n * (d - 1) - max(0, p - n))
        assert idf.zero_loss_dimension(prob.X, prob.theta, prob.V, activation=name) == predicted, p


def test_linear_features_are_never_identifiable():
    # φ(x) = Vx: θ = V Σ c_i x_i, exact solutions = {X̂ : Σ c_i x_i ∈ span X̂}, dimension d(n-1) at every p
    rng = np.random.default_rng(4)
    n, d = 3, 5
    for p in [10, 40, 200]:
        prob = idf.synthetic_problem(n, d, p, activation="linear", rng=rng)
        assert idf.zero_loss_dimension(prob.X, prob.theta, prob.V, activation="linear") == d * (n - 1)


def test_synthetic_problem_interpolates_and_theta_is_in_the_span():
    prob = idf.synthetic_problem(5, 6, 40, activation="relu_tanh", rng=np.random.default_rng(5))
    Phi = np.maximum(prob.X @ prob.V.T, 0) + np.tanh(prob.X @ prob.V.T)
    np.testing.assert_allclose(Phi @ prob.theta, prob.y, atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(prob.X, axis=1), np.sqrt(6))
    coef = np.linalg.lstsq(Phi.T, prob.theta, rcond=None)[0]
    np.testing.assert_allclose(Phi.T @ coef, prob.theta, atol=1e-12)


def test_attack_trials_rows():
    rows = idf.attack_trials(2, 3, 3, trials=2, activation="relu_tanh", restarts=4, rng=np.random.default_rng(6))
    assert [r["zero_dim"] for r in rows] == [3, 3] == [r["zero_dim_counted"] for r in rows]  # 2*2 - 1
    assert all(r["train_mse"] < 1e-20 for r in rows)  # p = 3 >= n = 2: labels interpolated


def test_bad_input_is_loud():
    with pytest.raises(ValueError, match="d >= 2"):
        idf.tangent_jacobian(np.ones((2, 1)), np.ones(3), np.ones((3, 1)))
    with pytest.raises(ValueError, match="label_noise"):
        idf.synthetic_problem(2, 2, 4, label_noise=-1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rtol"):
        idf.zero_loss_dimension(np.ones((2, 2)), np.ones(3), np.ones((3, 2)), rtol=2.0)
    with pytest.raises(ValueError, match="trials"):
        idf.attack_trials(2, 2, 4, trials=0, rng=np.random.default_rng(0))
