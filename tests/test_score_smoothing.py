"""Tests of paperlib.score_smoothing against closed forms, brute force and limits."""

import numpy as np
import pytest
from scipy.stats import norm

from paperlib import diffusion as df
from paperlib import score_smoothing as ss

TWO = np.array([-1.0, 1.0])
FIVE = np.linspace(-1.0, 1.0, 5)


def _two_point_formula(x, t, delta):  # the paper's S-PL-ESF for y = +-1, written out piecewise
    return np.where(x <= delta - 1, -(x + 1) / t,
                    np.where(x >= 1 - delta, -(x - 1) / t, delta / (1 - delta) * x / t))


def test_two_point_matches_piecewise_formula_and_is_continuous():
    x = np.linspace(-3, 3, 2001)
    for delta in (0.05, 0.3, 0.9):
        np.testing.assert_allclose(ss.smoothed_score_1d(x, 0.01, TWO, delta=delta),
                                   _two_point_formula(x, 0.01, delta), atol=1e-9)
        edge = 1 - delta
        left = ss.smoothed_score_1d(np.array([edge - 1e-9]), 0.01, TWO, delta=delta)
        right = ss.smoothed_score_1d(np.array([edge + 1e-9]), 0.01, TWO, delta=delta)
        np.testing.assert_allclose(left, right, atol=1e-5)


def test_delta_one_is_piecewise_linear_esf_and_limit_of_esf():
    x = np.array([-2.0, -0.6, -0.1, 0.1, 0.4, 1.7])
    t = 1e-3
    pl = ss.smoothed_score_1d(x, t, TWO, delta=1.0)
    np.testing.assert_allclose(pl, (np.sign(x) - x) / t)
    np.testing.assert_allclose(pl, df.empirical_score(x[:, None], t, TWO[:, None])[:, 0], rtol=1e-6)


def test_multipoint_is_rescaled_two_point():
    # on the gap [-0.5, 0] of FIVE (a = 0.25, midpoint -0.25): s(x) = s_unit((x - c)/a, t/a^2) / a
    a, c, t, kappa = 0.25, -0.25, 0.004, 0.7
    x = np.linspace(-0.5, 0.0, 301)
    unit = ss.smoothed_score_1d((x - c) / a, t / a**2, TWO, kappa=kappa) / a
    np.testing.assert_allclose(ss.smoothed_score_1d(x, t, FIVE, kappa=kappa), unit, rtol=1e-9, atol=1e-6)


def test_line_score_has_linear_normal_part():
    x = np.array([[0.3, 0.2, -0.1]])
    s = ss.smoothed_score_line(x, 0.01, TWO, kappa=1.0)
    np.testing.assert_allclose(s[0, 1:], [-20.0, 10.0])
    np.testing.assert_allclose(s[0, 0], ss.smoothed_score_1d([0.3], 0.01, TWO, kappa=1.0)[0])


def test_flow_map_two_point_closed_form_and_semigroup():
    t0, kappa = 0.05, 0.5
    delta = kappa * np.sqrt(t0)
    x = np.linspace(-2, 2, 401)
    expected = np.where(np.abs(x) <= 1 - delta, x / (1 - delta), np.sign(x))
    np.testing.assert_allclose(ss.flow_map_spl(x, t0, TWO, kappa=kappa), expected, atol=1e-12)
    mid = ss.flow_map_spl(x, t0, FIVE, kappa=kappa, s=0.01)
    np.testing.assert_allclose(ss.flow_map_spl(mid, 0.01, FIVE, kappa=kappa, s=1e-4),
                               ss.flow_map_spl(x, t0, FIVE, kappa=kappa, s=1e-4), atol=1e-10)


def test_flow_map_matches_numerical_ode():
    x = np.linspace(-1.6, 1.6, 97)
    num = df.probability_flow_ode(x, lambda u, t: ss.smoothed_score_1d(u, t, FIVE, kappa=0.8),
                                  t_start=0.03, t_end=1e-4, steps=300)
    np.testing.assert_allclose(num, ss.flow_map_spl(x, 0.03, FIVE, kappa=0.8, s=1e-4), atol=1e-4)


def test_interpolating_mass_two_point_formula_and_monte_carlo():
    t0, kappa = 0.05, 0.5
    delta = kappa * np.sqrt(t0)
    exact = norm.cdf(-kappa) - norm.cdf(-(2 - delta) / np.sqrt(t0))
    assert ss.interpolating_mass(t0, TWO, kappa=kappa) == pytest.approx(exact, rel=1e-10)
    rng = np.random.default_rng(0)
    x = df.sample_noised(FIVE[:, None], t0, 200_000, rng=rng)[:, 0]
    y = ss.flow_map_spl(x, t0, FIVE, kappa=kappa)
    mc = np.mean(np.min(np.abs(y[:, None] - FIVE), axis=1) > 0.02)
    assert ss.interpolating_mass(t0, FIVE, kappa=kappa, margin=0.02) == pytest.approx(mc, abs=0.005)


def test_score_loss_known_values():
    one = np.array([0.0])
    assert ss.score_loss_1d(lambda u, t: np.zeros_like(u), 0.01, one) == pytest.approx(1.0, rel=1e-6)
    exact = lambda u, t: df.empirical_score(u[:, None], t, TWO[:, None])[:, 0]  # noqa: E731
    assert ss.score_loss_1d(exact, 0.01, TWO) == pytest.approx(0.0, abs=1e-20)


def test_total_curvature():
    x = np.linspace(-1, 1, 1001)
    assert ss.total_curvature(np.abs(x - 0.1234), x) == pytest.approx(2.0)
    t, delta = 1e-2, 0.3
    f = ss.smoothed_score_1d(np.linspace(-2, 2, 4001), t, TWO, delta=delta)
    assert ss.total_curvature(f, np.linspace(-2, 2, 4001)) == pytest.approx(2 / ((1 - delta) * t))


def test_sample_metrics_on_constructed_points():
    pts = np.array([[-1.0, 0.0], [0.0, 0.0], [0.0, 0.5], [2.0, 0.0]])
    m = ss.sample_metrics(pts, TWO)
    assert m["near"] == 0.25 and m["interp"] == 0.25
    assert np.isnan(ss.sample_metrics(np.array([[0.0, 0.0]]), TWO)["aniso"])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: ss.smoothed_score_1d([0.0], 0.1, [-1.0, 0.0, 2.0], kappa=1), "uniformly spaced"),
        (lambda: ss.smoothed_score_1d([0.0], 0.1, TWO, kappa=1, delta=0.5), "exactly one"),
        (lambda: ss.smoothed_score_1d([0.0], 0.1, TWO, delta=1.5), "delta"),
        (lambda: ss.smoothed_score_1d([np.nan], 0.1, TWO, delta=0.5), "u must be finite"),
        (lambda: ss.flow_map_spl([0.0], 0.1, TWO, kappa=1, s=0.2), "s must be <="),
        (lambda: ss.interpolating_mass(0.1, TWO, kappa=-1), "kappa"),
        (lambda: ss.interpolating_mass(0.1, TWO, kappa=1, margin=1.0), "margin"),
        (lambda: ss.total_curvature([1.0, 2.0, 3.0], [0.0, 2.0, 1.0]), "increasing"),
        (lambda: ss.sample_metrics(np.zeros((3, 1)), TWO), "d >= 2"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()
