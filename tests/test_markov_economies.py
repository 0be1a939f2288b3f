"""Tests of paperlib.economics.markov_economies, paperlib.economics.exchange_solvers and paperlib.economics.exchange_dp.

Each piece is checked against an independent computation: the no-trade value in closed form, a
second (sparse) implementation of policy evaluation, finite differences of the exact value and of
the full GAP and NPM objectives, optax's Adam, brute-force value iteration for the best response,
and the closed-form equilibrium prices.
"""

import numpy as np
import pytest

from paperlib.economics import exchange_dp as dp
from paperlib.economics import exchange_solvers as xs
from paperlib.economics import markov_economies as mee

P3 = [[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.1, 0.3, 0.6]]


@pytest.fixture(scope="module")
def econ():
    return mee.make_economy(P3, [1.0, 1.2, 0.8], [1.0, 0.8, 1.2], 0.9)


def _random_feasible(econ, q, G, rng):
    lo, hi = mee.portfolio_bounds(econ, q, mee.wealth_grid(econ, G))
    return lo + rng.uniform(0.1, 0.9, size=hi.shape) * (hi - lo)


def test_equilibrium_prices_solve_the_euler_equation(econ):
    q = mee.equilibrium_prices(econ)
    P, R, e = np.array(P3), econ.asset_return, econ.endowment
    # q(s) u'(e(s)) = beta E[R u'(e(s'))], u' = 1/c, written out state by state
    for s in range(3):
        assert q[s] / e[s] == pytest.approx(0.9 * sum(P[s, t] * R[t] / e[t] for t in range(3)), rel=1e-12)
    np.testing.assert_allclose(q, [1.005, 0.888, 1.026], atol=5e-4)


def test_no_trade_value_matches_closed_form_on_nodes():
    # endowments on grid nodes: V(s, e(s)) = [(I - beta P)^-1 log e](s) exactly
    econ = mee.make_economy(P3, [1.0, 1.2, 0.8], [0.9, 0.6, 1.2], 0.8, wealth_low=0.3, wealth_high=2.1)
    grid = mee.wealth_grid(econ, 7)                                     # step 0.3: 0.6, 0.9, 1.2 are nodes
    V = mee.policy_value(econ, [0.8, 0.8, 0.8], np.zeros((3, 7)))
    exact = np.linalg.solve(np.eye(3) - 0.8 * np.array(P3), np.log(econ.endowment))
    idx = [int(round((w - 0.3) / 0.3)) for w in econ.endowment]
    np.testing.assert_allclose([V[s, idx[s]] for s in range(3)], exact, rtol=1e-12)
    # and off the path: V(s, w) = log w + beta E[V(s', e(s'))]
    np.testing.assert_allclose(V - np.log(grid), np.broadcast_to((0.8 * np.array(P3) @ exact)[:, None], V.shape), rtol=1e-12)


def test_dense_and_sparse_policy_evaluation_agree(econ):
    rng = np.random.default_rng(0)
    q = np.array([0.9, 1.1, 1.0])
    th = _random_feasible(econ, q, 25, rng)
    np.testing.assert_allclose(mee.policy_value(econ, q, th), dp.evaluate_policy(econ, q, th), rtol=1e-10)


def test_value_gradient_matches_finite_differences(econ):
    rng = np.random.default_rng(1)
    q = np.array([0.95, 0.9, 1.05])
    th = _random_feasible(econ, q, 13, rng)
    wts = rng.uniform(size=th.shape)
    d_th, d_q = mee.value_gradient(econ, q, th, wts)
    J = lambda q_, th_: float((wts * mee.policy_value(econ, q_, th_)).sum())
    h = 1e-6
    for s, g in [(0, 3), (1, 7), (2, 11)]:      # interior of linear-interpolation cells
        e = np.zeros_like(th)
        e[s, g] = h
        assert d_th[s, g] == pytest.approx((J(q, th + e) - J(q, th - e)) / (2 * h), rel=1e-4, abs=1e-8)
    for s in range(3):
        e = np.zeros(3)
        e[s] = h
        assert d_q[s] == pytest.approx((J(q + e, th) - J(q - e, th)) / (2 * h), rel=1e-5)


def test_best_response_matches_brute_force_value_iteration():
    econ = mee.make_economy([[0.7, 0.3], [0.4, 0.6]], [1.0, 1.1], [1.0, 0.9], 0.8)
    q = np.array([0.85, 0.8])
    V, th = dp.best_response(econ, q, grid_size=13, n_actions=25)
    grid, (lo, hi) = mee.wealth_grid(econ, 13), mee._box(econ)
    acts = np.linspace(lo, hi, 25)
    W = np.zeros((2, 13))
    for _ in range(160):                     # plain value iteration, loops and np.interp
        new = np.empty_like(W)
        for s in range(2):
            for g, w in enumerate(grid):
                best = -np.inf
                for a in acts:
                    c = w - q[s] * a
                    if c < econ.min_consumption:
                        continue
                    cont = sum(econ.transition[s, t] * np.interp(econ.endowment[t] + a * econ.asset_return[t], grid, W[t])
                               for t in range(2))
                    best = max(best, np.log(c) + 0.8 * cont)
                new[s, g] = best
        W = new
    np.testing.assert_allclose(V, W, atol=1e-8)


