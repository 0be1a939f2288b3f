"""paperlib.online.self_correction and paperlib.online.in_context_hedge against loops, closed forms and brute force."""

import itertools
import math

import numpy as np
import pytest

from paperlib.online import in_context_hedge as ich
from paperlib.online import self_correction as sc


def _hedge_loop(preds, labels, feedback, eta):
    """Round-by-round halving and weighted majority (one session), written independently."""
    T, K = preds.shape
    alive, cum = np.ones(K, bool), np.zeros(K)
    answers = {"halving": [], "hedge": []}
    for t in range(T):
        a = alive if alive.any() else np.ones(K, bool)
        w = np.exp(-eta * (cum - cum.min()))
        answers["halving"].append(int(preds[t][a].mean() >= 0.5 - 1e-9))
        answers["hedge"].append(int((w * preds[t]).sum() / w.sum() >= 0.5 - 1e-9))
        wrong = preds[t] != feedback[t]
        alive &= ~wrong
        cum += wrong
    return {s: np.array(v) != labels for s, v in answers.items()}


def _sessions(K=24, T=50, S=4, flip=0.0, seed=3):
    rng = np.random.default_rng(seed)
    return sc.draw_sessions(sc.make_experts(K, 4, rng=rng), rounds=T, sessions=S, feedback_flip=flip, rng=rng)


@pytest.mark.parametrize("flip", [0.0, 0.2])
def test_online_mistakes_match_round_by_round_loop(flip):
    ses = _sessions(flip=flip)
    rng = np.random.default_rng(0)
    for strategy in ("halving", "hedge"):
        got = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy=strategy, eta=0.7, rng=rng)
        ref = np.stack([_hedge_loop(ses.preds[s], ses.labels[s], ses.feedback[s], 0.7)[strategy]
                        for s in range(ses.preds.shape[0])])
        np.testing.assert_array_equal(got, ref)


def test_sessions_are_realizable_and_flips_have_the_right_rate():
    ses = _sessions(K=8, T=400, S=50, flip=0.1)
    np.testing.assert_array_equal(ses.labels, ses.preds[np.arange(50), :, ses.task])
    rate = np.mean(ses.labels != ses.feedback)
    assert abs(rate - 0.1) < 4 * math.sqrt(0.09 / ses.labels.size)


def test_disagreement_rates_match_monte_carlo():
    rng = np.random.default_rng(1)
    W = sc.make_experts(5, 3, rng=rng)
    x = rng.standard_normal((200_000, 3))
    y = x @ W.T > 0
    mc = (y[:, :, None] != y[:, None, :]).mean(axis=0)
    np.testing.assert_allclose(sc.disagreement_rates(W), mc, atol=4 * 0.5 / math.sqrt(200_000))


def test_pool_majority_error_matches_angular_integral():
    # in d = 2 the answer depends only on the direction of x, uniform on the circle: integrate on a grid
    W = np.array([[1.0, 0.2], [-0.3, 1.0], [0.5, -1.0]])
    phi = (np.arange(200_000) + 0.5) / 200_000 * 2 * np.pi
    y = (np.stack([np.cos(phi), np.sin(phi)], 1) @ W.T > 0)
    ones = y.sum(1)
    exact = np.mean(np.where(2 * ones >= 3, 3 - ones, ones) / 3)
    est = sc.pool_majority_error(W, samples=100_000, rng=np.random.default_rng(2))
    assert abs(est.mean - exact) < 4 * est.stderr


def test_mistake_bounds_hold_with_a_truthful_verifier():
    ses = _sessions(K=64, T=100, S=40, seed=4)
    rng = np.random.default_rng(0)
    halving = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy="halving", rng=rng)
    hedge = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy="hedge", rng=rng)
    assert halving.sum(1).max() <= math.log2(64)
    assert hedge.sum(1).max() <= sc.weighted_majority_bound(64, eta=1.0)
    fixed = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy="fixed", rng=rng)
    assert set(np.unique(fixed.sum(1) == 0)) <= {True, False}  # one expert all session: right or not


def test_weighted_majority_bound_closed_form():
    assert sc.weighted_majority_bound(1, eta=2.0) == 0.0
    assert sc.weighted_majority_bound(16, eta=0.5, best_loss=3.0) == pytest.approx(
        (1.5 + math.log(16)) / math.log(2 / (1 + math.exp(-0.5))))
    np.testing.assert_allclose(sc.weighted_majority_bound(4, eta=1.0, best_loss=np.array([0.0, 1.0])),
                               [(0 + math.log(4)) / math.log(2 / (1 + math.exp(-1))),
                                (1 + math.log(4)) / math.log(2 / (1 + math.exp(-1)))])


def test_mlp_computes_every_expert_loss_exactly():
    # all 8 combinations of (expert answer, model answer, verdict) in one record, K = 8
    combos = np.array(list(itertools.product([0, 1], repeat=3)))
    y, a, c = combos.T
    label = np.where(c == 1, a, 1 - a)
    w = ich.hedge_transformer_weights(8, 2, eta=1.0)
    for j in range(8):   # one record per model (answer, verdict) pair; experts answer y
        tokens = ich.self_correction_prompt(y[None], [a[j]], [c[j]], np.zeros(8, int), horizon=2)
        h = tokens + np.maximum(tokens @ w.mlp_in + w.mlp_bias, 0) @ w.mlp_out
        loss = h[0, ich.slot_names(8).index("loss[0]"):][:8]
        np.testing.assert_array_equal(loss, (y != label[j]).astype(float))
        assert np.all(h[1:, ich.slot_names(8).index("loss[0]"):][:, :8] == 0)   # blank, experts, answer


