"""Unit tests of paperlib.geometry.equivariant and paperlib.geometry.equivariant_floors against independent computations.

- symmetry: invariance / equivariance of every network under random permutations;
- the layer spaces: a C-only network's entry i depends on x_i alone, a PC network's on (x_i, s);
- training: the skeleton used by train_networks and the extracted per-network parameters agree;
- floors: the conditional-expectation formulas against brute-force least squares on every function
  of a tiny finite domain, against hand-derived closed forms, and (class PC) against the exact
  group means of a fine lattice, which converge to the continuum;
- the n = 3 product lies in U(P, I) (Newton's identity), and the bad-input paths.
"""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

from paperlib.geometry import equivariant as eq
from paperlib.geometry import equivariant_floors as ef

RNG = np.random.default_rng(20260101)
S2 = lambda v: v.sum(-1) ** 2
S3 = lambda v: v.sum(-1) ** 3
XS = lambda v: v * v.sum(-1, keepdims=True)
P2 = lambda v: np.repeat((v**2).sum(-1, keepdims=True), v.shape[-1], axis=-1)


# --------------------------------------------------------------------------- symmetry
@pytest.mark.parametrize("arch", ["CI", "PI", "CIL", "PIL", "CCC", "PCC", "CPC", "PPC", "CP"])
def test_networks_are_invariant_or_equivariant(arch):
    params = eq.init_network(arch, 8, rng=np.random.default_rng(1))
    x = RNG.uniform(-1, 1, (50, 5))
    perm = RNG.permutation(5)
    out, out_perm = np.asarray(eq.apply_network(params, x, arch)), np.asarray(eq.apply_network(params, x[:, perm], arch))
    if arch[-1] in "IL":
        assert out.shape == (50,)
        np.testing.assert_allclose(out_perm, out, atol=1e-5)
    else:
        assert out.shape == (50, 5)
        np.testing.assert_allclose(out_perm, out[:, perm], atol=1e-5)


def test_pointwise_network_entry_depends_on_its_element_only():
    params = eq.init_network("CCC", 16, rng=np.random.default_rng(2))
    x = RNG.uniform(-1, 1, (40, 3))
    y = x.copy()
    y[:, 1:] = RNG.uniform(-1, 1, (40, 2))      # same x_0, everything else redrawn
    np.testing.assert_allclose(np.asarray(eq.apply_network(params, y, "CCC"))[:, 0],
                               np.asarray(eq.apply_network(params, x, "CCC"))[:, 0], atol=1e-6)


def test_pc_network_entry_depends_on_element_and_sum_only():
    params = eq.init_network("PCC", 16, rng=np.random.default_rng(3))
    x = RNG.uniform(-0.5, 0.5, (40, 3))
    delta = RNG.uniform(-0.3, 0.3, 40)
    y = x.copy()
    y[:, 1] += delta
    y[:, 2] -= delta                             # same x_0 and same sum, another multiset
    out_x, out_y = np.asarray(eq.apply_network(params, x, "PCC")), np.asarray(eq.apply_network(params, y, "PCC"))
    np.testing.assert_allclose(out_y[:, 0], out_x[:, 0], atol=1e-6)
    cpc = eq.init_network("CPC", 16, rng=np.random.default_rng(3))   # sees the multiset: differs
    assert np.max(np.abs(np.asarray(eq.apply_network(cpc, x, "CPC"))[:, 0]
                         - np.asarray(eq.apply_network(cpc, y, "CPC"))[:, 0])) > 1e-3


def test_linear_layers_match_their_written_form():
    """A P layer is W h_i + V mean_j h_j + b, an I layer W mean_i h_i + b (checked by hand on one set)."""
    (W, V, b), (Wi, bi) = eq.init_network("PI", 3, rng=np.random.default_rng(4))
    x = np.array([0.2, -0.7, 0.4, 0.1])
    hidden = np.maximum(np.outer(x, W[0]) + x.mean() * V[0] + b, 0.0)   # (n, width)
    expected = hidden.mean(0) @ Wi[:, 0] + bi[0]
    assert float(eq.apply_network([(W, V, b), (Wi, bi)], x[None], "PI")[0]) == pytest.approx(expected, rel=1e-5)


# --------------------------------------------------------------------------- training
def test_train_networks_extracted_parameters_reproduce_the_skeleton():
    x = RNG.uniform(-1, 1, (64, 3))
    archs, widths = ["CC", "PCC", "CPC"], [4, 6, 8]
    y = np.stack([XS(x)] * len(archs))
    params, losses = eq.train_networks(archs, widths, x, y, steps=5, rng=np.random.default_rng(0))
    for arch, w, p, loss in zip(archs, widths, params, losses):
        pred = np.asarray(eq.apply_network(p, x, arch))
        rel = np.mean((pred - y[0]) ** 2) / np.var(y[0])
        assert p[0][0].shape == (1, w)
        assert rel <= loss[0] * 1.5 + 1e-6          # trained outputs reproduce, and beat the start


