"""Wide two-layer networks: random features, mean-field training, adaptive kernels after pretraining, and reconstruction of a training set from trained parameters.

Chapters: transfer in wide networks; data reconstruction law.

Modules:

:mod:`~paperlib.wide_networks.random_features`
    Random-features models, once for the whole book: the feature map, its ridge/min-norm fit, predictions.
:mod:`~paperlib.wide_networks.adaptive_kernels`
    Adaptive kernels: what pretraining does to a wide network's kernel, and what fine-tuning gains.
:mod:`~paperlib.wide_networks.mean_field_networks`
    Two-layer networks in the mean-field (µP) parameterisation, trained by gradient descent.
:mod:`~paperlib.wide_networks.reconstruction`
    Reconstructing a training set from the trained parameters of a random-features model.
:mod:`~paperlib.wide_networks.identifiability`
    When do the trained parameters of a random-features model identify its training set?

Every public function of these modules is also importable from this package.
"""

from . import random_features, adaptive_kernels, mean_field_networks, reconstruction, identifiability
from .random_features import (  # noqa: F401
    ACTIVATIONS, sample_sphere, random_feature_weights, feature_map, fit, predict, TwoLayerFit,
    train_two_layer,
)
from .adaptive_kernels import (  # noqa: F401
    spike_strength, finetune_loss_spiked, kernel_regression_risk, weight_decay_fixed_point,
    mean_field_linear_gd, readout_risk,
)
from .mean_field_networks import (  # noqa: F401
    train_linear_network, train_network,
)
from .reconstruction import (  # noqa: F401
    OUTCOMES, Reconstruction, projection_loss, reconstruct, reconstruct_first_order, matched_distance,
    matched_rows, random_guess_distance, classify_outcomes,
)
from .identifiability import (  # noqa: F401
    Problem, synthetic_problem, tangent_jacobian, zero_loss_dimension, training_error, attack_trials,
)

__all__ = [
    'random_features', 'adaptive_kernels', 'mean_field_networks', 'reconstruction', 'identifiability',
    'ACTIVATIONS', 'sample_sphere', 'random_feature_weights', 'feature_map', 'fit', 'predict',
    'TwoLayerFit', 'train_two_layer', 'spike_strength', 'finetune_loss_spiked', 'kernel_regression_risk',
    'weight_decay_fixed_point', 'mean_field_linear_gd', 'readout_risk', 'train_linear_network',
    'train_network', 'OUTCOMES', 'Reconstruction', 'projection_loss', 'reconstruct',
    'reconstruct_first_order', 'matched_distance', 'matched_rows', 'random_guess_distance',
    'classify_outcomes', 'Problem', 'synthetic_problem', 'tangent_jacobian', 'zero_loss_dimension',
    'training_error', 'attack_trials',
]
