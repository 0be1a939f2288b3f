"""Random-features models, once for the whole book: the feature map, its ridge/min-norm fit, predictions.

A random-features (RF) model is a two-layer network whose first layer is drawn once and frozen,

.. math::

    f(x) = \\varphi(x)^\\top \\theta, \\qquad \\varphi(x) = \\sigma(V x) \\in \\mathbb R^p,
    \\qquad V_{kj} \\overset{iid}{\\sim} \\mathcal N(0, 1/d),

and only the output weights ``θ`` are trained, by (ridge) least squares. Chapters build one with
:func:`random_feature_weights` (a JAX key in, ``V`` out), map inputs with :func:`feature_map`, train
with :func:`fit` and evaluate with :func:`predict`. :func:`sample_sphere` draws the inputs of the RF
theory (uniform on the sphere of radius ``√d``).

Conventions: ``X`` has one sample per row, shape ``(n, d)``; ``V`` has one feature per row, shape
``(p, d)``; features are *not* rescaled by ``1/√p`` (the convention of Iurada et al. 2026).
Randomness comes from a JAX key (``key=``, JAX arrays out, for chapters that differentiate or
``vmap`` through the model) or a numpy Generator (``rng=``, numpy float64 out, no compilation: the
fast path for many small models of different sizes). :func:`feature_map`, :func:`fit` and
:func:`predict` follow their inputs: numpy in, numpy float64 out; a JAX array in, JAX out (in the
precision JAX is configured for).

References
----------
.. [#random-features-1] A. Rahimi and B. Recht, "Random Features for Large-Scale Kernel Machines", NeurIPS 2007.
.. [#random-features-2] L. Iurada, S. Bombari, T. Tommasi and M. Mondelli, "A Law of Data Reconstruction for Random
   Features (and Beyond)", ICLR 2026, arXiv:2509.22214 (Section 2: the RF model and its min-norm fit).
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_key, check_real, check_rng
from ..models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "ACTIVATIONS",
    "sample_sphere",
    "random_feature_weights",
    "feature_map",
    "fit",
    "predict",
    "TwoLayerFit",
    "train_two_layer",
]

#: Activation functions σ understood by :func:`feature_map` (``"relu_tanh"`` is ``relu(z) + tanh(z)``,
#: the second activation of Iurada et al.; ``"linear"`` removes the nonlinearity, a null model).
ACTIVATIONS = ("relu", "relu_tanh", "tanh", "linear")


def _act(z, name: str, xp=jnp):
    """σ(z) for ``name`` in ``ACTIVATIONS``, with ``xp`` = numpy or jax.numpy."""
    if name == "relu":
        return xp.maximum(z, 0.0)
    if name == "relu_tanh":
        return xp.maximum(z, 0.0) + xp.tanh(z)
    if name == "tanh":
        return xp.tanh(z)
    return z


def _act_derivative(z, name: str, xp=jnp):
    """σ'(z) for ``name`` in ``ACTIVATIONS`` (ReLU: 1 for z > 0, else 0)."""
    if name == "relu":
        return (z > 0).astype(z.dtype)
    if name == "relu_tanh":
        return (z > 0).astype(z.dtype) + 1.0 - xp.tanh(z) ** 2
    if name == "tanh":
        return 1.0 - xp.tanh(z) ** 2
    return xp.ones_like(z)


def _check_activation(activation) -> str:
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
    return activation


def _check_key(key):
    try:
        jax.random.key_data(key)
    except Exception:  # noqa: BLE001 - anything that is not a typed JAX key
        raise ValueError(f"key must be a JAX PRNG key (jax.random.key(seed)), got {type(key).__name__}") from None
    return key


def _check_source(key, rng) -> str:
    """Exactly one of ``key`` (JAX) and ``rng`` (numpy) must be given; return which."""
    if (key is None) == (rng is None):
        raise ValueError("pass exactly one source of randomness: key (a JAX key) or rng (a numpy Generator)")
    if key is not None:
        _check_key(key)
        return "key"
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return "rng"


def _xp(*arrays):
    """jax.numpy if any input is a JAX array (or tracer), else numpy."""
    return jnp if any(isinstance(a, jax.Array) for a in arrays) else np


