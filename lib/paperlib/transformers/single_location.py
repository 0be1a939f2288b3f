r"""Single-location regression (SLR): softmax vs linear attention.

The **spiked single-location regression** task of Duranthon, Marion, Boyer, Loureiro & Zdeborová,
*Statistical Advantage of Softmax Attention: Insights from Single-Location Regression*, ICLR 2026
(arXiv:2509.21936). A sequence :math:`X=(x_1,\dots,x_L)\in\mathbb R^{L\times d}` carries one relevant
token at a hidden location :math:`\ell^*\sim\mathrm{Unif}\{1..L\}`:

.. math::

    x_\ell = z_\ell + \frac{\mu}{\sqrt d}\,k^*\,\mathbb 1[\ell=\ell^*],\quad z_\ell\sim\mathcal N(0,I_d),
    \qquad y = \frac{\langle x_{\ell^*}, v^*\rangle}{\sqrt d} + \sigma\,\xi,\quad \xi\sim\mathcal N(0,1),

with :math:`\|k^*\|^2=\|v^*\|^2=d` and :math:`k^*\perp v^*`. In the paper's notation this is the
"spiked-SLR" weight :math:`g_\nu=e^{\sqrt\nu\chi_\epsilon-\nu/2}` with :math:`\mu=\sqrt\nu` and noise
level :math:`\Delta=\sigma`.

An attention predictor with key :math:`k` and value :math:`v` (no query: the task has one output) is

.. math:: f_{k,v}(X) = \sum_\ell \phi(s)_\ell\, u_\ell,\qquad s_\ell=\frac{\langle x_\ell,k\rangle}{\sqrt d},
          \quad u_\ell=\frac{\langle x_\ell,v\rangle}{\sqrt d},

with :math:`\phi=\mathrm{softmax}` (softmax attention) or :math:`\phi(s)_\ell = 1+s_\ell` (linear
attention, the linearisation of the exponential at the origin). Both are computed with
:func:`paperlib.models.attention.softmax_attention` and :func:`paperlib.models.attention.linear_attention`.

Because the tokens are Gaussian, the risk of *any* fixed :math:`(k,v)` on fresh data depends on the
weights only through seven **order parameters** (overlaps) :math:`a=\langle k,k^*\rangle/d`,
:math:`b=\langle k,v^*\rangle/d`, :math:`c=\langle v,k^*\rangle/d`, :math:`e=\langle v,v^*\rangle/d` and
the residual Gram entries :math:`Q_k, Q_v, Q_{kv}`; :func:`order_parameter_risk` evaluates it by a
:math:`d`-free Monte Carlo over :math:`L`-dimensional Gaussians.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from paperlib.core._validation import as_array, check_bool, check_int, check_key, check_real
from paperlib.models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "ACTIVATIONS",
    "OrderParameters",
    "make_teacher",
    "sample_slr",
    "sample_projections",
    "attention_readout",
    "attention_predict",
    "order_parameters",
    "order_parameter_risk",
    "bayes_risk",
    "linear_population_risk",
    "fit_population",
    "train_erm",
    "empirical_risk",
    "select_and_score",
    "summarise_differences",
]

# the data model, predictors and order parameters, and the population theory, live in private modules
from ._single_location_model import (  # noqa: F401
    ACTIVATIONS,
    OrderParameters,
    _check_activation,
    _check_finite_array,
    _check_task,
    _predict,
    _predict_jit,
    _readout,
    attention_predict,
    attention_readout,
    make_teacher,
    order_parameters,
    sample_projections,
    sample_slr,
)
from ._single_location_theory import (  # noqa: F401
    _N_THETA,
    _bayes_risk,
    _pop_objective,
    _pop_value_and_grad,
    _reduced_risk,
    _reduced_risk_stderr,
    _sandwich_stderr,
    bayes_risk,
    fit_population,
    linear_population_risk,
    order_parameter_risk,
)

_BATCH = "leading axes are batch axes: (..., L) or (..., d) of any rank is valid"
_PROBE_EXEMPTIONS = {
    "order_parameters": {"k": {"array_rank": _BATCH}, "v": {"array_rank": _BATCH}},
}


# --------------------------------------------------------------------------- finite-sample ERM
def _erm_loss(params, X, y, weights, lam, act_id, activations):
    d = X.shape[-1]
    if len(activations) == 1:
        pred = _predict(params["k"], params["v"], X, activations[0])
    else:  # one compiled program for several activations; act_id picks this model's
        s, u = X @ params["k"] / jnp.sqrt(d), X @ params["v"] / jnp.sqrt(d)
        pred = jax.lax.switch(act_id, [partial(_readout, activation=a) for a in activations], s, u)
    res = pred - y
    mse = jnp.sum(weights * res**2) / jnp.sum(weights)
    return mse + lam * (jnp.sum(params["k"] ** 2) + jnp.sum(params["v"] ** 2)) / d


@partial(jax.jit, static_argnames=("activations", "steps"))
def _train_batch(X, y, weights, lam, act_ids, key, *, activations, steps, lr, init_scale):
    opt = optax.adam(lr)
    kinit, ktrain = jax.random.split(key)
    z0 = init_scale * jax.random.normal(kinit, (weights.shape[0], 2, X.shape[-1]), X.dtype)
    init = {"k": z0[:, 0], "v": z0[:, 1]}

    def one(w, l, a, p0, kk):
        loss = lambda p, _key: _erm_loss(p, X, y, w, l, a, activations)
        return train(loss, p0, opt, steps=steps, key=kk).params

    return jax.vmap(one)(weights, lam, act_ids, init, jax.random.split(ktrain, weights.shape[0]))


def train_erm(X, y, weights, lam, *, activation: str, steps: int = 1500, lr: float = 0.05, init_scale: float = 0.5, key):
    r"""Ridge-regularised ERM for an attention predictor, many models at once (paper Sec. 5).

    Each model :math:`m` minimises

    .. math:: \frac{\sum_i w_{mi}(f_{k,v}(X_i)-y_i)^2}{\sum_i w_{mi}} + \lambda_m\frac{\|k\|^2+\|v\|^2}{d}

    by full-batch Adam inside :func:`paperlib.models.training.train` (one ``lax.scan``), ``vmap``-ed over
    models. The 0/1 weights select each model's training set (e.g. the first :math:`n=\alpha d`
    samples), so every sample ratio :math:`\alpha` and every restart is trained in one compiled call.

    Parameters
    ----------
    X : array, shape (n, L, d)
    y : array, shape (n,)
    weights : array, shape (m, n)
        Non-negative per-model sample weights (each row with a positive sum).
    lam : array, shape (m,)
        Ridge strengths :math:`\lambda_m\ge 0`.
    activation : {"softmax", "linear", "exp", "erf"}
    steps : int, default 1500
        Adam steps.
    lr : float, default 0.05
        Adam learning rate.
    init_scale : float, default 0.5
        Initial weights are i.i.d. :math:`\mathcal N(0,\text{init\_scale}^2)` (uninformed).
    key : jax.random key
        Initialisation randomness (keyword-only); models get independent inits.

    Returns
    -------
    dict
        ``k`` and ``v`` of shape (m, d).

    Raises
    ------
    ValueError
        On wrong shapes, negative weights or ``lam``, or invalid hyper-parameters.
        Also if ``key`` is not a JAX PRNG key.

    Notes
    -----
    The paper minimises the same objective with a quasi-Newton method at :math:`\sqrt{nd}=10^4`; we use
    Adam (optax) at much smaller :math:`d`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> k_star, v_star = make_teacher(3, rng=rng)
    >>> X, y, _ = sample_slr(4, 2, 1.0, 0.1, k_star, v_star, rng=rng)
    >>> W = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    >>> p = train_erm(X, y, W, np.array([0.1, 0.1]), activation="softmax", steps=3, key=jax.random.key(0))
    >>> p["k"].shape, p["v"].shape
    ((2, 3), (2, 3))
    """
    key = check_key("key", key)
    _check_activation(activation)
    X = _check_finite_array("X", X, 3)
    y = _check_finite_array("y", y, 1)
    weights = _check_finite_array("weights", weights, 2)
    lam = _check_finite_array("lam", lam, 1)
    n = X.shape[0]
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},) to match X, got {y.shape}")
    if weights.shape[1] != n or lam.shape != (weights.shape[0],):
        raise ValueError(f"weights must be (m, {n}) and lam (m,); got {weights.shape} and {lam.shape}")
    if bool(jnp.any(weights < 0)) or bool(jnp.any(jnp.sum(weights, 1) <= 0)):
        raise ValueError("weights must be non-negative with a positive sum in each row")
    if bool(jnp.any(lam < 0)):
        raise ValueError("lam must be non-negative")
    steps = check_int("steps", steps, minimum=1)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    init_scale = check_real("init_scale", init_scale, minimum=0.0, strict_min=True)
    act_ids = jnp.zeros(weights.shape[0], jnp.int32)
    return _train_batch(X, y, weights, lam, act_ids, key, activations=(activation,), steps=steps, lr=lr, init_scale=init_scale)


@partial(jax.jit, static_argnames=("activation",))
def _empirical_risk(k, v, X, y, activation):
    return jax.vmap(lambda kk, vv: jnp.mean((_predict(kk, vv, X, activation) - y) ** 2))(k, v)


@partial(jax.jit, static_argnames=("activation",))
def _empirical_risk_stderr(k, v, X, y, activation):
    sq = lambda kk, vv: (_predict(kk, vv, X, activation) - y) ** 2
    return jax.vmap(lambda kk, vv: jnp.std(sq(kk, vv)) / jnp.sqrt(X.shape[0]))(k, v)


def empirical_risk(k, v, X, y, *, activation: str, return_stderr: bool = False):
    r"""Empirical squared error :math:`\frac1n\sum_i(f_{k,v}(X_i)-y_i)^2` of a batch of models.

    Parameters
    ----------
    k, v : array, shape (m, d)
        Weights of m models (e.g. the output of :func:`train_erm`).
    X : array, shape (n, L, d)
    y : array, shape (n,)
    activation : {"softmax", "linear", "exp", "erf"}
    return_stderr : bool, default False
        Also return the standard error of each mean (std of the per-sample squared errors / sqrt(n)).

    Returns
    -------
    array, shape (m,)
        The risks; with ``return_stderr``, a pair ``(risk, stderr)`` of such arrays.

    Raises
    ------
    ValueError
        On wrong shapes, non-finite inputs, or an unknown activation.

    Examples
    --------
    >>> X = np.arange(12.0).reshape(2, 3, 2) / 10
    >>> k, v = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> risk = empirical_risk(k, v, X, np.array([0.5, 1.0]), activation="softmax")
    >>> np.round(np.asarray(risk, dtype=float), 4).tolist()
    [0.0991, 0.1482]
    """
    _check_activation(activation)
    return_stderr = check_bool("return_stderr", return_stderr)
    k = _check_finite_array("k", k, 2)
    v = _check_finite_array("v", v, 2)
    X = _check_finite_array("X", X, 3)
    y = _check_finite_array("y", y, 1)
    if k.shape != v.shape or k.shape[1] != X.shape[2] or y.shape != (X.shape[0],):
        raise ValueError(f"need k, v of shape (m, {X.shape[2]}) and y of shape ({X.shape[0]},); "
                         f"got {k.shape}, {v.shape}, {y.shape}")
    risk = _empirical_risk(k, v, X, y, activation)
    return (risk, _empirical_risk_stderr(k, v, X, y, activation)) if return_stderr else risk


def select_and_score(X, y, X_val, y_val, k_star, v_star, proj, *, alphas, lambdas,
                     activations=("softmax", "linear"), steps: int = 1000, lr: float = 0.05, key):
    r"""Train on the first :math:`\alpha d` samples for every ridge, pick the ridge on validation, score.

    One compiled call trains every (activation, ratio, ridge) triple on the same data, with
    independent initialisations; for each activation and ratio the ridge with the lowest validation
    risk is kept, and its population risk is evaluated through its seven order parameters
    (:func:`order_parameter_risk` on ``proj``, so that heads scored on one ``proj`` are compared on
    common random numbers).

    Parameters
    ----------
    X : array, shape (n, L, d)
        Training pool, with :math:`n\ge\max(\alpha)\,d`.
    y : array, shape (n,)
    X_val : array, shape (n_val, L, d)
    y_val : array, shape (n_val,)
    k_star, v_star : array, shape (d,)
        The teacher (to read off the order parameters).
    proj : dict
        Output of :func:`sample_projections` for the same ``L``, ``mu``, ``sigma``.
    alphas : array, shape (p,)
        Sample ratios :math:`\alpha=n/d>0`.
    lambdas : array, shape (q,)
        Ridge grid (>= 0).
    activations : tuple of str, default ("softmax", "linear")
        Activations from ``ACTIVATIONS`` (``"erf"`` with offset 0).
    steps : int, default 1000
    lr : float, default 0.05
    key : jax.random key
        Initialisation randomness (keyword-only).

    Returns
    -------
    risk : ndarray, shape (len(activations), p)
        Population risk of the validation-selected head for each activation and ratio.
    lam : ndarray, shape (len(activations), p)
        The selected ridges.

    Raises
    ------
    ValueError
        If the pool is smaller than :math:`\max(\alpha)d`, on bad grids or activations, or as
        :func:`train_erm`.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ks, vs = make_teacher(4, rng=rng)
    >>> X, y, _ = sample_slr(8, 2, 1.0, 0.1, ks, vs, rng=rng)
    >>> Xv, yv, _ = sample_slr(20, 2, 1.0, 0.1, ks, vs, rng=rng)
    >>> proj = sample_projections(500, 2, 1.0, 0.1, rng=rng)
    >>> risk, lam = select_and_score(X, y, Xv, yv, ks, vs, proj, alphas=np.array([1.0, 2.0]),
    ...                              lambdas=np.array([0.1, 10.0]), steps=5, key=jax.random.key(0))
    >>> risk.shape, lam.shape
    ((2, 2), (2, 2))
    """
    key = check_key("key", key)
    if isinstance(activations, str) or not isinstance(activations, (tuple, list)) or not activations:
        raise ValueError(f"activations must be a non-empty tuple of names from {ACTIVATIONS}, got {activations!r}")
    for a in activations:
        _check_activation(a)
    activations = tuple(activations)
    alphas = as_array("alphas", alphas, ndim=1, dtype=float)
    lambdas = as_array("lambdas", lambdas, ndim=1, dtype=float)
    if np.any(alphas <= 0):
        raise ValueError("alphas must be positive")
    if np.any(lambdas < 0):
        raise ValueError("lambdas must be non-negative")
    X = _check_finite_array("X", X, 3)
    y = _check_finite_array("y", y, 1)
    X_val = _check_finite_array("X_val", X_val, 3)
    y_val = _check_finite_array("y_val", y_val, 1)
    d = X.shape[-1]
    n_need = int(np.ceil(alphas.max() * d))
    if X.shape[0] < n_need or y.shape != (X.shape[0],):
        raise ValueError(f"X must hold at least max(alphas) * d = {n_need} samples and y match it; got {X.shape}, {y.shape}")
    if X_val.shape[1:] != X.shape[1:] or y_val.shape != (X_val.shape[0],):
        raise ValueError(f"X_val must be (n_val, {X.shape[1]}, {d}) and y_val (n_val,); got {X_val.shape}, {y_val.shape}")
    steps = check_int("steps", steps, minimum=1)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    n_act, p, q = len(activations), len(alphas), len(lambdas)
    act_idx, a_idx, l_idx = (g.ravel() for g in np.meshgrid(np.arange(n_act), np.arange(p), np.arange(q), indexing="ij"))
    W = (np.arange(X.shape[0])[None, :] < alphas[a_idx, None] * d).astype(float)
    par = _train_batch(X, y, jnp.asarray(W), jnp.asarray(lambdas[l_idx]), jnp.asarray(act_idx, jnp.int32), key,
                       activations=activations, steps=steps, lr=lr, init_scale=0.5)
    risk, lam = np.zeros((n_act, p)), np.zeros((n_act, p))
    for i, act in enumerate(activations):
        rows = slice(i * p * q, (i + 1) * p * q)
        k, v = par["k"][rows], par["v"][rows]
        val = np.asarray(_empirical_risk(k, v, X_val, y_val, act)).reshape(p, q)
        pick = np.arange(p) * q + val.argmin(axis=1)
        op = order_parameters(k[pick], v[pick], k_star, v_star)
        risk[i] = np.asarray(order_parameter_risk(op, proj, activation=act))
        lam[i] = lambdas[val.argmin(axis=1)]
    return risk, lam


def summarise_differences(delta, alphas, *, k: float = 2.0):
    r"""Mean, standard error and a three-way verdict of paired risk differences, per size and ratio.

    For each size :math:`d` the repetitions :math:`\Delta_r` (softmax risk minus linear risk, one row
    per repetition, one column per ratio) are summarised by their mean, their standard deviation and
    the standard error :math:`\mathrm{SD}/\sqrt R`. The outcome is ``"softmax better"`` if
    :math:`\bar\Delta+k\,\mathrm{SE}<0`, ``"linear better"`` if :math:`\bar\Delta-k\,\mathrm{SE}>0`, and
    ``"inconclusive"`` otherwise.

    Parameters
    ----------
    delta : dict
        Maps each size ``d`` (int) to a sequence of ``R >= 2`` arrays of shape ``(p,)``, one per repetition.
    alphas : array, shape (p,)
        The ratios labelling the columns.
    k : float, default 2.0
        Number of standard errors (> 0) for the verdict.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(d, alpha)``; columns ``mean``, ``SE``, ``SD``, ``outcome``.

    Raises
    ------
    ValueError
        On an empty ``delta``, fewer than two repetitions, shapes that do not match ``alphas``, or a bad ``k``.

    Examples
    --------
    >>> df = summarise_differences({8: [np.array([-0.1, 0.0]), np.array([-0.2, 0.1])]}, np.array([0.5, 1.0]))
    >>> df["outcome"].tolist()
    ['softmax better', 'inconclusive']
    >>> df["mean"].round(3).tolist()
    [-0.15, 0.05]
    """
    import pandas as pd

    alphas = as_array("alphas", alphas, ndim=1, dtype=float)
    k = check_real("k", k, minimum=0.0, strict_min=True)
    if not isinstance(delta, dict) or not delta:
        raise ValueError("delta must be a non-empty dict {d: [array per repetition]}")
    rows = []
    for d, reps in delta.items():
        arr = as_array("delta", np.asarray(reps, dtype=float), ndim=2, dtype=float)
        if arr.shape[0] < 2 or arr.shape[1] != alphas.shape[0]:
            raise ValueError(f"delta[{d}] must hold >= 2 repetitions of shape ({alphas.shape[0]},), got {arr.shape}")
        mean, sd = arr.mean(0), arr.std(0, ddof=1)
        se = sd / np.sqrt(arr.shape[0])
        for j, a in enumerate(alphas):
            verdict = ("softmax better" if mean[j] + k * se[j] < 0
                       else "linear better" if mean[j] - k * se[j] > 0 else "inconclusive")
            rows.append({"d": d, "alpha": float(a), "mean": mean[j], "SE": se[j], "SD": sd[j], "outcome": verdict})
    return pd.DataFrame(rows).set_index(["d", "alpha"])
