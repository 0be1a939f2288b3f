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

from ..core._validation import as_array, check_int, check_real

__all__ = [
    "FiniteSystem",
    "GaussianSystem",
    "tv_system",
    "free_ride_system",
    "gaussian_system",
    "solutions",
    "heterogeneity",
]


class _FiniteFields(NamedTuple):
    A: np.ndarray
    Phi: np.ndarray
    mu: np.ndarray
    theta: np.ndarray


class FiniteSystem(_FiniteFields):
    r"""A multi-agent linear system on a finite state space of :math:`S` states.

    Parameters
    ----------
    A : array_like, shape (S, d, d)
        Feature matrix :math:`A(s)` of every state.
    Phi : array_like, shape (S, d, d)
        Objective features :math:`\Phi(s)`; agent i's objective is :math:`b^i(s) = \Phi(s)\theta^i`.
    mu : array_like, shape (n, S)
        Environment distributions, one row per agent (non-negative, rows summing to one).
    theta : array_like, shape (n, d)
        Objective weights :math:`\theta^i_*`.

    Raises
    ------
    ValueError
        On a wrong shape, a NaN or infinite entry, or a row of ``mu`` that is not a distribution.

    Examples
    --------
    >>> sys = FiniteSystem(np.stack([np.eye(2), 2 * np.eye(2)]), np.stack([np.eye(2)] * 2),
    ...                    [[0.5, 0.5], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]])
    >>> sys.mu.shape
    (2, 2)
    """

    __slots__ = ()

    def __new__(cls, A, Phi, mu, theta):
        A = _strict_array("A", A, ndim=3, min_size=1)
        S, d, d2 = A.shape
        if d != d2:
            raise ValueError(f"A must have shape (S, d, d), got {A.shape}")
        Phi = _strict_array("Phi", Phi, shape=(S, d, d))
        mu = _strict_array("mu", mu, ndim=2, min_size=1)
        if mu.shape[1] != S:
            raise ValueError(f"mu must have shape (n, {S}) (one column per state of A), got {mu.shape}")
        if np.any(mu < 0) or not np.allclose(mu.sum(1), 1.0, atol=1e-8):
            raise ValueError("mu must have non-negative rows that sum to 1")
        theta = _strict_array("theta", theta, shape=(mu.shape[0], d))
        return super().__new__(cls, A, Phi, mu, theta)


class _GaussianFields(NamedTuple):
    means: np.ndarray
    A_base: np.ndarray
    Phi_base: np.ndarray
    eps_A: float
    eps_Phi: float
    theta: np.ndarray


class GaussianSystem(_GaussianFields):
    r"""The paper's synthetic system (Appendix B): :math:`\mu_i = N(m_i, I_d)`, multiplicative noise.

    :math:`A(s) = (I + \epsilon_A ss^\top)A_{base}` and :math:`\Phi(s) = (I + \epsilon_b ss^\top)\Phi_{base}`.

    Parameters
    ----------
    means : array_like, shape (n, d)
        Environment means :math:`m_i`.
    A_base, Phi_base : array_like, shape (d, d)
    eps_A, eps_Phi : float
        Noise levels :math:`\epsilon_A, \epsilon_b` >= 0.
    theta : array_like, shape (n, d)

    Raises
    ------
    ValueError
        On a wrong shape, a NaN or infinite entry, or a negative noise level.

    Examples
    --------
    >>> sys = GaussianSystem([[0.0], [1.0]], [[2.0]], [[1.0]], 1.0, 0.5, [[1.0], [1.0]])
    >>> sys.means.shape
    (2, 1)
    """

    __slots__ = ()

    def __new__(cls, means, A_base, Phi_base, eps_A, eps_Phi, theta):
        means = _strict_array("means", means, ndim=2, min_size=1)
        n, d = means.shape
        A_base = _strict_array("A_base", A_base, shape=(d, d))
        Phi_base = _strict_array("Phi_base", Phi_base, shape=(d, d))
        eps_A = _strict_real("eps_A", eps_A, minimum=0.0)
        eps_Phi = _strict_real("eps_Phi", eps_Phi, minimum=0.0)
        theta = _strict_array("theta", theta, shape=(n, d))
        return super().__new__(cls, means, A_base, Phi_base, eps_A, eps_Phi, theta)


def _strict_real(name, value, **kwargs) -> float:
    """check_real that also refuses bools, strings and complex numbers."""
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return check_real(name, value, **kwargs)


