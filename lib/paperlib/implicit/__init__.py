"""Implicit models: learned fixed-point operators, deep equilibrium models with a Lipschitz budget, plug-and-play deblurring, Lipschitz floors of explicit models.

Chapters: implicit models.

Modules:

:mod:`~paperlib.implicit.implicit_models`
    Implicit models: fixed points of a learned operator, iterated at test time.
:mod:`~paperlib.implicit.deep_equilibrium`
    A deep equilibrium operator with a Lipschitz budget in its input, trained through its fixed point.
:mod:`~paperlib.implicit.lipschitz`
    Lipschitz constants measured on grids, and the error floor they impose on explicit models.
:mod:`~paperlib.implicit.plug_and_play`
    Plug-and-play proximal gradient for deblurring: the paper's imaging implicit model, at 8 x 8 pixels.

Every public function of these modules is also importable from this package.
"""

from . import implicit_models, deep_equilibrium, lipschitz, plug_and_play
from .implicit_models import (  # noqa: F401
    picard_iterates, fixed_point, operator_partials, adaptive_step_iterates, paper_toy_target,
    paper_toy_step,
)
from .deep_equilibrium import (  # noqa: F401
    capped_operator_init, capped_operator, fit_capped_operator,
)
from .lipschitz import (  # noqa: F401
    grid_lipschitz, lipschitz_floor, best_lipschitz_fit, reciprocal_floor, perturbation_lipschitz,
    capped_mlp_init, capped_mlp, fit_capped_mlp,
)
from .plug_and_play import (  # noqa: F401
    gaussian_blur, pnp_operator, spectral_filter, linear_response, fit_deblurring, psnr,
)

__all__ = [
    'implicit_models', 'deep_equilibrium', 'lipschitz', 'plug_and_play', 'picard_iterates', 'fixed_point',
    'operator_partials', 'adaptive_step_iterates', 'paper_toy_target', 'paper_toy_step',
    'capped_operator_init', 'capped_operator', 'fit_capped_operator', 'grid_lipschitz', 'lipschitz_floor',
    'best_lipschitz_fit', 'reciprocal_floor', 'perturbation_lipschitz', 'capped_mlp_init', 'capped_mlp',
    'fit_capped_mlp', 'gaussian_blur', 'pnp_operator', 'spectral_filter', 'linear_response',
    'fit_deblurring', 'psnr',
]
