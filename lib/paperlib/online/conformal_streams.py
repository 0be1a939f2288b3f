r"""Streams for online conformal prediction: synthetic, adaptive, and two scikit-learn data sets.

* :func:`synthetic_stream`: a softmax "classifier" whose margin an oblivious adversary sets (i.i.d.,
  an abrupt shift, or a periodic alternation of easy and hard rounds);
* :func:`reactive_bandit_run`: an adaptive adversary that makes the next round hard whenever the
  learner's set covered, run in one ``lax.scan`` with the bandit learner of
  :func:`paperlib.online.conformal.online_conformal_bandit`;
* :func:`digits_stream`: scikit-learn's bundled digits scored by a fitted logistic regression, made
  non-i.i.d. by pixel noise that grows over time or by a label-sorted order (a laptop-scale stand-in
  for the ImageNet streams of Yang, Kim and Park, 2026);
* :func:`diabetes_residuals`: absolute residuals of a ridge regression on the bundled diabetes data,
  optionally ordered by body-mass index (a stand-in for their covariate-shifted regression data).

Every function takes ``replicates=R`` to return R independent streams stacked on a leading axis.

References
----------
J. Yang, K. Kim, S. Park, "Online Conformal Prediction with Adversarial Semi-bandit Feedback via
Regret Minimization", ICLR 2026, arXiv:2604.17984 (their experiments).
F. Pedregosa et al., "Scikit-learn: Machine learning in Python", JMLR, 2011 (data sets, models).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from . import bandits
from ..core._validation import as_array, check_int, check_probability, check_real
from .conformal import CoverageTable, _check_rng, _graphs

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "synthetic_stream",
    "reactive_bandit_run",
    "DigitsModel",
    "fit_digits_model",
    "digits_stream",
    "diabetes_residuals",
]

_KINDS = ("iid", "shift", "periodic")


def _check_replicates(replicates):
    return 1 if replicates is None else check_int("replicates", replicates, minimum=1)


def _squeeze(replicates, *arrays):
    return arrays if replicates is not None else tuple(a[0] for a in arrays)


def _margins(kind, horizon, easy, hard, iid_margin, period):
    t = np.arange(horizon)
    if kind == "iid":
        return np.full(horizon, iid_margin)
    if kind == "shift":
        return np.where(t < horizon // 2, easy, hard)
    return np.where((t // period) % 2 == 0, easy, hard)


def synthetic_stream(kind, horizon, *, num_classes=10, easy=3.0, hard=0.7, iid_margin=2.0, period=500,
                     replicates=None, rng):
    r"""A softmax classifier's scores on a stream whose difficulty an oblivious adversary sets.

    Round :math:`t`: the label is uniform, logits are :math:`z \sim N(0, I_C)` with a margin
    :math:`M_t` added to the true label's logit, and the scores are :math:`\mathrm{softmax}(z)`.

    Parameters
    ----------
    kind : {"iid", "shift", "periodic"}
        ``iid``: :math:`M_t` = ``iid_margin``; ``shift``: ``easy`` for the first half, ``hard``
        after; ``periodic``: ``easy`` and ``hard`` alternate every ``period`` rounds.
    horizon : int
        Number of rounds :math:`T \ge 1`.
    num_classes : int, default 10
        :math:`C \ge 2`.
    easy, hard, iid_margin : float, default 3.0, 0.7, 2.0
        Margins (logit units).
    period : int, default 500
        Half-period of the periodic stream, in rounds.
    replicates : int, optional
        Number R of independent streams; outputs gain a leading axis R.
    rng : numpy.random.Generator

    Returns
    -------
    probs : ndarray, shape (T, C) or (R, T, C)
    labels : ndarray of int, shape (T,) or (R, T)

    Raises
    ------
    ValueError
        For an unknown ``kind`` or an invalid size, margin or ``rng``.

    Examples
    --------
    >>> probs, labels = synthetic_stream("shift", 4, num_classes=3, rng=np.random.default_rng(0))
    >>> probs.shape, labels.shape
    ((4, 3), (4,))
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    horizon = check_int("horizon", horizon, minimum=1)
    num_classes = check_int("num_classes", num_classes, minimum=2)
    easy = check_real("easy", easy)
    hard = check_real("hard", hard)
    iid_margin = check_real("iid_margin", iid_margin)
    period = check_int("period", period, minimum=1)
    r = _check_replicates(replicates)
    rng = _check_rng(rng)
    labels = rng.integers(num_classes, size=(r, horizon))
    z = rng.standard_normal((r, horizon, num_classes))
    np.put_along_axis(z, labels[..., None], np.take_along_axis(z, labels[..., None], -1)
                      + _margins(kind, horizon, easy, hard, iid_margin, period)[:, None], axis=-1)
    z -= z.max(-1, keepdims=True)
    p = np.exp(z)
    return _squeeze(replicates, p / p.sum(-1, keepdims=True), labels)


