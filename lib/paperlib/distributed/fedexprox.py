r"""FedExProx on quadratic clients: proximal steps, server extrapolation, and the rates that count them.

Each of :math:`n` clients holds a convex quadratic :math:`f_i(x) = \tfrac12 x^\top A_i x` with
:math:`A_i \succeq 0` (the common minimiser :math:`x_\star = 0` is the interpolation assumption; a linear
term with a common solution shifts to this form). One round of **FedExProx** (Li, Acharya and Richtárik,
2024) asks every client for its proximal point and extrapolates on the server:

.. math::

    \operatorname{prox}_{\gamma f_i}(x) = (I + \gamma A_i)^{-1} x, \qquad
    x_{k+1} = x_k + \alpha\Big(\tfrac1n \textstyle\sum_i \operatorname{prox}_{\gamma f_i}(x_k) - x_k\Big).

Because :math:`x - \operatorname{prox}_{\gamma f_i}(x) = \gamma \nabla M^\gamma_{f_i}(x)` for the Moreau envelope
:math:`M^\gamma_{f_i}`, a round is gradient descent with step :math:`\alpha\gamma` on
:math:`M^\gamma = \frac1n\sum_i M^\gamma_{f_i}`, whose Hessian is

.. math:: H_\gamma = \tfrac1n \textstyle\sum_i A_i (I + \gamma A_i)^{-1}.

:math:`L_\gamma` and :math:`\mu^+_\gamma` are its largest and smallest non-zero eigenvalues
(:math:`\gamma = 0` gives :math:`L`, :math:`\mu^+` of :math:`f` itself), and :math:`\alpha = 1/(\gamma L_\gamma)` is the
extrapolation analysed by Anyszka et al. (2026). This module runs rounds with an exact prox or a prox
computed by local gradient descent, with full or partial participation and constant or adaptive
extrapolation, and counts rounds to a target accuracy; it also runs FedExProx on a smooth hinge loss,
whose prox has no closed form. The envelope constants and the old and new iteration counts are in
:mod:`paperlib.distributed.moreau`.

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
from .moreau import (_clients, _envelope_hessian, _gamma, _top_nonzero, local_steps, sampled_smoothness,
                     theory_rounds)

_PROBE_EXEMPTIONS = {
    "count_rounds": {
        "max_rounds": {"int_past_int32": "a cap on the count, never allocated or passed to jit (binary lifting "
                                         "needs log2(max_rounds) matrix squarings); the default is 2**40, "
                                         "the limit 2**63 - 1"},
    },
}

__all__ = [
    "prox_quadratic",
    "local_gd_prox",
    "fedexprox_step",
    "round_matrix",
    "count_rounds",
    "sweep_rounds",
    "tolerance_run",
    "run_fedexprox",
    "hinge_clients",
    "smooth_hinge_loss",
    "hinge_rounds",
]

RULES = ("constant", "grads", "stops")


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


def sweep_rounds(As, gammas, x0, *, eps, basis, log_factor=1.0, exact=True, fedprox=True) -> dict:
    r"""Measured and predicted rounds to accuracy ``eps`` for each prox step in ``gammas``.

    For every :math:`\gamma` (``0`` is GD with step :math:`1/L`) it returns :math:`\kappa_\gamma`, the local
    steps :math:`t(\gamma)` of :func:`paperlib.distributed.moreau.local_steps`, the count :math:`K_{\rm th}` of
    :func:`paperlib.distributed.moreau.theory_rounds`, the upper count :math:`\lceil K_{\rm th}(\kappa_\gamma/(1-e^{-c}))\rceil`
    that covers the inexact prox, and the rounds :func:`count_rounds` measures for FedExProx with
    ``t`` local GD steps, with the exact prox, and for FedProx (:math:`\alpha = 1`).

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    gammas : array_like, shape (g,)
        Prox steps, >= 0.
    x0 : array_like, shape (d, B)
        Starting points (offsets from the solution set).
    eps : float
        Target in (0, 1).
    basis : array_like, shape (d, r)
        Orthonormal basis of the range of :math:`\sum_i A_i`.
    log_factor : float, default 1
        :math:`c` of the local-step budget.
    exact, fedprox : bool, default True
        Also measure the exact-prox and the FedProx rounds (``nan`` otherwise).

    Returns
    -------
    dict of ndarray, each shape (g,)
        Keys ``gamma, kappa, steps, theory, upper, local, exact, fedprox``.

    Raises
    ------
    ValueError
        On bad input (as the functions it calls).

    Examples
    --------
    >>> As = np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 4.0]]])
    >>> out = sweep_rounds(As, [0.0, 1.0], np.ones((2, 1)), eps=1e-6, basis=np.eye(2))
    >>> out["local"].tolist(), np.round(out["kappa"], 2).tolist()
    ([23.0, 7.0], [4.0, 1.6])
    """
    As, w, v = _clients(As)
    gammas = as_array("gammas", gammas, ndim=1, min_size=1)
    if np.any(gammas < 0):
        raise ValueError("gammas must be >= 0")
    c = check_real("log_factor", log_factor, minimum=0.0, strict_min=True)
    L_max = float(w[:, -1].max())
    count = lambda T: float(count_rounds(T, x0, eps=eps, basis=basis))    # noqa: E731
    out = {k: np.full(len(gammas), np.nan) for k in
           ("gamma", "kappa", "steps", "theory", "upper", "local", "exact", "fedprox")}
    for j, g in enumerate(gammas):
        L_g, mu_g = _top_nonzero(_envelope_hessian(w, v, g) if g > 0 else As.mean(axis=0))
        t = local_steps(g, L_max, log_factor=c)
        out["gamma"][j], out["kappa"][j], out["steps"][j] = g, L_g / mu_g, t
        out["theory"][j] = theory_rounds(L_g / mu_g, eps)
        out["upper"][j] = math.ceil(theory_rounds(L_g / mu_g / (1 - math.exp(-c)) if g > 0 else L_g / mu_g, eps))
        gd = count(round_matrix(As, 0.0)) if g == 0 else None
        out["local"][j] = gd if g == 0 else count(round_matrix(As, g, local=t))
        if exact:
            out["exact"][j] = gd if g == 0 else count(round_matrix(As, g))
        if fedprox:
            out["fedprox"][j] = gd if g == 0 else count(round_matrix(As, g, alpha=1.0))
    return out


def _steps_to_tolerance(rho, g0, tol, s_max):
    """Smallest s in [0, s_max] with ||rho**s * g0|| <= tol ||g0|| (per client and start), by bisection."""
    g2 = g0**2
    target = tol**2 * np.sum(g2, axis=1)                                   # (n, B)
    log_r2 = 2.0 * np.log(np.maximum(rho, 1e-300))[:, :, None]             # rho = 0: one step is exact
    ok = lambda s: np.einsum("ndb,ndb->nb", np.exp(s[:, None, :] * log_r2), g2) <= target   # noqa: E731
    lo = np.zeros(target.shape)                                            # ok(lo) only if g0 = 0
    hi = np.broadcast_to(s_max[:, None], target.shape).astype(float)      # ok(hi) always
    done0 = ok(lo)
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        good = ok(mid)
        hi, lo = np.where(good, mid, hi), np.where(good, lo, mid)
    return np.where(done0, 0.0, hi)


def tolerance_run(As, x0, gamma, *, eps, basis, tol, max_rounds=100_000) -> dict:
    r"""FedExProx whose clients stop local GD at a prox tolerance; measured rounds and local steps.

    Each round, client :math:`i` starts local gradient descent at :math:`z_0 = x_k` on its subproblem
    :math:`\phi_i(z) = f_i(z) + \|z - x_k\|^2/(2\gamma)` with step :math:`1/(L_i + 1/\gamma)` and stops at the first
    :math:`s` with :math:`\|\nabla\phi_i(z_s)\| \le \mathrm{tol}\,\|\nabla\phi_i(z_0)\|`, a rule the client can
    evaluate. The server extrapolates with :math:`\alpha = 1/(\gamma L_\gamma)`. A synchronous round costs the
    slowest client's steps, :math:`\max_i s_i`. The iterates are computed in each :math:`A_i`'s eigenbasis,
    where the gradient along an eigenvalue :math:`a` shrinks by :math:`\rho = (L_i - a)/(L_i + 1/\gamma)` per step.
    The counts are bounded by :math:`\lceil\ln(1/\mathrm{tol})(1 + \gamma L_i)\rceil`.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    x0 : array_like, shape (d, B)
        Starting points (offsets from the solution set), each with a non-zero range component.
    gamma : float
        Prox step, > 0.
    eps : float
        Target in (0, 1): stop a start once its squared distance has shrunk ``eps``-fold.
    basis : array_like, shape (d, r)
        Orthonormal basis of the range: ``max|B^T B - I| <= 1e-6``.
    tol : float
        Relative tolerance on the subproblem gradient, in (0, 1).
    max_rounds : int, default 100000
        Give up above this.

    Returns
    -------
    dict of ndarray, each shape (B,)
        ``rounds`` (rounds to the target), ``local_steps`` (sum over those rounds of the slowest client's
        steps) and ``max_steps`` (the largest per-round count seen).

    Raises
    ------
    ValueError
        On bad input, a ``basis`` whose columns are not orthonormal (``max|B^T B - I| > 1e-6``), or
        when a start does not reach the target within ``max_rounds`` rounds.

    Notes
    -----
    The stopping rule is ours: the paper's time model charges :math:`1 + \gamma L_{\max}` steps up to a
    logarithmic factor without fixing an inner stopping rule.

    Examples
    --------
    >>> As = np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 4.0]]])
    >>> out = tolerance_run(As, np.ones((2, 1)), 1.0, eps=1e-6, basis=np.eye(2), tol=0.01)
    >>> out["rounds"].tolist(), out["local_steps"].tolist(), out["max_steps"].tolist()
    ([7.0], [7.0], [1.0])
    """
    As, w, v = _clients(As)
    d = As.shape[1]
    x = as_array("x0", x0, shape=(d, None), min_size=1).copy()
    gamma = _gamma(gamma)
    basis = as_array("basis", basis, shape=(d, None), min_size=1)
    _check_orthonormal(basis)
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    tol = check_real("tol", tol, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    max_rounds = check_int("max_rounds", max_rounds, minimum=1)
    d0 = _sq_dist(x, basis)
    if np.any(d0 <= 0):
        raise ValueError("x0 must have a non-zero component in the range of basis")
    L_i = w[:, -1:]
    rho = (L_i - w) / (L_i + 1.0 / gamma)                                   # (n, d)
    full = gamma * w / (1.0 + gamma * w)                                    # exact prox shrink
    s_max = np.ceil(math.log(1.0 / tol) * (1.0 + gamma * L_i[:, 0])) + 1.0
    alpha = 1.0 / (gamma * _top_nonzero(_envelope_hessian(w, v, gamma))[0])
    B = x.shape[1]
    rounds, work, peak = np.zeros(B), np.zeros(B), np.zeros(B)
    active = np.ones(B, bool)
    for _ in range(max_rounds):
        c = np.einsum("nji,jb->nib", v, x)                                  # eigen-coordinates (n, d, B)
        t = _steps_to_tolerance(rho, w[:, :, None] * c, tol, s_max)         # (n, B)
        shrink = (1.0 - rho[:, :, None] ** t[:, None, :]) * full[:, :, None]
        disp = np.einsum("nij,njb->nib", v, shrink * c).mean(axis=0)       # (d, B)
        x = x - alpha * disp
        step = t.max(axis=0)
        rounds += active
        work += np.where(active, step, 0.0)
        peak = np.where(active, np.maximum(peak, step), peak)
        active &= _sq_dist(x, basis) / d0 > eps
        if not active.any():
            return {"rounds": rounds, "local_steps": work, "max_steps": peak}
    raise ValueError(f"the target eps={eps} is not reached within max_rounds={max_rounds} rounds")


def run_fedexprox(As, x0, gamma, *, rounds, basis, rule="constant", alpha=None, sample_size=None,
                  rng=None) -> np.ndarray:
    r"""Run FedExProx with an exact prox and return squared distances to the solution set per round.

    ``rule`` picks the extrapolation :math:`\alpha_k`: ``"constant"`` (``alpha``, default
    :math:`1/(\gamma L_{\gamma,S})`), ``"grads"`` (gradient diversity,
    :math:`\alpha_k = \frac1S\sum_i\|x_k - p_i\|^2 / \|x_k - \bar p\|^2`) or ``"stops"`` (stochastic Polyak,
    :math:`\alpha_k = \frac1S\sum_i M^\gamma_{f_i}(x_k) / (\gamma\|\nabla \bar M(x_k)\|^2)`, using
    :math:`\inf M^\gamma_{f_i} = 0`), where :math:`p_i` are the prox points of the round's clients and
    bars average over them. With ``sample_size`` :math:`S < n`, each round draws :math:`S` clients
    without replacement (nice sampling) independently for every start.

    Parameters
    ----------
    As : array_like, shape (n, d, d)
        Client Hessians.
    x0 : array_like, shape (d, B)
        Starting points.
    gamma : float
        Prox step, > 0.
    rounds : int
        Number of rounds, >= 1.
    basis : array_like, shape (d, r)
        Orthonormal basis of the range (distance = norm of the projection): ``max|B^T B - I| <= 1e-6``.
    rule : {"constant", "grads", "stops"}, default "constant"
    alpha : float, optional
        Constant extrapolation (``rule="constant"`` only).
    sample_size : int, optional
        Clients per round, default all.
    rng : numpy.random.Generator, optional
        Required when ``sample_size < n``.

    Returns
    -------
    ndarray, shape (rounds + 1, B)
        :math:`\|P x_k\|^2` for :math:`k = 0, \dots,` ``rounds``.

    Raises
    ------
    ValueError
        On bad input, a ``basis`` whose columns are not orthonormal (``max|B^T B - I| > 1e-6``), an
        unknown ``rule``, ``alpha`` with an adaptive rule, or a missing ``rng``.

    Examples
    --------
    >>> As = np.array([[[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 3.0]]])
    >>> d2 = run_fedexprox(As, np.ones((2, 1)), 1.0, rounds=2, basis=np.eye(2), rule="grads")
    >>> np.round(d2[:, 0], 4).tolist()
    [2.0, 0.3125, 0.0664]
    """
    As, w, v = _clients(As)
    n, d = As.shape[0], As.shape[1]
    x = as_array("x0", x0, shape=(d, None), min_size=1).copy()
    gamma = _gamma(gamma)
    rounds = check_int("rounds", rounds, minimum=1)
    basis = as_array("basis", basis, shape=(d, None), min_size=1)
    _check_orthonormal(basis)
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    S = n if sample_size is None else check_int("sample_size", sample_size, minimum=1, maximum=n)
    if S < n and not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator when sample_size < n")
    if rule != "constant" and alpha is not None:
        raise ValueError("alpha applies only to rule='constant'")
    if rule == "constant":
        L_s = (_top_nonzero(_envelope_hessian(w, v, gamma))[0] if S == n
               else sampled_smoothness(As, gamma, S))
        alpha = 1.0 / (gamma * L_s) if alpha is None else check_real("alpha", alpha, minimum=0.0, strict_min=True)
    inv = np.linalg.inv(np.eye(d) + gamma * As)                        # (n, d, d) exact prox maps
    B = x.shape[1]
    cols = np.arange(B)[:, None]
    out = np.empty((rounds + 1, B))
    out[0] = _sq_dist(x, basis)
    for k in range(rounds):
        p = np.swapaxes(inv @ x, 1, 2)                                  # (n, B, d) prox points, all clients
        disp = x.T[None] - p                                            # gamma * grad M_i
        if S < n:
            idx = np.argsort(rng.random((B, n)), axis=1)[:, :S]         # (B, S) nice sampling per start
            disp, p = disp[idx, cols], p[idx, cols]                     # (B, S, d)
        else:
            disp, p = np.swapaxes(disp, 0, 1), np.swapaxes(p, 0, 1)
        mean_disp = disp.mean(axis=1)                                   # (B, d)
        if rule == "constant":
            a = np.full(B, alpha)
        else:
            denom = np.maximum(np.sum(mean_disp**2, axis=1), 1e-300)
            if rule == "grads":
                a = np.mean(np.sum(disp**2, axis=2), axis=1) / denom
            else:   # M_i(x) = f_i(p_i) + |p_i - x|^2 / (2 gamma)
                Ap = np.einsum("nij,bnj->bni", As, p) if S == n else np.einsum("bsij,bsj->bsi", As[idx], p)
                m_i = 0.5 * np.sum(p * Ap, axis=2) + np.sum(disp**2, axis=2) / (2 * gamma)
                a = gamma * m_i.mean(axis=1) / denom
        x = x - (a[:, None] * mean_disp).T
        out[k + 1] = _sq_dist(x, basis)
    return out


def hinge_clients(n, m, d, *, margin=0.5, rng):
    r"""Linearly separable client data for the smooth hinge loss (interpolation holds).

    Points :math:`a \sim N(0, I_d)` are kept when :math:`|a^\top w_\star| \ge` ``margin`` for a random unit
    :math:`w_\star`, and labelled :math:`y = \operatorname{sign}(a^\top w_\star)`; so
    :math:`x = w_\star/\text{margin}` has every margin :math:`y\,a^\top x \ge 1` and zero loss on every client.

    Parameters
    ----------
    n, m, d : int
        Clients, points per client and dimension (all >= 1).
    margin : float, default 0.5
        Minimum :math:`|a^\top w_\star|`, in (0, 2].
    rng : numpy.random.Generator

    Returns
    -------
    X : ndarray, shape (n, m, d)
    y : ndarray, shape (n, m), entries in {-1, +1}

    Raises
    ------
    ValueError
        On a bad size, ``margin`` out of range, or a missing ``rng``.

    Examples
    --------
    >>> X, y = hinge_clients(2, 3, 2, rng=np.random.default_rng(0))
    >>> X.shape, y.shape, bool(np.all(np.abs(y) == 1))
    ((2, 3, 2), (2, 3), True)
    """
    n, m = check_int("n", n, minimum=1), check_int("m", m, minimum=1)
    d = check_int("d", d, minimum=1)
    margin = check_real("margin", margin, minimum=0.0, maximum=2.0, strict_min=True)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    kept = np.empty((0, d))
    while len(kept) < n * m:
        a = rng.standard_normal((4 * n * m, d))
        kept = np.vstack([kept, a[np.abs(a @ w) >= margin]])
    X = kept[: n * m].reshape(n, m, d)
    return X, np.sign(X @ w)


def _hinge_grad(X, y, z):
    t = np.einsum("nmd,nm,ndb->nmb", X, y, z)
    hp = np.where(t < 0, -1.0, np.where(t < 1, t - 1.0, 0.0))
    return np.einsum("nmd,nm,nmb->ndb", X, y, hp) / X.shape[1]


def smooth_hinge_loss(X, y, x) -> np.ndarray:
    r"""Average smooth hinge loss :math:`f(x) = \frac{1}{nm}\sum_{i,j} h(y_{ij} a_{ij}^\top x)` at each column of ``x``.

    :math:`h(t) = \tfrac12 - t` for :math:`t < 0`, :math:`\tfrac12(1-t)^2` on :math:`[0, 1]` and :math:`0` for
    :math:`t > 1`: convex, 1-smooth, zero exactly where the margin is at least one.

    Parameters
    ----------
    X : array_like, shape (n, m, d)
    y : array_like, shape (n, m)
    x : array_like, shape (d, B)

    Returns
    -------
    ndarray, shape (B,)

    Raises
    ------
    ValueError
        On inconsistent shapes or non-finite input.

    Examples
    --------
    >>> smooth_hinge_loss(np.ones((1, 1, 1)), np.ones((1, 1)), np.array([[0.0, 0.5, 2.0]])).tolist()
    [0.5, 0.125, 0.0]
    """
    X = as_array("X", X, ndim=3, min_size=1)
    y = as_array("y", y, shape=X.shape[:2])
    x = as_array("x", x, shape=(X.shape[2], None), min_size=1)
    t = np.einsum("nmd,nm,db->nmb", X, y, x)
    return np.where(t < 0, 0.5 - t, np.where(t < 1, 0.5 * (1.0 - t) ** 2, 0.0)).mean(axis=(0, 1))


def hinge_rounds(X, y, x0, gamma, *, eps, max_rounds, local=None, alpha=None) -> float:
    r"""Rounds until :math:`\max_b f(x_k^{(b)})/f(x_0^{(b)}) \le \varepsilon` for FedExProx on the smooth hinge loss.

    Each client solves its prox subproblem with ``local`` GD steps of size :math:`1/(L_i + 1/\gamma)`,
    :math:`L_i = \lambda_{\max}(X_i^\top X_i)/m` (default :func:`~paperlib.distributed.moreau.local_steps` with :math:`L_{\max}`), and the
    server extrapolates with ``alpha``, by default :math:`1/(\gamma \hat L_\gamma)` where
    :math:`\hat L_\gamma = \frac1n\sum_i L_i/(1+\gamma L_i)` bounds the smoothness of :math:`M^\gamma`.
    ``gamma = 0`` runs GD on :math:`f` with step :math:`1/L`, :math:`L = \lambda_{\max}(\frac{1}{nm}\sum X_i^\top X_i)`.

    Parameters
    ----------
    X, y : array_like, shapes (n, m, d) and (n, m)
        Client data and labels.
    x0 : array_like, shape (d, B)
        Starting points with positive loss.
    gamma : float
        Prox step, >= 0.
    eps : float
        Target loss ratio in (0, 1).
    max_rounds : int
        Give up after this many rounds.
    local : int, optional
        Local GD steps per round.
    alpha : float, optional
        Extrapolation.

    Returns
    -------
    float
        The number of rounds, or ``inf`` if ``max_rounds`` rounds do not reach the target.

    Raises
    ------
    ValueError
        On bad input, a start with zero loss, or ``local``/``alpha`` with ``gamma = 0``.

    Notes
    -----
    :math:`\hat L_\gamma` is an upper bound, so the extrapolation is safe but smaller than the paper's
    :math:`1/(\gamma L_\gamma)` with the exact smoothness constant of :math:`M^\gamma`, which has no closed form here.

    Examples
    --------
    >>> X, y = hinge_clients(2, 3, 2, rng=np.random.default_rng(0))
    >>> hinge_rounds(X, y, -np.ones((2, 1)), 1.0, eps=1e-6, max_rounds=500) < 500
    True
    """
    d = as_array("X", X, ndim=3, min_size=1).shape[2]
    x0 = as_array("x0", x0, shape=(d, None), min_size=1)
    f0 = smooth_hinge_loss(X, y, x0)
    X, y, x = np.asarray(X, float), np.asarray(y, float), np.asarray(x0, float).copy()
    gamma = _gamma(gamma, positive=False)
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    max_rounds = check_int("max_rounds", max_rounds, minimum=1)
    if np.any(f0 <= 0):
        raise ValueError("x0 must have positive loss in every column")
    n, m, d = X.shape
    L_i = np.linalg.eigvalsh(np.einsum("nmi,nmj->nij", X, X) / m)[:, -1]
    if gamma == 0:
        if local is not None or alpha is not None:
            raise ValueError("local and alpha apply only to gamma > 0 (gamma = 0 is GD with step 1/L)")
        L = np.linalg.eigvalsh(np.einsum("nmi,nmj->ij", X, X) / (n * m))[-1]
        step = lambda x: x - _hinge_grad(X, y, x[None].repeat(n, 0)).mean(axis=0) / L    # noqa: E731
    else:
        t = local_steps(gamma, L_i.max()) if local is None else check_int("local", local, minimum=1)
        a = (1.0 / (gamma * np.mean(L_i / (1 + gamma * L_i))) if alpha is None
             else check_real("alpha", alpha, minimum=0.0, strict_min=True))
        lr = (1.0 / (L_i + 1.0 / gamma))[:, None, None]

        def step(x):
            z = x[None].repeat(n, 0)
            for _ in range(t):
                z = z - lr * (_hinge_grad(X, y, z) + (z - x[None]) / gamma)
            return x + a * (z.mean(axis=0) - x)

    for k in range(1, max_rounds + 1):
        x = step(x)
        if np.max(smooth_hinge_loss(X, y, x) / f0) <= eps:
            return float(k)
    return math.inf
