"""Unit tests of paperlib.implicit.plug_and_play against direct computations."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from paperlib.implicit import plug_and_play as pnp


@pytest.fixture(scope="module")
def blur():
    return pnp.gaussian_blur(8, 1.0)


def test_blur_matches_a_direct_periodic_convolution(blur):
    A, lam, V = blur
    img = np.random.default_rng(0).uniform(size=(8, 8))
    d = np.minimum(np.arange(8), 8 - np.arange(8))
    k = np.exp(-(d[:, None] ** 2 + d[None, :] ** 2) / 2.0)
    k /= k.sum()
    direct = np.zeros((8, 8))
    for a in range(8):                     # out[i, j] = sum_ab k[a, b] img[i - a, j - b] (indices mod 8)
        for b in range(8):
            direct += k[a, b] * np.roll(np.roll(img, a, axis=0), b, axis=1)
    np.testing.assert_allclose((A @ img.ravel()).reshape(8, 8), direct, atol=1e-12)


def test_blur_is_a_symmetric_averaging_operator(blur):
    A, lam, V = blur
    np.testing.assert_allclose(A, A.T, atol=1e-15)
    np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(V @ np.diag(lam) @ V.T, A, atol=1e-12)
    assert 0 < lam.min() < 1e-3 and lam.max() == pytest.approx(1.0)


def test_pnp_operator_against_the_pixel_domain_formula(blur):
    A, lam, V = blur
    rng = np.random.default_rng(1)
    h, b = rng.standard_normal(64), 0.1
    y, x = rng.uniform(size=(3, 64)), rng.uniform(size=(3, 64))
    got = pnp.pnp_operator({"h": jnp.asarray(h), "b": jnp.asarray(b)}, jnp.asarray(y), jnp.asarray(x),
                           basis=V, eigenvalues=lam, step=0.8)
    z = y - 0.8 * (y @ A - x) @ A                         # y - step A^T (A y - x), row convention
    D = V @ np.diag(np.tanh(h)) @ V.T
    np.testing.assert_allclose(np.asarray(got), np.clip(z @ D + b, 0, 1), atol=1e-5)
    ex = pnp.spectral_filter({"g": jnp.asarray(h), "b": jnp.asarray(b)}, jnp.asarray(x), basis=V)
    np.testing.assert_allclose(np.asarray(ex), np.clip(x @ (V @ np.diag(h) @ V.T) + b, 0, 1), atol=1e-5)


def test_psnr_formula():
    est = np.stack([np.full((2, 4), 0.1), np.full((2, 4), 0.01)])
    out = pnp.psnr(est, np.zeros((2, 4)))
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out, [[20.0, 20.0], [40.0, 40.0]])


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pnp.gaussian_blur(1, 1.0), "size"),
        (lambda: pnp.gaussian_blur(8, 0.0), "sigma"),
        (lambda: pnp.pnp_operator({"h": jnp.ones(16), "b": 0.0}, jnp.ones((1, 16)), jnp.ones((1, 16)),
                                  basis=np.eye(16), eigenvalues=np.ones(16), step=2.0), "step"),
        (lambda: pnp.spectral_filter({"g": jnp.ones(16), "b": 0.0}, jnp.ones((1, 9)), basis=np.eye(16)), "x"),
        (lambda: pnp.fit_deblurring(np.ones((4, 16)), pnp.gaussian_blur(4, 1.0), key=jax.random.key(0),
                                    model="deep", noise=0.1), "model"),
        (lambda: pnp.psnr(np.ones((2, 3)), np.ones((2, 4))), "estimate"),
    ],
)
def test_bad_input_is_loud(call, match):
    with pytest.raises(ValueError, match=match):
        call()
