"""The attack of :mod:`paperlib.wide_networks.reconstruction`: the optimisers and their result.

This private module holds the role of the attacker's optimisers: the result container
``Reconstruction``, the problem check ``_check_problem`` shared with the projection loss, the batched
residual of the projection loss and its Jacobian (``_residual``), the damped Gauss-Newton attack
``reconstruct`` and the authors' first-order attack ``reconstruct_first_order`` (SGD with momentum
through optax), with the ridge ``_RIDGE`` they share with the objective. Everything here is
re-exported by the public module :mod:`paperlib.wide_networks.reconstruction`, which documents it;
import it from there.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_real
from ._reconstruction_matching import _check_rng, matched_distance  # noqa: F401  (matched_distance: docstring examples)
from .random_features import _act, _act_derivative, _check_activation, _check_key

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

_RIDGE = 1e-14  # relative ridge on A = Φ̂Φ̂ᵀ: keeps the solve defined when two candidate rows coincide


class Reconstruction(NamedTuple):
    """Output of :func:`reconstruct` and :func:`reconstruct_first_order`.

    Attributes
    ----------
    X_hat : ndarray, shape (m, n, d) or (n, d)
        The candidate of lowest projection loss for each problem (rows on the ``√d``-sphere).
    loss : ndarray, shape (m,) or ()
        Its projection loss.
    restart_loss : ndarray, shape (m, restarts) or (restarts,)
        Final loss of every restart (restarts of a problem stop where they are once one of them
        reaches the tolerance).
    iterations : int
        Iterations (Gauss-Newton) or steps (first order) actually run.
    """

    X_hat: np.ndarray
    loss: np.ndarray
    restart_loss: np.ndarray
    iterations: int


def _check_problem(theta, V):
    """theta (p,) or (m, p); V (p, d) or (m, p, d) -> float64 arrays with a leading batch axis."""
    theta = as_array("theta", theta, ndim=(1, 2), min_size=1)
    V = as_array("V", V, ndim=(2, 3), min_size=1)
    batched = theta.ndim == 2
    if V.ndim != theta.ndim + 1:
        raise ValueError(
            f"V must have shape (p, d) for theta of shape (p,), or (m, p, d) for theta of shape (m, p); "
            f"got V {V.shape} and theta {theta.shape}"
        )
    if V.shape[:-1] != theta.shape:
        raise ValueError(f"V must have shape {theta.shape + (V.shape[-1],)} to match theta {theta.shape}, got {V.shape}")
    norms = np.linalg.norm(theta, axis=-1)
    if np.any(norms == 0):
        raise ValueError("theta must be nonzero (a zero parameter vector carries no information)")
    if not batched:
        theta, V = theta[None], V[None]
    return theta, V, batched


def _residual(U, theta, V, activation, jacobian):
    """Residual ``r = θ - Φ̂ᵀA⁻¹Φ̂θ`` (and its Jacobian) for unit rows ``U``; all inputs batched.

    Shapes: ``U`` (B, n, d) with unit rows, ``X̂ = √d U``; ``theta`` (B, p); ``V`` (B, p, d).
    The Jacobian with respect to ``U`` (flattened, shape (B, p, n·d)) is

        ∂r/∂x̂_i = -a_i (I - P) D_i V - (Φ̂ᵀA⁻¹)_{:, i} (rᵀ D_i V),   D_i = diag σ'(V x̂_i),

    with ``a = A⁻¹Φ̂θ``, chained through ``x̂_i = √d u_i/‖u_i‖`` (so ``∂x̂_i/∂u_i = √d (I - u_i u_iᵀ)`` at
    ``‖u_i‖ = 1``). At a zero of ``r`` the second term vanishes.
    """
    n, d = U.shape[1], U.shape[2]
    Z = np.sqrt(d) * np.matmul(U, np.swapaxes(V, 1, 2))  # (B, n, p)
    Phi = _act(Z, activation, np)
    A = np.matmul(Phi, np.swapaxes(Phi, 1, 2))
    A += (_RIDGE * np.trace(A, axis1=1, axis2=2) / n)[:, None, None] * np.eye(n)
    Ainv = np.linalg.inv(A)
    a = np.matmul(Ainv, np.matmul(Phi, theta[:, :, None]))[..., 0]  # (B, n)
    r = theta - np.matmul(a[:, None, :], Phi)[:, 0]  # (B, p)
    if not jacobian:
        return r
    Dp = _act_derivative(Z, activation, np)
    Bm = np.matmul(np.swapaxes(Phi, 1, 2), Ainv)  # Φ̂ᵀA⁻¹, (B, p, n)
    G = Dp[..., None] * V[:, None]  # D_i V, (B, n, p, d)
    C = np.matmul(Phi[:, None], G)  # Φ̂ D_i V, (B, n, n, d)
    w = np.matmul(r[:, None, None, :], G)[:, :, 0, :]  # rᵀ D_i V, (B, n, d)
    J = -a[:, :, None, None] * (G - np.matmul(Bm[:, None], C))
    J -= np.swapaxes(Bm, 1, 2)[..., None] * w[:, :, None, :]
    J -= np.matmul(J, U[..., None]) * U[:, :, None, :]  # tangent projection (I - u uᵀ)
    J *= np.sqrt(d)
    return r, np.swapaxes(J, 1, 2).reshape(J.shape[0], J.shape[2], n * d)


def reconstruct(
    theta,
    V,
    n: int,
    *,
    activation: str = "relu",
    restarts: int = 16,
    iterations: int = 60,
    tol: float = 1e-20,
    rng: np.random.Generator,
) -> Reconstruction:
    """The reconstruction attack: minimise the projection loss over ``n`` points on the ``√d``-sphere.

    For each problem (a trained ``θ`` with its ``V``) the attack starts ``restarts`` candidates
    ``X̂`` at random Gaussian points and runs damped Gauss-Newton (Levenberg-Marquardt) on the
    residual ``r(X̂) = (I - P_Φ̂)θ/‖θ‖``, re-projecting every row on the sphere after each step. It
    returns, per problem, the candidate of **lowest loss**: the attacker never sees the true data.
    A problem stops as soon as one of its restarts reaches ``loss <= tol``.

    Parameters
    ----------
    theta : array_like, shape (p,) or (m, p)
        Trained output weights (``m`` independent problems of equal shape may be batched).
    V : array_like, shape (p, d) or (m, p, d)
        First-layer weights, known to the attacker.
    n : int
        Number of training points the attacker looks for, ``n >= 1``.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The model's nonlinearity.
    restarts : int, default 16
        Random initialisations per problem, ``>= 1``.
    iterations : int, default 60
        Maximum Gauss-Newton iterations, ``>= 1``.
    tol : float, default 1e-20
        Loss at which a problem is declared solved, in ``[0, 1)``.
    rng : numpy.random.Generator
        Source of the random initialisations (keyword-only).

    Returns
    -------
    Reconstruction
        ``X_hat`` (m, n, d) or (n, d); ``loss`` (m,) or (); ``restart_loss`` (m, restarts) or
        (restarts,); ``iterations``.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, a size is not a positive integer, ``tol`` is
        outside ``[0, 1)``, the activation is unknown or ``rng`` is not a Generator.

    Notes
    -----
    The paper's objective, a different optimiser. The authors run SGD with momentum 0.9 (learning
    rate 20 on synthetic data, 2000 on CIFAR-10) until the float32 loss is below ``1e-7``
    (:func:`reconstruct_first_order` follows them). Gauss-Newton uses the least-squares structure of
    the loss and reaches ``1e-25`` in tens of iterations, so that an exact solution and a local
    minimum are told apart by orders of magnitude. Each step solves
    ``(JᵀJ + μ diag(JᵀJ)) δ = -Jᵀr``; ``μ`` is divided by 3 after a decrease of the loss (down to
    ``1e-12``) and multiplied by 4 otherwise; a restart whose ``μ`` exceeds ``1e12`` has stalled and
    stops. The
    authors' ReLU attack replaces σ' by 0.02 on negative pre-activations (a leaky surrogate); we use
    the exact derivative.

    References
    ----------
    Iurada et al. (2026), Section 4 (reconstruction objective) and the authors' ``rf_experiments.py``.

    Examples
    --------
    >>> X = np.array([[1.0, 1.0], [1.0, -1.0]])               # n = 2 points on the √2-circle
    >>> V = np.random.default_rng(0).normal(size=(40, 2)) / np.sqrt(2)
    >>> Phi = np.maximum(X @ V.T, 0) + np.tanh(X @ V.T)
    >>> theta = np.linalg.pinv(Phi) @ np.array([1.0, -1.0])
    >>> res = reconstruct(theta, V, 2, activation="relu_tanh", restarts=4, rng=np.random.default_rng(1))
    >>> bool(res.loss < 1e-20), round(matched_distance(X, res.X_hat), 6)
    (True, 0.0)
    """
    activation = _check_activation(activation)
    theta, V, batched = _check_problem(theta, V)
    n = check_int("n", n, minimum=1)
    restarts = check_int("restarts", restarts, minimum=1)
    iterations = check_int("iterations", iterations, minimum=1)
    tol = check_real("tol", tol, minimum=0.0, maximum=1.0, strict_max=True)
    rng = _check_rng(rng)
    m, p = theta.shape
    d = V.shape[2]
    theta = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    B = m * restarts
    problem = np.repeat(np.arange(m), restarts)
    U = rng.standard_normal((B, n, d))
    U /= np.linalg.norm(U, axis=2, keepdims=True)
    cost = np.full(B, np.inf)
    mu = np.full(B, 1e-3)
    active = np.arange(B)
    diag = np.arange(n * d)
    done = 0
    while active.size and done < iterations:
        done += 1
        Ua, ta, Va, ma = U[active], theta[problem[active]], V[problem[active]], mu[active]
        r, J = _residual(Ua, ta, Va, activation, True)
        c = np.sum(r * r, axis=1)
        H = np.matmul(np.swapaxes(J, 1, 2), J)
        g = np.matmul(r[:, None, :], J)[:, 0]
        dH = H[:, diag, diag]
        floor = np.maximum(1e-12 * dH.mean(axis=1, keepdims=True), 1e-30)  # keeps H + damping invertible
        H[:, diag, diag] += ma[:, None] * (dH + floor)
        try:
            step = -np.linalg.solve(H, g[..., None])[..., 0]
        except np.linalg.LinAlgError:  # an exactly singular system (degenerate candidates): least squares
            step = -np.matmul(np.linalg.pinv(H), g[..., None])[..., 0]
        Un = Ua + step.reshape(-1, n, d)
        Un /= np.linalg.norm(Un, axis=2, keepdims=True)
        rn = _residual(Un, ta, Va, activation, False)
        cn = np.sum(rn * rn, axis=1)
        better = cn < c
        U[active] = np.where(better[:, None, None], Un, Ua)
        cost[active] = np.where(better, cn, c)
        mu[active] = np.maximum(np.where(better, ma / 3.0, ma * 4.0), 1e-12)
        solved = np.zeros(m, bool)
        np.logical_or.at(solved, problem[active], cost[active] <= tol)
        active = active[~solved[problem[active]] & (mu[active] < 1e12)]
    restart_loss = cost.reshape(m, restarts)
    best = np.argmin(restart_loss, axis=1)
    X_hat = np.sqrt(d) * U.reshape(m, restarts, n, d)[np.arange(m), best]
    loss = restart_loss[np.arange(m), best]
    if not batched:
        return Reconstruction(X_hat[0], loss[0], restart_loss[0], done)
    return Reconstruction(X_hat, loss, restart_loss, done)


def reconstruct_first_order(
    theta,
    V,
    n: int,
    *,
    activation: str = "relu",
    learning_rate: float = 1.0,
    momentum: float = 0.9,
    steps: int = 5000,
    restarts: int = 1,
    key,
) -> Reconstruction:
    """The authors' attack: SGD with momentum on the projection loss, through optax.

    Rows are parameterised as ``x̂_i = √d u_i/‖u_i‖`` (equivalent to the authors' re-projection on
    the sphere after every step) and ``optax.sgd(learning_rate, momentum)`` runs for ``steps`` steps
    inside :func:`paperlib.models.training.train` (one ``lax.scan``); restarts run in parallel under
    ``jax.vmap``. The loss trajectories are returned in ``restart_loss``.

    Parameters
    ----------
    theta : array_like, shape (p,)
        Trained output weights.
    V : array_like, shape (p, d)
        First-layer weights.
    n : int
        Number of points to reconstruct, ``n >= 1``.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The model's nonlinearity.
    learning_rate : float, default 1.0
        SGD step size, ``> 0``.
    momentum : float, default 0.9
        Heavy-ball momentum in ``[0, 1)`` (the authors use 0.9).
    steps : int, default 5000
        Number of steps, ``>= 1``.
    restarts : int, default 1
        Independent random initialisations, run in parallel (``jax.vmap``); the one of lowest final
        loss is returned.
    key : jax.random key
        Draws the initial points (keyword-only).

    Returns
    -------
    Reconstruction
        ``X_hat`` (n, d); ``loss`` (); ``restart_loss`` (restarts, steps), the loss of every
        restart at every step; ``iterations`` = ``steps``.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, a size or rate is out of range, the
        activation is unknown, or ``key`` is not a JAX key.

    Notes
    -----
    Runs in float64 (``jax.enable_x64``) whatever the global JAX setting; the authors run float32
    and stop at a loss of ``1e-7``. The ReLU derivative is exact (the authors use a 0.02 leak).

    Examples
    --------
    >>> import jax
    >>> X = np.array([[1.0, 1.0], [1.0, -1.0]])
    >>> V = np.random.default_rng(0).normal(size=(40, 2)) / np.sqrt(2)
    >>> Phi = np.maximum(X @ V.T, 0) + np.tanh(X @ V.T)
    >>> theta = np.linalg.pinv(Phi) @ np.array([1.0, -1.0])
    >>> res = reconstruct_first_order(theta, V, 2, activation="relu_tanh", learning_rate=0.5,
    ...                               steps=3000, key=jax.random.key(0))
    >>> bool(res.loss < 1e-12), round(matched_distance(X, res.X_hat), 4)
    (True, 0.0)
    """
    import jax
    import jax.numpy as jnp
    import optax

    from ..models.training import train

    activation = _check_activation(activation)
    theta = as_array("theta", theta, ndim=1, min_size=1)
    V = as_array("V", V, ndim=2, min_size=1)
    if V.shape[0] != theta.shape[0]:
        raise ValueError(f"V must have p = len(theta) = {theta.shape[0]} rows, got shape {V.shape}")
    if np.linalg.norm(theta) == 0:
        raise ValueError("theta must be nonzero (a zero parameter vector carries no information)")
    n = check_int("n", n, minimum=1)
    learning_rate = check_real("learning_rate", learning_rate, minimum=0.0, strict_min=True)
    momentum = check_real("momentum", momentum, minimum=0.0, maximum=1.0, strict_max=True)
    steps = check_int("steps", steps, minimum=1)
    restarts = check_int("restarts", restarts, minimum=1)
    key = _check_key(key)
    d = V.shape[1]
    with jax.enable_x64(True):
        th = jnp.asarray(theta / np.linalg.norm(theta), dtype=jnp.float64)
        Vj = jnp.asarray(V, dtype=jnp.float64)

        def loss_fn(U, _key):
            Xh = jnp.sqrt(d) * U / jnp.linalg.norm(U, axis=1, keepdims=True)
            Phi = _act(Xh @ Vj.T, activation, jnp)
            A = Phi @ Phi.T
            A = A + _RIDGE * jnp.trace(A) / n * jnp.eye(n)
            r = th - Phi.T @ jnp.linalg.solve(A, Phi @ th)
            return r @ r

        opt = optax.sgd(learning_rate, momentum=momentum)

        def run(k):
            out = train(loss_fn, jax.random.normal(k, (n, d), dtype=jnp.float64), opt, steps=steps, key=k)
            return out.params, out.losses, loss_fn(out.params, k)

        U, losses, final = jax.jit(jax.vmap(run))(jax.random.split(key, restarts))
        U, losses, final = np.asarray(U), np.asarray(losses), np.asarray(final)
    best = int(np.argmin(final))
    X_hat = np.sqrt(d) * U[best] / np.linalg.norm(U[best], axis=1, keepdims=True)
    return Reconstruction(X_hat, final[best], losses, steps)
