"""Boolean analysis and spiking networks: Fourier analysis of Boolean functions, random LIF spiking networks as Boolean functions, exact noise-sensitivity laws, surrogate-gradient training.

Chapters: noise-stable spiking networks.

Modules:

:mod:`~paperlib.boolean_analysis.boolean_fourier`
    Fourier analysis of Boolean functions f: {-1, 1}^n -> {-1, 1}.
:mod:`~paperlib.boolean_analysis.spiking`
    Random leaky integrate-and-fire (LIF) spiking networks seen as Boolean functions.
:mod:`~paperlib.boolean_analysis.spiking_exact`
    Exact noise-sensitivity laws for one random sign-LIF neuron driven by a static input.
:mod:`~paperlib.boolean_analysis.surrogate_gradient`
    Surrogate-gradient training of sign-LIF spiking classifiers, in JAX.

Every public function of these modules is also importable from this package.
"""

from . import boolean_fourier, spiking, spiking_exact, surrogate_gradient
from .boolean_fourier import (  # noqa: F401
    CONCENTRATION_CONSTANT, all_inputs, fourier_degrees, walsh_hadamard, fourier_coefficients,
    level_weights, noise_stability, noise_sensitivity, total_influence, mean_degree, tail_weight,
    noise_sensitivity_mc, noise_sensitivity_on, total_influence_mc,
)
from .spiking import (  # noqa: F401
    SPIKE_CODES, NOISE_MODELS, init_weights, lif_spikes, lif_readout, perturb,
    expected_noise_sensitivity,
)
from .spiking_exact import (  # noqa: F401
    first_step_flip_probability, readout_threshold, spike_switch_points, step_flip_probabilities,
    readout_expected_level_weights,
)
from .surrogate_gradient import (  # noqa: F401
    binarised_digits, surrogate_sign, lif_spike_count, train_lif_classifiers,
)

__all__ = [
    'boolean_fourier', 'spiking', 'spiking_exact', 'surrogate_gradient', 'CONCENTRATION_CONSTANT',
    'all_inputs', 'fourier_degrees', 'walsh_hadamard', 'fourier_coefficients', 'level_weights',
    'noise_stability', 'noise_sensitivity', 'total_influence', 'mean_degree', 'tail_weight',
    'noise_sensitivity_mc', 'noise_sensitivity_on', 'total_influence_mc', 'SPIKE_CODES', 'NOISE_MODELS',
    'init_weights', 'lif_spikes', 'lif_readout', 'perturb', 'expected_noise_sensitivity',
    'first_step_flip_probability', 'readout_threshold', 'spike_switch_points', 'step_flip_probabilities',
    'readout_expected_level_weights', 'binarised_digits', 'surrogate_sign', 'lif_spike_count',
    'train_lif_classifiers',
]
