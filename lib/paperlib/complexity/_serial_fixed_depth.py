"""Fixed-depth learners of :mod:`paperlib.complexity.serial`: one-shot MLP and diffusion denoiser.

This private module holds the two models built on the same fixed-depth (TC^0) MLP backbone and their
training, ``vmap``-ed over serial depths in one compiled program: the one-shot classifier
(:func:`train_oneshot`, :func:`oneshot_logits`, :func:`oneshot_flops`) and the conditional diffusion
denoiser (:func:`denoise`, :func:`train_denoiser`). Sampling from the denoiser
(:func:`diffusion_sample`) stays in the public module. Everything here is re-exported by
:mod:`paperlib.complexity.serial`, which is where it is documented and should be imported from.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_key, check_real, is_traced
from ..models.mlp import mlp_apply, mlp_flops, mlp_init
from ..models.training import train
from ._serial_automaton import _centre_trajectory, _check_bits, _check_depths, rule_table

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


# ----------------------------------------------------------------------------------------------
# The fixed-depth (one-shot) learner, vmapped over depths
# ----------------------------------------------------------------------------------------------
def train_oneshot(key, depths, *, width: int = 33, hidden: int = 128, layers: int = 2,
                  steps: int = 1500, batch: int = 256, learning_rate: float = 1e-3, rule: int = 110):
    """Train one fixed-depth MLP per serial depth ``L`` to predict ``y_L(x)`` from ``x`` in one pass.

    All models train at once: :func:`paperlib.models.training.train` is ``vmap``-ed over ``depths`` (one
    compiled program). Every step draws a fresh minibatch of uniform inputs.

    Parameters
    ----------
    key : jax.random key
    depths : array of int, shape (n_L,)
        Serial depths, each in ``[1, (width - 1) // 2]``.
    width : int, default 33
        Input width ``W``.
    hidden, layers : int
        Hidden width and number of hidden layers (architecture ``W -> hidden x layers -> 1``).
    steps, batch : int
    learning_rate : float

    Returns
    -------
    params : list of (W, b), each with a leading axis of length n_L
    losses : jax.Array, shape (n_L, steps)

    Raises
    ------
    ValueError
        If ``width`` is even, a depth is out of range, a size is not a positive integer, or
        ``learning_rate <= 0``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> params, losses = train_oneshot(jax.random.key(0), np.array([1, 2]), width=5, hidden=2,
    ...                                layers=1, steps=2, batch=2)
    >>> losses.shape, params[0][0].shape
    ((2, 2), (2, 5, 2))
    """
    key = check_key("key", key)
    return _train_vmapped(key, depths, "oneshot", width=width, hidden=hidden, layers=layers,
                          steps=steps, batch=batch, learning_rate=learning_rate, rule=rule)


def oneshot_logits(params, x):
    """Logit of ``P(y = 1 | x)`` from a one-shot MLP; ``x`` of {0,1}, shape (B, W) -> (B,).

    Raises
    ------
    ValueError
        If ``x`` is not a 2-D array of 0/1 cells (not checked on a JAX tracer, inside ``jit``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> params = [(rng.standard_normal((5, 4)), np.zeros(4)), (rng.standard_normal((4, 1)), np.zeros(1))]
    >>> logits = oneshot_logits(params, np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]]))
    >>> np.round(np.asarray(logits, dtype=float), 3).tolist()
    [0.0, -0.128]
    """
    if not is_traced(x):
        x = _check_bits(x)
    return mlp_apply(params, 2.0 * jnp.asarray(x, jnp.float32) - 1.0)[..., 0]


def oneshot_flops(*, width: int = 33, hidden: int = 128, layers: int = 2) -> int:
    """FLOPs per example of one forward pass of the one-shot MLP (plus the final threshold).

    Raises
    ------
    ValueError
        If ``width``, ``hidden`` or ``layers`` is not a positive integer.

    Examples
    --------
    >>> oneshot_flops(width=5, hidden=4, layers=1)
    58
    """
    width, hidden, layers = (check_int(nm, v, minimum=1) for nm, v in
                             (("width", width), ("hidden", hidden), ("layers", layers)))
    return mlp_flops((width,) + (hidden,) * layers + (1,), output_nonlinearity=True)


# ----------------------------------------------------------------------------------------------
# The diffusion learner on the same backbone
# ----------------------------------------------------------------------------------------------
def denoise(params, y, sigma, x):
    """Denoiser ``D(y_sigma, sigma, x) = tanh(MLP([2x-1, y/sqrt(1+sigma^2), log(sigma)/3]))``.

    An x_0-predicting denoiser of the scalar output token (VE noising ``y_sigma = y_0 + sigma eps``,
    ``y_0 = 2y - 1``), conditioned on the clean input tokens, as in the paper's Fig. "diffusion
    architecture" (Sec. 4). Shapes: ``y`` (B,), ``sigma`` scalar or (B,), ``x`` (B, W) -> (B,).

    Raises
    ------
    ValueError
        If ``y`` is not a finite 1-D array, ``sigma`` is not positive and finite, or ``x`` is not a
        2-D array of 0/1 cells with one row per entry of ``y`` (arguments that are JAX tracers,
        inside ``jit``, are not checked).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> params = [(rng.standard_normal((7, 4)), np.zeros(4)), (rng.standard_normal((4, 1)), np.zeros(1))]
    >>> x = np.array([[0, 0, 1, 1, 0], [1, 0, 1, 0, 1]])
    >>> np.round(np.asarray(denoise(params, np.array([0.5, -1.0]), 0.5, x), dtype=float), 3).tolist()
    [0.0, -0.969]
    """
    # validate concrete arguments (a JAX tracer inside jit passes unchecked), then compute on the
    # arguments as given, so that their dtypes are kept
    y_shape = jnp.shape(y) if is_traced(y) else as_array("y", y, ndim=1).shape
    if not is_traced(sigma):
        s = as_array("sigma", sigma, ndim=(0, 1))
        if s.ndim == 0:
            check_real("sigma", s[()], minimum=0.0, strict_min=True)
        elif np.any(s <= 0) or s.shape != y_shape:
            raise ValueError(f"sigma must be positive, a scalar or of the shape of y {y_shape}, "
                             f"got shape {s.shape}")
    if not is_traced(x):
        n_rows = _check_bits(x).shape[0]
        if n_rows != y_shape[0]:
            raise ValueError(f"x must have one row per entry of y ({y_shape[0]}), got {n_rows} rows")
    y = jnp.asarray(y)
    x = 2.0 * jnp.asarray(x, jnp.float32) - 1.0
    sigma = jnp.broadcast_to(sigma, y.shape)
    h = jnp.concatenate([x, (y / jnp.sqrt(1.0 + sigma**2))[:, None], (jnp.log(sigma) / 3.0)[:, None]], axis=-1)
    return jnp.tanh(mlp_apply(params, h)[:, 0])


def train_denoiser(key, depths, *, width: int = 33, hidden: int = 128, layers: int = 2,
                   steps: int = 1500, batch: int = 256, learning_rate: float = 1e-3,
                   sigma_min: float = 0.01, sigma_max: float = 20.0, rule: int = 110):
    """Train one diffusion denoiser per serial depth (vmapped), same backbone as :func:`train_oneshot`.

    Loss: mean squared error of :func:`denoise` against ``y_0 = 2 y_L(x) - 1`` with
    ``log sigma ~ U[log sigma_min, log sigma_max]`` (denoising score matching in x_0 form).

    Returns
    -------
    params : list of (W, b), each with a leading axis of length n_L
    losses : jax.Array, shape (n_L, steps)

    Raises
    ------
    ValueError
        As :func:`train_oneshot`, and if ``not 0 < sigma_min < sigma_max``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> params, losses = train_denoiser(jax.random.key(1), np.array([1, 2]), width=5, hidden=2,
    ...                                 layers=1, steps=2, batch=2)
    >>> losses.shape, params[0][0].shape
    ((2, 2), (2, 7, 2))
    """
    key = check_key("key", key)
    check_real("sigma_min", sigma_min, minimum=0.0, strict_min=True)
    check_real("sigma_max", sigma_max, minimum=sigma_min, strict_min=True)
    return _train_vmapped(key, depths, "diffusion", width=width, hidden=hidden, layers=layers,
                          steps=steps, batch=batch, learning_rate=learning_rate, rule=rule,
                          sigma_min=sigma_min, sigma_max=sigma_max)


def _train_vmapped(key, depths, kind, *, width, hidden, layers, steps, batch, learning_rate, rule,
                   sigma_min=0.01, sigma_max=20.0):
    width = check_int("width", width, minimum=3)
    if width % 2 == 0:
        raise ValueError(f"width must be odd, got {width}")
    depths = _check_depths(depths, width)
    for nm, v in (("hidden", hidden), ("layers", layers), ("batch", batch)):
        check_int(nm, v, minimum=1)
    check_int("steps", steps, minimum=1)
    check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    rule_table(rule)  # validates rule
    return _train_vmapped_jit(key, depths, kind, width, hidden, layers, steps, batch,
                              float(learning_rate), rule, float(sigma_min), float(sigma_max))


@partial(jax.jit, static_argnums=(2, 3, 4, 5, 6, 7, 8, 9, 10, 11))
def _train_vmapped_jit(key, depths, kind, width, hidden, layers, steps, batch, lr, rule, s_min, s_max):
    table = jnp.asarray(rule_table(rule))
    d_max = (width - 1) // 2
    n_in = width + (2 if kind == "diffusion" else 0)
    sizes = (n_in,) + (hidden,) * layers + (1,)
    opt = optax.adam(lr)

    def one_model(L, k_init, k_train):

        def loss_fn(p, kk):
            kx, ks, ke = jax.random.split(kk, 3)
            x = jax.random.bernoulli(kx, 0.5, (batch, width)).astype(jnp.int32)
            y = _centre_trajectory(x, d_max, table)[:, L - 1]
            if kind == "oneshot":
                return optax.sigmoid_binary_cross_entropy(oneshot_logits(p, x), y).mean()
            y0 = 2.0 * y - 1.0
            sigma = jnp.exp(jax.random.uniform(ks, (batch,), minval=jnp.log(s_min), maxval=jnp.log(s_max)))
            y_noisy = y0 + sigma * jax.random.normal(ke, (batch,))
            return jnp.mean((denoise(p, y_noisy, sigma, x) - y0) ** 2)

        res = train(loss_fn, mlp_init(k_init, sizes), opt, steps=steps, key=k_train)
        return res.params, res.losses

    # Different initialisations per depth, one shared stream of training inputs: the stream's key is
    # not batched, so vmap draws the inputs and runs the CA once per step for all depths.
    k_init, k_data = jax.random.split(key)
    init_keys = jax.random.split(k_init, depths.shape[0])
    return jax.vmap(one_model, in_axes=(0, 0, None))(depths, init_keys, k_data)
