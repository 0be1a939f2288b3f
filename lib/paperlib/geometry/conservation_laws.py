"""Conservation laws of ReLU networks on DAGs: the balances, and training that keeps or breaks them.

Rescaling a hidden neuron of a positively homogeneous network (in-weights times ``a > 0``,
out-weights over ``a``) leaves its function unchanged, so gradient flow conserves the **balances**
``c = B theta**2`` (squared in-weights minus squared out-weights of each hidden neuron), with ``B`` the
hidden incidence matrix. Networks are the :class:`paperlib.geometry.relu_dag.DagNet` of :mod:`paperlib.geometry.relu_dag`.

* :func:`incidence_hidden` and :func:`balances` give ``B`` and ``c``.
* :func:`gradient_flow` integrates ``theta' = -grad L`` with scipy's error-controlled Runge-Kutta and
  returns the drift of ``c`` that the solver's tolerance allows; :func:`train_discrete` runs gradient
  descent, Adam or L1-proximal gradient descent inside ``lax.scan``, and :func:`discrete_budget` gives
  the drift that a discrete step may cause without breaking the law.

References
----------
.. [#conservation-laws-1] M. Nurisso, P. Leroy, G. Petri, F. Vaccarino, "Topology and Geometry of the Learning Space of
   ReLU Networks: Connectivity and Singularities", ICLR 2026, arXiv:2602.00693.
.. [#conservation-laws-2] S. S. Du, W. Hu, J. D. Lee, "Algorithmic regularization in learning deep homogeneous models:
   layers are automatically balanced", NeurIPS 2018.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy.integrate import solve_ivp

from ..core._validation import as_array, check_int, check_option, check_real
from .relu_dag import ACTIVATIONS, LOSSES, _check_data, _check_net, _check_theta, _loss, _vg_fn

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "FlowResult",
    "incidence_hidden",
    "balances",
    "discrete_budget",
    "gradient_flow",
    "train_discrete",
]


class FlowResult(NamedTuple):
    """Output of :func:`gradient_flow`: the solver's accepted steps and the tolerance budget.

    Attributes
    ----------
    t : ndarray, shape (S,)
        Times of the accepted steps (``t[0] = 0``).
    theta : ndarray, shape (S, E)
        Weights at those times.
    loss : ndarray, shape (S,)
        Training loss at those times.
    budget : ndarray, shape (S, H)
        Largest drift of each balance ``c_v`` from ``c_v(0)`` that the solver's accepted local errors
        allow up to each time (see :func:`gradient_flow`, Notes).
    nfev : int
        Right-hand-side evaluations.
    """

    t: np.ndarray
    theta: np.ndarray
    loss: np.ndarray
    budget: np.ndarray
    nfev: int



def incidence_hidden(net) -> np.ndarray:
    """Hidden-vertex incidence matrix ``B`` (H, E): +1 where edge ``e`` enters ``v``, -1 where it leaves.

    Parameters
    ----------
    net : DagNet

    Returns
    -------
    ndarray of int, shape (H, E)

    Raises
    ------
    ValueError
        If ``net`` is not a :class:`DagNet`.

    Examples
    --------
    >>> import networkx as nx
    >>> from paperlib.geometry.relu_dag import dag_network
    >>> incidence_hidden(dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))).tolist()
    [[1, 1, -1]]
    """
    net = _check_net(net)
    B = np.zeros((net.n_hidden, net.n_edges), dtype=int)
    for k, (u, v) in enumerate(zip(net.src, net.dst)):
        if net.n_in <= v < net.n_in + net.n_hidden:
            B[v - net.n_in, k] += 1
        if net.n_in <= u < net.n_in + net.n_hidden:
            B[u - net.n_in, k] -= 1
    return B


def balances(net, theta) -> np.ndarray:
    """Balance of each hidden neuron, ``c = B theta**2``: squared in-weights minus squared out-weights.

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,) or (T, E)
        One weight vector or a trajectory.

    Returns
    -------
    ndarray, shape (H,) or (T, H)

    Raises
    ------
    ValueError
        On a wrong shape or a non-finite entry.

    Examples
    --------
    >>> import networkx as nx
    >>> from paperlib.geometry.relu_dag import dag_network
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> balances(net, [1.0, 2.0, 3.0]).tolist()          # 1 + 4 - 9
    [-4.0]
    """
    net = _check_net(net)
    theta = as_array("theta", theta, ndim=(1, 2))
    if theta.shape[-1] != net.n_edges:
        raise ValueError(f"theta must have shape (..., {net.n_edges}), got {theta.shape}")
    return theta ** 2 @ incidence_hidden(net).T


class _Stalled(Exception):
    """Raised inside the right-hand side when the evaluation cap is reached."""


def discrete_budget(net, thetas) -> np.ndarray:
    """Second-order drift allowance of a discrete run: ``sum_{j<k} |B| (theta_{j+1} - theta_j)**2``.

    For any update ``theta_{k+1} = theta_k + d_k``, ``c_{k+1} - c_k = 2 B (theta_k * d_k) + B d_k**2``.
    Gradient descent on a positively homogeneous network has ``d_k = -lr grad L`` and
    ``B (theta * grad L) = 0``, so its balances move by exactly ``B d_k**2``, at most this allowance
    (and by ``lr**2 B grad**2``: the identity of our derivation). An update not along the gradient (Adam)
    or a non-homogeneous activation adds the first-order term, which the allowance does not cover.

    Parameters
    ----------
    net : DagNet
    thetas : array, shape (K + 1, E)
        Consecutive iterates, every step kept.

    Returns
    -------
    ndarray, shape (K + 1, H)
        Cumulative allowance per hidden neuron, starting at 0.

    Raises
    ------
    ValueError
        On a wrong shape or a non-finite entry.

    Examples
    --------
    >>> import networkx as nx
    >>> from paperlib.geometry.relu_dag import dag_network
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> discrete_budget(net, [[1.0, 1.0, 1.0], [1.1, 1.0, 0.8]]).round(3).tolist()
    [[0.0], [0.05]]
    """
    net = _check_net(net)
    thetas = as_array("thetas", thetas, ndim=2, shape=(None, net.n_edges))
    steps = np.diff(thetas, axis=0) ** 2 @ np.abs(incidence_hidden(net)).T
    return np.vstack([np.zeros(net.n_hidden), np.cumsum(steps, axis=0)])


# --- training -----------------------------------------------------------------------------------
def gradient_flow(net, theta0, X, Y, *, t_max: float, activation: str = "relu", loss: str = "mse",
                  weight_decay: float = 0.0, rtol: float = 1e-5, atol: float = 1e-7,
                  method: str = "RK45", max_nfev: int = 100_000) -> FlowResult:
    """Integrate the gradient flow ``theta' = -grad L(theta) - weight_decay * theta`` with scipy.

    The solver is ``scipy.integrate.solve_ivp``, an embedded Runge-Kutta pair with step-size
    control (Dormand-Prince 5(4) by default); every accepted step is returned.

    Parameters
    ----------
    net : DagNet
    theta0 : array, shape (E,)
    X : array, shape (n, n_in)
    Y : array, shape (n, n_out)
    t_max : float
        Final time (> 0), in units of learning rate times steps.
    activation : {"relu", "leaky_relu", "tanh", "softplus"}, default "relu"
    loss : {"mse", "bce"}, default "mse"
    weight_decay : float, default 0.0
        ``lambda >= 0``; then ``c(t) = c(0) exp(-2 lambda t)`` for a homogeneous activation.
    rtol, atol : float, default 1e-5, 1e-7
        The solver's relative and absolute tolerances (> 0).
    method : {"RK23", "RK45", "DOP853"}, default "RK45"
    max_nfev : int, default 100000
        Give up (``ValueError``) after this many gradient evaluations (see Notes).

    Returns
    -------
    FlowResult

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry, a bad option, if the solver fails or if it needs more
        than ``max_nfev`` evaluations.

    Notes
    -----
    The budget comes from the solver's error control. A step is accepted when the RMS over the E
    weights of ``err_e / (atol + rtol max(|theta_e|, |theta_e'|))`` is at most 1, so every local error
    obeys ``|d_e| <= sqrt(E) (atol + rtol m_e)`` with ``m_e`` that maximum. The exact flow started
    anywhere keeps ``c`` (multiplies it by ``exp(-2 lambda h)`` with weight decay), so the numerical
    drift of ``c_v`` is the sum over steps of what the local errors do to it, at most
    ``sum_{e at v} 2 m_e d_e + d_e**2`` per step. This uses the solver's error *estimate* as the local
    error; near a ReLU kink the estimate is an estimate, not a guarantee.

    With finitely many samples the ReLU flow is discontinuous across the surfaces where a sample's
    pre-activation vanishes, and it can slide along such a surface (a Filippov sliding mode). Error
    control then forces steps of the order of the tolerance, so tight tolerances can stall: hence
    ``max_nfev``. The jump is largest for a neuron with a single input edge from an input vertex,
    whose whole activation pattern flips with the sign of that weight.

    Examples
    --------
    >>> import numpy as np, networkx as nx
    >>> from paperlib.geometry.relu_dag import dag_network
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> X = np.random.default_rng(0).standard_normal((32, 2))
    >>> res = gradient_flow(net, [1.0, 0.5, -2.0], X, np.zeros((32, 1)), t_max=1.0)
    >>> drift = np.abs(balances(net, res.theta) - balances(net, res.theta[0])).max()
    >>> bool(drift <= res.budget[-1].max()), bool(res.loss[-1] < res.loss[0])
    (True, True)
    """
    net = _check_net(net)
    theta0 = _check_theta(net, theta0, "theta0")
    t_max = check_real("t_max", t_max, minimum=0.0, strict_min=True)
    activation = check_option("activation", activation, ACTIVATIONS)
    loss = check_option("loss", loss, LOSSES)
    X, Y = _check_data(net, X, Y, loss)
    lam = check_real("weight_decay", weight_decay, minimum=0.0)
    rtol = check_real("rtol", rtol, minimum=0.0, strict_min=True)
    atol = check_real("atol", atol, minimum=0.0, strict_min=True)
    method = check_option("method", method, ("RK23", "RK45", "DOP853"))
    max_nfev = check_int("max_nfev", max_nfev, minimum=1)
    with jax.enable_x64(True):
        Xj, Yj = jnp.asarray(X), jnp.asarray(Y)
        vg = _vg_fn(net, activation, loss)
        count = [0]

        def rhs(t, th):
            count[0] += 1
            if count[0] > max_nfev:
                raise _Stalled(t)
            return -np.asarray(vg(th, Xj, Yj)[1]) - lam * th

        try:
            sol = solve_ivp(rhs, (0.0, t_max), theta0, method=method, rtol=rtol, atol=atol)
        except _Stalled as stall:
            raise ValueError(f"the solver needed more than max_nfev={max_nfev} evaluations "
                             f"(stalled at t = {stall.args[0]:.4g})") from None
        if sol.status != 0:
            raise ValueError(f"the solver failed: {sol.message}")
        theta = sol.y.T
        losses = np.array([float(vg(th, Xj, Yj)[0]) for th in theta])
    m = np.maximum(np.abs(theta[:-1]), np.abs(theta[1:]))
    d = np.sqrt(net.n_edges) * (atol + rtol * m)
    per_step = (2 * m * d + d ** 2) @ np.abs(incidence_hidden(net)).T
    budget = np.vstack([np.zeros(net.n_hidden), np.cumsum(per_step, axis=0)])
    return FlowResult(sol.t, theta, losses, budget, int(sol.nfev))


@partial(jax.jit, static_argnames=("net", "activation", "loss", "optimizer", "steps", "every"))
def _train(net, theta0, X, Y, lr, l1, lam, activation, loss, optimizer, steps, every):
    opt = optax.adam(lr) if optimizer == "adam" else optax.sgd(lr)

    def step(carry, _):
        th, state = carry
        value, g = jax.value_and_grad(_loss, argnums=1)(net, th, X, Y, activation, loss)
        upd, state = opt.update(g + lam * th, state, th)
        th = optax.apply_updates(th, upd)
        th = jnp.sign(th) * jnp.maximum(jnp.abs(th) - lr * l1, 0.0)     # prox of lr * l1 * ||.||_1
        return (th, state), (th, value)

    def block(carry, _):
        carry, (ths, values) = jax.lax.scan(step, carry, None, length=every)
        return carry, (ths[-1], values)

    def one(th0):
        _, (ths, values) = jax.lax.scan(block, (th0, opt.init(th0)), None, length=steps // every)
        return jnp.concatenate([th0[None], ths]), values.reshape(-1)

    return jax.vmap(one)(theta0)


def train_discrete(net, theta0, X, Y, *, lr: float, steps: int, optimizer: str = "gd", l1: float = 0.0,
                   weight_decay: float = 0.0, activation: str = "relu", loss: str = "mse", every: int = 1):
    """Gradient descent, Adam or L1-proximal gradient descent, all steps inside ``lax.scan``.

    ``gd``: ``theta <- S(theta - lr (grad L + weight_decay theta), lr l1)`` with the soft threshold
    ``S(x, a) = sign(x) max(|x| - a, 0)`` (plain GD when ``l1 = 0``); ``adam``: optax's Adam on the
    same gradient, followed by the same threshold. Several initialisations train at once (``vmap``).

    Parameters
    ----------
    net : DagNet
    theta0 : array, shape (E,) or (R, E)
        One initialisation or R of them.
    X : array, shape (n, n_in)
    Y : array, shape (n, n_out)
    lr : float
        Learning rate (> 0).
    steps : int
        Number of steps (a positive multiple of ``every``).
    optimizer : {"gd", "adam"}, default "gd"
    l1 : float, default 0.0
        L1 strength (>= 0); the proximal step makes exact zeros.
    weight_decay : float, default 0.0
    activation : {"relu", "leaky_relu", "tanh", "softplus"}, default "relu"
    loss : {"mse", "bce"}, default "mse"
    every : int, default 1
        Keep the weights every ``every`` steps.

    Returns
    -------
    thetas : ndarray, shape (steps // every + 1, E) or (R, steps // every + 1, E)
        Weights at steps ``0, every, 2 every, ...``.
    losses : ndarray, shape (steps,) or (R, steps)
        Loss before each step (without the regulariser).

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry or a bad option.

    Examples
    --------
    >>> import numpy as np, networkx as nx
    >>> from paperlib.geometry.relu_dag import dag_network
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> X = np.random.default_rng(0).standard_normal((32, 2))
    >>> thetas, losses = train_discrete(net, [1.0, 0.5, -2.0], X, np.zeros((32, 1)), lr=0.1, steps=20)
    >>> thetas.shape, bool(losses[-1] < losses[0])
    ((21, 3), True)
    """
    net = _check_net(net)
    theta0 = as_array("theta0", theta0, ndim=(1, 2))
    if theta0.shape[-1] != net.n_edges:
        raise ValueError(f"theta0 must have shape (..., {net.n_edges}), got {theta0.shape}")
    lr = check_real("lr", lr, minimum=0.0, strict_min=True)
    steps = check_int("steps", steps, minimum=1)
    optimizer = check_option("optimizer", optimizer, ("gd", "adam"))
    l1 = check_real("l1", l1, minimum=0.0)
    lam = check_real("weight_decay", weight_decay, minimum=0.0)
    activation = check_option("activation", activation, ACTIVATIONS)
    loss = check_option("loss", loss, LOSSES)
    every = check_int("every", every, minimum=1)
    if steps % every:
        raise ValueError(f"steps must be a multiple of every={every}, got {steps}")
    X, Y = _check_data(net, X, Y, loss)
    with jax.enable_x64(True):
        thetas, losses = _train(net, jnp.asarray(np.atleast_2d(theta0)), jnp.asarray(X), jnp.asarray(Y),
                                lr, l1, lam, activation, loss, optimizer, steps, every)
        thetas, losses = np.asarray(thetas), np.asarray(losses)
    return (thetas[0], losses[0]) if theta0.ndim == 1 else (thetas, losses)


_PROBE_EXEMPTIONS = {}
