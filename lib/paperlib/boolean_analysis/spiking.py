"""Random leaky integrate-and-fire (LIF) spiking networks seen as Boolean functions.

Model: the sign-LIF ("sLIF") network of Araya, Datres and Kutyniok, *Random Spiking Neural Networks
are Stable and Spectrally Simple*, ICLR 2026 (arXiv:2511.00904), Sec. 2. A neuron with weights
``w``, leak ``beta`` in [0, 1] and threshold ``theta > 0`` driven by inputs ``x_1, ..., x_T`` runs

    u_t = beta u_{t-1} + w^T x_t - theta 1[s_{t-1} = spike],     s_t = spike iff u_t > theta,

with reset by subtraction of ``theta`` after a spike, ``u_0 = 0`` and no spike at ``t = 0``. Two spike
codes are supported (``spike``):

* ``"sign"`` (the paper's sLIF, the case of its theorems): spikes ``s_t`` in {-1, +1}, so the reset
  term is ``(theta / 2)(s_{t-1} + 1)``, and the inputs are the bits ``x`` in {-1, 1}^n themselves;
* ``"heaviside"`` (the classical LIF the paper also simulates): spikes in {0, 1}, and the input bit
  ``x_j`` in {-1, 1} is presented as ``(1 + x_j) / 2`` in {0, 1}.

A layer feeds its spike vector at step ``t`` to the next layer at the same step. Weights are i.i.d.
``N(0, 1 / fan_in)``. Inputs are static (``x_t = x`` for all ``t``), the way images are shown to
spiking networks. With one output neuron and an odd horizon ``T`` the network is a Boolean function

    f(x) = +1 if the output neuron spikes in more than T / 2 of the T steps, else -1,

(for sign spikes ``f = sign(sum_t s_t)``): a single-output version of the paper's spike-count argmax
classifier, with no ties, whose noise sensitivity and Fourier spectrum :mod:`paperlib.boolean_analysis.boolean_fourier`
measures. Exact laws for one neuron live in :mod:`paperlib.boolean_analysis.spiking_exact`; surrogate-gradient training
in :mod:`paperlib.boolean_analysis.surrogate_gradient`.
"""

from __future__ import annotations

import math

import numpy as np

from ..core._validation import as_array, check_int, check_memory, check_option, check_probability, check_real, check_rng

__all__ = [
    "SPIKE_CODES",
    "NOISE_MODELS",
    "init_weights",
    "lif_spikes",
    "lif_readout",
    "perturb",
    "expected_noise_sensitivity",
]

#: Spike codes: ``"sign"`` (spikes in {-1, 1}, the paper's sLIF) and ``"heaviside"`` (spikes in {0, 1}).
SPIKE_CODES = ("sign", "heaviside")
#: Input perturbations: ``"flip"`` (each bit flipped with probability delta, the paper's noise) and
#: ``"dropout"`` (each input entry set to 0 with probability delta, the paper's comparison).
NOISE_MODELS = ("flip", "dropout")


def _check_model(num_steps, beta, theta, *, odd=False):
    num_steps = check_int("num_steps", num_steps, minimum=1)
    if odd and num_steps % 2 == 0:
        raise ValueError(f"num_steps must be odd so that the spike-count readout has no ties, got {num_steps}")
    beta = check_real("beta", beta, minimum=0.0, maximum=1.0)
    theta = check_real("theta", theta, minimum=0.0, strict_min=True)
    return num_steps, beta, theta


def init_weights(widths, *, rng: np.random.Generator) -> list:
    """Random weight matrices with i.i.d. ``N(0, 1 / d_in)`` entries (paper, Sec. 2).

    Parameters
    ----------
    widths : sequence of int, shape (L + 1,)
        ``(n, d_1, ..., d_L)``: input dimension then the width of each layer, all ``>= 1``.
    rng : numpy.random.Generator
        Keyword-only source of randomness.

    Returns
    -------
    list of ndarray of float32, shapes (d_{l-1}, d_l)

    Raises
    ------
    ValueError
        If ``widths`` is not a 1-d sequence of at least two positive integers.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> [w.shape for w in init_weights((16, 8, 1), rng=np.random.default_rng(0))]
    [(16, 8), (8, 1)]
    """
    rng = check_rng("rng", rng)
    widths = as_array("widths", widths, ndim=1, dtype=np.int64)
    if widths.size < 2 or np.any(widths < 1):
        raise ValueError(f"widths must list the input dimension and at least one layer, all >= 1, got {widths.tolist()}")
    return _init(rng, [int(w) for w in widths])


