"""Controls for the chapter *inherently_serial_problems*: end-to-end sequential model, XLA FLOP counts.

Companion of :mod:`paperlib.complexity.serial` (the Rule 110 task and the three main learners). The sequential
model of :func:`paperlib.complexity.serial.train_local_rule` learns the one-step rule from *intermediate*
supervision (single CA steps, the analogue of chain-of-thought data). That mixes two things: serial
depth (the model applies its step ``L`` times) and supervision (it is told what each step should
output). :func:`train_serial_end_to_end` separates them: the same weight-tied ``3 -> hidden -> 1``
step, applied ``L`` times, is trained only on the final label ``y_L(x)``.

:func:`oneshot_learning_curve` trains the one-shot MLP of :func:`paperlib.complexity.serial.train_oneshot` and
records its held-out accuracy every ``eval_every`` steps, on any elementary rule: the training budget a
fixed-depth learner needs at each depth, on Rule 110 and on a parallel control such as Rule 90.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from paperlib.core._validation import as_array, check_int, check_key, check_real
from paperlib.models.mlp import mlp_apply, mlp_init
from paperlib.complexity.serial import _centre_trajectory, _check_depths, oneshot_logits, rule_table
from paperlib.models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["soft_rollout", "train_serial_end_to_end", "oneshot_learning_curve", "xla_flop_counts"]


def _soft_rollout(params, rows, n_steps):
    # Weight-tied soft steps on a fixed-width row padded with zeros at both ends (one lax.scan, one
    # compiled step). Padding corrupts the cells within t of an edge after t steps, so the centre
    # after n_steps <= (w - 1) / 2 steps is the exact soft rollout of its light cone.
    c = rows.shape[-1] // 2

    def step(row, _):
        padded = jnp.pad(row, [(0, 0)] * (row.ndim - 1) + [(1, 1)])
        nb = jnp.stack([padded[..., :-2], padded[..., 1:-1], padded[..., 2:]], axis=-1)
        logit = mlp_apply(params, 2.0 * nb - 1.0)[..., 0]
        return jax.nn.sigmoid(logit), logit[..., c]

    _, centres = jax.lax.scan(step, rows, None, length=n_steps, unroll=True)
    return jnp.moveaxis(centres, 0, -1)


def soft_rollout(params, x):
    """Centre logits of the soft, weight-tied rollout after ``1, 2, ..., (W - 1) / 2`` steps.

    Each step replaces a row of ``w`` cells by the ``w - 2`` values
    ``sigmoid(g(2 r_{i-1} - 1, 2 r_i - 1, 2 r_{i+1} - 1))``, where ``g`` is the one-step MLP. With a
    hard threshold in place of the sigmoid this is :func:`paperlib.complexity.serial.serial_predict` run on the
    whole row; the centre cell after ``L`` steps depends only on the light cone of width ``2L + 1``.

    Parameters
    ----------
    params : list of (W, b)
        A ``3 -> hidden -> 1`` MLP (:func:`paperlib.models.mlp.mlp_init`).
    x : array of {0, 1}, shape (B, W), W odd and >= 3

    Returns
    -------
    jax.Array, shape (B, (W - 1) // 2)
        ``out[:, L - 1]`` is the logit of the centre cell after ``L`` soft steps.

    Raises
    ------
    ValueError
        If ``x`` is not a 2-D array of 0/1 cells with an odd number (at least 3) of columns.

    Examples
    --------
    >>> params = mlp_init(jax.random.key(0), [3, 4, 1])
    >>> soft_rollout(params, np.array([[0, 1, 1, 0, 1], [1, 1, 0, 0, 0]])).shape
    (2, 2)
    """
    x = as_array("x", x, ndim=2, dtype=float)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("x must contain only 0 and 1 cells")
    if x.shape[1] < 3 or x.shape[1] % 2 == 0:
        raise ValueError(f"x must have an odd number (>= 3) of columns, got shape {x.shape}")
    return _soft_rollout(params, jnp.asarray(x, jnp.float32), (x.shape[1] - 1) // 2)


def train_serial_end_to_end(key, L: int, *, n_models: int = 2, hidden: int = 16, steps: int = 1500,
                            batch: int = 256, learning_rate: float = 1e-2, rule: int = 110):
    """Train the weight-tied sequential model on the final label ``y_L(x)`` only.

    The model is the one-step MLP ``g: {+-1}^3 -> logit`` of :func:`paperlib.complexity.serial.train_local_rule`,
    rolled out ``L`` times on the light cone (``2L + 1`` cells) with a sigmoid between steps
    (:func:`soft_rollout`); the loss is the logistic loss of the centre logit after ``L`` steps
    against ``y_L(x)``. No intermediate cell is ever supervised. ``n_models`` independent
    initialisations train at once (``vmap``, one shared stream of fresh uniform inputs), each through
    :func:`paperlib.models.training.train` (Adam). At test time the trained step is applied with a hard
    threshold, by :func:`paperlib.complexity.serial.serial_predict`.

    Parameters
    ----------
    key : jax.random key
    L : int
        Serial depth, ``1 <= L <= 16``. Each step updates the ``2L + 1`` cells of the zero-padded
        cone, so the training cost per example is ``L (2L + 1)`` cell updates.
    n_models : int, default 2
        Independent initialisations (restarts).
    hidden : int, default 16
    steps, batch : int
    learning_rate : float, default 1e-2

    Returns
    -------
    params : list of (W, b), each with a leading axis of length n_models
    losses : jax.Array, shape (n_models, steps)

    Raises
    ------
    ValueError
        If ``L`` is out of range, a size is not a positive integer, or ``learning_rate <= 0``.
        Also if ``key`` is not a JAX PRNG key.

    Notes
    -----
    Training through a sigmoid and testing with a threshold is the usual relaxation of a discrete
    recurrence; a straight-through estimator is an alternative we did not try.

    Examples
    --------
    >>> params, losses = train_serial_end_to_end(jax.random.key(0), 2, n_models=2, hidden=4,
    ...                                          steps=3, batch=8)
    >>> losses.shape, params[0][0].shape
    ((2, 3), (2, 3, 4))
    """
    key = check_key("key", key)
    L = check_int("L", L, minimum=1, maximum=16)
    n_models = check_int("n_models", n_models, minimum=1)
    hidden = check_int("hidden", hidden, minimum=1)
    steps = check_int("steps", steps, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    rule_table(rule)  # validates rule
    return _train_e2e(key, L, n_models, hidden, steps, batch, float(learning_rate), rule)


@partial(jax.jit, static_argnums=(1, 2, 3, 4, 5, 6, 7))
def _train_e2e(key, L, n_models, hidden, steps, batch, lr, rule):
    table = jnp.asarray(rule_table(rule))

    def one_model(k_init, k_train):
        def loss_fn(p, kk):
            cone = jax.random.bernoulli(kk, 0.5, (batch, 2 * L + 1)).astype(jnp.int32)
            y = _centre_trajectory(cone, L, table)[:, L - 1]
            logit = _soft_rollout(p, cone.astype(jnp.float32), L)[:, L - 1]
            return optax.sigmoid_binary_cross_entropy(logit, y).mean()

        res = train(loss_fn, mlp_init(k_init, (3, hidden, 1)), optax.adam(lr), steps=steps, key=k_train)
        return res.params, res.losses

    k_init, k_data = jax.random.split(key)
    return jax.vmap(one_model, in_axes=(0, None))(jax.random.split(k_init, n_models), k_data)


def oneshot_learning_curve(key, depths, x_eval, *, rules=110, hidden: int = 128, layers: int = 2,
                           steps: int = 1500, batch: int = 256, learning_rate: float = 1e-3,
                           eval_every: int = 100):
    """Train one-shot MLPs (one per depth) and record their held-out accuracy during training.

    The models, the data stream and the optimiser are those of :func:`paperlib.complexity.serial.train_oneshot`
    (same keys, so the same final parameters): an MLP ``W -> hidden x layers -> 1`` per depth ``L``,
    trained with Adam on fresh uniform inputs labelled ``y_L(x)`` under its elementary rule (one per
    model, so a task and its control train in one program on one shared stream of inputs).
    After every ``eval_every`` steps each model's accuracy ``mean(1[logit > 0] == y_L(x))`` on the
    fixed inputs ``x_eval`` is recorded. One compiled program: ``lax.scan`` over chunks of
    ``eval_every`` steps inside ``vmap`` over depths.

    Parameters
    ----------
    key : jax.random key
    depths : array of int, shape (n_L,)
        Depths, each in ``[1, (W - 1) // 2]``.
    x_eval : array of {0, 1}, shape (B, W), W odd
        Held-out inputs; their labels are computed here, under each model's rule.
    rules : int or array of int, shape (n_L,), default 110
        Wolfram rule number of each model (one int: the same for all), each in ``[0, 255]``. Rule 90:
        the centre after ``L`` steps is the parity of ``2 ** popcount(L)`` input cells, a parallel
        problem.
    hidden, layers : int, default 128, 2
    steps : int, default 1500
        Training steps, a multiple of ``eval_every``.
    batch : int, default 256
    learning_rate : float, default 1e-3
    eval_every : int, default 100

    Returns
    -------
    params : list of (W, b), each with a leading axis of length n_L
    losses : jax.Array, shape (n_L, steps)
    accuracy : jax.Array, shape (n_L, steps // eval_every)
        ``accuracy[j, i]`` is the accuracy on ``x_eval`` after ``(i + 1) * eval_every`` steps.

    Raises
    ------
    ValueError
        If ``x_eval`` is not a 2-D array of 0/1 cells with an odd number (>= 3) of columns, a depth is
        out of range, a size is not a positive integer, ``steps`` is not a multiple of ``eval_every``,
        ``learning_rate <= 0``, or ``rules`` is not one integer or one per depth, each in ``[0, 255]``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x = np.random.default_rng(0).integers(0, 2, size=(16, 5))
    >>> params, losses, acc = oneshot_learning_curve(jax.random.key(0), np.array([1, 2]), x, hidden=4,
    ...                                              layers=1, steps=4, batch=8, eval_every=2)
    >>> losses.shape, acc.shape
    ((2, 4), (2, 2))
    """
    key = check_key("key", key)
    x_eval = as_array("x_eval", x_eval, ndim=2, dtype=float)
    if not np.all((x_eval == 0) | (x_eval == 1)):
        raise ValueError("x_eval must contain only 0 and 1 cells")
    x_eval = x_eval.astype(np.int32)
    width = x_eval.shape[1]
    if width < 3 or width % 2 == 0:
        raise ValueError(f"x_eval must have an odd number (>= 3) of columns, got shape {x_eval.shape}")
    depths = _check_depths(depths, width)
    hidden = check_int("hidden", hidden, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    eval_every = check_int("eval_every", eval_every, minimum=1)
    steps = check_int("steps", steps, minimum=eval_every)
    if steps % eval_every:
        raise ValueError(f"steps ({steps}) must be a multiple of eval_every ({eval_every})")
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    rules = as_array("rules", rules, ndim=(0, 1), dtype=np.int64)
    if rules.ndim == 1 and rules.shape != depths.shape:
        raise ValueError(f"rules must be one integer or one per depth {tuple(depths.shape)}, got shape {rules.shape}")
    if np.any((rules < 0) | (rules > 255)):
        raise ValueError(f"rules must lie in [0, 255], got {rules.tolist()}")
    rules = np.broadcast_to(rules, depths.shape)
    rule_set = tuple(sorted({int(r) for r in rules}))
    rule_idx = jnp.asarray([rule_set.index(int(r)) for r in rules], dtype=jnp.int32)
    return _curve_jit(key, depths, jnp.asarray(x_eval), rule_idx, rule_set, hidden, layers, steps, batch,
                      float(learning_rate), eval_every)


@partial(jax.jit, static_argnums=(4, 5, 6, 7, 8, 9, 10))
def _curve_jit(key, depths, x_eval, rule_idx, rule_set, hidden, layers, steps, batch, lr, eval_every):
    width = x_eval.shape[1]
    d_max = (width - 1) // 2
    sizes = (width,) + (hidden,) * layers + (1,)
    opt = optax.adam(lr)
    tables = [jnp.asarray(rule_table(r)) for r in rule_set]

    def labels(x):
        # the automaton runs once per distinct rule on the shared inputs; model j reads the centre
        # after depths[j] steps under its rule: shape (n_L, B)
        every = jnp.stack([_centre_trajectory(x, d_max, t) for t in tables])   # (n_rules, B, d_max)
        return every[rule_idx, :, depths - 1]

    y_eval = labels(x_eval)

    def model_step(p, s, x, y):
        # one Adam step of one model: the loss of paperlib.complexity.serial.train_oneshot
        loss, g = jax.value_and_grad(lambda q: optax.sigmoid_binary_cross_entropy(oneshot_logits(q, x), y).mean())(p)
        upd, s = opt.update(g, s, p)
        return optax.apply_updates(p, upd), s, loss

    def step(carry, kk):
        kx, _, _ = jax.random.split(kk, 3)          # the key split of train_oneshot's loss
        x = jax.random.bernoulli(kx, 0.5, (batch, width)).astype(jnp.int32)
        p, s, loss = jax.vmap(model_step, in_axes=(0, 0, None, 0))(*carry, x, labels(x))
        return (p, s), loss

    def chunk(carry, keys):
        carry, losses = jax.lax.scan(step, carry, keys)
        acc = jax.vmap(lambda p, y: jnp.mean((oneshot_logits(p, x_eval) > 0) == y))(carry[0], y_eval)
        return carry, (losses, acc)

    # keys as in paperlib.complexity.serial.train_oneshot: one initialisation per model, one shared input stream
    k_init, k_data = jax.random.split(key)
    p0 = jax.vmap(lambda k: mlp_init(k, sizes))(jax.random.split(k_init, depths.shape[0]))
    step_keys = jax.random.split(k_data, steps).reshape(steps // eval_every, eval_every)
    (params, _), (losses, acc) = jax.lax.scan(chunk, (p0, jax.vmap(opt.init)(p0)), step_keys)
    return params, jnp.moveaxis(losses, -1, 0).reshape(depths.shape[0], steps), acc.T

def xla_flop_counts(serial_params, oneshot_params, *, L: int = 16, width: int = 33):
    """FLOPs per example of the sequential and one-shot models, as XLA's cost analysis counts them.

    Compiles :func:`paperlib.complexity.serial.serial_predict` at depth ``L`` and
    :func:`paperlib.complexity.serial.oneshot_logits` for one input row and reads ``cost_analysis()["flops"]``
    of each compiled program: an independent check of the analytic counts
    :func:`paperlib.complexity.serial.serial_flops` and :func:`paperlib.complexity.serial.oneshot_flops`. XLA also counts
    the encoding ``2x - 1``, which the sequential model repeats for every neighbourhood.

    Parameters
    ----------
    serial_params : list of (W, b)
        A ``3 -> hidden -> 1`` one-step MLP.
    oneshot_params : list of (W, b)
        A one-shot MLP with input size ``width`` (no leading depth axis).
    L : int, default 16
        Serial depth, ``1 <= L <= (width - 1) // 2``.
    width : int, default 33

    Returns
    -------
    tuple of float
        ``(serial_flops, oneshot_flops)`` per example.

    Raises
    ------
    ValueError
        If ``width`` is not an odd integer >= 3 or ``L`` is out of range.

    Examples
    --------
    >>> ps = mlp_init(jax.random.key(0), [3, 16, 1])
    >>> po = mlp_init(jax.random.key(1), [5, 8, 1])
    >>> s, o = xla_flop_counts(ps, po, L=2, width=5)
    >>> s > 0 and o > 0
    True
    """
    from paperlib.complexity.serial import _serial_predict, oneshot_logits

    width = check_int("width", width, minimum=3)
    if width % 2 == 0:
        raise ValueError(f"width must be odd, got {width}")
    L = check_int("L", L, minimum=1, maximum=(width - 1) // 2)

    def flops(compiled):
        ca = compiled.cost_analysis()
        return float((ca[0] if isinstance(ca, list) else ca)["flops"])

    cone = jax.ShapeDtypeStruct((1, 2 * L + 1), jnp.int32)
    row = jax.ShapeDtypeStruct((1, width), jnp.int32)
    s = flops(_serial_predict.lower(serial_params, cone, L).compile())
    o = flops(jax.jit(oneshot_logits).lower(oneshot_params, row).compile())
    return s, o
