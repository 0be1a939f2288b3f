"""Infinite-horizon Markov exchange economies as Markov pseudo-games (Goktas et al., ICLR 2026).

A small Markov exchange economy: ``S`` world states following a Markov chain ``P``, one good (the
numeraire), one short-lived asset in zero net supply that pays ``R(s')`` units of the good next
period, and ``n`` identical log-utility consumers with endowment ``e(s)`` and discount ``beta``.
A consumer with wealth ``w`` in world state ``s`` buys ``theta`` units of the asset at price ``q(s)``
and consumes ``c = w - q(s) theta``; next period her wealth is ``w' = e(s') + theta R(s')``. An
**auctioneer** sets the price ``q(s)`` in ``[0, q_bar]`` and is paid the value of excess demand,
``q(s) Z`` with ``Z = sum_i theta_i`` (zero exactly when the market clears). The budget makes each
consumer's feasible set depend on the auctioneer's action: a pseudo-game.

The symmetric recursive Radner equilibrium has no trade, ``theta = 0`` and ``c = e(s)``, at the Euler
prices ``q*(s) = beta sum_s' P(s, s') R(s') e(s) / e(s')`` (:func:`equilibrium_prices`, our closed
form). :mod:`paperlib.economics.exchange_solvers` computes it the paper's way, by exploitability minimisation
with a generator and an adversary network; :mod:`paperlib.economics.exchange_dp` certifies the result.

This module holds the economy and the exact, differentiable value of a policy on a wealth grid:
:func:`policy_value` solves the Bellman equation of a fixed policy as a linear system and
:func:`value_gradient` returns the gradient of any weighted sum of values with respect to the
positions, by the adjoint method (our derivation, see the chapter).

References: D. Goktas, S. Zhao, Y. Chen, A. Greenwald, *Infinite Horizon Markov Economies*, ICLR
2026, arXiv:2502.16080.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_real

__all__ = [
    "ExchangeEconomy",
    "make_economy",
    "equilibrium_prices",
    "wealth_grid",
    "portfolio_bounds",
    "policy_value",
    "value_gradient",
]


class ExchangeEconomy(NamedTuple):
    """Primitives of the one-good, one-asset Markov exchange economy (see the module docstring).

    Attributes
    ----------
    transition : ndarray, shape (S, S)
        Row-stochastic world-state transition matrix ``P``.
    asset_return : ndarray, shape (S,)
        Payoff ``R(s')`` of one unit of the asset, in units of the good, in next state ``s'``.
    endowment : ndarray, shape (S,)
        Each consumer's endowment ``e(s)``.
    discount : float
        ``beta`` in (0, 1).
    n_consumers : int
        Number of identical consumers ``n``.
    portfolio_bound : float
        ``theta_bar``: positions lie in ``[-theta_bar, theta_bar]``.
    price_bound : float
        ``q_bar``: the auctioneer's prices lie in ``[0, q_bar]``.
    wealth_low, wealth_high : float
        The wealth window; a position is feasible only if next wealth stays inside it.
    min_consumption : float
        Consumption must be at least this.
    """

    transition: np.ndarray
    asset_return: np.ndarray
    endowment: np.ndarray
    discount: float
    n_consumers: int
    portfolio_bound: float
    price_bound: float
    wealth_low: float
    wealth_high: float
    min_consumption: float


def make_economy(transition, asset_return, endowment, discount, *, n_consumers=2,
                 portfolio_bound=0.5, price_bound=2.0, wealth_low=0.3, wealth_high=2.1,
                 min_consumption=0.05) -> ExchangeEconomy:
    """Validate the primitives and return an :class:`ExchangeEconomy`.

    Parameters
    ----------
    transition : array_like, shape (S, S)
        Row-stochastic matrix ``P`` (rows sum to 1, entries in [0, 1]).
    asset_return : array_like, shape (S,)
        Positive asset payoffs ``R(s')``.
    endowment : array_like, shape (S,)
        Endowments ``e(s)``, inside ``(wealth_low, wealth_high)``.
    discount : float in (0, 1)
    n_consumers : int >= 1, default 2
    portfolio_bound : float > 0, default 0.5
    price_bound : float > 0, default 2.0
        Must exceed every closed-form equilibrium price, so that ``q*`` is feasible.
    wealth_low, wealth_high : float, defaults 0.3 and 2.1
        ``0 < wealth_low < wealth_high``.
    min_consumption : float, default 0.05
        In ``(0, wealth_low)``.

    Returns
    -------
    ExchangeEconomy

    Raises
    ------
    ValueError
        On a wrong shape, a non-stochastic ``P``, non-positive payoffs, an endowment outside the
        wealth window, a bound out of range, or ``price_bound <= max q*``.

    Examples
    --------
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> econ.transition.shape, econ.discount
    ((2, 2), 0.9)
    """
    P = as_array("transition", transition, ndim=2, min_size=1)
    S = P.shape[0]
    if P.shape != (S, S):
        raise ValueError(f"transition must be square (S, S), got {P.shape}")
    if np.any(P < 0) or np.any(P > 1) or not np.allclose(P.sum(1), 1.0, atol=1e-9):
        raise ValueError("transition must be row-stochastic: entries in [0, 1], rows summing to 1")
    R = as_array("asset_return", asset_return, shape=(S,))
    if np.any(R <= 0):
        raise ValueError(f"asset_return must be positive, got {R}")
    e = as_array("endowment", endowment, shape=(S,))
    beta = check_real("discount", discount, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    n = check_int("n_consumers", n_consumers, minimum=1)
    tb = check_real("portfolio_bound", portfolio_bound, minimum=0.0, strict_min=True)
    qb = check_real("price_bound", price_bound, minimum=0.0, strict_min=True)
    lo = check_real("wealth_low", wealth_low, minimum=0.0, strict_min=True)
    hi = check_real("wealth_high", wealth_high, minimum=lo, strict_min=True)
    cmin = check_real("min_consumption", min_consumption, minimum=0.0, maximum=lo,
                      strict_min=True, strict_max=True)
    if np.any(e <= lo) or np.any(e >= hi):
        raise ValueError(f"endowment must lie inside (wealth_low, wealth_high) = ({lo}, {hi}), got {e}")
    econ = ExchangeEconomy(P, R, e, beta, n, tb, qb, lo, hi, cmin)
    qs = equilibrium_prices(econ)
    if qb <= qs.max():
        raise ValueError(f"price_bound must exceed the equilibrium prices (max {qs.max():.3f}), got {qb}")
    return econ


def _check_econ(econ):
    if not isinstance(econ, ExchangeEconomy):
        raise ValueError(f"econ must be an ExchangeEconomy (use make_economy), got {type(econ).__name__}")
    return econ


def equilibrium_prices(econ: ExchangeEconomy) -> np.ndarray:
    """Closed-form asset prices of the symmetric no-trade recursive Radner equilibrium.

    ``q*(s) = beta sum_s' P(s, s') R(s') u'(e(s')) / u'(e(s))`` with ``u = log``: the Euler equation of
    a consumer who consumes her endowment (our derivation; see the chapter).

    Parameters
    ----------
    econ : ExchangeEconomy

    Returns
    -------
    ndarray, shape (S,)

    Raises
    ------
    ValueError
        If ``econ`` is not an :class:`ExchangeEconomy`.

    Examples
    --------
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> equilibrium_prices(econ).round(4).tolist()
    [0.98, 0.936]
    """
    _check_econ(econ)
    P, R, e = econ.transition, econ.asset_return, econ.endowment
    return econ.discount * (P * R[None, :] * e[:, None] / e[None, :]).sum(1)


def wealth_grid(econ: ExchangeEconomy, grid_size: int) -> np.ndarray:
    """Uniform grid ``linspace(wealth_low, wealth_high, grid_size)`` on which values live.

    Parameters
    ----------
    econ : ExchangeEconomy
    grid_size : int >= 2

    Returns
    -------
    ndarray, shape (grid_size,)

    Raises
    ------
    ValueError
        If ``grid_size`` is not an integer >= 2.

    Examples
    --------
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> wealth_grid(econ, 4).round(2).tolist()
    [0.3, 0.9, 1.5, 2.1]
    """
    _check_econ(econ)
    return np.linspace(econ.wealth_low, econ.wealth_high, check_int("grid_size", grid_size, minimum=2))


def _box(econ):
    """Price-free part of the feasible position interval (keeps next wealth inside the window)."""
    e, R = econ.endowment, econ.asset_return
    lo = max(-econ.portfolio_bound, float(np.max((econ.wealth_low - e) / R)))
    hi = min(econ.portfolio_bound, float(np.min((econ.wealth_high - e) / R)))
    return lo, hi


def _bounds(econ, prices, wealth):
    """lo (scalar), hi (..., S, G), and d hi / d q (same shape); prices (..., S), wealth (G,)."""
    lo, hi_box = _box(econ)
    budget = (wealth - econ.min_consumption) / prices[..., :, None]
    hi = np.minimum(hi_box, budget)
    dhi_dq = np.where(budget < hi_box, -budget / prices[..., :, None], 0.0)
    return lo, hi, dhi_dq


def portfolio_bounds(econ: ExchangeEconomy, prices, wealth):
    """Feasible positions ``[theta_lo, theta_hi(s, w)]`` given the auctioneer's prices.

    ``theta_lo = max(-theta_bar, max_s' (w_low - e(s')) / R(s'))`` keeps next wealth above the window;
    ``theta_hi = min(theta_bar, min_s' (w_high - e(s')) / R(s'), (w - c_min) / q(s))`` also keeps
    consumption above ``c_min``. The last term is the pseudo-game coupling: prices shape the budget.

    Parameters
    ----------
    econ : ExchangeEconomy
    prices : array_like, shape (S,), positive
    wealth : array_like, shape (G,)
        Wealth levels inside the window.

    Returns
    -------
    lo : float
    hi : ndarray, shape (S, G)

    Raises
    ------
    ValueError
        On wrong shapes, non-positive prices or a wealth outside the window.

    Examples
    --------
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> lo, hi = portfolio_bounds(econ, [1.0, 2.0], [0.5, 1.0])
    >>> lo, hi.round(3).tolist()
    (-0.5, [[0.45, 0.5], [0.225, 0.475]])
    """
    q, w = _check_prices_wealth(_check_econ(econ), prices, wealth)
    lo, hi, _ = _bounds(econ, q, w)
    return lo, hi


def _check_prices_wealth(econ, prices, wealth):
    S = len(econ.endowment)
    q = as_array("prices", prices, shape=(S,))
    if np.any(q <= 0):
        raise ValueError(f"prices must be positive, got {q}")
    w = as_array("wealth", wealth, ndim=1, min_size=1)
    if np.any(w < econ.wealth_low - 1e-12) or np.any(w > econ.wealth_high + 1e-12):
        raise ValueError(f"wealth must lie in [{econ.wealth_low}, {econ.wealth_high}]")
    return q, w


# ----------------------------------------------------------------------------------------------
# exact policy evaluation on the grid, batched over a leading axis of independent profiles


def _chain(econ, theta, grid):
    """Transition matrices of the wealth chain and interpolation data, batched.

    theta (B, S, G) -> M (B, S G, S G), cell index i (B, S, G, S'), weight t (same).
    """
    B, S, G = theta.shape
    h = grid[1] - grid[0]
    wn = econ.endowment[None, None, None, :] + theta[..., None] * econ.asset_return  # (B,S,G,S')
    u = (wn - grid[0]) / h
    i = np.clip(np.floor(u).astype(int), 0, G - 2)
    t = np.clip(u - i, 0.0, 1.0)
    M = np.zeros((B, S * G, S * G))
    b = np.arange(B)[:, None, None, None]
    row = (np.arange(S)[:, None] * G + np.arange(G)[None, :])[None, :, :, None]
    col = np.arange(S)[None, None, None, :] * G + i
    Pw = econ.transition[None, :, None, :]
    M[b, row, col] = Pw * (1 - t)
    M[b, row, col + 1] += Pw * t
    return M, i, t


def _solve_values(econ, prices, theta, grid, extra=None):
    """V (B, S, G) [and the value of an extra reward], the system matrix and chain data."""
    B, S, G = theta.shape
    c = grid - prices[..., None] * theta
    M, i, t = _chain(econ, theta, grid)
    A = np.eye(S * G)[None] - econ.discount * M
    rhs = np.log(c).reshape(B, S * G, 1)
    if extra is not None:
        rhs = np.concatenate([rhs, extra.reshape(B, S * G, 1)], 2)
    sol = np.linalg.solve(A, rhs)
    return sol.transpose(0, 2, 1).reshape(B, -1, S, G), A, i, t, c


def _continuation_slope(econ, values, i, grid):
    """beta sum_s' P(s, s') R(s') dV(s', w')/dw' at w' = e(s') + theta R(s'): shape (B, S, G)."""
    B, S, G = values.shape
    h = grid[1] - grid[0]
    bb = np.arange(B)[:, None, None, None]
    sp = np.arange(S)[None, None, None, :]
    slope = (values[bb, sp, i + 1] - values[bb, sp, i]) / h                # (B, S, G, S')
    return econ.discount * np.einsum("st,bsgt->bsg", econ.transition * econ.asset_return, slope)


def policy_value(econ: ExchangeEconomy, prices, portfolio):
    """Lifetime utility ``V(s, w)`` of a consumer who holds ``portfolio[s, g]`` at grid wealth ``w_g``.

    Solves ``V = log(w - q theta) + beta P_theta V`` exactly, where ``P_theta`` moves ``(s, w_g)`` to
    ``(s', e(s') + theta R(s'))`` with probability ``P(s, s')`` and splits it linearly between the two
    neighbouring grid nodes.

    Parameters
    ----------
    econ : ExchangeEconomy
    prices : array_like, shape (S,), positive
    portfolio : array_like, shape (S, G), G >= 2
        Positions on :func:`wealth_grid` ``(econ, G)``; must be feasible (:func:`portfolio_bounds`).

    Returns
    -------
    ndarray, shape (S, G)

    Raises
    ------
    ValueError
        On wrong shapes, non-positive prices, or an infeasible position.

    Examples
    --------
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> V = policy_value(econ, [1.0, 1.0], [[0.0, 0.0, 0.0]] * 2)
    >>> V.round(3).tolist()     # no trade: V = log(w) + beta * (value of the endowment path)
    [[-3.095, -1.709, -1.149], [-3.152, -1.766, -1.206]]
    """
    q, th, grid = _check_policy(econ, prices, portfolio)
    return _solve_values(econ, q[None], th[None], grid)[0][0, 0]


def value_gradient(econ: ExchangeEconomy, prices, portfolio, weights):
    """Gradient of ``J = sum_x weights[x] V(x)`` with respect to the positions and the prices.

    With ``A = I - beta P_theta`` and the adjoint ``lam = A^{-T} weights`` (our derivation),

    ``dJ / dtheta(s, w) = lam(s, w) [ -q(s) / c(s, w) + beta sum_s' P(s, s') R(s') V_w(s', w') ]``,
    ``dJ / dq(s) = - sum_w lam(s, w) theta(s, w) / c(s, w)`` (positions held fixed),

    where ``V_w`` is the slope of the interpolated value at next wealth ``w'``: the marginal cost of a
    unit of the asset against its marginal continuation value, weighted by how often ``(s, w)`` is
    visited from ``weights``.

    Parameters
    ----------
    econ : ExchangeEconomy
    prices : array_like, shape (S,), positive
    portfolio : array_like, shape (S, G)
        Feasible positions on :func:`wealth_grid` ``(econ, G)``.
    weights : array_like, shape (S, G)
        Weights of the states in ``J``.

    Returns
    -------
    d_portfolio : ndarray, shape (S, G)
    d_prices : ndarray, shape (S,)

    Raises
    ------
    ValueError
        On wrong shapes, non-positive prices or an infeasible position.

    Examples
    --------
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> d_th, d_q = value_gradient(econ, [1.0, 1.0], [[0.0] * 5] * 2, [[0.1] * 5] * 2)
    >>> d_th.shape, (d_q + 0.0).round(6).tolist()    # no position, so prices do not matter
    ((2, 5), [0.0, 0.0])
    """
    q, th, grid = _check_policy(econ, prices, portfolio)
    wts = as_array("weights", weights, shape=th.shape)
    vals, A, i, t, c = _solve_values(econ, q[None], th[None], grid)
    V = vals[0, 0]
    lam = np.linalg.solve(A[0].T, wts.ravel()).reshape(th.shape)
    d_th = lam * (-q[:, None] / c[0] + _continuation_slope(econ, V[None], i, grid)[0])
    return d_th, -(lam * th / c[0]).sum(1)


def _check_policy(econ, prices, portfolio):
    _check_econ(econ)
    th = as_array("portfolio", portfolio, ndim=2)
    S = len(econ.endowment)
    if th.shape[0] != S or th.shape[1] < 2:
        raise ValueError(f"portfolio must have shape (S, G) with S = {S} and G >= 2, got {th.shape}")
    grid = np.linspace(econ.wealth_low, econ.wealth_high, th.shape[1])
    q, _ = _check_prices_wealth(econ, prices, grid)
    lo, hi, _ = _bounds(econ, q, grid)
    if np.any(th < lo - 1e-9) or np.any(th > hi + 1e-9):
        raise ValueError("portfolio must be feasible: inside portfolio_bounds at every grid node")
    return q, th, grid
