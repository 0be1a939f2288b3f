"""Tests of paperlib.scaling_laws.batch_schedules against brute-force searches, closed forms and jax.grad."""

import numpy as np
import pytest

from paperlib.scaling_laws import batch_schedules as bs
from paperlib.scaling_laws import functional_scaling as fs

LAM, M0 = fs.power_law_task(40, beta=3.0, s=0.2)
OP1 = fs.sgd_moment_operator(LAM, eta=0.3, batch=1, sigma2=1.0)
OP8 = fs.sgd_moment_operator(LAM, eta=0.3, batch=8, sigma2=1.0)


def test_two_stage_risk_is_the_two_stage_schedule():
    D = 4000.0
    P = np.array([0.0, 1000.0, 2500.0, D])
    got = bs.two_stage_risk(M0, OP1, OP8, data=D, switch=P)
    want = [fs.schedule_risk(M0, [OP1, OP8], [p / 1, (D - p) / 8]) for p in P]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got[0] == pytest.approx(fs.schedule_risk(M0, [OP8], [D / 8]), rel=1e-12)
    assert got[-1] == pytest.approx(fs.schedule_risk(M0, [OP1], [D]), rel=1e-12)
    fsl = bs.two_stage_risk(M0, OP1, OP8, data=D, switch=P[:2], model="fsl")
    assert fsl[1] == pytest.approx(fs.fsl_risk(M0, [OP1, OP8], [1000, 375]), rel=1e-12)


def test_optimal_switch_matches_brute_force_grid():
    for s, D in ((0.2, 3e4), (1.5, 3e4), (0.9, 2e3)):
        _, m0 = fs.power_law_task(40, beta=3.0, s=s)
        res = bs.optimal_switch(m0, OP1, OP8, data=D)
        fine = np.linspace(0, 1, 20001)
        risks = bs.two_stage_risk(m0, OP1, OP8, data=D, switch=fine * D)
        assert res.risk <= risks.min() * (1 + 1e-9)
        assert res.fraction == pytest.approx(fine[np.argmin(risks)], abs=1e-3)
        assert res.grid_minima == 1
    assert bs.optimal_switch(fs.power_law_task(40, beta=3.0, s=1.5)[1], OP1, OP8, data=3e4).fraction == 0.0


def test_catch_up_gap_vanishes_without_a_switch_and_is_positive_with_one():
    lags = np.array([0.0, 10, 100, 1000])
    same = bs.catch_up(M0, OP8, OP8, switch_step=500, lags=lags)
    np.testing.assert_allclose(same.gap, 0.0, atol=1e-15)
    c = bs.catch_up(M0, OP1, OP8, switch_step=500, lags=lags)
    assert np.all(c.gap > 0) and np.all(np.diff(c.rel_gap) < 0)
    # the switched run is the two-stage schedule; the large-batch run the constant one
    assert c.risk_switched[2] == pytest.approx(fs.schedule_risk(M0, [OP1, OP8], [500, 100]), rel=1e-12)
    assert c.risk_large[2] == pytest.approx(fs.schedule_risk(M0, [OP8], [600]), rel=1e-12)


def test_catch_up_lag_is_the_first_crossing():
    lag = bs.catch_up_lag(M0, OP1, OP8, switch_step=1000, threshold=0.05)
    at = bs.catch_up(M0, OP1, OP8, switch_step=1000, lags=[0.99 * lag, lag, 1.01 * lag]).rel_gap
    assert at[1] == pytest.approx(0.05, rel=1e-6)
    assert at[0] > 0.05 > at[2]
    assert bs.catch_up_lag(M0, OP8, OP8, switch_step=1000, threshold=0.05) == 0.0


def test_optimal_piecewise_schedule_beats_constant_and_spends_the_budget():
    lam, m0 = fs.power_law_task(25, beta=3.0, s=1.5)
    res = bs.optimal_piecewise_schedule(lam, m0, eta=0.3, sigma2=1.0, data=2000, segments=4)
    assert res.steps_per_segment * res.batches.sum() == pytest.approx(2000)
    ops = [fs.sgd_moment_operator(lam, eta=0.3, batch=b, sigma2=1.0) for b in res.batches]
    assert fs.schedule_risk(m0, ops, [res.steps_per_segment] * 4) == pytest.approx(res.risk, rel=1e-9)
    assert res.risk < res.constant_risk
    # one segment: the best constant batch, against a brute-force scan
    one = bs.optimal_piecewise_schedule(lam, m0, eta=0.3, sigma2=1.0, data=2000, segments=1)
    grid = np.geomspace(1, 2000, 120)
    scan = [fs.schedule_risk(m0, [fs.sgd_moment_operator(lam, eta=0.3, batch=b, sigma2=1.0)], [2000 / b])
            for b in grid]
    assert one.risk <= min(scan) * (1 + 1e-6)


def test_fsl_optimal_schedule_kkt_form_and_budget():
    lam = fs.power_law_task(30, beta=2.0, s=1.0)[0]
    m0 = np.zeros(30)  # no signal: the FSL noise term alone, b* proportional to sqrt(K(T - z))
    res = bs.fsl_optimal_schedule(lam, m0, eta=0.2, sigma2=1.0, data=500, b_min=1e-6)
    K = np.exp(-2 * np.outer(res.horizon - res.time, lam)) @ lam**2
    ratio = res.batches / np.sqrt(K)
    np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
    assert np.trapezoid(res.batches, res.time) == pytest.approx(0.2 * 500, rel=1e-6)
    # with signal: beats the constant schedule of the same horizon and budget
    lam, m0 = fs.power_law_task(30, beta=3.0, s=1.5)
    res = bs.fsl_optimal_schedule(lam, m0, eta=0.3, sigma2=1.0, data=3000)
    b_const = 0.3 * 3000 / res.horizon
    const = fs.fsl_risk(m0, [fs.sgd_moment_operator(lam, eta=0.3, batch=max(b_const, 1.0), sigma2=1.0)],
                        [res.horizon / 0.3])
    assert res.risk < const
    # easy task: the floor never binds, and the batch grows over the last 90 % of training (early on the
    # weight e(z) + sigma2 of the noise, large while the signal is unlearnt, makes it dip first)
    late = res.time >= 0.1 * res.horizon
    assert res.growth_fraction == 1.0 and np.all(np.diff(res.batches[late]) >= -1e-12)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="switch"):
        bs.two_stage_risk(M0, OP1, OP8, data=100, switch=150)
    with pytest.raises(ValueError, match="model"):
        bs.two_stage_risk(M0, OP1, OP8, data=100, switch=50, model="sde")
    with pytest.raises(ValueError, match="op_large"):
        bs.optimal_switch(M0, OP1, None, data=100)
    with pytest.raises(ValueError, match="grid"):
        bs.optimal_switch(M0, OP1, OP8, data=100, grid=2)
    with pytest.raises(ValueError, match="threshold"):
        bs.catch_up_lag(M0, OP1, OP8, switch_step=10, threshold=1.5)
    with pytest.raises(ValueError, match="lags"):
        bs.catch_up(M0, OP1, OP8, switch_step=10, lags=[-1.0])
    with pytest.raises(ValueError, match="segments"):
        bs.optimal_piecewise_schedule(LAM, M0, eta=0.3, sigma2=1.0, data=100, segments=0)
    with pytest.raises(ValueError, match="b_min"):
        bs.fsl_optimal_schedule(LAM, M0, eta=0.3, sigma2=1.0, data=100, b_min=0.0)
