"""Surrogate-gradient training of sign-LIF spiking classifiers, in JAX.

A spike ``s = sign(u - theta)`` has derivative zero almost everywhere, so backpropagation through a
spiking network needs a *surrogate*: the forward pass keeps the exact spike, and the backward pass
uses the derivative of a smooth stand-in. We use the fast sigmoid of SuperSpike (Zenke and Ganguli,
*Neural Computation* 30, 2018; reviewed by Neftci, Mostafa and Zenke, *IEEE Signal Processing
Magazine* 36, 2019): ``d s / d u ~ slope / (1 + slope |u - theta|)^2``. The network is the sign-LIF
(sLIF) network of :mod:`paperlib.boolean_analysis.spiking` with static input, and its forward pass here gives exactly
the same spikes as :func:`paperlib.boolean_analysis.spiking.lif_spikes` (checked in the tests), so a trained network is
evaluated with the numpy code of the random networks. Training uses optax's Adam inside
:func:`paperlib.models.training.train` (one ``lax.scan``), vectorised over networks with ``jax.vmap``.

This is the setting of the trained-network experiment of Araya, Datres and Kutyniok, *Random Spiking
Neural Networks are Stable and Spectrally Simple*, ICLR 2026 (arXiv:2511.00904), Sec. 5 (there:
MNIST, CIFAR-10 and N-MNIST, 3-layer networks, Adam and surrogate gradients), at the scale of
scikit-learn's bundled 8x8 digits.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_key, check_real, is_traced
from .spiking import _check_model
from ..models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["binarised_digits", "surrogate_sign", "lif_spike_count", "train_lif_classifiers"]

#: ``surrogate_sign`` acts elementwise, so every rank of ``v`` is valid (the bad-input probe's rank test).
_PROBE_EXEMPTIONS = {"surrogate_sign": {"v": {"array_rank": "elementwise: any shape of v is valid"}}}


def binarised_digits(*, threshold: float = 7.0):
    """scikit-learn's bundled 8x8 digits as bits, with the binary label "digit >= 5".

    Parameters
    ----------
    threshold : float, default 7.0
        Grey level in ``[0, 16)``: a pixel is ``+1`` if its value exceeds it, else ``-1``.

    Returns
    -------
    x : ndarray of float32, shape (1797, 64)
        Pixels in {-1, 1}.
    y : ndarray of float32, shape (1797,)
        ``+1`` for the digits 5-9, ``-1`` for 0-4 (about balanced).

    Raises
    ------
    ValueError
        If ``threshold`` is not a finite number in ``[0, 16)``.

    Examples
    --------
    >>> x, y = binarised_digits()
    >>> x.shape, sorted(set(x.ravel().tolist())), round(float(y.mean()), 3)
    ((1797, 64), [-1.0, 1.0], -0.003)
    """
    from sklearn.datasets import load_digits

    threshold = check_real("threshold", threshold, minimum=0.0, maximum=16.0, strict_max=True)
    digits = load_digits()
    x = np.where(digits.data > threshold, 1.0, -1.0).astype(np.float32)
    y = np.where(digits.target >= 5, 1.0, -1.0).astype(np.float32)
    return x, y


@jax.custom_jvp
def _sign_fast_sigmoid(v, slope):
    return jnp.where(v > 0, 1.0, -1.0).astype(v.dtype)


@_sign_fast_sigmoid.defjvp
def _sign_fast_sigmoid_jvp(primals, tangents):
    v, slope = primals
    dv, _ = tangents
    return _sign_fast_sigmoid(v, slope), slope / (1.0 + slope * jnp.abs(v)) ** 2 * dv


def surrogate_sign(v, *, slope: float = 5.0):
    """``sign(v)`` in {-1, 1} (``-1`` at 0), with the fast-sigmoid derivative ``slope / (1 + slope |v|)^2``.

    Parameters
    ----------
    v : array_like
        Membrane potential minus threshold, any shape, not empty.
    slope : float, default 5.0
        Steepness ``> 0`` of the surrogate (SuperSpike's ``beta``); the surrogate derivative at 0.

    Returns
    -------
    jax.Array, same shape as ``v``

    Raises
    ------
    ValueError
        If ``v`` is not finite or ``slope`` is not positive.

    Examples
    --------
    >>> import jax
    >>> surrogate_sign(jnp.array([-0.3, 0.2])).tolist(), round(float(jax.grad(lambda v: surrogate_sign(v))(0.2)), 3)
    ([-1.0, 1.0], 1.25)
    """
    if not is_traced(v):
        v = as_array("v", v, dtype=np.float32)
    if not is_traced(slope):
        slope = check_real("slope", slope, minimum=0.0, strict_min=True)
    v = jnp.asarray(v, dtype=jnp.float32)
    return _sign_fast_sigmoid(v, jnp.asarray(slope, dtype=v.dtype))


def _spike_count(weights, x, num_steps, beta, theta, slope):
    """Sum over t of the output neuron's sign spikes, (B,); layers stepped together inside ``lax.scan``."""
    first = x @ weights[0]  # static input
    init = tuple((jnp.zeros((x.shape[0], w.shape[1])), jnp.zeros((x.shape[0], w.shape[1]))) for w in weights)

    def step(state, _):
        new, inp = [], None
        for l, (w, (u, fired)) in enumerate(zip(weights, state)):
            current = first if l == 0 else inp @ w
            u = beta * u + current - theta * fired
            s = _sign_fast_sigmoid(u - theta, slope)
            new.append((u, jax.lax.stop_gradient((s + 1.0) / 2.0)))  # reset detached from the graph
            inp = s
        return tuple(new), inp[:, 0]

    _, out = jax.lax.scan(step, init, None, length=num_steps)
    return out.sum(axis=0)


def _check_weights(weights, n):
    ws, d = [], n
    for i, w in enumerate(weights):
        w = w if is_traced(w) else as_array(f"weights[{i}]", w, ndim=2, dtype=np.float32)
        if w.shape[0] != d:
            raise ValueError(f"weights[{i}] must have shape ({d}, d_out) to match its input, got {w.shape}")
        d = w.shape[1]
        ws.append(jnp.asarray(w, jnp.float32))
    if not ws:
        raise ValueError("weights must contain at least one matrix")
    return ws


def lif_spike_count(weights, x, *, num_steps: int, beta: float = 1.0, theta: float = 0.5, slope: float = 5.0):
    """Spike count ``sum_t s_t`` of the first output neuron of an sLIF network, differentiable.

    Forward pass: exactly the spikes of :func:`paperlib.boolean_analysis.spiking.lif_spikes` (sign code, static input,
    reset by subtraction). Backward pass: every spike uses :func:`surrogate_sign`'s derivative; the
    reset term ``theta 1[s = spike]`` is detached from the gradient (a common choice that keeps the
    surrogate gradient from fighting the reset; Zenke and Vogels, *Neural Computation* 33, 2021).

    Parameters
    ----------
    weights : sequence of arrays, shapes (n, d_1), ..., (d_{L-1}, d_L)
    x : array_like, shape (B, n)
        Inputs (bits in {-1, 1} for the Boolean view; any finite values are accepted).
    num_steps : int
        Horizon ``T >= 1``.
    beta, theta : float
        Leak in ``[0, 1]`` and threshold ``> 0``.
    slope : float, default 5.0
        Surrogate steepness ``> 0``.

    Returns
    -------
    jax.Array, shape (B,)
        Values in ``{-T, -T + 2, ..., T}``; ``sign`` of it is the readout for odd ``T``.

    Raises
    ------
    ValueError
        On a wrong shape or a bad ``num_steps``/``beta``/``theta``/``slope``.

    Examples
    --------
    >>> w = [np.full((2, 1), 0.2, np.float32)]
    >>> lif_spike_count(w, np.array([[1.0, 1.0], [1.0, -1.0]]), num_steps=5).tolist()
    [1.0, -5.0]
    """
    num_steps, beta, theta = _check_model(num_steps, beta, theta)
    slope = check_real("slope", slope, minimum=0.0, strict_min=True)
    if not is_traced(x):
        x = as_array("x", x, ndim=2, dtype=np.float32)
    ws = _check_weights(weights, x.shape[1])
    return _spike_count(ws, jnp.asarray(x, jnp.float32), num_steps, beta, theta, slope)


def train_lif_classifiers(weights, x, y, *, num_steps: int, beta: float = 1.0, theta: float = 0.5,
                          steps: int = 300, learning_rate: float = 3e-3, batch_size: int = 64,
                          slope: float = 5.0, loss_scale: float = 0.5, key):
    """Train ``R`` sLIF classifiers at once with surrogate gradients and Adam (paper, Sec. 5).

    Each network minimises the logistic loss ``mean log(1 + exp(-y * loss_scale * count(x)))`` of its
    spike count (:func:`lif_spike_count`) over minibatches of ``batch_size`` examples drawn with
    replacement, for ``steps`` Adam steps (optax, inside :func:`paperlib.models.training.train`); the ``R``
    networks are trained in parallel with ``jax.vmap``, each with its own minibatches and, if ``y``
    has a row per network, its own labels (e.g. shuffled labels as a control).

    Parameters
    ----------
    weights : sequence of arrays, shapes (R, n, d_1), ..., (R, d_{L-1}, 1)
        Initial weights of the ``R`` networks, stacked along a leading axis.
    x : array_like, shape (N, n)
        Training inputs.
    y : array_like, shape (N,) or (R, N)
        Labels in {-1, 1}: shared, or one row per network.
    num_steps : int
        Odd horizon ``T``.
    beta, theta : float
        Leak in ``[0, 1]`` and threshold ``> 0``.
    steps, batch_size : int
        Optimisation steps and minibatch size, ``>= 1``.
    learning_rate, slope, loss_scale : float
        Adam step size, surrogate steepness and the scale of the count inside the loss, all ``> 0``.
    key : jax.random key
        Keyword-only; split into one key per network.

    Returns
    -------
    weights : list of ndarray of float32, shapes as the input
        Trained weights.
    losses : ndarray of float32, shape (R, steps)
        Minibatch loss at every step.

    Raises
    ------
    ValueError
        On mismatched shapes, labels outside {-1, 1}, or a bad size or rate.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x = np.array([[1.0, -1.0], [-1.0, 1.0]], np.float32)
    >>> w0 = [np.zeros((3, 2, 1), np.float32)]
    >>> w, losses = train_lif_classifiers(w0, x, np.array([1.0, -1.0]), num_steps=3, steps=50,
    ...                                   learning_rate=0.05, key=jax.random.key(0))
    >>> losses.shape, bool(losses[:, -1].max() < losses[:, 0].min())
    ((3, 50), True)
    """
    key = check_key("key", key)
    num_steps, beta, theta = _check_model(num_steps, beta, theta, odd=True)
    steps = check_int("steps", steps, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    slope = check_real("slope", slope, minimum=0.0, strict_min=True)
    loss_scale = check_real("loss_scale", loss_scale, minimum=0.0, strict_min=True)
    x = as_array("x", x, ndim=2, dtype=np.float32)
    stacked = [as_array(f"weights[{i}]", w, ndim=3, dtype=np.float32) for i, w in enumerate(weights)]
    if not stacked:
        raise ValueError("weights must contain at least one matrix")
    R = stacked[0].shape[0]
    _check_weights([w[0] for w in stacked], x.shape[1])
    if any(w.shape[0] != R for w in stacked):
        raise ValueError("weights must all have the same number R of networks on their leading axis")
    if stacked[-1].shape[2] != 1:
        raise ValueError(f"weights[-1] must end in one output neuron, got shape {stacked[-1].shape}")
    y = as_array("y", y, ndim=(1, 2), dtype=np.float32)
    if not np.all(np.abs(y) == 1):
        raise ValueError("y must have entries in {-1, 1}")
    y = np.broadcast_to(y, (R, x.shape[0])) if y.ndim == 1 else y
    if y.shape != (R, x.shape[0]):
        raise ValueError(f"y must have shape ({x.shape[0]},) or ({R}, {x.shape[0]}), got {y.shape}")
    xj, opt = jnp.asarray(x), optax.adam(learning_rate)

    def one(ws, labels, k):
        def loss(params, kk):
            idx = jax.random.randint(kk, (batch_size,), 0, xj.shape[0])
            count = _spike_count(params, xj[idx], num_steps, beta, theta, slope)
            return jnp.mean(jax.nn.softplus(-labels[idx] * loss_scale * count))

        return train(loss, ws, opt, steps=steps, key=k)

    keys = jax.random.split(key, R)
    res = jax.jit(jax.vmap(one))([jnp.asarray(w) for w in stacked], jnp.asarray(y), keys)
    return [np.asarray(w) for w in res.params], np.asarray(res.losses)

