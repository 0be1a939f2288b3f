"""Single-location regression: the data model, the attention predictors and the order parameters.

This private module holds the data side of :mod:`paperlib.transformers.single_location`: the
activation names and the input checks shared by the whole module, the teacher and the samplers of
spiked SLR data (:func:`make_teacher`, :func:`sample_slr`, :func:`sample_projections`), the attention
read-out and predictor (:func:`attention_readout`, :func:`attention_predict`) and the seven overlaps
(:class:`OrderParameters`, :func:`order_parameters`). Its public names are re-exported by
:mod:`paperlib.transformers.single_location`, where they are documented; import them from there.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_int, check_real, check_rng, is_traced
from ..models.attention import linear_attention, softmax_attention

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

ACTIVATIONS = ("softmax", "linear", "exp", "erf")


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
