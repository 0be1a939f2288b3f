"""Two-layer networks in the mean-field (µP) parameterisation, trained by gradient descent.

.. math::

    f(x) = \\frac{\\sqrt D}{\\gamma N}\\sum_{i=1}^N z_i\\,\\varphi(v_i\\cdot x) - f_0(x),
    \\qquad v_i \\sim \\mathcal N(0, I_D/D),\\; z_i \\sim \\mathcal N(0, 1),

with the initial output ``f₀`` subtracted and the loss multiplied by ``γ²N``, so that the width
``N → ∞`` limit is lazy (kernel) as ``γ → 0`` and keeps learning features for ``γ > 0``. The first
layer is stored as ``V = W/√D`` (the convention of :func:`paperlib.wide_networks.random_features.random_feature_weights`,
so its features are :func:`paperlib.wide_networks.random_features.feature_map` of ``V``); weight decay ``λ`` acts on
``W`` and ``z``. Training is ``optax.sgd`` inside :func:`paperlib.models.training.train` (one ``lax.scan``).

:func:`train_linear_network` trains the linear network on a linear task given by its moments
``(A, b)`` (cheap: ``O(ND)`` per step, the population loss included); :func:`train_network` trains
any activation on samples. Their infinite-width theory is :mod:`paperlib.wide_networks.adaptive_kernels`.

References
----------
.. [#mean-field-networks-1] C. Lauditi, B. Bordelon and C. Pehlevan, "Transfer Learning in Infinite Width Feature Learning
   Networks", ICLR 2026, arXiv:2507.04448.
.. [#mean-field-networks-2] The authors' code for "Adaptive kernel predictors from feature-learning infinite limits of neural
   networks" (clarissalauditi/adaptive_kernel_predictors, ``2layer_mlp/GF.py`` and ``DMFT.py``): the
   readout ``1/(γ₀N)`` with the step scaled by ``Nγ₀²``; our ``γ`` is ``γ₀√D``.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_option, check_real
from .adaptive_kernels import _moments
from ..models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["train_linear_network", "train_network"]


def _check_init(V0, z0):
    V0 = as_array("V0", V0, ndim=2, dtype=None)
    z0 = as_array("z0", z0, ndim=1, dtype=None)
    if V0.dtype.kind not in "f":
        V0 = V0.astype(float)
    if z0.shape[0] != V0.shape[0]:
        raise ValueError(f"z0 must have N = V0.shape[0] = {V0.shape[0]} entries, got shape {z0.shape}")
    return V0, z0.astype(V0.dtype)


@partial(jax.jit, static_argnames=("steps",))
def _train_linear(V0, z0, A, b, beta0, gamma, lr, wd, *, steps):
    N, D = V0.shape

    def loss(params, _key):
        W, z = params
        beta = W.T @ z / (gamma * N) - beta0
        obj = 0.5 * beta @ (A @ beta) - b @ beta
        return gamma**2 * N * obj + 0.5 * wd * (jnp.sum(W**2) + jnp.sum(z**2))

    out = train(loss, (jnp.sqrt(D) * V0, z0), optax.sgd(lr), steps=steps, key=jax.random.key(0))
    W, z = out.params
    return W / jnp.sqrt(D), z, out.losses


def train_linear_network(V0, z0, A, b, gamma, *, lr, steps, weight_decay=0.0, beta0=None):
    """Train the finite-width two-layer linear network by GD on a linear task given by its moments.

    The network is ``f(x) = βᵀx`` with ``β = WᵀZ/(γN) − β₀`` (``W = √D V``), and GD (``optax.sgd``
    inside :func:`paperlib.models.training.train`) minimises ``γ²N[½βᵀAβ − bᵀβ] + ½λ(‖W‖² + ‖z‖²)``, which
    is ``γ²N`` times the squared loss of the task plus a constant: ``A = XᵀX/P, b = Xᵀy/P`` for
    ``P`` samples, ``A = I, b = u`` for the population of ``y = u·x``.

    Parameters
    ----------
    V0 : array_like, shape (N, D)
        Initial first layer (entries ``N(0, 1/D)``); float32 input trains in float32.
    z0 : array_like, shape (N,)
        Initial readout (entries ``N(0, 1)``).
    A : array_like, shape (D, D)
        Input second moment.
    b : array_like, shape (D,)
        Input-label moment.
    gamma : float
        Richness ``γ > 0``.
    lr : float
        Step ``η > 0``.
    steps : int
        Number of steps, ``>= 1``.
    weight_decay : float, default 0.0
        ``λ >= 0``.
    beta0 : array_like, shape (D,), optional
        The subtracted initial map ``β₀``; default ``W₀ᵀz₀/(γN)`` of ``(V0, z0)`` (so ``f = 0`` at
        the start). Pass the original one to continue a run in segments.

    Returns
    -------
    V : ndarray, shape (N, D)
        Trained first layer (in the ``V`` convention).
    z : ndarray, shape (N,)
        Trained readout.
    beta : ndarray, shape (D,)
        The trained linear map ``β``.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, or a parameter is out of range.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> V0, z0 = rng.standard_normal((500, 2)) / np.sqrt(2), rng.standard_normal(500)
    >>> V, z, beta = train_linear_network(V0, z0, np.eye(2), [1.0, 0.0], 2.0, lr=0.02, steps=1000)
    >>> (beta.round(3) + 0.0).tolist()
    [1.0, 0.0]
    """
    V0, z0 = _check_init(V0, z0)
    A, b = _moments(A, b)
    N, D = V0.shape
    if b.size != D:
        raise ValueError(f"b must have D = V0.shape[1] = {D} entries, got {b.size}")
    gamma = check_real("gamma", gamma, minimum=0.0, strict_min=True)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=1)
    wd = check_real("weight_decay", weight_decay, minimum=0.0)
    if beta0 is None:
        beta0 = np.sqrt(D) * V0.T.astype(float) @ z0.astype(float) / (gamma * N)
    beta0 = as_array("beta0", beta0, shape=(D,))
    V0j = jnp.asarray(V0)
    dt = V0j.dtype  # float32 input (or JAX without x64) trains in float32
    V, z, _ = _train_linear(V0j, jnp.asarray(z0, dt), jnp.asarray(A.astype(dt)), jnp.asarray(b.astype(dt)),
                            jnp.asarray(beta0.astype(dt)), gamma, lr, wd, steps=steps)
    V, z = np.asarray(V), np.asarray(z)
    beta = np.sqrt(D) * V.T.astype(float) @ z.astype(float) / (gamma * N) - beta0
    return V, z, beta


@partial(jax.jit, static_argnames=("steps", "activation"))
def _train_samples(V0, z0, X, y, gamma, lr, wd, *, steps, activation):
    N, D = V0.shape
    act = {"relu": jax.nn.relu, "tanh": jnp.tanh, "linear": lambda t: t}[activation]
    f0 = jnp.sqrt(D) / (gamma * N) * act(X @ V0.T) @ z0

    def loss(params, _key):
        W, z = params
        f = jnp.sqrt(D) / (gamma * N) * act(X @ W.T / jnp.sqrt(D)) @ z - f0
        return gamma**2 * N * 0.5 * jnp.mean((f - y) ** 2) + 0.5 * wd * (jnp.sum(W**2) + jnp.sum(z**2))

    out = train(loss, (jnp.sqrt(D) * V0, z0), optax.sgd(lr), steps=steps, key=jax.random.key(0))
    W, z = out.params
    return W / jnp.sqrt(D), z, out.losses / (gamma**2 * N)


def train_network(X, y, V0, z0, gamma, *, lr, steps, activation="relu", weight_decay=0.0):
    """Train a two-layer mean-field network on samples by full-batch GD (optax inside ``lax.scan``).

    ``f(x) = (√D/(γN)) Σ_i z_i φ(v_i·x) − f₀(x)`` is trained on ``γ²N · ½·mean_μ (f(x_μ) − y_μ)²``
    (plus ``½λ(‖W‖² + ‖z‖²)``) with :func:`paperlib.models.training.train`. The trained features
    ``φ(Vx)`` are :func:`paperlib.wide_networks.random_features.feature_map` of the returned ``V``.

    Parameters
    ----------
    X : array_like, shape (P, D)
        Source inputs.
    y : array_like, shape (P,)
        Source labels.
    V0 : array_like, shape (N, D)
        Initial first layer (entries ``N(0, 1/D)``); float32 input trains in float32.
    z0 : array_like, shape (N,)
        Initial readout.
    gamma : float
        Richness ``γ > 0``.
    lr : float
        Step ``η > 0``.
    steps : int
        Number of GD steps, ``>= 1``.
    activation : {"relu", "tanh", "linear"}, default "relu"
        The nonlinearity ``φ``.
    weight_decay : float, default 0.0
        ``λ >= 0``.

    Returns
    -------
    V : ndarray, shape (N, D)
        Trained first layer.
    z : ndarray, shape (N,)
        Trained readout.
    losses : ndarray, shape (steps,)
        Training mean squared error ``½·mean(f − y)²`` before each step (the weight-decay term excluded
        only when ``λ = 0``).

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, or a parameter is out of range.

    Notes
    -----
    As in the authors' ``DMFT.py`` the initial output ``f₀`` is subtracted, so training starts from
    ``f = 0`` at every width; their ``GF.py`` does not subtract it and uses the readout ``1/(γ₀N)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, V0, z0 = rng.standard_normal((20, 3)), rng.standard_normal((200, 3)) / np.sqrt(3), rng.standard_normal(200)
    >>> V, z, losses = train_network(X, X[:, 0] ** 2, V0, z0, 1.0, lr=0.05, steps=400)
    >>> bool(losses[-1] < 0.1 * losses[0])
    True
    """
    X = as_array("X", X, ndim=2, dtype=None)
    if X.dtype.kind != "f":
        X = X.astype(float)
    y = as_array("y", y, ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have P = X.shape[0] = {X.shape[0]} entries, got shape {y.shape}")
    V0, z0 = _check_init(V0, z0)
    if V0.shape[1] != X.shape[1]:
        raise ValueError(f"V0 must have D = X.shape[1] = {X.shape[1]} columns, got shape {V0.shape}")
    gamma = check_real("gamma", gamma, minimum=0.0, strict_min=True)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=1)
    activation = check_option("activation", activation, ("relu", "tanh", "linear"))
    wd = check_real("weight_decay", weight_decay, minimum=0.0)
    V0j = jnp.asarray(V0)
    dt = V0j.dtype
    V, z, losses = _train_samples(V0j, jnp.asarray(z0, dt), jnp.asarray(X.astype(dt)), jnp.asarray(y.astype(dt)),
                                  gamma, lr, wd, steps=steps, activation=activation)
    return np.asarray(V), np.asarray(z), np.asarray(losses)
