"""The exact second-moment recursion of one-pass SGD on power-law linear regression (private).

This module holds the one-step theory of :mod:`paperlib.scaling_laws.functional_scaling`: the
power-law task (spectrum and initial second moments), the diagonalised exact SGD step on the second
moments ``m <- A_B m + c_B`` (:class:`MomentOperator`), its closed-form propagation over any number of
steps, and the excess risk of a second-moment state. Schedules, the functional scaling law and the
Monte Carlo check live in the public module, which re-exports every public name defined here; import
it from there.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_real


class MomentOperator(NamedTuple):
    """One SGD step on the second moments, ``m <- A_B m + c_B``, diagonalised (:func:`sgd_moment_operator`).

    Attributes
    ----------
    lam : ndarray, shape (n,)
        Eigenvalues of the feature covariance ``H``.
    eta, batch, sigma2 : float
        Learning rate, batch size and label-noise variance of the step.
    nu : ndarray, shape (n,)
        Eigenvalues of ``G_B = I - A_B``; every one lies in (0, 2) (a stable step).
    U : ndarray, shape (n, n)
        Orthonormal eigenvectors of ``G_B`` (``A_B`` is symmetric).
    uc : ndarray, shape (n,)
        ``U^T c_B``.
    """

    lam: np.ndarray
    eta: float
    batch: float
    sigma2: float
    nu: np.ndarray
    U: np.ndarray
    uc: np.ndarray


def _one_blas_thread():
    """Small eigen-decompositions run fastest, and immune to CPU contention, on one BLAS thread."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _check_lam(lam):
    lam = as_array("lam", lam, ndim=1, min_size=1)
    if np.any(lam <= 0):
        raise ValueError("lam must be positive (eigenvalues of a covariance)")
    return lam


def _check_op(name, op):
    if not isinstance(op, MomentOperator):
        raise ValueError(f"{name} must be a MomentOperator from sgd_moment_operator, got {type(op).__name__}")
    return op


def power_law_task(n, *, beta, s, excess0=1.0):
    """Spectrum and initial second moments of power-law linear regression with capacity ``beta``, source ``s``.

    ``lam_j = j^(-beta)`` and ``theta_0 = 0``, with signal energy ``lam_j theta*_j^2 = c j^(-(s beta + 1))``,
    ``c`` chosen so that the initial excess risk ``1/2 sum_j lam_j theta*_j^2`` equals ``excess0``.
    With this source condition the signal term decays like ``e(t) ~ t^(-s)`` and the noise kernel like
    ``K(t) ~ t^(-(2 - 1/beta))`` for ``1 << t << n^beta``.

    Parameters
    ----------
    n : int
        Number of features (model size), ``>= 1``.
    beta : float
        Capacity exponent, ``> 1``.
    s : float
        Source (difficulty) exponent, ``> 0``; the task is *hard* for ``s < 1 - 1/beta``.
    excess0 : float, default 1.0
        Initial excess risk, ``> 0``.

    Returns
    -------
    lam : ndarray, shape (n,)
        Eigenvalues ``lam_j``, decreasing.
    m0 : ndarray, shape (n,)
        ``m0_j = theta*_j^2``, the initial ``E (theta_j - theta*_j)^2``.

    Raises
    ------
    ValueError
        If ``n`` is not a positive integer, ``beta <= 1``, ``s <= 0`` or ``excess0 <= 0``.

    Notes
    -----
    The papers state the source condition up to constants (``lam_j theta*_j^2 ≍ j^(-(s beta + 1))``);
    we take it exactly.

    Examples
    --------
    >>> lam, m0 = power_law_task(4, beta=2.0, s=0.5)
    >>> np.round(lam, 4).tolist(), round(float(excess_risk(lam, m0)), 6)
    ([1.0, 0.25, 0.1111, 0.0625], 1.0)
    """
    n = check_int("n", n, minimum=1)
    beta = check_real("beta", beta, minimum=1.0, strict_min=True)
    s = check_real("s", s, minimum=0.0, strict_min=True)
    excess0 = check_real("excess0", excess0, minimum=0.0, strict_min=True)
    j = np.arange(1, n + 1, dtype=float)
    lam = j**-beta
    energy = j ** -(s * beta + 1)
    energy *= 2.0 * excess0 / energy.sum()  # sum_j lam_j m0_j = 2 excess0
    return lam, energy / lam


