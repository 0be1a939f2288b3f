"""Unit tests of paperlib.implicit.implicit_models and paperlib.implicit.deep_equilibrium against independent computations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import optimize

from paperlib.implicit import deep_equilibrium as de
from paperlib.implicit import implicit_models as im


def linear_op(params, y, x):
    return y @ params["A"].T + params["B"] @ x


@pytest.fixture(scope="module")
def linear_case():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 3))
    A = 0.6 * A / np.linalg.norm(A, 2)
    B = rng.standard_normal((3, 2))
    x = rng.standard_normal(2)
    return {"A": jnp.asarray(A, jnp.float32), "B": jnp.asarray(B, jnp.float32)}, jnp.asarray(x, jnp.float32)


def test_picard_iterates_are_partial_sums_of_a_linear_contraction():
    A = np.array([[0.5, 0.2], [0.0, 0.3]])
    b = np.array([1.0, -2.0])
    ys = np.asarray(im.picard_iterates(lambda y, x: y @ A.T + x, jnp.asarray(b), num_steps=6))
    expected = [sum(np.linalg.matrix_power(A, s) @ b for s in range(t)) for t in range(1, 7)]
    np.testing.assert_allclose(ys, expected, rtol=1e-6)


def test_fixed_point_matches_closed_form(linear_case):
    params, x = linear_case
    y = im.fixed_point(lambda p, y, x: y @ p["A"].T + p["B"] @ x, params, x, num_steps=200, y0=jnp.zeros(3))
    exact = np.linalg.solve(np.eye(3) - np.asarray(params["A"]), np.asarray(params["B"]) @ np.asarray(x))
    np.testing.assert_allclose(np.asarray(y), exact, atol=1e-5)


def test_implicit_gradient_matches_finite_differences(linear_case):
    params, x = linear_case
    w = jnp.array([1.0, -0.5, 2.0])

    def loss(p, xx):
        return jnp.dot(w, im.fixed_point(linear_op, p, xx, num_steps=200, y0=jnp.zeros(3)))

    g_params, g_x = jax.grad(loss, argnums=(0, 1))(params, x)

    w64 = np.asarray(w, float)

    def closed(A, B, xx):  # independent: solve the linear system in float64
        return w64 @ np.linalg.solve(np.eye(3) - A, B @ xx)

    A, B, xx = (np.asarray(params["A"], float), np.asarray(params["B"], float), np.asarray(x, float))
    h = 1e-6
    fd_A = np.zeros_like(A)
    for i in range(3):
        for j in range(3):
            E = np.zeros_like(A)
            E[i, j] = h
            fd_A[i, j] = (closed(A + E, B, xx) - closed(A - E, B, xx)) / (2 * h)
    fd_x = np.array([(closed(A, B, xx + h * e) - closed(A, B, xx - h * e)) / (2 * h) for e in np.eye(2)])
    np.testing.assert_allclose(np.asarray(g_params["A"]), fd_A, atol=2e-4)
    np.testing.assert_allclose(np.asarray(g_x), fd_x, atol=2e-4)


def test_newton_fixed_point_and_gradient_against_brentq():
    def G(a, y, x):  # scalar, nonlinear, contraction for |a| < 1
        return a * jnp.tanh(y) + x

    x = jnp.array([0.3, -1.2, 2.0])
    y = im.fixed_point(G, 0.8, x, num_steps=30, method="newton")
    roots = [optimize.brentq(lambda v: v - 0.8 * np.tanh(v) - xi, -10, 10, xtol=1e-14) for xi in np.asarray(x)]
    np.testing.assert_allclose(np.asarray(y), roots, atol=1e-5)
    g = jax.grad(lambda a: im.fixed_point(G, a, x, num_steps=30, method="newton").sum())(0.8)

    def total(a):
        return sum(optimize.brentq(lambda v: v - a * np.tanh(v) - xi, -10, 10, xtol=1e-14) for xi in np.asarray(x))

    assert float(g) == pytest.approx((total(0.8 + 1e-6) - total(0.8 - 1e-6)) / 2e-6, rel=1e-3)


def test_newton_reaches_the_reciprocal_whatever_the_step():
    def G(eta, y, x):  # the paper's operator for 1/x: its fixed point does not depend on eta
        return y - eta * (x * y - 1.0)

    x = jnp.array([0.1, 0.5, 1.0])
    y = im.fixed_point(G, 0.7, x, num_steps=10, method="newton")
    np.testing.assert_allclose(np.asarray(y), 1 / np.asarray(x), rtol=1e-5)
    assert abs(float(jax.grad(lambda e: im.fixed_point(G, e, x, num_steps=10, method="newton").sum())(0.7))) < 1e-4
    dx = jax.grad(lambda xx: im.fixed_point(G, 0.7, xx, num_steps=10, method="newton").sum())(x)
    np.testing.assert_allclose(np.asarray(dx), -1 / np.asarray(x) ** 2, rtol=1e-4)


def test_constants_get_no_gradient_and_are_used():
    def G(p, y, x, c):
        return p * y + c * x

    val = im.fixed_point(G, 0.5, jnp.array([1.0]), num_steps=80, constants=jnp.array(3.0))
    assert float(val[0]) == pytest.approx(6.0, rel=1e-5)
    g = jax.grad(lambda p: im.fixed_point(G, p, jnp.array([1.0]), num_steps=80, constants=jnp.array(3.0))[0])(0.5)
    assert float(g) == pytest.approx(3.0 / 0.25, rel=1e-3)


def test_operator_partials_match_analytic():
    y, x = jnp.array([1.0, 2.0, 3.0]), jnp.array([0.5, 0.2, 0.9])
    gy, gx = im.operator_partials(lambda y, x: jnp.sin(x) * y ** 2, y, x)
    np.testing.assert_allclose(np.asarray(gy), 2 * np.sin(np.asarray(x)) * np.asarray(y), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gx), np.cos(np.asarray(x)) * np.asarray(y) ** 2, rtol=1e-6)


def test_adaptive_step_iterates_match_a_picard_loop():
    x = np.geomspace(1e-3, 1, 50)
    F, eps = 1 / x, np.minimum(0.5, x ** 2)
    y = np.zeros_like(x)
    loop = []
    for _ in range(40):
        y = (1 - eps) * y + eps * F
        loop.append(y.copy())
    np.testing.assert_allclose(im.adaptive_step_iterates(F, eps, np.arange(1, 41)), loop, rtol=1e-12)
    assert np.all(im.adaptive_step_iterates(F, eps, [0]) == 0)


def test_paper_toy_functions():
    x = np.array([-1.5, 0.25, 0.75, 2.0])
    np.testing.assert_allclose(im.paper_toy_target(x), [1.5, 4 - 4 / 3, 4 / 3 - 4, 1 - 0.5])
    np.testing.assert_allclose(im.paper_toy_step(x), [0.1, (0.25 * 0.75) ** 2, (0.25 * 0.75) ** 2, 0.5])


@pytest.mark.parametrize("seed", range(3))
def test_capped_operator_respects_its_budget_for_any_weights(seed):
    p = {k: 10 * v for k, v in de.capped_operator_init(jax.random.key(seed), 16).items()}
    Y, X = np.meshgrid(np.linspace(-30, 30, 61), np.linspace(-1, 1, 401), indexing="ij")
    G = np.asarray(de.capped_operator(p, jnp.asarray(Y), jnp.asarray(X), lip_x=2.5, y_scale=20.0))
    assert (np.abs(np.diff(G, axis=1)) / np.diff(X, axis=1)).max() <= 2.5 * (1 + 1e-3)


def test_capped_operator_cap_is_attained():
    # aligned signs, no bias, no y-dependence: dG/dx at x = 0 is exactly -lip_x
    w = jnp.array([1.0, -2.0, 3.0])
    p = {"w_y": jnp.zeros(3), "w_x": 5 * w, "b": jnp.zeros(3), "w_out": w, "b_out": jnp.zeros(()), "skip": jnp.zeros(())}
    gy, gx = im.operator_partials(lambda y, x: de.capped_operator(p, y, x, lip_x=2.5, y_scale=1.0),
                                  jnp.zeros(1), jnp.zeros(1))
    assert float(gx[0]) == pytest.approx(-2.5, rel=1e-6) and float(gy[0]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: im.picard_iterates(lambda y, x: y, jnp.ones(2), num_steps=0), "num_steps"),
        (lambda: im.picard_iterates("G", jnp.ones(2), num_steps=2), "operator"),
        (lambda: im.fixed_point(lambda p, y, x: y, 1.0, jnp.ones(2), method="anderson"), "method"),
        (lambda: im.fixed_point(lambda p, y, x: y, 1.0, jnp.array([np.nan])), "x"),
        (lambda: im.adaptive_step_iterates(np.ones(2), np.array([0.5, 1.5]), [1]), "step"),
        (lambda: im.adaptive_step_iterates(np.ones(2), np.array([0.5, 0.5]), [-1]), "steps"),
        (lambda: im.paper_toy_target([0.0, 2.0]), "x"),
        (lambda: im.operator_partials(lambda y, x: y, jnp.ones(2), jnp.ones(3)), "y and x"),
        (lambda: de.capped_operator(de.capped_operator_init(jax.random.key(0), 2), jnp.ones(2), jnp.ones(2),
                                    lip_x=-1.0, y_scale=1.0), "lip_x"),
        (lambda: de.fit_capped_operator(jnp.ones(3), jnp.ones(2), key=jax.random.key(0), lip_x=1.0, y_scale=1.0),
         "target"),
    ],
)
def test_bad_input_is_loud(call, match):
    with pytest.raises(ValueError, match=match):
        call()
