"""Diffusion models: variance-exploding diffusion, the empirical score and probability-flow ODE, score smoothing, the smoothest score.

Chapters: score smoothing in diffusion.

Modules:

:mod:`~paperlib.generative.diffusion`
    Variance-exploding diffusion in a few functions: empirical score, probability-flow ODE, score nets.
:mod:`~paperlib.generative.min_curvature`
    Proposition 1 of Chen (ICLR 2026): score-matching loss against non-smoothness, and the smoothest score.
:mod:`~paperlib.generative.score_smoothing`
    Score smoothing (Chen, ICLR 2026): the smoothed piecewise-linear empirical score and its flow.

Every public function of these modules is also importable from this package.
"""

from . import diffusion, min_curvature, score_smoothing
from .diffusion import (  # noqa: F401
    empirical_score, posterior_mean, sample_noised, probability_flow_ode, tweedie_denoise,
    init_score_mlp, score_mlp, dsm_loss,
)
from .min_curvature import (  # noqa: F401
    loss_limit, two_point_loss, score_loss_1d, total_curvature, SmoothestScore, smoothest_score,
)
from .score_smoothing import (  # noqa: F401
    smoothing_delta, smoothed_score_1d, smoothed_score_line, flow_map_spl, interpolating_mass,
    noised_nodes, fit_delta, sample_metrics, polygon_metrics, icosahedron_vertices, sphere_metrics,
)

__all__ = [
    'diffusion', 'min_curvature', 'score_smoothing', 'empirical_score', 'posterior_mean', 'sample_noised',
    'probability_flow_ode', 'tweedie_denoise', 'init_score_mlp', 'score_mlp', 'dsm_loss', 'loss_limit',
    'two_point_loss', 'score_loss_1d', 'total_curvature', 'SmoothestScore', 'smoothest_score',
    'smoothing_delta', 'smoothed_score_1d', 'smoothed_score_line', 'flow_map_spl', 'interpolating_mass',
    'noised_nodes', 'fit_delta', 'sample_metrics', 'polygon_metrics', 'icosahedron_vertices',
    'sphere_metrics',
]
