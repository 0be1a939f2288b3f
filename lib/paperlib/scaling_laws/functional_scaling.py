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

from typing import Sequence

import numpy as np

from ..core._validation import as_array, check_int, check_real
from ._functional_scaling_moments import (  # noqa: F401
    MomentOperator,
    _one_blas_thread,
    _check_lam,
    _check_op,
    power_law_task,
    sgd_moment_operator,
    _propagate,
    propagate,
    excess_risk,
)

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
