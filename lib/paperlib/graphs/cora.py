"""The Cora citation graph, read from the parquet files inside the ``graphdatascience`` wheel.

Cora (2,708 papers, 1,433 binary word features, 7 subjects) is the one standard citation benchmark
we found shipped inside a PyPI package, so the book reads it without any download. :func:`load_cora`
returns its largest connected component as a :class:`CoraGraph`.

References
----------
.. [#cora-1] A. McCallum, K. Nigam, J. Rennie and K. Seymore, "Automating the Construction of Internet
   Portals with Machine Learning", Information Retrieval 3, 2000 (the Cora data set).
"""

from __future__ import annotations

import importlib.util
import os
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph

from .graph_structure import largest_component

__all__ = ["CoraGraph", "load_cora"]


class CoraGraph(NamedTuple):
    """The Cora citation graph (largest connected component).

    Attributes
    ----------
    A : scipy.sparse.csr_matrix, shape (N, N)
        Symmetric 0/1 adjacency without self-loops.
    X : ndarray, shape (N, 1433)
        Binary bag-of-words features.
    y : ndarray of int, shape (N,)
        Subject labels in ``{0, ..., 6}``.
    n_edges_full : int
        Undirected edges of the whole graph (before restricting to the component).
    n_components_full : int
        Connected components of the whole graph.
    """

    A: sp.csr_matrix
    X: np.ndarray
    y: np.ndarray
    n_edges_full: int
    n_components_full: int



def load_cora(path: str | None = None) -> CoraGraph:
    """Load Cora from the parquet files shipped inside the ``graphdatascience`` wheel.

    The package is located with ``importlib.util.find_spec`` (it is *not* imported, so its own
    dependencies are not needed). Citations are symmetrised, self-loops and duplicates removed
    (5,278 undirected edges, 78 components), and the graph is restricted to its largest connected
    component (2,485 nodes).

    Parameters
    ----------
    path : str, optional
        Folder holding ``cora_nodes.parquet.gzip`` and ``cora_rels.parquet.gzip``; default: the
        ``resources/cora`` folder of the installed ``graphdatascience``.

    Returns
    -------
    CoraGraph

    Raises
    ------
    ModuleNotFoundError
        If ``path`` is not given and ``graphdatascience`` is not installed.

    Examples
    --------
    >>> cora = load_cora()
    >>> cora.A.shape, cora.X.shape, cora.n_edges_full, cora.n_components_full
    ((2485, 2485), (2485, 1433), 5278, 78)
    """
    import pandas as pd

    if path is None:
        spec = importlib.util.find_spec("graphdatascience")
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(
                "graphdatascience is not installed; `pip install --no-deps graphdatascience` ships Cora"
            )
        path = os.path.join(spec.submodule_search_locations[0], "resources", "cora")
    nodes = pd.read_parquet(os.path.join(path, "cora_nodes.parquet.gzip"))
    rels = pd.read_parquet(os.path.join(path, "cora_rels.parquet.gzip"))
    index = pd.Series(np.arange(len(nodes)), index=nodes["nodeId"].to_numpy())
    src = index.loc[rels["sourceNodeId"].to_numpy()].to_numpy()
    dst = index.loc[rels["targetNodeId"].to_numpy()].to_numpy()
    N = len(nodes)
    A = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(N, N)).tocsr()
    A = ((A + A.T) > 0).astype(np.float64)
    A.setdiag(0)
    A.eliminate_zeros()
    A = sp.csr_matrix(A)
    n_comp, _ = scipy.sparse.csgraph.connected_components(A, directed=False)
    X = np.stack(nodes["features"].to_numpy()).astype(np.float64)
    y = nodes["subject"].to_numpy().astype(int)
    keep = largest_component(A)
    return CoraGraph(A=A[keep][:, keep].tocsr(), X=X[keep], y=y[keep],
                     n_edges_full=int(A.nnz // 2), n_components_full=int(n_comp))
