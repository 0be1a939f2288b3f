"""Tests of paperlib.boolean_analysis.spiking against brute-force simulation and independent closed forms."""

import numpy as np
import pytest
from scipy import stats

from paperlib.boolean_analysis import boolean_fourier as bf
from paperlib.boolean_analysis import spiking as sp
from paperlib.boolean_analysis import spiking_exact as sx


def _scalar_neuron(c_seq, beta, theta):
    """Plain-Python sLIF neuron with inputs c_1..c_T (the recursion of the paper, Sec. 2)."""
    u, s, out = 0.0, -1.0, []
    for c in c_seq:
        u = beta * u + c - theta / 2 * (s + 1)
        s = 1.0 if u > theta else -1.0
        out.append(s)
    return out


def test_network_matches_scalar_loop():
    rng = np.random.default_rng(0)
    ws = sp.init_weights((6, 3, 1), rng=rng)
    x = bf.all_inputs(6)[::7]
    got = sp.lif_spikes(x, ws, num_steps=7, beta=0.7, theta=0.4)
    for b in range(x.shape[0]):
        hidden = [_scalar_neuron([x[b] @ ws[0][:, j]] * 7, 0.7, 0.4) for j in range(3)]
        drive = [float(np.array([h[t] for h in hidden]) @ ws[1][:, 0]) for t in range(7)]
        np.testing.assert_allclose(got[:, b, 0], _scalar_neuron(drive, 0.7, 0.4))


def test_first_step_flip_probability_matches_bivariate_normal_cdf():
    n, delta, theta = 20, 0.2, 0.5
    total = 0.0
    for h in range(1, n + 1):
        rho = 1 - 2 * h / n
        if abs(rho) == 1:
            p = 2 * stats.norm.sf(theta) if rho == -1 else 0.0
        else:
            phi2 = stats.multivariate_normal([0, 0], [[1, rho], [rho, 1]]).cdf([-theta, -theta])
            p = 2 * (stats.norm.sf(theta) - phi2)
        total += stats.binom.pmf(h, n, delta) * p
    assert sx.first_step_flip_probability(n, delta, theta) == pytest.approx(total, abs=1e-6)
    # theta = 0: Sheppard's formula arccos(rho) / pi
    h = np.arange(n + 1)
    sheppard = np.sum(stats.binom.pmf(h, n, delta) * np.arccos(1 - 2 * h / n) / np.pi)
    assert sx.first_step_flip_probability(n, delta, 0.0) == pytest.approx(sheppard, abs=1e-12)


def test_first_step_flip_probability_monte_carlo():
    rng = np.random.default_rng(1)
    r = sp.expected_noise_sensitivity(64, 0.125, num_steps=1, num_nets=200, num_inputs=200, rng=rng)
    p, se = r["per_step"][:, 0].mean(), r["per_step"][:, 0].std() / np.sqrt(200)
    assert abs(p - sx.first_step_flip_probability(64, 0.125, 0.5)) < 4 * se


@pytest.mark.parametrize("beta", [1.0, 0.6])
def test_single_neuron_readout_is_a_threshold_function(beta):
    theta_eff = sx.readout_threshold(num_steps=9, beta=beta, theta=0.5)
    c = np.linspace(-2, 3, 2001)
    counts = [sum(_scalar_neuron([ci] * 9, beta, 0.5)) for ci in c]
    assert np.all(np.diff(counts) >= 0)  # spike count is non-decreasing in the drive
    assert np.all((np.array(counts) > 0) == (c > theta_eff))
    rng = np.random.default_rng(2)
    ws = sp.init_weights((10, 1), rng=rng)
    x = bf.all_inputs(10)
    f = sp.lif_readout(x, ws, num_steps=9, beta=beta, theta=0.5)
    ltf = np.where(x @ ws[0][:, 0] > theta_eff, 1.0, -1.0)
    assert np.mean(f == ltf) > 0.999  # equality up to float rounding at the boundary


def test_ens_shapes_limits_and_determinism():
    kw = dict(hidden_layers=1, width=8, num_steps=3, num_nets=4, num_inputs=16)
    a = sp.expected_noise_sensitivity(12, 0.1, rng=np.random.default_rng(3), **kw)
    b = sp.expected_noise_sensitivity(12, 0.1, rng=np.random.default_rng(3), **kw)
    assert a["per_step"].shape == (4, 3) and a["ns"].shape == (4,) and a["var"].shape == (4,)
    np.testing.assert_array_equal(a["ns"], b["ns"])
    z = sp.expected_noise_sensitivity(12, 0.0, rng=np.random.default_rng(3), **kw)
    assert np.all(z["ns"] == 0) and np.all(z["per_step"] == 0)


