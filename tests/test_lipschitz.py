"""Unit tests of paperlib.implicit.lipschitz: measured Lipschitz constants and the explicit error floor."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from paperlib.implicit import lipschitz as lp


def brute_floor(x, f, L):
    return 0.5 * max(0.0, np.max(np.abs(f[:, None] - f[None, :]) - L * np.abs(x[:, None] - x[None, :])))


def test_grid_lipschitz_of_a_known_curve():
    x = np.linspace(0, 2, 201)
    assert float(lp.grid_lipschitz(x, np.sin(3 * x))) == pytest.approx(3.0, rel=1e-3)
    assert lp.grid_lipschitz(x, np.stack([x, 2 * x])).tolist() == pytest.approx([1.0, 2.0])


@pytest.mark.parametrize("seed", range(5))
def test_floor_matches_brute_force_and_the_fit_attains_it(seed):
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0, 1, 40))
    f = rng.standard_normal(40) * 3
    L = rng.uniform(0.5, 20)
    fit, err = lp.best_lipschitz_fit(x, f, L)
    assert err == pytest.approx(brute_floor(x, f, L), abs=1e-12)
    assert lp.grid_lipschitz(x, fit) <= L * (1 + 1e-12)          # the fit is admissible
    assert np.max(np.abs(fit - f)) == pytest.approx(err, abs=1e-12)


@pytest.mark.parametrize("L", [0.5, 1.0, 7.0, 100.0, 399.0, 1000.0])
def test_reciprocal_floor_closed_form_against_the_grid(L):
    x = np.linspace(0.05, 1.0, 20001)
    assert lp.reciprocal_floor(0.05, L) == pytest.approx(lp.lipschitz_floor(x, 1 / x, L), abs=2e-3)


def test_perturbation_lipschitz_of_a_linear_map_is_its_gain_along_the_directions():
    M = np.diag([1.0, 4.0, 0.5])
    ratio = lp.perturbation_lipschitz(lambda v: np.stack([v @ M, 2 * v @ M]), np.ones((3, 3)), np.eye(3)[[0, 2]])
    np.testing.assert_allclose(ratio, [1.0, 2.0], rtol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_capped_mlp_respects_its_budget(seed):
    p = {k: 8 * v for k, v in lp.capped_mlp_init(jax.random.key(seed), 16).items()}
    x = np.linspace(-2, 2, 4001)
    assert lp.grid_lipschitz(x, np.asarray(lp.capped_mlp(p, jnp.asarray(x), lip=3.0))) <= 3.0 * (1 + 1e-3)


def test_capped_mlp_cap_is_attained():
    w = jnp.array([1.0, -2.0])
    p = {"w_in": 4 * w, "b": jnp.zeros(2), "w_out": w, "b_out": jnp.zeros(())}
    x = np.linspace(-1e-4, 1e-4, 3)
    assert lp.grid_lipschitz(x, np.asarray(lp.capped_mlp(p, jnp.asarray(x), lip=3.0))) == pytest.approx(3.0, rel=1e-3)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: lp.grid_lipschitz([0.0, 0.0, 1.0], [1.0, 2.0, 3.0]), "x"),
        (lambda: lp.grid_lipschitz([0.0, 1.0], [1.0, 2.0, 3.0]), "y"),
        (lambda: lp.lipschitz_floor([0.0, 1.0], [1.0, 2.0], 0.0), "lip"),
        (lambda: lp.reciprocal_floor(1.5, 2.0), "delta"),
        (lambda: lp.perturbation_lipschitz(lambda v: v, np.ones((2, 2)), np.zeros((1, 2))), "directions"),
        (lambda: lp.capped_mlp(lp.capped_mlp_init(jax.random.key(0), 2), jnp.ones(2), lip=-1.0), "lip"),
    ],
)
def test_bad_input_is_loud(call, match):
    with pytest.raises(ValueError, match=match):
        call()
