"""Tests of paperlib.generative.score_smoothing against closed forms, brute force and limits."""

import numpy as np
import pytest
from scipy.stats import norm

from paperlib.generative import diffusion as df
from paperlib.generative import min_curvature as mc
from paperlib.generative import score_smoothing as ss

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
    assert mc.score_loss_1d(lambda u, t: np.zeros_like(u), 0.01, one) == pytest.approx(1.0, rel=1e-6)
    exact = lambda u, t: df.empirical_score(u[:, None], t, TWO[:, None])[:, 0]  # noqa: E731
    assert mc.score_loss_1d(exact, 0.01, TWO) == pytest.approx(0.0, abs=1e-20)


def test_total_curvature():
    x = np.linspace(-1, 1, 1001)
    assert mc.total_curvature(np.abs(x - 0.1234), x) == pytest.approx(2.0)
    t, delta = 1e-2, 0.3
    f = ss.smoothed_score_1d(np.linspace(-2, 2, 4001), t, TWO, delta=delta)
    assert mc.total_curvature(f, np.linspace(-2, 2, 4001)) == pytest.approx(2 / ((1 - delta) * t))


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
        (lambda: mc.total_curvature([1.0, 2.0, 3.0], [0.0, 2.0, 1.0]), "increasing"),
        (lambda: ss.sample_metrics(np.zeros((3, 1)), TWO), "d >= 2"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_smoothing_delta_is_collapsing_zone_over_half_gap():
    assert ss.smoothing_delta(0.01, FIVE, kappa=0.5) == pytest.approx(0.5 * 0.1 / 0.25)
    assert ss.smoothing_delta(4.0, TWO, kappa=1.0) == 1.0


def test_loss_limit_matches_direct_integral():
    from scipy.integrate import quad
    for kappa in (0.0, 0.5, 2.0):
        direct = quad(lambda z: (kappa + z) ** 2 * norm.pdf(z), -np.inf, -kappa)[0]
        assert mc.loss_limit(kappa) == pytest.approx(direct, rel=1e-8)


def test_two_point_loss_matches_quadrature():
    # independent: score_loss_1d integrates the exact ESF against the smoothed score numerically
    for t in (1e-4, 1e-3):
        for kw in ({"kappa": 0.5}, {"kappa": 2.0}, {"delta": 0.01}):
            f = lambda u, tt, kw=kw: ss.smoothed_score_1d(u, tt, TWO, **kw)  # noqa: E731
            assert mc.two_point_loss(t, **kw) == pytest.approx(mc.score_loss_1d(f, t, TWO), rel=1e-5)


def test_noised_nodes_moments():
    u, w = ss.noised_nodes(0.04, FIVE, num=401)
    assert w.sum() == pytest.approx(1.0)
    assert np.sum(w * u) == pytest.approx(FIVE.mean(), abs=1e-12)
    assert np.sum(w * u**2) == pytest.approx(np.mean(FIVE**2) + 0.04, rel=1e-4)


def test_fit_delta_recovers_smoothing_and_sees_the_esf_as_unsmoothed():
    t = 0.004
    u, w = ss.noised_nodes(t, FIVE)
    for delta in (0.05, 0.4, 0.8):
        assert ss.fit_delta(ss.smoothed_score_1d(u, t, FIVE, delta=delta), u, w, t, FIVE) == pytest.approx(delta, abs=1e-4)
    esf = df.empirical_score(u[:, None], 1e-4, FIVE[:, None])[:, 0]
    u2, w2 = ss.noised_nodes(1e-4, FIVE)
    esf = df.empirical_score(u2[:, None], 1e-4, FIVE[:, None])[:, 0]
    assert ss.fit_delta(esf, u2, w2, 1e-4, FIVE) > 0.95


def test_polygon_metrics_chord_versus_arc():
    n, th = 8, np.linspace(0.35, 0.45, 50) + 0.0  # inside the middle half of gap 0 (0 .. pi/4)
    mid = np.pi / n
    chord = np.stack([np.cos(mid) / np.cos(th - mid) * np.cos(th), np.cos(mid) / np.cos(th - mid) * np.sin(th)], 1)
    arc = np.stack([np.cos(th), np.sin(th)], 1)
    assert ss.polygon_metrics(chord, n)["chord_position"] == pytest.approx(0.0, abs=1e-9)
    assert ss.polygon_metrics(arc, n)["chord_position"] == pytest.approx(1.0, abs=1e-9)
    assert ss.polygon_metrics(arc, n)["interp"] == 1.0


def test_smoothest_score_beats_every_ramp_and_matches_the_best_one():
    """Brute force over odd two-kink ramps (outer slope alpha, kink at 1 - d): r* is at most their best R."""
    from scipy.optimize import minimize
    t, eps = 1e-3, 0.1
    r = mc.smoothest_score(t, loss=eps)
    assert r.loss == pytest.approx(eps, rel=1e-6)
    s = np.sqrt(t)
    z = np.linspace(-8, 8, 4001)
    x = 1 + s * z
    esf = df.empirical_score(x[:, None], t, TWO[:, None])[:, 0]

    def ramp(p):  # odd: slope -alpha/t outside, linear through 0 inside (kink at 1 - d)
        alpha, d = p
        k = 1 - d
        return np.where(x > k, -alpha * (x - 1) / t, alpha * d / (k * t) * x)

    def loss(p):
        return t * np.trapezoid((ramp(p) - esf) ** 2 * norm.pdf(z), z)

    def curv(p):
        alpha, d = p
        return 2 * (alpha / t + alpha * d / ((1 - d) * t))

    best = minimize(lambda p: curv(p) * t, [0.8, 2.5 * s], method="SLSQP", bounds=[(0.01, 1.0), (1e-3, 0.5)],
                    constraints=[{"type": "ineq", "fun": lambda p: eps - loss(p)}])
    assert best.success
    assert r.curvature <= curv(best.x) * (1 + 1e-3)
    assert r.curvature == pytest.approx(curv(best.x), rel=0.02)
    assert r.delta == pytest.approx(best.x[1], rel=0.05)


def test_smoothest_score_penalised_and_constrained_forms_agree():
    a = mc.smoothest_score(4e-3, loss=0.05)
    b = mc.smoothest_score(4e-3, penalty=a.penalty)
    assert b.loss == pytest.approx(0.05, rel=1e-4) and b.delta == pytest.approx(a.delta, rel=1e-6)
    assert np.isnan(mc.smoothest_score(1e-4, penalty=10.0).delta)  # huge penalty: a linear fit, no kink


def test_icosahedron_vertices_are_evenly_spaced_unit_vectors():
    v = ss.icosahedron_vertices()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0)
    d = np.linalg.norm(v[:, None] - v[None], axis=2)
    assert np.allclose(np.sort(d, axis=1)[:, 1:6], 4 / np.sqrt(10 + 2 * np.sqrt(5)))  # five neighbours each
    assert np.allclose(v.sum(axis=0), 0.0)


