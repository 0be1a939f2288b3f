"""FedExProx's round operators: exact and local-GD proximal points, one round, its matrix, and the round count.

This private module holds the linear algebra of one FedExProx round on quadratic clients (the exact
prox, the prox computed by local gradient descent in closed form, the extrapolated server step and
its matrix) and :func:`count_rounds`, which counts rounds to a target accuracy by binary lifting,
with the checks of its preconditions. It is re-exported by the public module
:mod:`paperlib.distributed.fedexprox`, where these functions are documented and should be imported from.
"""

from __future__ import annotations

import numpy as np

from ..core._validation import as_array, check_int, check_real
from .moreau import _clients, _envelope_hessian, _gamma, _top_nonzero


def _local_displacement(w, v, gamma, t, xb):
    """x - z_t for t local GD steps on every client (closed form in each A_i's eigenbasis)."""
    L_i = w[:, -1:]
    rho = (L_i - w) / (L_i + 1.0 / gamma)
    shrink = (1.0 - rho**t) * gamma * w / (1.0 + gamma * w)
    return ((v * shrink[:, None, :]) @ np.swapaxes(v, 1, 2)) @ xb


def _points(x, d) -> np.ndarray:
    x = as_array("x", x, ndim=(1, 2), min_size=1)
    if x.shape[0] != d:
        raise ValueError(f"x must have shape (d,) or (d, B) with d = {d}, got {x.shape}")
    return x


