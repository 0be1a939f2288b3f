"""The reconstruction attack against independent computations: projections by lstsq, derivatives by
finite differences, matchings by brute force over permutations, the counting argument's ranks."""

import itertools

import jax
import numpy as np
import pytest

from paperlib.wide_networks import identifiability as idf
from paperlib.wide_networks import reconstruction as rc
from paperlib.wide_networks.reconstruction import _residual


def _sigma(z, name):
    return {"relu": np.maximum(z, 0), "relu_tanh": np.maximum(z, 0) + np.tanh(z), "tanh": np.tanh(z), "linear": z}[name]


def _residual_lstsq(X_hat, theta, V, name):
    """(I - P)θ with P the projector on the row space of σ(X̂Vᵀ), by least squares."""
    Phi = _sigma(X_hat @ V.T, name)
    coef = np.linalg.lstsq(Phi.T, theta, rcond=None)[0]
    return theta - Phi.T @ coef


def _sphere(rng, n, d):
    X = rng.normal(size=(n, d))
    return np.sqrt(d) * X / np.linalg.norm(X, axis=1, keepdims=True)


def test_projection_loss_matches_lstsq_and_is_zero_at_the_truth():
    rng = np.random.default_rng(0)
    n, d, p = 3, 4, 20
    X, V = _sphere(rng, n, d), rng.normal(size=(p, d)) / 2
    theta = np.linalg.pinv(_sigma(X @ V.T, "relu_tanh")) @ rng.normal(size=n)
    assert rc.projection_loss(X, theta, V, activation="relu_tanh") < 1e-24
    assert rc.projection_loss(X[::-1], theta, V, activation="relu_tanh") < 1e-24  # order is irrelevant
    Xh = _sphere(rng, n, d)
    r = _residual_lstsq(Xh, theta, V, "relu_tanh")
    ref = r @ r / (theta @ theta)
    assert rc.projection_loss(Xh, theta, V, activation="relu_tanh") == pytest.approx(ref, rel=1e-9)
    # batched = one by one
    Xb = np.stack([_sphere(rng, n, d) for _ in range(3)])
    batch = rc.projection_loss(Xb, np.stack([theta] * 3), np.stack([V] * 3), activation="relu_tanh")
    single = [rc.projection_loss(x, theta, V, activation="relu_tanh") for x in Xb]
    np.testing.assert_allclose(batch, single, rtol=1e-10)


@pytest.mark.parametrize("name", ["relu_tanh", "relu", "tanh"])
def test_gauss_newton_jacobian_matches_finite_differences(name):
    rng = np.random.default_rng(1)
    n, d, p = 3, 5, 40
    V = rng.normal(size=(p, d)) / np.sqrt(d)
    theta = rng.normal(size=p)
    theta /= np.linalg.norm(theta)
    U = rng.normal(size=(1, n, d))
    U /= np.linalg.norm(U, axis=2, keepdims=True)
    r, J = _residual(U, theta[None], V[None], name, True)

    def f(u):
        u = u / np.linalg.norm(u, axis=2, keepdims=True)
        return _residual_lstsq(np.sqrt(d) * u[0], theta, V, name)

    np.testing.assert_allclose(r[0], f(U), atol=1e-10)
    eps = 1e-6
    Jn = np.stack([(f(U + eps * e.reshape(1, n, d)) - f(U - eps * e.reshape(1, n, d))) / (2 * eps) for e in np.eye(n * d)], 1)
    np.testing.assert_allclose(J[0], Jn, atol=1e-6 * np.abs(Jn).max())


def test_reconstruct_recovers_above_and_is_fooled_below_the_threshold():
    rng = np.random.default_rng(5)
    n, d = 2, 4  # dn = 8
    above = idf.synthetic_problem(n, d, 32, activation="relu_tanh", rng=rng)
    res = rc.reconstruct(above.theta, above.V, n, activation="relu_tanh", restarts=8, rng=rng)
    assert res.loss < 1e-20 and rc.matched_distance(above.X, res.X_hat) < 1e-8
    np.testing.assert_allclose(np.linalg.norm(res.X_hat, axis=1), np.sqrt(d))
    below = idf.synthetic_problem(n, d, 4, activation="relu_tanh", rng=rng)
    res = rc.reconstruct(below.theta, below.V, n, activation="relu_tanh", restarts=8, rng=rng)
    assert res.loss < 1e-20  # the loss is fitted exactly ...
    assert rc.matched_distance(below.X, res.X_hat) > 0.1  # ... by data that are not the training set
    # the returned candidate is the lowest-loss restart, and its loss is what projection_loss says
    assert res.loss == res.restart_loss.min()
    assert rc.projection_loss(res.X_hat, below.theta, below.V, activation="relu_tanh") == pytest.approx(res.loss, abs=1e-20)


