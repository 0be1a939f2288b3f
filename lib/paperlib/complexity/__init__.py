"""Inherently serial problems: Rule 110 light cones and fixed-depth, diffusion and sequential models, with the chapter's controls.

Chapters: inherently serial problems.

Modules:

:mod:`~paperlib.complexity.serial`
    Inherently serial problems: Rule 110 light cones, fixed-depth vs diffusion vs sequential models.
:mod:`~paperlib.complexity.serial_controls`
    Controls for the chapter *inherently_serial_problems*: end-to-end sequential model, XLA FLOP counts.

Every public function of these modules is also importable from this package.
"""

from . import serial, serial_controls
from .serial import (  # noqa: F401
    rule_table, exact_rule_params, ca_step, centre_trajectory, light_cone_label, make_batch, mlp_init,
    mlp_apply, mlp_flops, train_local_rule, serial_predict, serial_predict_depths, serial_flops,
    train_oneshot, oneshot_logits, oneshot_flops, train_denoiser, denoise, diffusion_sample,
    diffusion_flops,
)
from .serial_controls import (  # noqa: F401
    soft_rollout, train_serial_end_to_end, oneshot_learning_curve, xla_flop_counts,
)

__all__ = [
    'serial', 'serial_controls', 'rule_table', 'exact_rule_params', 'ca_step', 'centre_trajectory',
    'light_cone_label', 'make_batch', 'mlp_init', 'mlp_apply', 'mlp_flops', 'train_local_rule',
    'serial_predict', 'serial_predict_depths', 'serial_flops', 'train_oneshot', 'oneshot_logits',
    'oneshot_flops', 'train_denoiser', 'denoise', 'diffusion_sample', 'diffusion_flops', 'soft_rollout',
    'train_serial_end_to_end', 'oneshot_learning_curve', 'xla_flop_counts',
]
