r"""Plug-and-play proximal gradient for deblurring: the paper's imaging implicit model, at 8 x 8 pixels.

Liu et al. (2026) test their theory on image deblurring with the implicit model
:math:`G(y,x)=H_\theta\big(y-\gamma A^\top(Ay-x)\big)` (PGD type; :math:`A` the blur, :math:`x` the
blurred noisy image, :math:`H_\theta` a DRUNet denoiser), trained through its fixed point. This module
builds a periodic Gaussian blur with its eigenbasis, the same operator with a per-frequency shrinkage
and a box projection in place of the DRUNet, an explicit filter with the same number of parameters,
their training on blurred images, and the PSNR.

The gradient step alone is the sufficiency construction of the paper in disguise: along an
eigenvector of :math:`A` with eigenvalue :math:`\lambda`, :math:`y_t=(1-(1-\gamma\lambda^2)^t)x/\lambda`,
the iterate of :math:`G(y,x)=(1-\varepsilon)y+\varepsilon F` with :math:`F=x/\lambda` and step
:math:`\varepsilon=\gamma\lambda^2`, small exactly where the inverse :math:`1/\lambda` is steep.

References
----------
J. Liu, L. Ding, S. Osher, W. Yin, "Implicit Models: Expressive Power Scales with Test-Time
Compute", ICLR 2026, arXiv:2510.03638.
D. Gilton, G. Ongie, R. Willett, "Deep equilibrium architectures for inverse problems in imaging",
IEEE Trans. Comput. Imaging 7 (2021).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_key, check_option, check_real, is_traced
from .implicit_models import fixed_point
from ..models.training import TrainResult, train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["gaussian_blur", "pnp_operator", "spectral_filter", "linear_response", "fit_deblurring", "psnr"]


def _maybe_array(name: str, value, **kw):
    return value if is_traced(value) else jnp.asarray(as_array(name, value, dtype=None, **kw))

def gaussian_blur(size: int, sigma: float):
    r"""Periodic Gaussian blur on ``size x size`` images, as a symmetric matrix with its eigenbasis.

    The kernel :math:`k(i,j)\propto\exp(-(d_i^2+d_j^2)/(2\sigma^2))`, :math:`d` the periodic distance,
    sums to one, so the largest eigenvalue is 1 (constant images pass unchanged); the smallest decays
    like :math:`\exp(-\pi^2\sigma^2)` at the highest frequency, which makes deblurring ill-posed.

    Parameters
    ----------
    size : int
        Image side ``n >= 2``.
    sigma : float
        Kernel width in pixels, positive.

    Returns
    -------
    matrix : numpy.ndarray, shape (n*n, n*n)
        :math:`A`, acting on row-major flattened images.
    eigenvalues : numpy.ndarray, shape (n*n,)
        Ascending (all positive for a Gaussian kernel).
    basis : numpy.ndarray, shape (n*n, n*n)
        Orthonormal eigenvectors as columns: :math:`A=V\,\mathrm{diag}(\lambda)V^\top`.

    Raises
    ------
    ValueError
        If ``size`` is not an integer >= 2 or ``sigma`` is not positive.

    Examples
    --------
    >>> A, lam, V = gaussian_blur(8, 1.0)
    >>> A.shape, round(float(lam.max()), 6), bool(np.allclose(V @ np.diag(lam) @ V.T, A))
    ((64, 64), 1.0, True)
    """
    size = check_int("size", size, minimum=2)
    sigma = check_real("sigma", sigma, minimum=0.0, strict_min=True)
    d = np.minimum(np.arange(size), size - np.arange(size))
    k1 = np.exp(-d ** 2 / (2 * sigma ** 2))
    spectrum = np.real(np.fft.fft2(np.outer(k1, k1) / np.outer(k1, k1).sum()))
    unit = np.eye(size * size).reshape(-1, size, size)
    matrix = np.real(np.fft.ifft2(np.fft.fft2(unit) * spectrum)).reshape(size * size, -1).T
    matrix = 0.5 * (matrix + matrix.T)
    eigenvalues, basis = np.linalg.eigh(matrix)
    return matrix, eigenvalues, basis


def pnp_operator(params: dict, y, x, *, basis, eigenvalues, step: float = 1.0):
    r"""Proximal-gradient (PGD-type) implicit model for deblurring with a learned spectral denoiser.

    .. math:: G(y,x)=\Pi_{[0,1]}\Big(V\,\mathrm{diag}(\tanh h)\,V^\top\big(y-\gamma A^\top(Ay-x)\big)+b\Big),

    the paper's :math:`G=H_\theta(y-\gamma A^\top(Ay-x))` with the DRUNet denoiser :math:`H_\theta`
    replaced by a per-frequency shrinkage :math:`|\tanh h_k|\le1` and a projection on the pixel box.
    Each mode contracts by :math:`|\tanh h_k|(1-\gamma\lambda_k^2)<1` and the map is
    :math:`\gamma\lambda_{\max}`-Lipschitz in :math:`x`: the operator is regular.

    Parameters
    ----------
    params : dict
        ``h`` of shape ``(n,)`` and scalar ``b``.
    y : array_like, shape (B, n)
        Current estimates of the images (flattened).
    x : array_like, shape (B, n)
        Blurred, noisy measurements.
    basis : array_like, shape (n, n)
        Eigenvectors of the symmetric blur :math:`A` (from :func:`gaussian_blur`).
    eigenvalues : array_like, shape (n,)
        Its eigenvalues :math:`\lambda_k`.
    step : float, default 1.0
        Gradient step :math:`\gamma`, in ``(0, 1 / max(eigenvalues)**2]``.

    Returns
    -------
    jax.Array, shape (B, n)

    Raises
    ------
    ValueError
        If ``step`` is out of range or (outside ``jit``) shapes disagree.

    Notes
    -----
    Our denoiser is linear before the projection, with one parameter per frequency, instead of a
    32.6 M-parameter DRUNet: the point is the structure of the implicit model, at laptop scale.

    Examples
    --------
    >>> A, lam, V = gaussian_blur(4, 1.0)
    >>> p = {"h": jnp.full(16, 3.0), "b": jnp.zeros(())}
    >>> pnp_operator(p, jnp.zeros((2, 16)), jnp.full((2, 16), 0.5), basis=V, eigenvalues=lam).shape
    (2, 16)
    """
    basis = _maybe_array("basis", basis, ndim=2)
    eigenvalues = _maybe_array("eigenvalues", eigenvalues, ndim=1)
    lam_max = None if is_traced(eigenvalues) else float(jnp.max(jnp.abs(eigenvalues)))
    step = check_real("step", step, minimum=0.0, strict_min=True,
                      maximum=None if lam_max is None else 1.0 / lam_max ** 2 * (1 + 1e-9))
    y = _maybe_array("y", y, ndim=2)
    x = _maybe_array("x", x, ndim=2)
    if y.shape != x.shape or y.shape[1] != basis.shape[0]:
        raise ValueError(f"y and x must have shape (B, {basis.shape[0]}), got {y.shape} and {x.shape}")
    z = (1 - step * eigenvalues ** 2) * (y @ basis) + step * eigenvalues * (x @ basis)
    return jnp.clip((jnp.tanh(params["h"]) * z) @ basis.T + params["b"], 0.0, 1.0)


def spectral_filter(params: dict, x, *, basis):
    r"""Explicit deblurring model with as many parameters as :func:`pnp_operator`.

    .. math:: g(x)=\Pi_{[0,1]}\big(V\,\mathrm{diag}(g)\,V^\top x+b\big):

    one learned gain per frequency (a learned Wiener-type filter) and one projection on the box.

    Parameters
    ----------
    params : dict
        ``g`` of shape ``(n,)`` and scalar ``b``.
    x : array_like, shape (B, n)
        Measurements.
    basis : array_like, shape (n, n)
        Eigenvectors of the blur.

    Returns
    -------
    jax.Array, shape (B, n)

    Raises
    ------
    ValueError
        If (outside ``jit``) the shapes disagree.

    Examples
    --------
    >>> A, lam, V = gaussian_blur(4, 1.0)
    >>> p = {"g": jnp.ones(16), "b": jnp.zeros(())}
    >>> round(float(spectral_filter(p, jnp.full((1, 16), 0.5), basis=V)[0, 0]), 4)
    0.5
    """
    basis = _maybe_array("basis", basis, ndim=2)
    x = _maybe_array("x", x, ndim=2)
    if x.shape[1] != basis.shape[0]:
        raise ValueError(f"x must have shape (B, {basis.shape[0]}), got {x.shape}")
    return jnp.clip((params["g"] * (x @ basis)) @ basis.T + params["b"], 0.0, 1.0)

def linear_response(shrinkage, eigenvalues, steps, *, step: float = 1.0) -> np.ndarray:
    r"""Gain of the :math:`t`-th iterate of :func:`pnp_operator` along each eigenvector, without the box.

    Without the projection the iteration is diagonal in the blur's eigenbasis: with
    :math:`q_k=s_k(1-\gamma\lambda_k^2)` and :math:`s_k=\tanh h_k`, a perturbation :math:`\delta v_k` of the
    measurement moves :math:`y_t` by

    .. math:: \frac{\|\Delta y_t\|}{\delta}=\Big|s_k\gamma\lambda_k\frac{1-q_k^t}{1-q_k}\Big|,

    which grows with :math:`t` towards :math:`s_k\gamma\lambda_k/(1-q_k)` (:math:`1/\lambda_k` when
    :math:`s_k=1`, the inverse of the blur). The projection is 1-Lipschitz coordinatewise but mixes
    modes, so this is the linearised prediction, not a bound.

    Parameters
    ----------
    shrinkage : array_like, shape (n,)
        :math:`s_k=\tanh h_k`, each in [-1, 1].
    eigenvalues : array_like, shape (n,)
        :math:`\lambda_k`.
    steps : array_like of int, shape (T,)
        Iteration counts :math:`t\ge1`.
    step : float, default 1.0
        :math:`\gamma`, in ``(0, 1 / max(eigenvalues)**2]``.

    Returns
    -------
    numpy.ndarray, shape (T, n)

    Raises
    ------
    ValueError
        On shapes, a shrinkage outside [-1, 1], a count below 1, or a step out of range.

    Examples
    --------
    >>> linear_response(np.array([1.0]), np.array([0.5]), [1, 2, 1000]).round(3).ravel().tolist()
    [0.5, 0.875, 2.0]
    """
    shrinkage = as_array("shrinkage", shrinkage, ndim=1)
    if np.any(np.abs(shrinkage) > 1):
        raise ValueError("shrinkage must lie in [-1, 1]")
    eigenvalues = as_array("eigenvalues", eigenvalues, shape=shrinkage.shape)
    steps = as_array("steps", steps, ndim=1, dtype=np.int64)
    if np.any(steps < 1):
        raise ValueError("steps must be >= 1")
    step = check_real("step", step, minimum=0.0, strict_min=True,
                      maximum=1.0 / np.max(np.abs(eigenvalues)) ** 2 * (1 + 1e-9))
    q = shrinkage * (1 - step * eigenvalues ** 2)
    t = steps[:, None]
    geometric = np.where(np.abs(1 - q) > 1e-12, (1 - q ** t) / np.where(np.abs(1 - q) > 1e-12, 1 - q, 1.0), t)
    return np.abs(shrinkage * step * eigenvalues * geometric)


def _pnp(params, y, x, constants):
    basis, eigenvalues = constants
    return pnp_operator(params, y, x, basis=basis, eigenvalues=eigenvalues)


def fit_deblurring(images, blur, *, key, model: str, noise: float, steps: int = 200, batch: int = 32,
                   num_steps: int = 200, learning_rate: float = 3e-2) -> TrainResult:
    r"""Train the implicit (:func:`pnp_operator`) or the explicit (:func:`spectral_filter`) deblurrer.

    Each step draws ``batch`` training images :math:`y`, measures :math:`x=Ay+\sigma\xi` with fresh
    Gaussian noise, and takes an Adam step (cosine-decayed) on the mean squared error. The implicit
    model is trained at its fixed point: ``num_steps`` Picard iterations forward, implicit
    differentiation backward with ``num_steps // 2`` adjoint iterations (the paper's imaging models
    are trained this way, with 100 forward and 20 backward iterations).

    Parameters
    ----------
    images : array_like, shape (N, n)
        Clean training images, flattened, values in [0, 1].
    blur : tuple
        ``(matrix, eigenvalues, basis)`` from :func:`gaussian_blur`.
    key : jax.random key
        Keyword-only; draws batches and noise.
    model : {"implicit", "explicit"}
    noise : float
        Noise standard deviation :math:`\sigma\ge0`.
    steps : int, default 200
    batch : int, default 32
    num_steps : int, default 200
        Forward fixed-point iterations (implicit model only).
    learning_rate : float, default 3e-2

    Returns
    -------
    paperlib.models.training.TrainResult
        Parameters ``{"h", "b"}`` (implicit, initial shrinkage :math:`\tanh 1`) or ``{"g", "b"}``
        (explicit, initial gain 1).

    Raises
    ------
    ValueError
        On wrong shapes, an unknown ``model``, or non-positive sizes and rates.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> blur = gaussian_blur(4, 0.8)
    >>> imgs = jax.random.uniform(jax.random.key(1), (20, 16))
    >>> res = fit_deblurring(imgs, blur, key=jax.random.key(0), model="explicit", noise=0.01, steps=50)
    >>> bool(res.losses[-1] < res.losses[0])
    True
    """
    key = check_key("key", key)
    images = jnp.asarray(as_array("images", images, ndim=2), dtype=jnp.float32)
    matrix, eigenvalues, basis = (jnp.asarray(as_array("blur", b), dtype=jnp.float32) for b in blur)
    if basis.shape != (images.shape[1],) * 2:
        raise ValueError(f"blur must act on images of {images.shape[1]} pixels, got basis {basis.shape}")
    model = check_option("model", model, ("implicit", "explicit"))
    noise = check_real("noise", noise, minimum=0.0)
    steps = check_int("steps", steps, minimum=1)
    batch = check_int("batch", batch, minimum=1)
    num_steps = check_int("num_steps", num_steps, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)

    def loss(params, k):
        kb, kn = jax.random.split(k)
        y = images[jax.random.choice(kb, images.shape[0], (batch,))]
        x = y @ matrix + noise * jax.random.normal(kn, y.shape)
        if model == "implicit":
            est = fixed_point(_pnp, params, x, num_steps=num_steps, adjoint_steps=max(1, num_steps // 2),
                              constants=(basis, eigenvalues))
        else:
            est = spectral_filter(params, x, basis=basis)
        return jnp.mean((est - y) ** 2)

    n = images.shape[1]
    params = ({"h": jnp.ones(n), "b": jnp.zeros(())} if model == "implicit"
              else {"g": jnp.ones(n), "b": jnp.zeros(())})
    optimizer = optax.adam(optax.cosine_decay_schedule(learning_rate, steps))
    return jax.jit(lambda p, k: train(loss, p, optimizer, steps=steps, key=k))(params, key)


def psnr(estimate, truth) -> np.ndarray:
    r"""Peak signal-to-noise ratio per image, for pixel values in [0, 1]: :math:`-10\log_{10}\mathrm{MSE}`.

    Parameters
    ----------
    estimate : array_like, shape (..., B, n)
        Estimates (leading axes, e.g. iterations, are kept).
    truth : array_like, shape (B, n)
        Clean images.

    Returns
    -------
    numpy.ndarray, shape (..., B)
        PSNR in dB.

    Raises
    ------
    ValueError
        If the trailing shapes disagree or a value is not finite.

    Examples
    --------
    >>> psnr(np.full((1, 4), 0.1), np.zeros((1, 4))).round(2).tolist()
    [20.0]
    """
    truth = as_array("truth", truth, ndim=2)
    estimate = as_array("estimate", estimate, ndim=range(2, 8))
    if estimate.shape[-2:] != truth.shape:
        raise ValueError(f"estimate must end in shape {truth.shape}, got {estimate.shape}")
    return -10.0 * np.log10(np.mean((estimate - truth) ** 2, axis=-1))


_PROBE_EXEMPTIONS = {
    "psnr": {"estimate": {"array_rank": "leading axes of estimate are batch axes (e.g. iterations)"}},
}
