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
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
import scipy.optimize

from paperlib.core._validation import as_array, check_bool, check_int, check_key, check_real, check_rng, is_traced
from paperlib.models.attention import linear_attention, softmax_attention
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

ACTIVATIONS = ("softmax", "linear", "exp", "erf")
_N_THETA = {"softmax": 4, "linear": 4, "exp": 4, "erf": 5}   # erf also learns its offset beta

_BATCH = "leading axes are batch axes: (..., L) or (..., d) of any rank is valid"
_PROBE_EXEMPTIONS = {
    "order_parameters": {"k": {"array_rank": _BATCH}, "v": {"array_rank": _BATCH}},
}


class OrderParameters(NamedTuple):
    r"""The seven overlaps that fix the risk of :math:`(k, v)` (paper, Sec. 3).

    ``a = <k,k*>/d``, ``b = <k,v*>/d``, ``c = <v,k*>/d``, ``e = <v,v*>/d``; ``q_k``, ``q_v``,
    ``q_kv`` are ``<k_perp,k_perp>/d``, ``<v_perp,v_perp>/d``, ``<k_perp,v_perp>/d`` for the parts
    of :math:`k, v` orthogonal to :math:`\mathrm{span}(k^*, v^*)`. Leading batch axes are allowed.
    """

    a: jax.Array
    b: jax.Array
    c: jax.Array
    e: jax.Array
    q_k: jax.Array
    q_v: jax.Array
    q_kv: jax.Array


# --------------------------------------------------------------------------- validation helpers
def _check_activation(activation):
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")


def _check_task(L, mu, sigma):
    L = check_int("L", L, minimum=1)
    mu = check_real("mu", mu, minimum=0.0)
    sigma = check_real("sigma", sigma, minimum=0.0)
    return L, mu, sigma


def _check_finite_array(name, x, ndim):
    """Check a real, finite, non-empty array of rank ``ndim`` (None: any rank >= 1); keep its dtype."""
    if is_traced(x):
        return x
    checked = as_array(name, x, ndim=ndim, dtype=None)
    if checked.ndim < 1:
        raise ValueError(f"{name} must be an array with at least one axis, got shape {checked.shape}")
    return jnp.asarray(x)


# --------------------------------------------------------------------------- data model
def make_teacher(d: int, *, rng: np.random.Generator):
    r"""Draw the hidden key and value directions :math:`k^*, v^*`.

    Parameters
    ----------
    d : int
        Token dimension (>= 2).
    rng : numpy.random.Generator
        Randomness (keyword-only).

    Returns
    -------
    k_star, v_star : ndarray, shape (d,)
        Orthogonal, each with squared norm ``d`` (so projections of a standard token are N(0, 1)).

    Raises
    ------
    ValueError
        If ``d`` is not an integer >= 2.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> k_star, v_star = make_teacher(4, rng=np.random.default_rng(0))
    >>> np.round([k_star @ k_star, v_star @ v_star, k_star @ v_star], 6).tolist()
    [4.0, 4.0, 0.0]
    """
    rng = check_rng("rng", rng)
    d = check_int("d", d, minimum=2)
    q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
    return np.sqrt(d) * q[:, 0], np.sqrt(d) * q[:, 1]


def sample_slr(n: int, L: int, mu: float, sigma: float, k_star, v_star, *, rng: np.random.Generator):
    r"""Sample ``n`` sequences of spiked single-location regression (module docstring; paper Sec. 2).

    Parameters
    ----------
    n, L : int
        Number of sequences (>= 1) and tokens per sequence (>= 1).
    mu : float
        Spike strength :math:`\mu=\sqrt\nu\ge 0` of the relevant token along :math:`k^*`.
    sigma : float
        Label noise standard deviation :math:`\sigma=\Delta\ge 0`.
    k_star, v_star : array, shape (d,)
        Teacher directions from :func:`make_teacher`.
    rng : numpy.random.Generator
        Randomness (keyword-only).

    Returns
    -------
    X : array, shape (n, L, d)
    y : array, shape (n,)
    loc : int array, shape (n,)
        The hidden location :math:`\ell^*` of each sequence (0-based).

    Raises
    ------
    ValueError
        On non-positive sizes, negative ``mu``/``sigma``, or teacher vectors of different shapes.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> k_star, v_star = make_teacher(4, rng=rng)
    >>> X, y, loc = sample_slr(3, 2, 1.0, 0.1, k_star, v_star, rng=rng)
    >>> X.shape, np.round(y, 3).tolist(), loc.tolist()
    ((3, 2, 4), [-0.073, 0.889, 0.37], [1, 1, 1])
    """
    rng = check_rng("rng", rng)
    n = check_int("n", n, minimum=1)
    L, mu, sigma = _check_task(L, mu, sigma)
    k_star = _check_finite_array("k_star", k_star, 1)
    v_star = _check_finite_array("v_star", v_star, 1)
    if k_star.shape != v_star.shape:
        raise ValueError(f"k_star and v_star must have the same shape, got {k_star.shape} and {v_star.shape}")
    d = k_star.shape[0]
    loc = rng.integers(0, L, size=n)
    X = rng.standard_normal((n, L, d))
    X[np.arange(n), loc] += (mu / np.sqrt(d)) * np.asarray(k_star)
    y = X[np.arange(n), loc] @ np.asarray(v_star) / np.sqrt(d) + sigma * rng.standard_normal(n)
    return X, y, loc


