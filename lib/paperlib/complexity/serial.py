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

from paperlib.core._validation import as_array, check_int, check_key, check_real, is_traced
from paperlib.models.mlp import mlp_apply, mlp_flops, mlp_init  # noqa: F401  (re-exported: part of this module's API)
from paperlib.models.training import train

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
# The cellular automaton
# ----------------------------------------------------------------------------------------------
def rule_table(rule: int = 110) -> np.ndarray:
    """Lookup table of an elementary cellular automaton (Wolfram numbering).

    Parameters
    ----------
    rule : int, default 110
        Wolfram rule number in ``[0, 255]``.

    Returns
    -------
    numpy.ndarray of int32, shape (8,)
        ``table[4*left + 2*centre + right]`` is the new centre cell, i.e. bit ``k`` of ``rule``.

    Raises
    ------
    ValueError
        If ``rule`` is not an integer in ``[0, 255]``.

    Examples
    --------
    >>> rule_table(110).tolist()
    [0, 1, 1, 1, 0, 1, 1, 0]
    """
    rule = check_int("rule", rule, minimum=0, maximum=255)
    return np.array([(rule >> k) & 1 for k in range(8)], dtype=np.int32)


def exact_rule_params(rule: int = 110, *, gain: float = 10.0):
    """Hand-built one-step MLP ``3 -> 8 -> 1`` whose thresholded output is the rule, exactly.

    The hidden layer is one-hot over the 8 neighbourhoods: with inputs ``v = 2 (l, m, r) - 1`` in
    ``{-1, +1}^3``, hidden unit ``j`` has weights ``corner_j`` (the ``+-1`` pattern of neighbourhood
    ``j = 4l + 2m + r``) and bias ``-2``, so ``relu(corner_j . v - 2)`` is 1 on neighbourhood ``j`` and
    0 on every other one. The output weight of unit ``j`` is ``gain (2 table[j] - 1)`` with bias
    ``-gain / 2``, so the logit is ``+gain/2`` where the rule outputs 1 and ``-3 gain/2`` where it
    outputs 0. It is the reference one-step model of :func:`serial_predict`: a model with the right
    8-entry table, against which a trained one is compared.

    Parameters
    ----------
    rule : int, default 110
        Wolfram rule number in ``[0, 255]``.
    gain : float, default 10.0
        Output scale, ``gain > 0`` (finite); a larger gain saturates a sigmoid applied to the logit.

    Returns
    -------
    list of (W, b) numpy arrays
        ``[(W1, b1), (W2, b2)]`` with shapes ``(3, 8), (8,), (8, 1), (1,)``, for
        :func:`paperlib.models.mlp.mlp_apply`.

    Raises
    ------
    ValueError
        If ``rule`` is not an integer in ``[0, 255]`` or ``gain`` is not a positive finite number.

    Examples
    --------
    >>> params = exact_rule_params(110)
    >>> [w.shape for w, _ in params]
    [(3, 8), (8, 1)]
    >>> nb = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)])
    >>> (np.asarray(mlp_apply(params, 2.0 * nb - 1.0))[:, 0] > 0).astype(int).tolist() == rule_table(110).tolist()
    True
    """
    table = rule_table(rule)
    gain = check_real("gain", gain, minimum=0.0, strict_min=True)
    corners = np.array([[a, b, c] for a in (-1.0, 1.0) for b in (-1.0, 1.0) for c in (-1.0, 1.0)])  # row 4a+2b+c
    w2 = (gain * (2.0 * table - 1.0))[:, None]
    return [(corners.T, -2.0 * np.ones(8)), (w2, np.array([-gain / 2.0]))]


