"""paperlib.online.test_time_scaling against brute force, closed forms and known bounds."""

import itertools

import numpy as np
import pytest
from scipy import stats

from paperlib.online import test_time_scaling as tts


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
    with pytest.raises(ValueError, match="gap"):
        tts.sc_sample_complexity_normal(np.array([0.1, 1.2]), 0.1)
    with pytest.raises(ValueError, match="p_star"):
        tts.bon_sample_complexity(0.0, 0.1)


# ---- exact SC on any finite distribution (sc_success_exact, distribution_with_gap) ----

def _sc_brute(n, p):
    """Enumerate every count vector of the multinomial; ties split uniformly."""
    import itertools
    from math import factorial
    total = 0.0
    for c in itertools.product(range(n + 1), repeat=len(p)):
        if sum(c) != n:
            continue
        prob = factorial(n) * np.prod([pi ** ci / factorial(ci) for pi, ci in zip(p, c)])
        if c[0] == max(c):
            total += prob / sum(ci == max(c) for ci in c)
    return total


@pytest.mark.parametrize("p", [[0.4, 0.3, 0.3], [0.5, 0.3, 0.2], [0.35, 0.25, 0.2, 0.2], [0.3, 0.3, 0.2, 0.1, 0.1]])
@pytest.mark.parametrize("n", [1, 2, 3, 6, 9])
def test_sc_exact_matches_brute_force(n, p):
    assert tts.sc_success_exact(n, p) == pytest.approx(_sc_brute(n, p), abs=1e-12)


@pytest.mark.parametrize("gap", [0.05, 0.2])
@pytest.mark.parametrize("n", [1, 100, 657, 1500])
def test_sc_exact_two_answers_is_binomial_formula(n, gap):
    p = tts.distribution_with_gap(gap, [1.0])
    assert tts.sc_success_exact(n, p) == pytest.approx(float(tts.sc_success_two_answer(n, gap)), abs=1e-12)


def test_distribution_with_gap_has_the_gap_and_sums_to_one():
    rng = np.random.default_rng(3)
    for m in range(2, 9):
        p = tts.distribution_with_gap(0.07, rng.dirichlet(np.ones(m - 1)))
        assert p.sum() == pytest.approx(1.0)
        assert p[0] - p[1:].max() == pytest.approx(0.07)
    np.testing.assert_allclose(tts.distribution_with_gap(0.1, [2.0, 2.0]), [0.4, 0.3, 0.3])


def test_sc_exact_and_gap_reject_bad_input():
    with pytest.raises(ValueError, match="probs"):
        tts.sc_success_exact(5, [0.5, 0.4])
    with pytest.raises(ValueError, match="probs"):
        tts.sc_success_exact(5, [1.0])
    with pytest.raises(ValueError, match="n"):
        tts.sc_success_exact(0, [0.6, 0.4])
    with pytest.raises(ValueError, match="competitor_weights"):
        tts.distribution_with_gap(0.1, [1.0, 0.0])
    with pytest.raises(ValueError, match="gap"):
        tts.distribution_with_gap(1.0, [1.0])
