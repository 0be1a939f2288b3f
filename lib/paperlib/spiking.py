"""Random leaky integrate-and-fire (LIF) spiking networks seen as Boolean functions.

Model: the sign-LIF ("sLIF") network of Araya, Datres and Kutyniok, *Random Spiking Neural Networks
are Stable and Spectrally Simple*, ICLR 2026 (arXiv:2511.00904), Sec. 2. A neuron with weights
``w``, leak ``beta`` in [0, 1] and threshold ``theta > 0`` driven by inputs ``x_1, ..., x_T`` runs

    u_t = beta u_{t-1} + w^T x_t - (theta / 2) (s_{t-1} + 1),     s_t = sign(u_t - theta),

with spikes ``s_t`` in {-1, +1} (+1 = spike), reset by subtraction of ``theta`` after a spike, and
``u_0 = 0``, ``s_0 = -1``. A layer feeds its spike vector at step ``t`` to the next layer at the same
step. Weights are i.i.d. ``N(0, 1 / fan_in)``. Inputs are static (``x_t = x`` for all ``t``), the way
images are shown to spiking networks. With one output neuron and an odd horizon ``T`` the network is
a Boolean function

    f(x) = sign(sum_t s_t^{(L)}(x)),    f : {-1, 1}^n -> {-1, 1}

(a single-output version of the paper's spike-count argmax classifier, with no ties), whose noise
sensitivity and Fourier spectrum :mod:`paperlib.boolean_fourier` measures.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

from ._validation import as_array, check_int, check_probability, check_real

__all__ = [
    "init_weights",
    "lif_spikes",
    "lif_readout",
    "first_step_flip_probability",
    "readout_threshold",
    "step_flip_probabilities",
    "readout_expected_level_weights",
    "expected_noise_sensitivity",
]


def _check_model(num_steps, beta, theta, *, odd=False):
    num_steps = check_int("num_steps", num_steps, minimum=1)
    if odd and num_steps % 2 == 0:
        raise ValueError(f"num_steps must be odd so that sign(spike count) has no ties, got {num_steps}")
    beta = check_real("beta", beta, minimum=0.0, maximum=1.0)
    theta = check_real("theta", theta, minimum=0.0, strict_min=True)
    return num_steps, beta, theta


def init_weights(widths, *, rng: np.random.Generator) -> list:
    """Random weight matrices with i.i.d. ``N(0, 1 / d_in)`` entries (paper, Sec. 2).

    Parameters
    ----------
    widths : sequence of int
        ``(n, d_1, ..., d_L)``: input dimension then the width of each layer, all ``>= 1``.
    rng : numpy.random.Generator
        Keyword-only source of randomness.

    Returns
    -------
    list of ndarray of float32, shapes (d_{l-1}, d_l)

    Raises
    ------
    ValueError
        If fewer than two widths are given or one is not a positive integer.

    Examples
    --------
    >>> [w.shape for w in init_weights((16, 8, 1), rng=np.random.default_rng(0))]
    [(16, 8), (8, 1)]
    """
    widths = [check_int(f"widths[{i}]", w, minimum=1) for i, w in enumerate(widths)]
    if len(widths) < 2:
        raise ValueError(f"widths must list the input dimension and at least one layer, got {widths}")
    return _init(rng, widths)


def _init(rng, widths):
    return [
        rng.standard_normal((a, b), dtype=np.float32) / np.float32(math.sqrt(a))
        for a, b in zip(widths[:-1], widths[1:])
    ]


def _lif_layer(currents, beta, theta):
    """currents (T, ...) -> spikes (T, ...) in {-1, 1}: the sLIF recursion, stepped over t."""
    u = np.zeros(currents.shape[1:], np.float32)
    s = -np.ones_like(u)
    spikes = np.empty(currents.shape, np.float32)
    beta, half_theta, theta = np.float32(beta), np.float32(0.5 * theta), np.float32(theta)
    for t in range(currents.shape[0]):  # time steps (T <= tens); each step is vectorised
        u = beta * u + currents[t] - half_theta * (s + 1.0)
        s = np.where(u > theta, np.float32(1.0), np.float32(-1.0))
        spikes[t] = s
    return spikes


def _forward(x, weights, num_steps, beta, theta):
    """x (B, n) -> spikes of the last layer (T, B, d_L).

    Arrays are kept feature-major, (T, d, B), so that each layer is a stack of T products
    (d_out, d_in) @ (d_in, B): much faster in BLAS than (T B, d_in) @ (d_in, d_out) for small d.
    """
    # static input: the first layer's current w^T x is the same at every step
    first = weights[0].T @ x.T  # (d_1, B)
    spikes = _lif_layer(np.broadcast_to(first, (num_steps, *first.shape)), beta, theta)
    for w in weights[1:]:
        spikes = _lif_layer(np.matmul(np.ascontiguousarray(w.T), spikes), beta, theta)
    return spikes.transpose(0, 2, 1)


def _check_x_weights(x, weights):
    x = as_array("x", x, ndim=2, dtype=np.float32)
    if not np.all(np.abs(x) == 1):
        raise ValueError("x must have entries in {-1, 1}")
    if len(weights) == 0:
        raise ValueError("weights must contain at least one matrix")
    d = x.shape[1]
    ws = []
    for i, w in enumerate(weights):
        w = as_array(f"weights[{i}]", w, ndim=2, dtype=np.float32)
        if w.shape[0] != d:
            raise ValueError(f"weights[{i}] must have shape ({d}, d_out) to match its input, got {w.shape}")
        d = w.shape[1]
        ws.append(w)
    return x, ws


def lif_spikes(x, weights, *, num_steps: int, beta: float = 1.0, theta: float = 0.5) -> np.ndarray:
    """Spike trains of the last layer of an sLIF network driven by static inputs (paper, Sec. 2).

    Parameters
    ----------
    x : array_like, shape (B, n)
        Inputs in {-1, 1}, shown at each of the ``num_steps`` steps.
    weights : sequence of arrays, shapes (n, d_1), (d_1, d_2), ..., (d_{L-1}, d_L)
    num_steps : int
        Time horizon ``T >= 1``.
    beta : float, default 1.0
        Leak in ``[0, 1]``; ``beta = 1`` is the integrate-and-fire neuron of the main theorems.
    theta : float, default 0.5
        Firing threshold ``> 0`` (also the amount subtracted at reset).

    Returns
    -------
    ndarray of float32, shape (T, B, d_L)
        ``s_t`` in {-1, 1} for ``t = 1..T``.

    Raises
    ------
    ValueError
        On a wrong shape, entries of ``x`` outside {-1, 1}, or a bad ``num_steps``/``beta``/``theta``.
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta)
    x, ws = _check_x_weights(x, weights)
    return _forward(x, ws, num_steps, beta, theta)