def test_reconstruct_batches_problems_and_a_random_theta_is_not_explained():
    rng = np.random.default_rng(6)
    probs = [idf.synthetic_problem(2, 3, 24, activation="relu_tanh", rng=rng) for _ in range(3)]
    res = rc.reconstruct(np.stack([p.theta for p in probs]), np.stack([p.V for p in probs]), 2,
                         activation="relu_tanh", restarts=6, rng=rng)
    assert res.X_hat.shape == (3, 2, 3) and res.loss.shape == (3,) and res.restart_loss.shape == (3, 6)
    for p, xh in zip(probs, res.X_hat):
        assert rc.matched_distance(p.X, xh) < 1e-6
    null = rc.reconstruct(rng.normal(size=24), probs[0].V, 2, activation="relu_tanh", restarts=6, rng=rng)
    assert null.loss > 1e-3  # 2 points cannot explain 24 random numbers


def test_first_order_attack_reaches_the_same_solution():
    rng = np.random.default_rng(7)
    prob = idf.synthetic_problem(2, 3, 48, activation="relu_tanh", rng=rng)
    res = rc.reconstruct_first_order(prob.theta, prob.V, 2, activation="relu_tanh", learning_rate=0.5,
                                     steps=3000, restarts=4, key=jax.random.key(0))
    assert res.restart_loss.shape == (4, 3000)
    assert res.loss < 1e-12 and rc.matched_distance(prob.X, res.X_hat) < 1e-4


def test_matched_distance_against_brute_force():
    rng = np.random.default_rng(8)
    X, Xh = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    best = min(
        (np.sum(np.linalg.norm(X - Xh[list(perm)], axis=1) ** 2), perm) for perm in itertools.permutations(range(4))
    )[1]
    ref = np.sum(np.linalg.norm(X - Xh[list(best)], axis=1)) / (4 * np.sqrt(3))
    assert rc.matched_distance(X, Xh) == pytest.approx(ref)
    flip = Xh * np.array([[1], [-1], [1], [-1]])
    assert rc.matched_distance(Xh, flip[::-1], invariance="sign") == pytest.approx(0.0, abs=1e-12)
    assert rc.matched_distance(Xh, -np.abs(Xh), invariance="abs") == pytest.approx(0.0, abs=1e-12)
    assert rc.matched_distance(X, X[:2]) == pytest.approx(0.0)  # rectangular: n_hat < n
    np.testing.assert_array_equal(rc.matched_rows(X, Xh), Xh[list(best)])


def test_random_guess_level_closed_form():
    # n = 1, d = 2, angle φ uniform: ‖x - x̂‖ = 2√2 |sin(φ/2)|, so ρ = ‖x - x̂‖/√2 = 2|sin(φ/2)|, mean 4/π
    X = np.array([[np.sqrt(2.0), 0.0]])
    rho = rc.random_guess_distance(X, draws=4000, rng=np.random.default_rng(9))
    assert rho.mean() == pytest.approx(4 / np.pi, abs=4 * rho.std() / np.sqrt(rho.size))


def test_classify_outcomes():
    out = rc.classify_outcomes([1e-30, 1e-30, 1e-30, 1e-3, 1e-3], [0.0, 1.0, 0.3, 0.0, 1.0])
    assert out.tolist() == ["recovered", "wrong zero", "partial", "inconclusive", "inconclusive"]
    assert set(out) <= set(rc.OUTCOMES)


def test_bad_input_is_loud():
    V, th = np.ones((5, 2)), np.ones(5)
    with pytest.raises(ValueError, match="theta must be nonzero"):
        rc.reconstruct(np.zeros(5), V, 2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="V must have shape"):
        rc.reconstruct(th, np.ones((4, 2)), 2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must be"):
        rc.reconstruct(th, V, 0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="tol"):
        rc.reconstruct(th, V, 2, tol=1.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        rc.reconstruct(th, V, 2, rng=0)
    with pytest.raises(ValueError, match="activation"):
        rc.projection_loss(np.ones((2, 2)), th, V, activation="gelu")
    with pytest.raises(ValueError, match="X_hat must not contain a zero row"):
        rc.projection_loss(np.zeros((2, 2)), th, V)
    with pytest.raises(ValueError, match="invariance"):
        rc.matched_distance(np.ones((2, 2)), np.ones((2, 2)), invariance="perm")
    with pytest.raises(ValueError, match="X_hat must have d"):
        rc.matched_distance(np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="rho must have the shape"):
        rc.classify_outcomes([0.0, 1.0], [0.0])
    with pytest.raises(ValueError, match="wrong"):
        rc.classify_outcomes([0.0], [0.0], recovered=0.5, wrong=0.1)
    with pytest.raises(ValueError, match="key"):
        rc.reconstruct_first_order(th, V, 2, key=0)
