r"""Moreau envelopes of quadratic clients, and the iteration counts and costs they set for FedExProx.

Client :math:`i` holds :math:`f_i(x) = \tfrac12 x^\top A_i x` with :math:`A_i \succeq 0`. Its Moreau envelope
:math:`M^\gamma_{f_i}(x) = \min_z f_i(z) + \|z - x\|^2/(2\gamma)` is again quadratic, with Hessian
:math:`A_i (I + \gamma A_i)^{-1}`, and the average envelope :math:`M^\gamma` has Hessian

.. math:: H_\gamma = \tfrac1n \textstyle\sum_i A_i (I + \gamma A_i)^{-1}.

Its largest and smallest non-zero eigenvalues :math:`L_\gamma, \mu^+_\gamma` set the rate of FedExProx
(see :mod:`paperlib.distributed.fedexprox`): :math:`\kappa_\gamma = L_\gamma/\mu^+_\gamma` replaces GD's
:math:`\kappa = L/\mu^+`. This module builds client Hessians (random, diagonal), computes these constants,
the old analysis' factor :math:`(1+\gamma L_{\max})L_\gamma/L`, the expected smoothness under partial
participation, the round count :math:`\kappa \mapsto K` and the local work per round of the time model
:math:`\pi(\gamma) = \eta + \tau(\gamma L_{\max} + 1)`.

References
----------
W. Anyszka, K. Gruntkowska, A. Tyurin, P. Richtárik, "Tighter Performance Theory of FedExProx",
ICLR 2026, arXiv:2410.15368.
H. Li, K. Acharya, P. Richtárik, "The Power of Extrapolation in Federated Learning", NeurIPS 2024,
arXiv:2405.13766.
"""

from __future__ import annotations

import math

import numpy as np

from ..core._validation import as_array, check_int, check_real

__all__ = [
    "quadratic_clients",
    "diagonal_clients",
    "moreau_hessian",
    "spectral_constants",
    "range_basis",
    "local_steps",
    "sampled_smoothness",
    "theory_rounds",
    "old_bound_factor",
]


def _clients(As):
    """Validate a stack of symmetric PSD matrices; return it with its eigendecomposition (w >= 0)."""
    As = as_array("As", As, ndim=3, min_size=1)
    if As.shape[1] != As.shape[2]:
        raise ValueError(f"As must have shape (n, d, d), got {As.shape}")
    scale = max(1.0, float(np.abs(As).max()))
    if not np.allclose(As, np.swapaxes(As, 1, 2), atol=1e-10 * scale):
        raise ValueError("As must hold symmetric matrices A_i")
    w, v = np.linalg.eigh(0.5 * (As + np.swapaxes(As, 1, 2)))
    if w.min() < -1e-9 * scale:
        raise ValueError("As must hold positive semidefinite matrices A_i")
    return As, np.clip(w, 0.0, None), v


def _envelope_hessian(w, v, gamma):
    return ((v * (w / (1.0 + gamma * w))[:, None, :]) @ np.swapaxes(v, 1, 2)).mean(axis=0)


def _top_nonzero(H, cut=1e-9):
    e = np.linalg.eigvalsh(0.5 * (H + H.T))
    e = e[e > cut * e[-1]]
    return float(e[-1]), float(e[0])


def _gamma(gamma, *, positive=True) -> float:
    return check_real("gamma", gamma, minimum=0.0, strict_min=positive)


def _orthonormal(rng, d, k):
    q, r = np.linalg.qr(rng.standard_normal((d, k)))
    return q * np.sign(np.diag(r))


