"""Tests of paperlib.transformers.single_location against independent computations."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from paperlib.transformers import single_location as sl

pytestmark = pytest.mark.usefixtures("x64")  # float64 references; see conftest.py


def _brute_predict(k, v, X, activation):
    # explicit loop over sequences and tokens, numpy only
    d = X.shape[-1]
    out = []
    for seq in np.asarray(X):
        s = seq @ k / np.sqrt(d)
        u = seq @ v / np.sqrt(d)
        if activation == "softmax":
            w = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        elif activation == "exp":
            w = np.exp(s)
        elif activation == "erf":
            w = 1 + np.array([math.erf(t) for t in s])
        else:
            w = 1 + s
        out.append(np.sum(w * u))
    return np.array(out)


@pytest.mark.parametrize("activation", ["softmax", "linear", "exp", "erf"])
def test_predict_matches_brute_force(activation):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 3, 6))
    k, v = rng.standard_normal(6), rng.standard_normal(6)
    got = np.asarray(sl.attention_predict(k, v, X, activation=activation))
    np.testing.assert_allclose(got, _brute_predict(k, v, X, activation), rtol=1e-10)


def test_teacher_orthogonal_with_norm_d():
    ks, vs = sl.make_teacher(10, rng=np.random.default_rng(1))
    np.testing.assert_allclose([ks @ ks, vs @ vs, ks @ vs], [10, 10, 0], atol=1e-10)


def test_softmax_at_teacher_equals_posterior_mean():
    # softmax attention with k = mu k*, v = v* is the Bayes predictor: identical risk on one sample
    proj = sl.sample_projections(2000, 4, 1.5, 0.2, rng=np.random.default_rng(0))
    z = jnp.zeros(())
    op = sl.OrderParameters(jnp.asarray(1.5), z, z, jnp.asarray(1.0), z, z, z)
    r_attn = float(sl.order_parameter_risk(op, proj, activation="softmax"))
    r_bayes_direct = float(jnp.mean((jnp.sum(jax.nn.softmax(1.5 * proj["h"]) * proj["g"], -1) - proj["y"]) ** 2))
    np.testing.assert_allclose(r_attn, r_bayes_direct, rtol=1e-10)
    assert abs(float(sl.bayes_risk(proj, mu=1.5, sigma=0.2)) - r_attn) < 1e-10
    # the conditional-variance formula sigma^2 + E Var(g_l* | X) agrees up to Monte Carlo error
    p = np.asarray(jax.nn.softmax(1.5 * proj["h"]))
    g = np.asarray(proj["g"])
    cond_var = 0.04 + np.mean(np.sum(p * g**2, -1) - np.sum(p * g, -1) ** 2)
    assert abs(cond_var - r_attn) < 0.03


def test_bayes_risk_limits():
    proj0 = sl.sample_projections(10000, 3, 0.0, 0.0, rng=np.random.default_rng(1))
    # mu = 0: location uninformative, E[y|X] = mean(g), risk 1 - 1/L
    assert abs(float(sl.bayes_risk(proj0, mu=0.0, sigma=0.0)) - (1 - 1 / 3)) < 0.02
    proj_big = sl.sample_projections(2000, 3, 12.0, 0.3, rng=np.random.default_rng(2))
    assert abs(float(sl.bayes_risk(proj_big, mu=12.0, sigma=0.3)) - 0.09) < 0.01


def test_linear_closed_form_matches_monte_carlo_and_grid():
    L, mu, sigma = 3, 1.7, 0.1
    risk, a, e = sl.linear_population_risk(L, mu, sigma)
    proj = sl.sample_projections(50000, L, mu, sigma, rng=np.random.default_rng(3))
    z = jnp.zeros(())

    @jax.vmap
    def mc(a_, e_):
        op = sl.OrderParameters(a_, z, z, e_, z, z, z)
        return sl.order_parameter_risk(op, proj, activation="linear")

    best = float(mc(jnp.array([a]), jnp.array([e]))[0])
    assert abs(best - risk) < 0.02
    # a brute-force grid over (a, e) never does meaningfully better than the closed-form optimum
    aa, ee = np.meshgrid(np.linspace(0, 3, 13), np.linspace(0.05, 0.5, 10))
    assert float(jnp.min(mc(jnp.asarray(aa.ravel()), jnp.asarray(ee.ravel())))) > best - 1e-3
    assert sl.linear_population_risk(1, 2.0, 0.3)[0] == pytest.approx(0.09)  # L = 1: exact


def test_order_parameter_risk_matches_direct_risk():
    rng = np.random.default_rng(4)
    d, L, mu, sigma = 40, 3, 1.5, 0.1
    ks, vs = sl.make_teacher(d, rng=rng)
    k = 1.2 * ks + 0.3 * vs + rng.standard_normal(d)
    v = 0.2 * ks + 0.8 * vs + 0.5 * rng.standard_normal(d)
    X, y, _ = sl.sample_slr(20000, L, mu, sigma, ks, vs, rng=np.random.default_rng(5))
    proj = sl.sample_projections(20000, L, mu, sigma, rng=np.random.default_rng(6))
    op = sl.order_parameters(k, v, ks, vs)
    for act in ("softmax", "linear"):
        direct = float(jnp.mean((sl.attention_predict(k, v, X, activation=act) - y) ** 2))
        reduced = float(sl.order_parameter_risk(op, proj, activation=act))
        assert abs(direct - reduced) < 0.06 * direct


def test_order_parameters_recover_construction():
    ks, vs = sl.make_teacher(30, rng=np.random.default_rng(7))
    op = sl.order_parameters(2 * ks - vs, 0.5 * vs, ks, vs)
    np.testing.assert_allclose([float(x) for x in op], [2, -1, 0, 0.5, 0, 0, 0], atol=1e-10)


def test_train_erm_vmaps_and_learns():
    rng = np.random.default_rng(8)
    d, L = 16, 3
    ks, vs = sl.make_teacher(d, rng=rng)
    X, y, _ = sl.sample_slr(160, L, 2.0, 0.1, ks, vs, rng=np.random.default_rng(9))
    W = np.ones((2, 160))
    p = sl.train_erm(X, y, W, np.array([0.01, 100.0]), activation="softmax", steps=200, key=jax.random.key(10))
    assert p["k"].shape == (2, d)
    op = sl.order_parameters(p["k"], p["v"], ks, vs)
    assert float(op.e[0]) > 0.5  # learns the value direction
    assert float(jnp.sum(p["k"][1] ** 2)) < 0.1 * float(jnp.sum(p["k"][0] ** 2))  # huge ridge shrinks


def test_fit_population_softmax_finds_mu():
    proj = sl.sample_projections(3000, 3, 2.0, 0.1, rng=np.random.default_rng(11))
    _, theta, se = sl.fit_population(proj, activation="softmax")
    assert abs(theta[0] - 2.0) < 0.3 and abs(theta[3] - 1.0) < 0.1
    assert np.all(se > 0) and se[0] < 0.3


def test_errors():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="activation"):
        sl.attention_predict(np.ones(3), np.ones(3), np.ones((2, 2, 3)), activation="relu")
    with pytest.raises(ValueError, match="X"):
        sl.attention_predict(np.ones(3), np.ones(3), np.ones((2, 3)), activation="softmax")
    with pytest.raises(ValueError, match="NaN"):
        sl.attention_predict(np.array([np.nan, 1, 1]), np.ones(3), np.ones((2, 2, 3)), activation="linear")
    with pytest.raises(ValueError, match="d must be"):
        sl.make_teacher(1, rng=rng)
    with pytest.raises(ValueError, match="mu"):
        sl.linear_population_risk(3, -1.0, 0.1)
    with pytest.raises(ValueError, match="L must be"):
        sl.sample_projections(10, 0, 1.0, 0.1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="n must be"):
        sl.sample_slr(-1, 2, 1.0, 0.1, np.ones(3), np.ones(3), rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="init"):
        sl.fit_population({}, activation="softmax", init=(1.0, 2.0))
    with pytest.raises(ValueError, match="weights"):
        sl.train_erm(np.ones((4, 2, 3)), np.ones(4), -np.ones((1, 4)), np.ones(1), activation="linear", key=jax.random.key(0))
    with pytest.raises(ValueError, match="lam"):
        sl.train_erm(np.ones((4, 2, 3)), np.ones(4), np.ones((1, 4)), -np.ones(1), activation="linear", key=jax.random.key(0))
    with pytest.raises(ValueError, match="q_k"):
        z = jnp.zeros(())
        sl.order_parameter_risk(sl.OrderParameters(z, z, z, z, jnp.asarray(-1.0), z, z),
                                sl.sample_projections(10, 2, 1.0, 0.1, rng=np.random.default_rng(0)), activation="linear")


def test_empirical_risk_batch_matches_single():
    rng = np.random.default_rng(12)
    X = rng.standard_normal((7, 3, 5))
    y = rng.standard_normal(7)
    k, v = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    got = np.asarray(sl.empirical_risk(k, v, X, y, activation="softmax"))
    want = [np.mean((_brute_predict(k[i], v[i], X, "softmax") - y) ** 2) for i in range(2)]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    with pytest.raises(ValueError, match="need k, v"):
        sl.empirical_risk(k, v, X, y[:3], activation="softmax")


def test_stderr_matches_numpy():
    rng = np.random.default_rng(13)
    X = rng.standard_normal((50, 3, 5))
    y = rng.standard_normal(50)
    k, v = rng.standard_normal((1, 5)), rng.standard_normal((1, 5))
    risk, se = sl.empirical_risk(k, v, X, y, activation="linear", return_stderr=True)
    sq = (_brute_predict(k[0], v[0], X, "linear") - y) ** 2
    np.testing.assert_allclose([float(risk[0]), float(se[0])], [sq.mean(), sq.std() / np.sqrt(50)], rtol=1e-10)
    proj = sl.sample_projections(400, 3, 1.0, 0.1, rng=rng)
    z = jnp.zeros(())
    op = sl.OrderParameters(jnp.asarray(0.7), z, z, jnp.asarray(0.5), z, z, z)
    r, s = sl.order_parameter_risk(op, proj, activation="softmax", return_stderr=True)
    p = np.exp(0.7 * proj["h"]) / np.exp(0.7 * proj["h"]).sum(-1, keepdims=True)
    sq = (np.sum(p * 0.5 * proj["g"], -1) - proj["y"]) ** 2
    np.testing.assert_allclose([float(r), float(s)], [sq.mean(), sq.std() / np.sqrt(400)], rtol=1e-10)


def test_linear_closed_form_equals_least_squares_on_its_features():
    # Independent route: the linear head is e*sum_l g_l + (e a)*sum_l h_l g_l, so its optimum is the
    # least-squares fit of y on the two features (sum g, sum h g); solve it on a large sample.
    L, mu, sigma = 5, 2.3, 0.2
    proj = sl.sample_projections(400_000, L, mu, sigma, rng=np.random.default_rng(14))
    F = np.stack([proj["g"].sum(-1), (proj["h"] * proj["g"]).sum(-1)], -1)
    coef, *_ = np.linalg.lstsq(F, proj["y"], rcond=None)
    risk, a, e = sl.linear_population_risk(L, mu, sigma)
    np.testing.assert_allclose([coef[0], coef[1] / coef[0]], [e, a], rtol=0.03)
    assert abs(np.mean((F @ coef - proj["y"]) ** 2) - risk) < 0.01


def test_erf_offset_and_componentwise_fits():
    # the offset enters as 1 + erf(s + beta): compare with math.erf on a tiny input
    s, u = np.array([[0.3, -1.2]]), np.array([[2.0, 0.5]])
    got = float(sl._readout(jnp.asarray(s), jnp.asarray(u), "erf", -0.7)[0])
    want = sum((1 + math.erf(si - 0.7)) * ui for si, ui in zip(s[0], u[0]))
    assert got == pytest.approx(want, rel=1e-12)
    # component-wise heads cannot normalise: their fitted population risk stays above Bayes
    proj = sl.sample_projections(4000, 4, 2.0, 0.1, rng=np.random.default_rng(15))
    bayes = float(sl.bayes_risk(proj, mu=2.0, sigma=0.1))
    r_erf, th, se = sl.fit_population(proj, activation="erf", init=(0.3, 0.2, 0.2, 0.3, 0.0))
    assert th.shape == (5,) and se.shape == (5,) and th[4] < 0      # a negative threshold: a soft gate
    r_exp, th_exp, _ = sl.fit_population(proj, activation="exp", init=(0.3, 0.2, 0.2, 0.3))
    assert th_exp.shape == (4,)
    assert min(r_erf, r_exp) > bayes + 0.03
    with pytest.raises(ValueError, match="init"):
        sl.fit_population(proj, activation="erf", init=(0.3, 0.2, 0.2, 0.3))


def test_linear_closed_form_at_long_sequences():
    # L = 8 separates our limit L/nu from (L/(L-1))/nu: direct minimisation must land on the closed form
    L, mu, sigma = 8, 3.0, 0.1
    proj = sl.sample_projections(20000, L, mu, sigma, rng=np.random.default_rng(16))
    risk_fit, theta, _ = sl.fit_population(proj, activation="linear", init=(0.3, 0.2, 0.2, 0.3))
    risk, a, e = sl.linear_population_risk(L, mu, sigma)
    assert abs(risk_fit - risk) < 0.015
    assert abs(abs(theta[0]) - a) < 0.3
    nu = 1e6  # the exact formula's limit: nu * (E_lin - sigma^2) -> L
    assert nu * (sl.linear_population_risk(L, math.sqrt(nu), 0.0)[0]) == pytest.approx(L, rel=1e-4)


def test_select_and_score_and_summary():
    rng = np.random.default_rng(17)
    d, L = 8, 3
    ks, vs = sl.make_teacher(d, rng=rng)
    X, y, _ = sl.sample_slr(2 * d, L, 2.0, 0.1, ks, vs, rng=rng)
    Xv, yv, _ = sl.sample_slr(200, L, 2.0, 0.1, ks, vs, rng=rng)
    proj = sl.sample_projections(2000, L, 2.0, 0.1, rng=rng)
    risk, lam = sl.select_and_score(X, y, Xv, yv, ks, vs, proj, alphas=np.array([1.0, 2.0]),
                                    lambdas=np.array([0.1, 1e4]), steps=50, key=jax.random.key(0))
    assert risk.shape == (2, 2) and set(np.unique(lam)) <= {0.1, 1e4}
    # the mixed-activation program trains each head as train_erm would (same data, ridge, steps)
    p = sl.train_erm(X, y, np.ones((1, 2 * d)), np.array([1e4]), activation="linear", steps=50, key=jax.random.key(1))
    trivial = float(sl.order_parameter_risk(sl.order_parameters(p["k"], p["v"], ks, vs), proj, activation="linear")[0])
    assert np.all(risk <= trivial + 0.05)   # validation never picks something much worse than a shrunk head
    with pytest.raises(ValueError, match="X must hold"):
        sl.select_and_score(X, y, Xv, yv, ks, vs, proj, alphas=np.array([4.0]), lambdas=np.array([1.0]), key=jax.random.key(0))
    with pytest.raises(ValueError, match="activations"):
        sl.select_and_score(X, y, Xv, yv, ks, vs, proj, alphas=np.array([1.0]), lambdas=np.array([1.0]),
                            activations="softmax", key=jax.random.key(0))
    df = sl.summarise_differences({4: [np.array([1.0]), np.array([3.0]), np.array([2.0])]}, np.array([0.5]))
    row = df.loc[(4, 0.5)]
    assert row["mean"] == pytest.approx(2.0) and row["SE"] == pytest.approx(1 / np.sqrt(3))
    assert row["outcome"] == "linear better"
    with pytest.raises(ValueError, match="delta"):
        sl.summarise_differences({4: [np.array([1.0])]}, np.array([0.5]))
