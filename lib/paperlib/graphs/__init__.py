"""Graphs and graph neural networks: graph structure and random graph models, the Cora graph, batched lasso, minimax hard instances on path graphs, node-level learning curves.

Chapters: GNN minimax rates.

Modules:

:mod:`~paperlib.graphs.graph_structure`
    Graph structure for the GNN minimax chapter: validation, components, spectra, random models.
:mod:`~paperlib.graphs.cora`
    The Cora citation graph, read from the parquet files inside the ``graphdatascience`` wheel.
:mod:`~paperlib.graphs.lasso`
    The lasso by FISTA, batched over right-hand sides and designs (one jitted, vmapped program).
:mod:`~paperlib.graphs.gnn_hard_instances`
    Theorem 1 of the GNN minimax chapter: hard instances on path graphs and their worst-case risk.
:mod:`~paperlib.graphs.node_learning_curves`
    Node-level learning curves on one graph and the paper's ratio diagnostic (Theorem 2 side).

Every public function of these modules is also importable from this package.
"""

from . import graph_structure, cora, lasso, gnn_hard_instances, node_learning_curves
from .graph_structure import (  # noqa: F401
    largest_component, normalized_laplacian_lambda2, edge_homophily, contextual_sbm,
    degree_preserving_rewire,
)
from .cora import (  # noqa: F401
    CoraGraph, load_cora,
)
from .lasso import (  # noqa: F401
    lasso_fista,
)
from .gnn_hard_instances import (  # noqa: F401
    path_graph_readout_weights, sample_graph_features, sparse_packing_targets, worst_case_excess_risk,
)
from .node_learning_curves import (  # noqa: F401
    sgc_features, sgc_gram, ridge_learning_curve, RatioDiagnostics, ratio_diagnostics,
)

__all__ = [
    'graph_structure', 'cora', 'lasso', 'gnn_hard_instances', 'node_learning_curves', 'largest_component',
    'normalized_laplacian_lambda2', 'edge_homophily', 'contextual_sbm', 'degree_preserving_rewire',
    'CoraGraph', 'load_cora', 'lasso_fista', 'path_graph_readout_weights', 'sample_graph_features',
    'sparse_packing_targets', 'worst_case_excess_risk', 'sgc_features', 'sgc_gram', 'ridge_learning_curve',
    'RatioDiagnostics', 'ratio_diagnostics',
]