def _as(name, value, ndim, xp):
    """Validated array: numpy path through ``as_array``; JAX path checks the rank only (traceable)."""
    if xp is np:
        return as_array(name, value, ndim=ndim, min_size=1)
    value = jnp.asarray(value)
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if value.ndim not in allowed or value.size == 0:
        raise ValueError(f"{name} must be a non-empty array with {' or '.join(map(str, allowed))} dimension(s), got shape {value.shape}")
    if jnp.issubdtype(value.dtype, jnp.complexfloating):
        raise ValueError(f"{name} must be real, got dtype {value.dtype}")
    return value


def sample_sphere(n: int, d: int, *, key=None, rng=None):
    """``n`` points drawn uniformly on the sphere of radius ``√d`` in ``R^d``.

    Gaussian rows rescaled to norm ``√d``, so every coordinate has unit variance on average: the
    input model of the RF theory and of the authors' synthetic experiments.

    Parameters
    ----------
    n : int
        Number of points, ``n >= 1``.
    d : int
        Dimension, ``d >= 1``.
    key : jax.random key, optional
        Source of randomness (keyword-only); JAX array out.
    rng : numpy.random.Generator, optional
        Source of randomness (keyword-only); numpy float64 out. Give exactly one of ``key``, ``rng``.

    Returns
    -------
    array, shape (n, d)
        Rows with Euclidean norm ``√d``.

    Raises
    ------
    ValueError
        If ``n`` or ``d`` is not a positive integer, or not exactly one valid source of randomness
        is given.
        Also if ``key`` is not a JAX PRNG key or ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> X = sample_sphere(3, 4, key=jax.random.key(0))
    >>> np.round(np.linalg.norm(np.asarray(X), axis=1), 6).tolist()
    [2.0, 2.0, 2.0]
    >>> sample_sphere(2, 9, rng=np.random.default_rng(0)).shape
    (2, 9)
    """
    if key is not None:
        key = check_key("key", key)
    if rng is not None:
        rng = check_rng("rng", rng)
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    if _check_source(key, rng) == "key":
        X = jax.random.normal(key, (n, d))
        return jnp.sqrt(d) * X / jnp.linalg.norm(X, axis=1, keepdims=True)
    X = rng.standard_normal((n, d))
    return np.sqrt(d) * X / np.linalg.norm(X, axis=1, keepdims=True)


def random_feature_weights(p: int, d: int, *, key=None, rng=None):
    """First-layer weights ``V`` of an RF model: ``p`` features, i.i.d. ``N(0, 1/d)`` entries.

    With inputs on the ``√d``-sphere every pre-activation ``(V x)_k`` is then exactly ``N(0, 1)``.

    Parameters
    ----------
    p : int
        Number of features (the number of trained parameters), ``p >= 1``.
    d : int
        Input dimension, ``d >= 1``.
    key : jax.random key, optional
        Source of randomness (keyword-only); JAX array out.
    rng : numpy.random.Generator, optional
        Source of randomness (keyword-only); numpy float64 out. Give exactly one of ``key``, ``rng``.

    Returns
    -------
    array, shape (p, d)
        One feature's weight vector per row.

    Raises
    ------
    ValueError
        If ``p`` or ``d`` is not a positive integer, or not exactly one valid source of randomness
        is given.
        Also if ``key`` is not a JAX PRNG key or ``rng`` is not a numpy.random.Generator.

    References
    ----------
    Iurada et al. (2026), Section 2: ``V_{kj} ~ N(0, 1/d)``, as in the authors' code.

    Examples
    --------
    >>> V = random_feature_weights(20_000, 4, key=jax.random.key(0))
    >>> V.shape, round(float(np.var(np.asarray(V))) * 4, 1)
    ((20000, 4), 1.0)
    >>> V = random_feature_weights(20_000, 4, rng=np.random.default_rng(0))
    >>> type(V).__name__, round(float(np.var(V)) * 4, 1)
    ('ndarray', 1.0)
    """
    if key is not None:
        key = check_key("key", key)
    if rng is not None:
        rng = check_rng("rng", rng)
    p = check_int("p", p, minimum=1)
    d = check_int("d", d, minimum=1)
    if _check_source(key, rng) == "key":
        return jax.random.normal(key, (p, d)) / jnp.sqrt(d)
    return rng.standard_normal((p, d)) / np.sqrt(d)


