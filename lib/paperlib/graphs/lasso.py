"""The lasso by FISTA, batched over right-hand sides and designs (one jitted, vmapped program).

:func:`lasso_fista` is the l1-constrained estimator the GNN minimax chapter fits to the hard
instances of Theorem 1 (:mod:`paperlib.graphs.gnn_hard_instances`); any chapter may use it as an
independent lasso solver.

References
----------
.. [#lasso-1] A. Beck and M. Teboulle, "A Fast Iterative Shrinkage-Thresholding Algorithm for Linear
   Inverse Problems", SIAM J. Imaging Sciences 2(1), 2009.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from ..core._validation import as_array, check_int, check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = ["lasso_fista"]


@jax.jit
def _fista_setup(Z, Y):
    """Per-problem quantities of FISTA that depend on the sample size ``n``: ``c = ZᵀY / n``, the
    gradient operator (the d x d Gram matrix ``ZᵀZ / n`` when ``n >= d``, else ``Z`` itself) and the
    step ``1 / L``; shapes (S, n, d), (S, n, K) -> (S, d, K), (S, d, d) or (S, n, d), (S,)."""

    def one(Z, Y):
        n, d = Z.shape
        c = Z.T @ Y / n
        if n >= d:  # gradient through the d x d Gram matrix
            G = Z.T @ Z / n
            L = jnp.linalg.eigvalsh(G)[-1]
            op = G
        else:  # cheaper through Z itself when n < d
            L = jnp.linalg.eigvalsh(Z @ Z.T / n)[-1]
            op = Z
        return c, op, 1.0 / jnp.maximum(L, 1e-12)

    return jax.vmap(one)(Z, Y)


@partial(jax.jit, static_argnames=("iters",))
def _fista_iterate(c, op, step, lam, *, iters):
    """The FISTA iterations for a batch of lasso problems set up by :func:`_fista_setup`.

    Compiled apart from the setup so that, when ``n >= d``, one program (shapes (S, d, K), (S, d, d))
    serves every sample size ``n``; shapes (S, d, K), (S, d, d) or (S, n, d), (S,) -> (S, d, K).
    """

    def one(c, op, step):
        if op.shape[0] == op.shape[1] == c.shape[0]:  # op = G = ZᵀZ / n (n >= d)
            grad = lambda V: op @ V - c  # noqa: E731
        else:  # op = Z (n < d)
            grad = lambda V: op.T @ (op @ V) / op.shape[0] - c  # noqa: E731

        def body(_, state):
            B, V, t = state
            U = V - step * grad(V)
            B_new = jnp.sign(U) * jnp.maximum(jnp.abs(U) - step * lam, 0.0)
            t_new = 0.5 * (1.0 + jnp.sqrt(1.0 + 4.0 * t * t))
            V = B_new + ((t - 1.0) / t_new) * (B_new - B)
            return B_new, V, t_new

        B0 = jnp.zeros_like(c)
        B, _, _ = jax.lax.fori_loop(0, iters, body, (B0, B0, jnp.ones((), c.dtype)))
        return B

    return jax.vmap(one)(c, op, step)


def _fista_batched(Z, Y, lam, *, iters):
    """FISTA for a batch of independent lasso problems; shapes (S, n, d), (S, n, K) -> (S, d, K)."""
    c, op, step = _fista_setup(Z, Y)
    return _fista_iterate(c, op, step, lam, iters=iters)


def lasso_fista(Z, Y, lam: float, *, iters: int = 200) -> np.ndarray:
    """l1-penalised least squares for several right-hand sides at once, by FISTA.

    Minimises ``(1/2n) ||Y - Z B||_F^2 + lam ||B||_1`` over ``B ∈ R^{d×K}`` (each column is an
    independent lasso sharing the design ``Z``), with step ``1/L``, ``L`` the largest eigenvalue of
    ``ZᵀZ / n``, and Nesterov momentum (Beck & Teboulle 2009). A leading batch axis solves
    independent designs at once (one jitted, vmapped XLA program).

    Parameters
    ----------
    Z : array_like, shape (n, d) or (S, n, d)
        Design (graph-level features), optionally a batch of ``S`` designs.
    Y : array_like, shape (n, K) or (S, n, K)
        Responses, one column per target.
    lam : float
        Penalty, ``>= 0``.
    iters : int, default 200
        Number of FISTA iterations, ``>= 1``.

    Returns
    -------
    ndarray, shape (d, K) or (S, d, K)
        Estimated coefficients (numpy, in JAX's default float precision).

    Raises
    ------
    ValueError
        If shapes disagree, entries are not finite, ``lam < 0`` or ``iters < 1``.

    Notes
    -----
    The estimator is one member of the GNN class F_GNN(v_s, L) of the paper (a linear readout of
    aggregated features, which a ReLU layer represents through ``ReLU(z) - ReLU(-z) = z``); Theorem 1
    bounds *every* estimator's worst-case risk from below, so any reasonable one can be used to see
    the rate. Runs in JAX: thin matrix products inside a Python loop are slow under multi-threaded
    BLAS on a busy machine.

    Examples
    --------
    >>> Z = np.eye(4) * 2.0                      # n = d = 4, ZᵀZ/n = I
    >>> Y = Z @ np.array([[1.0], [0.1], [0.0], [-2.0]])
    >>> np.round(lasso_fista(Z, Y, 0.5), 3).ravel().tolist()   # soft-threshold by 0.5
    [0.5, 0.0, 0.0, -1.5]
    """
    Z = as_array("Z", Z, ndim=(2, 3), min_size=1)
    batched = Z.ndim == 3
    Y = as_array("Y", Y, ndim=Z.ndim, shape=Z.shape[:-1] + (None,))
    lam = check_real("lam", lam, minimum=0.0)
    iters = check_int("iters", iters, minimum=1)
    if not batched:
        Z, Y = Z[None], Y[None]
    B = np.asarray(_fista_batched(jnp.asarray(Z), jnp.asarray(Y), lam, iters=iters))
    return B if batched else B[0]
