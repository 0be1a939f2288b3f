"""Exact noise-sensitivity laws for one random sign-LIF neuron driven by a static input.

With static input ``x`` and weights ``w ~ N(0, I_n / n)`` the neuron of :mod:`paperlib.boolean_analysis.spiking` sees
the same drive ``c = w^T x`` at every step, so each spike ``s_t`` and the spike-count readout are
deterministic functions of one Gaussian number. Under input noise the pair ``(w^T x, w^T y)`` is a
bivariate normal whose correlation depends only on how many entries were hit, and every probability
of a changed spike is a finite sum of bivariate-normal orthant probabilities, which Owen's ``T``
function evaluates exactly. These closed forms are our derivation; they sharpen the upper bounds of
Araya, Datres and Kutyniok, *Random Spiking Neural Networks are Stable and Spectrally Simple*,
ICLR 2026 (arXiv:2511.00904), Thm 1 (``Pr[s_t changes] <= C (1 + theta) t^2 sqrt(nu)``), into
equalities for this model.

References: D. B. Owen, "Tables for computing bivariate normal probabilities", Ann. Math. Statist.
27 (1956); W. F. Sheppard, Phil. Trans. R. Soc. A 192 (1899) (the case ``theta = 0``).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from ..core._validation import check_int, check_option, check_probability, check_real
from .spiking import NOISE_MODELS, _check_model

__all__ = [
    "first_step_flip_probability",
    "readout_threshold",
    "spike_switch_points",
    "step_flip_probabilities",
    "readout_expected_level_weights",
]


def _upper_orthant(a, b, rho):
    """``Pr[X > a, Y > b]`` for a standard bivariate normal pair with correlation ``rho``; a, b > 0.

    Owen's (1956) formula: ``Q(a)/2 + Q(b)/2 - T(a, (b - rho a)/(a s)) - T(b, (a - rho b)/(b s))``
    with ``s = sqrt(1 - rho^2)``; broadcasts over its arguments.
    """
    s = np.sqrt(np.maximum(1.0 - rho**2, 1e-300))
    return (0.5 * stats.norm.sf(a) + 0.5 * stats.norm.sf(b)
            - special.owens_t(a, (b - rho * a) / (a * s)) - special.owens_t(b, (a - rho * b) / (b * s)))


def first_step_flip_probability(n: int, delta: float, theta: float, *, noise: str = "flip") -> float:
    """Exact ``Pr_{w,x,noise}[1(w^T x > theta) != 1(w^T y > theta)]`` for ``w ~ N(0, I_n / n)``.

    This is the probability that the first spike of one sLIF neuron changes, and, with ``theta``
    replaced by :func:`readout_threshold`, the exact expected noise sensitivity of its readout.

    *Bit flips* (``noise="flip"``). Given ``H`` flipped coordinates, ``(w^T x, w^T y)`` is a standard
    bivariate normal pair with correlation ``rho = 1 - 2 H / n``, and the spikes differ with
    probability ``2 (Q(theta) - Phi_2(-theta, -theta; rho)) = 4 T(theta, sqrt((1 - rho) / (1 + rho)))``
    (Owen's ``T``; for ``theta = 0`` Sheppard's ``arccos(rho) / pi``), averaged over
    ``H ~ Binomial(n, delta)``. For small ``delta`` it is ``~ (2 / pi) exp(-theta^2 / 2) sqrt(delta)``.

    *Dropout* (``noise="dropout"``, sign inputs: a dropped entry becomes 0). Given ``D`` dropped
    entries, ``Y = w^T y`` has variance ``sigma^2 = 1 - D / n`` and covariance ``sigma^2`` with
    ``X = w^T x``, so the spikes differ with probability
    ``Q(theta) + Q(theta / sigma) - 2 Pr[X > theta, Y / sigma > theta / sigma]`` (correlation
    ``sigma``), averaged over ``D ~ Binomial(n, delta)``. To first order a dropout rate ``delta``
    acts like a flip rate ``delta / 4``.

    Parameters
    ----------
    n : int
        Input dimension ``>= 1``.
    delta : float
        Per-coordinate flip (or dropout) probability in ``[0, 1]``.
    theta : float
        Threshold; any real for flips, ``> 0`` for dropout.
    noise : {"flip", "dropout"}, default "flip"

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On a bad ``n``, ``delta``, ``theta`` or ``noise``.

    Examples
    --------
    >>> round(first_step_flip_probability(1024, 1024 ** -0.5, 0.5), 4)
    0.0993
    >>> round(first_step_flip_probability(1024, 1024 ** -0.5, 0.5, noise="dropout"), 4)
    0.0497
    """
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    noise = check_option("noise", noise, NOISE_MODELS)
    theta = check_real("theta", theta, minimum=0.0 if noise == "dropout" else None, strict_min=noise == "dropout")
    h = np.arange(n + 1)
    pmf = stats.binom.pmf(h, n, delta)
    keep = (pmf > 1e-15) & (h > 0)
    h = h[keep]
    if noise == "flip":
        rho = 1.0 - 2.0 * h / n
        with np.errstate(divide="ignore"):
            a = np.sqrt((1.0 - rho) / np.maximum(1.0 + rho, 0.0))
        # rho = -1 (all bits flipped): y = -x, the spikes differ iff |w^T x| > theta
        p = np.where(np.isfinite(a), 4.0 * special.owens_t(theta, np.where(np.isfinite(a), a, 0.0)),
                     2.0 * stats.norm.sf(abs(theta)))
    else:
        sigma = np.sqrt(1.0 - h / n)
        safe = np.where(sigma > 0, sigma, 1.0)
        both = _upper_orthant(theta, theta / safe, np.minimum(safe, 1.0 - 1e-15))
        # all entries dropped: Y = 0 never exceeds theta > 0
        p = np.where(sigma > 0, stats.norm.sf(theta) + stats.norm.sf(theta / safe) - 2.0 * both,
                     stats.norm.sf(theta))
    return float(np.sum(pmf[keep] * p))


def _scalar_spike_train(c, num_steps, beta, theta):
    u, fired, out = 0.0, False, []
    for _ in range(num_steps):
        u = beta * u + c - theta * fired
        fired = u > theta
        out.append(fired)
    return out


def readout_threshold(*, num_steps: int, beta: float = 1.0, theta: float = 0.5, tol: float = 1e-10) -> float:
    """Smallest constant drive ``c`` for which one sLIF neuron spikes in most of its ``T`` steps.

    With static input the membrane is driven by the constant ``c = w^T x``, and the spike count is
    non-decreasing in ``c`` (checked in the tests, for ``beta = 1`` and ``beta < 1``). Hence the
    readout is the linear threshold function ``f(x) = sign(w^T x - theta_eff)`` with ``theta_eff``
    returned here, and ``first_step_flip_probability(n, delta, theta_eff)`` is its exact noise
    sensitivity. For ``beta = 1``, ``theta_eff = (T + 1) theta / (2 T)``.

    Parameters
    ----------
    num_steps : int
        Odd horizon ``T``.
    beta, theta : float
        Leak in ``[0, 1]`` and threshold ``> 0``, as in :func:`paperlib.boolean_analysis.spiking.lif_spikes`.
    tol : float, default 1e-10
        Bisection tolerance ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On an even ``num_steps`` or a bad ``beta``/``theta``/``tol``.

    Examples
    --------
    >>> round(readout_threshold(num_steps=9, theta=0.5), 6)
    0.277778
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    tol = check_real("tol", tol, minimum=0.0, strict_min=True)
    lo, hi = 0.0, 2.0 * theta + 1.0  # no spike at c <= 0; a spike at every step for c >= 2 theta
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if 2 * sum(_scalar_spike_train(mid, num_steps, beta, theta)) > num_steps:
            hi = mid
        else:
            lo = mid
    return hi


