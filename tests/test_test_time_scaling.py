"""paperlib.test_time_scaling against brute force, closed forms and known bounds."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from paperlib import test_time_scaling as tts


def _sc_brute_force(n, probs):
    """SC success by enumerating every sequence of n answers (tiny n only)."""
    total = 0.0
    for seq in itertools.product(range(len(probs)), repeat=n):
        counts = np.bincount(seq, minlength=len(probs))
        top = counts.max()
        if counts[0] == top:
            total += np.prod([probs[a] for a in seq]) / np.sum(counts == top)
    return total


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_sc_two_answer_matches_enumeration(n):
    gap = 0.3
    brute = _sc_brute_force(n, [(1 + gap) / 2, (1 - gap) / 2])
    assert tts.sc_success_two_answer(n, gap) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_sc_diffuse_matches_enumeration_with_many_singletons(n):
    # n distinct wrong answers of tiny mass each are (almost) never repeated: enumerate with
    # M wrong answers and let M grow; the closed form is the M -> infinity limit.
    p = 0.35
    M = 40 if n <= 3 else 12
    probs = [p] + [(1 - p) / M] * M
    if n <= 3:
        brute = _sc_brute_force(n, probs)
        assert tts.sc_success_diffuse(n, p) == pytest.approx(brute, abs=0.02)
    # exact check through Monte Carlo with an explicit diffuse bucket
    est = tts.self_consistency_mc(n, [p], diffuse_mass=1 - p, trials=200_000, rng=np.random.default_rng(0))
    assert abs(est.mean - tts.sc_success_diffuse(n, p)) < 5 * est.stderr + 1e-12


def test_bon_closed_form_and_sample_complexity():
    p = 0.07
    n = np.arange(1, 200)
    np.testing.assert_allclose(tts.bon_success(n, p), 1 - (1 - p) ** n)
    n_star = tts.bon_sample_complexity(p, 0.1)
    assert tts.bon_success(n_star, p) >= 0.9 > tts.bon_success(n_star - 1, p)
    # p* >= 1/2 needs at most ceil(log2 10) = 4 samples for delta = 0.1
    assert tts.bon_sample_complexity(np.array([0.5, 0.6, 0.99]), 0.1).max() <= 4
    assert tts.bon_sample_complexity(0.5, 0.25) == 2  # exact power: no rounding up


def test_sc_success_is_monotone_so_bisection_is_valid():
    n = np.arange(1, 3000)
    for gap in (0.03, 0.1, 0.4):
        assert np.all(np.diff(tts.sc_success_two_answer(n, gap)) >= -1e-13)
        assert np.all(np.diff(tts.sc_success_diffuse(n, gap)) >= -1e-13)


@pytest.mark.parametrize("gap", [0.05, 0.2])
def test_sample_complexity_equals_linear_scan(gap):
    n = np.arange(1, 5000)
    curve = tts.sc_success_two_answer(n, gap)
    expected = int(n[np.argmax(curve >= 0.9)])
    assert tts.sample_complexity(lambda m: tts.sc_success_two_answer(m, gap), 0.9) == expected


def test_sc_sample_complexity_matches_normal_limit():
    # small gap: exact n* approaches z^2 (1 - gap^2) / gap^2
    gap = 0.01
    exact = tts.sample_complexity(lambda m: tts.sc_success_two_answer(m, gap), 0.9)
    assert exact == pytest.approx(tts.sc_sample_complexity_normal(gap, 0.1), rel=0.01)
    assert tts.sc_sample_complexity_normal(0.5, 0.5) == pytest.approx(0.0, abs=1e-12)  # z_{0.5} = 0


def test_mc_matches_exact_on_three_answers():
    probs = np.array([0.4, 0.35, 0.25])
    brute = _sc_brute_force(5, probs)
    est = tts.self_consistency_mc(5, probs, trials=100_000, rng=np.random.default_rng(1))
    assert abs(est.mean - brute) < 5 * est.stderr


def test_hedge_weights_softmax_properties():
    loss = np.array([[0.0, 1.0, 3.0], [2.0, 2.0, 2.0]])
    w = tts.hedge_weights(loss, 1.0)
    np.testing.assert_allclose(w.sum(-1), 1.0)
    np.testing.assert_allclose(w[0], np.exp(-loss[0]) / np.exp(-loss[0]).sum())
    np.testing.assert_allclose(w[1], 1 / 3)
    assert tts.hedge_vote(loss, np.array([[1, 0, 0], [1, 1, 0]]), 1.0)[1] == pytest.approx(2 / 3)


def _online_loop(preds, labels, feedback, eta):
    """Round-by-round reference implementation of halving and weighted majority (one session)."""
    T, K = preds.shape
    alive, cum = np.ones(K, bool), np.zeros(K)
    mistakes = {"halving": 0, "hedge": 0}
    for t in range(T):
        a = alive if alive.any() else np.ones(K, bool)
        vote_h = preds[t][a].mean()
        w = np.exp(-eta * (cum - cum.min()))
        vote_w = (w * preds[t]).sum() / w.sum()
        mistakes["halving"] += int((vote_h >= 0.5) != labels[t])
        mistakes["hedge"] += int((vote_w >= 0.5) != labels[t])
        wrong = preds[t] != feedback[t]
        alive &= ~wrong
        cum += wrong
    return mistakes


@pytest.mark.parametrize("flip", [0.0, 0.2])
def test_online_mistakes_match_round_by_round_loop(flip):
    rng = np.random.default_rng(3)
    W = tts.make_experts(32, 4, rng=rng)
    x = rng.standard_normal((3, 60, 4))
    preds = (x @ W.T > 0).astype(np.int8)
    labels = preds[..., 5]
    feedback = labels ^ (rng.random(labels.shape) < flip)
    for strategy in ("halving", "hedge"):
        got = tts.online_mistakes(preds, labels, feedback, strategy=strategy, eta=0.7, rng=rng).sum(1)
        ref = [_online_loop(preds[s], labels[s], feedback[s], 0.7)[strategy] for s in range(3)]
        np.testing.assert_array_equal(got, ref)


def test_halving_mistake_bound_and_baselines():
    rng = np.random.default_rng(4)
    K = 64
    res = tts.simulate_sessions(tts.make_experts(K, 5, rng=rng), rounds=100, sessions=60, rng=rng)
    assert res["halving"].sum(1).max() <= math.log2(K)
    assert res["hedge"].sum(1).max() <= math.log(K) / math.log(2 / (1 + math.exp(-1)))
    assert res["fixed"].sum(1).mean() > 30 and res["random"].sum(1).mean() > 30
    # fixed: one expert for the whole session, so it is either always right or errs repeatedly
    assert res["fixed"].shape == (60, 100)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="gap"):
        tts.sc_success_two_answer(10, 1.5)
    with pytest.raises(ValueError, match="n must"):
        tts.sc_success_two_answer(0, 0.1)
    with pytest.raises(ValueError, match="n must"):
        tts.bon_success(2.5, 0.1)
    with pytest.raises(ValueError, match="p_star"):
        tts.sc_success_diffuse(3, float("nan"))
    with pytest.raises(ValueError, match="target"):
        tts.sample_complexity(lambda n: 1.0, 1.0)
    with pytest.raises(ValueError, match="n_max"):
        tts.sample_complexity(lambda n: 0.0, 0.5, n_max=100)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="sum"):
        tts.self_consistency_mc(5, [0.5, 0.2], rng=rng)
    with pytest.raises(ValueError, match="probs"):
        tts.self_consistency_mc(5, [[0.5, 0.5]], rng=rng)
    with pytest.raises(ValueError, match="rng"):
        tts.self_consistency_mc(5, [1.0], rng=0)
    with pytest.raises(ValueError, match="eta"):
        tts.hedge_weights(np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="strategy"):
        tts.online_mistakes(np.zeros((1, 2, 3)), np.zeros((1, 2)), np.zeros((1, 2)), strategy="vote", rng=rng)
    with pytest.raises(ValueError, match="labels"):
        tts.online_mistakes(np.zeros((1, 2, 3)), np.zeros((2, 2)), np.zeros((1, 2)), strategy="hedge", rng=rng)
    with pytest.raises(ValueError, match="feedback_flip"):
        tts.simulate_sessions(np.ones((2, 2)), rounds=3, sessions=2, feedback_flip=0.5, rng=rng)
    with pytest.raises(ValueError, match="num_experts"):
        tts.make_experts(-1, 3, rng=rng)