def reactive_bandit_run(horizon, grid, *, lam, eta, gamma, beta=0.0, unlock=True, num_classes=10,
                        easy=3.0, hard=0.7, replicates=None, rng):
    r"""EXP3.P over thresholds against an adaptive adversary that reacts to the learner's outcome.

    The stream of :func:`synthetic_stream` with margin :math:`M_t` = ``hard`` if the learner's set
    covered in round :math:`t-1` and ``easy`` if it missed: the adversary makes the next round hard
    whenever the learner succeeded. Labels, logit noise and the learner's uniforms are drawn up front
    (with numpy); the margin, the learner and its feedback run in one ``lax.scan``.

    Parameters
    ----------
    horizon : int
        Number of rounds :math:`T \ge 1`.
    grid : array_like, shape (K,)
        Thresholds (:func:`~paperlib.online.conformal.threshold_grid`).
    lam, eta, gamma, beta, unlock
        As in :func:`~paperlib.online.conformal.online_conformal_bandit` (scalars).
    num_classes : int, default 10
    easy, hard : float, default 3.0 and 0.7
    replicates : int, optional
        With ``R``, run R independent replicates (vectorised); outputs gain a leading axis R.
    rng : numpy.random.Generator

    Returns
    -------
    run : paperlib.online.bandits.BanditRun
        Arms (T,) and probabilities (T, K).
    table : CoverageTable
        The realised stream (misses, sizes and covering counts of every arm), for evaluation.

    Raises
    ------
    ValueError
        For invalid sizes, parameters or rng.

    Examples
    --------
    >>> from paperlib.online.conformal import threshold_grid
    >>> run, tab = reactive_bandit_run(300, threshold_grid(6), lam=0.1, eta=0.1, gamma=0.01,
    ...                                rng=np.random.default_rng(0))
    >>> run.arms.shape, tab.misses.shape
    ((300,), (300, 6))
    """
    horizon = check_int("horizon", horizon, minimum=1)
    grid = as_array("grid", grid, ndim=1, min_size=2)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0) or grid[-1] > 1:
        raise ValueError("grid must increase strictly from 0 within [0, 1]")
    lam = check_real("lam", lam, minimum=0.0)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    gamma = check_probability("gamma", gamma)
    beta = check_real("beta", beta, minimum=0.0)
    if gamma == 0 and beta > 0:
        raise ValueError("gamma must be positive when beta > 0")
    if not isinstance(unlock, bool):
        raise ValueError(f"unlock must be True or False, got {unlock!r}")
    num_classes = check_int("num_classes", num_classes, minimum=2)
    easy = check_real("easy", easy)
    hard = check_real("hard", hard)
    r = 1 if replicates is None else check_int("replicates", replicates, minimum=1)
    rng = _check_rng(rng)
    labels = rng.integers(num_classes, size=(r, horizon))
    noise = rng.standard_normal((r, horizon, num_classes), dtype=np.float32)
    uniforms = rng.random((r, horizon), dtype=np.float32)
    graphs = jnp.asarray(_graphs(grid.size, unlock))
    out = _reactive_batched(jnp.asarray(grid, jnp.float32), graphs, labels, noise, uniforms,
                            lam, eta, gamma, beta, easy, hard)
    if replicates is None:
        out = tuple(o[0] for o in out)
    misses, sizes, ncov = (np.asarray(o) for o in out[2:])
    return bandits.BanditRun(arms=out[0], probs=out[1]), CoverageTable(misses, sizes, ncov, float(num_classes))