def _init(rng, widths):
    return [
        rng.standard_normal((a, b), dtype=np.float32) / np.float32(math.sqrt(a))
        for a, b in zip(widths[:-1], widths[1:])
    ]


def _lif_layer(currents, beta, theta, spike):
    """currents (T, ...) -> spikes (T, ...): the LIF recursion with reset by subtraction, stepped over t."""
    u = np.zeros(currents.shape[1:], np.float32)
    fired = np.zeros(currents.shape[1:], np.float32)  # 1[s_{t-1} = spike]; no spike before t = 1
    spikes = np.empty(currents.shape, np.float32)
    beta, theta = np.float32(beta), np.float32(theta)
    lo = np.float32(-1.0 if spike == "sign" else 0.0)
    for t in range(currents.shape[0]):  # time steps (T <= tens); each step is vectorised
        u = beta * u + currents[t] - theta * fired
        fired = (u > theta).astype(np.float32)
        spikes[t] = np.where(fired > 0, np.float32(1.0), lo)
    return spikes


def _encode(x, spike):
    """Inputs in {-1, 0, 1} (0: dropped) -> the model's input code: x itself, or 1[x = 1] for Heaviside."""
    return x if spike == "sign" else (x > 0).astype(np.float32)


def _forward(inputs, weights, num_steps, beta, theta, spike):
    """Model-coded inputs (B, n) -> spikes of the last layer (T, B, d_L).

    Arrays are kept feature-major, (T, d, B), so that each layer is a stack of T products
    (d_out, d_in) @ (d_in, B): much faster in BLAS than (T B, d_in) @ (d_in, d_out) for small d.
    """
    first = weights[0].T @ inputs.T  # static input: the first layer's current is the same at every step
    spikes = _lif_layer(np.broadcast_to(first, (num_steps, *first.shape)), beta, theta, spike)
    for w in weights[1:]:
        spikes = _lif_layer(np.matmul(np.ascontiguousarray(w.T), spikes), beta, theta, spike)
    return spikes.transpose(0, 2, 1)


def _check_x_weights(x, weights):
    x = as_array("x", x, ndim=2, dtype=np.float32)
    if not np.all((x == 1) | (x == -1) | (x == 0)):
        raise ValueError("x must have entries in {-1, 1} (or 0 for a dropped input)")
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


