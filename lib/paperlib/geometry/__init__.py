"""Geometry and symmetry of parameter spaces: ReLU networks on DAGs, their conservation laws and invariant sets, permutation-equivariant networks and their approximation floors.

Chapters: ReLU parameter-space topology; depth and readout in set networks.

Modules:

:mod:`~paperlib.geometry.relu_dag`
    ReLU networks on directed acyclic graphs: the graph, the network and its loss.
:mod:`~paperlib.geometry.conservation_laws`
    Conservation laws of ReLU networks on DAGs: the balances, and training that keeps or breaks them.
:mod:`~paperlib.geometry.invariant_sets`
    The invariant sets of DAG ReLU networks: bottlenecks, frozen signs, singular points, pruning.
:mod:`~paperlib.geometry.equivariant`
    Permutation-invariant and -equivariant networks built from layer spaces, trained together.
:mod:`~paperlib.geometry.equivariant_floors`
    Exact approximation floors of restricted classes of set networks, and a trained network beside them.

Every public function of these modules is also importable from this package.
"""

from . import relu_dag, conservation_laws, invariant_sets, equivariant, equivariant_floors
from .relu_dag import (  # noqa: F401
    DagNet, dag_network, layered_dag, random_dag, forward, loss_gradient,
)
from .conservation_laws import (  # noqa: F401
    FlowResult, incidence_hidden, balances, discrete_budget, gradient_flow, train_discrete,
)
from .invariant_sets import (  # noqa: F401
    bottlenecks, sign_barrier, sign_barrier_lp, rescale_to_balance, isolated_sets, jacobian_rank, prune,
)
from .equivariant import (  # noqa: F401
    LAYER_SPACES, init_network, apply_network, train_networks, moment_matched_pairs,
    separation_fraction,
)
from .equivariant_floors import (  # noqa: F401
    RESTRICTED_CLASSES, FloorComparison, class_optimum, exact_floor, compare_with_floor,
    power_sum_residual,
)

__all__ = [
    'relu_dag', 'conservation_laws', 'invariant_sets', 'equivariant', 'equivariant_floors', 'DagNet',
    'dag_network', 'layered_dag', 'random_dag', 'forward', 'loss_gradient', 'FlowResult',
    'incidence_hidden', 'balances', 'discrete_budget', 'gradient_flow', 'train_discrete', 'bottlenecks',
    'sign_barrier', 'sign_barrier_lp', 'rescale_to_balance', 'isolated_sets', 'jacobian_rank', 'prune',
    'LAYER_SPACES', 'init_network', 'apply_network', 'train_networks', 'moment_matched_pairs',
    'separation_fraction', 'RESTRICTED_CLASSES', 'FloorComparison', 'class_optimum', 'exact_floor',
    'compare_with_floor', 'power_sum_residual',
]
