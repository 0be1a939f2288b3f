"""Generalized :math:`D`-retrieval: the task (target, sampler) and its information-bottleneck error levels.

This private module holds the task side of :mod:`paperlib.transformers.retrieval`: our instance of
the generalized :math:`D`-retrieval target (:func:`retrieval_target`), the sampler of uniform
sequences (:func:`sample_retrieval`) and the error floors of a model with fewer heads than
retrievals (:func:`bottleneck_nmse`, :func:`token_bottleneck_nmse`). Its public names are re-exported
by :mod:`paperlib.transformers.retrieval`, where they are documented; import them from there.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_int, check_key, check_rng

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


# --------------------------------------------------------------------------------------------- task
def _target(x, num_retrievals):
    """Traceable target; ``num_retrievals`` may be a traced integer (so D can be ``vmap``-ed)."""
    p = x.shape[-1] // 2
    r, c = x[..., :p], x[..., p:]
    idx = jnp.argmin(r, axis=-2)  # (..., p): position of the smallest key r_i
    u = 2.0 * jnp.take_along_axis(c, idx[..., None, :], axis=-2)[..., 0, :] - 1.0
    active = jnp.arange(p) < num_retrievals
    kappa = 3.0 ** ((num_retrievals - 1) / 2.0)
    return jnp.sum(jnp.where(active, u, 0.0), -1) + kappa * jnp.prod(jnp.where(active, u, 1.0), -1)


_target_jit = jax.jit(_target, static_argnums=1)


def retrieval_target(x, num_retrievals: int):
    r"""The generalized :math:`D`-retrieval target of our instance.

    Each token is :math:`x=(r_1,\dots,r_P,c_1,\dots,c_P)\in[0,1]^{2P}`. For :math:`i\le D` let
    :math:`s_i^*=\arg\min_s r_i^{(s)}` (the paper's :math:`f_i(x)=r_i`) and
    :math:`u_i=2c_i^{(s_i^*)}-1`. The target is

    .. math:: y = \sum_{i=1}^{D} u_i + \kappa_D \prod_{i=1}^{D} u_i,\qquad \kappa_D = 3^{(D-1)/2}.

    Pairs :math:`D<i\le P` are distractors that the target ignores. For i.i.d. uniform tokens,
    :math:`u_i\sim U[-1,1]` independently, each term has variance :math:`1/3` and
    :math:`\operatorname{Var}(y)=(D+1)/3`.

    Parameters
    ----------
    x : array, shape (..., T, 2P)
        Token sequences (keys first, then contents).
    num_retrievals : int
        :math:`D`, with ``1 <= D <= P``.

    Returns
    -------
    array, shape (...)

    Raises
    ------
    ValueError
        If ``x`` has fewer than 2 dims, an odd last axis, NaNs, or ``num_retrievals`` is out of range.

    References
    ----------
    Yu et al. (2026), the generalized D-retrieval task (our choice of :math:`f_i` and outer function;
    the paper's exact synthetic instance was not available to us).

    Examples
    --------
    >>> x = np.array([[[0.2, 0.9], [0.1, 0.3], [0.5, 0.6]]])   # T = 3 tokens (r_1, c_1)
    >>> np.round(np.asarray(retrieval_target(x, 1), dtype=float), 4).tolist()
    [-0.8]
    """
    xa = as_array("x", x, dtype=None)
    if xa.ndim < 2 or xa.shape[-1] % 2 or xa.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., T, 2P) with an even, positive last axis; got {xa.shape}")
    if xa.shape[-2] < 1:
        raise ValueError("x must contain at least one token (axis -2)")
    check_int("num_retrievals", num_retrievals, minimum=1, maximum=xa.shape[-1] // 2)
    return _target_jit(jnp.asarray(x), num_retrievals)


def sample_retrieval(key, batch: int, seq_len: int, num_retrievals: int, *, num_pairs: int | None = None):
    """Draw ``batch`` i.i.d. uniform sequences and their D-retrieval targets.

    Parameters
    ----------
    key : jax.random key
    batch, seq_len : int
        :math:`B\\ge1` sequences of :math:`T\\ge1` tokens.
    num_retrievals : int
        :math:`D\\ge1`.
    num_pairs : int, optional
        :math:`P\\ge D` (key, content) pairs per token; default ``D``.

    Returns
    -------
    x : array, shape (B, T, 2P), uniform on [0, 1]
    y : array, shape (B,), see :func:`retrieval_target`

    Raises
    ------
    ValueError
        On non-positive sizes or ``num_pairs < num_retrievals``.
        Also if ``key`` is not a JAX PRNG key.

    Examples
    --------
    >>> x, y = sample_retrieval(jax.random.key(0), 2, 3, 2)
    >>> x.shape, y.shape
    ((2, 3, 4), (2,))
    """
    key = check_key("key", key)
    check_int("batch", batch, minimum=1)
    check_int("seq_len", seq_len, minimum=1)
    check_int("num_retrievals", num_retrievals, minimum=1)
    p = num_retrievals if num_pairs is None else check_int("num_pairs", num_pairs, minimum=num_retrievals)
    x = jax.random.uniform(key, (batch, seq_len, 2 * p))
    return x, _target(x, num_retrievals)


def bottleneck_nmse(num_heads: int, num_retrievals: int) -> float:
    r"""Normalised MSE of the best predictor that sees only :math:`\min(h, D)` of the :math:`D` items.

    If the model can retrieve only :math:`h<D` of the :math:`u_i` (each head at most one), the best it can
    do is the conditional mean :math:`\sum_{i\in S} u_i` (:math:`|S|=h`; the product term has conditional
    mean 0 because a missing :math:`u_j` is symmetric). The residual is :math:`D-h` sum terms plus the
    product term, each of variance :math:`1/3`, so

    .. math:: \mathrm{NMSE}(h) = \frac{D+1-h}{D+1}\quad (h<D), \qquad 0 \quad (h\ge D).

    Parameters
    ----------
    num_heads, num_retrievals : int
        :math:`h\ge1`, :math:`D\ge1`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On non-positive arguments.

    Examples
    --------
    >>> bottleneck_nmse(1, 3), bottleneck_nmse(3, 3)
    (0.75, 0.0)
    """
    h = check_int("num_heads", num_heads, minimum=1)
    d = check_int("num_retrievals", num_retrievals, minimum=1)
    return (d + 1 - h) / (d + 1) if h < d else 0.0


def token_bottleneck_nmse(num_heads: int, num_retrievals: int, seq_len: int, *, n_samples: int = 200_000,
                          rng: np.random.Generator | None = None) -> float:
    r"""Monte Carlo NMSE of the Bayes predictor that sees the *whole* tokens :math:`x^{(s_1^*)},\dots,x^{(s_h^*)}`.

    :func:`bottleneck_nmse` assumes each head delivers only its item :math:`u_i`. A head that copies
    the whole retrieved token also sees that token's other keys and contents: if the token happens to
    minimise a missing key :math:`r_j` too (probability about :math:`1/T`), it carries :math:`u_j`. Given
    the retrieved tokens, let :math:`\rho_j` be the smallest :math:`r_j` among them and :math:`m` the number
    of distinct retrieved tokens; the other :math:`T-m` keys :math:`r_j` are still i.i.d. uniform, so that
    token is the minimiser of :math:`r_j` with probability :math:`q_j=(1-\rho_j)^{T-m}`, and
    :math:`\mathbb E[u_j\mid\cdot] = q_j(2c_j-1)` with :math:`c_j` its content. The Bayes predictor is
    :math:`\sum_i \bar u_i + \kappa_D\prod_i \bar u_i` with :math:`\bar u_i` these conditional means
    (independent across :math:`j`). This is a floor below :func:`bottleneck_nmse` for a model whose
    heads retrieve one token each; for :math:`h=1` it equals
    :math:`[(D-1)(1-\gamma)+1-\gamma^{D-1}]/(D+1)` with :math:`\gamma=1/(2T-1)`. Our derivation, not the paper's.

    Parameters
    ----------
    num_heads, num_retrievals, seq_len : int
        :math:`h\ge1`, :math:`D\ge1`, :math:`T\ge1`.
    n_samples : int, default 200_000
        Monte Carlo sequences (relative standard error about :math:`\sqrt{2/n}` on the variance ratio).
    rng : numpy Generator, optional
        Source of randomness; default ``np.random.default_rng(0)``.

    Returns
    -------
    float
        0 when :math:`h\ge D`.

    Raises
    ------
    ValueError
        On non-positive sizes.
        Also if ``rng`` is not a numpy.random.Generator.

    Examples
    --------
    >>> round(token_bottleneck_nmse(1, 2, 4, n_samples=2000, rng=np.random.default_rng(0)), 3)
    0.595
    """
    if rng is not None:
        rng = check_rng("rng", rng)
    h = check_int("num_heads", num_heads, minimum=1)
    d = check_int("num_retrievals", num_retrievals, minimum=1)
    t = check_int("seq_len", seq_len, minimum=1)
    n = check_int("n_samples", n_samples, minimum=2)
    if h >= d:
        return 0.0
    rng = np.random.default_rng(0) if rng is None else rng
    x = rng.uniform(size=(n, t, 2 * d))
    r, c = x[..., :d], x[..., d:]
    idx = r.argmin(1)                                               # (n, D) minimiser of each key
    u = 2.0 * np.take_along_axis(c, idx[:, None, :], 1)[:, 0, :] - 1.0
    kappa = 3.0 ** ((d - 1) / 2)
    y = u.sum(1) + kappa * u.prod(1)
    ret = idx[:, :h]                                                # tokens retrieved by the h heads
    srt = np.sort(ret, axis=1)
    m = 1 + np.count_nonzero(np.diff(srt, axis=1), axis=1)          # distinct retrieved tokens
    rows = np.arange(n)[:, None]
    r_ret = r[rows, ret, :]                                         # (n, h, D) keys of retrieved tokens
    best = r_ret.argmin(1)                                          # (n, D) which retrieved token has smallest r_j
    rho = np.take_along_axis(r_ret, best[:, None, :], 1)[:, 0, :]
    tok = np.take_along_axis(ret, best, 1)                          # (n, D) token index
    c_tok = np.take_along_axis(c, tok[:, None, :], 1)[:, 0, :]      # content c_j of that token
    ubar = (1.0 - rho) ** (t - m)[:, None] * (2.0 * c_tok - 1.0)
    ubar[:, :h] = u[:, :h]
    pred = ubar.sum(1) + kappa * ubar.prod(1)
    return float(np.mean((y - pred) ** 2) / np.var(y))