def lif_spikes(x, weights, *, num_steps: int, beta: float = 1.0, theta: float = 0.5, spike: str = "sign") -> np.ndarray:
    """Spike trains of the last layer of a LIF network driven by static inputs (paper, Sec. 2).

    Parameters
    ----------
    x : array_like, shape (B, n)
        Input bits in {-1, 1}, shown at each of the ``num_steps`` steps (as ``(1 + x) / 2`` for
        Heaviside spikes); an entry 0 marks an input removed by dropout (:func:`perturb`), which is
        0 in either code.
    weights : sequence of arrays, shapes (n, d_1), (d_1, d_2), ..., (d_{L-1}, d_L)
    num_steps : int
        Time horizon ``T >= 1``.
    beta : float, default 1.0
        Leak in ``[0, 1]``; ``beta = 1`` is the integrate-and-fire neuron of the main theorems.
    theta : float, default 0.5
        Firing threshold ``> 0`` (also the amount subtracted at reset).
    spike : {"sign", "heaviside"}, default "sign"
        Spike code, see :data:`SPIKE_CODES`.

    Returns
    -------
    ndarray of float32, shape (T, B, d_L)
        Spikes in {-1, 1} (sign) or {0, 1} (Heaviside) for ``t = 1..T``.

    Raises
    ------
    ValueError
        On a wrong shape, entries of ``x`` outside {-1, 1}, or a bad ``num_steps``/``beta``/``theta``/``spike``.

    Examples
    --------
    >>> ws = init_weights((4, 2), rng=np.random.default_rng(0))
    >>> lif_spikes(np.ones((3, 4)), ws, num_steps=5).shape
    (5, 3, 2)
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta)
    spike = check_option("spike", spike, SPIKE_CODES)
    x, ws = _check_x_weights(x, weights)
    return _forward(_encode(x, spike), ws, num_steps, beta, theta, spike)


def _readout(spikes):
    """(T, B) spikes of the output neuron -> (B,) labels: +1 iff it spiked in more than T/2 steps."""
    fired = spikes > 0
    return np.where(2 * fired.sum(axis=0) > spikes.shape[0], np.float32(1.0), np.float32(-1.0))


def lif_readout(x, weights, *, num_steps: int, beta: float = 1.0, theta: float = 0.5, spike: str = "sign") -> np.ndarray:
    """The network as a Boolean function: ``+1`` iff its single output neuron spikes in most steps.

    For sign spikes this is ``f(x) = sign(sum_t s_t)``.

    Parameters
    ----------
    x : array_like, shape (B, n)
        Inputs in {-1, 1} (0 for a dropped input), as in :func:`lif_spikes`.
    weights : sequence of arrays; the last has shape (d_{L-1}, 1)
    num_steps : int
        Odd time horizon ``T`` (so the spike count has no ties).
    beta, theta : float
        As in :func:`lif_spikes`.
    spike : {"sign", "heaviside"}, default "sign"

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
    >>> ws = init_weights((4, 1), rng=np.random.default_rng(0))
    >>> lif_readout(np.array([[1.0, 1.0, 1.0, 1.0], [-1.0, -1.0, -1.0, -1.0]]), ws, num_steps=5).tolist()
    [-1.0, 1.0]
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    spike = check_option("spike", spike, SPIKE_CODES)
    x, ws = _check_x_weights(x, weights)
    if ws[-1].shape[1] != 1:
        raise ValueError(f"weights[-1] must have one output neuron, got shape {ws[-1].shape}")
    return _readout(_forward(_encode(x, spike), ws, num_steps, beta, theta, spike)[..., 0])


def _perturb(x, delta, noise, rng):
    hit = rng.random(x.shape, dtype=np.float32) < delta
    return np.where(hit, -x if noise == "flip" else np.float32(0.0), x)


def perturb(x, delta: float, *, noise: str = "flip", rng: np.random.Generator) -> np.ndarray:
    """A noisy copy ``y`` of input bits ``x``: each entry is hit independently with probability ``delta``.

    ``"flip"``: ``y_j = -x_j`` (the paper's ``y = x * xi``). ``"dropout"``: the entry is removed,
    ``y_j = 0``, which :func:`lif_spikes` presents as 0 in either spike code. For sign inputs this
    halves the entry's change (from ``x_j`` to 0 instead of ``-x_j``); for Heaviside inputs in
    {0, 1} it only changes entries equal to 1, which is why dropout is the milder perturbation
    (paper, Sec. 5).

    Parameters
    ----------
    x : array_like, shape (B, n)
        Bits in {-1, 1}.
    delta : float
        Probability in ``[0, 1]`` that an entry is hit.
    noise : {"flip", "dropout"}, default "flip"
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of float32, shape (B, n)
        Entries in {-1, 1} (flip) or {-1, 0, 1} (dropout, sign code).

    Raises
    ------
    ValueError
        On a bad ``x``, ``delta`` or ``noise``.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> perturb(np.ones((1, 6)), 0.5, noise="dropout", rng=np.random.default_rng(1)).tolist()
    [[0.0, 1.0, 1.0, 1.0, 0.0, 0.0]]
    """
    rng = check_rng("rng", rng)
    x = as_array("x", x, ndim=2, dtype=np.float32)
    if not np.all(np.abs(x) == 1):
        raise ValueError("x must have entries in {-1, 1}")
    delta = check_probability("delta", delta)
    noise = check_option("noise", noise, NOISE_MODELS)
    return _perturb(x, np.float32(delta), noise, rng)


