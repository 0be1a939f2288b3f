"""Tests of paperlib.generative.diffusion against closed forms and brute force."""

import jax
import numpy as np
import pytest
from scipy.special import logsumexp

from paperlib.generative import diffusion as df

TWO = np.array([[-1.0], [1.0]])


def _log_p(x, t, data):
    sq = ((x[:, None, :] - data[None]) ** 2).sum(-1)
    return logsumexp(-sq / (2 * t), axis=1)


def test_two_point_score_is_tanh():
    x = np.linspace(-2, 2, 41)[:, None]
    for t in (0.5, 0.05, 1e-3):
        expected = (np.tanh(x / t) - x) / t
        np.testing.assert_allclose(df.empirical_score(x, t, TWO), expected, rtol=1e-10, atol=1e-8)


def test_score_is_gradient_of_log_density():
    rng = np.random.default_rng(0)
    data, x, t, h = rng.normal(size=(5, 3)), rng.normal(size=(7, 3)), 0.3, 1e-6
    fd = np.stack([(_log_p(x + h * e, t, data) - _log_p(x - h * e, t, data)) / (2 * h) for e in np.eye(3)], 1)
    np.testing.assert_allclose(df.empirical_score(x, t, data), fd, rtol=1e-6, atol=1e-6)


def test_posterior_mean_is_stable_and_snaps_for_tiny_t():
    m = df.posterior_mean(np.array([[0.3], [-0.2], [5.0]]), 1e-9, TWO)
    assert np.all(np.isfinite(m))
    np.testing.assert_array_equal(m[:, 0], [1.0, -1.0, 1.0])


def test_flow_of_single_gaussian_matches_sqrt_law():
    # one data point at 0: score -x/t, exact flow x_s = x_t sqrt(s/t)
    x = np.linspace(-3, 3, 11)[:, None]
    out = df.probability_flow_ode(x, lambda z, t: df.empirical_score(z, t, np.zeros((1, 1))),
                                  t_start=1.0, t_end=1e-4, steps=200)
    np.testing.assert_allclose(out, x * 1e-2, rtol=2e-3)  # Heun, 200 geometric steps


def test_flow_path_and_tweedie():
    times, path = df.probability_flow_ode(np.ones((3, 2)), lambda z, t: -z / t, t_start=1.0, t_end=0.01,
                                          steps=10, return_path=True)
    assert times.shape == (11,) and path.shape == (11, 3, 2)
    x = np.array([[0.2], [-0.7]])
    np.testing.assert_allclose(df.tweedie_denoise(x, lambda z, t: df.empirical_score(z, t, TWO), 0.1),
                               df.posterior_mean(x, 0.1, TWO))


def test_sample_noised_moments():
    s = df.sample_noised(TWO, 0.04, 40_000, rng=np.random.default_rng(1))
    assert s.shape == (40_000, 1)
    assert abs(s.mean()) < 0.02 and abs(np.var(s) - 1.04) < 0.02


def test_score_mlp_and_loss():
    params = df.init_score_mlp(jax.random.key(0), dim=2, width=8)
    x = np.zeros((5, 2), np.float32)
    assert jax.jit(df.score_mlp)(params, x, 0.1).shape == (5, 2)
    data = np.array([[1.0, 0.0], [-1.0, 0.0]], np.float32)
    loss = jax.jit(lambda p, k, lam: df.dsm_loss(p, k, data, lam=lam, batch=64))
    l0, l1 = loss(params, jax.random.key(1), 0.0), loss(params, jax.random.key(1), 1.0)
    assert np.isfinite(l0) and l1 > l0


def test_dsm_loss_n_data_equals_unpadded_data_also_under_vmap():
    """Padding the data and restricting minibatches with n_data gives the same loss, traced or not."""
    params = df.init_score_mlp(jax.random.key(0), dim=2, width=8)
    data = np.array([[1.0, 0.0], [-1.0, 0.0]], np.float32)
    padded = np.concatenate([data, np.full((3, 2), 7.0, np.float32)])
    ref = df.dsm_loss(params, jax.random.key(1), data, lam=0.0, batch=64)
    assert float(df.dsm_loss(params, jax.random.key(1), padded, lam=0.0, batch=64, n_data=2)) == pytest.approx(float(ref))
    traced = jax.jit(lambda n: df.dsm_loss(params, jax.random.key(1), padded, lam=0.0, batch=64, n_data=n))(2)
    assert float(traced) == pytest.approx(float(ref), rel=1e-6)
    with pytest.raises(ValueError, match="n_data"):
        df.dsm_loss(params, jax.random.key(1), padded, lam=0.0, batch=64, n_data=6)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: df.empirical_score(np.zeros((3, 2)), 0.1, TWO), "x must have shape"),
        (lambda: df.empirical_score(np.zeros((3, 1)), 0.0, TWO), "t must be >"),
        (lambda: df.empirical_score(np.full((3, 1), np.nan), 0.1, TWO), "x must be finite"),
        (lambda: df.probability_flow_ode(np.zeros(3), lambda z, t: z, t_start=0.1, t_end=0.2, steps=5), "t_start"),
        (lambda: df.probability_flow_ode(np.zeros(3), lambda z, t: z, t_start=1, t_end=0.1, steps=0), "steps"),
        (lambda: df.sample_noised(TWO, 0.1, -1, rng=np.random.default_rng(0)), "size"),
        (lambda: df.init_score_mlp(jax.random.key(0), dim=0), "dim"),
        (lambda: df.probability_flow_ode(np.zeros(3), lambda z, t: z, t_start=1, t_end=0.1, steps=2,
                                         return_path="yes"), "return_path"),
        (lambda: df.score_mlp(df.init_score_mlp(jax.random.key(0), dim=2, width=4), np.zeros((3, 1)), 0.1), "x must"),
        (lambda: df.score_mlp(df.init_score_mlp(jax.random.key(0), dim=1, width=4), np.zeros((3, 1)), 0.0), "t must"),
        (lambda: df.dsm_loss(df.init_score_mlp(jax.random.key(0), dim=1, width=4), jax.random.key(1),
                             TWO, lam=-1.0), "lam"),
        (lambda: df.dsm_loss(df.init_score_mlp(jax.random.key(0), dim=1, width=4), jax.random.key(1),
                             TWO, lam=0.0, t_min=0.5, t_max=0.1), "t_max"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