def sample_projections(n: int, L: int, mu: float, sigma: float, *, rng: np.random.Generator):
    r"""Sample the :math:`d`-free projections of SLR data (the population-level reduction).

    :math:`h_\ell=\langle x_\ell,k^*\rangle/\sqrt d\sim\mathcal N(\mu\mathbb 1[\ell=\ell^*],1)`,
    :math:`g_\ell=\langle x_\ell,v^*\rangle/\sqrt d\sim\mathcal N(0,1)`, :math:`y=g_{\ell^*}+\sigma\xi`,
    plus two independent standard normal arrays ``w1, w2`` used for the directions of :math:`k, v`
    orthogonal to the teacher.

    Parameters
    ----------
    n, L : int
        Monte Carlo sample size (>= 1) and sequence length (>= 1).
    mu, sigma : float
        Spike strength and noise level (>= 0).
    rng : numpy.random.Generator
        Randomness (keyword-only).

    Returns
    -------
    dict
        ``h, g, w1, w2`` of shape (n, L) and ``y`` of shape (n,).

    Raises
    ------
    ValueError
        On non-positive sizes or negative ``mu``/``sigma``.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> proj = sample_projections(3, 2, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> sorted(proj), proj["h"].shape, np.round(proj["y"], 3).tolist()
    (['g', 'h', 'w1', 'w2', 'y'], (3, 2), [-1.39, -0.032, -0.273])
    """
    rng = check_rng("rng", rng)
    n = check_int("n", n, minimum=1)
    L, mu, sigma = _check_task(L, mu, sigma)
    loc = rng.integers(0, L, size=n)
    h = rng.standard_normal((n, L))
    h[np.arange(n), loc] += mu
    g = rng.standard_normal((n, L))
    y = g[np.arange(n), loc] + sigma * rng.standard_normal(n)
    return {"h": h, "g": g, "y": y, "w1": rng.standard_normal((n, L)), "w2": rng.standard_normal((n, L))}



# --------------------------------------------------------------------------- predictors
def _readout(s, u, activation, offset=0.0):
    """sum_l phi(s)_l u_l for scores s and values u of shape (..., L), via paperlib.models.attention."""
    if activation == "exp":   # element-wise exponential, no normalisation
        return jnp.sum(jnp.exp(s) * u, axis=-1)
    if activation == "erf":   # element-wise 1 + erf(s + beta), no normalisation
        return jnp.sum((1.0 + jax.scipy.special.erf(s + offset)) * u, axis=-1)
    if activation == "softmax":
        # one query equal to 1 against 1-d keys s_l: q.k_l = s_l, so the weights are softmax(s)
        q = jnp.ones(s.shape[:-1] + (1, 1), s.dtype)
        return softmax_attention(q, s[..., None], u[..., None], scale=1.0)[..., 0, 0]
    # linear: query (1, 1) against keys (s_l, 1) gives 1 + s_l
    q = jnp.ones(s.shape[:-1] + (1, 2), s.dtype)
    keys = jnp.stack([s, jnp.ones_like(s)], axis=-1)
    return linear_attention(q, keys, u[..., None], scale=1.0)[..., 0, 0]


