"""Scaling laws: the functional scaling law of one-pass SGD, batch-size schedules, diagonal networks with their LASSO twin and its state evolution.

Chapters: batch-size schedules; diagonal-network scaling laws.

Modules:

:mod:`~paperlib.scaling_laws.batch_schedules`
    Batch-size schedules at a fixed data budget: two-stage switches, catch-up, optimal schedules.
:mod:`~paperlib.scaling_laws.functional_scaling`
    One-pass SGD on power-law linear regression: the exact risk recursion and the functional scaling law.
:mod:`~paperlib.scaling_laws.numpy_mlp`
    Small ReLU networks trained by SGD under two-stage batch schedules, in plain numpy.
:mod:`~paperlib.scaling_laws.diagonal_networks`
    Diagonal two-layer linear networks with weight decay, their LASSO twin and its state evolution.
:mod:`~paperlib.scaling_laws.state_evolution`
    State evolution of the LASSO: the soft-threshold fixed point of approximate message passing.

Every public function of these modules is also importable from this package (except ``excess_risk``, defined in more than one module or named like a module: import it from its module).
"""

from . import batch_schedules, functional_scaling, numpy_mlp, diagonal_networks, state_evolution
from .batch_schedules import (  # noqa: F401
    SwitchResult, CatchUp, PiecewiseSchedule, FSLSchedule, two_stage_risk, optimal_switch, catch_up,
    catch_up_lag, optimal_piecewise_schedule, fsl_optimal_schedule,
)
from .functional_scaling import (  # noqa: F401
    MomentOperator, power_law_task, sgd_moment_operator, propagate, schedule_risk, fsl_risk,
    sgd_monte_carlo,
)
from .numpy_mlp import (  # noqa: F401
    MLPSwitchRuns, mlp_init_numpy, mlp_sgd_step, mlp_switch_runs,
)
from .diagonal_networks import (  # noqa: F401
    power_law_teacher, sample_data, lasso_penalty, weight_decay_from_penalty, network_state_evolution,
    network_state_evolution_optimal, NetworkSE, fit_lasso, network_loss, DiagonalNetwork,
    train_diagonal_network, zero_solution_weight_decay, weight_spectrum, state_evolution_weights,
    ridge_excess_risk, LassoGrid, lasso_risk_grid, plateau_end, rank_slope,
)
from .state_evolution import (  # noqa: F401
    soft_threshold, soft_threshold_moments, noise_only_mse, minimal_threshold, binned_prior, LassoSE,
    lasso_state_evolution_at_threshold, lasso_state_evolution, lasso_state_evolution_optimal,
)

__all__ = [
    'batch_schedules', 'functional_scaling', 'numpy_mlp', 'diagonal_networks', 'state_evolution',
    'SwitchResult', 'CatchUp', 'PiecewiseSchedule', 'FSLSchedule', 'two_stage_risk', 'optimal_switch',
    'catch_up', 'catch_up_lag', 'optimal_piecewise_schedule', 'fsl_optimal_schedule', 'MomentOperator',
    'power_law_task', 'sgd_moment_operator', 'propagate', 'schedule_risk', 'fsl_risk', 'sgd_monte_carlo',
    'MLPSwitchRuns', 'mlp_init_numpy', 'mlp_sgd_step', 'mlp_switch_runs', 'power_law_teacher',
    'sample_data', 'lasso_penalty', 'weight_decay_from_penalty', 'network_state_evolution',
    'network_state_evolution_optimal', 'NetworkSE', 'fit_lasso', 'network_loss', 'DiagonalNetwork',
    'train_diagonal_network', 'zero_solution_weight_decay', 'weight_spectrum', 'state_evolution_weights',
    'ridge_excess_risk', 'LassoGrid', 'lasso_risk_grid', 'plateau_end', 'rank_slope', 'soft_threshold',
    'soft_threshold_moments', 'noise_only_mse', 'minimal_threshold', 'binned_prior', 'LassoSE',
    'lasso_state_evolution_at_threshold', 'lasso_state_evolution', 'lasso_state_evolution_optimal',
]
