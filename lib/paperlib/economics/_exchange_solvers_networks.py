"""The generator's parametrisation for the exchange-economy solvers: numpy ReLU networks, Adam, policies.

This private module holds what :func:`train_gap` and :func:`train_npm` of
:mod:`paperlib.economics.exchange_solvers` train: small ReLU MLPs stacked over runs with their
backward pass written out, the Adam update of ``optax.scale_by_adam``, the network features and the
capped share that maps a network output into the feasible interval, and the public helpers that
create a generator (:func:`init_generator`), take one run of it (:func:`select_run`) and evaluate its
prices and positions (:func:`generator_policy`). It is re-exported by the public module
:mod:`paperlib.economics.exchange_solvers`, where these functions are documented and should be
imported from.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from ..core._validation import as_array, check_int, check_memory, check_real
from .markov_economies import ExchangeEconomy, _bounds, _check_econ


# ----------------------------------------------------------------------------------------------
# networks: ReLU MLPs stacked over runs, forward and backward in numpy


def _mlp_init(rng, sizes, runs):
    """He-initialised layers ``[W1, b1, ...]``, ``W ~ N(0, 2 / fan_in)`` of shape (runs, in, out)."""
    out = []
    for m, k in zip(sizes[:-1], sizes[1:]):
        out += [rng.standard_normal((runs, m, k)) * np.sqrt(2.0 / m), np.zeros((runs, k))]
    return out


def _mlp_forward(net, x):
    """x (N, in) shared by all runs, or (runs, N, in) -> output (runs, N) and the activations."""
    acts, h = [x], x
    for j in range(0, len(net) - 2, 2):
        h = np.maximum(h @ net[j] + net[j + 1][:, None, :], 0.0)
        acts.append(h)
    return (h @ net[-2] + net[-1][:, None, :])[..., 0], acts


def _mlp_backward(net, acts, cot, want_input=False):
    """Gradients of ``sum(cot * output)`` for every layer (and the input, if asked)."""
    grads = [None] * len(net)
    d = cot[..., None]                                            # (runs, N, out)
    for j in range(len(net) - 2, -1, -2):
        h = acts[j // 2]
        grads[j] = (h.T if h.ndim == 2 else h.transpose(0, 2, 1)) @ d
        grads[j + 1] = d.sum(1)
        if j > 0 or want_input:
            d = d @ net[j].transpose(0, 2, 1)
            if j > 0:
                d = d * (acts[j // 2] > 0)
    return grads, (d if want_input else None)


def _one_blas_thread():
    """The matrices are tiny (93 x 93): one BLAS thread is fastest and immune to CPU contention."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _net_out(net, x):
    return _mlp_forward(net, x)[0]


class _Adam:
    """``optax.scale_by_adam`` (b1 0.9, b2 0.999, eps 1e-8) on a list of arrays with a runs axis."""

    def __init__(self, params):
        self.mu = [np.zeros_like(p) for p in params]
        self.nu = [np.zeros_like(p) for p in params]
        self.count = 0

    def step(self, params, grads, lr):
        """Return ``p - lr * adam(g)``; ``lr`` a scalar or a (runs,) array."""
        self.count += 1
        c1, c2 = 1 - 0.9 ** self.count, 1 - 0.999 ** self.count
        lr = np.asarray(lr, float)
        new = []
        for j, (p, g) in enumerate(zip(params, grads)):
            self.mu[j] = 0.9 * self.mu[j] + 0.1 * g
            self.nu[j] = 0.999 * self.nu[j] + 0.001 * g * g
            u = (self.mu[j] / c1) / (np.sqrt(self.nu[j] / c2) + 1e-8)
            new.append(p - lr.reshape(lr.shape + (1,) * (p.ndim - lr.ndim)) * u)
        return new

    def reset(self, which):
        """Zero the moments of the runs in ``which`` (the step count is shared, as in optax)."""
        for m in (self.mu, self.nu):
            for j in range(len(m)):
                m[j][which] = 0.0


