"""Small ReLU networks trained by SGD under two-stage batch schedules, in plain numpy.

The stand-in for the LLM pre-training runs of Wang et al. (ICLR 2026) in the chapter on batch-size
scheduling: a one-hidden-layer ReLU network, many paired runs stacked along a leading axis, trained by
minibatch SGD with fresh draws from a finite population and a batch size that switches once.

The book's shared network, :mod:`paperlib.models.mlp`, is written in JAX; this module repeats its
initialisation in numpy with the gradient written out, because at this size (a 64-32-10 network,
batches of 8 to 64) a step is a handful of tiny matrix products and numpy runs them without JAX's
compilation step, which would dominate the chapter's runtime. ``tests/test_numpy_mlp.py`` checks the
gradient against central finite differences.

References: J. Wang, B. Li, Z. Zhou, M. Wang, Y. Sun, J. Zhang, X. Cai, L. Wu, *Fast Catch-Up, Late
Switching: Optimal Batch Size Scheduling via Functional Scaling Laws*, ICLR 2026, arXiv:2602.14208
(its LLM experiments with a constant learning rate and batch switches).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_memory, check_real
from .functional_scaling import _one_blas_thread

__all__ = ["MLPSwitchRuns", "mlp_init_numpy", "mlp_sgd_step", "mlp_switch_runs"]


class MLPSwitchRuns(NamedTuple):
    """Output of :func:`mlp_switch_runs`.

    Attributes
    ----------
    fractions : ndarray, shape (F,)
        Switch points ``P / D``.
    final_loss : ndarray, shape (F, R)
        Population loss (mean cross-entropy over all of ``X``) at the end of each run.
    steps : list of ndarray
        Per fraction, the step counts at which the curve was recorded.
    curves : list of ndarray
        Per fraction, shape (R, len(steps)): loss on a fixed evaluation subset along the run.
    """

    fractions: np.ndarray
    final_loss: np.ndarray
    steps: list
    curves: list


def mlp_init_numpy(d_in, width, n_out, runs, *, rng):
    """He-initialised one-hidden-layer ReLU MLPs, ``runs`` of them stacked: ``(W1, b1, W2, b2)``.

    Shapes ``(runs, d_in, width)``, ``(runs, width)``, ``(runs, width, n_out)``, ``(runs, n_out)``;
    ``W ~ N(0, 2 / fan_in)``, biases zero (the initialisation of :func:`paperlib.models.mlp.mlp_init`).

    Raises
    ------
    ValueError
        If a size is not a positive integer or ``rng`` is not a numpy Generator, or the weights of
        ``runs`` networks would exceed ``paperlib.core._validation.memory_limit`` (8 GiB by default).

    Examples
    --------
    >>> [a.shape for a in mlp_init_numpy(3, 4, 2, 5, rng=np.random.default_rng(0))]
    [(5, 3, 4), (5, 4), (5, 4, 2), (5, 2)]
    """
    d_in = check_int("d_in", d_in, minimum=1)
    width = check_int("width", width, minimum=1)
    n_out = check_int("n_out", n_out, minimum=1)
    runs = check_int("runs", runs, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    check_memory("runs", 8 * runs * (d_in * width + width + width * n_out + n_out),
                 what=f"float64 weights of {runs} network(s) of width {width}")
    return (rng.standard_normal((runs, d_in, width)) * np.sqrt(2.0 / d_in), np.zeros((runs, width)),
            rng.standard_normal((runs, width, n_out)) * np.sqrt(2.0 / width), np.zeros((runs, n_out)))


def _mlp_forward(params, xb):
    W1, b1, W2, b2 = params
    z1 = xb @ W1 + b1[:, None, :]
    a1 = np.maximum(z1, 0.0)
    logits = a1 @ W2 + b2[:, None, :]
    return z1, a1, logits


def _mlp_loss(params, X, y):
    """Mean cross-entropy of every run on the same data ``X (N, d)``, labels ``y (N,)``: shape (runs,)."""
    _, _, logits = _mlp_forward(params, np.broadcast_to(X, (params[0].shape[0],) + X.shape))
    logits = logits - logits.max(-1, keepdims=True)
    logz = np.log(np.exp(logits).sum(-1))
    return np.mean(logz - np.take_along_axis(logits, y[None, :, None], -1)[..., 0], axis=1)


def mlp_sgd_step(params, xb, yb, lr):
    """One SGD step on the mean cross-entropy of a minibatch, per run, with hand-written backprop.

    Parameters
    ----------
    params : tuple of ndarray
        ``(W1, b1, W2, b2)`` as from :func:`mlp_init_numpy`.
    xb : ndarray, shape (runs, B, d)
        Each run's minibatch inputs.
    yb : ndarray of int, shape (runs, B)
        Labels.
    lr : float
        Learning rate.

    Returns
    -------
    tuple of ndarray
        Updated parameters.

    Examples
    --------
    Raises
    ------
    ValueError
        If the parameter shapes disagree with each other or with ``xb``, labels are out of range or
        not integers, or ``lr`` is not positive.

    Examples
    --------
    >>> p = mlp_init_numpy(3, 4, 2, 1, rng=np.random.default_rng(0))
    >>> [a.shape for a in mlp_sgd_step(p, np.ones((1, 5, 3)), np.zeros((1, 5), int), 0.1)]
    [(1, 3, 4), (1, 4), (1, 4, 2), (1, 2)]
    """
    if not isinstance(params, (tuple, list)) or len(params) != 4:
        raise ValueError("params must be the tuple (W1, b1, W2, b2) of mlp_init_numpy")
    W1 = as_array("params", params[0], ndim=3)
    runs, d, h = W1.shape
    b1 = as_array("params", params[1], shape=(runs, h))
    W2 = as_array("params", params[2], ndim=3, shape=(runs, h, None))
    b2 = as_array("params", params[3], shape=(runs, W2.shape[2]))
    xb = as_array("xb", xb, ndim=3, shape=(runs, None, d), min_size=1)
    yb = as_array("yb", yb, ndim=2, shape=(runs, xb.shape[1]))
    if np.any(yb != np.round(yb)) or np.any(yb < 0) or np.any(yb >= W2.shape[2]):
        raise ValueError(f"yb must hold integer labels in [0, {W2.shape[2]})")
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    return _mlp_sgd_step((W1, b1, W2, b2), xb, yb.astype(int), lr)


def _mlp_sgd_step(params, xb, yb, lr):
    W1, b1, W2, b2 = params
    z1, a1, logits = _mlp_forward(params, xb)
    prob = np.exp(logits - logits.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    np.put_along_axis(prob, yb[..., None], np.take_along_axis(prob, yb[..., None], -1) - 1.0, -1)
    g = prob / xb.shape[1]  # d loss / d logits
    g_z1 = (g @ W2.transpose(0, 2, 1)) * (z1 > 0)
    return (W1 - lr * xb.transpose(0, 2, 1) @ g_z1, b1 - lr * g_z1.sum(1),
            W2 - lr * a1.transpose(0, 2, 1) @ g, b2 - lr * g.sum(1))


def mlp_switch_runs(X, y, *, width, lr, batch_small, batch_large, data, fractions, runs, every, rng,
                    horizon=0, eval_size=256):
    """Train one-hidden-layer MLPs by SGD under two-stage batch schedules at a fixed sample budget.

    Every step draws a fresh minibatch uniformly with replacement from the population ``(X, y)``, so
    the population loss (mean cross-entropy over all of ``X``) plays the role of the pre-training
    loss of one-pass training. The ``runs`` paired runs share their initialisations across schedules;
    schedule ``P / D`` takes ``P / B_1`` steps at ``B_1`` and then ``(D - P) / B_2`` steps at ``B_2``
    (each rounded down to a multiple of ``every``), with a constant learning rate. With ``horizon``,
    a run that has spent its budget before step ``horizon`` continues at ``B_2`` up to it, so that
    the curves of all schedules can be compared at equal step counts (``final_loss`` is still
    taken when the budget is spent).

    Parameters
    ----------
    X : array_like, shape (N, d)
        Population inputs.
    y : array_like of int, shape (N,)
        Class labels ``0 .. C-1``.
    width : int
        Hidden width.
    lr : float
        Constant learning rate, ``> 0``.
    batch_small, batch_large : int
        ``B_1 < B_2``.
    data : int
        Budget ``D`` of drawn samples.
    fractions : array_like, shape (F,)
        Switch points ``P / D`` in [0, 1].
    runs : int
        Paired runs (initialisations), ``>= 2``.
    every : int
        Steps between two records of the loss on a fixed random evaluation subset.
    rng : numpy.random.Generator
        Source of all randomness (keyword-only).
    horizon : int, default 0
        Continue every run at ``B_2`` up to this many steps (0: stop at the budget).
    eval_size : int, default 256
        Size of the evaluation subset for the curves (``final_loss`` uses all of ``X``).

    Returns
    -------
    MLPSwitchRuns

    Raises
    ------
    ValueError
        Bad shapes, sizes or values.

    Notes
    -----
    Plain numpy with the gradient written out (tested against finite differences): at this size a step is a
    handful of tiny matrix products, and numpy runs them without a compilation step. The learning rate
    is constant, as in the paper's BSS experiments; there are no momentum or Adam states.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> X, y = load_digits(return_X_y=True)
    >>> out = mlp_switch_runs(X[:200] / 16, y[:200], width=8, lr=0.1, batch_small=4, batch_large=16,
    ...                       data=320, fractions=[0.0, 1.0], runs=2, every=4, rng=np.random.default_rng(0))
    >>> out.final_loss.shape
    (2, 2)
    """
    X = as_array("X", X, ndim=2, min_size=1)
    y = as_array("y", y, ndim=1, shape=(X.shape[0],))
    if np.any(y != np.round(y)) or np.any(y < 0):
        raise ValueError("y must hold non-negative integer labels")
    y = y.astype(int)
    width = check_int("width", width, minimum=1)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    b1 = check_int("batch_small", batch_small, minimum=1)
    b2 = check_int("batch_large", batch_large, minimum=b1 + 1)
    data = check_int("data", data, minimum=b2)
    fractions = as_array("fractions", fractions, ndim=1, min_size=1)
    if np.any(fractions < 0) or np.any(fractions > 1):
        raise ValueError("fractions must lie in [0, 1]")
    runs = check_int("runs", runs, minimum=2)
    every = check_int("every", every, minimum=1)
    horizon = check_int("horizon", horizon, minimum=0)
    eval_size = check_int("eval_size", eval_size, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    init = mlp_init_numpy(X.shape[1], width, int(y.max()) + 1, runs, rng=rng)
    sub = rng.choice(X.shape[0], min(eval_size, X.shape[0]), replace=False)
    finals, steps_all, curves_all = [], [], []
    with _one_blas_thread():
        for f, child in zip(fractions, rng.spawn(fractions.size)):
            n1 = int(round(f * data)) // b1 // every * every
            n2 = int(round((1 - f) * data)) // b2 // every * every
            p, losses = init, []
            for k in range(max(n1 + n2, horizon)):
                b = b1 if k < n1 else b2
                idx = child.integers(0, X.shape[0], (runs, b))
                p = _mlp_sgd_step(p, X[idx], y[idx], lr)
                if (k + 1) % every == 0:
                    losses.append(_mlp_loss(p, X[sub], y[sub]))
                if k + 1 == n1 + n2:
                    finals.append(_mlp_loss(p, X, y))
            steps_all.append(every * np.arange(1, len(losses) + 1))
            curves_all.append(np.stack(losses, axis=1) if losses else np.zeros((runs, 0)))
    return MLPSwitchRuns(fractions, np.stack(finals), steps_all, curves_all)