def attention_readout(s, u, *, activation: str):
    r"""Attention output :math:`\sum_\ell\phi(s)_\ell u_\ell` from scores and values.

    Parameters
    ----------
    s, u : array, shape (..., L)
        Scores :math:`s_\ell=\langle x_\ell,k\rangle/\sqrt d` and values :math:`u_\ell=\langle x_\ell,v\rangle/\sqrt d`.
    activation : {"softmax", "linear", "exp", "erf"}
        :math:`\phi=\mathrm{softmax}`, :math:`\phi(s)_\ell=1+s_\ell` (paper Sec. 2), or the
        element-wise (un-normalised) :math:`\phi(s)_\ell=e^{s_\ell}` or
        :math:`\phi(s)_\ell=1+\mathrm{erf}(s_\ell)` (the erf with offset 0; :func:`fit_population`
        and :func:`order_parameter_risk` also take an offset :math:`\beta`).

    Returns
    -------
    array, shape (...)

    Raises
    ------
    ValueError
        On an unknown activation, mismatched shapes, or non-finite or empty inputs.

    Examples
    --------
    >>> s, u = np.array([[0.0, 1.0, 2.0]]), np.array([[1.0, 2.0, 3.0]])
    >>> np.round(np.asarray(attention_readout(s, u, activation="softmax"), dtype=float), 4).tolist()
    [2.5752]
    """
    _check_activation(activation)
    s, u = _check_finite_array("s", s, None), _check_finite_array("u", u, None)
    if s.shape != u.shape or s.ndim < 1:
        raise ValueError(f"s and u must have the same shape (..., L), got {s.shape} and {u.shape}")
    return _readout(s, u, activation)


def _predict(k, v, X, activation):
    d = X.shape[-1]
    return _readout(X @ k / jnp.sqrt(d), X @ v / jnp.sqrt(d), activation)


def attention_predict(k, v, X, *, activation: str):
    r"""Single-location attention predictor :math:`f_{k,v}(X)` (paper Sec. 2, estimator :math:`f_{\sigma,k,v}`).

    Parameters
    ----------
    k, v : array, shape (d,)
        Key and value weights.
    X : array, shape (n, L, d)
        Sequences.
    activation : {"softmax", "linear", "exp", "erf"}

    Returns
    -------
    array, shape (n,)

    Raises
    ------
    ValueError
        On wrong shapes, non-finite inputs, or an unknown activation.

    Examples
    --------
    >>> X = np.arange(12.0).reshape(2, 3, 2) / 10
    >>> out = attention_predict(np.array([1.0, 0.0]), np.array([0.0, 1.0]), X, activation="linear")
    >>> np.round(np.asarray(out, dtype=float), 4).tolist()
    [0.7664, 3.0292]
    """
    _check_activation(activation)
    k = _check_finite_array("k", k, 1)
    v = _check_finite_array("v", v, 1)
    X = _check_finite_array("X", X, 3)
    if k.shape != v.shape or X.shape[-1] != k.shape[0]:
        raise ValueError(f"k, v must have shape (d,) with d = X.shape[-1] = {X.shape[-1]}; got {k.shape}, {v.shape}")
    return _predict_jit(k, v, X, activation)


_predict_jit = jax.jit(_predict, static_argnames=("activation",))


# --------------------------------------------------------------------------- order parameters
def order_parameters(k, v, k_star, v_star) -> OrderParameters:
    r"""Overlaps of the weights with the teacher (paper Sec. 3, the order parameters).

    Parameters
    ----------
    k, v : array, shape (..., d)
        Key and value weights (leading batch axes allowed).
    k_star, v_star : array, shape (d,)
        Orthogonal teacher directions with squared norm ``d``.

    Returns
    -------
    OrderParameters
        Each field of shape (...).

    Raises
    ------
    ValueError
        If an input is empty or not finite, ``k_star``/``v_star`` are not 1-D, or the last dimensions
        do not match.

    Examples
    --------
    >>> k_star, v_star = np.array([2.0, 0.0, 0.0, 0.0]), np.array([0.0, 2.0, 0.0, 0.0])
    >>> op = order_parameters(np.array([1.0, 0.0, 1.0, 0.0]), np.array([0.0, 1.0, 0.0, 1.0]), k_star, v_star)
    >>> [round(float(f), 3) for f in op]
    [0.5, 0.0, 0.0, 0.5, 0.25, 0.25, 0.0]
    """
    k, v = _check_finite_array("k", k, None), _check_finite_array("v", v, None)
    k_star, v_star = _check_finite_array("k_star", k_star, 1), _check_finite_array("v_star", v_star, 1)
    d = k_star.shape[-1]
    if k.shape[-1] != d or v.shape[-1] != d or v_star.shape != k_star.shape:
        raise ValueError(f"k, v, k_star, v_star must all end in d = {d}; got {k.shape}, {v.shape}, {v_star.shape}")
    a, b = k @ k_star / d, k @ v_star / d
    c, e = v @ k_star / d, v @ v_star / d
    k_perp = k - a[..., None] * k_star - b[..., None] * v_star
    v_perp = v - c[..., None] * k_star - e[..., None] * v_star
    dot = lambda p, q: jnp.sum(p * q, axis=-1) / d
    return OrderParameters(a, b, c, e, dot(k_perp, k_perp), dot(v_perp, v_perp), dot(k_perp, v_perp))