def feature_map(X, V, *, activation: str = "relu"):
    """Random features ``Φ = σ(X Vᵀ)``: row ``i`` is ``φ(x_i) = σ(V x_i)``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Inputs, one per row.
    V : array_like, shape (p, d)
        First-layer weights from :func:`random_feature_weights`.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The nonlinearity σ, applied entrywise.

    Returns
    -------
    array, shape (n, p)
        The feature matrix (numpy float64 for numpy inputs, JAX if an input is a JAX array).

    Raises
    ------
    ValueError
        If ``X`` or ``V`` is not a finite 2-D array, their widths differ, or the activation is unknown.

    Examples
    --------
    >>> Phi = feature_map([[1.0, -1.0]], [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], activation="relu")
    >>> np.asarray(Phi).tolist()
    [[1.0, 0.0, 0.0]]
    """
    xp = _xp(X, V)
    X = _as("X", X, 2, xp)
    V = _as("V", V, 2, xp)
    if X.shape[1] != V.shape[1]:
        raise ValueError(f"X must have d = V.shape[1] = {V.shape[1]} columns, got shape {X.shape}")
    activation = _check_activation(activation)
    return _act(xp.asarray(X) @ xp.asarray(V).T, activation, xp)


def fit(Phi, y, *, ridge: float = 0.0):
    """Train the output layer: ridge regression, or the minimum-norm least-squares fit when ``ridge = 0``.

    .. math::

        \\theta_\\lambda = \\Phi^\\top (\\Phi\\Phi^\\top + \\lambda I_n)^{-1} y
        = (\\Phi^\\top\\Phi + \\lambda I_p)^{-1}\\Phi^\\top y, \\qquad
        \\theta_0 = \\Phi^+ y = \\lim_{\\lambda\\to0^+}\\theta_\\lambda .

    Every ``θ_λ`` lies in the row space of ``Φ``, the span of the training features
    ``{φ(x_1), …, φ(x_n)}``. When ``p >= n`` and ``Φ`` has full row rank, ``θ_0`` interpolates the
    labels (``Φθ_0 = y``) and is the interpolator of smallest norm, the limit of gradient descent on
    the square loss started from ``θ = 0``.

    Parameters
    ----------
    Phi : array_like, shape (n, p)
        Training features (from :func:`feature_map`).
    y : array_like, shape (n,) or (n, k)
        Labels; ``k`` columns fit ``k`` outputs at once.
    ridge : float, default 0.0
        Ridge penalty ``λ >= 0`` (same units as ``ΦΦᵀ``).

    Returns
    -------
    array, shape (p,) or (p, k)
        Output weights ``θ`` (numpy float64 for numpy inputs, JAX if an input is a JAX array).

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, or ``ridge < 0``.

    Notes
    -----
    ``ridge = 0`` uses ``lstsq`` (SVD, minimum-norm solution, also for rank-deficient ``Φ``);
    ``ridge > 0`` solves the ``min(n, p)``-sized linear system. The authors' code uses
    ``torch.pinverse``, the same minimum-norm solution.

    Examples
    --------
    >>> theta = fit([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]], [1.0, -1.0])
    >>> (np.round(np.asarray(theta), 6) + 0.0).tolist()
    [1.0, -1.0, 0.0]
    """
    xp = _xp(Phi, y)
    Phi = _as("Phi", Phi, 2, xp)
    y = _as("y", y, (1, 2), xp)
    if y.shape[0] != Phi.shape[0]:
        raise ValueError(f"y must have n = Phi.shape[0] = {Phi.shape[0]} rows, got shape {y.shape}")
    ridge = check_real("ridge", ridge, minimum=0.0)
    Phi, y = xp.asarray(Phi), xp.asarray(y)
    n, p = Phi.shape
    if ridge == 0.0:
        return xp.linalg.lstsq(Phi, y, rcond=None)[0]
    if p >= n:
        return Phi.T @ xp.linalg.solve(Phi @ Phi.T + ridge * xp.eye(n), y)
    return xp.linalg.solve(Phi.T @ Phi + ridge * xp.eye(p), Phi.T @ y)


def predict(X, V, theta, *, activation: str = "relu"):
    """Outputs ``f(x_i) = φ(x_i)ᵀ θ`` of the RF model for every row of ``X``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Inputs.
    V : array_like, shape (p, d)
        First-layer weights.
    theta : array_like, shape (p,) or (p, k)
        Output weights (from :func:`fit`).
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The nonlinearity σ.

    Returns
    -------
    array, shape (n,) or (n, k)
        Predictions (numpy float64 for numpy inputs, JAX if an input is a JAX array).

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, or the activation is unknown.

    Examples
    --------
    >>> np.asarray(predict([[1.0, -1.0]], [[1.0, 0.0], [0.0, 1.0]], [2.0, 3.0])).tolist()
    [2.0]
    """
    xp = _xp(X, V, theta)
    Phi = feature_map(X, V, activation=activation)
    theta = _as("theta", theta, (1, 2), xp)
    if theta.shape[0] != Phi.shape[1]:
        raise ValueError(f"theta must have p = V.shape[0] = {Phi.shape[1]} rows, got shape {theta.shape}")
    return xp.asarray(Phi) @ xp.asarray(theta)


