"""An independent dynamic-programming certificate for the Markov exchange economy.

Given the auctioneer's prices ``q(s)`` and a candidate consumer policy ``theta(s, w)``, this module
computes, with its own grid, interpolation and solver (numpy and ``scipy.sparse``, no JAX, nothing
shared with the training code):

* the consumer's **best response** by policy iteration over a fine grid of positions
  (:func:`best_response`): ``V*(s, w) = max_theta log(w - q(s) theta) + beta sum_s' P(s, s')
  V*(s', e(s') + theta R(s'))`` over the feasible positions of
  :func:`paperlib.economics.markov_economies.portfolio_bounds`;
* the candidate's own value by an exact sparse linear solve (:func:`evaluate_policy`);
* the auctioneer's exact regret: the discounted sum, along the candidate's wealth path, of
  ``max_{q' in [0, q_bar]} (q' - q) Z = q_bar max(Z, 0) - q Z`` with ``Z = n theta``.

:func:`certify` combines them. A profile is an (approximate) equilibrium when the consumer regret
``V* - V`` vanishes at every grid state and the auctioneer's regret vanishes from the no-trade states
``(s, e(s))``.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..core._validation import as_array, check_int
from .markov_economies import ExchangeEconomy, _box, _check_econ

__all__ = ["Certificate", "best_response", "evaluate_policy", "certify"]


def _interp_rows(x, grid):
    """Sparse (len(x), G) matrix of linear-interpolation weights on a uniform grid (x inside it)."""
    G, h = grid.size, grid[1] - grid[0]
    u = (x - grid[0]) / h
    i = np.clip(np.floor(u).astype(int), 0, G - 2)
    t = np.clip(u - i, 0.0, 1.0)
    rows = np.repeat(np.arange(x.size), 2)
    return sp.csr_matrix((np.stack([1 - t, t], 1).ravel(), (rows, np.stack([i, i + 1], 1).ravel())),
                         shape=(x.size, G))


def _transition(econ, theta, grid):
    """Sparse (S G, S G) transition of (s, w) under positions theta (S, G)."""
    S = theta.shape[0]
    P, R, e = econ.transition, econ.asset_return, econ.endowment
    blocks = [[P[s, t] * _interp_rows(e[t] + theta[s] * R[t], grid) for t in range(S)] for s in range(S)]
    return sp.bmat(blocks, format="csc")


def _solve(econ, theta, grid, reward):
    A = sp.identity(theta.size, format="csc") - econ.discount * _transition(econ, theta, grid)
    return spla.spsolve(A, reward.ravel()).reshape(theta.shape)


def _check(econ, prices, portfolio=None, grid_size=None):
    _check_econ(econ)
    S = len(econ.endowment)
    q = as_array("prices", prices, shape=(S,))
    if np.any(q <= 0):
        raise ValueError(f"prices must be positive, got {q}")
    if portfolio is None:
        return q, np.linspace(econ.wealth_low, econ.wealth_high, check_int("grid_size", grid_size, minimum=3))
    th = as_array("portfolio", portfolio, ndim=2)
    if th.shape[0] != S or th.shape[1] < 3:
        raise ValueError(f"portfolio must have shape (S, G) with S = {S} and G >= 3, got {th.shape}")
    grid = np.linspace(econ.wealth_low, econ.wealth_high, th.shape[1])
    lo, hi = _box(econ)
    c = grid[None, :] - q[:, None] * th
    if np.any(th < lo - 1e-9) or np.any(th > hi + 1e-9) or np.any(c < econ.min_consumption - 1e-9):
        raise ValueError("portfolio must be feasible (inside portfolio_bounds) at every grid node")
    return q, th, grid


def evaluate_policy(econ: ExchangeEconomy, prices, portfolio):
    """Lifetime utility of holding ``portfolio[s, g]`` at wealth ``grid[g]`` in world state ``s``.

    Parameters
    ----------
    econ : ExchangeEconomy
    prices : array_like, shape (S,), positive
    portfolio : array_like, shape (S, G), G >= 3
        Feasible positions on ``linspace(wealth_low, wealth_high, G)``.

    Returns
    -------
    ndarray, shape (S, G)

    Raises
    ------
    ValueError
        On wrong shapes, non-positive prices or an infeasible position.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> evaluate_policy(econ, [1.0, 1.0], [[0.0] * 3] * 2).round(3).tolist()
    [[-3.095, -1.709, -1.149], [-3.152, -1.766, -1.206]]
    """
    q, th, grid = _check(econ, prices, portfolio)
    return _solve(econ, th, grid, np.log(grid[None, :] - q[:, None] * th))


def best_response(econ: ExchangeEconomy, prices, *, grid_size=361, n_actions=801, max_iter=100):
    """The consumer's optimal value and positions at given prices, by policy iteration.

    Improvement: for every grid state pick the best of ``n_actions`` positions spread uniformly over
    the price-free box ``[theta_lo, theta_hi]``, plus ``theta = 0``; infeasible ones (consumption
    below ``c_min``) masked. Evaluation: an exact sparse linear solve. Stops when the policy repeats
    (at most ``max_iter`` improvements; a ``RuntimeWarning`` says so if that limit is hit).

    Parameters
    ----------
    econ : ExchangeEconomy
    prices : array_like, shape (S,), positive
    grid_size : int >= 3, default 361
    n_actions : int >= 2, default 801
    max_iter : int >= 1, default 100

    Returns
    -------
    value : ndarray, shape (S, grid_size)
    portfolio : ndarray, shape (S, grid_size)

    Raises
    ------
    ValueError
        On wrong shapes, non-positive prices or bad sizes.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy, equilibrium_prices
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> V, th = best_response(econ, equilibrium_prices(econ), grid_size=181, n_actions=401)
    >>> bool(abs(th[0, 70]) < 0.01)      # wealth 1.0 = e(0): at q* the best response is not to trade
    True
    """
    q, grid = _check(econ, prices, grid_size=grid_size)
    K = check_int("n_actions", n_actions, minimum=2)
    max_iter = check_int("max_iter", max_iter, minimum=1)
    S, G = len(econ.endowment), grid.size
    lo, hi = _box(econ)
    acts = np.union1d(np.linspace(lo, hi, K), [0.0])     # no trade is always available
    c = grid[None, :, None] - q[:, None, None] * acts[None, None, :]              # (S, G, K)
    log_c = np.where(c >= econ.min_consumption, np.log(np.maximum(c, econ.min_consumption)), -np.inf)
    nxt = [_interp_rows(econ.endowment[t] + acts * econ.asset_return[t], grid) for t in range(S)]
    pol = np.argmax(log_c, axis=2)            # start: consume as much as possible
    for _ in range(max_iter):
        V = _solve(econ, acts[pol], grid, np.take_along_axis(log_c, pol[..., None], 2)[..., 0])
        cont = np.stack([nxt[t] @ V[t] for t in range(S)])                        # (S', K)
        Q = log_c + econ.discount * (econ.transition @ cont)[:, None, :]
        new = np.argmax(Q, axis=2)
        if np.array_equal(new, pol):
            return V, acts[pol]
        pol = new
    warnings.warn(f"best_response: policy iteration did not converge in max_iter={max_iter} iterations; "
                  "the returned policy is not an exact best response on the grid", RuntimeWarning, stacklevel=2)
    return V, acts[pol]


class Certificate(NamedTuple):
    """Output of :func:`certify`.

    Attributes
    ----------
    consumer_regret : ndarray, shape (S, G)
        ``V*(s, w) - V(s, w)`` for one consumer, at every grid state.
    auctioneer_regret : ndarray, shape (S,)
        The auctioneer's exact regret from ``(s, e(s))``, discounted along the candidate's path.
    excess_demand : ndarray, shape (S,)
        ``Z = n theta(s, e(s))`` on the no-trade path.
    grid : ndarray, shape (G,)
    best_response : ndarray, shape (S, G)
        The DP best-response positions.
    n_consumers : int
    """

    consumer_regret: np.ndarray
    auctioneer_regret: np.ndarray
    excess_demand: np.ndarray
    grid: np.ndarray
    best_response: np.ndarray
    n_consumers: int

    @property
    def exploitability(self) -> float:
        """``n mean_(s, w) [V* - V] + mean_s A(s, e(s))``: every consumer's regret averaged over the
        grid states, plus the auctioneer's regret averaged over the no-trade states."""
        return float(self.n_consumers * self.consumer_regret.mean() + self.auctioneer_regret.mean())


