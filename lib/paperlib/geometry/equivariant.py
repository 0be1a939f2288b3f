"""Permutation-invariant and -equivariant networks built from layer spaces, trained together.

A network on a set of ``n`` scalars ``x = (x_1, ..., x_n)`` is named by the string of its layer
spaces (Pacini et al., 2025, 2026), read from input to output, with a ReLU between consecutive layers:

- ``C``: width-1 convolution, the same affine map on every element, ``h_i -> W h_i + b``;
- ``P``: the full ``S_n``-equivariant affine layer (DeepSets / sum-pooling PointNet),
  ``h_i -> W h_i + V mean_j h_j + b``;
- ``I``: the invariant layer, ``h -> W mean_i h_i + b``;
- ``L``: a fully connected readout on the invariant vector, ``z -> W z + b``.

So ``"CI"`` computes ``sum_i f(x_i)`` (up to scale), ``"CIL"`` is DeepSets with an MLP readout,
``"CCC"`` applies one scalar MLP to every element, ``"PCC"`` computes ``g(x_i, s)`` with
``s = sum_j x_j`` and ``"CPC"`` is PointNetST. :mod:`paperlib.geometry.equivariant_floors` gives the best
any member of a restricted class can do on a target, exactly; :func:`moment_matched_pairs` and
:func:`separation_fraction` probe what a class can tell apart.
"""

from __future__ import annotations

import re
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax

from ..core._validation import as_array, check_int, check_real, is_traced
from ..models.training import train

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "LAYER_SPACES",
    "init_network",
    "apply_network",
    "train_networks",
    "moment_matched_pairs",
    "separation_fraction",
]

#: The layer spaces a network string is made of (see the module docstring).
LAYER_SPACES = ("C", "P", "I", "L")
_ARCH = re.compile(r"^[CP]+(IL*)?$")


def _check_arch(arch) -> str:
    if not isinstance(arch, str) or not _ARCH.match(arch):
        raise ValueError(
            f"arch must be a string of layer spaces: one or more of C/P, then optionally I and any "
            f"number of L (e.g. 'CI', 'CIL', 'CCC', 'PCC', 'CPC'); got {arch!r}"
        )
    return arch


