"""Fourier analysis of Boolean functions f: {-1, 1}^n -> {-1, 1}.

A Boolean function is stored as its **truth table**: a float array of length ``2**n`` whose entry
``i`` is ``f(x^(i))`` with the input ``x^(i)_j = 1 - 2 * bit_j(i)`` (bit 0 is the least significant),
see :func:`all_inputs`. A subset ``S`` of the coordinates is an integer mask, so the character
``chi_S(x^(i)) = prod_{j in S} x^(i)_j = (-1)^popcount(S & i)``, and the Fourier coefficient

    f_hat(S) = 2^{-n} sum_i f(x^(i)) chi_S(x^(i))

is the normalised Walsh-Hadamard transform of the truth table (:func:`walsh_hadamard`). From the
coefficients follow the level weights ``W_k = sum_{|S| = k} f_hat(S)^2`` (:func:`level_weights`) and
every quantity of the chapter through exact spectral identities (O'Donnell, *Analysis of Boolean
Functions*, 2014, Thm 2.49 and Prop. 3.3):

* noise stability ``Stab_rho[f] = sum_k rho^k W_k``;
* noise sensitivity ``NS_delta[f] = Pr[f(x) != f(x * xi)] = 1/2 - 1/2 Stab_{1 - 2 delta}[f]``, where
  each ``xi_j = -1`` independently with probability ``delta``;
* total influence ``I[f] = sum_k k W_k``;
* spectral concentration ``W^{>= 1/delta}[f] <= 2 / (1 - e^{-2}) NS_delta[f]``.

The module is the measuring instrument of the chapter on random spiking networks
(Araya, Datres and Kutyniok, *Random Spiking Neural Networks are Stable and Spectrally Simple*,
ICLR 2026, arXiv:2511.00904, Cor. 1), which states its spectral claim in these terms.
"""

from __future__ import annotations

import math

import numpy as np

from ..core._validation import as_array, check_int, check_probability, check_real, check_rng
from ._boolean_fourier_transform import (  # noqa: F401
    _MAX_N,
    _num_vars_of_table,
    all_inputs,
    fourier_coefficients,
    fourier_degrees,
    level_weights,
    walsh_hadamard,
)

__all__ = [
    "CONCENTRATION_CONSTANT",
    "all_inputs",
    "fourier_degrees",
    "walsh_hadamard",
    "fourier_coefficients",
    "level_weights",
    "noise_stability",
    "noise_sensitivity",
    "total_influence",
    "mean_degree",
    "tail_weight",
    "noise_sensitivity_mc",
    "noise_sensitivity_on",
    "total_influence_mc",
]

#: The constant 2 / (1 - e^{-2}) ~ 2.313 of the spectral-concentration inequality
#: W^{>= 1/delta}[f] <= CONCENTRATION_CONSTANT * NS_delta[f] (O'Donnell 2014, Prop. 3.3).
CONCENTRATION_CONSTANT = 2.0 / (1.0 - math.exp(-2.0))


def _levels(name: str, weights) -> np.ndarray:
    w = as_array(name, weights, ndim=(1, 2), dtype=np.float64, min_size=1)
    if w.ndim == 0:
        raise ValueError(f"{name} must have a last axis of level weights W_0..W_n, got a scalar")
    if np.any(w < -1e-12):
        raise ValueError(f"{name} must be non-negative (squared Fourier coefficients)")
    return w


def noise_stability(weights, rho: float) -> np.ndarray:
    """``Stab_rho[f] = sum_k rho^k W_k`` (O'Donnell 2014, Thm 2.49).

    Parameters
    ----------
    weights : array_like, shape (n + 1,) or (R, n + 1)
        Level weights from :func:`level_weights`.
    rho : float
        Correlation in ``[-1, 1]``.

    Returns
    -------
    ndarray of float64, shape () or (R,)

    Raises
    ------
    ValueError
        If ``rho`` is outside ``[-1, 1]`` or ``weights`` is negative or not finite.

    Examples
    --------
    >>> float(noise_stability([0.0, 0.75, 0.0, 0.25], 0.5))  # majority of 3 bits
    0.40625
    """
    w = _levels("weights", weights)
    rho = check_real("rho", rho, minimum=-1.0, maximum=1.0)
    k = np.arange(w.shape[-1])
    return w @ (rho**k)