def test_train_networks_readout_beats_shallow_on_s2():
    x = RNG.uniform(-1, 1, (256, 3))
    y = np.stack([S2(x), S2(x)])
    _, losses = eq.train_networks(["CI", "CIL"], [16, 16], x, y, steps=600, rng=np.random.default_rng(1))
    assert losses[0, -1] > 0.75          # U(C, I) cannot go below 5/6 in population (train set: near it)
    assert losses[1, -1] < 0.1


# --------------------------------------------------------------------------- exact floors
@pytest.mark.parametrize(("target", "space", "value"), [
    (S2, "CI", 5 / 6), (S3, "CI", 308 / 1025), (XS, "C", 5 / 7), (P2, "C", 2 / 3),
    (P2, "PC", 4 / 9), (lambda v: ((v**2).sum(-1)) ** 2, "CI", 28 / 411), (XS, "PC", 0.0), (lambda v: v**3, "C", 0.0), (lambda v: (v**2).sum(-1), "CI", 0.0),
])
def test_exact_floor_closed_forms(target, space, value):
    """Closed forms derived by hand in the chapter (uniform coordinates on [-1, 1], n = 3)."""
    assert ef.exact_floor(target, 3, space) == pytest.approx(value, abs=1e-12)


def _enumerate(nodes, probs, n):
    X = np.array(list(itertools.product(nodes, repeat=n)))
    w = np.prod(np.array(list(itertools.product(probs, repeat=n))), axis=1)
    return X, w


def _brute_force_floor(target, nodes, probs, n, space):
    """Weighted least squares over *every* function of the finite domain allowed by the class."""
    X, w = _enumerate(nodes, probs, n)
    onehot = (X[..., None] == np.asarray(nodes)).astype(float)            # (m^n, n, k)
    if space == "CI":                                                       # sum_i f(x_i)
        design, y, wt = onehot.sum(1), target(X), w
    else:                                                                   # f(x_i) per entry
        design, y, wt = onehot.reshape(-1, len(nodes)), target(X).reshape(-1), np.repeat(w, n) / n
    design = np.hstack([design, np.ones((len(design), 1))])
    sw = np.sqrt(wt)
    beta, *_ = np.linalg.lstsq(design * sw[:, None], y * sw, rcond=None)
    resid = wt @ (y - design @ beta) ** 2
    return resid / (wt @ (y - wt @ y) ** 2)


@pytest.mark.parametrize("space,target", [("CI", S2), ("CI", S3), ("CI", lambda v: np.exp(v).prod(-1)),
                                          ("C", XS), ("C", P2), ("C", lambda v: np.sin(v + v.max(-1, keepdims=True)))])
def test_floor_formula_against_brute_force_on_a_finite_domain(space, target):
    nodes, probs = np.array([-1.0, -0.2, 0.5, 1.3]), np.array([0.1, 0.4, 0.3, 0.2])
    exact = ef.exact_floor(target, 3, space, marginal=(nodes, probs))
    assert exact == pytest.approx(_brute_force_floor(target, nodes, probs, 3, space), abs=1e-10)


def test_class_optimum_is_the_projection_on_a_finite_domain():
    nodes, probs = np.array([-1.0, 0.0, 2.0]), np.array([0.25, 0.5, 0.25])
    X, w = _enumerate(nodes, probs, 3)
    opt = ef.class_optimum(S3, X, "CI", marginal=(nodes, probs))
    resid = S3(X) - opt
    counts = (X[..., None] == nodes).sum(1)                 # every additive function is a combination
    np.testing.assert_allclose(counts.T @ (w * resid), 0.0, atol=1e-10)   # residual orthogonal to them


@pytest.mark.parametrize("power", [2, 4])
def test_pc_floor_is_the_limit_of_exact_lattice_group_means(power):
    """On the uniform lattice with m points per axis, E[Var(p_k | x_0, s)] is a set of exact group means.

    As m grows the lattice law tends to the uniform one, so these floors converge to the continuum
    floor (for p_2 they coincide with it at every m; for p_4 they approach it from below).
    """
    target = lambda v: np.repeat((v**power).sum(-1, keepdims=True), 3, axis=-1)
    floors = []
    for m in (11, 41, 81):
        g = np.linspace(-1, 1, m)
        X = np.array(np.meshgrid(g, g, g, indexing="ij")).reshape(3, -1).T
        y = (X**power).sum(1)
        idx = np.round((X + 1) * (m - 1) / 2).astype(int)               # lattice indices 0..m-1
        _, inv = np.unique(idx[:, 0] * 4 * m + idx.sum(1), return_inverse=True)
        means = np.bincount(inv, y) / np.bincount(inv)
        floors.append(np.mean((y - means[inv]) ** 2) / np.var(y))
    errors = np.abs(np.array(floors) - ef.exact_floor(target, 3, "PC"))
    assert errors[-1] < 1e-4
    assert power == 2 or errors[2] < errors[1] < errors[0]


