"""Tests of paperlib.boolean_analysis.surrogate_gradient: exact forward pass, surrogate derivative, training."""

import jax
import numpy as np
import pytest

from paperlib.boolean_analysis import boolean_fourier as bf
from paperlib.boolean_analysis import spiking as sp
from paperlib.boolean_analysis import surrogate_gradient as sg


def test_forward_equals_numpy_network():
    rng = np.random.default_rng(0)
    ws = sp.init_weights((8, 6, 5, 1), rng=rng)
    x = bf.all_inputs(8)
    count = np.asarray(sg.lif_spike_count(ws, x, num_steps=7, beta=0.8, theta=0.4))
    ref = sp.lif_spikes(x, ws, num_steps=7, beta=0.8, theta=0.4)[:, :, 0].sum(0)
    assert np.mean(count == ref) > 0.999  # equal up to float rounding at a threshold


def test_surrogate_derivative_is_fast_sigmoid():
    g = jax.grad(lambda v: sg.surrogate_sign(v, slope=4.0))
    for v in (-0.7, 0.0, 0.3):
        assert float(g(v)) == pytest.approx(4.0 / (1 + 4.0 * abs(v)) ** 2, rel=1e-6)


def test_training_fits_a_dictator():
    x = bf.all_inputs(6)
    y = x[:, 0].copy()
    rng = np.random.default_rng(1)
    w0 = [rng.standard_normal((2, 6, 8)).astype(np.float32) / np.sqrt(6),
          rng.standard_normal((2, 8, 1)).astype(np.float32) / np.sqrt(8)]
    w, losses = sg.train_lif_classifiers(w0, x, y, num_steps=5, steps=200, learning_rate=0.02,
                                         batch_size=32, key=jax.random.key(0))
    acc = [np.mean(sp.lif_readout(x, [w[0][r], w[1][r]], num_steps=5) == y) for r in range(2)]
    assert min(acc) > 0.95 and losses.shape == (2, 200)


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="slope"):
        sg.surrogate_sign(np.zeros(2), slope=0.0)
    with pytest.raises(ValueError, match="num_steps"):
        sg.train_lif_classifiers([np.zeros((1, 2, 1))], np.ones((2, 2)), np.ones(2), num_steps=4, key=jax.random.key(0))
    with pytest.raises(ValueError, match="y"):
        sg.train_lif_classifiers([np.zeros((1, 2, 1))], np.ones((2, 2)), np.zeros(2), num_steps=3, key=jax.random.key(0))
    with pytest.raises(ValueError, match="threshold"):
        sg.binarised_digits(threshold=16.0)
