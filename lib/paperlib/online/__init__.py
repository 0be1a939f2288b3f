"""Online learning and conformal prediction: Hedge and EXP3.P, online conformal prediction with bandit feedback, test-time scaling and self-correction as online learning, and transformers that run Hedge in context.

Chapters: test-time scaling; bandit conformal prediction.

Modules:

:mod:`~paperlib.online.bandits`
    Exponential weights for online learning: Hedge (full information) and EXP3.P (bandit feedback).
:mod:`~paperlib.online.conformal`
    Conformal prediction sets: split conformal, quantile tracking, and a bandit over thresholds.
:mod:`~paperlib.online.conformal_streams`
    Streams for online conformal prediction: synthetic, adaptive, and two scikit-learn data sets.
:mod:`~paperlib.online.test_time_scaling`
    Test-time scaling: self-consistency, best-of-n, and self-correction as online learning.
:mod:`~paperlib.online.self_correction`
    Self-correction with verifier feedback as online learning over a pool of experts.
:mod:`~paperlib.online.in_context_hedge`
    A two-layer causal Transformer that runs Hedge over a pool of experts from its own context.
:mod:`~paperlib.online.in_context_experts`
    One causal Transformer that computes :math:`K` task experts' answers and runs Hedge over them.

Every public function of these modules is also importable from this package.
"""

from . import bandits, conformal, conformal_streams, test_time_scaling, self_correction, in_context_hedge, in_context_experts
from .bandits import (  # noqa: F401
    hedge_probabilities, hedge_regret_bound, exp3p_probabilities, observation_probabilities,
    exp3p_gain_estimates, BanditRun, exp3p, Exp3pParameters, exp3p_parameters, exp3p_regret_bound,
    regret, expected_regret,
)
from .conformal import (  # noqa: F401
    threshold_grid, CoverageTable, coverage_table, interval_coverage_table, conformal_losses,
    threshold_feedback_graphs, online_conformal_bandit, Outcomes, outcomes, miscoverage_bound,
    split_conformal_threshold, quantile_tracking,
)
from .conformal_streams import (  # noqa: F401
    synthetic_stream, reactive_bandit_run, DigitsModel, fit_digits_model, digits_stream,
    diabetes_residuals,
)
from .test_time_scaling import (  # noqa: F401
    sc_success_two_answer, sc_success_diffuse, bon_success, MonteCarloEstimate, self_consistency_mc,
    sample_complexity, sc_sample_complexity_normal, bon_sample_complexity, distribution_with_gap,
    sc_success_exact,
)
from .self_correction import (  # noqa: F401
    STRATEGIES, TIE_TOLERANCE, make_experts, disagreement_rates, pool_majority_error, Sessions,
    draw_sessions, online_mistakes, weighted_majority_bound,
)
from .in_context_hedge import (  # noqa: F401
    TransformerWeights, slot_names, hedge_transformer_weights, self_correction_prompt,
    hedge_transformer_forward, hedge_transformer_session, hedge_transformer_loop,
)
from .in_context_experts import (  # noqa: F401
    ExpertsWeights, experts_transformer_weights, experts_prompt, experts_transformer_forward,
    experts_transformer_session, near_ties,
)

__all__ = [
    'bandits', 'conformal', 'conformal_streams', 'test_time_scaling', 'self_correction', 'in_context_hedge',
    'in_context_experts', 'hedge_probabilities', 'hedge_regret_bound', 'exp3p_probabilities',
    'observation_probabilities', 'exp3p_gain_estimates', 'BanditRun', 'exp3p', 'Exp3pParameters',
    'exp3p_parameters', 'exp3p_regret_bound', 'regret', 'expected_regret', 'threshold_grid',
    'CoverageTable', 'coverage_table', 'interval_coverage_table', 'conformal_losses',
    'threshold_feedback_graphs', 'online_conformal_bandit', 'Outcomes', 'outcomes', 'miscoverage_bound',
    'split_conformal_threshold', 'quantile_tracking', 'synthetic_stream', 'reactive_bandit_run',
    'DigitsModel', 'fit_digits_model', 'digits_stream', 'diabetes_residuals', 'sc_success_two_answer',
    'sc_success_diffuse', 'bon_success', 'MonteCarloEstimate', 'self_consistency_mc', 'sample_complexity',
    'sc_sample_complexity_normal', 'bon_sample_complexity', 'distribution_with_gap', 'sc_success_exact',
    'STRATEGIES', 'TIE_TOLERANCE', 'make_experts', 'disagreement_rates', 'pool_majority_error', 'Sessions',
    'draw_sessions', 'online_mistakes', 'weighted_majority_bound', 'TransformerWeights', 'slot_names',
    'hedge_transformer_weights', 'self_correction_prompt', 'hedge_transformer_forward',
    'hedge_transformer_session', 'hedge_transformer_loop', 'ExpertsWeights', 'experts_transformer_weights',
    'experts_prompt', 'experts_transformer_forward', 'experts_transformer_session', 'near_ties',
]