def ca_step(rows, rule: int = 110):
    """One synchronous update of an elementary CA on a shrinking window (no boundary cells).

    Parameters
    ----------
    rows : array of {0, 1}, shape (..., w), w >= 3
        Cell states.
    rule : int, default 110
        Wolfram rule number.

    Returns
    -------
    jax.Array of int32, shape (..., w - 2)
        ``out[..., i] = table[4 rows[..., i] + 2 rows[..., i+1] + rows[..., i+2]]``: the new state of
        every cell whose whole neighbourhood lies inside the window.

    Raises
    ------
    ValueError
        If ``rows`` is empty, holds a cell other than 0 or 1, or has fewer than 3 cells in its last
        axis.

    Examples
    --------
    >>> ca_step(np.array([[0, 1, 1, 0, 1]])).tolist()
    [[1, 1, 1]]
    """
    rows = jnp.asarray(_check_cells("rows", rows), dtype=jnp.int32)
    if rows.ndim < 1 or rows.shape[-1] < 3:
        raise ValueError(f"rows must have a last axis of length >= 3, got shape {rows.shape}")
    table = jnp.asarray(rule_table(rule))
    idx = 4 * rows[..., :-2] + 2 * rows[..., 1:-1] + rows[..., 2:]
    return table[idx]


def _centre_trajectory(x, depth: int, table):
    """Centre cell after 1..depth steps, fixed width with zero padding (see centre_trajectory)."""
    w = x.shape[-1]
    c = w // 2

    def step(row, _):
        padded = jnp.pad(row, [(0, 0)] * (row.ndim - 1) + [(1, 1)])
        idx = 4 * padded[..., :-2] + 2 * padded[..., 1:-1] + padded[..., 2:]
        new = table[idx]
        return new, new[..., c]

    _, centres = jax.lax.scan(step, x, None, length=depth)
    return jnp.moveaxis(centres, 0, -1)


