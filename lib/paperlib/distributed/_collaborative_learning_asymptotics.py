"""Asymptotics of personalized collaborative learning: the exact limit MSE and a pooled error ratio.

This private module holds the theory side of :mod:`paperlib.distributed.collaborative_learning`:
the exact leading term of the mean squared error of independent learning and AffPCL on a finite
system under a diminishing step (a Lyapunov equation per agent, our derivation), the bias of the
ablation without importance correction, and the delta-method ratio of pooled means used to compare
learners run on common random numbers. It is re-exported by the public module
:mod:`paperlib.distributed.collaborative_learning`, where these functions are documented and should
be imported from.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import linalg

from ..core._validation import check_int
from .multi_agent_systems import FiniteSystem, _check_system, _expectations, solutions
from .multi_agent_systems import tv_system  # noqa: F401  (used by the docstring examples)
from .multi_agent_systems import _strict_array as as_array  # refuses bool, str, complex too
from .multi_agent_systems import _strict_real as check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
# (the same flag as the public collaborative_learning, so the moved functions check as before)
_JAX_FLOAT32 = True


class AsymptoticMSE(NamedTuple):
    independent: np.ndarray  # (n,) limit of (t + t0) E|x^i_t - x^i_*|^2 for IL
    affpcl: np.ndarray       # (n,) the same for AffPCL
    no_rho_bias: np.ndarray  # (n,) squared distance of the rho = 1 ablation's fixed point from x^i_*


def _cov(weights, values):
    mean = weights @ values
    centred = values - mean
    return np.einsum("s,si,sj->ij", weights, centred, centred)


def asymptotic_mse(system: FiniteSystem, *, alpha: float, t0: float) -> AsymptoticMSE:
    r"""Exact leading term of the MSE of IL and AffPCL under :math:`\alpha_t = \alpha t_0/(t+t_0)`.

    Write :math:`a = \alpha t_0`. Near its fixed point each learner is a linear recursion
    :math:`\Delta_{t+1} = \Delta_t - \frac{a}{t+t_0}(\bar A^i\Delta_t + \xi_t)` with i.i.d. noise of
    covariance :math:`Q`, so :math:`(t+t_0)\,\mathbb E\Delta_t\Delta_t^\top \to \Sigma` solving the
    Lyapunov equation :math:`(a\bar A^i - \tfrac12 I)\Sigma + \Sigma(a\bar A^i - \tfrac12 I)^\top = a^2Q`.
    For IL, :math:`\xi = A(s)x^i_* - b^i(s)`, :math:`s\sim\mu_i`. For AffPCL, with
    :math:`r(s) = A(s)x^c_* - \Phi(s)\theta^c_*`,
    :math:`\xi = [A(s^i)x^i_* - b^i(s^i) - r(s^i)] + \frac1n\sum_j\rho^i(s^j)r(s^j)`, whose covariance is
    :math:`\mathrm{Cov}_{\mu_i}(u) + \sum_{j\ne i}\mathrm{Cov}_{\mu_j}(\rho^i r/n)` with
    :math:`u = A x^i_* - b^i - r + \rho^i r/n`. The central iterates' errors enter only through
    mean-zero multiplicative terms, which are of lower order.

    The ablation with :math:`\rho\equiv1` has the mean direction
    :math:`\bar A^ix - \bar b^i - \mathbb E_{\mu_i}r` (because :math:`\mathbb E_{\mu^0}r = 0`), so it
    converges to :math:`x^i_* + (\bar A^i)^{-1}\mathbb E_{\mu_i}r`, a bias that vanishes when
    :math:`\mu_i = \mu^0`.

    Parameters
    ----------
    system : FiniteSystem
    alpha : float
        Initial step, > 0.
    t0 : float
        Decay offset, > 0. Needs :math:`a\lambda_{min}(\mathrm{sym}\bar A^i) > 1/2` for every agent.

    Returns
    -------
    AsymptoticMSE
        ``independent`` and ``affpcl``, each (n,): :math:`\mathrm{tr}\,\Sigma`, so that
        :math:`\mathbb E\|x^i_t-x^i_*\|^2 \approx \mathrm{tr}\,\Sigma/(t+t_0)`; and ``no_rho_bias``
        (n,), the ablation's squared bias :math:`\|(\bar A^i)^{-1}\mathbb E_{\mu_i}r\|^2`.

    Raises
    ------
    ValueError
        If ``system`` is not a valid FiniteSystem, a step argument is bad, or
        :math:`a\lambda_{min} \le 1/2` (the error then decays slower than :math:`1/t`).

    Notes
    -----
    This derivation is ours; the paper gives upper bounds only (Theorem 1, eq. 9).

    Examples
    --------
    >>> sys = tv_system(4, 0.0, rng=np.random.default_rng(0))
    >>> lim = asymptotic_mse(sys, alpha=0.5, t0=20.0)
    >>> [round(float(v), 3) for v in lim.affpcl / lim.independent]
    [0.25, 0.25, 0.25, 0.25]
    """
    if not isinstance(system, FiniteSystem):
        raise ValueError(f"system must be a FiniteSystem (exact expectations), got {type(system).__name__}")
    system = _check_system(system)
    alpha = check_real("alpha", alpha, minimum=0.0, strict_min=True)
    t0 = check_real("t0", t0, minimum=0.0, strict_min=True)
    a = alpha * t0
    sol = solutions(system)
    if a * sol.lam <= 0.5:
        raise ValueError(f"alpha * t0 = {a:.3g} must exceed 1 / (2 lambda) = {0.5 / sol.lam:.3g}")
    A, Phi, mu, theta = system
    n, d = theta.shape
    A_bar, _ = _expectations(system)
    mu0 = mu.mean(0)
    rho = np.divide(mu, mu0, out=np.zeros_like(mu), where=mu0 > 0)        # (n, S)
    r = A @ sol.x_c - Phi @ sol.theta_c                                     # (S, d)
    out = np.zeros((3, n))
    for i in range(n):
        out[2, i] = np.sum(np.linalg.solve(A_bar[i], mu[i] @ r) ** 2)
        xi = A @ sol.x_star[i] - Phi @ theta[i]                             # (S, d)
        v = rho[i][:, None] * r / n
        q_aff = _cov(mu[i], xi - r + v) + sum(_cov(mu[j], v) for j in range(n) if j != i)
        M = a * A_bar[i] - 0.5 * np.eye(d)
        for k, q in enumerate((_cov(mu[i], xi), q_aff)):
            out[k, i] = np.trace(linalg.solve_continuous_lyapunov(M, a * a * q))
    return AsymptoticMSE(out[0], out[1], out[2])


def pooled_ratio(numerator, denominator, *, axis=0):
    r"""Ratio of two pooled means and the standard error of its logarithm, over paired units.

    With paired samples :math:`(a_k, b_k)`, :math:`k = 1..K` along ``axis`` (e.g. one run of two
    learners on common random numbers), returns :math:`R = \bar a/\bar b` and, by the delta method,
    :math:`\mathrm{se}(\log R) = \mathrm{sd}_k(a_k/\bar a - b_k/\bar b)/\sqrt K`.

    Parameters
    ----------
    numerator, denominator : array_like
        Same shape, at least one unit along ``axis``; non-negative, with positive means.
    axis : int, default 0
        The axis of paired units (runs); every other axis is kept.

    Returns
    -------
    ratio : ndarray
        :math:`\bar a/\bar b`, shape of the input without ``axis``.
    se_log : ndarray
        Standard error of :math:`\log R`, same shape (0 when K = 1).

    Raises
    ------
    ValueError
        If the shapes differ, an entry is negative or not finite, ``axis`` is out of range, or a
        mean is not positive.

    Examples
    --------
    >>> r, se = pooled_ratio([1.0, 3.0], [2.0, 2.0])
    >>> float(r), round(float(se), 3)
    (1.0, 0.5)
    """
    a = as_array("numerator", numerator, min_size=1)
    b = as_array("denominator", denominator, min_size=1)
    if a.shape != b.shape:
        raise ValueError(f"numerator and denominator must have the same shape, got {a.shape} and {b.shape}")
    if np.any(a < 0):
        raise ValueError("numerator must be non-negative")
    if np.any(b < 0):
        raise ValueError("denominator must be non-negative")
    axis = check_int("axis", axis, minimum=-a.ndim, maximum=a.ndim - 1) if a.ndim else None
    if axis is None:
        raise ValueError("numerator must have at least one dimension (the paired units)")
    a_bar, b_bar = a.mean(axis), b.mean(axis)
    if np.any(b_bar <= 0) or np.any(a_bar <= 0):
        raise ValueError("numerator and denominator must have positive means")
    K = a.shape[axis]
    dev = a / np.expand_dims(a_bar, axis) - b / np.expand_dims(b_bar, axis)
    se = dev.std(axis, ddof=1) / np.sqrt(K) if K > 1 else np.zeros_like(a_bar)
    return a_bar / b_bar, se
