"""Unit tests of the GNN minimax modules (gnn_hard_instances, lasso, cora, graph_structure,
node_learning_curves) against independent computations (closed forms, brute force, properties)."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from paperlib.graphs import cora, lasso
from paperlib.graphs import gnn_hard_instances as hard
from paperlib.graphs import graph_structure as gs
from paperlib.graphs import node_learning_curves as nlc


def _cycle(N):
    return nx.to_scipy_sparse_array(nx.cycle_graph(N), dtype=float)


@pytest.mark.parametrize("N", [5, 12, 1000])
def test_lambda2_cycle_closed_form(N):
    # normalised Laplacian of C_N has eigenvalues 1 - cos(2 pi j / N)
    assert abs(gs.normalized_laplacian_lambda2(_cycle(N)) - (1 - np.cos(2 * np.pi / N))) < 1e-8


@pytest.mark.parametrize("N", [4, 9, 450])
def test_lambda2_complete_graph(N):
    A = nx.to_scipy_sparse_array(nx.complete_graph(N), dtype=float)
    assert abs(gs.normalized_laplacian_lambda2(A) - N / (N - 1)) < 1e-8


def test_lambda2_uses_largest_component():
    A = sp.block_diag([_cycle(10), _cycle(4)]).tocsr()  # disconnected: plain lambda2 would be 0
    assert abs(gs.normalized_laplacian_lambda2(A) - (1 - np.cos(2 * np.pi / 10))) < 1e-8


def test_edge_homophily_brute_force():
    rng = np.random.default_rng(0)
    G = nx.gnp_random_graph(30, 0.2, seed=1)
    y = rng.integers(0, 3, 30)
    brute = np.mean([y[u] == y[v] for u, v in G.edges()])
    assert gs.edge_homophily(nx.to_scipy_sparse_array(G, dtype=float), y) == pytest.approx(brute)


def test_path_readout_weights_match_explicit_message_passing():
    m = 5
    A = nx.to_numpy_array(nx.path_graph(m)) + np.eye(m)
    A_hat = A / A.sum(1, keepdims=True)
    w = np.ones(m) @ A_hat / m
    np.testing.assert_allclose(hard.path_graph_readout_weights(m), w / np.linalg.norm(w), atol=1e-12)
    z = hard.sample_graph_features(20000, 3, m=m, rng=np.random.default_rng(0))
    np.testing.assert_allclose(np.cov(z.T), np.eye(3), atol=0.05)  # isotropic read-out features


def test_packing_targets_constant_weight():
    B = hard.sparse_packing_targets(50, [1, 4, 10], radius=2.0, rng=np.random.default_rng(0))
    assert B.shape == (50, 3)
    np.testing.assert_allclose(np.abs(B).sum(0), 2.0)
    assert (B != 0).sum(0).tolist() == [1, 4, 10]


def test_lasso_orthogonal_design_is_soft_threshold():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((40, 6)))
    Z = np.sqrt(40) * Q  # Z^T Z / n = I
    Y = rng.standard_normal((40, 2))
    ols = Z.T @ Y / 40
    expect = np.sign(ols) * np.maximum(np.abs(ols) - 0.3, 0)
    np.testing.assert_allclose(lasso.lasso_fista(Z, Y, 0.3, iters=300), expect, atol=1e-6)


def test_lasso_kkt_general_design_and_batch():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((3, 30, 60))  # n < d, batched
    Y = rng.standard_normal((3, 30, 2))
    lam = 0.2
    B = lasso.lasso_fista(Z, Y, lam, iters=5000)
    for s in range(3):
        grad = Z[s].T @ (Y[s] - Z[s] @ B[s]) / 30  # KKT: |grad| <= lam, = lam sign(B) on support
        assert np.all(np.abs(grad) <= lam + 1e-4)
        on = B[s] != 0
        np.testing.assert_allclose(grad[on], lam * np.sign(B[s][on]), atol=1e-4)


def test_ridge_dual_equals_primal_and_perfect_separation():
    rng = np.random.default_rng(0)
    N, d = 60, 5
    y = np.arange(N) % 3
    F = np.eye(3)[y] @ rng.standard_normal((3, d)) * 5 + 0.01 * rng.standard_normal((N, d))
    err, mse = nlc.ridge_learning_curve(F @ F.T, y, [30], n_seeds=2, lam=1e-3, rng=np.random.default_rng(2))
    assert err[0] == 0.0 and mse[0] < 1e-2
    # same random split, primal ridge by lstsq
    perm = np.random.default_rng(2).permutation(N)
    S, T = perm[:30], perm[30:]
    Y = np.eye(3)[y]
    W = np.linalg.solve(F[S].T @ F[S] + 1e-3 * np.eye(d), F[S].T @ Y[S])
    e1, m1 = nlc.ridge_learning_curve(F @ F.T, y, [30], n_seeds=1, lam=1e-3, rng=np.random.default_rng(2))
    assert m1[0] == pytest.approx(np.mean(np.sum((F[T] @ W - Y[T]) ** 2, 1)), rel=1e-6)


def test_sgc_gram_matches_features():
    rng = np.random.default_rng(0)
    A = nx.to_scipy_sparse_array(nx.gnp_random_graph(25, 0.2, seed=3), dtype=float)
    X = (rng.random((25, 40)) < 0.05).astype(float)
    F = nlc.sgc_features(A, X, hops=2)
    np.testing.assert_allclose(nlc.sgc_gram(A, X, hops=2), F @ F.T, atol=1e-12)
    S = (A + sp.identity(25)).toarray()
    Dm = np.diag(1 / np.sqrt(S.sum(1)))
    np.testing.assert_allclose(F, Dm @ S @ Dm @ Dm @ S @ Dm @ X, atol=1e-12)


def test_rewire_preserves_degrees_and_csbm_homophily():
    rng = np.random.default_rng(0)
    A, X, y = gs.contextual_sbm(700, 7, 8, 0.9, 4, 0.5, rng=rng)
    assert abs(gs.edge_homophily(A, y) - 0.9) < 0.05
    assert X.shape == (A.shape[0], 4)
    R = gs.degree_preserving_rewire(A, 5 * int(A.nnz // 2), rng=rng)
    np.testing.assert_array_equal(np.asarray(R.sum(1)).ravel(), np.asarray(A.sum(1)).ravel())
    assert gs.edge_homophily(R, y) < 0.4


def test_ratio_diagnostics_exact_power_laws():
    ns = np.array([100.0, 200, 400, 800])
    D = nlc.ratio_diagnostics(ns, 3.0 / np.sqrt(ns), 64)
    assert D.slope_err == pytest.approx(-0.5) and D.slope_ratio1 == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(D.ratio1, 3.0 / np.sqrt(np.log(64)))
    D2 = nlc.ratio_diagnostics(ns, 5.0 / np.log(ns), 64)
    np.testing.assert_allclose(D2.ratio2, 5.0 / 64)


def test_load_cora():
    pytest.importorskip("graphdatascience")
    graph = cora.load_cora()
    assert graph.n_edges_full == 5278 and graph.n_components_full == 78
    assert graph.A.shape == (2485, 2485) and graph.X.shape == (2485, 1433)
    assert set(np.unique(graph.y)) == set(range(7))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: hard.path_graph_readout_weights(1), "m must be >= 2"),
        (lambda: hard.sparse_packing_targets(5, [6], rng=np.random.default_rng(0)), r"ks\[i\] must be <= 5"),
        (lambda: hard.sparse_packing_targets(5, [1], radius=-1, rng=np.random.default_rng(0)), "radius"),
        (lambda: lasso.lasso_fista(np.ones((4, 2)), np.ones((3, 1)), 0.1), "Y must have shape"),
        (lambda: lasso.lasso_fista(np.full((4, 2), np.nan), np.ones((4, 1)), 0.1), "Z must be finite"),
        (lambda: lasso.lasso_fista(np.ones((4, 2)), np.ones((4, 1)), -0.1), "lam must be >= 0"),
        (lambda: gs.normalized_laplacian_lambda2(np.ones((3, 4))), "A must be a square"),
        (lambda: gs.normalized_laplacian_lambda2(np.triu(np.ones((4, 4)), 1)), "symmetric"),
        (lambda: gs.edge_homophily(_cycle(5), np.zeros(4)), "y must have shape"),
        (lambda: gs.contextual_sbm(100, 4, 8, 1.5, 3, 1.0, rng=np.random.default_rng(0)), "h must be <= 1"),
        (lambda: nlc.ridge_learning_curve(np.eye(5), np.zeros(5), [5], rng=np.random.default_rng(0)), "ns"),
        (lambda: nlc.ridge_learning_curve(np.eye(5), np.zeros(5), [2], lam=0, rng=np.random.default_rng(0)), "lam"),
        (lambda: nlc.ratio_diagnostics([10, 20], [0.1, 0.0], 8), "err must be positive"),
        (lambda: nlc.ratio_diagnostics([10, 20], [0.1, 0.2], 1), "d must be >= 2"),
        (lambda: hard.worst_case_excess_risk([10], 8, [1], sigma=0, rng=np.random.default_rng(0)), "sigma"),
        (lambda: hard.sample_graph_features(3, 2, rng=0), "rng must be a numpy.random.Generator"),
    ],
)
def test_value_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_sgc_gram_paths_agree():
    # few dense features -> F Fᵀ path; the same features as a sparse matrix -> S (X Xᵀ) S path
    G = nx.gnp_random_graph(40, 0.15, seed=3)
    A = nx.to_scipy_sparse_array(G, dtype=float)
    X = np.random.default_rng(0).standard_normal((40, 5))
    K_dense = nlc.sgc_gram(A, X, hops=2)
    K_sparse = nlc.sgc_gram(A, sp.csr_matrix(X), hops=2)
    F = nlc.sgc_features(A, X, hops=2)
    np.testing.assert_allclose(K_dense, F @ F.T, atol=1e-12)
    np.testing.assert_allclose(K_sparse, K_dense, atol=1e-12)


def test_worst_case_per_seed_matches_mean():
    kw = dict(n_seeds=3, iters=30)
    mean = hard.worst_case_excess_risk([8, 16], 6, [1, 3], rng=np.random.default_rng(1), **kw)
    per = hard.worst_case_excess_risk([8, 16], 6, [1, 3], per_seed=True, rng=np.random.default_rng(1), **kw)
    assert per.shape == (3, 2, 2)
    np.testing.assert_allclose(per.mean(axis=0), mean, rtol=1e-12)
    with pytest.raises(ValueError, match="per_seed"):
        hard.worst_case_excess_risk([8], 6, [1], per_seed="yes", rng=np.random.default_rng(1), **kw)
