"""Approximation and computation with attention: D-retrieval by multi-head attention, single-location regression (softmax vs linear attention), subquadratic attention at any temperature.

Chapters: attention heads and retrieval; softmax vs linear attention; fast attention, any temperature.

Modules:

:mod:`~paperlib.transformers.retrieval`
    Generalized :math:`D`-retrieval and the one-layer, :math:`h`-head transformer that approximates it.
:mod:`~paperlib.transformers.single_location`
    Single-location regression (SLR): softmax vs linear attention.
:mod:`~paperlib.transformers.fast_attention`
    Subquadratic softmax attention at any temperature, for small head dimension.

Every public function of these modules is also importable from this package (except ``fast_attention``, defined in more than one module or named like a module: import it from its module).
"""

from . import retrieval, single_location, fast_attention
from .retrieval import (  # noqa: F401
    retrieval_target, sample_retrieval, bottleneck_nmse, token_bottleneck_nmse, RetrievalTransformer,
    init_transformer, transformer_forward, HeadGridResult, train_head_grid, train_head_grids,
    memorizing_single_head, single_head_features,
)
from .single_location import (  # noqa: F401
    ACTIVATIONS, OrderParameters, make_teacher, sample_slr, sample_projections, attention_readout,
    attention_predict, order_parameters, order_parameter_risk, bayes_risk, linear_population_risk,
    fit_population, train_erm, empirical_risk, select_and_score, summarise_differences,
)
from .fast_attention import (  # noqa: F401
    KeyTree, multi_indices, monomials, build_tree, row_max, global_poly_attention, error_bound,
    attention_inputs,
)

__all__ = [
    'retrieval', 'single_location', 'fast_attention', 'retrieval_target', 'sample_retrieval',
    'bottleneck_nmse', 'token_bottleneck_nmse', 'RetrievalTransformer', 'init_transformer',
    'transformer_forward', 'HeadGridResult', 'train_head_grid', 'train_head_grids',
    'memorizing_single_head', 'single_head_features', 'ACTIVATIONS', 'OrderParameters', 'make_teacher',
    'sample_slr', 'sample_projections', 'attention_readout', 'attention_predict', 'order_parameters',
    'order_parameter_risk', 'bayes_risk', 'linear_population_risk', 'fit_population', 'train_erm',
    'empirical_risk', 'select_and_score', 'summarise_differences', 'KeyTree', 'multi_indices', 'monomials',
    'build_tree', 'row_max', 'global_poly_attention', 'error_bound', 'attention_inputs',
]