class TwoLayerFit(NamedTuple):
    """Output of :func:`train_two_layer`: initial and trained weights and the loss curve.

    Attributes
    ----------
    W0, W : ndarray, shape (m, d)
        First layer at initialisation and after training.
    a0, a : ndarray, shape (m,)
        Output weights at initialisation and after training.
    losses : ndarray, shape (steps,)
        Mean squared training error before each step.
    """

    W0: np.ndarray
    a0: np.ndarray
    W: np.ndarray
    a: np.ndarray
    losses: np.ndarray


@partial(jax.jit, static_argnames=("activation", "steps"))
def _gd_two_layer(X, y, W0, a0, lr, *, activation, steps):
    def loss_fn(params, _key):
        W, a = params
        return jnp.mean((_act(X @ W.T, activation) @ a - y) ** 2)

    out = train(loss_fn, (W0, a0), optax.sgd(lr), steps=steps, key=jax.random.key(0))
    return out.params, out.losses


def train_two_layer(
    X, y, width: int, *, activation: str = "relu", steps: int = 300, learning_rate: float | None = None, rng
) -> TwoLayerFit:
    """Train both layers of ``f(x) = aᵀσ(Wx)`` by full-batch gradient descent on the square loss.

    Initialisation as in Iurada et al.'s two-layer script: ``W_{kj} ~ N(0, 1/d)`` (the random
    features of :func:`random_feature_weights`) and ``a_k ~ N(0, 1/m)``. Gradient descent is
    ``optax.sgd(learning_rate)`` on ``(1/n) Σ_i (f(x_i) - y_i)²`` inside
    :func:`paperlib.models.training.train` (one jitted ``lax.scan``), in the precision JAX is configured for.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Training inputs.
    y : array_like, shape (n,)
        Labels.
    width : int
        Hidden width ``m >= 1`` (the number of output weights).
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The nonlinearity σ.
    steps : int, default 300
        Gradient steps, ``>= 1``.
    learning_rate : float, optional
        Step size ``> 0``. Default ``1/λ_max`` of the Hessian ``2ΦΦᵀ/n`` of the loss in ``a`` at
        initialisation (``Φ = σ(XW₀ᵀ)``), a stable step for the last layer.
    rng : numpy.random.Generator
        Draws the initialisation (keyword-only).

    Returns
    -------
    TwoLayerFit
        ``W0, a0, W, a`` as numpy arrays and the loss curve.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, a size or rate is out of range, the
        activation is unknown or ``rng`` is not a Generator.

    References
    ----------
    The authors' ``2layer_experiments.py`` (plain SGD on the MSE, all weights trained; they use ReLU,
    ten outputs and width 122 880 on CIFAR-10).

    Examples
    --------
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> net = train_two_layer(X, [1.0, -1.0], 50, activation="tanh", steps=200, rng=np.random.default_rng(0))
    >>> net.W.shape, bool(net.losses[-1] < 1e-6 * net.losses[0])
    ((50, 2), True)
    """
    X = as_array("X", X, ndim=2)
    y = as_array("y", y, ndim=1)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have n = X.shape[0] = {X.shape[0]} entries, got shape {y.shape}")
    width = check_int("width", width, minimum=1)
    activation = _check_activation(activation)
    steps = check_int("steps", steps, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n, d = X.shape
    W0 = random_feature_weights(width, d, rng=rng)
    a0 = rng.standard_normal(width) / np.sqrt(width)
    if learning_rate is None:
        Phi0 = _act(X @ W0.T, activation, np)
        learning_rate = 1.0 / np.linalg.eigvalsh(2.0 * Phi0 @ Phi0.T / n).max()
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    (W, a), losses = _gd_two_layer(jnp.asarray(X), jnp.asarray(y), jnp.asarray(W0), jnp.asarray(a0),
                                   learning_rate, activation=activation, steps=steps)
    return TwoLayerFit(W0, a0, np.asarray(W), np.asarray(a), np.asarray(losses))