def _features(econ, state, wealth):
    """Network input: one-hot world state and standardised wealth; state, wealth (...) -> (..., S + 1)."""
    S = len(econ.endowment)
    mid, half = 0.5 * (econ.wealth_low + econ.wealth_high), 0.5 * (econ.wealth_high - econ.wealth_low)
    onehot = np.eye(S)[state]
    return np.concatenate([onehot, ((wealth - mid) / half)[..., None]], -1)


def _grid_features(econ, grid):
    S = len(econ.endowment)
    return _features(econ, np.repeat(np.arange(S), grid.size), np.tile(grid, S))   # (S G, S + 1)


_LOGIT_CAP = 6.0


def _share(out):
    """Share of the feasible interval, sigmoid(6 tanh(out / 6)) in [0.0025, 0.9975], and its slope.

    The cap keeps every policy strictly inside its feasible interval, so no gradient vanishes.
    """
    t = np.tanh(out / _LOGIT_CAP)
    sig = 1.0 / (1.0 + np.exp(-_LOGIT_CAP * t))
    return sig, sig * (1 - sig) * (1 - t ** 2)


def _prices(econ, logit):
    return econ.price_bound / (1.0 + np.exp(-logit))


# ----------------------------------------------------------------------------------------------
# public helpers


def _check_rng(rng):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def _check_generator(generator, econ, batched=True):
    if not isinstance(generator, dict) or set(generator) != {"price_logit", "net"}:
        raise ValueError("generator must be a dict with keys 'price_logit' and 'net' (from init_generator)")
    logit = np.asarray(generator["price_logit"])
    S = len(econ.endowment)
    ok = logit.ndim == (2 if batched else 1) and logit.shape[-1] == S
    net = generator["net"]
    if not ok or not isinstance(net, list) or len(net) < 4 or len(net) % 2:
        raise ValueError(f"generator must hold price logits of shape {'(runs, S)' if batched else '(S,)'}"
                         f" with S = {S} and a list of layers, got {logit.shape}")
    if not (np.all(np.isfinite(logit)) and all(np.all(np.isfinite(a)) for a in net)):
        raise ValueError("generator must be finite")
    if net[0].shape[-2] != S + 1:
        raise ValueError(f"generator's network must take {S + 1} inputs, got {net[0].shape[-2]}")
    return generator


def init_generator(econ: ExchangeEconomy, *, width=16, runs=1, price_spread=1.0, rng):
    """Random generators and adversaries: price logits ``~ U(-a, a)`` and He-initialised ReLU networks.

    Prices are ``q = q_bar sigmoid(logit)``. Each network maps (one-hot world state, standardised
    wealth) through two hidden layers of ``width`` ReLU units to one output ``z``, and the position is
    ``theta = theta_lo + sigmoid(6 tanh(z / 6)) (theta_hi(s, w; q) - theta_lo)``, feasible by
    construction.

    Parameters
    ----------
    econ : ExchangeEconomy
    width : int >= 1, default 16
    runs : int >= 1, default 1
        Independent initialisations (leading axis of every array).
    price_spread : float > 0, default 1.0
        ``a``: initial prices are ``q_bar sigmoid(U(-a, a))``, i.e. in ``[0.54, 1.46]`` for
        ``q_bar = 2`` and ``a = 1``.
    rng : numpy.random.Generator
        Keyword-only.

    Returns
    -------
    generator : dict
        ``{"price_logit": (runs, S), "net": [W1 (runs, S+1, width), b1, W2, b2, W3, b3]}``.
    adversary : list of ndarray
        A second network of the same shape (the consumers' best response).

    Raises
    ------
    ValueError
        If ``width`` or ``runs`` is not a positive integer, ``price_spread`` is not positive,
        ``rng`` is not a numpy Generator, or the parameters of ``runs`` networks would exceed
        ``paperlib.core._validation.memory_limit`` (8 GiB by default).

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> gen, adv = init_generator(econ, width=4, runs=2, rng=np.random.default_rng(0))
    >>> gen["price_logit"].shape, [W.shape for W in adv[::2]]
    ((2, 2), [(2, 3, 4), (2, 4, 4), (2, 4, 1)])
    """
    _check_econ(econ)
    width, runs = check_int("width", width, minimum=1), check_int("runs", runs, minimum=1)
    spread = check_real("price_spread", price_spread, minimum=0.0, strict_min=True)
    _check_rng(rng)
    S = len(econ.endowment)
    sizes = (S + 1, width, width, 1)
    check_memory("runs", 2 * 8 * runs * (S + sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))),
                 what=f"float64 parameters of two batches of {runs} networks of width {width}")
    gen = {"price_logit": rng.uniform(-spread, spread, (runs, S)), "net": _mlp_init(rng, sizes, runs)}
    return gen, _mlp_init(rng, sizes, runs)