def test_pc_optimum_matches_the_closed_form():
    x = RNG.uniform(-1, 1, (200, 3))
    t = x[:, 1] + x[:, 2]
    m = 2 - np.abs(t)
    np.testing.assert_allclose(ef.class_optimum(P2, x, "PC")[:, 0], x[:, 0] ** 2 + t**2 / 2 + m**2 / 6, atol=1e-12)


def test_compare_with_floor_monte_carlo_agrees_with_exact_floor():
    x = RNG.uniform(-1, 1, (40000, 3))
    opt = ef.class_optimum(S2, x, "CI")
    cmp = ef.compare_with_floor(opt + 0.1, opt, S2(x))
    assert abs(cmp.floor - 5 / 6) < 4 * cmp.floor_se
    assert cmp.model > cmp.floor


def test_compare_with_floor_lower_bound_catches_a_leak():
    """A predictor outside U(C, I) (it sees s) beats the floor by many cross-term standard errors."""
    x = RNG.uniform(-1, 1, (20000, 3))
    opt = ef.class_optimum(S2, x, "CI")
    cmp = ef.compare_with_floor(S2(x) * 0.9, opt, S2(x))
    assert cmp.model < cmp.floor - 4 * cmp.cross_se


# --------------------------------------------------------------------------- separation and witnesses
def test_moment_matched_pairs_keep_two_power_sums_and_change_the_multiset():
    a, b = eq.moment_matched_pairs(4, 300, rng=np.random.default_rng(5))
    np.testing.assert_allclose(a.sum(1), b.sum(1), atol=1e-12)
    np.testing.assert_allclose((a**2).sum(1), (b**2).sum(1), atol=1e-12)
    assert np.all(np.abs(np.sort(a, 1) - np.sort(b, 1)).max(1) >= 0.05) and np.all(np.abs(b) <= 1)
    assert np.all(np.abs((a**3).sum(1) - (b**3).sum(1)) + np.abs((a**4).sum(1) - (b**4).sum(1)) > 0)


def test_newton_identity_puts_the_n3_product_in_u_p_i_but_not_n4():
    x3 = RNG.uniform(-1, 1, (3000, 3))
    lhs = x3.prod(1)
    s, p2, p3 = x3.sum(1), (x3**2).sum(1), (x3**3).sum(1)
    np.testing.assert_allclose(lhs, s**3 / 6 - s * p2 / 2 + p3 / 3, atol=1e-12)
    assert ef.power_sum_residual(x3, lhs, 3) < 1e-20
    assert ef.power_sum_residual(x3, lhs, 6, with_sum=False) > 0.99
    x4 = RNG.uniform(-1, 1, (20000, 4))
    assert ef.power_sum_residual(x4, x4.prod(1), 6) > 0.1


# --------------------------------------------------------------------------- bad input
def test_bad_inputs_name_the_argument():
    p = eq.init_network("CI", 4, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="arch"):
        eq.init_network("ICL", 4, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="width"):
        eq.init_network("CI", 0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="params"):
        eq.apply_network(p, np.zeros((2, 3)), "CIL")
    with pytest.raises(ValueError, match="x"):
        eq.apply_network(p, np.array([[np.nan, 0.0, 1.0]]), "CI")
    with pytest.raises(ValueError, match="archs"):
        eq.train_networks(["CI", "CCC"], [4, 4], np.zeros((8, 3)), np.zeros((2, 8)), steps=2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="y"):
        eq.train_networks(["CI"], [4], np.zeros((8, 3)), np.zeros((1, 7)), steps=2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="space"):
        ef.exact_floor(S2, 3, "PI")
    with pytest.raises(ValueError, match="space 'PC'"):
        ef.exact_floor(P2, 4, "PC")
    with pytest.raises(ValueError, match="target"):
        ef.exact_floor(lambda v: v.sum(-1), 3, "C")
    with pytest.raises(ValueError, match="prediction"):
        ef.compare_with_floor(np.zeros(3), np.zeros(4), np.arange(4.0))
    with pytest.raises(ValueError, match="n"):
        eq.moment_matched_pairs(2, 10, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="margin"):
        eq.separation_fraction([0.0], [1.0], margin=-1.0)
    with pytest.raises(ValueError, match="degree"):
        ef.power_sum_residual(np.zeros((4, 3)), np.zeros(4), -1)
