"""Unit tests of paperlib.complexity.serial against independent brute-force computations."""

import itertools

import jax
import numpy as np
import pytest

from paperlib.complexity import serial as S

# Rule 110 written out by hand from its definition: neighbourhood (left, centre, right) -> new centre.
RULE110 = {
    (1, 1, 1): 0, (1, 1, 0): 1, (1, 0, 1): 1, (1, 0, 0): 0,
    (0, 1, 1): 1, (0, 1, 0): 1, (0, 0, 1): 1, (0, 0, 0): 0,
}


def brute_label(bits, L):
    """Pure-Python light cone: shrink the list by one cell at each end per step."""
    c = len(bits) // 2
    row = list(bits[c - L : c + L + 1])
    for _ in range(L):
        row = [RULE110[tuple(row[i : i + 3])] for i in range(len(row) - 2)]
    return row[0]


def test_rule_table_matches_hand_written_rule110():
    table = S.rule_table(110)
    for (a, b, c), v in RULE110.items():
        assert table[4 * a + 2 * b + c] == v
    assert S.rule_table(0).sum() == 0 and S.rule_table(255).sum() == 8


def test_ca_step_brute_force():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 2, size=(20, 9))
    out = np.asarray(S.ca_step(rows))
    ref = [[RULE110[tuple(r[i : i + 3])] for i in range(7)] for r in rows]
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("L", [0, 1, 2, 3])
def test_light_cone_label_exhaustive(L):
    # every input of the light cone, embedded in a width-9 row with random outside cells
    rng = np.random.default_rng(L)
    cones = np.array(list(itertools.product([0, 1], repeat=2 * L + 1)))
    x = rng.integers(0, 2, size=(len(cones), 9))
    x[:, 4 - L : 4 + L + 1] = cones
    ref = [brute_label(r, L) for r in x]
    np.testing.assert_array_equal(np.asarray(S.light_cone_label(x, L)), ref)


def test_centre_trajectory_equals_light_cone_for_all_depths():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2, size=(64, 17))
    traj = np.asarray(S.centre_trajectory(x, 8))
    for L in range(1, 9):
        np.testing.assert_array_equal(traj[:, L - 1], [brute_label(r, L) for r in x])
    _, labels = S.make_batch(jax.random.key(0), 16, 17, 8)
    assert labels.shape == (16, 8)


X_SERIAL = np.random.default_rng(2).integers(0, 2, size=(50, 13))  # one shape: one compile per L


def exact_rule_params():
    """The module's hand-built one-step model (one-hot hidden layer over the 8 neighbourhoods)."""
    return S.exact_rule_params(110)


@pytest.mark.parametrize("rule", [110, 30, 90])
def test_exact_rule_params_against_hand_written_neighbourhoods(rule):
    # independent: the thresholded logit on every +-1 neighbourhood, against bit 4a+2b+c of the rule
    # number (and, for Rule 110, the table written out by hand above)
    params = S.exact_rule_params(rule, gain=3.0)
    assert [w.shape for w, _ in params] == [(3, 8), (8, 1)] and [b.shape for _, b in params] == [(8,), (1,)]
    for a, b, c in itertools.product([0, 1], repeat=3):
        logit = float(S.mlp_apply(params, np.array([[2.0 * a - 1, 2.0 * b - 1, 2.0 * c - 1]]))[0, 0])
        assert (logit > 0) == bool((rule >> (4 * a + 2 * b + c)) & 1)
        if rule == 110:
            assert (logit > 0) == bool(RULE110[(a, b, c)])
    with pytest.raises(ValueError, match="gain"):
        S.exact_rule_params(110, gain=0.0)
    with pytest.raises(ValueError, match="rule"):
        S.exact_rule_params(256)


def test_serial_predict_with_exact_rule_is_exact():
    for L in [0, 1, 6]:
        np.testing.assert_array_equal(np.asarray(S.serial_predict(exact_rule_params(), X_SERIAL, L)),
                                      [brute_label(r, L) for r in X_SERIAL])


def test_serial_predict_executes_L_squared_updates():
    # XLA's cost analysis of the compiled program, independent of serial_flops: the shrinking light
    # cone evaluates the one-step MLP L**2 times (a padded fixed-width window would need L(2L+1)).
    # Counted in float32, the precision the chapter runs in: under a global jax_enable_x64 (which
    # another test module may switch on at import) the float64 weights meet the float32 cells and
    # XLA adds dtype conversions, hoisted out of the unrolled steps, so the count is no longer
    # exactly proportional to L**2 although the MLP still runs L**2 times.
    def xla_flops(L):
        with jax.enable_x64(False):
            lowered = S._serial_predict.lower(exact_rule_params(), np.zeros((1, 2 * L + 1)), L)
            ca = lowered.compile().cost_analysis()
        return (ca[0] if isinstance(ca, list) else ca)["flops"]

    f1, f4 = xla_flops(1), xla_flops(4)
    assert f4 == pytest.approx(16 * f1, rel=1e-6)
    assert S.serial_flops(4, hidden=8) == 16 * S.serial_flops(1, hidden=8)



