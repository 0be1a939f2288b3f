"""Inherently serial problems: Rule 110 light cones, fixed-depth vs diffusion vs sequential models.

Companion module of the chapter *inherently_serial_problems* on Liu, Preechakul, Kuwaranancharoen and
Bai, "The Serial Scaling Hypothesis" (ICLR 2026, arXiv:2507.12549). The paper argues (Sec. 2-4) that
fixed-depth networks and diffusion models with a fixed-depth (TC^0) backbone cannot solve *inherently
serial* problems, while models whose number of sequential steps grows with the problem (recurrence,
chain of thought) can. The paper runs no experiment; this module supplies a small one.

The task
    Input ``x`` in ``{0,1}^W`` with ``W = 2 * L_MAX + 1``; label ``y_L(x)`` = centre cell after ``L``
    synchronous updates of the elementary cellular automaton Rule 110 (the paper's own example of a
    serial computation). The label depends only on the light cone ``x[c-L .. c+L]``, so the input
    size is the same for every ``L`` and only the serial depth changes.

The three learners
    * :func:`oneshot_logits` - a fixed-depth MLP read once (a TC^0 model);
    * :func:`diffusion_sample` - a conditional diffusion model whose denoiser is the same fixed-depth
      MLP, sampled with ``K`` deterministic (DDIM / Euler) steps (the setting of the paper's Thm 4.1);
    * :func:`serial_predict` - a tiny MLP that learns *one* CA step and is applied ``L`` times,
      thresholding after each step (a chain-of-thought / recurrent model of serial depth ``L``).

:func:`mlp_flops`, :func:`serial_flops`, :func:`oneshot_flops`, :func:`diffusion_flops` count the
floating-point operations per example analytically from the architectures.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from paperlib.core._validation import check_int, check_key, check_real
from paperlib.models.mlp import mlp_apply, mlp_flops, mlp_init  # noqa: F401  (re-exported: part of this module's API)
from paperlib.models.training import train
from ._serial_automaton import (  # noqa: F401  (re-exported: part of this module's API)
    _centre_trajectory,
    _check_bits,
    _check_cells,
    _check_depths,
    ca_step,
    centre_trajectory,
    exact_rule_params,
    light_cone_label,
    make_batch,
    rule_table,
)
from ._serial_fixed_depth import (  # noqa: F401  (re-exported: part of this module's API)
    _train_vmapped,
    _train_vmapped_jit,
    denoise,
    oneshot_flops,
    oneshot_logits,
    train_denoiser,
    train_oneshot,
)

_CELLS = "leading axes are batch axes: cells of shape (..., w) are valid"
_PROBE_EXEMPTIONS = {
    "ca_step": {"rows": {"array_rank": _CELLS}},
    "centre_trajectory": {"x": {"array_rank": _CELLS}},
    "light_cone_label": {"x": {"array_rank": _CELLS}},
}

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "rule_table",
    "exact_rule_params",
    "ca_step",
    "centre_trajectory",
    "light_cone_label",
    "make_batch",
    "mlp_init",
    "mlp_apply",
    "mlp_flops",
    "train_local_rule",
    "serial_predict",
    "serial_predict_depths",
    "serial_flops",
    "train_oneshot",
    "oneshot_logits",
    "oneshot_flops",
    "train_denoiser",
    "denoise",
    "diffusion_sample",
    "diffusion_flops",
]


# ----------------------------------------------------------------------------------------------
# The sequential (chain-of-thought) learner
# ----------------------------------------------------------------------------------------------
def train_local_rule(key, *, hidden: int = 16, steps: int = 300, batch: int = 256,
                     learning_rate: float = 1e-2, rule: int = 110):
    """Train the one-step model ``g: {+-1}^3 -> logit`` on single CA steps (CoT-style supervision).

    Each minibatch holds ``batch`` random neighbourhoods labelled with the rule's output; the loss is
    the logistic loss. Trained with :func:`paperlib.models.training.train` (optax Adam, ``lax.scan``).

    Parameters
    ----------
    key : jax.random key
    hidden : int, default 16
        Hidden width of the ``3 -> hidden -> 1`` MLP.
    steps, batch : int
        Optimisation steps and minibatch size.
    learning_rate : float
    rule : int, default 110

    Returns
    -------
    params : list of (W, b)
    losses : jax.Array, shape (steps,)

    Raises
    ------
    ValueError
        If ``hidden``, ``batch`` or ``steps`` is not a positive integer, or ``learning_rate <= 0``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> params, losses = train_local_rule(jax.random.key(0), hidden=4, steps=5, batch=8)
    >>> losses.shape, [w.shape for w, _ in params]
    ((5,), [(3, 4), (4, 1)])
    """
    key = check_key("key", key)
    check_int("hidden", hidden, minimum=1)
    check_int("steps", steps, minimum=1)
    check_int("batch", batch, minimum=1)
    check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    table = jnp.asarray(rule_table(rule))
    k_init, k_train = jax.random.split(key)

    def loss_fn(p, k):
        nb = jax.random.bernoulli(k, 0.5, (batch, 3)).astype(jnp.int32)
        y = table[4 * nb[:, 0] + 2 * nb[:, 1] + nb[:, 2]]
        logit = mlp_apply(p, 2.0 * nb - 1.0)[:, 0]
        return optax.sigmoid_binary_cross_entropy(logit, y).mean()

    res = train(loss_fn, mlp_init(k_init, (3, hidden, 1)), optax.adam(learning_rate), steps=steps, key=k_train)
    return res.params, res.losses


@partial(jax.jit, static_argnames="L")
def _serial_predict(params, window, L):
    # L sequential, weight-tied steps on the shrinking light cone (width 2L+1). Step l = 1..L updates
    # only the 2(L - l) + 1 cells whose whole neighbourhood lies in the window, so the run evaluates
    # the one-step MLP exactly L**2 times per example: the count of serial_flops. L is static, so the
    # Python loop unrolls into L dependent stages with shrinking shapes.
    row = window.astype(jnp.float32)
    for _ in range(L):
        nb = jnp.stack([row[:, :-2], row[:, 1:-1], row[:, 2:]], axis=-1)
        row = (mlp_apply(params, 2.0 * nb - 1.0)[..., 0] > 0).astype(jnp.float32)
    return row[:, 0].astype(jnp.int32)


def serial_predict(params, x, L: int):
    """Sequential model: apply the learned one-step rule ``L`` times on the light cone, thresholding.

    Parameters
    ----------
    params : list of (W, b)
        From :func:`train_local_rule`.
    x : array of {0, 1}, shape (B, W), W odd
    L : int, ``0 <= L <= (W - 1) // 2``
        Number of sequential steps (the serial depth).

    Returns
    -------
    jax.Array of int32, shape (B,)
        Predicted ``y_L(x)``.

    Raises
    ------
    ValueError
        If ``x`` is not a 2-D array of 0/1 cells with an odd number of columns, or ``L`` is out of range.

    Examples
    --------
    The hand-built one-step rule of :func:`exact_rule_params` reproduces the automaton exactly:

    >>> params = exact_rule_params(110)
    >>> x = np.array([[0, 0, 1, 1, 0], [0, 0, 1, 1, 1], [0, 1, 0, 0, 1]])
    >>> serial_predict(params, x, 2).tolist(), light_cone_label(x, 2).tolist()
    ([0, 1, 1], [0, 1, 1])
    """
    x = _check_bits(x)
    if x.shape[1] % 2 == 0:
        raise ValueError(f"x must have an odd number of columns, got shape {x.shape}")
    c = x.shape[1] // 2
    L = check_int("L", L, minimum=0, maximum=c)
    return _serial_predict(params, jnp.asarray(x[:, c - L : c + L + 1]), L)


@partial(jax.jit, static_argnames="depth")
def _serial_rollout(params, x, depth):
    # The same thresholded, weight-tied steps as _serial_predict, on the whole row at a fixed width
    # (zero-padded at both ends, one lax.scan step compiled once): padding corrupts only the cells
    # within t of an edge after t steps, so the centre after L <= (W - 1) / 2 steps equals the centre
    # of the shrinking light-cone rollout of serial_predict. Each cell is the same MLP evaluated on the
    # same neighbourhood.
    c = x.shape[-1] // 2

    def step(row, _):
        padded = jnp.pad(row, ((0, 0), (1, 1)))
        nb = jnp.stack([padded[:, :-2], padded[:, 1:-1], padded[:, 2:]], axis=-1)
        new = (mlp_apply(params, 2.0 * nb - 1.0)[..., 0] > 0).astype(jnp.float32)
        return new, new[:, c]

    _, centres = jax.lax.scan(step, x.astype(jnp.float32), None, length=depth)
    return centres.astype(jnp.int32)  # (depth, B): row L - 1 is the prediction at depth L


def serial_predict_depths(params, x, depths):
    """:func:`serial_predict` at several depths ``L`` from one rollout (one compilation for all depths).

    Runs ``max(depths)`` thresholded steps of the one-step MLP on the whole input row (fixed width ``W``,
    zero padding, one ``lax.scan``) and reads the centre cell after each step. The centre after ``L``
    steps depends only on the light cone ``x[c-L .. c+L]``, so the prediction at depth ``L`` is the one
    of ``serial_predict(params, x, L)``: the same MLP on the same neighbourhoods. Use this to evaluate
    many depths cheaply; :func:`serial_predict` is the model as defined (``L**2`` cell updates per
    example, the count of :func:`serial_flops`), this function spends ``W * max(depths)`` updates.

    Parameters
    ----------
    params : list of (W, b)
        From :func:`train_local_rule`.
    x : array of {0, 1}, shape (B, W), W odd
    depths : array of int, shape (n_L,)
        Serial depths, each in ``[1, (W - 1) // 2]``.

    Returns
    -------
    jax.Array of int32, shape (n_L, B)
        ``out[j] = serial_predict(params, x, depths[j])``.

    Raises
    ------
    ValueError
        If ``x`` is not a 2-D array of 0/1 cells with an odd number of columns, or a depth is out of range.

    Examples
    --------
    The hand-built one-step rule of :func:`exact_rule_params` reproduces the automaton exactly:

    >>> params = exact_rule_params(110)
    >>> x = np.array([[0, 0, 1, 1, 0], [0, 0, 1, 1, 1], [0, 1, 0, 0, 1]])
    >>> serial_predict_depths(params, x, [1, 2]).tolist(), [light_cone_label(x, L).tolist() for L in (1, 2)]
    ([[1, 1, 0], [0, 1, 1]], [[1, 1, 0], [0, 1, 1]])
    """
    x = _check_bits(x)
    if x.shape[1] % 2 == 0:
        raise ValueError(f"x must have an odd number of columns, got shape {x.shape}")
    depths = np.asarray(_check_depths(depths, x.shape[1]))
    out = _serial_rollout(params, jnp.asarray(x), int(depths.max()))
    return out[depths - 1]


def serial_flops(L: int, *, hidden: int = 16) -> int:
    """FLOPs per example of :func:`serial_predict`: ``L**2`` cell updates of the ``3-hidden-1`` MLP.

    Step ``l = 1..L`` updates ``2 (L - l) + 1`` cells, in total ``L**2`` (exactly the updates that
    :func:`serial_predict` executes); each costs one MLP forward pass plus one threshold. The
    encoding ``2x - 1`` of the inputs is not counted, for this model or the one-shot MLP: it can be
    folded into the first layer's weights and bias.

    Parameters
    ----------
    L : int
        Serial depth, ``L >= 0``.
    hidden : int, default 16
        Hidden width of the one-step MLP.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``L`` is negative or ``hidden`` is not a positive integer.

    Examples
    --------
    >>> serial_flops(4, hidden=8)
    1312
    """
    L = check_int("L", L, minimum=0)
    hidden = check_int("hidden", hidden, minimum=1)
    return L * L * mlp_flops((3, hidden, 1), output_nonlinearity=True)


# ----------------------------------------------------------------------------------------------
# Sampling the diffusion learner (its denoiser and training are in _serial_fixed_depth)
# ----------------------------------------------------------------------------------------------
@jax.jit
def _ddim(params, x, n_steps, y_init, s_min, s_max):
    def body(i, y):
        s_i = s_max * (s_min / s_max) ** (i / n_steps)
        s_next = s_max * (s_min / s_max) ** ((i + 1) / n_steps)
        d = denoise(params, y, s_i, x)
        return d + (s_next / s_i) * (y - d)

    y = jax.lax.fori_loop(0, n_steps, body, y_init)
    return (denoise(params, y, s_min, x) > 0).astype(jnp.int32)


def diffusion_sample(params, x, n_steps: int, *, key, sigma_min: float = 0.01, sigma_max: float = 20.0):
    """Sample the output token with ``n_steps`` deterministic DDIM (Euler in sigma) steps.

    Starting from ``y ~ N(0, sigma_max^2)``, on the geometric grid
    ``sigma_i = sigma_max (sigma_min / sigma_max)^(i / K)``, ``i = 0..K``, update
    ``y <- D + (sigma_{i+1} / sigma_i) (y - D)`` with ``D = denoise(params, y, sigma_i, x)``; return
    ``1[D(y_K, sigma_K, x) > 0]``. ``K = n_steps`` is a traced loop bound, so one compilation serves
    every ``K``.

    Parameters
    ----------
    params : list of (W, b)
        One denoiser (no leading depth axis; ``jax.vmap`` over several).
    x : array of {0, 1}, shape (B, W)
    n_steps : int
        Number of denoising steps ``K >= 1``.
    key : jax.random key
        Keyword-only; draws the initial noise.
    sigma_min, sigma_max : float

    Returns
    -------
    jax.Array of int32, shape (B,)

    Raises
    ------
    ValueError
        If ``n_steps < 1``, ``not 0 < sigma_min < sigma_max``, or ``x`` is not a 2-D array of 0/1 cells.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> params = [(rng.standard_normal((7, 4)), np.zeros(4)), (rng.standard_normal((4, 1)), np.zeros(1))]
    >>> x = np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]])
    >>> out = diffusion_sample(params, x, 3, key=jax.random.key(1))
    >>> out.shape, set(np.asarray(out).tolist()) <= {0, 1}
    ((2,), True)
    """
    key = check_key("key", key)
    n_steps = check_int("n_steps", n_steps, minimum=1)
    s_min = check_real("sigma_min", sigma_min, minimum=0.0, strict_min=True)
    s_max = check_real("sigma_max", sigma_max, minimum=s_min, strict_min=True)
    x = jnp.asarray(_check_bits(x))
    y_init = s_max * jax.random.normal(key, (x.shape[0],))
    return _ddim(params, x, n_steps, y_init, s_min, s_max)


def diffusion_flops(n_steps: int, *, width: int = 33, hidden: int = 128, layers: int = 2) -> int:
    """FLOPs per example of :func:`diffusion_sample`: ``K + 1`` denoiser passes plus the updates.

    Each pass costs the backbone ``(W + 2) -> hidden x layers -> 1`` with a tanh output, 8 FLOPs to
    build its two extra inputs (scale, square root, log) and 4 FLOPs for the DDIM update.

    Raises
    ------
    ValueError
        If ``n_steps``, ``width``, ``hidden`` or ``layers`` is not a positive integer.

    Examples
    --------
    >>> diffusion_flops(3, width=5, hidden=4, layers=1)
    341
    """
    n_steps = check_int("n_steps", n_steps, minimum=1)
    width, hidden, layers = (check_int(nm, v, minimum=1) for nm, v in
                             (("width", width), ("hidden", hidden), ("layers", layers)))
    per_pass = mlp_flops((width + 2,) + (hidden,) * layers + (1,), output_nonlinearity=True) + 8
    return int((n_steps + 1) * per_pass + 4 * n_steps + 1)
