"""Reconstructing a training set from the trained parameters of a random-features model.

This module carries the chapter on Iurada, Bombari, Tommasi & Mondelli (ICLR 2026), *A Law of Data
Reconstruction for Random Features (and Beyond)*. A random-features model (:mod:`paperlib.wide_networks.random_features`)
trained by least squares has output weights ``θ*`` in the span of its training features
``{φ(x_1), …, φ(x_n)}``. An attacker who knows ``V``, ``σ``, ``n`` and ``θ*`` looks for ``n`` inputs
``X̂`` on the ``√d``-sphere whose feature span contains ``θ*``: it minimises the **projection loss**

.. math::

    \\mathcal L(\\hat X) = \\frac{\\|(I - P_{\\hat\\Phi})\\,\\theta^*\\|^2}{\\|\\theta^*\\|^2},
    \\qquad \\hat\\Phi = \\sigma(\\hat X V^\\top) \\in \\mathbb R^{n\\times p},

with ``P_Φ̂`` the orthogonal projector onto the row space of ``Φ̂`` (the paper's objective; the
authors' code evaluates it as ``1 - vᵀA⁻¹v/‖θ‖²`` with ``v = Φ̂θ``, ``A = Φ̂Φ̂ᵀ``).

Public functions
    :func:`projection_loss` (the objective), :func:`reconstruct` (the attack: damped Gauss-Newton
    from random restarts, batched over problems), :func:`reconstruct_first_order` (the authors'
    optimiser, SGD with momentum through optax), :func:`matched_distance` (Hungarian-matched
    reconstruction error) and :func:`matched_rows` (the matched reordering),
    :func:`random_guess_distance` (its chance level) and :func:`classify_outcomes` (recovered /
    wrong zero / partial / inconclusive). The counting
    argument (when are the data identifiable?) and the synthetic task live in
    :mod:`paperlib.wide_networks.identifiability`.

Everything except :func:`reconstruct_first_order` is numpy float64: the attack must tell a loss of
``1e-25`` (an exact solution) from ``1e-6`` (a local minimum).

References
----------
.. [#reconstruction-1] L. Iurada, S. Bombari, T. Tommasi and M. Mondelli, "A Law of Data Reconstruction for Random
   Features (and Beyond)", ICLR 2026, arXiv:2509.22214; code github.com/iurada/data-reconstruction-law
   (``rf_experiments.py``: projection loss, SGD with momentum, re-projection on the sphere;
   ``utils.py``: Hungarian matching).
.. [#reconstruction-2] K. Levenberg (1944), D. Marquardt (1963): damped Gauss-Newton for nonlinear least squares.
"""

from __future__ import annotations

import numpy as np

from ..core._validation import as_array
from ._reconstruction_attack import (  # noqa: F401
    _RIDGE,
    Reconstruction,
    _check_problem,
    _residual,
    reconstruct,
    reconstruct_first_order,
)
from ._reconstruction_matching import (  # noqa: F401
    _assignment,
    _check_pair,
    _check_rng,
    classify_outcomes,
    matched_distance,
    matched_rows,
    random_guess_distance,
)
from .random_features import _act, _check_activation

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "OUTCOMES",
    "Reconstruction",
    "projection_loss",
    "reconstruct",
    "reconstruct_first_order",
    "matched_distance",
    "matched_rows",
    "random_guess_distance",
    "classify_outcomes",
]

#: Labels returned by :func:`classify_outcomes`.
OUTCOMES = ("recovered", "partial", "wrong zero", "inconclusive")


def projection_loss(X_hat, theta, V, *, activation: str = "relu") -> np.ndarray:
    """Projection loss ``‖(I - P_Φ̂)θ‖² / ‖θ‖²`` of candidate inputs ``X̂`` (the paper's objective).

    Zero exactly when ``θ`` lies in the span of the candidates' features ``{σ(V x̂_i)}``. The candidate
    rows are used as given (not re-projected on the sphere).

    Parameters
    ----------
    X_hat : array_like, shape (n, d) or (m, n, d)
        Candidate inputs (optionally a batch of ``m`` candidate sets).
    theta : array_like, shape (p,) or (m, p)
        Trained output weights, nonzero.
    V : array_like, shape (p, d) or (m, p, d)
        First-layer weights of the RF model.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The model's nonlinearity σ.

    Returns
    -------
    ndarray, shape () or (m,)
        The loss, in ``[0, 1]``.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, a candidate row is zero, ``theta`` is zero,
        or the activation is unknown.

    Notes
    -----
    Computed as ``‖θ - Φ̂ᵀa‖²/‖θ‖²`` with ``a = (Φ̂Φ̂ᵀ + εI)⁻¹Φ̂θ`` and ``ε = 10⁻¹⁴ tr(Φ̂Φ̂ᵀ)/n``,
    in float64. Forming the residual avoids the cancellation of ``1 - vᵀA⁻¹v/‖θ‖²`` (the authors'
    formula, in float32 there), so exact solutions show losses near ``1e-28`` instead of ``1e-7``.

    Examples
    --------
    >>> V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> theta = np.array([1.0, 0.0, 1.0])                  # = φ(x) for x = (1, 0), ReLU
    >>> float(np.round(projection_loss([[1.0, 0.0]], theta, V), 12))
    0.0
    >>> float(np.round(projection_loss([[0.0, 1.0]], theta, V), 3))  # φ(x̂) = (0, 1, 1)
    0.75
    """
    activation = _check_activation(activation)
    theta, V, batched = _check_problem(theta, V)
    X_hat = as_array("X_hat", X_hat, ndim=(2, 3), min_size=1)
    if X_hat.ndim == 2:
        X_hat = np.broadcast_to(X_hat, (theta.shape[0],) + X_hat.shape)
    if X_hat.shape[0] != theta.shape[0] or X_hat.shape[2] != V.shape[2]:
        raise ValueError(f"X_hat must have shape (n, {V.shape[2]}) or ({theta.shape[0]}, n, {V.shape[2]}), got {X_hat.shape}")
    if np.any(np.linalg.norm(X_hat, axis=2) == 0):
        raise ValueError("X_hat must not contain a zero row")
    tn = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    Phi = _act(np.matmul(X_hat, np.swapaxes(V, 1, 2)), activation, np)
    A = np.matmul(Phi, np.swapaxes(Phi, 1, 2))
    A += (_RIDGE * np.trace(A, axis1=1, axis2=2) / A.shape[1])[:, None, None] * np.eye(A.shape[1])
    a = np.linalg.solve(A, np.matmul(Phi, tn[:, :, None]))[..., 0]
    r = tn - np.matmul(a[:, None, :], Phi)[:, 0]
    loss = np.sum(r * r, axis=1)
    return loss if batched else loss[0]
