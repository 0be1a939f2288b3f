"""Unit tests of paperlib.geometry.relu_dag, paperlib.geometry.conservation_laws and paperlib.geometry.invariant_sets against independent computations."""

from __future__ import annotations

import itertools

import jax
import networkx as nx
import numpy as np
import pytest

from paperlib.geometry import invariant_sets as inv
from paperlib.models import mlp
from paperlib.geometry import relu_dag as rd
from paperlib.geometry import conservation_laws as cl


def bottleneck_graph(skip=False):
    """The chapter's network: x1, x2 -> h1, h2, h3 -> b -> y (optionally a skip edge h1 -> y)."""
    g = nx.DiGraph([(x, h) for x in ("x1", "x2") for h in ("h1", "h2", "h3")]
                   + [(h, "b") for h in ("h1", "h2", "h3")] + [("b", "y")])
    if skip:
        g.add_edge("h1", "y")
    return g


def small_random(seed, p=0.5):
    rng = np.random.default_rng(seed)
    g = rd.random_dag(int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 3)), p, rng=rng)
    return rd.dag_network(g), rng


# --- the network -----------------------------------------------------------------------------------
def test_layered_dag_matches_the_book_mlp():
    sizes = [3, 5, 4, 2]
    params = mlp.mlp_init(jax.random.key(0), sizes)
    params = [(np.asarray(W, dtype=float), np.zeros(W.shape[1])) for W, _ in params]
    net = rd.dag_network(rd.layered_dag(sizes))
    theta = np.array([params[net.nodes[u][0]][0][net.nodes[u][1], net.nodes[v][1]]
                      for u, v in zip(net.src, net.dst)])
    X = np.random.default_rng(1).standard_normal((7, 3))
    want = np.asarray(mlp.mlp_apply([(jax.numpy.asarray(W), jax.numpy.asarray(b)) for W, b in params], X))
    np.testing.assert_allclose(rd.forward(net, theta, X), want, rtol=1e-5, atol=1e-5)


def test_forward_by_hand_with_a_skip_edge():
    net = rd.dag_network(bottleneck_graph(skip=True))
    theta = np.zeros(net.n_edges)
    theta[net.edge_index("x1", "h1")] = 2.0
    theta[net.edge_index("h1", "b")] = 1.0
    theta[net.edge_index("b", "y")] = -3.0
    theta[net.edge_index("h1", "y")] = 0.5
    # x1 = 1: h1 = 2, b = 2, y = -6 + 1; x1 = -1: everything 0
    assert rd.forward(net, theta, [[1.0, 5.0], [-1.0, 5.0]]).ravel().tolist() == [-5.0, 0.0]


@pytest.mark.parametrize("activation, loss", [("relu", "mse"), ("tanh", "mse"), ("leaky_relu", "bce")])
def test_gradient_matches_finite_differences(activation, loss):
    net, rng = small_random(3)
    theta = rng.standard_normal(net.n_edges)
    X = rng.standard_normal((20, net.n_in))
    Y = (rng.random((20, net.n_out)) < 0.5).astype(float) if loss == "bce" else rng.standard_normal((20, net.n_out))
    if loss == "bce":
        net = rd.dag_network(rd.layered_dag([net.n_in, 3, 1]))
        theta = rng.standard_normal(net.n_edges)
        Y = Y[:, :1]
    _, grad = rd.loss_gradient(net, theta, X, Y, activation=activation, loss=loss)
    h = 1e-6
    fd = [(rd.loss_gradient(net, theta + h * e, X, Y, activation=activation, loss=loss)[0]
           - rd.loss_gradient(net, theta - h * e, X, Y, activation=activation, loss=loss)[0]) / (2 * h)
          for e in np.eye(net.n_edges)]
    np.testing.assert_allclose(grad, fd, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 7])
def test_conservation_identity_holds_for_homogeneous_activations_only(seed):
    net, rng = small_random(seed)
    theta = rng.standard_normal(net.n_edges)
    X, Y = rng.standard_normal((30, net.n_in)), rng.standard_normal((30, net.n_out))
    B = cl.incidence_hidden(net)
    for act in ("relu", "leaky_relu"):
        g = rd.loss_gradient(net, theta, X, Y, activation=act)[1]
        assert np.abs(B @ (theta * g)).max() <= 1e-12 * (1 + np.abs(theta * g).sum())
    g = rd.loss_gradient(net, theta, X, Y, activation="tanh")[1]
    if net.n_hidden:
        assert np.abs(B @ (theta * g)).max() > 1e-6


def test_one_gd_step_moves_balances_by_lr_squared_times_grad_squared():
    net, rng = small_random(11)
    theta = rng.standard_normal(net.n_edges)
    X, Y = rng.standard_normal((25, net.n_in)), rng.standard_normal((25, net.n_out))
    lr = 0.3
    thetas, _ = cl.train_discrete(net, theta, X, Y, lr=lr, steps=1)
    g = rd.loss_gradient(net, theta, X, Y)[1]
    drift = cl.balances(net, thetas[1]) - cl.balances(net, theta)
    np.testing.assert_allclose(drift, lr ** 2 * cl.incidence_hidden(net) @ g ** 2, atol=1e-12)
    assert np.all(np.abs(drift) <= cl.discrete_budget(net, thetas)[1] + 1e-12)