def centre_trajectory(x, depth: int, rule: int = 110):
    """Centre cell after ``1, 2, ..., depth`` CA steps, for every input at once.

    The row keeps its width ``W`` and is padded with zeros at both ends. Padding corrupts cells within
    ``t`` of an edge after ``t`` steps, so the centre cell is exact as long as ``depth <= (W - 1) / 2``;
    it then equals the light-cone label of :func:`light_cone_label` for every ``L <= depth``.

    Parameters
    ----------
    x : array of {0, 1}, shape (..., W), W odd
        Initial rows.
    depth : int
        Number of steps, ``1 <= depth <= (W - 1) // 2``.
    rule : int, default 110
        Wolfram rule number.

    Returns
    -------
    jax.Array of int32, shape (..., depth)
        ``out[..., L - 1] = y_L(x)``.

    Raises
    ------
    ValueError
        If ``x`` is empty or holds a cell other than 0 or 1, ``W`` is even, or ``depth`` is out of range.

    Examples
    --------
    >>> centre_trajectory(np.array([[0, 0, 0, 1, 0, 0, 0]]), 3).tolist()
    [[1, 1, 1]]
    """
    x = jnp.asarray(_check_cells("x", x), dtype=jnp.int32)
    if x.ndim < 1 or x.shape[-1] % 2 == 0:
        raise ValueError(f"x must have an odd last axis (a centre cell), got shape {x.shape}")
    depth = check_int("depth", depth, minimum=1, maximum=(x.shape[-1] - 1) // 2)
    return _centre_trajectory(x, depth, jnp.asarray(rule_table(rule)))


def light_cone_label(x, L: int, rule: int = 110):
    """Label ``y_L(x)``: centre cell after ``L`` steps, computed on the shrinking light cone.

    Parameters
    ----------
    x : array of {0, 1}, shape (..., W), W odd
        Inputs; only cells ``c-L .. c+L`` (``c = W // 2``) matter.
    L : int
        Serial depth, ``0 <= L <= (W - 1) // 2`` (``L = 0`` returns the centre cell itself).
    rule : int, default 110
        Wolfram rule number.

    Returns
    -------
    jax.Array of int32, shape (...)

    Raises
    ------
    ValueError
        If ``x`` is empty or holds a cell other than 0 or 1, ``W`` is even or ``L`` is out of range.

    Examples
    --------
    >>> light_cone_label(np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]]), 2).tolist()
    [0, 0]
    """
    x = jnp.asarray(_check_cells("x", x), dtype=jnp.int32)
    if x.ndim < 1 or x.shape[-1] % 2 == 0:
        raise ValueError(f"x must have an odd last axis (a centre cell), got shape {x.shape}")
    c = x.shape[-1] // 2
    L = check_int("L", L, minimum=0, maximum=c)
    row = x[..., c - L : c + L + 1]
    for _ in range(L):
        row = ca_step(row, rule)
    return row[..., 0]


def make_batch(key, batch: int, width: int, depth: int, rule: int = 110):
    """Fresh uniform inputs and their labels for every depth ``1..depth``.

    Parameters
    ----------
    key : jax.random key
        Randomness.
    batch : int
        Number of examples ``B``.
    width : int
        Input width ``W`` (odd).
    depth : int
        Largest serial depth ``L_max <= (W - 1) // 2``.
    rule : int, default 110

    Returns
    -------
    x : jax.Array of int32, shape (B, W)
    labels : jax.Array of int32, shape (B, depth)
        ``labels[:, L - 1] = y_L(x)``.

    Raises
    ------
    ValueError
        If ``batch < 1``, ``width`` is even or below 3, or ``depth`` is not in ``[1, (width - 1) // 2]``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x, labels = make_batch(jax.random.key(0), 2, 5, 2)
    >>> x.shape, labels.shape
    ((2, 5), (2, 2))
    """
    key = check_key("key", key)
    batch = check_int("batch", batch, minimum=1)
    width = check_int("width", width, minimum=3)
    if width % 2 == 0:
        raise ValueError(f"width must be odd, got {width}")
    depth = check_int("depth", depth, minimum=1, maximum=(width - 1) // 2)
    x = jax.random.bernoulli(key, 0.5, (batch, width)).astype(jnp.int32)
    return x, _centre_trajectory(x, depth, jnp.asarray(rule_table(rule)))


def _check_bits(x):
    """Validate a (B, W) array of 0/1 cells and return it as int32 numpy."""
    x = as_array("x", x, ndim=2, dtype=float)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("x must contain only 0 and 1 cells")
    return x.astype(np.int32)


def _check_cells(name, x):
    """Validate an array of 0/1 cells of any rank >= 1; a JAX tracer passes through unchecked."""
    if is_traced(x):
        return x
    x = as_array(name, x, ndim=None, dtype=float)
    if x.ndim < 1:
        raise ValueError(f"{name} must have at least one axis (the cells), got shape {x.shape}")
    if not np.all((x == 0) | (x == 1)):
        raise ValueError(f"{name} must contain only 0 and 1 cells")
    return x.astype(np.int32)


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
# The fixed-depth (one-shot) learner, vmapped over depths
# ----------------------------------------------------------------------------------------------
def _check_depths(depths, width):
    depths = as_array("depths", depths, ndim=1, dtype=np.int64, min_size=1)
    if depths.min() < 1 or depths.max() > (width - 1) // 2:
        raise ValueError(f"depths must lie in [1, {(width - 1) // 2}] for width {width}, got {depths.tolist()}")
    return jnp.asarray(depths, dtype=jnp.int32)


def train_oneshot(key, depths, *, width: int = 33, hidden: int = 128, layers: int = 2,
                  steps: int = 1500, batch: int = 256, learning_rate: float = 1e-3, rule: int = 110):
    """Train one fixed-depth MLP per serial depth ``L`` to predict ``y_L(x)`` from ``x`` in one pass.

    All models train at once: :func:`paperlib.models.training.train` is ``vmap``-ed over ``depths`` (one
    compiled program). Every step draws a fresh minibatch of uniform inputs.

    Parameters
    ----------
    key : jax.random key
    depths : array of int, shape (n_L,)
        Serial depths, each in ``[1, (width - 1) // 2]``.
    width : int, default 33
        Input width ``W``.
    hidden, layers : int
        Hidden width and number of hidden layers (architecture ``W -> hidden x layers -> 1``).
    steps, batch : int
    learning_rate : float

    Returns
    -------
    params : list of (W, b), each with a leading axis of length n_L
    losses : jax.Array, shape (n_L, steps)

    Raises
    ------
    ValueError
        If ``width`` is even, a depth is out of range, a size is not a positive integer, or
        ``learning_rate <= 0``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> params, losses = train_oneshot(jax.random.key(0), np.array([1, 2]), width=5, hidden=2,
    ...                                layers=1, steps=2, batch=2)
    >>> losses.shape, params[0][0].shape
    ((2, 2), (2, 5, 2))
    """
    key = check_key("key", key)
    return _train_vmapped(key, depths, "oneshot", width=width, hidden=hidden, layers=layers,
                          steps=steps, batch=batch, learning_rate=learning_rate, rule=rule)


def oneshot_logits(params, x):
    """Logit of ``P(y = 1 | x)`` from a one-shot MLP; ``x`` of {0,1}, shape (B, W) -> (B,).

    Raises
    ------
    ValueError
        If ``x`` is not a 2-D array of 0/1 cells (not checked on a JAX tracer, inside ``jit``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> params = [(rng.standard_normal((5, 4)), np.zeros(4)), (rng.standard_normal((4, 1)), np.zeros(1))]
    >>> logits = oneshot_logits(params, np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]]))
    >>> np.round(np.asarray(logits, dtype=float), 3).tolist()
    [0.0, -0.128]
    """
    if not is_traced(x):
        x = _check_bits(x)
    return mlp_apply(params, 2.0 * jnp.asarray(x, jnp.float32) - 1.0)[..., 0]


def oneshot_flops(*, width: int = 33, hidden: int = 128, layers: int = 2) -> int:
    """FLOPs per example of one forward pass of the one-shot MLP (plus the final threshold).

    Raises
    ------
    ValueError
        If ``width``, ``hidden`` or ``layers`` is not a positive integer.

    Examples
    --------
    >>> oneshot_flops(width=5, hidden=4, layers=1)
    58
    """
    width, hidden, layers = (check_int(nm, v, minimum=1) for nm, v in
                             (("width", width), ("hidden", hidden), ("layers", layers)))
    return mlp_flops((width,) + (hidden,) * layers + (1,), output_nonlinearity=True)


# ----------------------------------------------------------------------------------------------
# The diffusion learner on the same backbone
# ----------------------------------------------------------------------------------------------
def denoise(params, y, sigma, x):
    """Denoiser ``D(y_sigma, sigma, x) = tanh(MLP([2x-1, y/sqrt(1+sigma^2), log(sigma)/3]))``.

    An x_0-predicting denoiser of the scalar output token (VE noising ``y_sigma = y_0 + sigma eps``,
    ``y_0 = 2y - 1``), conditioned on the clean input tokens, as in the paper's Fig. "diffusion
    architecture" (Sec. 4). Shapes: ``y`` (B,), ``sigma`` scalar or (B,), ``x`` (B, W) -> (B,).

    Raises
    ------
    ValueError
        If ``y`` is not a finite 1-D array, ``sigma`` is not positive and finite, or ``x`` is not a
        2-D array of 0/1 cells with one row per entry of ``y`` (arguments that are JAX tracers,
        inside ``jit``, are not checked).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> params = [(rng.standard_normal((7, 4)), np.zeros(4)), (rng.standard_normal((4, 1)), np.zeros(1))]
    >>> x = np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]])
    >>> np.round(np.asarray(denoise(params, np.array([0.5, -1.0]), 0.5, x), dtype=float), 3).tolist()
    [0.0, -0.969]
    """
    # validate concrete arguments (a JAX tracer inside jit passes unchecked), then compute on the
    # arguments as given, so that their dtypes are kept
    y_shape = jnp.shape(y) if is_traced(y) else as_array("y", y, ndim=1).shape
    if not is_traced(sigma):
        s = as_array("sigma", sigma, ndim=(0, 1))
        if s.ndim == 0:
            check_real("sigma", s[()], minimum=0.0, strict_min=True)
        elif np.any(s <= 0) or s.shape != y_shape:
            raise ValueError(f"sigma must be positive, a scalar or of the shape of y {y_shape}, "
                             f"got shape {s.shape}")
    if not is_traced(x):
        n_rows = _check_bits(x).shape[0]
        if n_rows != y_shape[0]:
            raise ValueError(f"x must have one row per entry of y ({y_shape[0]}), got {n_rows} rows")
    y = jnp.asarray(y)
    x = 2.0 * jnp.asarray(x, jnp.float32) - 1.0
    sigma = jnp.broadcast_to(sigma, y.shape)
    h = jnp.concatenate([x, (y / jnp.sqrt(1.0 + sigma**2))[:, None], (jnp.log(sigma) / 3.0)[:, None]], axis=-1)
    return jnp.tanh(mlp_apply(params, h)[:, 0])


def train_denoiser(key, depths, *, width: int = 33, hidden: int = 128, layers: int = 2,
                   steps: int = 1500, batch: int = 256, learning_rate: float = 1e-3,
                   sigma_min: float = 0.01, sigma_max: float = 20.0, rule: int = 110):
    """Train one diffusion denoiser per serial depth (vmapped), same backbone as :func:`train_oneshot`.

    Loss: mean squared error of :func:`denoise` against ``y_0 = 2 y_L(x) - 1`` with
    ``log sigma ~ U[log sigma_min, log sigma_max]`` (denoising score matching in x_0 form).

    Returns
    -------
    params : list of (W, b), each with a leading axis of length n_L
    losses : jax.Array, shape (n_L, steps)

    Raises
    ------
    ValueError
        As :func:`train_oneshot`, and if ``not 0 < sigma_min < sigma_max``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> params, losses = train_denoiser(jax.random.key(1), np.array([1, 2]), width=5, hidden=2,
    ...                                 layers=1, steps=2, batch=2)
    >>> losses.shape, params[0][0].shape
    ((2, 2), (2, 7, 2))
    """
    key = check_key("key", key)
    check_real("sigma_min", sigma_min, minimum=0.0, strict_min=True)
    check_real("sigma_max", sigma_max, minimum=sigma_min, strict_min=True)
    return _train_vmapped(key, depths, "diffusion", width=width, hidden=hidden, layers=layers,
                          steps=steps, batch=batch, learning_rate=learning_rate, rule=rule,
                          sigma_min=sigma_min, sigma_max=sigma_max)


def _train_vmapped(key, depths, kind, *, width, hidden, layers, steps, batch, learning_rate, rule,
                   sigma_min=0.01, sigma_max=20.0):
    width = check_int("width", width, minimum=3)
    if width % 2 == 0:
        raise ValueError(f"width must be odd, got {width}")
    depths = _check_depths(depths, width)
    for nm, v in (("hidden", hidden), ("layers", layers), ("batch", batch)):
        check_int(nm, v, minimum=1)
    check_int("steps", steps, minimum=1)
    check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    rule_table(rule)  # validates rule
    return _train_vmapped_jit(key, depths, kind, width, hidden, layers, steps, batch,
                              float(learning_rate), rule, float(sigma_min), float(sigma_max))


@partial(jax.jit, static_argnums=(2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
def _train_vmapped_jit(key, depths, kind, width, hidden, layers, steps, batch, lr, rule, s_min, s_max):
    table = jnp.asarray(rule_table(rule))
    d_max = (width - 1) // 2
    n_in = width + (2 if kind == "diffusion" else 0)
    sizes = (n_in,) + (hidden,) * layers + (1,)
    opt = optax.adam(lr)

    def one_model(L, k_init, k_train):

        def loss_fn(p, kk):
            kx, ks, ke = jax.random.split(kk, 3)
            x = jax.random.bernoulli(kx, 0.5, (batch, width)).astype(jnp.int32)
            y = _centre_trajectory(x, d_max, table)[:, L - 1]
            if kind == "oneshot":
                return optax.sigmoid_binary_cross_entropy(oneshot_logits(p, x), y).mean()
            y0 = 2.0 * y - 1.0
            sigma = jnp.exp(jax.random.uniform(ks, (batch,), minval=jnp.log(s_min), maxval=jnp.log(s_max)))
            y_noisy = y0 + sigma * jax.random.normal(ke, (batch,))
            return jnp.mean((denoise(p, y_noisy, sigma, x) - y0) ** 2)

        res = train(loss_fn, mlp_init(k_init, sizes), opt, steps=steps, key=k_train)
        return res.params, res.losses

    # Different initialisations per depth, one shared stream of training inputs: the stream's key is
    # not batched, so vmap draws the inputs and runs the CA once per step for all depths.
    k_init, k_data = jax.random.split(key)
    init_keys = jax.random.split(k_init, depths.shape[0])
    return jax.vmap(one_model, in_axes=(0, 0, None))(depths, init_keys, k_data)


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