def test_errors_name_the_argument():
    rng = np.random.default_rng(0)
    ws = sp.init_weights((4, 1), rng=rng)
    x = np.ones((2, 4))
    with pytest.raises(ValueError, match="num_steps"):
        sp.lif_readout(x, ws, num_steps=4)
    with pytest.raises(ValueError, match="theta"):
        sp.lif_spikes(x, ws, num_steps=3, theta=0.0)
    with pytest.raises(ValueError, match="beta"):
        sp.lif_spikes(x, ws, num_steps=3, beta=1.5)
    with pytest.raises(ValueError, match="x"):
        sp.lif_spikes(np.full((2, 4), 0.5), ws, num_steps=3)
    with pytest.raises(ValueError, match=r"weights\[0\]"):
        sp.lif_spikes(np.ones((2, 5)), ws, num_steps=3)
    with pytest.raises(ValueError, match="widths"):
        sp.init_weights((4,), rng=rng)
    with pytest.raises(ValueError, match="delta"):
        sx.first_step_flip_probability(10, -0.1, 0.5)
    with pytest.raises(ValueError, match="num_nets"):
        sp.expected_noise_sensitivity(8, 0.1, num_nets=0, rng=rng)


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_step_flip_probabilities_match_bivariate_cdf_and_simulation(beta):
    n, delta, theta, T = 32, 0.15, 0.5, 6
    exact = sx.step_flip_probabilities(n, delta, num_steps=T, beta=beta, theta=theta)
    assert exact[0] == pytest.approx(sx.first_step_flip_probability(n, delta, theta), abs=1e-12)
    # independent: integrate the scalar neuron's spike at step t over (X, Y) on a grid, h by h
    c = np.linspace(-6, 6, 1201)
    spikes = np.array([_scalar_neuron([ci] * T, beta, theta) for ci in c]) > 0  # (grid, T)
    dc = c[1] - c[0]
    ref = np.zeros(T)
    for h in range(1, n + 1):
        rho = 1 - 2 * h / n
        if abs(rho) == 1:
            continue
        cov = np.array([[1, rho], [rho, 1]])
        dens = stats.multivariate_normal([0, 0], cov).pdf(np.dstack(np.meshgrid(c, c, indexing="ij")))
        differ = spikes[:, None, :] != spikes[None, :, :]
        ref += stats.binom.pmf(h, n, delta) * np.einsum("ij,ijt->t", dens, differ) * dc**2
    np.testing.assert_allclose(exact, ref, atol=5e-3)
    rng = np.random.default_rng(4)
    r = sp.expected_noise_sensitivity(n, delta, num_steps=T - 1, beta=beta, num_nets=300,
                                      num_inputs=200, rng=rng)
    se = r["per_step"].std(0) / np.sqrt(300)
    assert np.all(np.abs(r["per_step"].mean(0) - exact[: r["per_step"].shape[1]]) < 4 * se + 1e-3)


def test_readout_expected_level_weights_match_sampled_spectra():
    n, T = 8, 5
    w_exact = sx.readout_expected_level_weights(n, num_steps=T, theta=0.5)
    assert w_exact.sum() == pytest.approx(1.0, abs=1e-12) and np.all(w_exact > -1e-12)
    rng = np.random.default_rng(5)
    x = bf.all_inputs(n)
    tables = np.array([sp.lif_readout(x, sp.init_weights((n, 1), rng=rng), num_steps=T, theta=0.5)
                       for _ in range(2000)])
    w = bf.level_weights(bf.fourier_coefficients(tables))
    se = w.std(0) / np.sqrt(len(w))
    assert np.all(np.abs(w.mean(0) - w_exact) < 4 * se + 1e-9)
    # theta_eff for beta = 1 has the closed form (T + 1) theta / (2 T): the reset by subtraction
    assert sx.readout_threshold(num_steps=9, theta=0.5) == pytest.approx(5 * 0.5 / 9, abs=1e-8)
    with pytest.raises(ValueError, match="n"):
        sx.readout_expected_level_weights(0, num_steps=T)
    with pytest.raises(ValueError, match="delta"):
        sx.step_flip_probabilities(8, 1.0, num_steps=3)


def test_dropout_first_step_closed_form_monte_carlo():
    rng = np.random.default_rng(6)
    r = sp.expected_noise_sensitivity(64, 0.2, num_steps=1, noise="dropout", num_nets=300, num_inputs=200, rng=rng)
    p, se = r["per_step"][:, 0].mean(), r["per_step"][:, 0].std() / np.sqrt(300)
    assert abs(p - sx.first_step_flip_probability(64, 0.2, 0.5, noise="dropout")) < 4 * se
    # dropout moves an entry half way (x_j -> 0), so it is milder than a flip of the same rate
    assert sx.first_step_flip_probability(64, 0.2, 0.5, noise="dropout") < sx.first_step_flip_probability(64, 0.2, 0.5)


def test_heaviside_code_matches_scalar_loop():
    rng = np.random.default_rng(7)
    ws = sp.init_weights((5, 1), rng=rng)
    x = bf.all_inputs(5)
    got = sp.lif_spikes(x, ws, num_steps=4, theta=0.3, spike="heaviside")[:, :, 0]
    for b in range(x.shape[0]):
        c, u, fired = float(((1 + x[b]) / 2) @ ws[0][:, 0]), 0.0, 0.0
        for t in range(4):
            u = u + c - 0.3 * fired
            fired = float(u > 0.3)
            assert got[t, b] == fired


def test_spike_switch_points_beta_one():
    b, eps = sx.spike_switch_points(num_steps=4, theta=1.0)
    c = np.linspace(-1, 3, 4001)
    on = np.array([_scalar_neuron([ci] * 4, 1.0, 1.0) for ci in c]).T > 0  # (T, grid)
    rebuilt = (eps @ (c[None, :] > b[:, None])) > 0
    assert np.mean(rebuilt == on) > 0.999
