"""The task of :mod:`paperlib.complexity.serial`: the Rule 110 automaton and its light-cone labels.

This private module holds the data side of the serial-problems experiment: the rule's lookup table
and its exact one-step MLP (:func:`rule_table`, :func:`exact_rule_params`), synchronous updates and
centre trajectories (:func:`ca_step`, :func:`centre_trajectory`), the label ``y_L(x)``
(:func:`light_cone_label`), random labelled batches (:func:`make_batch`), and the validators of cell
arrays and depths shared by the learners. Everything here is re-exported by
:mod:`paperlib.complexity.serial`, which is where it is documented and should be imported from.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_int, check_key, check_real, is_traced
from ..models.mlp import mlp_apply  # noqa: F401  (the example of exact_rule_params calls it)

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


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
# Validation of serial depths (shared by the sequential and the fixed-depth learners)
# ----------------------------------------------------------------------------------------------
def _check_depths(depths, width):
    depths = as_array("depths", depths, ndim=1, dtype=np.int64, min_size=1)
    if depths.min() < 1 or depths.max() > (width - 1) // 2:
        raise ValueError(f"depths must lie in [1, {(width - 1) // 2}] for width {width}, got {depths.tolist()}")
    return jnp.asarray(depths, dtype=jnp.int32)