def _reactive_impl(grid, graphs, labels, noise, uniforms, lam, eta, gamma, beta, easy, hard):
    k, c = grid.size, noise.shape[-1]
    span = 1.0 + lam

    def step(carry, xs):
        cum, covered_prev = carry
        label, z, u = xs
        z = z + jnp.where(covered_prev, hard, easy) * jax.nn.one_hot(label, c)
        scores = jax.nn.softmax(z)
        misses = scores[label] < grid
        sizes = (scores[None, :] >= grid[:, None]).sum(-1)
        ncov = k - misses.sum()
        gains = 1.0 - (misses + lam * sizes / c) / span
        p = bandits.exp3p_probabilities(cum, eta=eta, gamma=gamma)
        arm = jnp.minimum(jnp.searchsorted(jnp.cumsum(p), u, side="right"), k - 1)
        graph = graphs[ncov]
        q = bandits.observation_probabilities(p, graph)
        cum = cum + bandits.exp3p_gain_estimates(gains, p, graph[arm], q, beta=beta)
        return (cum - cum.max(), ~misses[arm]), (arm, p, misses, sizes, ncov)

    _, out = jax.lax.scan(step, (jnp.zeros(k), jnp.array(False)), (labels, noise, uniforms))
    return out


_reactive_batched = jax.jit(jax.vmap(_reactive_impl, in_axes=(None, None, 0, 0, 0) + (None,) * 6))


class DigitsModel(NamedTuple):
    """A multinomial logistic regression fitted on part of scikit-learn's digits, and the rest.

    Attributes
    ----------
    coef : ndarray, shape (10, 64)
    intercept : ndarray, shape (10,)
    X_pool : ndarray, shape (n, 64)
        Held-out images (pixels scaled to [0, 1]) that streams are drawn from.
    y_pool : ndarray of int, shape (n,)
    """

    coef: np.ndarray
    intercept: np.ndarray
    X_pool: np.ndarray
    y_pool: np.ndarray


def fit_digits_model(*, n_train=600, rng):
    r"""Fit scikit-learn's ``LogisticRegression`` on ``n_train`` random digits; keep the rest as a pool.

    Parameters
    ----------
    n_train : int, default 600
        Training images, in [20, 1700].
    rng : numpy.random.Generator
        Chooses the training split.

    Returns
    -------
    DigitsModel

    Raises
    ------
    ValueError
        If ``n_train`` is out of range or ``rng`` is not a Generator.

    Examples
    --------
    >>> m = fit_digits_model(n_train=300, rng=np.random.default_rng(0))
    >>> m.coef.shape, m.X_pool.shape
    ((10, 64), (1497, 64))
    """
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    n_train = check_int("n_train", n_train, minimum=20, maximum=1700)
    rng = _check_rng(rng)
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    perm = rng.permutation(len(y))
    tr, rest = perm[:n_train], perm[n_train:]
    clf = LogisticRegression(max_iter=2000).fit(X[tr], y[tr])
    return DigitsModel(clf.coef_, clf.intercept_, X[rest], y[rest])


