"""Tests for paperlib.transformers.fast_attention against brute-force softmax attention and closed forms."""

import math

import numpy as np
import pytest

from paperlib.transformers.fast_attention import (
    attention_inputs,
    build_tree,
    error_bound,
    fast_attention,
    global_poly_attention,
    monomials,
    multi_indices,
    row_max,
)


def _data(n, d, B, seed=0, dv=1):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-B, B, (n, d)), rng.uniform(-B, B, (n, d)), rng.uniform(-1, 1, (n, dv)))


def _exact(Q, K, V):
    """Row-max shifted softmax attention in float64 numpy (independent of the tree code)."""
    S = Q @ K.T
    P = np.exp(S - S.max(1, keepdims=True))
    return P @ V / P.sum(1, keepdims=True)


def test_multi_indices_count_and_order():
    A = multi_indices(2, 5)
    assert len(A) == math.comb(7, 2)
    assert len({tuple(a) for a in A}) == len(A)
    assert np.all(np.diff(A.sum(1)) >= 0)


def test_monomials_match_powers():
    X = np.random.default_rng(1).normal(size=(7, 3))
    A = multi_indices(3, 4)
    np.testing.assert_allclose(monomials(X, A), np.prod(X[:, None, :] ** A[None], -1), rtol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_moments_of_every_node_match_a_direct_sum(d):
    # leaves are summed directly, inner nodes by the binomial shift: compare with brute force
    Q, K, V = _data(200, d, 3.0, dv=2)
    tree = build_tree(K, V, leaf=8, p=6)
    fact = np.prod([[math.factorial(x) for x in a] for a in tree.alphas], 1)
    for h in (0, 1, 2, 5, len(tree.lo) - 1):
        level = int(math.log2(h + 1))
        size = tree.keys.shape[0] >> level
        start = (h + 1 - 2**level) * size
        u = tree.keys[start:start + size] - tree.centre[h]
        direct = (monomials(u, tree.alphas) / fact).T @ tree.values[start:start + size]
        np.testing.assert_allclose(tree.moments[h].T, direct, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("d", [1, 2])
def test_row_max_is_exact(d):
    Q, K, V = _data(300, d, 5.0)
    np.testing.assert_allclose(row_max(Q, build_tree(K, V, leaf=4)), (Q @ K.T).max(1), rtol=1e-13)


def test_row_max_keys_on_a_circle():
    # every key is a hull vertex: the branch and bound must still find the exact maximum
    th = np.random.default_rng(2).uniform(0, 2 * np.pi, 500)
    K = 7.0 * np.stack([np.cos(th), np.sin(th)], 1)
    Q = np.random.default_rng(3).normal(size=(50, 2))
    np.testing.assert_allclose(row_max(Q, build_tree(K, np.ones((500, 1)), leaf=4)), (Q @ K.T).max(1), rtol=1e-13)


@pytest.mark.parametrize("d,B", [(1, 0.5), (1, 30.0), (1, 1000.0), (2, 1.0), (2, 4.0), (2, 40.0), (3, 3.0)])
def test_matches_exact_within_bound(d, B):
    Q, K, V = _data(1000, d, B, dv=2)  # n not a power of two: exercises the padding
    out = fast_attention(Q, build_tree(K, V, leaf=16))
    assert np.abs(out - _exact(Q, K, V)).max() <= error_bound() * np.abs(V).max()


def test_threads_do_not_change_the_answer():
    # 600 queries run in several threads; each row must equal the row computed alone
    Q, K, V = _data(600, 2, 6.0)
    tree = build_tree(K, V, leaf=16)
    st_all, st_one = {}, {}
    out = fast_attention(Q, tree, stats=st_all)
    np.testing.assert_array_equal(out[[7]], fast_attention(Q[[7]], tree))
    fast_attention(Q[:100], tree, stats=st_one)
    assert 0 < st_one["visits"] < st_all["visits"]


def test_pruning_window_grows_with_n():
    # Adversarial mass just outside ln(1/eps) but inside ln(n/eps): 4095 keys at logit -14.3
    # (e^-14.3 ~ 6e-7 each, ~2.5e-3 in total) must NOT be pruned. A window of ln(1/eps) = 13.8
    # would drop them and miss the closed form by ~5e-3, far above the bound.
    n = 4096
    K = np.full((n, 1), -14.3)
    K[0] = 0.0
    V = -np.ones((n, 1))
    V[0] = 1.0
    m = (n - 1) * math.exp(-14.3)
    out = fast_attention(np.ones((1, 1)), build_tree(K, V))
    assert abs(out[0, 0] - (1 - m) / (1 + m)) <= error_bound()


def test_the_bound_is_attained_by_mass_just_below_the_window():
    # 4095 keys just below M - ln(N/eps) are all pruned: error 2m/(1+m), m ~ eps, close to the bound
    n, eps = 4096, 1e-6
    K = np.full((n, 1), -math.log(n / eps) - 1e-9)
    K[0] = 0.0
    V = -np.ones((n, 1))
    V[0] = 1.0
    m = (n - 1) * math.exp(K[1, 0])
    err = abs(fast_attention(np.ones((1, 1)), build_tree(K, V), eps=eps)[0, 0] - (1 - m) / (1 + m))
    assert err == pytest.approx(2 * m / (1 + m), rel=1e-6)
    assert 0.8 * error_bound(eps=eps) < err <= error_bound(eps=eps)
    # without pruning the same keys are kept and the error drops to the Taylor part
    out = fast_attention(np.ones((1, 1)), build_tree(K, V), eps=eps, prune=False)
    assert abs(out[0, 0] - (1 - m) / (1 + m)) < 1e-9


def test_low_degree_violates_and_respects_its_own_bound():
    # p = 4, w = 2: bound ~0.14; the output must stay within it, and be visibly inexact.
    Q, K, V = _data(512, 2, 3.0)
    out = fast_attention(Q, build_tree(K, V, p=4, leaf=8), w=2.0)
    err = np.abs(out - _exact(Q, K, V)).max()
    assert 1e-6 < err <= error_bound(w=2.0, p=4)


def test_stats_account_for_every_key():
    # Without pruning (tiny B: nothing is pruned), every key of every query is either in an
    # accepted cell or evaluated directly.
    Q, K, V = _data(256, 2, 0.3)
    st = {}
    fast_attention(Q, build_tree(K, V, leaf=8), stats=st)
    assert st["pruned"] == 0
    assert st["accepted_keys"] + st["direct"] == 256 * 256


def test_global_poly_exact_for_small_entries_and_fails_for_large():
    Q, K, V = _data(400, 2, 0.5)
    assert np.abs(global_poly_attention(Q, K, V) - _exact(Q, K, V)).max() < 1e-12
    Q, K, V = _data(400, 2, 4.0)
    assert np.abs(global_poly_attention(Q, K, V) - _exact(Q, K, V)).max() > 1e-2


def test_error_bound_closed_form():
    eta = math.exp(4) * 2**15 / math.factorial(15)
    assert error_bound(4.0, 14, 1e-6) == pytest.approx(2 * (eta + 1e-6) / (1 - eta - 1e-6))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: build_tree(np.ones((4, 2)), np.ones((3, 1))), "V must have one row"),
        (lambda: build_tree(np.full((4, 2), np.nan), np.ones((4, 1))), "K"),
        (lambda: build_tree(np.ones((4, 2)), np.ones((4, 1)), leaf=0), "leaf"),
        (lambda: fast_attention(np.ones((3, 1)), build_tree(np.ones((4, 2)), np.ones((4, 1)))), "Q"),
        (lambda: fast_attention(np.ones((3, 2)), build_tree(np.ones((4, 2)), np.ones((4, 1))), eps=0), "eps"),
        (lambda: fast_attention(np.ones((3, 2)), build_tree(np.ones((4, 2)), np.ones((4, 1))), w=-1), "w"),
        (lambda: fast_attention(np.ones((3, 2)), build_tree(np.ones((4, 2)), np.ones((4, 1))), prune="no"), "prune"),
        (lambda: error_bound(w=20.0, p=1), "no error bound"),
        (lambda: multi_indices(0, 3), "d"),
        (lambda: monomials(np.ones((2, 2)), [[0, 1, 2]]), "A"),
        (lambda: global_poly_attention(np.ones((3, 2)), np.ones((4, 2)), np.ones((5, 1))), "V"),
        (lambda: attention_inputs(8, 1, 4.0, layout="band", rng=np.random.default_rng(0)), "d >= 2"),
        (lambda: attention_inputs(8, 2, 4.0, layout="diagonal", rng=np.random.default_rng(0)), "layout"),
    ],
)
def test_bad_input_raises(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("B", [1.0, 8.0, 64.0])
def test_band_layout_entries_and_logit_range(B):
    """Band layout: entries within B, queries across the band, every logit in [-8, 8] (none pruned)."""
    Q, K, V = attention_inputs(500, 3, B, layout="band", rng=np.random.default_rng(0))
    assert np.abs(Q).max() <= B and np.abs(K).max() <= B and np.all(K[:, 2] == 0) and np.all(Q[:, 2] == 0)
    assert np.all(Q[:, 0] == -Q[:, 1]) and Q[:, 0].min() >= B / 2
    S = Q @ K.T
    assert np.abs(S).max() <= 8.0 + 1e-12
    # logit range per query t g (max z - min z) >= (B/2)(8/B)(about 2) = about 8 once g = 8/B (B >= 4)
    assert (S.max(1) - S.min(1)).min() > (7.0 if B >= 4 else 0.0)


def test_band_layout_defeats_box_cells_but_stays_accurate():
    """At B = sqrt(n)/2 no cell is accepted and every key is evaluated directly; the error bound still holds."""
    n = 2048
    Q, K, V = attention_inputs(n, 2, math.sqrt(n) / 2, layout="band", rng=np.random.default_rng(1))
    st = {}
    out = fast_attention(Q, build_tree(K, V), stats=st)
    assert st["accepted"] == 0 and st["direct"] == n * n
    assert np.abs(out - _exact(Q, K, V)).max() <= error_bound()