def test_forward_vote_is_hedge_vote():
    rng = np.random.default_rng(5)
    K, T, eta = 6, 9, 0.8
    w = ich.hedge_transformer_weights(K, T, eta=eta)
    hp = rng.integers(0, 2, (7, K))
    ha, hv, cur = rng.integers(0, 2, 7), rng.integers(0, 2, 7), rng.integers(0, 2, K)
    label = np.where(hv == 1, ha, 1 - ha)
    L = (hp != label[:, None]).sum(0)
    p = np.exp(-eta * L) / np.exp(-eta * L).sum()
    h = ich.hedge_transformer_forward(w, ich.self_correction_prompt(hp, ha, hv, cur, horizon=T))
    assert h[-1, -1] == pytest.approx(p @ cur, abs=1e-13)


@pytest.mark.parametrize("flip", [0.0, 0.25])
def test_session_equals_full_forward_and_online_learner(flip):
    ses = _sessions(K=7, T=12, S=3, flip=flip, seed=6)
    answers, votes = ich.hedge_transformer_session(ses.preds, ses.feedback, eta=0.6)
    w = ich.hedge_transformer_weights(7, 12, eta=0.6)
    for s in range(3):
        for t in range(12):
            verdicts = (answers[s, :t] == ses.feedback[s, :t]).astype(int)
            tokens = ich.self_correction_prompt(ses.preds[s, :t], answers[s, :t], verdicts, ses.preds[s, t],
                                                horizon=12)
            assert ich.hedge_transformer_forward(w, tokens)[-1, -1] == pytest.approx(votes[s, t], abs=1e-13)
    ref = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy="hedge", eta=0.6,
                             rng=np.random.default_rng(0))
    np.testing.assert_array_equal(answers != ses.labels, ref)


def test_session_is_causal_and_blind_without_verdicts():
    ses = _sessions(K=9, T=15, S=2, seed=7)
    answers, _ = ich.hedge_transformer_session(ses.preds, ses.feedback, eta=1.0)
    changed = ses.feedback.copy()
    changed[:, 8:] ^= 1                      # later verdicts cannot change earlier answers
    answers2, _ = ich.hedge_transformer_session(ses.preds, changed, eta=1.0)
    np.testing.assert_array_equal(answers[:, :9], answers2[:, :9])
    blind, votes = ich.hedge_transformer_session(ses.preds, ses.feedback, eta=1.0, show_verdicts=False)
    np.testing.assert_allclose(votes, ses.preds.mean(-1), atol=1e-13)      # uniform weights every round
    np.testing.assert_array_equal(blind, (ses.preds.mean(-1) >= 0.5).astype(np.int8))


def test_errors_name_the_argument():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="strategy"):
        sc.online_mistakes(np.zeros((1, 2, 3)), np.zeros((1, 2)), np.zeros((1, 2)), strategy="vote", rng=rng)
    with pytest.raises(ValueError, match="labels"):
        sc.online_mistakes(np.zeros((1, 2, 3)), np.zeros((2, 2)), np.zeros((1, 2)), strategy="hedge", rng=rng)
    with pytest.raises(ValueError, match="expert_preds"):
        sc.online_mistakes(np.full((1, 2, 3), 2), np.zeros((1, 2)), np.zeros((1, 2)), strategy="hedge", rng=rng)
    with pytest.raises(ValueError, match="feedback_flip"):
        sc.draw_sessions(np.ones((2, 2)), rounds=3, sessions=2, feedback_flip=0.5, rng=rng)
    with pytest.raises(ValueError, match="num_experts"):
        sc.make_experts(-1, 3, rng=rng)
    with pytest.raises(ValueError, match="experts"):
        sc.disagreement_rates(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="best_loss"):
        sc.weighted_majority_bound(4, eta=1.0, best_loss=-1.0)
    with pytest.raises(ValueError, match="horizon"):
        ich.self_correction_prompt(np.ones((2, 3), int), [1, 1], [0, 0], [1, 0, 1], horizon=2)
    with pytest.raises(ValueError, match="history_answers"):
        ich.self_correction_prompt(np.ones((2, 3), int), [1], [0, 0], [1, 0, 1], horizon=4)
    with pytest.raises(ValueError, match="tokens"):
        ich.hedge_transformer_forward(ich.hedge_transformer_weights(3, 4, eta=1.0), np.zeros((8, 5)))
    with pytest.raises(ValueError, match="eta"):
        ich.hedge_transformer_session(np.zeros((1, 2, 3), int), np.zeros((1, 2), int), eta=0.0)
    with pytest.raises(ValueError, match="feedback"):
        ich.hedge_transformer_session(np.zeros((1, 2, 3), int), np.zeros((1, 3), int), eta=1.0)