def prox_quadratic(As, x, gamma) -> np.ndarray:
    r"""Exact proximal points :math:`(I + \gamma A_i)^{-1} x` of every client.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    x : array_like, shape (d,) or (d, B)
        Server point(s).
    gamma : float
        Prox step, > 0.

    Returns
    -------
    ndarray, shape (n, d) or (n, d, B)

    Raises
    ------
    ValueError
        On a shape mismatch, non-finite input or ``gamma <= 0``.

    Examples
    --------
    >>> prox_quadratic([[[1.0]], [[3.0]]], [4.0], 1.0).tolist()
    [[2.0], [1.0]]
    """
    As = _clients(As)[0]
    x, gamma = _points(x, As.shape[1]), _gamma(gamma)
    xb = np.broadcast_to(x.reshape(As.shape[1], -1), (As.shape[0], As.shape[1], x.size // As.shape[1]))
    z = np.linalg.solve(np.eye(As.shape[1]) + gamma * As, xb)
    return z.reshape((As.shape[0],) + x.shape)


def local_gd_prox(As, x, gamma, *, steps) -> np.ndarray:
    r"""Proximal points computed by ``steps`` local gradient-descent steps from :math:`z_0 = x`.

    Client :math:`i` minimises :math:`\phi_i(z) = \tfrac12 z^\top A_i z + \|z - x\|^2/(2\gamma)` with step
    :math:`1/(L_i + 1/\gamma)`. In the eigenbasis of :math:`A_i` the error contracts by
    :math:`\rho_j = (L_i - a_j)/(L_i + 1/\gamma) \in [0, 1)` per step, so ``steps`` steps are evaluated in
    closed form, :math:`x - z_t = (I - G_i^t)\,\gamma A_i (I + \gamma A_i)^{-1} x` (the unit tests compare
    with the step-by-step loop).

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    x : array_like, shape (d,) or (d, B)
        Server point(s).
    gamma : float
        Prox step, > 0.
    steps : int
        Local steps per client, >= 0 (``0`` returns ``x``).

    Returns
    -------
    ndarray, shape (n, d) or (n, d, B)

    Raises
    ------
    ValueError
        On bad shapes, non-finite input, ``gamma <= 0`` or a negative or non-integer ``steps``.

    Examples
    --------
    >>> local_gd_prox([[[1.0]]], [4.0], 1.0, steps=1).tolist()    # one step is exact for a scalar
    [[2.0]]
    """
    As, w, v = _clients(As)
    x, gamma = _points(x, As.shape[1]), _gamma(gamma)
    t = check_int("steps", steps, minimum=0)
    xb = x.reshape(As.shape[1], -1)
    return (xb[None] - _local_displacement(w, v, gamma, t, xb)).reshape((As.shape[0],) + x.shape)


def fedexprox_step(As, x, gamma, *, alpha, local=None) -> np.ndarray:
    r"""One FedExProx round :math:`x + \alpha(\frac1n\sum_i \operatorname{prox}_{\gamma f_i}(x) - x)` over the given clients.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Hessians of the participating clients.
    x : array_like, shape (d,) or (d, B)
        Server point(s).
    gamma : float
        Prox step, > 0.
    alpha : float
        Extrapolation, > 0 (``1`` is FedProx; :math:`1/(\gamma L_\gamma)` is the paper's choice).
    local : int, optional
        Local GD steps for an inexact prox (:func:`local_gd_prox`); ``None`` uses the exact prox.

    Returns
    -------
    ndarray, shape like ``x``

    Raises
    ------
    ValueError
        On bad shapes or non-positive ``gamma`` or ``alpha``.

    Examples
    --------
    >>> fedexprox_step([[[1.0]], [[3.0]]], [4.0], 1.0, alpha=2.0).tolist()   # 4 + 2 (1.5 - 4)
    [-1.0]
    """
    As, w, v = _clients(As)
    x, gamma = _points(x, As.shape[1]), _gamma(gamma)
    alpha = check_real("alpha", alpha, minimum=0.0, strict_min=True)
    return _round(As, w, v, x, gamma, alpha, local)


def _round(As, w, v, x, gamma, alpha, local):
    xb = x.reshape(As.shape[1], -1)
    if local is None:
        z = np.linalg.solve(np.eye(As.shape[1]) + gamma * As, np.broadcast_to(xb, (As.shape[0],) + xb.shape))
        disp = xb[None] - z
    else:
        disp = _local_displacement(w, v, gamma, check_int("local", local, minimum=0), xb)
    return (xb - alpha * disp.mean(axis=0)).reshape(x.shape)


def round_matrix(As, gamma, *, alpha=None, local=None) -> np.ndarray:
    r"""The linear map :math:`T` of one round, obtained by applying the round to the identity.

    ``gamma = 0`` is gradient descent on :math:`f` with step :math:`1/L`. Otherwise ``alpha`` defaults to
    the paper's :math:`1/(\gamma L_\gamma)`.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    gamma : float
        Prox step, >= 0.
    alpha : float, optional
        Extrapolation (only for ``gamma > 0``).
    local : int, optional
        Local GD steps (inexact prox); ``None`` is exact.

    Returns
    -------
    ndarray, shape (d, d)

    Raises
    ------
    ValueError
        On bad input, or ``alpha``/``local`` given with ``gamma = 0``.

    Examples
    --------
    >>> np.round(round_matrix([[[1.0]], [[3.0]]], 1.0), 4).tolist()      # 1 - H/L_gamma
    [[0.0]]
    """
    As, w, v = _clients(As)
    gamma = _gamma(gamma, positive=False)
    d = As.shape[1]
    if gamma == 0:
        if alpha is not None or local is not None:
            raise ValueError("alpha and local apply only to gamma > 0 (gamma = 0 is GD with step 1/L)")
        A = As.mean(axis=0)
        return np.eye(d) - A / _top_nonzero(A)[0]
    if alpha is None:
        alpha = 1.0 / (gamma * _top_nonzero(_envelope_hessian(w, v, gamma))[0])
    alpha = check_real("alpha", alpha, minimum=0.0, strict_min=True)
    return _round(As, w, v, np.eye(d), gamma, alpha, local)


def _sq_dist(x, basis):
    return np.sum((basis.T @ x) ** 2, axis=0)


_PRECONDITION_TOL = 1e-6


def _check_round_map(T, basis):
    """The preconditions of :func:`count_rounds`: symmetric contraction ``T``, orthonormal ``basis``."""
    asym = float(np.max(np.abs(T - T.T)))
    if asym > _PRECONDITION_TOL * max(1.0, float(np.max(np.abs(T)))):
        raise ValueError(f"T must be symmetric (the round map of a symmetric problem), got max|T - T^T| = {asym:.3g}")
    eig = np.linalg.eigvalsh(0.5 * (T + T.T))
    if eig[0] < -1.0 - _PRECONDITION_TOL or eig[-1] > 1.0 + _PRECONDITION_TOL:
        raise ValueError(f"T must be a contraction (eigenvalues in [-1, 1]), got eigenvalues in "
                         f"[{eig[0]:.6g}, {eig[-1]:.6g}]")
    _check_orthonormal(basis)


def _check_orthonormal(basis):
    """``basis`` (d, r) must have orthonormal columns: ``max|B^T B - I| <= 1e-6``."""
    gram = basis.T @ basis
    off = float(np.max(np.abs(gram - np.eye(gram.shape[0]))))
    if off > _PRECONDITION_TOL:
        raise ValueError(f"basis must have orthonormal columns (max|B^T B - I| <= {_PRECONDITION_TOL}), got {off:.3g}")


def count_rounds(T, x0, *, eps, basis, max_rounds=2**40) -> int:
    r"""Smallest :math:`K` with :math:`\max_b \|P x_K^{(b)}\|^2 / \|P x_0^{(b)}\|^2 \le \varepsilon`, :math:`x_K = T^K x_0`.

    :math:`P = BB^\top` projects on the range (``basis`` :math:`B`), so :math:`\|Px\|` is the distance to the
    solution set. The count uses powers :math:`T^{2^j}` and binary lifting, valid because the ratio is
    non-increasing in :math:`K` for the symmetric contractions :math:`0 \preceq T \preceq I` of this module.

    Parameters
    ----------
    T : array_like, shape (d, d)
        One round's linear map: symmetric (``max|T - T^T| <= 1e-6 max(1, max|T|)``) and a contraction
        (eigenvalues in ``[-1 - 1e-6, 1 + 1e-6]``), as the count relies on both.
    x0 : array_like, shape (d, B)
        Starting points, each with a non-zero range component.
    eps : float
        Target in (0, 1).
    basis : array_like, shape (d, r)
        Orthonormal basis of the range: ``max|B^T B - I| <= 1e-6``.
    max_rounds : int, default 2**40
        Give up above this; at most ``2**63 - 1`` (it is only compared with, never allocated).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        On bad shapes, a ``T`` that is not symmetric or not a contraction, a ``basis`` that is not
        orthonormal (tolerances above), a start without range component, ``eps`` outside (0, 1), or when
        ``max_rounds`` rounds do not reach the target.

    Examples
    --------
    >>> count_rounds(0.5 * np.eye(1), np.ones((1, 1)), eps=0.01, basis=np.eye(1))   # 0.25^K <= 0.01
    4
    """
    T = as_array("T", T, ndim=2, min_size=1)
    d = T.shape[0]
    if T.shape != (d, d):
        raise ValueError(f"T must be square, got {T.shape}")
    x0 = as_array("x0", x0, shape=(d, None), min_size=1)
    basis = as_array("basis", basis, shape=(d, None), min_size=1)
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    max_rounds = check_int("max_rounds", max_rounds, minimum=1, limit=2**63 - 1)
    _check_round_map(T, basis)
    d0 = _sq_dist(x0, basis)
    if np.any(d0 <= 0):
        raise ValueError("x0 must have a non-zero component in the range of basis")
    done = lambda x: np.max(_sq_dist(x, basis) / d0) <= eps    # noqa: E731
    powers, x, k = [T], x0, 0
    while not done(powers[-1] @ x0):
        if 2 ** len(powers) > max_rounds:
            raise ValueError(f"the target eps={eps} is not reached within max_rounds={max_rounds} rounds")
        powers.append(powers[-1] @ powers[-1])
    for j in range(len(powers) - 1, -1, -1):       # largest K' with x_{K'} not done, bit by bit
        y = powers[j] @ x
        if not done(y):
            x, k = y, k + 2**j
    return k + 1
