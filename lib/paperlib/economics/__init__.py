"""Economics: Markov exchange economies as Markov pseudo-games, GAP and NPM equilibrium solvers, a dynamic-programming certificate.

Chapters: Markov exchange economies.

Modules:

:mod:`~paperlib.economics.markov_economies`
    Infinite-horizon Markov exchange economies as Markov pseudo-games (Goktas et al., ICLR 2026).
:mod:`~paperlib.economics.exchange_dp`
    An independent dynamic-programming certificate for the Markov exchange economy.
:mod:`~paperlib.economics.exchange_solvers`
    Equilibrium solvers for the Markov exchange economy: GAP networks and the NPM baseline.

Every public function of these modules is also importable from this package.
"""

from . import markov_economies, exchange_dp, exchange_solvers
from .markov_economies import (  # noqa: F401
    ExchangeEconomy, make_economy, equilibrium_prices, wealth_grid, portfolio_bounds, policy_value,
    value_gradient,
)
from .exchange_dp import (  # noqa: F401
    Certificate, best_response, evaluate_policy, certify,
)
from .exchange_solvers import (  # noqa: F401
    TrainResult, init_generator, select_run, generator_policy, train_gap, train_npm, certify_runs,
)

__all__ = [
    'markov_economies', 'exchange_dp', 'exchange_solvers', 'ExchangeEconomy', 'make_economy',
    'equilibrium_prices', 'wealth_grid', 'portfolio_bounds', 'policy_value', 'value_gradient',
    'Certificate', 'best_response', 'evaluate_policy', 'certify', 'TrainResult', 'init_generator',
    'select_run', 'generator_policy', 'train_gap', 'train_npm', 'certify_runs',
]