def quadratic_clients(n, d, *, rank=None, log10_eig=(-3.0, 2.0), rng) -> np.ndarray:
    r"""Random client Hessians :math:`A_i \succeq 0` that share one null direction :math:`u`.

    Client :math:`i` gets :math:`A_i = Q_i \operatorname{diag}(\lambda_i) Q_i^\top` with :math:`Q_i` a random
    orthonormal :math:`d \times r` frame inside :math:`u^\perp` and eigenvalues :math:`\log_{10}\lambda_{ij}` uniform on
    ``log10_eig``. So :math:`f` is convex but not strongly convex, and its minimisers form the line
    :math:`\mathrm{span}\{u\}`. Equal ends of ``log10_eig`` give isotropic clients :math:`A_i = c P_i`.

    Parameters
    ----------
    n, d : int
        Number of clients (>= 1) and dimension (>= 2).
    rank : int, optional
        Rank :math:`r` of each :math:`A_i`, in ``[1, d - 1]``; default ``d - 1``.
    log10_eig : (float, float), default (-3, 2)
        Range of :math:`\log_{10}` of the eigenvalues, low <= high.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ndarray, shape (n, d, d)

    Raises
    ------
    ValueError
        If a size is out of range or ``log10_eig`` is not an ordered pair of finite numbers.

    Notes
    -----
    The paper's instance has d = 7, n = 14 and singular client matrices; its construction is not
    published, so this one (a common null direction, log-uniform spectra) is ours.

    Examples
    --------
    >>> As = quadratic_clients(3, 4, rank=2, log10_eig=(0.0, 0.0), rng=np.random.default_rng(0))
    >>> As.shape, (np.round(np.linalg.eigvalsh(As[0]), 6) + 0.0).tolist()
    ((3, 4, 4), [0.0, 0.0, 1.0, 1.0])
    """
    n, d = check_int("n", n, minimum=1), check_int("d", d, minimum=2)
    r = d - 1 if rank is None else check_int("rank", rank, minimum=1, maximum=d - 1)
    lo_hi = as_array("log10_eig", log10_eig, shape=(2,))
    if lo_hi[0] > lo_hi[1]:
        raise ValueError(f"log10_eig must be (low, high) with low <= high, got {tuple(lo_hi)}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    u = _orthonormal(rng, d, 1)
    basis = np.linalg.svd(np.eye(d) - u @ u.T)[0][:, : d - 1]          # orthonormal frame of u^perp
    out = np.empty((n, d, d))
    for i in range(n):
        q = basis @ _orthonormal(rng, d - 1, r)
        lam = 10.0 ** rng.uniform(lo_hi[0], lo_hi[1], size=r)
        out[i] = (q * lam) @ q.T
    return 0.5 * (out + np.swapaxes(out, 1, 2))


def diagonal_clients(n, d, *, log10_eig=(-2.0, 2.0)) -> np.ndarray:
    r"""Diagonal clients, each active on one coordinate (our instance of the paper's Example 4.4).

    Client :math:`i` has :math:`A_i = a_j e_j e_j^\top` with :math:`j = i \bmod d` and
    :math:`\log_{10} a_j` evenly spaced over ``log10_eig``. With :math:`n \ge d` every coordinate has
    :math:`\lceil\cdot\rceil` or :math:`\lfloor n/d \rfloor` clients, :math:`\kappa = L/\mu` equals
    :math:`10^{\text{high}-\text{low}}` when :math:`d \mid n`, and :math:`\gamma = 1/\min_j a_j` gives
    :math:`L_\gamma/\mu_\gamma \le 2`.

    Parameters
    ----------
    n, d : int
        Clients (>= d) and dimension (>= 2).
    log10_eig : (float, float), default (-2, 2)
        :math:`\log_{10}` of the smallest and the largest coordinate curvature.

    Returns
    -------
    ndarray, shape (n, d, d)

    Raises
    ------
    ValueError
        If ``n < d``, ``d < 2`` or ``log10_eig`` is not an ordered pair.

    Examples
    --------
    >>> As = diagonal_clients(4, 2, log10_eig=(-1.0, 1.0))
    >>> np.diagonal(As, axis1=1, axis2=2).tolist()
    [[0.1, 0.0], [0.0, 10.0], [0.1, 0.0], [0.0, 10.0]]
    """
    d = check_int("d", d, minimum=2)
    n = check_int("n", n, minimum=d)
    lo_hi = as_array("log10_eig", log10_eig, shape=(2,))
    if lo_hi[0] > lo_hi[1]:
        raise ValueError(f"log10_eig must be (low, high) with low <= high, got {tuple(lo_hi)}")
    a = 10.0 ** np.linspace(lo_hi[0], lo_hi[1], d)
    out = np.zeros((n, d, d))
    for i in range(n):
        out[i, i % d, i % d] = a[i % d]
    return out


def moreau_hessian(As, gamma) -> np.ndarray:
    r"""Hessian :math:`H_\gamma = \frac1n\sum_i A_i (I+\gamma A_i)^{-1}` of the averaged Moreau envelope.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Symmetric positive semidefinite client Hessians.
    gamma : float
        Prox step :math:`\gamma \ge 0`; ``0`` returns :math:`A = \frac1n \sum_i A_i`.

    Returns
    -------
    ndarray, shape (d, d)

    Raises
    ------
    ValueError
        If ``As`` is not a stack of symmetric PSD matrices or ``gamma`` is negative or not finite.

    Examples
    --------
    >>> np.round(moreau_hessian([[[2.0]], [[0.0]]], 1.0), 4).tolist()     # (2/(1+2) + 0)/2
    [[0.3333]]
    """
    _, w, v = _clients(As)
    return _envelope_hessian(w, v, _gamma(gamma, positive=False))


def spectral_constants(H, *, rel_cutoff=1e-9) -> tuple[float, float]:
    r"""Largest and smallest *non-zero* eigenvalue :math:`(L, \mu^+)` of a symmetric PSD matrix.

    Eigenvalues at or below ``rel_cutoff`` times the largest count as zero (the solution set's directions).

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric positive semidefinite, not zero.
    rel_cutoff : float, default 1e-9
        Relative threshold in (0, 1).

    Returns
    -------
    (float, float)
        :math:`L` and :math:`\mu^+`.

    Raises
    ------
    ValueError
        If ``H`` is not square, symmetric and non-zero, or ``rel_cutoff`` is out of range.

    Examples
    --------
    >>> spectral_constants(np.diag([4.0, 0.5, 0.0]))
    (4.0, 0.5)
    """
    H = as_array("H", H, ndim=2, min_size=1)
    if H.shape[0] != H.shape[1] or not np.allclose(H, H.T, atol=1e-10 * max(1.0, np.abs(H).max())):
        raise ValueError(f"H must be a symmetric square matrix, got shape {H.shape}")
    cut = check_real("rel_cutoff", rel_cutoff, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    w = np.linalg.eigvalsh(0.5 * (H + H.T))
    if w[-1] <= 0:
        raise ValueError("H must have a positive eigenvalue")
    w = w[w > cut * w[-1]]
    return float(w[-1]), float(w[0])


def range_basis(H, *, rel_cutoff=1e-9) -> np.ndarray:
    r"""Orthonormal basis of the range of a symmetric PSD matrix (eigenvectors above the cutoff).

    For :math:`H = \frac1n\sum_i A_i` the range is the orthogonal complement of the solution set
    :math:`\bigcap_i \ker A_i`, so the norm of the projection :math:`B^\top x` is the distance from
    :math:`x` to the solution set.

    Parameters
    ----------
    H : array_like, shape (d, d)
        Symmetric positive semidefinite, not zero.
    rel_cutoff : float, default 1e-9
        Eigenvalues at or below ``rel_cutoff`` times the largest count as zero.

    Returns
    -------
    ndarray, shape (d, r)

    Raises
    ------
    ValueError
        As :func:`spectral_constants`.

    Examples
    --------
    >>> range_basis(np.diag([0.0, 3.0])).tolist()
    [[0.0], [1.0]]
    """
    spectral_constants(H, rel_cutoff=rel_cutoff)                      # validates
    H = np.asarray(H, dtype=float)
    w, v = np.linalg.eigh(0.5 * (H + H.T))
    return v[:, w > rel_cutoff * w[-1]]


def local_steps(gamma, L_max, *, log_factor=1.0) -> int:
    r"""Local gradient steps per round, :math:`t(\gamma) = \lceil c\,(1 + \gamma L_{\max}) \rceil` (1 for GD).

    This is the round-time model's local work :math:`\tau(\gamma L_{\max}+1)` with its logarithmic factor
    :math:`c` written out: :math:`t` steps of :func:`paperlib.distributed.fedexprox.local_gd_prox` shrink every
    client's prox error, in every eigendirection of :math:`A_i`, by at least :math:`e^{-c}`.

    Parameters
    ----------
    gamma : float
        Prox step, >= 0 (``0`` means plain GD, one gradient per round).
    L_max : float
        Largest client smoothness constant, > 0.
    log_factor : float, default 1
        :math:`c > 0`; ``1`` matches :math:`\pi(\gamma)` exactly up to rounding up.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If an argument is negative, zero where it must be positive, or not finite.

    Examples
    --------
    >>> local_steps(0.5, 10.0), local_steps(0.0, 10.0), local_steps(0.5, 10.0, log_factor=2.0)
    (6, 1, 12)
    """
    gamma = _gamma(gamma, positive=False)
    L_max = check_real("L_max", L_max, minimum=0.0, strict_min=True)
    c = check_real("log_factor", log_factor, minimum=0.0, strict_min=True)
    return 1 if gamma == 0 else int(math.ceil(c * (1.0 + gamma * L_max) - 1e-9))


def sampled_smoothness(As, gamma, sample_size) -> float:
    r"""Expected smoothness :math:`L_{\gamma,S}` of :math:`M^\gamma` under nice sampling of :math:`S` clients.

    .. math::

        L_{\gamma,S} = \frac{n-S}{S(n-1)}\,\frac{L_{\max}}{1+\gamma L_{\max}} + \frac{n(S-1)}{S(n-1)}\,L_\gamma,

    which is :math:`L_\gamma` for :math:`S = n`. With :math:`\alpha = 1/(\gamma L_{\gamma,S})` the paper's
    partial-participation rate is :math:`O((L_{\gamma,S}/\mu^+_\gamma)\log(1/\varepsilon))`.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians, n >= 2.
    gamma : float
        Prox step, > 0.
    sample_size : int
        Clients per round, in ``[1, n]``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On bad ``As``, ``gamma <= 0`` or ``sample_size`` outside ``[1, n]``.

    Notes
    -----
    The formula is the one a secondary summary attributes to the paper (Theorem 5.1); it is the standard
    expected-smoothness constant of nice sampling, which we re-derive in the chapter.

    Examples
    --------
    >>> round(sampled_smoothness([[[1.0]], [[3.0]]], 1.0, 1), 4)      # (1/2 + 3/4)/2 + 0
    0.75
    """
    As, w, v = _clients(As)
    n = As.shape[0]
    if n < 2:
        raise ValueError(f"As must hold at least 2 clients for sampling, got {n}")
    gamma = _gamma(gamma)
    S = check_int("sample_size", sample_size, minimum=1, maximum=n)
    L_max = float(w[:, -1].max())
    L_g = _top_nonzero(_envelope_hessian(w, v, gamma))[0]
    return (n - S) / (S * (n - 1)) * L_max / (1 + gamma * L_max) + n * (S - 1) / (S * (n - 1)) * L_g


def theory_rounds(kappa, eps) -> float:
    r"""Rounds :math:`\ln(1/\varepsilon) / (-2\ln(1 - 1/\kappa))` at which :math:`(1-1/\kappa)^{2K} = \varepsilon`.

    With :math:`\kappa = L_\gamma/\mu^+_\gamma` this is the iteration count of FedExProx with
    :math:`\alpha = 1/(\gamma L_\gamma)` in the worst start (our sharp form of the paper's
    :math:`O(\kappa_\gamma \log(1/\varepsilon))`); with :math:`\kappa = L/\mu^+` it is GD's.

    Parameters
    ----------
    kappa : float or array_like
        Condition number(s), >= 1.
    eps : float
        Target on the squared distance ratio, in (0, 1).

    Returns
    -------
    float or ndarray (0 rounds' worth where :math:`\kappa = 1`: one round is exact)

    Raises
    ------
    ValueError
        If ``kappa < 1`` or ``eps`` is outside (0, 1).

    Examples
    --------
    >>> round(theory_rounds(2.0, 1e-6), 3)                     # ln(1e6) / (2 ln 2)
    9.966
    """
    k = as_array("kappa", kappa)
    if np.any(k < 1.0):
        raise ValueError(f"kappa must be >= 1, got minimum {k.min()}")
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    with np.errstate(divide="ignore"):
        out = np.where(k > 1.0, math.log(1 / eps) / (-2.0 * np.log1p(-1.0 / np.maximum(k, 1 + 1e-300))), 0.0)
    return float(out) if out.ndim == 0 else out


def old_bound_factor(As, gamma) -> float:
    r"""The old analysis' price relative to GD, :math:`(1 + \gamma L_{\max}) L_\gamma / L` (always >= 1).

    Li et al. (2024) bound FedExProx's iterations by :math:`O(L_\gamma(1+\gamma L_{\max}) R^2/\varepsilon)` and
    GD's are :math:`O(L R^2/\varepsilon)`; since a round never costs less than a GD step (the paper's
    Assumption 3.1), this factor is also a lower bound on the old theory's time over GD's.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    gamma : float
        Prox step, >= 0.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On bad ``As`` or ``gamma``.

    Examples
    --------
    >>> round(old_bound_factor([[[1.0]], [[3.0]]], 1.0), 4)      # 4 * (1/2 + 3/4)/2 / 2
    1.25
    """
    As, w, v = _clients(As)
    gamma = _gamma(gamma, positive=False)
    L = _top_nonzero(As.mean(axis=0))[0]
    return (1 + gamma * float(w[:, -1].max())) * _top_nonzero(_envelope_hessian(w, v, gamma))[0] / L