@partial(jax.jit, static_argnames=("activation",))
def _reduced_risk(op, proj, activation, offset=0.0):
    h, g, w1, w2, y = proj["h"], proj["g"], proj["w1"], proj["w2"], proj["y"]
    sk = jnp.sqrt(jnp.maximum(op.q_k, 0.0))
    rho = jnp.where(sk > 0, op.q_kv / jnp.where(sk > 0, sk, 1.0), 0.0)
    resid = jnp.sqrt(jnp.maximum(op.q_v - rho**2, 0.0))
    s = op.a * h + op.b * g + sk * w1
    u = op.c * h + op.e * g + rho * w1 + resid * w2
    return jnp.mean((_readout(s, u, activation, offset) - y) ** 2)


@partial(jax.jit, static_argnames=("activation",))
def _reduced_risk_stderr(op, proj, activation, offset=0.0):
    # Monte Carlo standard error of _reduced_risk: std of the per-sequence squared errors / sqrt(N)
    h, g, w1, w2, y = proj["h"], proj["g"], proj["w1"], proj["w2"], proj["y"]
    sk = jnp.sqrt(jnp.maximum(op.q_k, 0.0))
    rho = jnp.where(sk > 0, op.q_kv / jnp.where(sk > 0, sk, 1.0), 0.0)
    resid = jnp.sqrt(jnp.maximum(op.q_v - rho**2, 0.0))
    sq = (_readout(op.a * h + op.b * g + sk * w1, op.c * h + op.e * g + rho * w1 + resid * w2, activation, offset) - y) ** 2
    return jnp.std(sq) / jnp.sqrt(sq.shape[0])


def order_parameter_risk(op: OrderParameters, proj, *, activation: str, return_stderr: bool = False, offset: float = 0.0):
    r"""Population risk :math:`\mathbb E(y-f_{k,v}(X))^2` as a function of the order parameters only.

    For Gaussian tokens, :math:`s_\ell = a h_\ell + b g_\ell + \zeta_\ell` and
    :math:`u_\ell = c h_\ell + e g_\ell + \chi_\ell` with :math:`(\zeta_\ell,\chi_\ell)` i.i.d. centred
    Gaussian of covariance :math:`[[Q_k, Q_{kv}],[Q_{kv}, Q_v]]`, independent of :math:`(h, g)`. The
    risk is averaged over the Monte Carlo sample ``proj`` (common random numbers across calls).

    Parameters
    ----------
    op : OrderParameters
        Scalar fields, or fields of shape (m,) for a batch of m models.
    proj : dict
        Output of :func:`sample_projections`.
    activation : {"softmax", "linear", "exp", "erf"}
    return_stderr : bool, default False
        Also return the Monte Carlo standard error of the risk (standard deviation of the
        per-sequence squared errors over :math:`\sqrt N`; the squared errors are heavy-tailed here,
        so this is much larger than the Gaussian guess :math:`\sqrt{2/N}\,\mathcal E`).
    offset : float, default 0.0
        The offset :math:`\beta` of the element-wise activation :math:`1+\mathrm{erf}(s+\beta)`
        (ignored by the other activations).

    Returns
    -------
    float array, shape () or (m,)
        The risk; with ``return_stderr``, a pair ``(risk, stderr)`` of such arrays.

    Raises
    ------
    ValueError
        On an unknown activation, an ``op`` that is not seven overlaps (or has non-finite entries),
        a negative ``q_k``/``q_v``, or a non-boolean ``return_stderr``.

    Examples
    --------
    >>> proj = sample_projections(200, 3, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> op = OrderParameters(1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    >>> round(float(order_parameter_risk(op, proj, activation="softmax")), 3)
    0.406
    """
    _check_activation(activation)
    return_stderr = check_bool("return_stderr", return_stderr)
    offset = check_real("offset", offset)
    if not isinstance(op, tuple) or len(op) != 7:
        raise ValueError(f"op must be an OrderParameters (seven overlaps), got {type(op).__name__}")
    op = OrderParameters(*op)
    for name, val in op._asdict().items():
        if not is_traced(val):
            as_array(f"op.{name}", val, ndim=(0, 1), dtype=None)
    for name in ("q_k", "q_v"):
        val = getattr(op, name)
        if not isinstance(val, jax.core.Tracer) and bool(jnp.any(jnp.asarray(val) < -1e-12)):
            raise ValueError(f"op.{name} must be >= 0, got {val}")
    fns = (_reduced_risk, _reduced_risk_stderr) if return_stderr else (_reduced_risk,)
    if jnp.ndim(op.a) > 0:  # a batch of models
        out = tuple(jax.vmap(lambda o, f=f: f(o, proj, activation, offset))(op) for f in fns)
    else:
        out = tuple(f(op, proj, activation, offset) for f in fns)
    return out if return_stderr else out[0]


