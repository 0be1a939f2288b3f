"""ReLU networks on directed acyclic graphs: the graph, the network and its loss.

This module, :mod:`paperlib.geometry.conservation_laws` and :mod:`paperlib.geometry.invariant_sets` carry the chapter on
Nurisso, Leroy, Petri & Vaccarino (ICLR 2026), *Topology and Geometry of the Learning Space of ReLU
Networks: Connectivity and Singularities*. A network is a ``networkx.DiGraph``: vertices without
in-edges are inputs, vertices without out-edges are linear outputs, every other vertex is a hidden
neuron ``z_v = sigma(sum_{u->v} theta_uv z_u)``, and every edge carries one scalar weight (no biases;
a bias is an edge from a constant input).

* :func:`dag_network` orders a graph into a :class:`DagNet`; :func:`layered_dag` and
  :func:`random_dag` make graphs.
* :func:`forward` and :func:`loss_gradient` evaluate the network and its loss (JAX, float64).

References
----------
.. [#relu-dag-1] M. Nurisso, P. Leroy, G. Petri, F. Vaccarino, "Topology and Geometry of the Learning Space of
   ReLU Networks: Connectivity and Singularities", ICLR 2026, arXiv:2602.00693.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np

from ..core._validation import as_array, check_int, check_option, check_probability

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "DagNet",
    "dag_network",
    "layered_dag",
    "random_dag",
    "forward",
    "loss_gradient",
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


_PROBE_EXEMPTIONS = {}