def init_network(arch: str, width: int, *, rng):
    """Random parameters of the network ``arch`` with ``width`` channels in every hidden layer.

    Weights are He-normal, ``N(0, 2 / fan_in)`` (a P layer splits that variance between its two
    weight matrices); the first layer's biases are uniform on ``[-1, 1]``, so that its ReLU kinks are
    spread over the data range; other biases start at zero.

    Parameters
    ----------
    arch : str
        Layer spaces from input to output, matching ``[CP]+(IL*)?`` (module docstring).
    width : int
        Channels of every hidden layer (positive). Input and output have one channel.
    rng : numpy.random.Generator
        Keyword-only source of randomness.

    Returns
    -------
    list of tuple
        One tuple per layer: ``(W, b)`` for C, I, L and ``(W, V, b)`` for P, with ``W`` of shape
        ``(fan_in, fan_out)``.

    Raises
    ------
    ValueError
        If ``arch`` is not a valid network string or ``width`` is not a positive integer.

    Examples
    --------
    >>> import numpy as np
    >>> params = init_network("CPC", 8, rng=np.random.default_rng(0))
    >>> [tuple(p[0].shape) for p in params]
    [(1, 8), (8, 8), (8, 1)]
    """
    arch = _check_arch(arch)
    width = check_int("width", width, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    sizes = [1] + [width] * (len(arch) - 1) + [1]
    params = []
    for k, (letter, fan_in, fan_out) in enumerate(zip(arch, sizes[:-1], sizes[1:])):
        scale = np.sqrt((1.0 if letter == "P" else 2.0) / fan_in)
        W = scale * rng.standard_normal((fan_in, fan_out))
        b = rng.uniform(-1.0, 1.0, fan_out) if k == 0 else np.zeros(fan_out)
        params.append((W, scale * rng.standard_normal((fan_in, fan_out)), b) if letter == "P" else (W, b))
    return params


def apply_network(params, x, arch: str):
    """Evaluate the network ``arch`` on sets ``x``: ``(..., n)`` -> ``(..., n)`` or ``(...,)``.

    Parameters
    ----------
    params : list of tuple
        As returned by :func:`init_network` or :func:`train_networks` for the same ``arch``.
    x : array, shape (..., n)
        Sets of ``n`` scalars; leading axes are batch axes.
    arch : str
        Layer spaces from input to output.

    Returns
    -------
    array
        Shape ``(..., n)`` (equivariant: ``arch`` ends in C or P) or ``(...,)`` (invariant: ends in
        I or L).

    Raises
    ------
    ValueError
        If ``arch`` is invalid or does not match ``params``, or ``x`` (when concrete) is not a finite
        real array with at least one axis.

    Notes
    -----
    The P and I layers pool with the mean instead of the sum: for a fixed ``n`` that rescales a free
    coefficient, so the layer spaces (and every class below) are unchanged, while activations stay of
    order one for any ``n``.

    Examples
    --------
    >>> import numpy as np
    >>> params = init_network("CIL", 4, rng=np.random.default_rng(0))
    >>> x = np.array([[0.1, -0.5, 0.9]])
    >>> bool(np.allclose(apply_network(params, x, "CIL"), apply_network(params, x[:, ::-1], "CIL")))
    True
    """
    arch = _check_arch(arch)
    if not isinstance(params, (list, tuple)) or len(params) != len(arch):
        raise ValueError(f"params must hold one layer per letter of arch ({len(arch)}), got {type(params).__name__}")
    if not is_traced(x):
        x = as_array("x", x, dtype=None)
        if x.ndim < 1:
            raise ValueError(f"x must have shape (..., n), got a scalar {x!r}")
    h = jnp.asarray(x)[..., None]
    for k, (letter, p) in enumerate(zip(arch, params)):
        if letter in "CL":
            h = h @ p[0] + p[1]
        elif letter == "P":
            h = h @ p[0] + jnp.mean(h, axis=-2, keepdims=True) @ p[1] + p[2]
        else:  # "I"
            h = jnp.mean(h, axis=-2) @ p[0] + p[1]
        if k < len(arch) - 1:
            h = jax.nn.relu(h)
    return h[..., 0]


# Every network that train_networks accepts, as (first layer pooled, second layer pooled, third layer):
# a C layer is the subspace of P whose pooled weight is zero.
_SKELETON = {
    "CI": (0, 0, 0), "PI": (1, 0, 0), "CIL": (0, 0, 1), "PIL": (1, 0, 1),
    "CC": (0, 0, 0), "PC": (1, 0, 0), "CP": (0, 1, 0), "PP": (1, 1, 0),
    "CCC": (0, 0, 1), "PCC": (1, 0, 1), "CPC": (0, 1, 1), "PPC": (1, 1, 1),
}


def train_networks(archs, widths, x, y, *, steps: int, learning_rate: float = 1e-2, rng):
    """Fit one network per target by full-batch Adam on the relative squared error, all at once.

    Network ``k`` (layer spaces ``archs[k]``, hidden width ``widths[k]``) minimises
    ``mean((net_k(x) - y_k)^2) / var(y_k)`` with Adam and a cosine learning-rate decay, via
    :func:`paperlib.models.training.train`. All networks are trained in parallel in **one** compiled
    program (``jax.vmap``), which is why they share a skeleton (see Notes).

    Parameters
    ----------
    archs : sequence of str
        ``K`` networks of two or three layers, all invariant (``CI``, ``PI``, ``CIL``, ``PIL``) or
        all equivariant (``CC``, ``PC``, ``CP``, ``PP``, ``CCC``, ``PCC``, ``CPC``, ``PPC``).
    widths : sequence of int
        ``K`` hidden widths (positive).
    x : array, shape (N, n)
        Training sets.
    y : array, shape (K, N) or (K, N, n)
        One target per network: invariant ``(K, N)`` or equivariant ``(K, N, n)``.
    steps : int
        Adam steps (positive).
    learning_rate : float, default 1e-2
        Peak learning rate (positive).
    rng : numpy.random.Generator
        Keyword-only; draws the initial parameters (training is full-batch and deterministic).

    Returns
    -------
    params : list of K lists of tuple
        Parameters of each network in the format of :func:`apply_network` for ``archs[k]``.
    losses : numpy array, shape (K, steps)
        Relative training MSE before each step.

    Raises
    ------
    ValueError
        On an unsupported or mixed ``archs``, lengths that disagree, bad sizes, a non-finite ``x`` or
        ``y``, or a ``y`` whose shape does not match ``x`` and the networks' output type.

    Notes
    -----
    Each network is embedded in a skeleton of width ``max(widths)``: a C layer is a P layer whose
    pooled weight is multiplied by zero (C is a linear subspace of P, so that weight gets no
    gradient); channels beyond the network's width are multiplied by zero; a two-layer network reads
    its output from the first channel of the skeleton's second layer. Initialisation follows
    :func:`init_network` with the network's own width. The returned parameters are the network's
    sub-blocks, and :func:`apply_network` reproduces the skeleton's output from them.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).uniform(-1, 1, (64, 3))
    >>> y = np.stack([x.sum(1) ** 2, x.sum(1) ** 2])
    >>> params, losses = train_networks(["CI", "CIL"], [8, 8], x, y, steps=300, learning_rate=1e-2,
    ...                                 rng=np.random.default_rng(0))
    >>> losses.shape, np.round(losses[:, -1], 2)     # sum_i f(x_i) stalls; with a readout it does not
    ((2, 300), array([0.81, 0.02], dtype=float32))
    """
    if isinstance(archs, str) or not hasattr(archs, "__len__") or len(archs) == 0:
        raise ValueError(f"archs must be a non-empty sequence of network strings, got {archs!r}")
    archs = [_check_arch(a) for a in archs]
    bad = [a for a in archs if a not in _SKELETON]
    if bad:
        raise ValueError(f"archs must be among {sorted(_SKELETON)}; got {bad}")
    invariant = archs[0][-1] in "IL"
    if any((a[-1] in "IL") != invariant for a in archs):
        raise ValueError(f"archs must be all invariant or all equivariant, got {archs}")
    if isinstance(widths, (int, np.integer)) or not hasattr(widths, "__len__") or len(widths) != len(archs):
        raise ValueError(f"widths must be a sequence of {len(archs)} positive integers, got {widths!r}")
    widths = [check_int("widths[k]", w, minimum=1) for w in widths]
    steps = check_int("steps", steps, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    x = as_array("x", x, ndim=2)
    y = as_array("y", y, ndim=2 if invariant else 3)
    if y.shape[0] != len(archs) or y.shape[1:] != (x.shape[:1] if invariant else x.shape):
        want = "(K, N)" if invariant else "(K, N, n)"
        raise ValueError(f"y must have shape {want} with K = {len(archs)}, (N, n) = {x.shape}; got {y.shape}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    wmax = max(widths)
    flags = np.asarray([_SKELETON[a] for a in archs], np.float32)
    masks = np.asarray([[1.0] * w + [0.0] * (wmax - w) for w in widths], np.float32)
    inits = [_skeleton_init(wmax, f, w, rng) for f, w in zip(flags, widths)]
    params0 = {name: np.stack([p[name] for p in inits]) for name in inits[0]}
    sk, losses = _train(invariant, steps, learning_rate, jnp.asarray(x, jnp.float32), jnp.asarray(y, jnp.float32),
                        flags, masks, params0, jax.random.key(0))
    return [_extract(jax.tree_util.tree_map(lambda a: a[k], sk), archs[k], widths[k], invariant)
            for k in range(len(archs))], np.asarray(losses)


def _skeleton_init(wmax, flags, width, rng):
    s1 = np.sqrt(2.0 - flags[0])                       # fan_in 1; a P layer halves the variance
    s2 = np.sqrt((2.0 - flags[1]) / width)
    normal = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    return dict(W1=s1 * normal(1, wmax), V1=s1 * normal(1, wmax),
                b1=rng.uniform(-1.0, 1.0, wmax).astype(np.float32),
                W2=s2 * normal(wmax, wmax), V2=s2 * normal(wmax, wmax), b2=np.zeros(wmax, np.float32),
                W3=np.sqrt(2.0 / width) * normal(wmax, 1), b3=np.zeros(1, np.float32))


def _skeleton_apply(p, x, flags, mask, invariant):
    h = x[..., None]
    h = jax.nn.relu(h @ p["W1"] + flags[0] * jnp.mean(h, axis=-2, keepdims=True) @ p["V1"] + p["b1"]) * mask
    if invariant:
        z = jnp.mean(h, axis=-2) @ p["W2"] + p["b2"]
    else:
        z = h @ p["W2"] + flags[1] * jnp.mean(h, axis=-2, keepdims=True) @ p["V2"] + p["b2"]
    deep = (jax.nn.relu(z) * mask) @ p["W3"] + p["b3"]
    return jnp.where(flags[2] > 0, deep[..., 0], z[..., 0])


@partial(jax.jit, static_argnums=(0, 1, 2))
def _train(invariant, steps, learning_rate, x, y, flags, masks, params, key):
    optimizer = optax.adam(optax.cosine_decay_schedule(learning_rate, steps))

    def one(yt, fl, m, p0):
        var = jnp.var(yt)
        loss = lambda p, _: jnp.mean((_skeleton_apply(p, x, fl, m, invariant) - yt) ** 2) / var
        res = train(loss, p0, optimizer, steps=steps, key=key)   # full batch: the key is unused
        return res.params, res.losses

    return jax.vmap(one)(y, flags, masks, params)


def _extract(p, arch, w, invariant):
    """The sub-blocks of one skeleton that make up the network ``arch`` of width ``w``."""
    first = (p["W1"][:, :w], p["V1"][:, :w], p["b1"][:w]) if arch[0] == "P" else (p["W1"][:, :w], p["b1"][:w])
    out = w if len(arch) == 3 else 1
    if invariant or arch[1] == "C":
        second = (p["W2"][:w, :out], p["b2"][:out])
    else:
        second = (p["W2"][:w, :out], p["V2"][:w, :out], p["b2"][:out])
    layers = [first, second]
    if len(arch) == 3:
        layers.append((p["W3"][:w], p["b3"]))
    return layers


# --------------------------------------------------------------------------- separation
def moment_matched_pairs(n: int, size: int, *, rng, min_gap: float = 0.05):
    """Pairs of sets in ``[-1, 1]^n`` with equal ``sum x_i`` and ``sum x_i^2`` but different multisets.

    ``a`` is uniform on the cube; ``b`` rotates ``a`` about the diagonal ``(1, ..., 1)`` by an angle
    uniform in 20 to 100 degrees, in a random plane orthogonal to it, which keeps the first two power
    sums. Pairs with ``b`` outside the cube, or whose sorted entries differ by less than ``min_gap``
    (``b`` is then nearly a permutation of ``a``), are redrawn.

    Parameters
    ----------
    n : int
        Set size (at least 3; for n = 2 the two power sums fix the multiset).
    size : int
        Number of pairs (positive).
    rng : numpy.random.Generator
        Keyword-only source of randomness.
    min_gap : float, default 0.05
        Minimum of ``max_i |sort(a)_i - sort(b)_i|`` (positive).

    Returns
    -------
    a, b : numpy arrays, shape (size, n)

    Raises
    ------
    ValueError
        If ``n < 3``, ``size`` is not positive or ``min_gap`` is not in ``(0, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = moment_matched_pairs(3, 4, rng=np.random.default_rng(0))
    >>> bool(np.allclose(a.sum(1), b.sum(1)) and np.allclose((a**2).sum(1), (b**2).sum(1)))
    True
    """
    n = check_int("n", n, minimum=3)
    size = check_int("size", size, minimum=1)
    min_gap = check_real("min_gap", min_gap, minimum=0.0, maximum=1.0, strict_min=True)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    one = np.ones(n) / np.sqrt(n)
    out_a, out_b, have = [], [], 0
    while have < size:
        m = 4 * size
        a = rng.uniform(-1, 1, (m, n))
        g = rng.normal(size=(m, n, 2))
        g -= one[None, :, None] * np.einsum("i,mik->mk", one, g)[:, None, :]
        u = g[..., 0] / np.linalg.norm(g[..., 0], axis=1, keepdims=True)
        v = g[..., 1] - u * np.sum(u * g[..., 1], axis=1, keepdims=True)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        theta = np.deg2rad(rng.uniform(20, 100, (m, 1)))
        pa, pb = np.sum(a * u, 1, keepdims=True), np.sum(a * v, 1, keepdims=True)
        b = a + u * (pa * np.cos(theta) - pb * np.sin(theta) - pa) + v * (pa * np.sin(theta) + pb * np.cos(theta) - pb)
        gap = np.max(np.abs(np.sort(a, 1) - np.sort(b, 1)), axis=1)
        keep = (np.max(np.abs(b), axis=1) <= 1.0) & (gap >= min_gap)
        out_a.append(a[keep]), out_b.append(b[keep])
        have += int(keep.sum())
    return np.concatenate(out_a)[:size], np.concatenate(out_b)[:size]


def separation_fraction(fa, fb, *, margin: float = 1e-3) -> float:
    """Fraction of pairs whose outputs differ by more than ``margin`` (max over output entries).

    Parameters
    ----------
    fa, fb : array, shape (N,) or (N, n)
        A function's outputs on the two members of each pair.
    margin : float, default 1e-3
        Absolute threshold (positive).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the shapes differ, the arrays are empty or not finite, or ``margin`` is not positive.

    Examples
    --------
    >>> separation_fraction([0.0, 1.0, 2.0], [0.0, 1.5, 2.0])
    0.3333333333333333
    """
    fa = as_array("fa", fa, ndim=(1, 2))
    fb = as_array("fb", fb, shape=fa.shape)
    margin = check_real("margin", margin, minimum=0.0, strict_min=True)
    diff = np.abs(fa - fb).reshape(fa.shape[0], -1).max(axis=1)
    return float(np.mean(diff > margin))


_PROBE_EXEMPTIONS = {
    "apply_network": {"x": {"array_rank": "leading axes of x are batch axes: (..., n) is valid"}},
}