def sgd_moment_operator(lam, *, eta, batch, sigma2):
    """Diagonalise one exact SGD step on the second moments, ``m <- A_B m + c_B``.

    ``I - A_B = diag(2 eta lam - eta^2 lam^2 (1 + 1/B)) - (eta^2 / B) lam lam^T`` is symmetric; we
    diagonalise it (``I - A_B = U diag(nu) U^T``) rather than ``A_B`` so that ``nu = 1 - mu``, which is
    of order ``eta lam_n`` for the slowest mode, keeps its relative precision.

    Parameters
    ----------
    lam : array_like, shape (n,)
        Positive eigenvalues of the feature covariance.
    eta : float
        Learning rate, ``> 0``.
    batch : float
        Batch size ``B >= 1`` (non-integer values interpolate the formula).
    sigma2 : float
        Label-noise variance, ``>= 0``.

    Returns
    -------
    MomentOperator

    Raises
    ------
    ValueError
        Bad ``lam``; ``eta <= 0``; ``batch < 1``; ``sigma2 < 0``; or an unstable step (an eigenvalue of
        ``A_B`` outside (-1, 1), e.g. ``eta`` too large for the batch).

    Examples
    --------
    >>> op = sgd_moment_operator([1.0, 0.5], eta=0.5, batch=2.0, sigma2=1.0)
    >>> np.round(op.nu, 4).tolist()
    [0.3491, 0.5259]
    """
    lam = _check_lam(lam)
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    batch = check_real("batch", batch, minimum=1.0)
    sigma2 = check_real("sigma2", sigma2, minimum=0.0)
    g = np.diag(2 * eta * lam - eta**2 * lam**2 * (1 + 1 / batch)) - (eta**2 / batch) * np.outer(lam, lam)
    with _one_blas_thread():
        nu, U = np.linalg.eigh(g)
    if nu.min() <= 0 or nu.max() >= 2:
        raise ValueError(
            f"eta={eta} with batch={batch} gives an unstable step (eigenvalues of A_B in "
            f"[{1 - nu.max():.3g}, {1 - nu.min():.3g}], need (-1, 1)): lower eta or raise batch"
        )
    uc = U.T @ ((eta**2 * sigma2 / batch) * lam)
    return MomentOperator(lam, eta, batch, sigma2, nu, U, uc)


def _propagate(m, op, steps):
    # m: (..., n); steps: (...,) or scalar. Exact for integer steps; interpolates between them.
    steps = np.asarray(steps, dtype=float)[..., None]
    log_mu = steps * np.log1p(-op.nu)
    z = m @ op.U
    return (np.exp(log_mu) * z - np.expm1(log_mu) / op.nu * op.uc) @ op.U.T


def propagate(m, op, steps):
    """Second moments after ``steps`` SGD steps with one batch size: ``A^k m + (I - A^k)(I - A)^(-1) c``.

    Parameters
    ----------
    m : array_like, shape (n,) or (r, n)
        Current second moments ``E (theta_j - theta*_j)^2`` (non-negative).
    op : MomentOperator
        From :func:`sgd_moment_operator`.
    steps : float or array_like, shape (r,)
        Number of steps ``k >= 0`` (one per row of ``m``, or one for all). Exact at integers; real
        ``k`` evaluates the same closed form, a smooth interpolation used by the optimisers.

    Returns
    -------
    ndarray, the shape of ``m`` (broadcast with ``steps``)

    Raises
    ------
    ValueError
        If ``m`` has the wrong length, is negative or not finite, ``op`` is not a MomentOperator, or
        ``steps`` is negative or not finite.

    Examples
    --------
    >>> op = sgd_moment_operator([1.0, 0.5], eta=0.5, batch=2.0, sigma2=1.0)
    >>> np.round(propagate([1.0, 1.0], op, 3.0), 4).tolist()
    [0.4187, 0.4536]
    """
    op = _check_op("op", op)
    m = as_array("m", m, ndim=(1, 2))
    if m.shape[-1] != op.lam.size:
        raise ValueError(f"m must have {op.lam.size} entries per row (len(lam)), got shape {m.shape}")
    if np.any(m < 0):
        raise ValueError("m must be non-negative (second moments)")
    steps = as_array("steps", steps, ndim=(0, 1))
    if np.any(steps < 0):
        raise ValueError("steps must be >= 0")
    return _propagate(m, op, steps)


def excess_risk(lam, m):
    """Excess risk ``1/2 sum_j lam_j m_j`` of second moments ``m`` (rows: several states).

    Parameters
    ----------
    lam : array_like, shape (n,)
        Positive eigenvalues.
    m : array_like, shape (n,) or (r, n)
        Second moments.

    Returns
    -------
    float or ndarray, shape (r,)

    Raises
    ------
    ValueError
        If shapes disagree or an entry is not finite.

    Examples
    --------
    >>> float(excess_risk([1.0, 0.5], [2.0, 2.0]))
    1.5
    """
    lam = _check_lam(lam)
    m = as_array("m", m, ndim=(1, 2))
    if m.shape[-1] != lam.size:
        raise ValueError(f"m must have {lam.size} entries per row (len(lam)), got shape {m.shape}")
    out = 0.5 * m @ lam
    return float(out) if out.ndim == 0 else out
