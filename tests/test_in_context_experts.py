"""Tests of paperlib.online.in_context_experts: a Transformer that computes K experts' answers and runs Hedge."""
import numpy as np
import pytest

from paperlib.online import in_context_experts as ice
from paperlib.online import in_context_hedge as ich
from paperlib.online import self_correction as sc


def _setup(flip, k=5, t=12, s=3, seed=3):
    rng = np.random.default_rng(seed)
    pool = sc.make_experts(k, 3, rng=rng)
    return pool, sc.draw_sessions(pool, rounds=t, sessions=s, feedback_flip=flip, rng=rng)


@pytest.mark.parametrize("flip", [0.0, 0.3])
def test_session_equals_online_hedge_and_the_answer_reading_network(flip):
    pool, ses = _setup(flip)
    w = ice.experts_transformer_weights(pool, 12, eta=0.7, steepness=1e6)
    assert ice.near_ties(pool, ses.queries, steepness=1e6) == 0
    answers, votes = ice.experts_transformer_session(w, ses.queries, ses.feedback)
    ref = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy="hedge", eta=0.7,
                             rng=np.random.default_rng(0))
    np.testing.assert_array_equal(answers != ses.labels, ref)          # independent: cumulative sums
    fast, fast_votes = ich.hedge_transformer_session(ses.preds, ses.feedback, eta=0.7)
    np.testing.assert_array_equal(answers, fast)
    np.testing.assert_allclose(votes, fast_votes, atol=1e-12)


def test_without_verdicts_every_vote_is_the_pool_mean():
    pool, ses = _setup(0.0)
    w = ice.experts_transformer_weights(pool, 12, eta=1.0, steepness=1e6)
    _, votes = ice.experts_transformer_session(w, ses.queries, ses.feedback, show_verdicts=False)
    np.testing.assert_allclose(votes, ses.preds.mean(-1), atol=1e-12)


def test_forward_by_hand_and_ramp_at_a_near_tie():
    experts = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    w = ice.experts_transformer_weights(experts, 4, eta=2.0, steepness=100.0)
    # record: x = (0.5, -1): experts say 1, 0, 0; answer 0 judged wrong -> label 1: experts 1, 2 wrong
    p = ice.experts_prompt(np.array([[0.5, -1.0]]), np.array([0]), np.array([0]), np.array([-1.0, 2.0]),
                           num_experts=3, horizon=4)
    out = ice.experts_transformer_forward(w, p)
    weights = np.exp(-2.0 * np.array([0, 1, 1]))
    weights /= weights.sum()
    assert out[-1, -1] == pytest.approx(weights @ np.array([0, 1, 1]), abs=1e-12)   # current answers 0, 1, 1
    # a near-tie: w.x = 0.004 < 1/M gives the ramp value 0.4
    tie = ice.experts_prompt(np.zeros((0, 2)), [], [], np.array([0.004, -3.0]), num_experts=3, horizon=4)
    out = ice.experts_transformer_forward(w, tie)
    d = 6 * 3 + 2 * 2 + 6
    assert out.shape == (8, d)
    np.testing.assert_allclose(out[-1, 15:18], [0.4, 0.0, 0.0], atol=1e-12)   # query_preds: the ramp's 0.4
    assert out[-1, -1] == pytest.approx(0.0, abs=1e-12)   # the vote MLP's relu(1/3 + 0.4 - 1): inexact at a tie


def test_causal_blank_slots_do_not_matter():
    experts = np.array([[1.0, 0.0], [0.0, 1.0]])
    w = ice.experts_transformer_weights(experts, 5, eta=1.0, steepness=100.0)
    p = ice.experts_prompt(np.array([[0.5, -1.0]]), [1], [0], np.array([1.0, 2.0]), num_experts=2, horizon=5)
    q = ice.experts_prompt(np.array([[0.5, -1.0]]), [1], [0], np.array([1.0, 2.0]), num_experts=2, horizon=3)
    assert ice.experts_transformer_forward(w, p)[0, -1] == ice.experts_transformer_forward(w, p[:1])[0, -1]
    assert q.shape[0] == 6


def test_near_ties_brute_force():
    rng = np.random.default_rng(0)
    e, x = rng.standard_normal((4, 3)), rng.standard_normal((50, 3)) * 0.05
    expected = sum(0 < e[j] @ x[i] < 0.01 for i in range(50) for j in range(4))
    assert ice.near_ties(e, x, steepness=100.0) == expected


def test_bad_input():
    w = ice.experts_transformer_weights(np.eye(2), 3, eta=1.0, steepness=10.0)
    with pytest.raises(ValueError, match="steepness"):
        ice.experts_transformer_weights(np.eye(2), 3, eta=1.0, steepness=0.0)
    with pytest.raises(ValueError, match="queries"):
        ice.experts_transformer_session(w, np.zeros((1, 3, 3)), np.zeros((1, 3), int))
    with pytest.raises(ValueError, match="feedback"):
        ice.experts_transformer_session(w, np.zeros((1, 3, 2)), np.full((1, 3), 2))
    with pytest.raises(ValueError, match="attempts"):
        ice.experts_transformer_session(w, np.zeros((1, 3, 2)), np.zeros((1, 3), int), attempts=4)
    with pytest.raises(ValueError, match="weights"):
        ice.experts_transformer_forward("w", np.zeros((6, 22)))
    with pytest.raises(ValueError, match="horizon"):
        ice.experts_prompt(np.zeros((3, 2)), np.zeros(3, int), np.zeros(3, int), np.zeros(2), num_experts=2,
                           horizon=3)