def digits_stream(model, kind, horizon, *, noise_max=0.6, replicates=None, rng):
    r"""Scores of the fitted digits classifier on a stream drawn from the held-out pool.

    Parameters
    ----------
    model : DigitsModel
        From :func:`fit_digits_model`.
    kind : {"iid", "noise", "sorted"}
        ``iid``: images drawn with replacement; ``noise``: the same, plus Gaussian pixel noise whose
        standard deviation grows linearly from 0 to ``noise_max`` over the stream; ``sorted``: the
        i.i.d. draw reordered by label (all 0s, then all 1s, ...).
    horizon : int
        Number of rounds :math:`T \ge 1`.
    noise_max : float, default 0.6
        Final noise level (pixels are in [0, 1]).
    replicates : int, optional
        Number R of independent streams; outputs gain a leading axis R.
    rng : numpy.random.Generator

    Returns
    -------
    probs : ndarray, shape (T, 10) or (R, T, 10)
    labels : ndarray of int, shape (T,) or (R, T)

    Raises
    ------
    ValueError
        For an unknown ``kind`` or invalid arguments.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> m = fit_digits_model(n_train=300, rng=rng)
    >>> probs, labels = digits_stream(m, "sorted", 50, rng=rng)
    >>> bool(np.all(np.diff(labels) >= 0))
    True
    """
    if not isinstance(model, DigitsModel):
        raise ValueError(f"model must be a DigitsModel (from fit_digits_model), got {type(model).__name__}")
    if kind not in ("iid", "noise", "sorted"):
        raise ValueError(f"kind must be one of ('iid', 'noise', 'sorted'), got {kind!r}")
    horizon = check_int("horizon", horizon, minimum=1)
    noise_max = check_real("noise_max", noise_max, minimum=0.0)
    r = _check_replicates(replicates)
    rng = _check_rng(rng)
    idx = rng.integers(len(model.y_pool), size=(r, horizon))
    if kind == "sorted":
        idx = np.take_along_axis(idx, np.argsort(model.y_pool[idx], axis=-1, kind="stable"), axis=-1)
    X = model.X_pool[idx]
    if kind == "noise":
        X = X + noise_max * (np.arange(horizon) / horizon)[:, None] * rng.standard_normal(X.shape)
    z = X @ model.coef.T + model.intercept
    z -= z.max(-1, keepdims=True)
    p = np.exp(z)
    return _squeeze(replicates, p / p.sum(-1, keepdims=True), model.y_pool[idx])


def diabetes_residuals(kind, horizon, *, n_train=150, alpha_ridge=1.0, replicates=None, rng):
    r"""Absolute residuals of a ridge regression on scikit-learn's bundled diabetes data, as a stream.

    Ridge regression (scikit-learn, penalty ``alpha_ridge``) is fitted on ``n_train`` random rows; the
    stream draws the remaining rows with replacement. Each replicate refits on its own random split.

    Parameters
    ----------
    kind : {"iid", "sorted"}
        ``sorted`` orders the draw by body-mass index (covariate shift: the stream moves from lean to
        heavy patients).
    horizon : int
        Number of rounds :math:`T \ge 1`.
    n_train : int, default 150
        Training rows, in [20, 400].
    alpha_ridge : float, default 1.0
        Ridge penalty (positive).
    replicates : int, optional
        Number R of independent streams; the output gains a leading axis R.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray, shape (T,) or (R, T)
        :math:`|y_t - \hat y_t|` (disease-progression units; targets range over 25–346).

    Raises
    ------
    ValueError
        For an unknown ``kind`` or invalid arguments.

    Examples
    --------
    >>> res = diabetes_residuals("sorted", 100, rng=np.random.default_rng(0))
    >>> res.shape, bool(res.min() >= 0)
    ((100,), True)
    """
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge

    if kind not in ("iid", "sorted"):
        raise ValueError(f"kind must be 'iid' or 'sorted', got {kind!r}")
    horizon = check_int("horizon", horizon, minimum=1)
    n_train = check_int("n_train", n_train, minimum=20, maximum=400)
    alpha_ridge = check_real("alpha_ridge", alpha_ridge, minimum=0.0, strict_min=True)
    r = _check_replicates(replicates)
    rng = _check_rng(rng)
    X, y = load_diabetes(return_X_y=True)
    out = np.empty((r, horizon))
    for i in range(r):                                       # one fit per replicate (442 rows)
        perm = rng.permutation(len(y))
        tr, rest = perm[:n_train], perm[n_train:]
        model = Ridge(alpha=alpha_ridge).fit(X[tr], y[tr])
        idx = rng.choice(rest, size=horizon)
        if kind == "sorted":
            idx = idx[np.argsort(X[idx, 2], kind="stable")]  # column 2 is body-mass index
        out[i] = np.abs(y[idx] - model.predict(X[idx]))
    return out if replicates is not None else out[0]