def spike_switch_points(*, num_steps: int, beta: float = 1.0, theta: float = 0.5):
    """Drives ``b_i`` at which the spike train of one neuron with constant drive ``c`` changes.

    On an interval of ``c`` over which the spike history up to step ``t - 1`` is fixed, the membrane
    ``u_t = a_t c + e_t`` is affine with slope ``a_t = 1 + beta + ... + beta^{t-1} > 0``, so the spike
    at step ``t`` switches on at exactly one point ``c = (theta - e_t) / a_t`` of that interval.
    Splitting the intervals step by step gives every switch point exactly, for any leak (for
    ``beta = 1`` they are ``theta k / t``, ``1 <= k <= t``).

    Parameters
    ----------
    num_steps : int
        Horizon ``T >= 1``.
    beta, theta : float
        Leak in ``[0, 1]`` and threshold ``> 0``.

    Returns
    -------
    b : ndarray of float64, shape (m,)
        Sorted switch points, all ``> 0``.
    eps : ndarray of int64, shape (T, m)
        ``1[s_t = spike](c) = sum_i eps[t, i] 1[c > b_i]`` (each entry -1, 0 or 1).

    Raises
    ------
    ValueError
        On a bad ``num_steps``, ``beta`` or ``theta``.

    Examples
    --------
    >>> b, eps = spike_switch_points(num_steps=2, theta=1.0)
    >>> b.tolist(), eps.tolist()
    ([0.5, 1.0], [[0, 1], [1, 0]])
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta)
    # pieces: [lo, slope a, offset e, fired at t-1, history]; c <= 0 never spikes, c > 2 theta always
    pieces = [(-np.inf, 0.0, 0.0, False, ())]
    for _ in range(num_steps):
        bounds = [p[0] for p in pieces[1:]] + [np.inf]
        new = []
        for (lo, a, e, fired, hist), hi in zip(pieces, bounds):
            a, e = beta * a + 1.0, beta * e - theta * fired
            cut = (theta - e) / a  # spikes at this step iff c > cut
            if lo < cut < hi:
                new += [(lo, a, e, False, hist + (False,)), (cut, a, e, True, hist + (True,))]
            else:
                on = cut <= lo
                new.append((lo, a, e, on, hist + (on,)))
        pieces = new
    b = np.array([p[0] for p in pieces[1:]])
    on = np.array([p[4] for p in pieces], dtype=np.int64).T  # (T, m + 1): spike on each piece
    keep = np.concatenate([[True], np.any(np.diff(on, axis=1) != 0, axis=0)])  # drop non-switches
    return b[keep[1:]], np.diff(on[:, keep], axis=1)


def step_flip_probabilities(n: int, delta: float, *, num_steps: int, beta: float = 1.0,
                            theta: float = 0.5) -> np.ndarray:
    """Exact ``Pr_{w,x,xi}[s_t(x) != s_t(y)]``, ``t = 1..T``, for one sLIF neuron under bit flips.

    The spike at step ``t`` is ``sum_i eps_i 1[c > b_i]`` (:func:`spike_switch_points`) with
    ``c = w^T x``. With ``(X, Y) = (w^T x, w^T y)`` standard normal with correlation ``rho = 1 - 2H/n``
    given ``H`` flipped bits,

        Pr[s_t(x) != s_t(y) | H] = 2 sum_{i,j} eps_i eps_j (Q(max(b_i, b_j)) - Pr[X > b_i, Y > b_j]),

    averaged over ``H ~ Binomial(n, delta)``. At ``t = 1`` this is :func:`first_step_flip_probability`.
    It is the exact counterpart, for this model, of the per-step quantity that the paper's Thm 1
    bounds by ``C (1 + theta) t^2 sqrt(nu)``; it holds for any leak ``beta`` (the paper's theorems
    take ``beta = 1``).

    Parameters
    ----------
    n : int
        Input dimension ``>= 1``.
    delta : float
        Per-coordinate flip probability in ``[0, 1)``.
    num_steps : int
        Horizon ``T >= 1``.
    beta : float, default 1.0
        Leak in ``[0, 1]``.
    theta : float, default 0.5
        Threshold ``> 0``.

    Returns
    -------
    ndarray of float64, shape (T,)

    Raises
    ------
    ValueError
        On a bad ``n``, ``delta``, ``num_steps``, ``beta`` or ``theta``.

    Examples
    --------
    >>> step_flip_probabilities(1024, 1024 ** -0.5, num_steps=3).round(4).tolist()
    [0.0993, 0.1092, 0.1205]
    """
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    b, eps = spike_switch_points(num_steps=num_steps, beta=beta, theta=theta)
    h = np.arange(1, n + 1)
    pmf = stats.binom.pmf(h, n, delta)
    keep = pmf > 1e-15
    rho = np.maximum(1.0 - 2.0 * h[keep] / n, -1.0 + 1e-12)[:, None, None]
    bi, bj = b[None, :, None], b[None, None, :]
    pair = stats.norm.sf(np.maximum(bi, bj)) - _upper_orthant(bi, bj, rho)  # (H, m, m)
    per_h = 2.0 * np.einsum("ti,hij,tj->ht", eps.astype(np.float64), pair, eps.astype(np.float64))
    return pmf[keep] @ per_h


def readout_expected_level_weights(n: int, *, num_steps: int, beta: float = 1.0, theta: float = 0.5) -> np.ndarray:
    """Exact ``E_w W_k[f_w]``, ``k = 0..n``, for the readout of one sLIF neuron, ``w ~ N(0, I_n / n)``.

    The readout is the threshold function ``sign(w^T x - theta_eff)`` (:func:`readout_threshold`).
    For any ``f``, ``W_k[f] = E_{x,z}[f(x) f(z) K_k(d(x, z))]`` with ``x, z`` independent uniform and
    the Krawtchouk polynomial ``K_k(h) = sum_j (-1)^j C(h, j) C(n - h, k - j)``. Averaged over ``w``,
    ``E_w[f(x) f(z)] = 1 - 2 p(h)`` depends only on ``h = d(x, z)`` through the Gaussian closed form
    ``p(h) = 4 T(theta_eff, sqrt(h / (n - h)))`` (and ``2 Q(theta_eff)`` at ``h = n``), so

        E_w W_k = 2^{-n} sum_h C(n, h) K_k(h) (1 - 2 p(h)).

    Parameters
    ----------
    n : int
        Input dimension, ``1 <= n <= 40`` (float64 keeps the alternating Krawtchouk sums accurate to
        about 1e-10 there).
    num_steps : int
        Odd horizon ``T``.
    beta, theta : float
        As in :func:`readout_threshold`.

    Returns
    -------
    ndarray of float64, shape (n + 1,)
        Sums to 1.

    Raises
    ------
    ValueError
        On a bad ``n``, an even ``num_steps`` or a bad ``beta``/``theta``.

    Examples
    --------
    >>> readout_expected_level_weights(4, num_steps=5).round(3).tolist()
    [0.082, 0.684, 0.135, 0.08, 0.019]
    """
    n = check_int("n", n, minimum=1, maximum=40)
    theta_eff = readout_threshold(num_steps=num_steps, beta=beta, theta=theta)
    h = np.arange(n + 1)
    with np.errstate(divide="ignore"):
        a = np.sqrt(h / np.maximum(n - h, 0))
    p = np.where(h < n, 4.0 * special.owens_t(theta_eff, np.where(h < n, a, 0.0)), 2.0 * stats.norm.sf(theta_eff))
    k = h[:, None]
    j = np.arange(n + 1)[None, None, :]
    kraw = np.sum((-1.0) ** j * special.comb(h[None, :, None], j) * special.comb(n - h[None, :, None], k[..., None] - j), axis=-1)
    return kraw @ (special.comb(n, h) * (1.0 - 2.0 * p)) / 2.0**n
