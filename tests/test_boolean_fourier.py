"""Tests of paperlib.boolean_analysis.boolean_fourier against independent computations (brute force, closed forms)."""

import itertools
import math

import numpy as np
import pytest
from scipy.linalg import hadamard

from paperlib.boolean_analysis import boolean_fourier as bf


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 7])
def test_fast_transform_equals_hadamard_matrix(n):
    rng = np.random.default_rng(n)
    v = rng.standard_normal((3, 2**n))
    np.testing.assert_allclose(bf.walsh_hadamard(v), v @ hadamard(2**n).T, atol=1e-10)


def test_coefficients_match_brute_force_characters():
    n = 5
    rng = np.random.default_rng(1)
    f = rng.choice([-1.0, 1.0], size=2**n)
    x = bf.all_inputs(n).astype(float)
    fhat = bf.fourier_coefficients(f)
    for mask in range(2**n):
        subset = [j for j in range(n) if mask >> j & 1]
        chi = np.prod(x[:, subset], axis=1) if subset else np.ones(2**n)
        assert fhat[mask] == pytest.approx(np.mean(f * chi), abs=1e-12)
    assert bf.fourier_degrees(n).tolist() == [bin(m).count("1") for m in range(2**n)]


def test_known_spectra_and_parseval():
    n = 3
    x = bf.all_inputs(n)
    maj = np.sign(x.sum(1))
    w = bf.level_weights(bf.fourier_coefficients(maj))
    np.testing.assert_allclose(w, [0, 0.75, 0, 0.25], atol=1e-12)  # Maj3 = (x1+x2+x3)/2 - x1x2x3/2
    parity = np.prod(x, axis=1)
    np.testing.assert_allclose(bf.level_weights(bf.fourier_coefficients(parity)), [0, 0, 0, 1], atol=1e-12)
    rng = np.random.default_rng(2)
    f = rng.choice([-1.0, 1.0], size=(4, 2**8))
    np.testing.assert_allclose(bf.level_weights(bf.fourier_coefficients(f)).sum(-1), 1.0, atol=1e-12)


def _exact_ns_by_enumeration(f, n, delta):
    x = bf.all_inputs(n)
    index = {tuple(r): i for i, r in enumerate(x.tolist())}
    total = 0.0
    for i, j in itertools.product(range(2**n), range(2**n)):
        flips = int(np.sum(x[i] != x[j]))
        total += delta**flips * (1 - delta) ** (n - flips) * (f[i] != f[j])
    return total / 2**n


@pytest.mark.parametrize("delta", [0.0, 0.1, 0.3, 0.5])
def test_noise_sensitivity_from_spectrum_equals_enumeration(delta):
    n = 4
    f = np.random.default_rng(3).choice([-1.0, 1.0], size=2**n)
    w = bf.level_weights(bf.fourier_coefficients(f))
    assert bf.noise_sensitivity(w, delta) == pytest.approx(_exact_ns_by_enumeration(f, n, delta), abs=1e-12)
    assert bf.noise_stability(w, 1 - 2 * delta) == pytest.approx(1 - 2 * bf.noise_sensitivity(w, delta))


def test_limits_influence_and_concentration():
    rng = np.random.default_rng(4)
    f = rng.choice([-1.0, 1.0], size=(6, 2**10))
    w = bf.level_weights(bf.fourier_coefficients(f))
    np.testing.assert_allclose(bf.noise_sensitivity(w, 0.5), (1 - w[:, 0]) / 2)  # NS_1/2 = Var f / 2
    np.testing.assert_allclose(bf.noise_stability(w, 1.0), 1.0)
    d = 1e-6
    np.testing.assert_allclose(bf.noise_sensitivity(w, d) / d, bf.total_influence(w), rtol=1e-4)
    for k in (1, 2, 4, 8):
        assert np.all(bf.tail_weight(w, k) <= bf.CONCENTRATION_CONSTANT * bf.noise_sensitivity(w, 1 / k))
    dictator = bf.all_inputs(6)[:, 2]
    assert bf.mean_degree(bf.level_weights(bf.fourier_coefficients(dictator))) == pytest.approx(1.0)


def test_monte_carlo_matches_spectrum_on_majority():
    n = 5
    maj = lambda x: np.sign(x.sum(1))  # noqa: E731
    w = bf.level_weights(bf.fourier_coefficients(maj(bf.all_inputs(n))))
    p, se = bf.noise_sensitivity_mc(maj, n, 0.2, num_pairs=40_000, rng=np.random.default_rng(5))
    assert abs(p - bf.noise_sensitivity(w, 0.2)) < 4 * se


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="values"):
        bf.walsh_hadamard(np.ones(3))
    with pytest.raises(ValueError, match="values"):
        bf.walsh_hadamard([1.0, np.nan])
    with pytest.raises(ValueError, match="n"):
        bf.all_inputs(-1)
    w = np.array([0.5, 0.5])
    with pytest.raises(ValueError, match="delta"):
        bf.noise_sensitivity(w, 1.5)
    with pytest.raises(ValueError, match="rho"):
        bf.noise_stability(w, 2.0)
    with pytest.raises(ValueError, match="weights"):
        bf.total_influence([-1.0, 2.0])
    with pytest.raises(ValueError, match="num_pairs"):
        bf.noise_sensitivity_mc(lambda x: x[:, 0], 3, 0.1, num_pairs=0, rng=np.random.default_rng(0))
    assert math.isclose(bf.CONCENTRATION_CONSTANT, 2 / (1 - math.exp(-2)))
