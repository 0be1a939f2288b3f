"""Index of the GNN minimax chapter's modules (kept so that older imports keep working).

The code behind the chapter on Ghasemi & Pishro-Nik (ICLR 2026) lives in five modules, one per role:

- :mod:`paperlib.gnn_hard_instances`: Theorem 1's hard instances on path graphs and their
  worst-case excess risk;
- :mod:`paperlib.lasso`: the batched FISTA lasso solver;
- :mod:`paperlib.cora`: the Cora citation graph shipped inside the ``graphdatascience`` wheel;
- :mod:`paperlib.graph_structure`: components, the spectral gap, edge homophily, contextual SBMs and
  degree-preserving rewiring;
- :mod:`paperlib.node_learning_curves`: SGC features and Gram matrices, transductive ridge learning
  curves and the paper's ratio diagnostic.

This module only re-exports them; new code should import from the modules above.
"""

from __future__ import annotations

from .cora import CoraGraph, load_cora
from .gnn_hard_instances import (path_graph_readout_weights, sample_graph_features, sparse_packing_targets,
                                 worst_case_excess_risk)
from .graph_structure import (contextual_sbm, degree_preserving_rewire, edge_homophily, largest_component,
                              normalized_laplacian_lambda2)
from .lasso import lasso_fista
from .node_learning_curves import (RatioDiagnostics, ratio_diagnostics, ridge_learning_curve, sgc_features,
                                   sgc_gram)

__all__ = [
    "path_graph_readout_weights",
    "sample_graph_features",
    "sparse_packing_targets",
    "lasso_fista",
    "worst_case_excess_risk",
    "CoraGraph",
    "load_cora",
    "largest_component",
    "normalized_laplacian_lambda2",
    "edge_homophily",
    "contextual_sbm",
    "degree_preserving_rewire",
    "sgc_features",
    "sgc_gram",
    "ridge_learning_curve",
    "RatioDiagnostics",
    "ratio_diagnostics",
]