def test_certificate_is_zero_at_the_closed_form_and_sharp_off_it(econ):
    q = mee.equilibrium_prices(econ)
    _, th = dp.best_response(econ, q)
    cert = dp.certify(econ, q, th)
    assert np.abs(cert.consumer_regret).max() < 1e-9            # its own best response
    np.testing.assert_allclose(cert.best_response[[0, 1, 2], [140, 100, 180]], 0.0, atol=2e-3)
    assert np.abs(cert.excess_demand).max() < 4e-3
    for scale in (0.99, 1.01):               # the equilibrium policy at prices 1% off
        off = dp.certify(econ, scale * q, th)
        assert off.consumer_regret.mean() > 5e-3


def _jitter(params, rng):
    """Move every parameter off its initial value: zero-initialised biases put some ReLU inputs exactly
    at the kink, where a central difference averages the two one-sided slopes."""
    return [p + 0.05 * rng.standard_normal(p.shape) for p in params]


def _fd_check(f, params, grads, rng, rel):
    """Central differences of the scalar f at four random entries of every parameter array."""
    h = 1e-6
    for j, p in enumerate(params):
        for _ in range(4):
            idx = tuple(int(rng.integers(0, n)) for n in p.shape)
            up, dn = [a.copy() for a in params], [a.copy() for a in params]
            up[j][idx] += h
            dn[j][idx] -= h
            fd = (f(up) - f(dn)) / (2 * h)
            assert grads[j][idx] == pytest.approx(fd, rel=rel, abs=1e-7), (j, idx)


def test_gap_gradient_matches_finite_differences(econ):
    # the generator's full gradient of Psi: the auctioneer's adjoint, d theta_hi / d q and the
    # max(., 0) mask, with the adversary network held fixed
    rng = np.random.default_rng(2)
    gen, adv = xs.init_generator(econ, width=5, runs=2, rng=rng)
    grid = mee.wealth_grid(econ, 9)
    x = xs._grid_features(econ, grid)
    for tau in (3.0, 0.0):
        def psi(p, grad=False):
            q = econ.price_bound / (1 + np.exp(-p[0]))
            lo, hi, dhi = mee._bounds(econ, q, grid)
            side = xs._adversary_side(econ, xs._net_out(adv, x).reshape(2, 3, 9), q, lo, hi, dhi, grid)
            z, acts = xs._mlp_forward(p[1:], x)
            parts, d_z, d_q, _ = xs._gap_objective(econ, q, z.reshape(2, 3, 9), side, grid, tau, 1.0)
            if not grad:
                return parts.sum()
            return [d_q * q * (1 - q / econ.price_bound)] + xs._mlp_backward(p[1:], acts, d_z.reshape(2, -1))[0]
        params = _jitter([gen["price_logit"]] + gen["net"], rng)
        _fd_check(psi, params, psi(params, grad=True), rng, rel=1e-4)


def test_npm_gradient_matches_finite_differences(econ):
    rng = np.random.default_rng(3)
    gen, _ = xs.init_generator(econ, width=5, runs=2, rng=rng)
    grid = mee.wealth_grid(econ, 9)
    params = _jitter([gen["price_logit"]] + gen["net"], rng)
    loss = lambda p: 0.5 * xs._npm_loss_and_grad(econ, p, grid)[0].sum()
    _fd_check(loss, params, xs._npm_loss_and_grad(econ, params, grid)[1], rng, rel=1e-5)