def bayes_risk(proj, *, mu: float, sigma: float):
    r"""Monte Carlo Bayes risk of spiked SLR (paper Prop. 4.2).

    The posterior of the location is :math:`P(\ell^*=\ell\mid X)=\mathrm{softmax}(\mu h)_\ell`, so
    :math:`\mathbb E[y\mid X]=\sum_\ell p_\ell g_\ell` and :math:`R_B=\mathbb E(y-\mathbb E[y\mid X])^2`,
    estimated by the mean squared error of the posterior mean on the sample ``proj`` (so that risk
    differences against other predictors on the same sample are paired). Computed directly from the
    posterior (not through the attention code), an independent reference for softmax attention at
    :math:`k=\mu k^*, v=v^*`.

    Parameters
    ----------
    proj : dict
        Output of :func:`sample_projections` (``h``, ``g`` and ``y`` are used).
    mu, sigma : float
        Spike strength and noise level (>= 0); ``mu`` must be the one ``proj`` was drawn with.

    Returns
    -------
    float array, shape ()

    Raises
    ------
    ValueError
        On negative ``mu`` or ``sigma``.

    Examples
    --------
    >>> proj = sample_projections(200, 3, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> round(float(bayes_risk(proj, mu=1.0, sigma=0.1)), 3)
    0.406
    """
    mu = check_real("mu", mu, minimum=0.0)
    sigma = check_real("sigma", sigma, minimum=0.0)
    return _bayes_risk(proj["h"], proj["g"], proj["y"], mu)


@jax.jit
def _bayes_risk(h, g, y, mu):
    p = jax.nn.softmax(mu * h, axis=-1)
    return jnp.mean((jnp.sum(p * g, -1) - y) ** 2)


def linear_population_risk(L: int, mu: float, sigma: float):
    r"""Closed-form population optimum of linear attention :math:`\phi(s)_\ell=1+s_\ell` on spiked SLR.

    Minimising :math:`\mathbb E(y-e\sum_\ell(1+a h_\ell)g_\ell)^2` (the off-diagonal overlaps and the
    orthogonal parts only add variance) gives :math:`a^*=\mu(L-1)/L` and

    .. math:: R_{\rm lin}=\sigma^2+\frac{L(L-1)}{L^2+(L-1)\mu^2}.

    Derived in the chapter ("Why it is true"); our own closed form for the paper's Sec. 4 result that
    linear attention stays above the Bayes risk.

    Parameters
    ----------
    L : int
        Sequence length (>= 1).
    mu, sigma : float
        Spike strength and noise level (>= 0).

    Returns
    -------
    risk : float
    a_opt, e_opt : float
        The optimal key and value overlaps.

    Raises
    ------
    ValueError
        On invalid ``L``, ``mu`` or ``sigma``.

    Examples
    --------
    >>> [round(float(t), 4) for t in linear_population_risk(4, 2.0, 0.1)]
    [0.4386, 1.5, 0.1429]
    """
    L, mu, sigma = _check_task(L, mu, sigma)
    a = mu * (L - 1) / L
    denom = L * (1 + a**2) + 2 * a * mu + a**2 * mu**2
    e = (1 + a * mu) / denom
    return sigma**2 + L * (L - 1) / (L**2 + (L - 1) * mu**2), a, e


