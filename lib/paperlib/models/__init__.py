"""Model code shared by several chapters: dense ReLU MLPs, attention layers, the jitted optax training loop.

Chapters: attention heads, test-time scaling, softmax vs linear attention, fast attention, inherently serial problems, score smoothing, data reconstruction, implicit models, transfer learning, equivariant networks.

Modules:

:mod:`~paperlib.models.training`
    A jitted training loop: optax optimiser, ``lax.scan`` over steps, fresh minibatch keys.
:mod:`~paperlib.models.mlp`
    Dense ReLU multilayer perceptrons, once for the whole book.
:mod:`~paperlib.models.attention`
    Attention, once for the whole book.

Every public function of these modules is also importable from this package.
"""

from . import training, mlp, attention
from .training import (  # noqa: F401
    TrainResult, train,
)
from .mlp import (  # noqa: F401
    mlp_init, mlp_apply, mlp_flops,
)
from .attention import (  # noqa: F401
    softmax_attention, chunked_softmax_attention, linear_attention, MultiHeadParams, init_multi_head,
    multi_head_attention,
)

__all__ = [
    'training', 'mlp', 'attention', 'TrainResult', 'train', 'mlp_init', 'mlp_apply', 'mlp_flops',
    'softmax_attention', 'chunked_softmax_attention', 'linear_attention', 'MultiHeadParams',
    'init_multi_head', 'multi_head_attention',
]