def test_sphere_metrics_isotropic_blur_has_unit_anisotropy_and_no_interpolation():
    """An isotropic Gaussian spread around the data: aniso -> 1 (brute force); a subspace-only spread: large."""
    rng = np.random.default_rng(0)
    basis, _ = np.linalg.qr(rng.standard_normal((20, 3)))
    y = ss.icosahedron_vertices() @ basis.T
    blur = y[rng.integers(0, 12, 20_000)] + 0.005 * rng.standard_normal((20_000, 20))
    m = ss.sphere_metrics(blur, y, basis)
    assert m["aniso"] == pytest.approx(1.0, abs=0.03) and m["interp"] == 0.0 and m["near"] == 1.0
    u = ss.icosahedron_vertices()[:2].mean(axis=0)            # midpoint of an edge, radius 0.85
    mid = (u @ basis.T)[None] + 1e-3 * rng.standard_normal((50, 20))
    m = ss.sphere_metrics(mid, y, basis)
    assert m["interp"] == 1.0 and m["near"] == 0.0 and m["aniso"] > 50
    assert m["q95_normal"] == pytest.approx(1e-3 * np.sqrt(17), rel=0.3)
    assert m["r_q10"] == pytest.approx(np.linalg.norm(u), abs=0.01)   # all novel samples at the edge midpoint
    assert np.isnan(ss.sphere_metrics(blur, y, basis)["r_q10"])        # no novel sample on the subspace


def test_sphere_metrics_r_q10_is_the_radius_quantile_of_novel_on_subspace_samples():
    """Samples at two radii along one direction away from the vertices: r_q10 is the brute-force 10th percentile."""
    rng = np.random.default_rng(1)
    basis, _ = np.linalg.qr(rng.standard_normal((20, 3)))
    y = ss.icosahedron_vertices() @ basis.T
    face = ss.icosahedron_vertices()[[0, 1, 8]].mean(axis=0)
    face = face / np.linalg.norm(face)                          # a direction through a face centre
    radii = np.r_[np.full(30, 0.4), np.full(70, 0.95)]
    x = (radii[:, None] * face) @ basis.T
    m = ss.sphere_metrics(x, y, basis)
    assert m["r_q10"] == pytest.approx(np.quantile(radii, 0.1))


@pytest.mark.parametrize("kw, match", [
    (dict(basis=np.ones((20, 3))), "orthonormal"),
    (dict(basis=np.eye(20)), "basis"),
    (dict(shell=(1.0, 0.5)), "shell"),
    (dict(away_tol=0.0), "away_tol"),
])
def test_sphere_metrics_bad_input(kw, match):
    basis = np.eye(20)[:, :3]
    args = dict(samples=np.zeros((4, 20)), data=ss.icosahedron_vertices() @ basis.T, basis=basis) | kw
    with pytest.raises(ValueError, match=match):
        ss.sphere_metrics(**args)