def test_adam_matches_optax():
    optax = pytest.importorskip("optax")
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(4)
    params = [rng.normal(size=(2, 3)), rng.normal(size=(2, 4, 5))]
    with jax.enable_x64(True):     # compare in float64 whatever the global JAX setting
        ours, ref, ref_state = xs._Adam(params), [p.copy() for p in params], optax.scale_by_adam().init(params)
        for k in range(5):
            grads = [rng.normal(size=p.shape) for p in params]
            params = ours.step(params, grads, 0.1)
            upd, ref_state = optax.scale_by_adam().update(grads, ref_state)
            ref = [p - 0.1 * np.asarray(u) for p, u in zip(ref, upd)]
            np.testing.assert_allclose(params[0], ref[0], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(params[1], ref[1], rtol=1e-10, atol=1e-12)


def test_gap_converges_to_closed_form_prices_on_a_two_state_economy():
    econ = mee.make_economy([[0.7, 0.3], [0.4, 0.6]], [1.0, 1.1], [1.0, 0.9], 0.9)
    start = xs.init_generator(econ, width=8, runs=2, rng=np.random.default_rng(3))
    res = xs.train_gap(econ, start, steps=300, grid_size=16, snapshots=(0, 300))
    q_star = mee.equilibrium_prices(econ)
    err0, err = (np.abs(res.prices[:, k] / q_star - 1).max(1) for k in (0, -1))
    assert np.all(err < 0.05) and np.all(err < 0.3 * err0)          # started elsewhere, came close
    q, certs = xs.certify_runs(res.snapshots[300], econ, grid_size=91)
    q0, certs0 = xs.certify_runs(res.snapshots[0], econ, grid_size=91)
    for c, c0 in zip(certs, certs0):
        assert c.consumer_regret.mean() < 0.1 * c0.consumer_regret.mean()


def test_npm_trains_and_reports_its_two_residuals():
    econ = mee.make_economy([[0.7, 0.3], [0.4, 0.6]], [1.0, 1.1], [1.0, 0.9], 0.9)
    gen, _ = xs.init_generator(econ, width=8, runs=2, rng=np.random.default_rng(0))
    res = xs.train_npm(econ, gen, steps=200, grid_size=16)
    assert res.adversary is None and res.loss.shape == (2, 200, 2)
    assert np.all(res.loss[:, -1].sum(1) < 0.1 * res.loss[:, 0].sum(1))


def test_generator_policy_is_feasible():
    econ = mee.make_economy([[0.7, 0.3], [0.4, 0.6]], [1.0, 1.1], [1.0, 0.9], 0.9)
    gen, _ = xs.init_generator(econ, width=8, runs=2, rng=np.random.default_rng(0))
    w = mee.wealth_grid(econ, 50)
    q, th = xs.generator_policy(xs.select_run(gen, 1), econ, w)
    lo, hi = mee.portfolio_bounds(econ, q, w)
    assert np.all(th > lo) and np.all(th < hi)
    assert np.all(q > 0.5) and np.all(q < 1.5)                      # q_bar sigmoid(U(-1, 1))


def test_best_response_warns_when_policy_iteration_is_cut_short(econ):
    with pytest.warns(RuntimeWarning, match="max_iter"):
        dp.best_response(econ, mee.equilibrium_prices(econ), grid_size=31, n_actions=41, max_iter=1)


@pytest.mark.parametrize("kwargs, name", [
    (dict(transition=[[0.5, 0.6], [0.5, 0.5]]), "transition"),
    (dict(asset_return=[1.0, -1.0]), "asset_return"),
    (dict(endowment=[1.0, np.nan]), "endowment"),
    (dict(discount=1.0), "discount"),
    (dict(n_consumers=2.5), "n_consumers"),
    (dict(price_bound=0.5), "price_bound"),
    (dict(endowment=[1.0, 3.0]), "endowment"),
])
def test_make_economy_rejects_bad_input(kwargs, name):
    args = dict(transition=[[0.7, 0.3], [0.4, 0.6]], asset_return=[1.0, 1.1], endowment=[1.0, 0.9], discount=0.9)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        mee.make_economy(**args)


def test_functions_reject_bad_input(econ):
    q = mee.equilibrium_prices(econ)
    with pytest.raises(ValueError, match="prices"):
        mee.policy_value(econ, [1.0, -1.0, 1.0], np.zeros((3, 5)))
    with pytest.raises(ValueError, match="portfolio"):
        mee.policy_value(econ, q, np.full((3, 5), 0.9))              # infeasible: beyond the box
    with pytest.raises(ValueError, match="weights"):
        mee.value_gradient(econ, q, np.zeros((3, 5)), np.zeros((3, 4)))
    with pytest.raises(ValueError, match="wealth"):
        mee.portfolio_bounds(econ, q, [0.1, 1.0])
    with pytest.raises(ValueError, match="econ"):
        dp.best_response("economy", q)
    with pytest.raises(ValueError, match="n_actions"):
        dp.best_response(econ, q, n_actions=1)
    start = xs.init_generator(econ, width=4, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        xs.init_generator(econ, rng=0)
    with pytest.raises(ValueError, match="start"):
        xs.train_gap(econ, start[0], steps=2)
    with pytest.raises(ValueError, match="tau"):
        xs.train_gap(econ, start, steps=2, tau=-1.0)
    with pytest.raises(ValueError, match="decay_adversary"):
        xs.train_gap(econ, start, steps=2, decay_adversary="yes")
    with pytest.raises(ValueError, match="run"):
        xs.select_run(start[0], 1)
    with pytest.raises(ValueError, match="generator"):
        xs.certify_runs({"price_logit": np.zeros((1, 2))}, econ)
