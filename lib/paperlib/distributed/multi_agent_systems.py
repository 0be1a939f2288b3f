r"""Heterogeneous multi-agent linear systems: the instances of personalized collaborative learning.

Agent :math:`i` of :math:`n` wants the solution :math:`x^i_*` of :math:`\bar A^i x = \bar b^i` with
:math:`\bar A^i = \mathbb E_{\mu_i}A(s)` and :math:`\bar b^i = \mathbb E_{\mu_i}\Phi(s)\theta^i`
(Zhang & Azizan, eq. 2 with the linear parametrization of Section 4). The feature maps are shared;
agents differ in their environment :math:`\mu_i` and objective weights :math:`\theta^i`.

This module holds the instances (a finite state space, where everything is exact, and the paper's
Gaussian construction of Appendix B), their exact solutions, and the paper's heterogeneity levels
(Definitions 1-2 and the agent-specific level of eq. 9). The learners are in
:mod:`paperlib.distributed.collaborative_learning`.

References
----------
C. Zhang, N. Azizan, "Personalized Collaborative Learning with Affinity-Based Variance Reduction",
ICLR 2026, arXiv:2510.16232 (Sections 1.2, 4, 5; Definitions 1-2; eq. 9; Appendix B).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

from ..core._validation import check_int
from ._multi_agent_systems_instances import (FiniteSystem, GaussianSystem, free_ride_system,  # noqa: F401
                                             gaussian_system, tv_system)
from ._multi_agent_systems_instances import (_FiniteFields, _GaussianFields, _check_rng,  # noqa: F401
                                             _psd_features, _strict_array, _strict_real)

__all__ = [
    "FiniteSystem",
    "GaussianSystem",
    "tv_system",
    "free_ride_system",
    "gaussian_system",
    "solutions",
    "heterogeneity",
]


# ---------------------------------------------------------------------------------------------
# validation and exact expectations
# ---------------------------------------------------------------------------------------------


def _check_system(system):
    if isinstance(system, (FiniteSystem, GaussianSystem)):
        return system
    raise ValueError(f"system must be a FiniteSystem or a GaussianSystem, got {type(system).__name__}")


def _expectations(system):
    """Exact per-agent means (A_bar, Phi_bar), each of shape (n, d, d)."""
    if isinstance(system, FiniteSystem):
        return (np.einsum("ns,sij->nij", system.mu, system.A),
                np.einsum("ns,sij->nij", system.mu, system.Phi))
    d = system.means.shape[1]
    second = np.eye(d) + np.einsum("ni,nj->nij", system.means, system.means)  # E ss^T = I + m m^T
    return ((np.eye(d) + system.eps_A * second) @ system.A_base,
            (np.eye(d) + system.eps_Phi * second) @ system.Phi_base)


class Solutions(NamedTuple):
    x_star: np.ndarray   # (n, d) personalized solutions
    x_c: np.ndarray      # (d,) central (FedAvg) solution of A_bar^0 x = b_bar^0
    theta_c: np.ndarray  # (d,) central objective of Phi_bar^0 theta = b_bar^0
    lam: float           # min_i lambda_min(sym A_bar^i)


def solutions(system) -> Solutions:
    r"""Exact personalized, central and objective solutions of a system.

    :math:`x^i_* = (\bar A^i)^{-1}\bar b^i`, :math:`x^c_* = (\bar A^0)^{-1}\bar b^0` and
    :math:`\theta^c_* = (\bar\Phi^0)^{-1}\bar b^0`, with :math:`\bar f^0 = \frac1n\sum_i \bar f^i`.
    For a Gaussian system :math:`\mathbb E\,ss^\top = I + m_im_i^\top` gives these in closed form
    (the paper estimates :math:`x^i_*` by Monte Carlo with 5000 samples).

    Parameters
    ----------
    system : FiniteSystem or GaussianSystem

    Returns
    -------
    Solutions
        ``x_star`` (n, d), ``x_c`` (d,), ``theta_c`` (d,), and ``lam``, the smallest eigenvalue of
        :math:`\mathrm{sym}(\bar A^i)` over agents (must be positive: the paper's standing assumption).

    Raises
    ------
    ValueError
        If ``system`` is malformed or some :math:`\mathrm{sym}(\bar A^i)` is not positive definite.

    Examples
    --------
    >>> sol = solutions(tv_system(3, 0.2, rng=np.random.default_rng(0)))
    >>> sol.x_star.shape, round(float(sol.lam), 3) > 0
    ((3, 5), True)
    """
    system = _check_system(system)
    A_bar, Phi_bar = _expectations(system)
    b_bar = np.einsum("nij,nj->ni", Phi_bar, system.theta)
    sym = 0.5 * (A_bar + np.swapaxes(A_bar, 1, 2))
    lam = float(np.linalg.eigvalsh(sym)[:, 0].min())
    if lam <= 0:
        raise ValueError(f"system: sym(A_bar^i) must be positive definite for every agent, min eigenvalue {lam:.3g}")
    x_star = np.linalg.solve(A_bar, b_bar[..., None])[..., 0]
    x_c = np.linalg.solve(A_bar.mean(0), b_bar.mean(0))
    theta_c = np.linalg.solve(Phi_bar.mean(0), b_bar.mean(0))
    return Solutions(x_star, x_c, theta_c, lam)


# ---------------------------------------------------------------------------------------------
# heterogeneity levels
# ---------------------------------------------------------------------------------------------


class Heterogeneity(NamedTuple):
    delta_env: float        # Definition 2: max_ij TV(mu_i, mu_j)
    delta_obj: float        # Section 4: max_ij |theta_i - theta_j| / (2 G_b)
    delta_cen: np.ndarray   # (n,) eq. (9): max(TV(mu_i, mu^0), |b_bar^i - b_bar^0| / (2 G_b))
    tv_centre: np.ndarray   # (n,) TV(mu_i, mu^0), the environment part of delta_cen


def heterogeneity(system, *, rng: np.random.Generator | None = None, samples: int = 20_000) -> Heterogeneity:
    r"""The paper's heterogeneity levels of a system.

    :math:`\delta_{env} = \max_{i,j}\|\mu_i-\mu_j\|_{TV}` (Definition 2);
    :math:`\delta_{obj} = \max_{i,j}\|\theta^i-\theta^j\|/(2G_b)` with
    :math:`G_b = \max\{\max_i\|\theta^i\|, \|\theta^c_*\|\}` (Section 4, linear parametrization with
    :math:`\|\Phi(s)\|\le1`); and the agent-specific
    :math:`\delta^i_{cen} = \max\{\|\mu_i-\mu^0\|_{TV}, \|\bar b^i-\bar b^0\|/(2G_b)\}` of eq. (9).

    Parameters
    ----------
    system : FiniteSystem or GaussianSystem
    rng : numpy.random.Generator, optional
        Needed for a Gaussian system only: :math:`\|\mu_i-\mu^0\|_{TV} = \mathbb E_{\mu_i}(1-1/\rho^i)_+`
        is then estimated by Monte Carlo. Finite systems are exact.
    samples : int, default 20000
        Monte Carlo samples per agent (Gaussian system), >= 1.

    Returns
    -------
    Heterogeneity
        ``delta_env`` (float), ``delta_obj`` (float), ``delta_cen`` (n,) and ``tv_centre`` (n,),
        the environment part :math:`\|\mu_i-\mu^0\|_{TV}` of ``delta_cen``.

    Raises
    ------
    ValueError
        On a malformed system, or a Gaussian system without ``rng``.

    Notes
    -----
    For a Gaussian system the features are unbounded, so :math:`G_b` and hence :math:`\delta_{obj}` in
    the sense of Definition 1 do not exist; the same formula is then only a descriptive number. Pairwise
    Gaussian total variation is exact: :math:`2\Phi(\|m_i-m_j\|/2)-1`.

    Examples
    --------
    >>> h = heterogeneity(tv_system(4, 0.3, rng=np.random.default_rng(0)))
    >>> round(h.delta_env, 6), [round(float(v), 3) for v in h.delta_cen][:2]
    (0.3, [0.225, 0.225])
    """
    system = _check_system(system)
    samples = check_int("samples", samples, minimum=1)
    sol = solutions(system)
    _, Phi_bar = _expectations(system)
    b_bar = np.einsum("nij,nj->ni", Phi_bar, system.theta)
    G_b = max(np.linalg.norm(system.theta, axis=1).max(), np.linalg.norm(sol.theta_c))
    diff = system.theta[:, None, :] - system.theta[None, :, :]
    delta_obj = float(np.linalg.norm(diff, axis=-1).max() / (2 * G_b)) if G_b > 0 else 0.0
    obj_cen = np.linalg.norm(b_bar - b_bar.mean(0), axis=1) / (2 * G_b) if G_b > 0 else 0 * b_bar[:, 0]
    if isinstance(system, FiniteSystem):
        mu = system.mu
        delta_env = float(0.5 * np.abs(mu[:, None, :] - mu[None, :, :]).sum(-1).max())
        env_cen = 0.5 * np.abs(mu - mu.mean(0)).sum(-1)
    else:
        if rng is None:
            raise ValueError("rng is required for a GaussianSystem (Monte Carlo estimate of TV(mu_i, mu^0))")
        rng = _check_rng(rng)
        m = system.means
        gap = np.linalg.norm(m[:, None, :] - m[None, :, :], axis=-1)
        delta_env = float((2 * stats.norm.cdf(gap / 2) - 1).max())
        s = m[:, None, :] + rng.standard_normal((m.shape[0], samples, m.shape[1]))
        logp = -0.5 * ((s[:, :, None, :] - m[None, None, :, :]) ** 2).sum(-1)   # (i, sample, k)
        own = np.take_along_axis(logp, np.arange(m.shape[0])[:, None, None], axis=2)[..., 0]
        log_mix = np.logaddexp.reduce(logp, axis=2) - np.log(m.shape[0])
        env_cen = np.clip(1 - np.exp(log_mix - own), 0, None).mean(1)
    return Heterogeneity(delta_env, delta_obj, np.maximum(env_cen, obj_cen), env_cen)