def lif_readout(x, weights, *, num_steps: int, beta: float = 1.0, theta: float = 0.5) -> np.ndarray:
    """The network as a Boolean function: ``f(x) = sign(sum_t s_t)`` of its single output neuron.

    Parameters
    ----------
    x : array_like, shape (B, n)
        Inputs in {-1, 1}.
    weights : sequence of arrays; the last has shape (d_{L-1}, 1)
    num_steps : int
        Odd time horizon ``T`` (so the spike count has no ties).
    beta, theta : float
        As in :func:`lif_spikes`.

    Returns
    -------
    ndarray of float32, shape (B,)
        Values in {-1, 1}.

    Raises
    ------
    ValueError
        If ``num_steps`` is even, the last layer has more than one neuron, or as :func:`lif_spikes`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ws = init_weights((4, 1), rng=rng)
    >>> lif_readout(np.ones((1, 4)), ws, num_steps=5).shape
    (1,)
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    x, ws = _check_x_weights(x, weights)
    if ws[-1].shape[1] != 1:
        raise ValueError(f"weights[-1] must have one output neuron, got shape {ws[-1].shape}")
    return np.sign(_forward(x, ws, num_steps, beta, theta)[..., 0].sum(axis=0))


def first_step_flip_probability(n: int, delta: float, theta: float) -> float:
    """Exact ``Pr[s_1(x) != s_1(y)]`` for one neuron with ``w ~ N(0, I_n / n)`` under delta-noise.

    Given ``H`` flipped coordinates, ``(w^T x, w^T y)`` is a standard bivariate normal pair with
    correlation ``rho = 1 - 2 H / n``, and the two spikes differ with probability

        2 (Q(theta) - Phi_2(-theta, -theta; rho)) = 4 T(theta, sqrt((1 - rho) / (1 + rho))),

    where ``T`` is Owen's T function (for ``theta = 0`` this is Sheppard's ``arccos(rho) / pi``).
    The result averages this over ``H ~ Binomial(n, delta)``. For small ``delta`` it is
    ``~ (2 / pi) exp(-theta^2 / 2) sqrt(delta)``: at ``delta = 1 / sqrt(n)`` it falls like
    ``n^{-1/4}`` (the mechanism of the paper's Thm 1 at ``t = 1``).

    Parameters
    ----------
    n : int
        Input dimension ``>= 1``.
    delta : float
        Per-coordinate flip probability in ``[0, 1]``.
    theta : float
        Threshold, any real (``theta`` of the sLIF neuron; see also :func:`readout_threshold`).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On a bad ``n``, ``delta`` or ``theta``.
    """
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    theta = check_real("theta", theta)
    h = np.arange(n + 1)
    pmf = stats.binom.pmf(h, n, delta)
    keep = (pmf > 1e-15) & (h > 0)
    rho = 1.0 - 2.0 * h[keep] / n
    with np.errstate(divide="ignore"):
        a = np.sqrt((1.0 - rho) / np.maximum(1.0 + rho, 0.0))
    # rho = -1 (all bits flipped): y = -x, the spikes differ iff |w^T x| > theta
    p = np.where(np.isfinite(a), 4.0 * special.owens_t(theta, np.where(np.isfinite(a), a, 0.0)),
                 2.0 * stats.norm.sf(abs(theta)))
    return float(np.sum(pmf[keep] * p))


def readout_threshold(*, num_steps: int, beta: float = 1.0, theta: float = 0.5, tol: float = 1e-10) -> float:
    """Smallest constant drive ``c`` for which one sLIF neuron has ``sign(sum_t s_t) = +1``.

    With static input a single neuron's membrane is driven by the constant ``c = w^T x``, and its
    spike count is non-decreasing in ``c`` (checked in the tests). Hence its readout is the linear
    threshold function ``f(x) = sign(w^T x - theta_eff)`` with ``theta_eff`` returned here, and
    ``first_step_flip_probability(n, delta, theta_eff)`` is its exact noise sensitivity.

    Parameters
    ----------
    num_steps : int
        Odd horizon ``T``.
    beta, theta : float
        As in :func:`lif_spikes`.
    tol : float, default 1e-10
        Bisection tolerance ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On an even ``num_steps`` or a bad ``beta``/``theta``/``tol``.
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    tol = check_real("tol", tol, minimum=0.0, strict_min=True)

    def readout(c):
        u, s, count = 0.0, -1.0, 0.0
        for _ in range(num_steps):
            u = beta * u + c - 0.5 * theta * (s + 1.0)
            s = 1.0 if u > theta else -1.0
            count += s
        return count > 0

    lo, hi = 0.0, theta + 1.0  # readout(0) is -1, readout(theta + 1) is +1 (a spike at every step)
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if readout(mid) else (mid, hi)
    return hi


def _upper_orthant(a, b, rho):
    """``Pr[X > a, Y > b]`` for a standard bivariate normal pair with correlation ``rho``, a, b > 0.

    Owen's (1956) formula: ``Q(a)/2 + Q(b)/2 - T(a, (b - rho a)/(a s)) - T(b, (a - rho b)/(b s))``
    with ``s = sqrt(1 - rho^2)``; broadcasts over its arguments.
    """
    s = np.sqrt(np.maximum(1.0 - rho**2, 1e-300))
    return (0.5 * stats.norm.sf(a) + 0.5 * stats.norm.sf(b)
            - special.owens_t(a, (b - rho * a) / (a * s)) - special.owens_t(b, (a - rho * b) / (b * s)))


def _spike_switches(num_steps, theta):
    """Drives ``b_i`` at which the spike train of one IF neuron (beta = 1) changes, and the signs.

    With constant drive ``c`` the neuron spikes at step ``t`` iff ``t c - theta N_{t-1}(c) > theta``
    (``N_t`` = spikes so far), so every switch sits at ``c = theta k / t`` with ``1 <= k <= t <= T``.
    Returns ``b`` (m,) and ``eps`` (T, m) with ``1[s_t(c) = +1] = sum_i eps[t, i] 1[c > b_i]``.
    """
    b = np.unique([theta * k / t for t in range(1, num_steps + 1) for k in range(1, t + 1)])
    probes = np.concatenate([[b[0] - 1.0], 0.5 * (b[:-1] + b[1:]), [b[-1] + 1.0]])
    on = np.empty((num_steps, probes.size))
    for j, c in enumerate(probes):  # the scalar recursion at one drive per piece (a few dozen)
        u, s = 0.0, -1.0
        for t in range(num_steps):
            u = u + c - 0.5 * theta * (s + 1.0)
            s = 1.0 if u > theta else -1.0
            on[t, j] = s > 0
    if np.any(on[:, 0]):
        raise AssertionError("a neuron with negative drive cannot spike")
    return b, np.diff(on, axis=1)


def step_flip_probabilities(n: int, delta: float, *, num_steps: int, theta: float = 0.5) -> np.ndarray:
    """Exact ``Pr_{w,x,xi}[s_t(x) != s_t(y)]``, ``t = 1..T``, for one IF neuron (beta = 1).

    With static input the neuron sees the constant drive ``c = w^T x`` at every step, and its spike
    at step ``t`` is an indicator of a union of intervals of ``c`` whose endpoints are ``theta k / t``
    (``1 <= k <= t``); the reset by subtraction decides which intervals. Writing
    ``1[s_t = +1] = sum_i eps_i 1[c > b_i]`` and ``(X, Y) = (w^T x, w^T y)`` (standard normal,
    correlation ``rho = 1 - 2H/n`` given ``H`` flipped bits),

        Pr[s_t(x) != s_t(y) | H] = 2 sum_{i,j} eps_i eps_j (Q(max(b_i, b_j)) - Pr[X > b_i, Y > b_j]),

    averaged over ``H ~ Binomial(n, delta)``. At ``t = 1`` this is :func:`first_step_flip_probability`.
    It is the exact counterpart of the per-step quantity bounded by the paper's Thm 1 (``<= C (1 +
    theta) t^2 sqrt(nu)``), for ``w ~ N(0, I_n / n)``.

    Parameters
    ----------
    n : int
        Input dimension ``>= 1``.
    delta : float
        Per-coordinate flip probability in ``[0, 1)``.
    num_steps : int
        Horizon ``T >= 1``.
    theta : float, default 0.5
        Threshold ``> 0``.

    Returns
    -------
    ndarray of float64, shape (T,)

    Raises
    ------
    ValueError
        On a bad ``n``, ``delta``, ``num_steps`` or ``theta``.
    """
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    num_steps, _, theta = _check_model(num_steps, 1.0, theta)
    b, eps = _spike_switches(num_steps, theta)
    h = np.arange(1, n + 1)
    pmf = stats.binom.pmf(h, n, delta)
    keep = pmf > 1e-15
    rho = np.maximum(1.0 - 2.0 * h[keep] / n, -1.0 + 1e-12)[:, None, None]
    bi, bj = b[None, :, None], b[None, None, :]
    pair = stats.norm.sf(np.maximum(bi, bj)) - _upper_orthant(bi, bj, rho)  # (H, m, m)
    per_h = 2.0 * np.einsum("ti,hij,tj->ht", eps, pair, eps)
    return pmf[keep] @ per_h


def readout_expected_level_weights(n: int, *, num_steps: int, beta: float = 1.0, theta: float = 0.5) -> np.ndarray:
    """Exact ``E_w W_k[f_w]``, ``k = 0..n``, for the readout of one sLIF neuron, ``w ~ N(0, I_n / n)``.

    The readout is the threshold function ``sign(w^T x - theta_eff)`` (:func:`readout_threshold`).
    For any ``f``, ``W_k[f] = E_{x,z}[f(x) f(z) K_k(d(x, z))]`` with ``x, z`` independent uniform and
    the Krawtchouk polynomial ``K_k(h) = sum_j (-1)^j C(h, j) C(n - h, k - j)``. Averaged over ``w``,
    ``E_w[f(x) f(z)] = 1 - 2 p(h)`` depends only on ``h = d(x, z)`` through the Gaussian closed form
    ``p(h) = 4 T(theta_eff, sqrt(h / (n - h)))`` (and ``2 Q(theta_eff)`` at ``h = n``), so

        E_w W_k = 2^{-n} sum_h C(n, h) K_k(h) (1 - 2 p(h)).

    This is the exact spectrum against which the chapter's sampled spectra (paper, Cor. 1) are checked.

    Parameters
    ----------
    n : int
        Input dimension, ``1 <= n <= 60``.
    num_steps : int
        Odd horizon ``T``.
    beta, theta : float
        As in :func:`lif_spikes`.

    Returns
    -------
    ndarray of float64, shape (n + 1,)
        Sums to 1.

    Raises
    ------
    ValueError
        On a bad ``n``, an even ``num_steps`` or a bad ``beta``/``theta``.
    """
    n = check_int("n", n, minimum=1, maximum=60)
    theta_eff = readout_threshold(num_steps=num_steps, beta=beta, theta=theta)
    h = np.arange(n + 1)
    with np.errstate(divide="ignore"):
        a = np.sqrt(h / np.maximum(n - h, 0))
    p = np.where(h < n, 4.0 * special.owens_t(theta_eff, np.where(h < n, a, 0.0)), 2.0 * stats.norm.sf(theta_eff))
    k = h[:, None]
    j = np.arange(n + 1)[None, None, :]
    kraw = np.sum((-1.0) ** j * special.comb(h[None, :, None], j) * special.comb(n - h[None, :, None], k[..., None] - j), axis=-1)
    return kraw @ (special.comb(n, h) * (1.0 - 2.0 * p)) / 2.0**n


def _ens_one_net(rng, n, widths, num_steps, beta, theta, delta, num_inputs):
    weights = _init(rng, (n, *widths))
    x = (1 - 2 * rng.integers(0, 2, (num_inputs, n), dtype=np.int8)).astype(np.float32)
    flips = rng.random((num_inputs, n), dtype=np.float32) < delta
    y = np.where(flips, -x, x)
    s = _forward(np.concatenate([x, y]), weights, num_steps, beta, theta)[..., 0]  # (T, 2B)
    sx, sy = s[:, :num_inputs], s[:, num_inputs:]
    fx, fy = np.sign(sx.sum(0)), np.sign(sy.sum(0))
    return np.mean(sx != sy, axis=1), np.mean(fx != fy), 1.0 - np.mean(np.concatenate([fx, fy])) ** 2


def expected_noise_sensitivity(
    n: int,
    delta: float,
    *,
    hidden_layers: int = 0,
    width: int | None = None,
    num_steps: int = 5,
    beta: float = 1.0,
    theta: float = 0.5,
    num_nets: int = 24,
    num_inputs: int = 256,
    rng: np.random.Generator,
) -> dict:
    """Monte Carlo expected noise sensitivity (ENS) of random sLIF networks (paper, Sec. 3-4).

    For each of ``num_nets`` independent weight draws, ``num_inputs`` uniform inputs ``x`` and noisy
    copies ``y = x * xi`` (``xi_j = -1`` with probability ``delta``) are fed to the network
    ``n -> width -> ... -> width -> 1`` (``hidden_layers`` hidden layers). Recorded per net: the
    per-step spike disagreement ``Pr[s_t(x) != s_t(y)]`` of the output neuron, the readout
    sensitivity ``NS = Pr[f(x) != f(y)]``, and the readout variance ``Var f = 1 - E[f]^2``
    (estimated from the ``2 B`` outputs). Since ``NS_delta <= Var f / 2`` for every ``delta <= 1/2``,
    ``NS / (Var f / 2)`` is a sensitivity normalised to [0, 1] (1 for a random function), which does
    not reward near-constant networks.

    Parameters
    ----------
    n : int
        Input dimension ``>= 1``.
    delta : float
        Flip probability in ``[0, 1]`` (the paper uses ``nu = 1 / sqrt(n)``).
    hidden_layers : int, default 0
        Number of hidden layers ``>= 0`` (0: a single neuron).
    width : int, optional
        Hidden width, default ``n`` (the paper's width = input dimension).
    num_steps : int, default 5
        Odd horizon ``T``.
    beta, theta : float
        As in :func:`lif_spikes`.
    num_nets, num_inputs : int
        Weight draws ``R >= 1`` and input pairs per draw ``B >= 1``.
    rng : numpy.random.Generator
        Keyword-only; one child generator is spawned per network.

    Returns
    -------
    dict of numpy arrays
        ``per_step`` (R, T), ``ns`` (R,), ``var`` (R,).

    Raises
    ------
    ValueError
        On any bad size or parameter.
    """
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    hidden_layers = check_int("hidden_layers", hidden_layers, minimum=0)
    width = n if width is None else check_int("width", width, minimum=1)
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    num_nets = check_int("num_nets", num_nets, minimum=1)
    num_inputs = check_int("num_inputs", num_inputs, minimum=1)
    widths = (width,) * hidden_layers + (1,)
    per_step, ns, var = zip(*(
        _ens_one_net(child, n, widths, num_steps, beta, theta, delta, num_inputs)
        for child in rng.spawn(num_nets)  # one network per iteration, all its inputs at once
    ))
    return {"per_step": np.array(per_step, np.float64), "ns": np.array(ns, np.float64),
            "var": np.array(var, np.float64)}
