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
from ._fedexprox_hinge import hinge_clients, hinge_rounds, smooth_hinge_loss  # noqa: F401
from ._fedexprox_hinge import _hinge_grad  # noqa: F401
from ._fedexprox_rounds import (count_rounds, fedexprox_step, local_gd_prox, prox_quadratic,  # noqa: F401
                                round_matrix)
from ._fedexprox_rounds import (_PRECONDITION_TOL, _check_orthonormal, _check_round_map,  # noqa: F401
                                _local_displacement, _points, _round, _sq_dist)
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