def test_serial_predict_depths_equals_serial_predict_at_every_depth():
    # the fixed-width rollout must give exactly serial_predict's light-cone prediction at each depth,
    # for the exact rule (against brute force) and for a trained, imperfect-margin rule
    # steps=200 and depths 1, 3, 6 share compiled programs with the other tests of this file (compilation dominates)
    params, _ = S.train_local_rule(jax.random.key(1), steps=200)
    depths = np.array([1, 3, 6])
    for p in (exact_rule_params(), params):
        got = np.asarray(S.serial_predict_depths(p, X_SERIAL, depths))
        want = np.stack([np.asarray(S.serial_predict(p, X_SERIAL, int(L))) for L in depths])
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(S.serial_predict_depths(exact_rule_params(), X_SERIAL, [6]))[0],
                                  [brute_label(r, 6) for r in X_SERIAL])
    with pytest.raises(ValueError, match="depths"):
        S.serial_predict_depths(params, X_SERIAL, [0])
    with pytest.raises(ValueError, match="x must contain only 0 and 1"):
        S.serial_predict_depths(params, np.full((2, 9), 2), [1])

def test_trained_local_rule_and_shapes():
    params, losses = S.train_local_rule(jax.random.key(0), steps=200)
    assert losses.shape == (200,) and float(losses[-1]) < float(losses[0])
    np.testing.assert_array_equal(np.asarray(S.serial_predict(params, X_SERIAL, 6)),
                                  [brute_label(r, 6) for r in X_SERIAL])


def test_vmapped_training_and_sampler_shapes():
    # tiny sizes: this test checks shapes and plumbing; compilation dominates its cost
    depths = np.array([1, 2])
    po, lo = S.train_oneshot(jax.random.key(0), depths, width=5, hidden=2, layers=1, steps=2, batch=2)
    assert lo.shape == (2, 2) and po[0][0].shape == (2, 5, 2)
    pd, ld = S.train_denoiser(jax.random.key(1), depths, width=5, hidden=2, layers=1, steps=2, batch=2)
    assert ld.shape == (2, 2) and pd[0][0].shape == (2, 7, 2)
    one = jax.tree_util.tree_map(lambda a: a[0], pd)
    x = np.zeros((3, 5), dtype=int)
    out = S.diffusion_sample(one, x, 4, key=jax.random.key(2))
    assert out.shape == (3,) and set(np.asarray(out).tolist()) <= {0, 1}


@pytest.mark.parametrize("bias, expected", [(10.0, 1), (-10.0, 0)])
def test_diffusion_sampler_with_certain_denoiser(bias, expected):
    # a denoiser that always predicts y0 = +-1 (a point-mass target): every K must return that label
    params = [(np.zeros((11, 1)), np.array([bias]))]
    x = np.random.default_rng(4).integers(0, 2, size=(32, 9))
    for K in [1, 3, 20]:
        out = np.asarray(S.diffusion_sample(params, x, K, key=jax.random.key(K)))
        np.testing.assert_array_equal(out, expected)


def test_flop_counts_closed_form():
    # 3 -> 16 -> 1 with ReLU and output threshold: 2*3*16 + 16 + 16 + 2*16 + 1 + 1 = 162 per cell update
    assert S.mlp_flops((3, 16, 1), output_nonlinearity=True) == 162
    assert S.serial_flops(16) == 256 * 162
    assert S.oneshot_flops() == (2 * 33 * 128 + 256) + (2 * 128 * 128 + 256) + (2 * 128 + 2)
    assert S.diffusion_flops(4) - S.diffusion_flops(3) == S.mlp_flops((35, 128, 128, 1), output_nonlinearity=True) + 12


def test_value_errors():
    with pytest.raises(ValueError, match="rule"):
        S.rule_table(300)
    with pytest.raises(ValueError, match="rows"):
        S.ca_step(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="x must have an odd"):
        S.light_cone_label(np.zeros((2, 8)), 1)
    with pytest.raises(ValueError, match="L"):
        S.light_cone_label(np.zeros((2, 9)), 5)
    with pytest.raises(ValueError, match="depth"):
        S.centre_trajectory(np.zeros((2, 9)), 0)
    with pytest.raises(ValueError, match="x must be finite"):
        S.serial_predict([], np.full((2, 9), np.nan), 1)
    with pytest.raises(ValueError, match="depths"):
        S.train_oneshot(jax.random.key(0), [1, 20], width=9)
    with pytest.raises(ValueError, match="steps"):
        S.train_denoiser(jax.random.key(0), [1], steps=0)
    with pytest.raises(ValueError, match="n_steps"):
        S.diffusion_sample([], np.zeros((2, 9)), 0, key=jax.random.key(0))
    with pytest.raises(ValueError, match="sizes"):
        S.mlp_flops((3,))
    with pytest.raises(ValueError, match="width must be odd"):
        S.make_batch(jax.random.key(0), 4, 8, 2)
    with pytest.raises(ValueError, match="x must contain only 0 and 1"):
        S.serial_predict([], np.full((2, 9), 2), 1)


@pytest.mark.parametrize("q", [0.2, 0.7])
def test_ddim_samples_two_point_target_with_exact_denoiser(q, monkeypatch):
    # Closed form: for y0 = +1 w.p. q, -1 otherwise, and y = y0 + sigma * eps, the exact x0-denoiser is
    # E[y0 | y] = tanh(artanh(2q - 1) + y / sigma^2). The deterministic sampler integrates the
    # probability-flow ODE, so the fraction of +1 outputs must be q (up to discretisation and the
    # N(0, sigma_max^2) start); a sign error in the update breaks this.
    monkeypatch.setattr(S, "denoise", lambda p, y, s, x: jax.numpy.tanh(
        np.arctanh(2 * q - 1) + y / s**2))
    n = 4000
    y_init = 20.0 * jax.random.normal(jax.random.key(5), (n,))
    out = np.asarray(S._ddim.__wrapped__(None, np.zeros((n, 3)), 100, y_init, 0.01, 20.0))
    assert abs(out.mean() - q) < 4 * np.sqrt(q * (1 - q) / n) + 0.01