def test_gradient_flow_keeps_balances_within_the_budget_and_weight_decay_law():
    net = rd.dag_network(bottleneck_graph())
    rng = np.random.default_rng(0)
    theta = rng.standard_normal(net.n_edges)
    X = rng.standard_normal((40, 2))
    Y = -np.maximum(X[:, :1], 0)
    res = cl.gradient_flow(net, theta, X, Y, t_max=1.0, rtol=1e-7, atol=1e-9)
    drift = np.abs(cl.balances(net, res.theta) - cl.balances(net, theta))
    assert np.all(drift <= res.budget + 1e-15) and np.all(np.diff(res.budget, axis=0) >= 0)
    assert res.loss[-1] < res.loss[0]
    lam = 0.3
    wd = cl.gradient_flow(net, theta, X, Y, t_max=1.0, weight_decay=lam, rtol=1e-8, atol=1e-10)
    pred = cl.balances(net, theta) * np.exp(-2 * lam * wd.t)[:, None]
    assert np.abs(cl.balances(net, wd.theta) - pred).max() <= wd.budget[-1].max()
    tanh = cl.gradient_flow(net, theta, X, Y, t_max=1.0, activation="tanh", rtol=1e-8, atol=1e-10)
    assert np.abs(cl.balances(net, tanh.theta) - cl.balances(net, theta)).max() > 100 * tanh.budget[-1].max()


def test_gradient_flow_evaluation_cap_is_loud():
    net = rd.dag_network(bottleneck_graph())
    with pytest.raises(ValueError, match="max_nfev"):
        cl.gradient_flow(net, np.ones(net.n_edges), np.ones((3, 2)), np.zeros((3, 1)), t_max=5.0, max_nfev=10)


def test_l1_prox_makes_exact_zeros_and_adam_runs_batched():
    net = rd.dag_network(rd.layered_dag([2, 4, 1]))
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 2))
    Y = np.maximum(X[:, :1], 0)
    th0 = rng.standard_normal((3, net.n_edges))
    thetas, losses = cl.train_discrete(net, th0, X, Y, lr=0.05, steps=400, l1=0.05, every=100)
    assert thetas.shape == (3, 5, net.n_edges) and losses.shape == (3, 400)
    assert np.any(thetas[:, -1] == 0.0)
    thetas, _ = cl.train_discrete(net, th0[0], X, Y, lr=0.01, steps=10, optimizer="adam")
    assert thetas.shape == (11, net.n_edges)


# --- graphs, bottlenecks, barriers ----------------------------------------------------------------------
def test_random_dag_structure():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        g = rd.random_dag(2, 5, 2, 0.3, rng=rng)
        assert nx.is_directed_acyclic_graph(g)
        assert all(g.in_degree(v) == 0 for v in (0, 1)) and all(g.out_degree(v) == 0 for v in (7, 8))
        assert all(g.in_degree(v) and g.out_degree(v) for v in range(2, 7))


def test_bottlenecks_by_hand():
    net = rd.dag_network(bottleneck_graph())
    inb, outb = inv.bottlenecks(net)
    assert dict(zip(net.nodes[2:6], inb)) == {"h1": False, "h2": False, "h3": False, "b": False}
    assert dict(zip(net.nodes[2:6], outb)) == {"h1": True, "h2": True, "h3": True, "b": True}
    net = rd.dag_network(nx.DiGraph([("x", "a"), ("a", "y1"), ("a", "y2")]))
    assert [b.tolist() for b in inv.bottlenecks(net)] == [[True], [False]]
    net = rd.dag_network(rd.layered_dag([2, 3, 3, 2]))
    assert not any(b.any() for b in inv.bottlenecks(net))


def brute_force_barrier(net, c):
    """max(0, -sum_T c, sum_S c) over all hidden sets T closed downstream and S closed upstream in G - e."""
    hidden = list(range(net.n_in, net.n_in + net.n_hidden))
    edges = list(zip(net.src, net.dst))
    out = np.zeros(len(edges))
    for k in range(len(edges)):
        rest = edges[:k] + edges[k + 1:]
        best = 0.0
        for r in range(1, len(hidden) + 1):
            for T in itertools.combinations(hidden, r):
                T = set(T)
                total = sum(c[v - net.n_in] for v in T)
                if all(v in T for u, v in rest if u in T):          # nothing leaves T
                    best = max(best, -total)
                if all(u in T for u, v in rest if v in T):          # nothing enters T
                    best = max(best, total)
        out[k] = best
    return out


