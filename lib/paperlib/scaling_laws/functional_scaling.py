"""One-pass SGD on power-law linear regression: the exact risk recursion and the functional scaling law.

The model of the functional-scaling-law (FSL) papers (Li et al., NeurIPS 2025; Wang et al., ICLR 2026):
Gaussian features ``x ~ N(0, H)`` with ``H = diag(lam)``, targets ``y = <x, theta*> + eps`` with
``eps ~ N(0, sigma2)``, and one-pass minibatch SGD

``theta_{k+1} = theta_k - (eta / B_k) sum_{i <= B_k} x_i (<x_i, theta_k> - y_i)``

on fresh samples, so that a schedule with batches ``B_k`` consumes ``D = sum_k B_k`` samples. The
excess risk is ``E(theta) = 1/2 E<x, theta - theta*>^2 = 1/2 sum_j lam_j (theta_j - theta*_j)^2``.

For Gaussian ``x`` the diagonal ``m_j = E (theta_j - theta*_j)^2`` obeys a closed, **exact** linear
recursion (the Gaussian fourth moment ``E[x x^T A x x^T] = 2 H A H + tr(HA) H`` is the only input):

``m <- A_B m + c_B``,  ``A_B = diag((1 - eta lam)^2 + eta^2 lam^2 / B) + (eta^2 / B) lam lam^T``,
``c_B = (eta^2 sigma2 / B) lam``.

:func:`sgd_moment_operator` diagonalises ``G_B = I - A_B`` once per batch size, after which
:func:`propagate` jumps any number of steps in ``O(n^2)``. :func:`fsl_risk` evaluates the first-order
FSL functional of the same model (intrinsic time ``t = eta k``)

``2 E(t) ~ e(t) + sum over stages (eta / b) int K(t - z) (e(z) + sigma2) dz``,
``e(t) = sum_j lam_j m0_j exp(-2 lam_j t)``, ``K(u) = sum_j lam_j^2 exp(-2 lam_j u)``,

and :func:`sgd_monte_carlo` runs the stochastic algorithm itself, to check the recursion.

References: B. Li, F. Chen, Z. Huang, L. Wang, L. Wu, *Functional Scaling Laws in Kernel Regression:
Loss Dynamics and Learning Rate Schedules*, NeurIPS 2025, arXiv:2509.19189 (the FSL); J. Wang, B. Li,
Z. Zhou, M. Wang, Y. Sun, J. Zhang, X. Cai, L. Wu, *Fast Catch-Up, Late Switching: Optimal Batch Size
Scheduling via Functional Scaling Laws*, ICLR 2026, arXiv:2602.14208 (its use for batch schedules).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import NamedTuple, Sequence

import numpy as np

from ..core._validation import as_array, check_int, check_real

__all__ = [
    "MomentOperator",
    "power_law_task",
    "sgd_moment_operator",
    "propagate",
    "excess_risk",
    "schedule_risk",
    "fsl_risk",
    "sgd_monte_carlo",
]


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


def _check_schedule(ops, steps):
    if isinstance(ops, MomentOperator) or not isinstance(ops, (list, tuple)) or len(ops) == 0:
        raise ValueError("ops must be a non-empty list of MomentOperator, one per stage")
    for i, op in enumerate(ops):
        _check_op(f"ops[{i}]", op)
        if op.lam is not ops[0].lam and not np.array_equal(op.lam, ops[0].lam):
            raise ValueError("ops must all share the same lam")
    steps = as_array("steps", steps, ndim=1, shape=(len(ops),))
    if np.any(steps < 0):
        raise ValueError("steps must be >= 0")
    return steps


def schedule_risk(m0, ops, steps, *, at=None):
    """Exact expected excess risk of SGD under a piecewise-constant batch schedule.

    Stage ``i`` runs ``steps[i]`` steps with the operator ``ops[i]`` (its batch size), starting from
    ``m0``. With ``at``, the risk is returned at those global step counts instead of at the end.

    Parameters
    ----------
    m0 : array_like, shape (n,)
        Initial second moments (``theta*^2`` for ``theta_0 = 0``).
    ops : list of MomentOperator, length S
        One per stage, sharing ``lam``.
    steps : array_like, shape (S,)
        Steps per stage, ``>= 0``.
    at : array_like, shape (K,), optional
        Global step counts in ``[0, sum(steps)]``.

    Returns
    -------
    float, or ndarray of shape (K,) with ``at``

    Raises
    ------
    ValueError
        Bad shapes or values; ``at`` outside ``[0, sum(steps)]``.

    Examples
    --------
    >>> lam, m0 = power_law_task(20, beta=2.0, s=0.5)
    >>> ops = [sgd_moment_operator(lam, eta=0.5, batch=b, sigma2=1.0) for b in (1, 8)]
    >>> round(schedule_risk(m0, ops, [100.0, 20.0]), 4)
    0.1022
    """
    steps = _check_schedule(ops, steps)
    m0 = as_array("m0", m0, ndim=1, shape=(ops[0].lam.size,))
    if np.any(m0 < 0):
        raise ValueError("m0 must be non-negative")
    lam = ops[0].lam
    if at is None:
        m = m0
        for op, k in zip(ops, steps):
            m = _propagate(m, op, k)
        return float(0.5 * m @ lam)
    at = as_array("at", at, ndim=1, min_size=1)
    edges = np.concatenate([[0.0], np.cumsum(steps)])
    if np.any(at < 0) or np.any(at > edges[-1] * (1 + 1e-12)):
        raise ValueError(f"at must lie in [0, sum(steps)] = [0, {edges[-1]:g}]")
    out = np.empty(at.size)
    m = m0
    for i, op in enumerate(ops):
        last = i == len(ops) - 1
        sel = (at >= edges[i]) & ((at < edges[i + 1]) | last)
        if np.any(sel):
            out[sel] = 0.5 * _propagate(m, op, at[sel] - edges[i]) @ lam
        m = _propagate(m, op, steps[i])
    return out


def _segment_integrals(lam, w, a, b, T):
    """``int_a^b K(T-z) dz`` and ``int_a^b K(T-z) e(z) dz`` for ``K = sum lam^2 e^{-2 lam u}``,
    ``e = sum w e^{-2 lam z}``, in closed form (each exponential integral written overflow-free)."""
    L = b - a
    k_int = np.sum(0.5 * lam * np.exp(-2 * lam * (T - b)) * -np.expm1(-2 * lam * L))
    lj, li = lam[:, None], lam[None, :]
    fa = -2 * lj * (T - a) - 2 * li * a
    fb = -2 * lj * (T - b) - 2 * li * b
    x = 2 * np.abs(lj - li) * L
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(x > 1e-12, -np.expm1(-x) / x, 1.0)
    ke_int = np.sum(lj**2 * w[None, :] * L * np.exp(np.maximum(fa, fb)) * phi)
    return k_int, ke_int


def fsl_risk(m0, ops, steps):
    """First-order functional-scaling-law prediction of the final excess risk of a batch schedule.

    In intrinsic time ``t = eta k`` (stage ``i`` lasts ``eta steps[i]``, ``T`` in total),

    ``E_FSL(T) = 1/2 [ e(T) + sum_i (eta / B_i) int_{stage i} K(T - z) (e(z) + sigma2) dz ]``

    with ``e(t) = sum_j lam_j m0_j exp(-2 lam_j t)`` and ``K(u) = sum_j lam_j^2 exp(-2 lam_j u)``, the
    integrals in closed form. It keeps the first term of the Neumann series of the exact risk's Volterra
    equation and drops the ``O(eta lam)`` discretisation terms.

    Parameters
    ----------
    m0 : array_like, shape (n,)
        Initial second moments.
    ops : list of MomentOperator, length S
        One per stage (only ``lam``, ``eta``, ``batch``, ``sigma2`` are used); a common ``eta``.
    steps : array_like, shape (S,)
        Steps per stage, ``>= 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad shapes or values, or stages with different ``eta`` or ``sigma2``.

    Notes
    -----
    The FSL of Li et al. (2025), used by Wang et al. (2026) for batch schedules, is stated up to
    constants (``≍``) with power-law ``e`` and ``K``; evaluating it with the model's exact sums and unit
    constants is our instantiation, used as the theory curve beside the exact risk.

    Examples
    --------
    >>> lam, m0 = power_law_task(20, beta=2.0, s=0.5)
    >>> ops = [sgd_moment_operator(lam, eta=0.5, batch=b, sigma2=1.0) for b in (1, 8)]
    >>> round(fsl_risk(m0, ops, [100.0, 20.0]), 4)
    0.062
    """
    steps = _check_schedule(ops, steps)
    lam = ops[0].lam
    m0 = as_array("m0", m0, ndim=1, shape=(lam.size,))
    if np.any(m0 < 0):
        raise ValueError("m0 must be non-negative")
    eta, sigma2 = ops[0].eta, ops[0].sigma2
    if any(op.eta != eta or op.sigma2 != sigma2 for op in ops):
        raise ValueError("ops must share eta and sigma2 (the FSL here has a constant learning rate)")
    edges = eta * np.concatenate([[0.0], np.cumsum(steps)])
    T = edges[-1]
    w = lam * m0
    r = float(np.sum(w * np.exp(-2 * lam * T)))
    for op, a, b in zip(ops, edges[:-1], edges[1:]):
        if b > a:
            k_int, ke_int = _segment_integrals(lam, w, a, b, T)
            r += eta / op.batch * (ke_int + sigma2 * k_int)
    return float(0.5 * r)


def sgd_monte_carlo(lam, theta_star, *, eta, batches, steps, sigma2, runs, at, rng):
    """Run one-pass minibatch SGD from ``theta_0 = 0`` on Gaussian data, ``runs`` independent copies.

    Each step draws a fresh batch ``x_i ~ N(0, diag(lam))``, ``y_i = <x_i, theta*> + eps_i`` with
    ``eps_i ~ N(0, sigma2)``, and updates ``theta <- theta - (eta / B) sum_i x_i (<x_i, theta> - y_i)``.
    The excess risk ``1/2 sum_j lam_j (theta_j - theta*_j)^2`` of every run is recorded at the global
    step counts ``at``.

    Parameters
    ----------
    lam : array_like, shape (n,)
        Positive eigenvalues of the feature covariance.
    theta_star : array_like, shape (n,)
        Target parameter.
    eta : float
        Learning rate, ``> 0``.
    batches : array_like of int, shape (S,)
        Batch size of each stage, ``>= 1``.
    steps : array_like of int, shape (S,)
        Steps of each stage, ``>= 0``.
    sigma2 : float
        Label-noise variance, ``>= 0``.
    runs : int
        Independent runs, ``>= 1``.
    at : array_like of int, shape (K,)
        Global step counts in ``[0, sum(steps)]`` at which to record the risk.
    rng : numpy.random.Generator
        Source of all randomness.

    Returns
    -------
    ndarray, shape (K, runs)
        Excess risk of each run at each recorded step.

    Raises
    ------
    ValueError
        Bad shapes or values (non-integer batches, steps or ``at``), or ``rng`` not a Generator.

    Notes
    -----
    The loop runs over SGD steps (they are sequential); runs and batch entries are vectorised.

    Examples
    --------
    >>> out = sgd_monte_carlo([1.0, 0.5], [1.0, 1.0], eta=0.5, batches=[2], steps=[3], sigma2=1.0,
    ...                       runs=4, at=[0, 3], rng=np.random.default_rng(0))
    >>> out.shape, float(out[0, 0])
    ((2, 4), 0.75)
    """
    lam = _check_lam(lam)
    theta_star = as_array("theta_star", theta_star, ndim=1, shape=(lam.size,))
    eta = check_real("eta", eta, minimum=0.0, strict_min=True)
    sigma2 = check_real("sigma2", sigma2, minimum=0.0)
    runs = check_int("runs", runs, minimum=1)
    batches = as_array("batches", batches, ndim=1, min_size=1)
    steps = as_array("steps", steps, ndim=1, shape=(batches.size,))
    at = as_array("at", at, ndim=1, min_size=1)
    for name, v, lo in (("batches", batches, 1), ("steps", steps, 0), ("at", at, 0)):
        if np.any(v != np.round(v)) or np.any(v < lo):
            raise ValueError(f"{name} must be integers >= {lo}, got {v}")
    if np.any(at > steps.sum()):
        raise ValueError(f"at must lie in [0, sum(steps)] = [0, {int(steps.sum())}]")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    sd = np.sqrt(lam)
    err = np.tile(-theta_star, (runs, 1))  # theta - theta*
    record = {int(k) for k in at}
    out = {}
    k = 0
    if 0 in record:
        out[0] = 0.5 * (err**2) @ lam
    for b, n_steps in zip(batches.astype(int), steps.astype(int)):
        for _ in range(n_steps):
            x = rng.standard_normal((runs, b, lam.size)) * sd
            eps = np.sqrt(sigma2) * rng.standard_normal((runs, b))
            resid = np.einsum("rbn,rn->rb", x, err) - eps
            err = err - (eta / b) * np.einsum("rbn,rb->rn", x, resid)
            k += 1
            if k in record:
                out[k] = 0.5 * (err**2) @ lam
    return np.stack([out[int(k)] for k in at])
