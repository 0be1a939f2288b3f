"""Reconstructing a training set from the trained parameters of a random-features model.

This module carries the chapter on Iurada, Bombari, Tommasi & Mondelli (ICLR 2026), *A Law of Data
Reconstruction for Random Features (and Beyond)*. A random-features model (:mod:`paperlib.wide_networks.random_features`)
trained by least squares has output weights ``θ*`` in the span of its training features
``{φ(x_1), …, φ(x_n)}``. An attacker who knows ``V``, ``σ``, ``n`` and ``θ*`` looks for ``n`` inputs
``X̂`` on the ``√d``-sphere whose feature span contains ``θ*``: it minimises the **projection loss**

.. math::

    \\mathcal L(\\hat X) = \\frac{\\|(I - P_{\\hat\\Phi})\\,\\theta^*\\|^2}{\\|\\theta^*\\|^2},
    \\qquad \\hat\\Phi = \\sigma(\\hat X V^\\top) \\in \\mathbb R^{n\\times p},

with ``P_Φ̂`` the orthogonal projector onto the row space of ``Φ̂`` (the paper's objective; the
authors' code evaluates it as ``1 - vᵀA⁻¹v/‖θ‖²`` with ``v = Φ̂θ``, ``A = Φ̂Φ̂ᵀ``).

Public functions
    :func:`projection_loss` (the objective), :func:`reconstruct` (the attack: damped Gauss-Newton
    from random restarts, batched over problems), :func:`reconstruct_first_order` (the authors'
    optimiser, SGD with momentum through optax), :func:`matched_distance` (Hungarian-matched
    reconstruction error) and :func:`matched_rows` (the matched reordering),
    :func:`random_guess_distance` (its chance level) and :func:`classify_outcomes` (recovered /
    wrong zero / partial / inconclusive). The counting
    argument (when are the data identifiable?) and the synthetic task live in
    :mod:`paperlib.wide_networks.identifiability`.

Everything except :func:`reconstruct_first_order` is numpy float64: the attack must tell a loss of
``1e-25`` (an exact solution) from ``1e-6`` (a local minimum).

References
----------
.. [#reconstruction-1] L. Iurada, S. Bombari, T. Tommasi and M. Mondelli, "A Law of Data Reconstruction for Random
   Features (and Beyond)", ICLR 2026, arXiv:2509.22214; code github.com/iurada/data-reconstruction-law
   (``rf_experiments.py``: projection loss, SGD with momentum, re-projection on the sphere;
   ``utils.py``: Hungarian matching).
.. [#reconstruction-2] K. Levenberg (1944), D. Marquardt (1963): damped Gauss-Newton for nonlinear least squares.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..core._validation import as_array, check_int, check_real
from .random_features import _act, _act_derivative, _check_activation, _check_key

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True

__all__ = [
    "OUTCOMES",
    "Reconstruction",
    "projection_loss",
    "reconstruct",
    "reconstruct_first_order",
    "matched_distance",
    "matched_rows",
    "random_guess_distance",
    "classify_outcomes",
]

#: Labels returned by :func:`classify_outcomes`.
OUTCOMES = ("recovered", "partial", "wrong zero", "inconclusive")

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


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


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


def projection_loss(X_hat, theta, V, *, activation: str = "relu") -> np.ndarray:
    """Projection loss ``‖(I - P_Φ̂)θ‖² / ‖θ‖²`` of candidate inputs ``X̂`` (the paper's objective).

    Zero exactly when ``θ`` lies in the span of the candidates' features ``{σ(V x̂_i)}``. The candidate
    rows are used as given (not re-projected on the sphere).

    Parameters
    ----------
    X_hat : array_like, shape (n, d) or (m, n, d)
        Candidate inputs (optionally a batch of ``m`` candidate sets).
    theta : array_like, shape (p,) or (m, p)
        Trained output weights, nonzero.
    V : array_like, shape (p, d) or (m, p, d)
        First-layer weights of the RF model.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The model's nonlinearity σ.

    Returns
    -------
    ndarray, shape () or (m,)
        The loss, in ``[0, 1]``.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, a candidate row is zero, ``theta`` is zero,
        or the activation is unknown.

    Notes
    -----
    Computed as ``‖θ - Φ̂ᵀa‖²/‖θ‖²`` with ``a = (Φ̂Φ̂ᵀ + εI)⁻¹Φ̂θ`` and ``ε = 10⁻¹⁴ tr(Φ̂Φ̂ᵀ)/n``,
    in float64. Forming the residual avoids the cancellation of ``1 - vᵀA⁻¹v/‖θ‖²`` (the authors'
    formula, in float32 there), so exact solutions show losses near ``1e-28`` instead of ``1e-7``.

    Examples
    --------
    >>> V = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> theta = np.array([1.0, 0.0, 1.0])                  # = φ(x) for x = (1, 0), ReLU
    >>> float(np.round(projection_loss([[1.0, 0.0]], theta, V), 12))
    0.0
    >>> float(np.round(projection_loss([[0.0, 1.0]], theta, V), 3))  # φ(x̂) = (0, 1, 1)
    0.75
    """
    activation = _check_activation(activation)
    theta, V, batched = _check_problem(theta, V)
    X_hat = as_array("X_hat", X_hat, ndim=(2, 3), min_size=1)
    if X_hat.ndim == 2:
        X_hat = np.broadcast_to(X_hat, (theta.shape[0],) + X_hat.shape)
    if X_hat.shape[0] != theta.shape[0] or X_hat.shape[2] != V.shape[2]:
        raise ValueError(f"X_hat must have shape (n, {V.shape[2]}) or ({theta.shape[0]}, n, {V.shape[2]}), got {X_hat.shape}")
    if np.any(np.linalg.norm(X_hat, axis=2) == 0):
        raise ValueError("X_hat must not contain a zero row")
    tn = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    Phi = _act(np.matmul(X_hat, np.swapaxes(V, 1, 2)), activation, np)
    A = np.matmul(Phi, np.swapaxes(Phi, 1, 2))
    A += (_RIDGE * np.trace(A, axis1=1, axis2=2) / A.shape[1])[:, None, None] * np.eye(A.shape[1])
    a = np.linalg.solve(A, np.matmul(Phi, tn[:, :, None]))[..., 0]
    r = tn - np.matmul(a[:, None, :], Phi)[:, 0]
    loss = np.sum(r * r, axis=1)
    return loss if batched else loss[0]


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


def _assignment(X, X_hat, invariance):
    """Hungarian assignment on squared distances (after the requested invariance); returns rows, cols, cost."""
    if invariance == "abs":
        X, X_hat = np.abs(X), np.abs(X_hat)
    C = np.sum((X[:, None, :] - X_hat[None, :, :]) ** 2, axis=2)
    if invariance == "sign":
        C = np.minimum(C, np.sum((X[:, None, :] + X_hat[None, :, :]) ** 2, axis=2))
    rows, cols = linear_sum_assignment(C)
    return rows, cols, C


def _check_pair(X, X_hat, invariance):
    X = as_array("X", X, ndim=2)
    X_hat = as_array("X_hat", X_hat, ndim=2)
    if X.shape[1] != X_hat.shape[1]:
        raise ValueError(f"X_hat must have d = {X.shape[1]} columns like X, got shape {X_hat.shape}")
    if invariance not in ("none", "sign", "abs"):
        raise ValueError(f"invariance must be 'none', 'sign' or 'abs', got {invariance!r}")
    return X, X_hat


def matched_distance(X, X_hat, *, invariance: str = "none") -> float:
    """Reconstruction error after optimal matching: ``ρ = (1/(k√d)) Σ_i ‖x_i - x̂_π(i)‖``.

    ``π`` is the assignment of reconstructed rows to true rows minimising the summed squared
    distances (Hungarian algorithm, ``scipy.optimize.linear_sum_assignment``), as in the authors'
    ``utils.optimal_permutation``; ``k = min(n, n̂)`` pairs are matched when the counts differ. With
    rows on the ``√d``-sphere, ``ρ = 0`` is exact recovery and independent random points give
    ``ρ ≈ 1.1-1.3`` (see :func:`random_guess_distance`).

    Parameters
    ----------
    X : array_like, shape (n, d)
        True training inputs.
    X_hat : array_like, shape (n_hat, d)
        Reconstruction.
    invariance : {"none", "sign", "abs"}, default "none"
        ``"sign"`` forgives a global sign per row (``min(‖x - x̂‖, ‖x + x̂‖)``); ``"abs"`` compares
        ``|x|`` with ``|x̂|`` coordinate by coordinate (the authors' printed metric, blind to every
        coordinate's sign).

    Returns
    -------
    float
        ``ρ >= 0``.

    Raises
    ------
    ValueError
        If the arrays are not finite 2-D arrays of equal width or ``invariance`` is unknown.

    Examples
    --------
    >>> X = np.array([[2.0, 0.0], [0.0, 2.0]])
    >>> matched_distance(X, X[::-1])
    0.0
    >>> matched_distance(X, -X), matched_distance(X, -X, invariance="sign")
    (2.0, 0.0)
    """
    X, X_hat = _check_pair(X, X_hat, invariance)
    rows, cols, C = _assignment(X, X_hat, invariance)
    dist = np.sqrt(np.maximum(C[rows, cols], 0.0))
    return float(np.sum(dist) / (len(rows) * np.sqrt(X.shape[1])))


def matched_rows(X, X_hat) -> np.ndarray:
    """The rows of ``X_hat`` reordered to match ``X`` (the assignment of :func:`matched_distance`).

    Parameters
    ----------
    X : array_like, shape (n, d)
        True inputs.
    X_hat : array_like, shape (n_hat, d)
        Reconstruction, ``n_hat >= n``.

    Returns
    -------
    ndarray, shape (n, d)
        Row ``i`` is the reconstructed row assigned to ``x_i``.

    Raises
    ------
    ValueError
        If the arrays are not finite 2-D arrays of equal width or ``X_hat`` has fewer rows than ``X``.

    Examples
    --------
    >>> matched_rows([[2.0, 0.0], [0.0, 2.0]], [[0.1, 1.9], [1.9, 0.0]]).tolist()
    [[1.9, 0.0], [0.1, 1.9]]
    """
    X, X_hat = _check_pair(X, X_hat, "none")
    if X_hat.shape[0] < X.shape[0]:
        raise ValueError(f"X_hat must have at least n = {X.shape[0]} rows, got {X_hat.shape[0]}")
    rows, cols, _ = _assignment(X, X_hat, "none")
    out = np.empty_like(X)
    out[rows] = X_hat[cols]
    return out


def random_guess_distance(X, *, draws: int = 200, invariance: str = "none", rng: np.random.Generator) -> np.ndarray:
    """Chance level of :func:`matched_distance`: ``ρ`` of independent uniform points on the ``√d``-sphere.

    Parameters
    ----------
    X : array_like, shape (n, d)
        True inputs.
    draws : int, default 200
        Number of random guesses, ``>= 1``.
    invariance : {"none", "sign", "abs"}, default "none"
        Passed to :func:`matched_distance`.
    rng : numpy.random.Generator
        Source of the guesses (keyword-only).

    Returns
    -------
    ndarray, shape (draws,)
        ``ρ`` of each guess.

    Raises
    ------
    ValueError
        If ``X`` is not a finite 2-D array, ``draws`` is not a positive integer, ``invariance`` is
        unknown or ``rng`` is not a Generator.

    Examples
    --------
    >>> X = np.sqrt(8) * np.eye(8)[:4]
    >>> rho = random_guess_distance(X, draws=500, rng=np.random.default_rng(0))
    >>> round(float(rho.mean()), 1)
    1.2
    """
    X = as_array("X", X, ndim=2, min_size=1)
    draws = check_int("draws", draws, minimum=1)
    if invariance not in ("none", "sign", "abs"):
        raise ValueError(f"invariance must be 'none', 'sign' or 'abs', got {invariance!r}")
    rng = _check_rng(rng)
    n, d = X.shape
    G = rng.standard_normal((draws, n, d))
    G *= np.sqrt(d) / np.linalg.norm(G, axis=2, keepdims=True)
    return np.array([matched_distance(X, g, invariance=invariance) for g in G])


def classify_outcomes(loss, rho, *, loss_tol: float = 1e-9, recovered: float = 0.05, wrong: float = 0.5) -> np.ndarray:
    """Sort attack runs by what the attacker sees (the loss) and what is true (the distance ``ρ``).

    * ``"recovered"``: ``loss <= loss_tol`` and ``ρ < recovered``;
    * ``"wrong zero"``: ``loss <= loss_tol`` and ``ρ > wrong``: the parameters are explained exactly
      by data that are not the training set (non-identifiability);
    * ``"partial"``: ``loss <= loss_tol`` and ``ρ`` in between;
    * ``"inconclusive"``: ``loss > loss_tol``, the optimiser stopped in a local minimum; such a run
      says nothing about identifiability.

    Parameters
    ----------
    loss : array_like, shape (k,)
        Projection losses, ``>= 0``.
    rho : array_like, shape (k,)
        Matched distances.
    loss_tol : float, default 1e-9
        Largest loss counted as an exact solution, ``> 0``.
    recovered : float, default 0.05
        ``ρ`` below which the data count as recovered, ``> 0``.
    wrong : float, default 0.5
        ``ρ`` above which the data count as wrong, ``>= recovered``.

    Returns
    -------
    ndarray of str, shape (k,)
        One of :data:`OUTCOMES` per run.

    Raises
    ------
    ValueError
        If the arrays differ in length or contain NaN, or a threshold is out of range.

    Examples
    --------
    >>> classify_outcomes([1e-25, 1e-25, 1e-25, 1e-4], [0.001, 1.1, 0.2, 0.0]).tolist()
    ['recovered', 'wrong zero', 'partial', 'inconclusive']
    """
    loss = as_array("loss", loss, ndim=1, min_size=1)
    rho = as_array("rho", rho, ndim=1, min_size=1)
    if loss.shape != rho.shape:
        raise ValueError(f"rho must have the shape of loss {loss.shape}, got {rho.shape}")
    if np.any(loss < 0):
        raise ValueError("loss must be non-negative")
    loss_tol = check_real("loss_tol", loss_tol, minimum=0.0, strict_min=True)
    recovered = check_real("recovered", recovered, minimum=0.0, strict_min=True)
    wrong = check_real("wrong", wrong, minimum=recovered)
    zero = loss <= loss_tol
    out = np.full(loss.shape, "inconclusive", dtype=object)
    out[zero & (rho < recovered)] = "recovered"
    out[zero & (rho > wrong)] = "wrong zero"
    out[zero & (rho >= recovered) & (rho <= wrong)] = "partial"
    return out.astype(str)