@pytest.mark.parametrize("seed", range(12))
def test_min_cut_barrier_equals_brute_force_and_linear_program(seed):
    net, rng = small_random(seed, p=0.4)
    c = 2 * rng.standard_normal(net.n_hidden)
    cut = inv.sign_barrier(net, c)
    np.testing.assert_allclose(cut, brute_force_barrier(net, c), atol=1e-9)
    np.testing.assert_allclose(cut, inv.sign_barrier_lp(net, c), atol=1e-7)


def test_barrier_of_the_chapter_arms():
    net = rd.dag_network(bottleneck_graph())
    e = net.edge_index("b", "y")
    assert inv.sign_barrier(net, [0.5, 0.5, 0.5, -1.0])[e] == pytest.approx(1.0)       # T = {b}
    assert inv.sign_barrier(net, [0.5, 0.5, 0.5, 1.0])[e] == 0.0
    assert inv.sign_barrier(net, [-1.5, 0.5, 0.5, 0.5])[e] == pytest.approx(1.0)       # T = {b, h1}
    skip = rd.dag_network(bottleneck_graph(skip=True))
    assert inv.sign_barrier(skip, [-1.5, 0.5, 0.5, 0.5])[skip.edge_index("b", "y")] == 0.0


def test_rescaling_keeps_the_function_and_reaches_any_balance():
    net, rng = small_random(5)
    theta = rng.standard_normal(net.n_edges)
    c = 3 * rng.standard_normal(net.n_hidden)
    new = inv.rescale_to_balance(net, theta, c)
    np.testing.assert_allclose(cl.balances(net, new), c, atol=1e-8)
    X = rng.standard_normal((15, net.n_in))
    np.testing.assert_allclose(rd.forward(net, new, X), rd.forward(net, theta, X), atol=1e-10)
    with pytest.raises(ValueError, match="zero"):
        inv.rescale_to_balance(net, np.where(np.arange(net.n_edges) == 0, 0.0, theta), c)


# --- singular points and pruning ------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_rank_drop_equals_isolated_hidden_sets(seed):
    net, rng = small_random(seed + 40)
    theta = rng.standard_normal(net.n_edges) * (rng.random(net.n_edges) > 0.5)
    assert inv.jacobian_rank(net, theta) == net.n_hidden - inv.isolated_sets(net, theta)


def test_isolated_set_of_two_neurons_and_its_zero_balance():
    g = nx.DiGraph([("x", "a"), ("a", "b"), ("b", "y"), ("x", "y")])
    net = rd.dag_network(g)
    theta = np.zeros(net.n_edges)
    theta[net.edge_index("a", "b")] = 1.3
    theta[net.edge_index("x", "y")] = 1.0
    assert inv.isolated_sets(net, theta) == 1 and inv.jacobian_rank(net, theta) == 1
    assert cl.balances(net, theta).sum() == 0.0          # a set cut off has total balance 0


def test_prune_keeps_the_outputs():
    net = rd.dag_network(rd.layered_dag([3, 6, 6, 2]))
    rng = np.random.default_rng(4)   # (forward is compiled once per network: keep networks few)
    theta = rng.standard_normal(net.n_edges) * (rng.random(net.n_edges) > 0.6)
    theta[[k for k, s in enumerate(net.src) if s < 3]] += 0.1          # every input stays in use
    small, th, cols = inv.prune(net, theta)
    X = rng.standard_normal((9, 3))
    np.testing.assert_allclose(rd.forward(small, th, X[:, cols]), rd.forward(net, theta, X), atol=1e-12)
    assert small.n_edges == int(np.count_nonzero(th)) <= int(np.count_nonzero(theta))


# --- bad input --------------------------------------------------------------------------------------
def test_bad_inputs_are_loud():
    net = rd.dag_network(bottleneck_graph())
    with pytest.raises(ValueError, match="graph"):
        rd.dag_network(nx.DiGraph([(0, 1), (1, 0)]))
    with pytest.raises(ValueError, match="graph"):
        rd.dag_network(nx.Graph([(0, 1)]))
    with pytest.raises(ValueError, match="theta"):
        rd.forward(net, np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="X"):
        rd.forward(net, np.ones(net.n_edges), np.ones((2, 3)))
    with pytest.raises(ValueError, match="activation"):
        rd.forward(net, np.ones(net.n_edges), np.ones((2, 2)), activation="gelu")
    with pytest.raises(ValueError, match="Y"):
        rd.loss_gradient(net, np.ones(net.n_edges), np.ones((2, 2)), [[0.5], [1.0]], loss="bce")
    with pytest.raises(ValueError, match="c"):
        inv.sign_barrier(net, [1.0, np.nan, 0.0, 0.0])
    with pytest.raises(ValueError, match="steps"):
        cl.train_discrete(net, np.ones(net.n_edges), np.ones((2, 2)), np.ones((2, 1)), lr=0.1, steps=10, every=3)
    with pytest.raises(ValueError, match="rng"):
        rd.random_dag(1, 1, 1, 0.5, rng=0)
    with pytest.raises(ValueError, match="net"):
        cl.balances("net", np.ones(3))