def select_run(generator, run):
    """One run of a batched generator (every array indexed at ``run`` on its leading axis).

    Parameters
    ----------
    generator : dict
        Generator with a leading runs axis (:func:`init_generator`, ``TrainResult.generator``).
    run : int
        In ``[0, runs)``.

    Returns
    -------
    dict
        The same structure without the runs axis.

    Raises
    ------
    ValueError
        If ``generator`` is not a generator dict or ``run`` is out of range.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> gen, _ = init_generator(econ, width=4, runs=2, rng=np.random.default_rng(0))
    >>> select_run(gen, 1)["price_logit"].shape
    (2,)
    """
    if not isinstance(generator, dict) or set(generator) != {"price_logit", "net"}:
        raise ValueError("generator must be a dict with keys 'price_logit' and 'net' (from init_generator)")
    runs = np.asarray(generator["price_logit"]).shape[0]
    r = check_int("run", run, minimum=0, maximum=runs - 1)
    return {"price_logit": np.asarray(generator["price_logit"])[r],
            "net": [np.asarray(a)[r] for a in generator["net"]]}


def generator_policy(generator, econ: ExchangeEconomy, wealth):
    """Prices and positions of a generator (one run, see :func:`select_run`), at any wealth.

    Parameters
    ----------
    generator : dict
        ``{"price_logit": (S,), "net": layers}``.
    econ : ExchangeEconomy
    wealth : array_like, shape (G,)
        Wealth levels inside the window; the same in every world state.

    Returns
    -------
    prices : ndarray, shape (S,)
    portfolio : ndarray, shape (S, G)

    Raises
    ------
    ValueError
        On a wrong shape or a wealth outside the window.

    Examples
    --------
    >>> from paperlib.economics.markov_economies import make_economy
    >>> econ = make_economy([[0.6, 0.4], [0.3, 0.7]], [1.0, 1.1], [1.0, 0.9], 0.9)
    >>> gen, _ = init_generator(econ, width=4, rng=np.random.default_rng(0))
    >>> q, th = generator_policy(select_run(gen, 0), econ, [0.5, 1.0, 1.5])
    >>> q.shape, th.shape
    ((2,), (2, 3))
    """
    _check_generator(generator, _check_econ(econ), batched=False)
    w = as_array("wealth", wealth, ndim=1, min_size=1)
    if np.any(w < econ.wealth_low) or np.any(w > econ.wealth_high):
        raise ValueError(f"wealth must lie in [{econ.wealth_low}, {econ.wealth_high}]")
    S = len(econ.endowment)
    q = _prices(econ, np.asarray(generator["price_logit"], float))
    net = [np.asarray(a, float)[None] for a in generator["net"]]
    z = _net_out(net, _grid_features(econ, w))[0].reshape(S, w.size)
    lo, hi, _ = _bounds(econ, q, w)
    return q, lo + (hi - lo) * _share(z)[0]