def _strict_array(name, value, **kwargs) -> np.ndarray:
    """as_array that also refuses bool, string and complex entries."""
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be array-like of real numbers, got {type(value).__name__}") from None
    if kind in "bcSUV":
        raise ValueError(f"{name} must be an array of real numbers, got dtype kind {kind!r}")
    return as_array(name, value, **kwargs)


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
# instances
# ---------------------------------------------------------------------------------------------


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _psd_features(count, d, ridge, rng):
    """count PSD matrices (v v^T + ridge I)/(1 + ridge), v a random unit vector: norm <= 1, nu = 1."""
    v = rng.standard_normal((count, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return (np.einsum("si,sj->sij", v, v) + ridge * np.eye(d)) / (1.0 + ridge)


def tv_system(n: int, delta: float, *, delta_obj: float | None = None, shared_states: int = 12,
              d: int = 5, ridge: float = 0.2, rng: np.random.Generator) -> FiniteSystem:
    r"""A finite system whose environment heterogeneity is exactly ``delta`` in total variation.

    Every agent puts mass :math:`1-\delta` uniformly on ``shared_states`` common states and mass
    :math:`\delta` on one private state of its own, so
    :math:`\|\mu_i-\mu_j\|_{TV} = \delta` for every pair and every :math:`n`, and
    :math:`\rho^i \in \{0, 1, n\}`. Features are bounded and positive semidefinite,
    :math:`A(s) = (\phi_s\phi_s^\top + cI)/(1+c)` and :math:`\Phi(s) = (\psi_s\psi_s^\top + cI)/(1+c)`
    with random unit :math:`\phi_s,\psi_s` (so :math:`\|A(s)\|,\|\Phi(s)\| \le 1` and the paper's
    stochastic condition number is :math:`\nu = 1`). Objectives are
    :math:`\theta^i = \theta_{base} + \delta_{obj}u_i` with unit :math:`\theta_{base}, u_i`.

    Parameters
    ----------
    n : int
        Number of agents, >= 1.
    delta : float
        Environment heterogeneity :math:`\delta_{env}` in [0, 1).
    delta_obj : float, optional
        Size of the objective perturbation (default ``delta``), >= 0.
    shared_states : int, default 12
        Number of common states, >= 1.
    d : int, default 5
        Dimension, >= 1.
    ridge : float, default 0.2
        The constant :math:`c > 0` above (keeps :math:`\bar A^i` well conditioned).
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    FiniteSystem
        With ``shared_states + n`` states.

    Notes
    -----
    This instance is ours, not the paper's: the paper's Gaussian construction has unbounded features
    (:math:`G_A=\infty`), so its :math:`\delta_{obj}` and :math:`\sigma` are undefined, and its
    nominal :math:`\delta_{env}` is not the total-variation level of Definition 2.

    Examples
    --------
    >>> sys = tv_system(4, 0.3, rng=np.random.default_rng(0))
    >>> sys.mu.shape, float(sys.mu[0, 12])
    ((4, 16), 0.3)
    """
    n = check_int("n", n, minimum=1)
    delta = _strict_real("delta", delta, minimum=0.0, maximum=1.0, strict_max=True)
    delta_obj = delta if delta_obj is None else _strict_real("delta_obj", delta_obj, minimum=0.0)
    shared_states = check_int("shared_states", shared_states, minimum=1)
    d = check_int("d", d, minimum=1)
    ridge = _strict_real("ridge", ridge, minimum=0.0, strict_min=True)
    rng = _check_rng(rng)
    S = shared_states + n
    A = _psd_features(S, d, ridge, rng)
    Phi = _psd_features(S, d, ridge, rng)
    mu = np.zeros((n, S))
    mu[:, :shared_states] = (1.0 - delta) / shared_states
    mu[np.arange(n), shared_states + np.arange(n)] += delta
    base = rng.standard_normal(d)
    u = rng.standard_normal((n, d))
    theta = base / np.linalg.norm(base) + delta_obj * u / np.linalg.norm(u, axis=1, keepdims=True)
    return FiniteSystem(A, Phi, mu, theta)


def free_ride_system(n: int, delta: float, *, shared_states: int = 12, d: int = 5,
                     ridge: float = 0.2, rng: np.random.Generator) -> FiniteSystem:
    r"""A finite system in which agent 0 *is* the centre while being far from every other agent.

    Agents :math:`1,\dots,n-1` are as in :func:`tv_system` (pairwise total variation ``delta``) but
    with independent Gaussian objective weights, so their objectives are unrelated. Agent 0 has
    :math:`\mu_0 = \frac1{n-1}\sum_{j\ge1}\mu_j` (hence :math:`\mu_0 = \mu^0` and
    :math:`\rho^0\equiv1`) and :math:`\theta^0` solving :math:`\bar\Phi^0\theta^0 = \frac1{n-1}\sum_{j\ge1}
    \bar\Phi^j\theta^j` (hence :math:`\bar b^0 = \bar b^{avg}` and :math:`x^0_* = x^c_*`). Its
    agent-specific level of eq. (9) is :math:`\delta^0_{cen} = 0`, while its total variation to every
    other agent is :math:`\delta(n-2)/(n-1)`.

    Parameters
    ----------
    n : int
        Number of agents, >= 2.
    delta : float
        Heterogeneity of agents 1..n-1, in [0, 1).
    shared_states, d, ridge, rng
        As in :func:`tv_system`.

    Returns
    -------
    FiniteSystem
        With ``shared_states + n`` states, laid out as in :func:`tv_system` (agent 0's private state
        carries no mass); agent 0 is the free rider.

    Notes
    -----
    Our construction, built to meet the condition :math:`\tilde\delta^i_{cen}\le n^{-1}` under which the
    paper (Section 6.3) says an agent gets linear speedup "by collaborating with arbitrarily dissimilar
    agents".

    Examples
    --------
    >>> sys = free_ride_system(5, 0.9, rng=np.random.default_rng(0))
    >>> bool(np.allclose(sys.mu[0], sys.mu[1:].mean(0)))
    True
    """
    n = check_int("n", n, minimum=2)
    delta = _strict_real("delta", delta, minimum=0.0, maximum=1.0, strict_max=True)
    shared_states = check_int("shared_states", shared_states, minimum=1)
    d = check_int("d", d, minimum=1)
    ridge = _strict_real("ridge", ridge, minimum=0.0, strict_min=True)
    rng = _check_rng(rng)
    S = shared_states + n
    A = _psd_features(S, d, ridge, rng)
    Phi = _psd_features(S, d, ridge, rng)
    mu = np.zeros((n, S))
    mu[:, :shared_states] = (1.0 - delta) / shared_states
    mu[np.arange(1, n), shared_states + np.arange(1, n)] += delta
    mu[0] = mu[1:].mean(0)
    theta = rng.standard_normal((n, d))
    Phi_bar = np.einsum("ns,sij->nij", mu, Phi)
    target = np.einsum("nij,nj->ni", Phi_bar[1:], theta[1:]).mean(0)
    theta[0] = np.linalg.solve(Phi_bar[0], target)
    return FiniteSystem(A, Phi, mu, theta)


def gaussian_system(n: int, delta_env: float, delta_obj: float, *, d: int = 5, c_env: float = 4.0,
                    eps_A: float = 1.0, eps_Phi: float = 0.5, rng: np.random.Generator) -> GaussianSystem:
    r"""The paper's synthetic system (Appendix B and the authors' ``main.py``).

    :math:`\mu_i = N(m_i, I_d)` with :math:`m_i = \delta_{env}\,c_{env}\,v_i`, :math:`v_i` a random unit
    vector; :math:`\theta^i = \theta_{base} + \delta_{obj}u_i`; agent 0 is pinned at
    :math:`m_0 = 0`, :math:`\theta^0 = \theta_{base}`. :math:`A_{base} = T^\top T + dI` with
    :math:`T\sim U[0,1]^{d\times d}`, :math:`\Phi_{base} = T'^\top T' + dI` with Gaussian :math:`T'`, and
    :math:`\theta_{base}` a random unit vector, as in the authors' code.

    Parameters
    ----------
    n : int
        Number of agents, >= 1.
    delta_env, delta_obj : float
        The paper's nominal heterogeneity knobs, >= 0 (not the total-variation levels).
    d : int, default 5
    c_env : float, default 4.0
        The paper's :math:`C_A`.
    eps_A, eps_Phi : float, default 1.0 and 0.5
        Multiplicative noise levels :math:`\epsilon_A, \epsilon_b`.
    rng : numpy.random.Generator

    Returns
    -------
    GaussianSystem

    Examples
    --------
    >>> sys = gaussian_system(3, 0.5, 0.5, rng=np.random.default_rng(0))
    >>> [round(float(v), 3) for v in np.linalg.norm(sys.means, axis=1)]
    [0.0, 2.0, 2.0]
    """
    n = check_int("n", n, minimum=1)
    delta_env = _strict_real("delta_env", delta_env, minimum=0.0)
    delta_obj = _strict_real("delta_obj", delta_obj, minimum=0.0)
    d = check_int("d", d, minimum=1)
    c_env = _strict_real("c_env", c_env, minimum=0.0)
    eps_A = _strict_real("eps_A", eps_A, minimum=0.0)
    eps_Phi = _strict_real("eps_Phi", eps_Phi, minimum=0.0)
    rng = _check_rng(rng)

    def unit(k):
        v = rng.standard_normal((k, d))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    v = unit(n)
    v[0] = 0.0
    T = rng.random((d, d))
    T2 = rng.standard_normal((d, d))
    base = unit(1)[0]
    u = unit(n)
    u[0] = 0.0
    return GaussianSystem(delta_env * c_env * v, T.T @ T + d * np.eye(d), T2.T @ T2 + d * np.eye(d),
                          eps_A, eps_Phi, base + delta_obj * u)


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
