"""Distributed and collaborative optimisation: FedExProx and Moreau envelopes of quadratic clients, personalized collaborative learning over heterogeneous multi-agent linear systems.

Chapters: FedExProx versus GD; personalized collaboration.

Modules:

:mod:`~paperlib.distributed.fedexprox`
    FedExProx on quadratic clients: proximal steps, server extrapolation, and the rates that count them.
:mod:`~paperlib.distributed.moreau`
    Moreau envelopes of quadratic clients, and the iteration counts and costs they set for FedExProx.
:mod:`~paperlib.distributed.collaborative_learning`
    Personalized collaborative learning: AffPCL against independent and federated learning.
:mod:`~paperlib.distributed.multi_agent_systems`
    Heterogeneous multi-agent linear systems: the instances of personalized collaborative learning.

Every public function of these modules is also importable from this package.
"""

from . import fedexprox, moreau, collaborative_learning, multi_agent_systems
from .fedexprox import (  # noqa: F401
    prox_quadratic, local_gd_prox, fedexprox_step, round_matrix, count_rounds, sweep_rounds,
    tolerance_run, run_fedexprox, hinge_clients, smooth_hinge_loss, hinge_rounds,
)
from .moreau import (  # noqa: F401
    quadratic_clients, diagonal_clients, moreau_hessian, spectral_constants, range_basis, local_steps,
    sampled_smoothness, theory_rounds, old_bound_factor,
)
from .collaborative_learning import (  # noqa: F401
    METHODS, simulate, asymptotic_mse, pooled_ratio, affinity_grid,
)
from .multi_agent_systems import (  # noqa: F401
    FiniteSystem, GaussianSystem, tv_system, free_ride_system, gaussian_system, solutions,
    heterogeneity,
)

__all__ = [
    'fedexprox', 'moreau', 'collaborative_learning', 'multi_agent_systems', 'prox_quadratic',
    'local_gd_prox', 'fedexprox_step', 'round_matrix', 'count_rounds', 'sweep_rounds', 'tolerance_run',
    'run_fedexprox', 'hinge_clients', 'smooth_hinge_loss', 'hinge_rounds', 'quadratic_clients',
    'diagonal_clients', 'moreau_hessian', 'spectral_constants', 'range_basis', 'local_steps',
    'sampled_smoothness', 'theory_rounds', 'old_bound_factor', 'METHODS', 'simulate', 'asymptotic_mse',
    'pooled_ratio', 'affinity_grid', 'FiniteSystem', 'GaussianSystem', 'tv_system', 'free_ride_system',
    'gaussian_system', 'solutions', 'heterogeneity',
]
