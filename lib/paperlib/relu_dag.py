"""ReLU networks on directed acyclic graphs: the network, its balances and its training.

This module and :mod:`paperlib.invariant_sets` carry the chapter on Nurisso, Leroy, Petri &
Vaccarino (ICLR 2026), *Topology and Geometry of the Learning Space of ReLU Networks: Connectivity
and Singularities*. A network is a ``networkx.DiGraph``: vertices without in-edges are inputs,
vertices without out-edges are linear outputs, every other vertex is a hidden neuron
``z_v = sigma(sum_{u->v} theta_uv z_u)``, and every edge carries one scalar weight (no biases; a bias
is an edge from a constant input).

* :func:`dag_network` orders a graph into a :class:`DagNet`; :func:`layered_dag` and
  :func:`random_dag` make graphs; :func:`forward` and :func:`loss_gradient` evaluate it (JAX, float64).
* :func:`incidence_hidden` and :func:`balances` give the conserved quantities ``c = B theta**2``.
* :func:`gradient_flow` integrates ``theta' = -grad L`` with scipy's error-controlled Runge-Kutta and
  returns the drift of ``c`` that the solver's tolerance allows; :func:`train_discrete` runs gradient
  descent, Adam or L1-proximal gradient descent inside ``lax.scan``, and :func:`discrete_budget` gives
  the drift that a discrete step may cause without breaking the law.

References
----------
.. [1] M. Nurisso, P. Leroy, G. Petri, F. Vaccarino, "Topology and Geometry of the Learning Space of
   ReLU Networks: Connectivity and Singularities", ICLR 2026, arXiv:2602.00693.
.. [2] S. S. Du, W. Hu, J. D. Lee, "Algorithmic regularization in learning deep homogeneous models:
   layers are automatically balanced", NeurIPS 2018.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import optax
from scipy.integrate import solve_ivp

from ._validation import as_array, check_int, check_option, check_probability, check_real

__all__ = [
    "DagNet",
    "FlowResult",
    "dag_network",
    "layered_dag",
    "random_dag",
    "forward",
    "loss_gradient",
    "incidence_hidden",
    "balances",
    "gradient_flow",
    "discrete_budget",
    "train_discrete",
]

ACTIVATIONS = ("relu", "leaky_relu", "tanh", "softplus")
LOSSES = ("mse", "bce")


class DagNet(NamedTuple):
    """A DAG network in internal order: inputs, hidden neurons (topological), outputs.

    Attributes
    ----------
    nodes : tuple
        Vertex labels of the graph in internal order; ``nodes[i]`` is vertex ``i``. Hidden vertices
        are sorted by depth (longest path from an input), then by the graph's node order.
    n_in, n_hidden, n_out : int
        Numbers of input, hidden and output vertices.
    src, dst : tuple of int, length E
        Internal indices of the tail and head of each edge; edge ``k`` carries ``theta[k]``. Edges
        are sorted by ``(src, dst)``.
    levels : tuple of tuple of int
        Hidden vertices grouped by depth; each level is a contiguous run of indices, computed at once.
    """

    nodes: tuple
    n_in: int
    n_hidden: int
    n_out: int
    src: tuple
    dst: tuple
    levels: tuple

    @property
    def n_edges(self) -> int:
        return len(self.src)

    def edge_index(self, u, v) -> int:
        """Index in ``theta`` of the edge ``u -> v`` (graph labels)."""
        i, j = self.nodes.index(u), self.nodes.index(v)
        return list(zip(self.src, self.dst)).index((i, j))


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


# --- graphs -------------------------------------------------------------------------------------
def _check_graph(graph) -> nx.DiGraph:
    if not isinstance(graph, nx.DiGraph) or graph.is_multigraph():
        raise ValueError(f"graph must be a networkx.DiGraph, got {type(graph).__name__}")
    if graph.number_of_edges() == 0 or not nx.is_directed_acyclic_graph(graph):
        raise ValueError("graph must be a directed acyclic graph with at least one edge")
    lonely = [v for v in graph if graph.degree(v) == 0]
    if lonely:
        raise ValueError(f"graph has isolated vertices {lonely[:3]}: each vertex needs an edge")
    return graph


def dag_network(graph) -> DagNet:
    """Order a DAG into a :class:`DagNet`: sources are inputs, sinks are outputs, the rest hidden.

    Every hidden vertex has an in-edge and an out-edge, so it lies on a path from an input to an
    output (walk back to a source, forward to a sink): the paper's standing assumption.

    Parameters
    ----------
    graph : networkx.DiGraph
        Acyclic, at least one edge, no isolated vertex. Inputs and outputs keep the graph's node order;
        hidden vertices are sorted by depth, ties broken by that order.

    Returns
    -------
    DagNet

    Raises
    ------
    ValueError
        If ``graph`` is not a ``DiGraph``, has a cycle, no edge or an isolated vertex.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([("x1", "h"), ("x2", "h"), ("h", "y")]))
    >>> net.nodes, net.n_hidden, net.n_edges
    (('x1', 'x2', 'h', 'y'), 1, 3)
    """
    graph = _check_graph(graph)
    rank = {v: i for i, v in enumerate(graph.nodes)}
    ins = [v for v in graph if graph.in_degree(v) == 0]
    outs = [v for v in graph if graph.out_degree(v) == 0]
    depth = {}
    for v in nx.topological_sort(graph):
        depth[v] = max((depth[u] + 1 for u in graph.predecessors(v)), default=0)
    hid = sorted((v for v in graph if graph.in_degree(v) and graph.out_degree(v)),
                 key=lambda v: (depth[v], rank[v]))      # by depth: a topological order
    order = ins + hid + outs
    idx = {v: i for i, v in enumerate(order)}
    edges = sorted((idx[u], idx[v]) for u, v in graph.edges)
    levels = tuple(tuple(idx[v] for v in hid if depth[v] == d) for d in sorted({depth[v] for v in hid}))
    return DagNet(tuple(order), len(ins), len(hid), len(outs),
                  tuple(e[0] for e in edges), tuple(e[1] for e in edges), levels)


def layered_dag(sizes) -> nx.DiGraph:
    """The graph of a fully connected layered network (an MLP without biases).

    Parameters
    ----------
    sizes : sequence of int
        Layer widths, input first (at least two, each positive). Vertex ``(l, i)`` is unit ``i`` of
        layer ``l``.

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    ValueError
        If fewer than two sizes are given or a size is not a positive integer.

    Examples
    --------
    >>> layered_dag([2, 3, 1]).number_of_edges()
    9
    """
    if isinstance(sizes, (str, bytes)) or not hasattr(sizes, "__iter__"):
        raise ValueError(f"sizes must be a sequence of positive integers, got {sizes!r}")
    sizes = [check_int("sizes[i]", s, minimum=1) for s in sizes]
    if len(sizes) < 2:
        raise ValueError(f"sizes must list at least an input and an output size, got {sizes}")
    graph = nx.DiGraph()
    graph.add_nodes_from((l, i) for l, n in enumerate(sizes) for i in range(n))
    graph.add_edges_from(((l, i), (l + 1, j)) for l in range(len(sizes) - 1)
                         for i in range(sizes[l]) for j in range(sizes[l + 1]))
    return graph


def random_dag(n_in: int, n_hidden: int, n_out: int, p: float, *, rng) -> nx.DiGraph:
    """A random DAG on vertices ``0..n-1`` (inputs first, outputs last), skip edges allowed.

    Each forward pair ``i < j`` (not input-input, not output-output) is an edge with probability
    ``p``; then every hidden vertex without an in-edge (out-edge) gets one from a uniformly drawn earlier
    (to a later) vertex, every input without an out-edge gets one, and every output without an in-edge.

    Parameters
    ----------
    n_in, n_hidden, n_out : int
        Vertex counts (``n_in, n_out >= 1``, ``n_hidden >= 0``).
    p : float
        Edge probability in ``[0, 1]``.
    rng : numpy.random.Generator
        Keyword-only.

    Returns
    -------
    networkx.DiGraph

    Raises
    ------
    ValueError
        On a bad count, a ``p`` outside ``[0, 1]`` or an ``rng`` that is not a Generator.

    Examples
    --------
    >>> import numpy as np
    >>> g = random_dag(2, 4, 1, 0.5, rng=np.random.default_rng(0))
    >>> dag_network(g).n_hidden
    4
    """
    n_in = check_int("n_in", n_in, minimum=1)
    n_hidden = check_int("n_hidden", n_hidden, minimum=0)
    n_out = check_int("n_out", n_out, minimum=1)
    p = check_probability("p", p)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    n, first_out = n_in + n_hidden + n_out, n_in + n_hidden
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    for i in range(first_out):
        for j in range(max(i + 1, n_in), n):
            if rng.random() < p:
                graph.add_edge(i, j)
    for v in range(n):
        if v >= n_in and graph.in_degree(v) == 0:
            graph.add_edge(int(rng.integers(0, min(v, first_out))), v)
        if v < first_out and graph.out_degree(v) == 0:
            graph.add_edge(v, int(rng.integers(max(v + 1, n_in), n)))
    return graph


def _check_net(net) -> DagNet:
    if not isinstance(net, DagNet):
        raise ValueError(f"net must be a DagNet (from dag_network), got {type(net).__name__}")
    return net


def _check_theta(net, theta, name="theta", ndim=1):
    return as_array(name, theta, ndim=ndim, shape=(None,) * (ndim - 1) + (net.n_edges,))


def _check_balance(net, c):
    return as_array("c", c, ndim=1, shape=(net.n_hidden,))


# --- the network and its loss (JAX, float64) ------------------------------------------------------
def _act(name, x):
    return {"relu": jax.nn.relu, "tanh": jnp.tanh, "softplus": jax.nn.softplus,
            "leaky_relu": lambda z: jax.nn.leaky_relu(z, 0.1)}[name](x)


def _forward(net, theta, X, activation):
    n = len(net.nodes)
    W = jnp.zeros((n, n), theta.dtype).at[np.array(net.src), np.array(net.dst)].set(theta)
    z = X.astype(theta.dtype)
    for level in net.levels:                 # levels are contiguous and follow the computed vertices
        z = jnp.concatenate([z, _act(activation, z @ W[:z.shape[1], level[0]:level[-1] + 1])], axis=1)
    return z @ W[:z.shape[1], n - net.n_out:]


def _loss(net, theta, X, Y, activation, loss):
    f = _forward(net, theta, X, activation)
    if loss == "mse":
        return 0.5 * jnp.mean(jnp.sum((f - Y) ** 2, axis=1))
    return jnp.mean(jnp.logaddexp(0.0, f) - Y * f)            # logistic loss, labels in {0, 1}


@lru_cache(maxsize=64)
def _vg_fn(net, activation, loss):
    """A jitted ``(theta, X, Y) -> (L, grad L)`` for one network, compiled once per (net, options)."""
    return jax.jit(jax.value_and_grad(lambda th, X, Y: _loss(net, th, X, Y, activation, loss)))


@lru_cache(maxsize=64)
def _forward_fn(net, activation):
    """A jitted ``(theta, X) -> outputs`` for one network."""
    return jax.jit(lambda th, X: _forward(net, th, X, activation))


def _check_data(net, X, Y, loss):
    X = as_array("X", X, ndim=2, shape=(None, net.n_in))
    Y = as_array("Y", Y, ndim=2, shape=(X.shape[0], net.n_out))
    if loss == "bce" and (net.n_out != 1 or not np.all((Y == 0) | (Y == 1))):
        raise ValueError("Y must be 0/1 labels of shape (n, 1) for loss='bce'")
    return X, Y


def forward(net, theta, X, *, activation: str = "relu") -> np.ndarray:
    """Outputs of the network: ``(n, n_in) -> (n, n_out)``, in float64.

    Hidden vertex ``v`` computes ``z_v = sigma(sum_{e = u -> v} theta_e z_u)``; outputs are linear.

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,)
        Edge weights in the order of ``net.src, net.dst``.
    X : array, shape (n, n_in)
    activation : {"relu", "leaky_relu", "tanh", "softplus"}, default "relu"
        ``leaky_relu`` has slope 0.1 below zero; ``tanh`` and ``softplus`` (non-negative, like ReLU)
        are the non-homogeneous controls.

    Returns
    -------
    ndarray, shape (n, n_out)

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry or an unknown activation.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3), (0, 3)]))   # skip edge 0 -> 3
    >>> list(zip(net.src, net.dst))                  # the order of theta
    [(0, 2), (0, 3), (1, 2), (2, 3)]
    >>> forward(net, [1.0, 2.0, -1.0, 3.0], [[1.0, -1.0], [2.0, 1.0]]).ravel().tolist()
    [8.0, 7.0]
    """
    net = _check_net(net)
    theta = _check_theta(net, theta)
    X = as_array("X", X, ndim=2, shape=(None, net.n_in))
    activation = check_option("activation", activation, ACTIVATIONS)
    with jax.enable_x64(True):
        return np.asarray(_forward_fn(net, activation)(jnp.asarray(theta), jnp.asarray(X)))


def loss_gradient(net, theta, X, Y, *, activation: str = "relu", loss: str = "mse"):
    """Training loss and its gradient in ``theta`` (JAX autodiff, float64).

    ``mse``: ``L = mean_i ||f(x_i) - y_i||**2 / 2``; ``bce``: ``L = mean_i log(1 + e^f) - y_i f`` for
    one logit output and labels in ``{0, 1}``. ReLU'(0) = 0, JAX's convention, everywhere.

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,)
    X : array, shape (n, n_in)
    Y : array, shape (n, n_out)
    activation : {"relu", "leaky_relu", "tanh", "softplus"}, default "relu"
    loss : {"mse", "bce"}, default "mse"

    Returns
    -------
    value : float
    grad : ndarray, shape (E,)

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry, an unknown option or non-binary labels for ``bce``.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 1), (1, 2)]))
    >>> value, grad = loss_gradient(net, [2.0, 3.0], [[1.0]], [[0.0]])
    >>> round(value, 3), grad.tolist()        # f = 6: L = 18, dL/da = 6 * 3, dL/db = 6 * 2
    (18.0, [18.0, 12.0])
    """
    net = _check_net(net)
    theta = _check_theta(net, theta)
    activation = check_option("activation", activation, ACTIVATIONS)
    loss = check_option("loss", loss, LOSSES)
    X, Y = _check_data(net, X, Y, loss)
    with jax.enable_x64(True):
        value, grad = _vg_fn(net, activation, loss)(jnp.asarray(theta), jnp.asarray(X), jnp.asarray(Y))
        return float(value), np.asarray(grad)


# --- balances ---------------------------------------------------------------
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