def noise_sensitivity(weights, delta: float) -> np.ndarray:
    """``NS_delta[f] = 1/2 sum_k (1 - (1 - 2 delta)^k) W_k`` (O'Donnell 2014, Prop. 2.52).

    ``NS_delta[f] = Pr[f(x) != f(y)]`` for ``x`` uniform and ``y = x * xi``, each ``xi_j = -1``
    independently with probability ``delta``.

    Parameters
    ----------
    weights : array_like, shape (n + 1,) or (R, n + 1)
        Level weights of a {-1, 1}-valued function: each row sums to 1 (Parseval), within ``1e-6``.
    delta : float
        Flip probability in ``[0, 1]``.

    Returns
    -------
    ndarray of float64, shape () or (R,)

    Raises
    ------
    ValueError
        If ``delta`` is outside ``[0, 1]``, or ``weights`` is negative, not finite or has a row whose
        sum differs from 1 by more than ``1e-6`` (not the weights of a {-1, 1}-valued function).

    Examples
    --------
    >>> float(noise_sensitivity([0.0, 0.75, 0.0, 0.25], 0.25))  # majority of 3 bits
    0.296875
    """
    w = _levels("weights", weights)
    total = w.sum(axis=-1)
    if np.any(np.abs(total - 1.0) > 1e-6):
        worst = float(np.atleast_1d(total)[np.argmax(np.abs(np.atleast_1d(total) - 1.0))])
        raise ValueError(f"weights must sum to 1 (Parseval, a {{-1, 1}}-valued function), got a sum of {worst:.6g}")
    delta = check_probability("delta", delta)
    k = np.arange(w.shape[-1])
    return 0.5 * (w @ (1.0 - (1.0 - 2.0 * delta) ** k))


def total_influence(weights) -> np.ndarray:
    """``I[f] = sum_k k W_k``; ``NS_delta ~ delta I[f]`` as ``delta -> 0``.

    Parameters
    ----------
    weights : array_like, shape (n + 1,) or (R, n + 1)

    Returns
    -------
    ndarray of float64, shape () or (R,)

    Raises
    ------
    ValueError
        If ``weights`` is negative or not finite.

    Examples
    --------
    >>> float(total_influence([0.0, 0.75, 0.0, 0.25]))  # majority of 3 bits: 3 x 1/2
    1.5
    """
    w = _levels("weights", weights)
    return w @ np.arange(w.shape[-1], dtype=np.float64)


def mean_degree(weights) -> np.ndarray:
    """Variance-normalised mean degree ``D = sum_k k W_k / (1 - W_0)``.

    The weight ``W_0 = E[f]^2`` of the constant part says nothing about complexity, so the
    degrees are averaged over the non-constant weight only (``1 - W_0 = Var f`` for {-1, 1}
    functions). A uniformly random function has ``D ~ n / 2``; a dictator has ``D = 1``.

    Parameters
    ----------
    weights : array_like, shape (n + 1,) or (R, n + 1)

    Returns
    -------
    ndarray of float64, shape () or (R,)
        NaN where ``f`` is constant (``W_0 = 1``).

    Raises
    ------
    ValueError
        If ``weights`` is negative or not finite.

    Examples
    --------
    >>> float(mean_degree([0.5, 0.25, 0.25]))
    1.5
    """
    w = _levels("weights", weights)
    var = w[..., 1:].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(var > 0, total_influence(w) / np.where(var > 0, var, 1.0), np.nan)


def tail_weight(weights, k: int) -> np.ndarray:
    """Fourier weight at degree ``>= k``, ``W^{>= k} = sum_{j >= k} W_j``.

    Parameters
    ----------
    weights : array_like, shape (n + 1,) or (R, n + 1)
    k : int
        Lowest degree counted, ``k >= 0``.

    Returns
    -------
    ndarray of float64, shape () or (R,)

    Raises
    ------
    ValueError
        If ``weights`` is negative or not finite, or ``k`` is not a non-negative integer.

    Examples
    --------
    >>> float(tail_weight([0.0, 0.75, 0.0, 0.25], 2))
    0.25
    """
    w = _levels("weights", weights)
    k = check_int("k", k, minimum=0)
    return w[..., k:].sum(axis=-1)


def noise_sensitivity_mc(f, n: int, delta: float, *, num_pairs: int, rng: np.random.Generator):
    """Monte Carlo estimate of ``NS_delta[f]`` from ``f`` evaluated on random noisy pairs.

    Independent of the Fourier machinery: draws ``x`` uniform on {-1, 1}^n and ``y = x * xi``,
    evaluates ``f`` on both, and counts disagreements.

    Parameters
    ----------
    f : callable
        Maps a float32 array of shape (B, n) with entries in {-1, 1} to an array of shape (B,)
        with values in {-1, 1}.
    n : int
        Number of input bits, ``n >= 1``.
    delta : float
        Flip probability in ``[0, 1]``.
    num_pairs : int
        Number of pairs ``B >= 2``.
    rng : numpy.random.Generator

    Returns
    -------
    (float, float)
        The estimate and its standard error ``sqrt(p (1 - p) / B)``.

    Raises
    ------
    ValueError
        On a bad ``n``, ``delta`` or ``num_pairs``, or if ``f`` returns the wrong shape.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> p, se = noise_sensitivity_mc(lambda z: z[:, 0], 4, 0.25, num_pairs=4000, rng=np.random.default_rng(0))
    >>> abs(p - 0.25) < 4 * se  # a dictator flips exactly when its bit does
    True
    """
    rng = check_rng("rng", rng)
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    num_pairs = check_int("num_pairs", num_pairs, minimum=2)
    x = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(num_pairs, n))
    xi = np.where(rng.random((num_pairs, n)) < delta, -1.0, 1.0).astype(np.float32)
    fx, fy = np.asarray(f(x)), np.asarray(f(x * xi))
    if fx.shape != (num_pairs,) or fy.shape != (num_pairs,):
        raise ValueError(f"f must map shape (B, n) to (B,) with B = {num_pairs}, got {fx.shape}")
    p = float(np.mean(fx != fy))
    return p, math.sqrt(max(p * (1 - p), 1e-300) / num_pairs)


