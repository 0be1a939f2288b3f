"""Multi-agent linear systems as data: the finite and Gaussian system containers and their generators.

This private module holds the instances of :mod:`paperlib.distributed.multi_agent_systems`: the
validated containers :class:`FiniteSystem` and :class:`GaussianSystem` (with the strict real-number
checks they and the learners share) and the constructors of the finite exact-total-variation and
free-rider instances and of the paper's Gaussian system. It is re-exported by the public module
:mod:`paperlib.distributed.multi_agent_systems`, where these classes and functions are documented and
should be imported from.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_real


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