def _pop_objective(theta, proj, activation):
    zero = jnp.zeros((), theta.dtype)
    op = OrderParameters(theta[0], theta[1], theta[2], theta[3], zero, zero, zero)
    return _reduced_risk(op, proj, activation, theta[4] if activation == "erf" else 0.0)


_pop_value_and_grad = jax.jit(jax.value_and_grad(_pop_objective), static_argnames=("activation",))


@partial(jax.jit, static_argnames=("activation",))
def _sandwich_stderr(theta, proj, activation):
    # per-sequence losses l_i(theta); Var(theta_hat) ~ H^-1 Cov(grad l_i) H^-1 / N (M-estimator)
    def per_sample(t):
        zero = jnp.zeros((), t.dtype)
        op = OrderParameters(t[0], t[1], t[2], t[3], zero, zero, zero)
        h, g, y = proj["h"], proj["g"], proj["y"]
        beta = t[4] if activation == "erf" else 0.0
        return (_readout(op.a * h + op.b * g, op.c * h + op.e * g, activation, beta) - y) ** 2

    jac = jax.jacfwd(per_sample)(theta)                    # (N, 4) or (N, 5)
    hess = jax.hessian(lambda t: jnp.mean(per_sample(t)))(theta)
    h_inv = jnp.linalg.pinv(hess)
    cov = h_inv @ jnp.cov(jac, rowvar=False) @ h_inv / jac.shape[0]
    return jnp.sqrt(jnp.diag(cov))


def fit_population(proj, *, activation: str, init=(0.5, 0.0, 0.0, 0.5)):
    r"""Minimise the population risk over the overlaps :math:`(a,b,c,e)` with :math:`Q=0`.

    For ``activation="erf"`` the offset :math:`\beta` of :math:`1+\mathrm{erf}(s+\beta)` is a fifth
    parameter, learned with the overlaps.

    Orthogonal components only add variance, so the population optimum has
    :math:`Q_k=Q_v=Q_{kv}=0`. L-BFGS (scipy) on the Monte Carlo risk with exact JAX gradients.

    Parameters
    ----------
    proj : dict
        Output of :func:`sample_projections` (fixed sample: common random numbers).
    activation : {"softmax", "linear", "exp", "erf"}
    init : sequence of 4 floats (5 for ``"erf"``)
        Starting :math:`(a,b,c,e)`, then :math:`\beta` for ``"erf"``.

    Returns
    -------
    risk : float
        Minimum Monte Carlo risk (in-sample, so slightly optimistic).
    theta : ndarray, shape (4,) or (5,)
        The minimiser :math:`(a,b,c,e)` (and :math:`\beta` for ``"erf"``).
    stderr : ndarray, shape (4,) or (5,)
        Monte Carlo standard errors of ``theta`` (M-estimator sandwich
        :math:`H^{-1}\mathrm{Cov}(\nabla\ell_i)H^{-1}/N`): how precisely the sample pins the minimiser.

    Raises
    ------
    ValueError
        On an unknown activation or an ``init`` of the wrong length.

    Examples
    --------
    >>> proj = sample_projections(200, 3, 1.0, 0.1, rng=np.random.default_rng(0))
    >>> risk, theta, stderr = fit_population(proj, activation="linear")
    >>> round(risk, 3), np.round(theta, 2).tolist()
    (0.483, [0.84, -0.06, 0.0, 0.26])
    """
    _check_activation(activation)
    init = as_array("init", init, shape=(_N_THETA[activation],), dtype=float)
    proj = {name: jnp.asarray(proj[name]) for name in ("h", "g", "y", "w1", "w2")}
    fun = lambda t: tuple(np.asarray(x, dtype=float) for x in _pop_value_and_grad(jnp.asarray(t), proj, activation))
    res = scipy.optimize.minimize(fun, init, jac=True, method="L-BFGS-B", options={"maxiter": 500})
    return float(res.fun), res.x, np.asarray(_sandwich_stderr(jnp.asarray(res.x), proj, activation))


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
