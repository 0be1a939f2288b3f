"""Tests of paperlib.online.in_context_hedge.hedge_transformer_loop (the full forward pass, attempt by attempt).

The other tests of the module live in tests/test_self_correction.py.
"""
import numpy as np
import pytest

from paperlib.online import in_context_hedge as ich
from paperlib.online import self_correction as sc


@pytest.mark.parametrize("flip", [0.0, 0.3])
def test_loop_equals_online_hedge_and_fast_session(flip):
    rng = np.random.default_rng(11)
    ses = sc.draw_sessions(sc.make_experts(5, 3, rng=rng), rounds=10, sessions=2, feedback_flip=flip, rng=rng)
    ref = sc.online_mistakes(ses.preds, ses.labels, ses.feedback, strategy="hedge", eta=0.7,
                             rng=np.random.default_rng(0))
    fast, fast_votes = ich.hedge_transformer_session(ses.preds, ses.feedback, eta=0.7)
    for s in range(2):
        answers, votes = ich.hedge_transformer_loop(ses.preds[s], ses.feedback[s], eta=0.7)
        np.testing.assert_array_equal(answers != ses.labels[s], ref[s])
        np.testing.assert_array_equal(answers, fast[s])
        np.testing.assert_allclose(votes, fast_votes[s], atol=1e-13)


def test_loop_first_vote_is_plain_majority_and_attempts_truncate():
    preds = np.array([[1, 1, 0], [0, 1, 0], [1, 0, 0]])
    answers, votes = ich.hedge_transformer_loop(preds, np.array([1, 1, 0]), eta=1.0, attempts=2)
    assert answers.shape == votes.shape == (2,)
    assert votes[0] == pytest.approx(2 / 3, abs=1e-13)   # no record yet: the pool's mean answer


def test_loop_rejects_bad_input():
    preds = np.zeros((3, 2), int)
    with pytest.raises(ValueError, match="attempts"):
        ich.hedge_transformer_loop(preds, np.zeros(3, int), eta=1.0, attempts=4)
    with pytest.raises(ValueError, match="feedback"):
        ich.hedge_transformer_loop(preds, np.zeros(2, int), eta=1.0)
    with pytest.raises(ValueError, match="eta"):
        ich.hedge_transformer_loop(preds, np.zeros(3, int), eta=0.0)
    with pytest.raises(ValueError, match="expert_preds"):
        ich.hedge_transformer_loop(np.full((3, 2), 2), np.zeros(3, int), eta=1.0)