def _ens_one_net(rng, n, widths, num_steps, beta, theta, delta, num_inputs, spike, noise):
    weights = _init(rng, (n, *widths))
    x = (1 - 2 * rng.integers(0, 2, (num_inputs, n), dtype=np.int8)).astype(np.float32)
    y = _perturb(x, np.float32(delta), noise, rng)
    inputs = _encode(np.concatenate([x, y]), spike)
    s = _forward(inputs, weights, num_steps, beta, theta, spike)[..., 0]  # (T, 2B)
    sx, sy = s[:, :num_inputs], s[:, num_inputs:]
    fx, fy = _readout(sx), _readout(sy)
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
    spike: str = "sign",
    noise: str = "flip",
    num_nets: int = 24,
    num_inputs: int = 256,
    rng: np.random.Generator,
) -> dict:
    """Monte Carlo expected noise sensitivity (ENS) of random LIF networks (paper, Sec. 3-5).

    For each of ``num_nets`` independent weight draws, ``num_inputs`` uniform inputs ``x`` and noisy
    copies ``y`` (:func:`perturb`) are fed to the network ``n -> width -> ... -> width -> 1``
    (``hidden_layers`` hidden layers). Recorded per net: the per-step spike disagreement
    ``Pr[s_t(x) != s_t(y)]`` of the output neuron, the readout sensitivity ``NS = Pr[f(x) != f(y)]``,
    and the readout variance ``Var f = 1 - E[f]^2`` (estimated from the ``2 B`` outputs). Since
    ``NS_delta <= Var f / 2`` for bit flips with ``delta <= 1/2``, ``NS / (Var f / 2)`` is a
    sensitivity normalised to [0, 1] (1 for a random function), which does not reward near-constant
    networks.

    Parameters
    ----------
    n : int
        Input dimension ``>= 1``.
    delta : float
        Probability in ``[0, 1]`` that an input entry is hit (the paper uses ``nu = 1 / sqrt(n)``).
    hidden_layers : int, default 0
        Number of hidden layers ``>= 0`` (0: a single neuron).
    width : int, optional
        Hidden width, default ``n`` (the paper's width = input dimension).
    num_steps : int, default 5
        Odd horizon ``T``.
    beta, theta : float
        As in :func:`lif_spikes`.
    spike : {"sign", "heaviside"}, default "sign"
        Spike code (:data:`SPIKE_CODES`).
    noise : {"flip", "dropout"}, default "flip"
        Input perturbation (:data:`NOISE_MODELS`); a dropped entry is 0 in the model's input code.
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
        On any bad size or parameter, or when one network's float32 inputs and states
        (``16 * num_inputs * max(n, width) * (num_steps + 1)`` bytes) would exceed
        ``paperlib.core._validation.memory_limit`` (8 GiB by default).
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> r = expected_noise_sensitivity(64, 0.0, num_nets=2, num_inputs=8, rng=np.random.default_rng(0))
    >>> r["ns"].tolist(), r["per_step"].shape
    ([0.0, 0.0], (2, 5))
    """
    rng = check_rng("rng", rng)
    n = check_int("n", n, minimum=1)
    delta = check_probability("delta", delta)
    hidden_layers = check_int("hidden_layers", hidden_layers, minimum=0)
    width = n if width is None else check_int("width", width, minimum=1)
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    spike = check_option("spike", spike, SPIKE_CODES)
    noise = check_option("noise", noise, NOISE_MODELS)
    num_nets = check_int("num_nets", num_nets, minimum=1)
    num_inputs = check_int("num_inputs", num_inputs, minimum=1)
    # float32 inputs and states of 2 * num_inputs samples over num_steps, per network, before drawing
    check_memory("num_inputs", 4 * 2 * num_inputs * max(n, width) * (num_steps + 1) * 2,
                 what="the float32 inputs and states of one network")
    widths = (width,) * hidden_layers + (1,)
    per_step, ns, var = zip(*(
        _ens_one_net(child, n, widths, num_steps, beta, theta, delta, num_inputs, spike, noise)
        for child in rng.spawn(num_nets)  # one network per iteration, all its inputs at once
    ))
    return {"per_step": np.array(per_step, np.float64), "ns": np.array(ns, np.float64),
            "var": np.array(var, np.float64)}