def _check_outputs(name, out, size):
    out = np.asarray(out)
    if out.shape != (size,):
        raise ValueError(f"f must map shape (B, n) to (B,) with B = {size}, got {out.shape} ({name})")
    return out


def noise_sensitivity_on(f, x, delta: float, *, rng: np.random.Generator) -> dict:
    """``Pr[f(x) != f(x * xi)]`` on given inputs ``x`` (e.g. a data set), and the variance of ``f``.

    Unlike :func:`noise_sensitivity_mc`, the inputs are not uniform: they are the rows of ``x`` (e.g.
    held-out images), each paired with one noisy copy ``x * xi`` (``xi_j = -1`` with probability
    ``delta``). The variance ``1 - E[f]^2`` is estimated from all ``2 B`` outputs, so that
    ``ns / (var / 2)`` is the normalised sensitivity of :func:`paperlib.boolean_analysis.spiking.expected_noise_sensitivity`.

    Parameters
    ----------
    f : callable
        Maps a float32 array of shape (B, n) with entries in {-1, 1} to values in {-1, 1}, shape (B,).
    x : array_like, shape (B, n)
        Inputs in {-1, 1}.
    delta : float
        Flip probability in ``[0, 1]``.
    rng : numpy.random.Generator

    Returns
    -------
    dict of float
        ``ns`` (the estimate), ``se`` (its binomial standard error) and ``var`` (``1 - E[f]^2``).

    Raises
    ------
    ValueError
        On a bad ``x`` or ``delta``, or if ``f`` returns the wrong shape.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> r = noise_sensitivity_on(lambda z: z[:, 0], all_inputs(3), 0.0, rng=np.random.default_rng(0))
    >>> r["ns"], r["var"]
    (0.0, 1.0)
    """
    rng = check_rng("rng", rng)
    x = as_array("x", x, ndim=2, dtype=np.float32)
    if not np.all(np.abs(x) == 1):
        raise ValueError("x must have entries in {-1, 1}")
    delta = check_probability("delta", delta)
    xi = np.where(rng.random(x.shape) < delta, -1.0, 1.0).astype(np.float32)
    fx = _check_outputs("x", f(x), x.shape[0])
    fy = _check_outputs("x * xi", f(x * xi), x.shape[0])
    p = float(np.mean(fx != fy))
    return {"ns": p, "se": math.sqrt(max(p * (1 - p), 1e-300) / x.shape[0]),
            "var": float(1.0 - np.mean(np.concatenate([fx, fy])) ** 2)}


def total_influence_mc(f, n: int, *, num_samples: int, rng: np.random.Generator) -> dict:
    """Monte Carlo total influence ``I[f] = sum_k k W_k = n Pr_{x, i}[f(x) != f(x^(i))]`` and ``Var f``.

    ``x`` is uniform on {-1, 1}^n, ``i`` a uniform coordinate and ``x^(i)`` is ``x`` with bit ``i``
    flipped (O'Donnell 2014, Def. 2.27 and Thm 2.38). This measures the spectrum's mean degree
    ``I[f] / Var f`` (:func:`mean_degree`) without the ``2^n`` truth table, so it works at any ``n``.

    Parameters
    ----------
    f : callable
        As in :func:`noise_sensitivity_on`.
    n : int
        Number of input bits, ``n >= 1``.
    num_samples : int
        Number of pairs ``(x, x^(i))``, ``>= 2``.
    rng : numpy.random.Generator

    Returns
    -------
    dict of float
        ``influence`` (the estimate), ``se`` (its standard error) and ``var`` (``1 - E[f]^2`` from
        the ``2 num_samples`` outputs).

    Raises
    ------
    ValueError
        On a bad ``n`` or ``num_samples``, or if ``f`` returns the wrong shape.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> r = total_influence_mc(lambda z: z.prod(axis=1), 5, num_samples=100, rng=np.random.default_rng(0))
    >>> r["influence"], r["se"]
    (5.0, 0.0)
    """
    rng = check_rng("rng", rng)
    n = check_int("n", n, minimum=1)
    num_samples = check_int("num_samples", num_samples, minimum=2)
    x = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=(num_samples, n))
    y = x.copy()
    y[np.arange(num_samples), rng.integers(0, n, num_samples)] *= -1.0
    fx = _check_outputs("x", f(x), num_samples)
    fy = _check_outputs("x^(i)", f(y), num_samples)
    p = float(np.mean(fx != fy))
    return {"influence": n * p, "se": n * math.sqrt(p * (1 - p) / num_samples),
            "var": float(1.0 - np.mean(np.concatenate([fx, fy])) ** 2)}
