"""The invariant sets of DAG ReLU networks: bottlenecks, frozen signs, singular points, pruning.

Gradient flow keeps the balances ``c = B theta**2`` of :mod:`paperlib.geometry.conservation_laws`, so training stays
on the invariant set ``H(c) = {theta : B theta**2 = c}``. Since ``H(c)`` depends on ``theta`` only
through ``q = theta**2``, its shape is read off the polytope ``P(c) = {q >= 0 : B q = c}``.

* :func:`bottlenecks` lists the paper's bottleneck neurons (one in-edge or one out-edge).
* :func:`sign_barrier` (a minimum cut per edge, our derivation) and :func:`sign_barrier_lp` (a linear
  program) give the smallest ``theta_e**2`` on ``H(c)``: the sign of ``theta_e`` is frozen, and
  ``H(c)`` splits in two along it, exactly when that is positive.
* :func:`rescale_to_balance` moves a network to any balance without changing its function.
* :func:`isolated_sets` and :func:`jacobian_rank` locate the singular points of ``H(c)``;
  :func:`prune` removes what a sparse ``theta`` cut off.

References
----------
.. [#invariant-sets-1] M. Nurisso, P. Leroy, G. Petri, F. Vaccarino, "Topology and Geometry of the Learning Space of
   ReLU Networks: Connectivity and Singularities", ICLR 2026, arXiv:2602.00693 (Theorem 1,
   connectedness; Theorem 2, singular points).
.. [#invariant-sets-2] D. Gale, "A theorem on flows in networks", Pacific J. Math. 7, 1957 (feasibility of supplies
   and demands).
.. [#invariant-sets-3] J.-C. Picard, "Maximal closure of a graph and applications to combinatorial problems",
   Management Science 22(11), 1976 (minimum-weight closure by a minimum cut).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.optimize import linprog, minimize

from .conservation_laws import balances, incidence_hidden
from .relu_dag import _check_balance, _check_net, _check_theta, dag_network

__all__ = [
    "bottlenecks",
    "sign_barrier",
    "sign_barrier_lp",
    "rescale_to_balance",
    "isolated_sets",
    "jacobian_rank",
    "prune",
]


def bottlenecks(net):
    """The paper's bottleneck neurons: hidden vertices with one in-edge or with one out-edge.

    Parameters
    ----------
    net : DagNet

    Returns
    -------
    in_bottleneck, out_bottleneck : ndarray of bool, shape (H,)

    Raises
    ------
    ValueError
        If ``net`` is not a :class:`DagNet`.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3), (2, 4)]))
    >>> [b.tolist() for b in bottlenecks(net)]
    [[False], [False]]
    """
    B = incidence_hidden(net)
    return (B == 1).sum(axis=1) == 1, (B == -1).sum(axis=1) == 1


def _closure_min(graph, weights) -> float:
    """min over successor-closed vertex sets T of sum_T weights (0 for T empty), by a minimum cut."""
    flow = nx.DiGraph()
    flow.add_nodes_from(["s", "t"])
    for v, w in weights.items():      # maximise sum_T (-w): Picard's construction
        if w < 0:
            flow.add_edge("s", v, capacity=-w)
        elif w > 0:
            flow.add_edge(v, "t", capacity=w)
    flow.add_edges_from(graph.edges)  # no capacity attribute: infinite, so closed sets are the cuts
    gain = sum(-w for w in weights.values() if w < 0)
    return -(gain - nx.minimum_cut_value(flow, "s", "t"))


def sign_barrier(net, c) -> np.ndarray:
    """Smallest ``theta_e**2`` over the invariant set ``H(c) = {theta : B theta**2 = c}``, per edge.

    For ``e = u -> w``, let ``R_out`` be the hidden vertices that reach no output once ``e`` is removed
    and ``R_in`` those that no input reaches. Then (our derivation, Gale's feasibility theorem)

    ``barrier_e = max(0, -min_T sum_{v in T} c_v, max_S sum_{v in S} c_v)``

    over the successor-closed ``T`` in ``R_out`` and the predecessor-closed ``S`` in ``R_in``; each
    extremum is a minimum-weight closure, found by one minimum cut (Picard 1976). ``R_out`` is nonempty
    only when ``u`` is an out-bottleneck, ``R_in`` only when ``w`` is an in-bottleneck. The sign of
    ``theta_e`` is frozen on ``H(c)`` exactly when ``barrier_e > 0``.

    Parameters
    ----------
    net : DagNet
    c : array, shape (H,)
        Balances, e.g. ``balances(net, theta0)``.

    Returns
    -------
    ndarray, shape (E,)
        Non-negative; equals :func:`sign_barrier_lp` up to round-off.

    Raises
    ------
    ValueError
        On a wrong shape or a non-finite entry.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> sign_barrier(net, [-4.0]).tolist()         # 2 -> 3 carries at least 4; 0 -> 2, 1 -> 2 can vanish
    [0.0, 0.0, 4.0]
    """
    net = _check_net(net)
    c = _check_balance(net, c)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(len(net.nodes)))
    graph.add_edges_from(zip(net.src, net.dst))
    hidden = range(net.n_in, net.n_in + net.n_hidden)
    weight = {v: float(c[v - net.n_in]) for v in hidden}
    ins, outs = range(net.n_in), range(len(net.nodes) - net.n_out, len(net.nodes))
    out = np.zeros(net.n_edges)
    for k, (u, w) in enumerate(zip(net.src, net.dst)):
        graph.remove_edge(u, w)
        bound = 0.0
        if graph.out_degree(u) == 0 and u in weight:            # u is an out-bottleneck
            reach = set().union(*(nx.ancestors(graph, o) | {o} for o in outs))
            R = [v for v in hidden if v not in reach]
            bound = max(bound, -_closure_min(graph.subgraph(R), {v: weight[v] for v in R}))
        if graph.in_degree(w) == 0 and w in weight:             # w is an in-bottleneck
            reach = set().union(*(nx.descendants(graph, i) | {i} for i in ins))
            R = [v for v in hidden if v not in reach]
            bound = max(bound, -_closure_min(graph.subgraph(R).reverse(), {v: -weight[v] for v in R}))
        out[k] = bound
        graph.add_edge(u, w)
    return out


def sign_barrier_lp(net, c) -> np.ndarray:
    """The same barrier by linear programming: ``min q_e`` subject to ``q >= 0``, ``B q = c``.

    Since ``H(c)`` depends on ``theta`` only through ``q = theta**2``, the smallest ``theta_e**2`` on it
    is this linear program's value (HiGHS, through ``scipy.optimize.linprog``). It knows nothing of
    bottlenecks, which makes it an independent check of :func:`sign_barrier`.

    Parameters
    ----------
    net : DagNet
    c : array, shape (H,)

    Returns
    -------
    ndarray, shape (E,)

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry, or if ``H(c)`` is empty (never, for a :class:`DagNet`).

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> sign_barrier_lp(net, [-4.0]).round(6).tolist()
    [0.0, 0.0, 4.0]
    """
    net = _check_net(net)
    c = _check_balance(net, c)
    B = incidence_hidden(net)
    out = np.zeros(net.n_edges)
    for k in range(net.n_edges):
        res = linprog(np.eye(net.n_edges)[k], A_eq=B, b_eq=c, bounds=(0, None), method="highs")
        if res.status != 0:
            raise ValueError(f"c gives an empty invariant set (linprog status {res.status})")
        out[k] = max(res.fun, 0.0)
    return out


def rescale_to_balance(net, theta, c) -> np.ndarray:
    """Rescale the hidden neurons of ``theta`` so that its balances become ``c``; the function is unchanged.

    Neuron ``v`` multiplies its in-weights by ``a_v > 0`` and divides its out-weights by ``a_v``, which
    leaves the network function unchanged (positive homogeneity). With ``s = log a``, the balances are
    the gradient of the convex function ``Phi(s) = sum_e theta_e**2 exp(2 (s_head - s_tail)) / 2``
    (``s = 0`` on inputs and outputs), so ``s`` minimises ``Phi(s) - <c, s>``; when no weight is zero,
    ``Phi`` is strictly convex and grows in every direction, so the solution exists and is unique
    (our construction; it shows that every ``c`` is a feasible balance).

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,)
        Weights, none of them zero.
    c : array, shape (H,)
        Target balances.

    Returns
    -------
    ndarray, shape (E,)
        The rescaled weights, with ``balances(net, result) == c`` to about 1e-10.

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry, a zero weight or if the minimiser fails.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (1, 2), (2, 3)]))
    >>> th = rescale_to_balance(net, [1.0, 2.0, 3.0], [1.0])
    >>> balances(net, th).round(8).tolist(), round(float(th[0] * th[2]), 8)     # the path product is kept
    ([1.0], 3.0)
    """
    net = _check_net(net)
    theta = _check_theta(net, theta)
    c = _check_balance(net, c)
    if np.any(theta == 0):
        raise ValueError("theta must have no zero weight (a zero edge cannot be rescaled into balance)")
    B = incidence_hidden(net).astype(float)
    q = theta ** 2

    def objective(s):
        r = q * np.exp(2.0 * (B.T @ s))
        return 0.5 * r.sum() - c @ s, B @ r - c

    def hessian(s):
        return 2.0 * (B * (q * np.exp(2.0 * (B.T @ s)))) @ B.T

    res = minimize(objective, np.zeros(net.n_hidden), jac=True, hess=hessian, method="trust-exact",
                   options={"gtol": 1e-12})
    s = res.x
    for _ in range(20):      # Newton polish: trust-exact can stop early on round-off near the optimum
        grad = objective(s)[1]
        if np.abs(grad).max() <= 1e-12 * (1.0 + np.abs(c).max()):
            break
        s = s - np.linalg.solve(hessian(s), grad)
    out = theta * np.exp(B.T @ s)
    if not np.allclose(balances(net, out), c, rtol=1e-8, atol=1e-8):
        raise ValueError(f"could not reach the balances c: {res.message}")
    return out


# --- singular points ------------------------------------------------------------------------------
def isolated_sets(net, theta) -> int:
    """Number of sets of hidden neurons cut off from every input and output by zero weights.

    These are the connected components of the support graph ``{e : theta_e != 0}`` (undirected, all
    vertices) that contain only hidden vertices; a hidden vertex with no nonzero edge counts as one.

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,)

    Returns
    -------
    int

    Raises
    ------
    ValueError
        On a wrong shape or a non-finite entry.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (0, 3), (2, 4), (3, 4)]))
    >>> isolated_sets(net, [1.0, 0.0, 1.0, 0.0])    # neuron 3 has lost both of its edges
    1
    """
    net = _check_net(net)
    theta = _check_theta(net, theta)
    support = nx.Graph()
    support.add_nodes_from(range(len(net.nodes)))
    support.add_edges_from((u, v) for u, v, t in zip(net.src, net.dst, theta) if t != 0)
    first_out = net.n_in + net.n_hidden
    return sum(all(net.n_in <= v < first_out for v in comp) for comp in nx.connected_components(support))


def prune(net, theta):
    """The sub-network that a sparse ``theta`` computes: drop zero edges and the neurons left off every path.

    A vertex survives when, in the support graph ``{e : theta_e != 0}``, it lies on a path from an input
    to an output. A dropped hidden neuron either receives nothing (its value is ``sigma(0) = 0`` for
    ReLU, leaky ReLU and tanh) or feeds nothing, so the outputs do not change.

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,)

    Returns
    -------
    pruned : DagNet
        On the surviving vertices, with the original labels.
    pruned_theta : ndarray, shape (E',)
    kept_inputs : ndarray of int
        Columns of ``X`` that the pruned network reads.

    Raises
    ------
    ValueError
        On a wrong shape, a non-finite entry, or if some output is cut off from every input.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (0, 3), (1, 3), (2, 4), (3, 4)]))
    >>> small, th, cols = prune(net, [1.0, 0.0, 0.0, 2.0, 0.0])
    >>> small.nodes, th.tolist(), cols.tolist()
    ((0, 2, 4), [1.0, 2.0], [0])
    """
    net = _check_net(net)
    theta = _check_theta(net, theta)
    support = nx.DiGraph()
    support.add_nodes_from(range(len(net.nodes)))
    support.add_edges_from((u, v) for u, v, t in zip(net.src, net.dst, theta) if t != 0)
    outs = range(len(net.nodes) - net.n_out, len(net.nodes))
    from_in = set().union(*(nx.descendants(support, i) | {i} for i in range(net.n_in)))
    to_out = set().union(*(nx.ancestors(support, o) | {o} for o in outs))
    if any(o not in from_in for o in outs):
        raise ValueError("theta cuts some output off from every input: nothing to prune to")
    keep = from_in & to_out
    graph = nx.DiGraph()
    graph.add_nodes_from(net.nodes[v] for v in sorted(keep))
    weight = {}
    for u, v, t in zip(net.src, net.dst, theta):
        if t != 0 and u in keep and v in keep:
            graph.add_edge(net.nodes[u], net.nodes[v])
            weight[(net.nodes[u], net.nodes[v])] = t
    pruned = dag_network(graph)
    pruned_theta = np.array([weight[(pruned.nodes[u], pruned.nodes[v])] for u, v in zip(pruned.src, pruned.dst)])
    return pruned, pruned_theta, np.array([i for i in range(net.n_in) if i in keep], dtype=int)


def jacobian_rank(net, theta) -> int:
    """Numerical rank of the Jacobian ``2 B diag(theta)`` of ``theta -> B theta**2`` (SVD).

    ``H(c)`` is singular at ``theta`` when the rank is below ``H``.

    Parameters
    ----------
    net : DagNet
    theta : array, shape (E,)

    Returns
    -------
    int

    Raises
    ------
    ValueError
        On a wrong shape or a non-finite entry.

    Examples
    --------
    >>> import networkx as nx
    >>> net = dag_network(nx.DiGraph([(0, 2), (0, 3), (2, 4), (3, 4)]))
    >>> jacobian_rank(net, [1.0, 0.0, 1.0, 0.0]), net.n_hidden
    (1, 2)
    """
    net = _check_net(net)
    theta = _check_theta(net, theta)
    return int(np.linalg.matrix_rank(2.0 * incidence_hidden(net) * theta))