def certify(econ: ExchangeEconomy, prices, portfolio, *, n_actions=801) -> Certificate:
    """Consumer and auctioneer regret of a candidate profile ``(q, theta)``.

    Parameters
    ----------
    econ : ExchangeEconomy
    prices : array_like, shape (S,), positive
    portfolio : array_like, shape (S, G), G >= 3
        The candidate's positions on ``linspace(wealth_low, wealth_high, G)`` (evaluate the generator
        there); the best response uses the same grid.
    n_actions : int, default 801

    Returns
    -------
    Certificate

    Raises
    ------
    ValueError
        On wrong shapes, non-positive prices or an infeasible position.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy, equilibrium_prices
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> cert = certify(econ, 0.9 * equilibrium_prices(econ), np.zeros((2, 181)), n_actions=401)
    >>> bool(cert.consumer_regret.min() > 0.1)     # cheap asset: not trading is far from optimal
    True
    """
    q, th, grid = _check(econ, prices, portfolio)
    V_br, th_br = best_response(econ, q, grid_size=grid.size, n_actions=n_actions)
    V = _solve(econ, th, grid, np.log(grid[None, :] - q[:, None] * th))
    Z = econ.n_consumers * th
    R_auc = _solve(econ, th, grid, econ.price_bound * np.maximum(Z, 0) - q[:, None] * Z)
    on = _interp_rows(econ.endowment, grid).toarray()                              # (S, G)
    return Certificate(V_br - V, (on * R_auc).sum(1), (on * Z).sum(1), grid, th_br, econ.n_consumers)
