"""Equilibrium solvers for the Markov exchange economy: GAP networks and the NPM baseline.

The paper computes recursive Radner equilibria by minimising **exploitability**, the cumulative
regret ``Psi(omega, sigma)`` of a *generator* profile ``omega`` (here: the auctioneer's price table
``q(s)`` and a consumer policy network) against an *adversary* ``sigma`` (a best-response network
for the consumers, and the auctioneer's best response in closed form). The generator descends
``Psi``, the adversary ascends it (:func:`train_gap`, a variant of the paper's Algorithm 1 with
generative adversarial policy networks). The baseline is the **neural projection method**
(:func:`train_npm`): one network trained to zero the first-order conditions and the
market-clearing residual.

Values are exact on the wealth grid of :mod:`paperlib.economics.markov_economies` (a linear solve) and their
gradients come from the adjoint formula of :func:`paperlib.economics.markov_economies.value_gradient`. The
networks are small ReLU MLPs (two hidden layers of 16 units) written in numpy with their backward
pass spelled out, as in :mod:`paperlib.scaling_laws.numpy_mlp`: at this size JAX's compilation would cost more
than the whole training run. Adam is the update of ``optax.scale_by_adam`` (checked against optax in
the tests). Everything runs in float64.

References: D. Goktas, S. Zhao, Y. Chen, A. Greenwald, *Infinite Horizon Markov Economies*, ICLR
2026, arXiv:2502.16080, Algorithm 1 (two-time-scale simultaneous gradient descent-ascent on
exploitability) and the experiments (GAP networks against the neural projection method).
D. Goktas, A. Greenwald, *Exploitability Minimization in Games and Beyond*, NeurIPS 2022 (the
regularised best response). M. Azinovic, L. Gaegauf, S. Scheidegger, *Deep equilibrium nets*,
International Economic Review, 2022 (the neural projection method).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import check_bool, check_int, check_real
from ._exchange_solvers_networks import generator_policy, init_generator, select_run  # noqa: F401
from ._exchange_solvers_networks import (_LOGIT_CAP, _Adam, _check_generator, _check_rng,  # noqa: F401
                                         _features, _grid_features, _mlp_backward, _mlp_forward, _mlp_init,
                                         _net_out, _one_blas_thread, _prices, _share)
from .markov_economies import (ExchangeEconomy, _bounds, _box, _check_econ, _continuation_slope,
                               _solve_values)

__all__ = ["TrainResult", "init_generator", "select_run", "generator_policy", "train_gap", "train_npm",
           "certify_runs"]


class TrainResult(NamedTuple):
    """Output of :func:`train_gap` and :func:`train_npm` (leading axis of every array: runs).

    Attributes
    ----------
    generator : dict
        Final ``{"price_logit": (runs, S), "net": [W1, b1, W2, b2, W3, b3]}``.
    adversary : list or None
        Final best-response network (``None`` for the neural projection method).
    loss : ndarray, shape (runs, steps, 2)
        GAP: consumer and auctioneer parts of ``Psi`` before each generator step.
        NPM: first-order-condition and market-clearing parts of its loss.
    prices : ndarray, shape (runs, steps, S)
        The generator's prices before each step.
    snapshots : dict
        ``{step: generator before that step}`` for the steps asked for (``steps``: the final one).
    """

    generator: dict
    adversary: object
    loss: np.ndarray
    prices: np.ndarray
    snapshots: dict


# ----------------------------------------------------------------------------------------------
# GAP: exploitability minimisation with exact values and adjoint gradients


def _onpath_weights(econ, grid):
    """(S, G) weights: linear interpolation at wealth e(s) in row s, averaged over s."""
    S, G, h = len(econ.endowment), grid.size, grid[1] - grid[0]
    u = (econ.endowment - grid[0]) / h
    i = np.clip(np.floor(u).astype(int), 0, G - 2)
    t = u - i
    W = np.zeros((S, G))
    W[np.arange(S), i], W[np.arange(S), i + 1] = 1 - t, t
    return W / S


def _auctioneer(econ, q, Z, tau):
    """Per-period regret of the auctioneer and its partial derivatives in Z and q (Danskin)."""
    qb, qq = econ.price_bound, q[..., None]
    if tau == 0:     # exact best response: the vertex q_bar 1{Z > 0}
        return qb * np.maximum(Z, 0) - qq * Z, np.where(Z > 0, qb, 0.0) - qq, -Z
    dq = np.clip(qq + tau * Z, 0.0, qb) - qq          # regularised best response q' = q + dq
    return dq * Z - dq ** 2 / (2 * tau), dq, -Z + dq / tau


def _adversary_side(econ, z_a, q, lo, hi, dhi, grid):
    """The adversary's values at the generator's prices and the gradient of their grid mean."""
    sig, dsig = _share(z_a)
    th = lo + sig * (hi - lo)
    vals, A, i, _, c = _solve_values(econ, q, th, grid)
    V = vals[:, 0]
    R, S, G = th.shape
    lam = np.linalg.solve(A.transpose(0, 2, 1), np.full((R, S * G, 1), 1.0 / (S * G))).reshape(th.shape)
    D = -q[..., None] / c + _continuation_slope(econ, V, i, grid)
    return dict(V=V, A=A, cot=lam * D * dsig * (hi - lo), dV_dq=-th / c + D * sig * dhi)


def _gap_objective(econ, q, z_g, adv, grid, tau, weight):
    """``Psi`` (consumer and auctioneer parts) and its gradient in the generator's outputs.

    q (R, S) prices, z_g (R, S, G) generator network outputs, adv: output of :func:`_adversary_side`
    at these prices. Returns parts (R, 2), d Psi / d z_g (R, S, G), d Psi / d q (R, S) with the
    adversary's network held fixed, and V_gen.
    """
    R, S, G = z_g.shape
    n = econ.n_consumers
    lo, hi, dhi = _bounds(econ, q, grid)
    w_on = _onpath_weights(econ, grid)
    sig, dsig = _share(z_g)
    th = lo + sig * (hi - lo)
    r, dr_dZ, dr_dq = _auctioneer(econ, q, n * th, tau)
    vals, A, i, _, c = _solve_values(econ, q, th, grid, extra=r)
    V, RA = vals[:, 0], vals[:, 1]
    # consumer part n mean(max(V_adv - V_gen, 0)): only states where the adversary does better
    active = (adv["V"] > V) / (S * G)
    rhs = np.stack([active.reshape(R, -1), np.broadcast_to(w_on.ravel(), (R, S * G))], 2)
    adj = np.linalg.solve(A.transpose(0, 2, 1), rhs)
    lam, mu = (adj[..., j].reshape(R, S, G) for j in (0, 1))
    lam_adv = np.linalg.solve(adv["A"].transpose(0, 2, 1), active.reshape(R, -1, 1)).reshape(R, S, G)
    D = -q[..., None] / c + _continuation_slope(econ, V, i, grid)
    DR = n * dr_dZ + _continuation_slope(econ, RA, i, grid)
    d_th = -n * lam * D + weight * mu * DR
    d_q = (n * (lam_adv * adv["dV_dq"]).sum(2) - n * (lam * (-th / c + D * sig * dhi)).sum(2)
           + weight * (mu * (dr_dq + DR * sig * dhi)).sum(2))
    parts = np.stack([n * np.maximum(adv["V"] - V, 0).mean((1, 2)), (w_on * RA).sum((1, 2))], 1)
    return parts, d_th * dsig * (hi - lo), d_q, V


def _check_start(start, econ):
    if not (isinstance(start, tuple) and len(start) == 2):
        raise ValueError("start must be the pair (generator, adversary) returned by init_generator")
    gen, adv = start
    _check_generator(gen, econ)
    runs = gen["price_logit"].shape[0]
    if (not isinstance(adv, list) or len(adv) != len(gen["net"])
            or any(np.shape(a) != np.shape(b) for a, b in zip(adv, gen["net"]))):
        raise ValueError("start's adversary must have the generator network's shape")
    return gen, adv, runs


def _cosine(steps, k):
    """optax.cosine_decay_schedule(1, steps, alpha=0.01) at step k."""
    return 0.01 + 0.99 * 0.5 * (1 + np.cos(np.pi * min(k, steps) / steps))


def train_gap(econ: ExchangeEconomy, start, *, steps=800, lr_generator=1e-2, lr_adversary=5e-2,
              decay_adversary=False, simultaneous=True, tau=3.0, auctioneer=True, grid_size=31,
              snapshots=()) -> TrainResult:
    """Exploitability minimisation with a generative adversarial policy network (GAP).

    The generator ``omega`` (price logits and a consumer policy network ``pi``) descends, and the
    adversary ``sigma`` (a consumer best-response network ``rho``) ascends, the cumulative regret

    ``Psi(omega, sigma) = n mean_x max(V_rho(x) - V_pi(x), 0) + A_omega``,

    where ``x`` runs over the wealth grid of every world state, both values are exact on the grid at
    the generator's prices (the adversary's feasible set depends on them), and ``A`` is the
    auctioneer's regret from the no-trade states ``(s, e(s))``: the discounted sum along the
    generator's path of ``max_{q'} (q' - q) Z - (q' - q)^2 / (2 tau)`` with ``Z = n theta``
    (the exact vertex best response for ``tau = 0``). Each step the adversary takes one Adam ascent
    step on ``mean_x V_rho`` and the generator one Adam descent step on ``Psi``, at the adversary's
    old parameters (``simultaneous``, as in the paper's Algorithm 1) or its new ones.

    Parameters
    ----------
    econ : ExchangeEconomy
    start : tuple (generator, adversary)
        Initial networks from :func:`init_generator` (their runs are trained side by side).
    steps : int, default 800
    lr_generator : float > 0, default 1e-2
        Adam step size of the generator, cosine-decayed to 1% over ``steps``.
    lr_adversary : float > 0, default 5e-2
        Adam step size of the adversary: constant (the faster time scale), or on the generator's
        cosine schedule if ``decay_adversary``.
    decay_adversary : bool, default False
    simultaneous : bool, default True
    tau : float >= 0, default 3.0
        Regularisation of the auctioneer's best response; 0 is the exact (vertex) best response.
    auctioneer : bool, default True
        Include ``A`` in the generator's loss (``False`` is a deliberately broken variant).
    grid_size : int >= 4, default 31
        Wealth nodes per world state.
    snapshots : sequence of int, default ()
        Steps in ``[0, steps]`` at which to keep a copy of the generator.

    Returns
    -------
    TrainResult

    Raises
    ------
    ValueError
        On a malformed ``start``, a non-positive size or step size, a negative ``tau``, a
        non-boolean flag or a snapshot step outside ``[0, steps]``.

    Notes
    -----
    A variant of the paper's Algorithm 1, not the algorithm itself: (1) exact values on a grid and
    exact (adjoint) policy gradients instead of Monte Carlo rollouts through a differentiable
    simulator; (2) prices are a table over world states (the paper's price network sees the whole
    state); (3) the auctioneer's best response is computed in closed form, exact or proximally
    regularised, not learned (the authors' code uses a fixed smooth map); (4) the generator's step
    size follows a cosine schedule; (5) two safeguards rest on one fact, that the generator's own
    policy ``pi`` is always a feasible deviation, so a best response is worth at least as much at
    every state: the consumer part counts only states where ``rho`` beats ``pi`` (regret clipped at
    zero per state), and an adversary that falls behind ``pi`` by more than 0.05 utils on average is
    restarted from a copy of ``pi``.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> start = init_generator(econ, width=4, rng=np.random.default_rng(0))
    >>> res = train_gap(econ, start, steps=3, grid_size=6)
    >>> res.loss.shape, res.prices.shape
    ((1, 3, 2), (1, 3, 2))
    """
    _check_econ(econ)
    gen, adv, runs = _check_start(start, econ)
    steps = check_int("steps", steps, minimum=1)
    lr_g = check_real("lr_generator", lr_generator, minimum=0.0, strict_min=True)
    lr_a = check_real("lr_adversary", lr_adversary, minimum=0.0, strict_min=True)
    decay_adversary = check_bool("decay_adversary", decay_adversary)
    simultaneous = check_bool("simultaneous", simultaneous)
    weight = 1.0 if check_bool("auctioneer", auctioneer) else 0.0
    tau = check_real("tau", tau, minimum=0.0)
    G = check_int("grid_size", grid_size, minimum=4)
    keep = sorted({check_int("snapshots[i]", k, minimum=0, maximum=steps) for k in snapshots})
    grid = np.linspace(econ.wealth_low, econ.wealth_high, G)
    S, qb = len(econ.endowment), econ.price_bound
    x = _grid_features(econ, grid)
    gen_p = [np.array(gen["price_logit"], float)] + [np.array(a, float) for a in gen["net"]]
    adv_p = [np.array(a, float) for a in adv]
    opt_g, opt_a = _Adam(gen_p), _Adam(adv_p)
    losses, prices, saved = np.zeros((runs, steps, 2)), np.zeros((runs, steps, S)), {}
    as_dict = lambda p: {"price_logit": p[0].copy(), "net": [a.copy() for a in p[1:]]}
    with _one_blas_thread():
        z_a, acts_a = _mlp_forward(adv_p, x)
        z_g, acts_g = _mlp_forward(gen_p[1:], x)
        for k in range(steps):
            if k in keep:
                saved[k] = as_dict(gen_p)
            sched = _cosine(steps, k)
            q = qb / (1.0 + np.exp(-gen_p[0]))
            lo, hi, dhi = _bounds(econ, q, grid)
            side = _adversary_side(econ, z_a.reshape(runs, S, G), q, lo, hi, dhi, grid)
            grads_a, _ = _mlp_backward(adv_p, acts_a, -side["cot"].reshape(runs, -1))
            adv_p = opt_a.step(adv_p, grads_a, lr_a * (sched if decay_adversary else 1.0))
            z_a, acts_a = _mlp_forward(adv_p, x)
            if not simultaneous:     # the generator answers the adversary's new parameters
                side = _adversary_side(econ, z_a.reshape(runs, S, G), q, lo, hi, dhi, grid)
            parts, d_z, d_q, V = _gap_objective(econ, q, z_g.reshape(runs, S, G), side, grid, tau, weight)
            losses[:, k], prices[:, k] = parts, q
            behind = (side["V"] - V).mean((1, 2)) < -0.05      # the generator's own policy is a deviation:
            if behind.any():                                  # restart a lagging adversary from it
                for j in range(len(adv_p)):
                    adv_p[j][behind] = gen_p[j + 1][behind]
                opt_a.reset(behind)
                z_a, acts_a = _mlp_forward(adv_p, x)
            grads_g, _ = _mlp_backward(gen_p[1:], acts_g, d_z.reshape(runs, -1))
            gen_p = opt_g.step(gen_p, [d_q * q * (1 - q / qb)] + grads_g, lr_g * sched)
            z_g, acts_g = _mlp_forward(gen_p[1:], x)
    if steps in keep:
        saved[steps] = as_dict(gen_p)
    return TrainResult(as_dict(gen_p), adv_p, losses, prices, saved)


# ----------------------------------------------------------------------------------------------
# NPM: the neural projection method (first-order conditions and market clearing)


def _npm_loss_and_grad(econ, params, grid):
    """Parts (R, 2) of the NPM loss and the gradient of ``0.5 part0 + 0.5 part1`` in every parameter.

    params = [price logits (R, S), W1, b1, ...]. The backward pass is written out (chain rule through
    the policy at today's and at next period's wealth); tests/test_markov_economies.py checks it
    against finite differences.
    """
    a, net = params[0], params[1:]
    R, S = a.shape
    G, n = grid.size, econ.n_consumers
    P, Rr, e, beta = econ.transition, econ.asset_return, econ.endowment, econ.discount
    lo, hb = _box(econ)
    cmin, half = econ.min_consumption, 0.5 * (econ.wealth_high - econ.wealth_low)
    q = econ.price_bound / (1.0 + np.exp(-a))                                   # (R, S)

    def bounds(state, wealth):         # feasible interval at (state, wealth), per run
        qs = np.take_along_axis(q, state.reshape(R, -1), 1).reshape(state.shape)
        budget = (wealth - cmin) / qs
        return np.minimum(hb, budget), qs, budget

    # the policy network at today's grid states, at next period's states and at the endowments, at once
    N1, N2 = S * G, S * G * S
    st = np.broadcast_to(np.repeat(np.arange(S), G).reshape(S, G), (R, S, G))
    W = np.broadcast_to(grid, (R, S, G))
    hi, qs, bud = bounds(st, W)
    x1 = np.broadcast_to(_grid_features(econ, grid), (R, N1, S + 1))
    x3 = np.broadcast_to(_features(econ, np.arange(S), e), (R, S, S + 1))
    z1 = _mlp_forward(net, x1)[0].reshape(R, S, G)
    sig, dsig = _share(z1)
    th = lo + (hi - lo) * sig
    c = W - qs * th
    wn = e + th[..., None] * Rr                                                   # (R, S, G, T)
    st_n = np.broadcast_to(np.arange(S), wn.shape)
    x_all = np.concatenate([x1, _features(econ, st_n, wn).reshape(R, N2, S + 1), x3], 1)
    z_all, acts = _mlp_forward(net, x_all)
    z_n, z_e = z_all[:, N1:N1 + N2].reshape(wn.shape), z_all[:, N1 + N2:]
    hi_n, q_n, bud_n = bounds(st_n, wn)
    sig_n, dsig_n = _share(z_n)
    th_n = lo + (hi_n - lo) * sig_n
    c_n = wn - q_n * th_n
    PR = P * Rr
    g = qs / c - beta * (PR[None, :, None, :] / c_n).sum(-1)
    y = th - g
    kkt = th - np.clip(y, lo, hi)
    hi_e, q_e, bud_e = bounds(np.broadcast_to(np.arange(S), (R, S)), np.broadcast_to(e, (R, S)))
    sig_e, dsig_e = _share(z_e)
    Z = n * (lo + (hi_e - lo) * sig_e)
    parts = np.stack([(kkt ** 2).mean((1, 2)), (Z ** 2).mean(1)], 1)
    # backward pass of 0.5 parts[:, 0] + 0.5 parts[:, 1], run by run
    d_kkt = kkt / (S * G)
    inside = (y > lo) & (y < hi)
    d_th = d_kkt * (1 - inside)
    d_hi = -d_kkt * (y >= hi)
    d_g = d_kkt * inside
    d_qs = d_g / c
    d_c = -d_g * qs / c ** 2
    d_cn = d_g[..., None] * beta * PR[None, :, None, :] / c_n ** 2
    d_thn = -d_cn * q_n
    d_hin = d_thn * sig_n
    tight = bud_n < hb
    d_wn = d_cn + np.where(tight, d_hin / q_n, 0.0)
    d_q = (np.where(tight, -d_hin * bud_n / q_n, 0.0) - d_cn * th_n).sum((1, 2))
    d_the = n * Z / S
    d_hie = d_the * sig_e
    d_q += np.where(bud_e < hb, -d_hie * bud_e / q_e, 0.0)
    cot_n = (d_thn * (hi_n - lo) * dsig_n).reshape(R, N2)
    cot_e = d_the * (hi_e - lo) * dsig_e
    # the next-state outputs feed back into today's positions through w': backpropagate them first
    _, d_x = _mlp_backward(net, acts, np.concatenate([np.zeros((R, N1)), cot_n, np.zeros((R, S))], 1),
                           want_input=True)
    d_wn += d_x[:, N1:N1 + N2, -1].reshape(wn.shape) / half
    d_th += (d_wn * Rr).sum(-1)
    d_qs += -d_c * th
    d_th += -d_c * qs
    d_hi += d_th * sig
    d_qs += np.where(bud < hb, -d_hi * bud / qs, 0.0)
    d_q += d_qs.sum(2)
    cot1 = (d_th * (hi - lo) * dsig).reshape(R, N1)
    grads, _ = _mlp_backward(net, acts, np.concatenate([cot1, cot_n, cot_e], 1))
    d_a = d_q * q * (1 - q / econ.price_bound)
    return parts, [d_a] + grads


def train_npm(econ: ExchangeEconomy, generator, *, steps=800, lr=3e-2, grid_size=31) -> TrainResult:
    """The neural projection method: minimise first-order-condition and market-clearing residuals.

    One generator (the same price table and policy network as :func:`train_gap`) is trained by Adam
    on ``0.5 mean_x kkt(x)^2 + 0.5 mean_s Z(s, e(s))^2``. The KKT residual of the Euler condition is
    ``theta - clip(theta - g, theta_lo, theta_hi)`` with ``g = q / c - beta sum_s' P R / c'``, the
    marginal cost of a unit of the asset minus its marginal benefit, ``c'`` the policy's own
    consumption next period; it vanishes exactly when the first-order conditions hold (interior) or
    a bound binds in the right direction.

    Parameters
    ----------
    econ : ExchangeEconomy
    generator : dict
        Initial generator from :func:`init_generator` (its runs are trained side by side).
    steps : int, default 800
    lr : float > 0, default 3e-2
        Adam step size, cosine-decayed to 1% over ``steps`` (the best of 3e-3, 1e-2 and 3e-2 in our
        pilot runs at 800 steps).
    grid_size : int >= 4, default 31

    Returns
    -------
    TrainResult
        ``adversary`` is ``None``; ``loss[..., 0]`` and ``loss[..., 1]`` are the two mean squares;
        ``snapshots`` holds the final generator under ``steps``.

    Raises
    ------
    ValueError
        On a malformed generator or a non-positive size or step size.

    Notes
    -----
    The paper's NPM loss adds a Bellman error of Monte Carlo value estimates; with exact values that
    term is identically zero, so it is dropped.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> gen, _ = init_generator(econ, width=4, rng=np.random.default_rng(0))
    >>> res = train_npm(econ, gen, steps=3, grid_size=6)
    >>> res.loss.shape, res.prices.shape
    ((1, 3, 2), (1, 3, 2))
    """
    _check_generator(generator, _check_econ(econ))
    steps = check_int("steps", steps, minimum=1)
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    G = check_int("grid_size", grid_size, minimum=4)
    grid = np.linspace(econ.wealth_low, econ.wealth_high, G)
    params = [np.array(generator["price_logit"], float)] + [np.array(a, float) for a in generator["net"]]
    runs, S = params[0].shape
    opt = _Adam(params)
    losses, prices = np.zeros((runs, steps, 2)), np.zeros((runs, steps, S))
    with _one_blas_thread():
        for k in range(steps):
            prices[:, k] = _prices(econ, params[0])
            losses[:, k], grads = _npm_loss_and_grad(econ, params, grid)
            params = opt.step(params, grads, lr * _cosine(steps, k))
    final = {"price_logit": params[0], "net": params[1:]}
    return TrainResult(final, None, losses, prices, {steps: final})


def certify_runs(generator, econ: ExchangeEconomy, *, grid_size=361):
    """Certify every run of a trained generator with the independent DP of :mod:`paperlib.economics.exchange_dp`.

    Parameters
    ----------
    generator : dict
        Generator parameters with a leading runs axis (``TrainResult.generator`` or a snapshot).
    econ : ExchangeEconomy
    grid_size : int >= 3, default 361
        Wealth nodes of the certificate's grid (the generator is evaluated there).

    Returns
    -------
    prices : ndarray, shape (runs, S)
    certificates : list of :class:`paperlib.economics.exchange_dp.Certificate`

    Raises
    ------
    ValueError
        On a malformed generator or a bad ``grid_size``.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> gen, _ = init_generator(econ, width=4, runs=2, rng=np.random.default_rng(0))
    >>> q, certs = certify_runs(gen, econ, grid_size=61)
    >>> q.shape, certs[0].consumer_regret.shape
    ((2, 2), (2, 61))
    """
    from .exchange_dp import certify

    _check_generator(generator, _check_econ(econ))
    grid = np.linspace(econ.wealth_low, econ.wealth_high, check_int("grid_size", grid_size, minimum=3))
    prices, certs = [], []
    for r in range(np.asarray(generator["price_logit"]).shape[0]):
        q, th = generator_policy(select_run(generator, r), econ, grid)
        prices.append(q)
        certs.append(certify(econ, q, th))
    return np.array(prices), certs
