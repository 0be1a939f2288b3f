"""When do the trained parameters of a random-features model identify its training set?

Companion of :mod:`paperlib.wide_networks.reconstruction` for the chapter on Iurada, Bombari, Tommasi & Mondelli
(ICLR 2026), *A Law of Data Reconstruction for Random Features (and Beyond)*.

The counting argument
    An attacker who sees ``θ* = Φᵀc`` (the minimum-norm fit, in the span of the ``n`` training
    features) looks for ``n`` points on the ``√d``-sphere (``n(d-1)`` unknowns) whose feature span
    contains ``θ*`` (``p - n`` equations: the component of ``θ*`` orthogonal to an ``n``-dimensional
    span vanishes). :func:`tangent_jacobian` linearises these equations at the true data and
    :func:`zero_loss_dimension` counts the directions that keep them satisfied: ``dn - p`` for
    ``n <= p <= dn``, zero above. For linear features it is ``d(n-1)`` at every ``p``.

The experiment
    :func:`synthetic_problem` is the authors' synthetic task (sphere inputs, noisy linear teacher,
    min-norm RF fit) and :func:`attack_trials` trains several such models, attacks each with
    :func:`paperlib.wide_networks.reconstruction.reconstruct` and reports what the attacker sees (the loss) beside
    what is true (the matched distance, the outcome class, the zero-loss dimension).

References
----------
.. [#identifiability-1] L. Iurada, S. Bombari, T. Tommasi and M. Mondelli, "A Law of Data Reconstruction for Random
   Features (and Beyond)", ICLR 2026, arXiv:2509.22214; code github.com/iurada/data-reconstruction-law.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_real
from .random_features import _act, _act_derivative, _check_activation, feature_map, fit, random_feature_weights, sample_sphere
from .reconstruction import _check_problem, _check_rng, classify_outcomes, matched_distance, reconstruct

__all__ = [
    "Problem",
    "synthetic_problem",
    "tangent_jacobian",
    "zero_loss_dimension",
    "training_error",
    "attack_trials",
]


class Problem(NamedTuple):
    """A trained random-features model and its training set (output of :func:`synthetic_problem`).

    Attributes
    ----------
    X : ndarray, shape (n, d)
        Training inputs on the ``√d``-sphere.
    y : ndarray, shape (n,)
        Labels.
    V : ndarray, shape (p, d)
        First-layer weights.
    theta : ndarray, shape (p,)
        Trained output weights (ridge or minimum-norm least squares).
    """

    X: np.ndarray
    y: np.ndarray
    V: np.ndarray
    theta: np.ndarray


def synthetic_problem(
    n: int, d: int, p: int, *, activation: str = "relu", label_noise: float = 0.5, ridge: float = 0.0, rng: np.random.Generator
) -> Problem:
    """The authors' synthetic task: a random-features model trained on ``n`` points of the sphere.

    ``x_i`` uniform on the ``√d``-sphere, ``V_{kj} ~ N(0, 1/d)``, labels from a noisy linear teacher
    ``y_i = x_iᵀg + ξ_i`` with ``g ~ N(0, I_d/d)`` and ``ξ_i ~ N(0, label_noise²)``, and
    ``θ = fit(σ(X Vᵀ), y, ridge)`` (:mod:`paperlib.wide_networks.random_features`), all in float64.

    Parameters
    ----------
    n, d, p : int
        Samples, input dimension and features, each ``>= 1``.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The nonlinearity σ.
    label_noise : float, default 0.5
        Standard deviation of ``ξ``, ``>= 0`` (the authors' value).
    ridge : float, default 0.0
        Ridge penalty of the fit, ``>= 0`` (0: minimum-norm least squares, as the authors).
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    Problem
        ``X`` (n, d), ``y`` (n,), ``V`` (p, d), ``theta`` (p,) as numpy float64 arrays.

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``label_noise`` or ``ridge`` is negative or not finite,
        the activation is unknown or ``rng`` is not a Generator.

    References
    ----------
    The authors' ``rf_experiments.py`` (``--dataset synthetic``).

    Examples
    --------
    >>> prob = synthetic_problem(4, 8, 64, activation="relu_tanh", rng=np.random.default_rng(0))
    >>> prob.X.shape, prob.V.shape, prob.theta.shape
    ((4, 8), (64, 8), (64,))
    >>> Phi = np.maximum(prob.X @ prob.V.T, 0) + np.tanh(prob.X @ prob.V.T)
    >>> float(np.round(np.abs(Phi @ prob.theta - prob.y).max(), 10))       # labels interpolated
    0.0
    """
    n = check_int("n", n, minimum=1)
    d = check_int("d", d, minimum=1)
    p = check_int("p", p, minimum=1)
    activation = _check_activation(activation)
    label_noise = check_real("label_noise", label_noise, minimum=0.0)
    ridge = check_real("ridge", ridge, minimum=0.0)
    rng = _check_rng(rng)
    X = sample_sphere(n, d, rng=rng)
    V = random_feature_weights(p, d, rng=rng)
    g = rng.standard_normal(d) / np.sqrt(d)
    y = X @ g + label_noise * rng.standard_normal(n)
    theta = fit(feature_map(X, V, activation=activation), y, ridge=ridge)
    return Problem(X, y, V, theta)


def tangent_jacobian(X, theta, V, *, activation: str = "relu") -> np.ndarray:
    """Jacobian of the residual ``(I - P_Φ̂)θ`` at ``X̂ = X``, along the spheres: shape ``(p, n(d-1))``.

    At the true data ``θ = Φᵀc`` lies in the feature span, the residual is zero and its derivative
    along a tangent direction ``t_i`` of the sphere at ``x_i`` is ``-(I - P_Φ) c_i D_i V t_i`` with
    ``D_i = diag σ'(V x_i)`` and ``c = (ΦΦᵀ)⁻¹Φθ``. Its columns all lie in the ``(p - n)``-dimensional
    complement of the span, so ``rank J <= min(p - n, n(d - 1))``: the exact solutions near ``X`` form
    a set of dimension at least ``n(d-1) - (p-n) = dn - p``, positive when ``p < dn``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Training inputs (rows of equal norm; they are placed on the ``√d``-sphere).
    theta : array_like, shape (p,)
        Output weights in the span of ``σ(V x_i)`` (e.g. from :func:`paperlib.wide_networks.random_features.fit`).
    V : array_like, shape (p, d)
        First-layer weights.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The model's nonlinearity.

    Returns
    -------
    ndarray, shape (p, n·(d-1))
        Columns ``i(d-1) .. (i+1)(d-1)-1`` belong to sample ``i`` (an orthonormal tangent basis from
        a QR factorisation), scaled as derivatives with respect to ``x̂_i``.

    Raises
    ------
    ValueError
        If the shapes disagree, an input is not finite, ``d < 2``, a row of ``X`` is zero, ``theta``
        is zero or the activation is unknown.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2, 3)); X *= np.sqrt(3) / np.linalg.norm(X, axis=1, keepdims=True)
    >>> V = rng.normal(size=(5, 3)) / np.sqrt(3)
    >>> theta = np.linalg.pinv(np.tanh(X @ V.T)) @ np.array([1.0, -1.0])
    >>> J = tangent_jacobian(X, theta, V, activation="tanh")
    >>> J.shape, int(np.linalg.matrix_rank(J))        # rank p - n = 3 < n(d-1) = 4
    ((5, 4), 3)
    """
    activation = _check_activation(activation)
    theta, V, _ = _check_problem(theta, V)
    theta, V = theta[0], V[0]
    X = as_array("X", X, ndim=2, min_size=1)
    n, d = X.shape
    if d != V.shape[1]:
        raise ValueError(f"X must have d = V.shape[1] = {V.shape[1]} columns, got shape {X.shape}")
    if d < 2:
        raise ValueError(f"X must have d >= 2 columns (the sphere in R^1 has no tangent space), got {d}")
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("X must not contain a zero row")
    X = np.sqrt(d) * X / norms
    Z = X @ V.T
    Phi = _act(Z, activation, np)
    Q, _ = np.linalg.qr(Phi.T)  # orthonormal basis of the feature span, (p, n)
    c = np.linalg.lstsq(Phi.T, theta, rcond=None)[0]  # θ = Φᵀc (up to the fit's rounding)
    Dp = _act_derivative(Z, activation, np)
    blocks = []
    for i in range(n):
        T, _ = np.linalg.qr(np.column_stack([X[i], np.eye(d)]))  # T[:, 1:] spans the tangent space
        M = Dp[i][:, None] * (V @ T[:, 1:d])  # D_i V t, (p, d-1)
        blocks.append(-c[i] * (M - Q @ (Q.T @ M)))
    return np.concatenate(blocks, axis=1)


def zero_loss_dimension(X, theta, V, *, activation: str = "relu", rtol: float = 1e-8) -> int:
    """Dimension of the set of exact solutions through the true data, to first order: ``n(d-1) - rank J``.

    ``J`` is :func:`tangent_jacobian`. Its rank is counted with singular values above ``rtol`` times
    the largest singular value of the *unprojected* blocks ``c_i D_i V T_i`` (so that ``J = 0``, the
    case ``p <= n``, has rank 0). The counting argument predicts ``max(0, n(d-1) - max(0, p-n))``,
    which is ``dn - p`` for ``n <= p <= dn`` and ``0`` above ``p = dn``.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Training inputs.
    theta : array_like, shape (p,)
        Output weights in the span of the training features.
    V : array_like, shape (p, d)
        First-layer weights.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The model's nonlinearity.
    rtol : float, default 1e-8
        Relative threshold for a nonzero singular value, in ``(0, 1)``.

    Returns
    -------
    int
        Number of independent first-order directions that keep the projection loss at zero.

    Raises
    ------
    ValueError
        As :func:`tangent_jacobian`, or if ``rtol`` is outside ``(0, 1)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2, 3)); X *= np.sqrt(3) / np.linalg.norm(X, axis=1, keepdims=True)
    >>> V = rng.normal(size=(5, 3)) / np.sqrt(3)
    >>> theta = np.linalg.pinv(np.tanh(X @ V.T)) @ np.array([1.0, -1.0])
    >>> zero_loss_dimension(X, theta, V, activation="tanh")     # dn - p = 6 - 5
    1
    """
    rtol = check_real("rtol", rtol, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    J = tangent_jacobian(X, theta, V, activation=activation)
    X = np.asarray(X, dtype=float)
    theta = np.asarray(theta, dtype=float)
    V = np.asarray(V, dtype=float)
    n, d = X.shape
    Xs = np.sqrt(d) * X / np.linalg.norm(X, axis=1, keepdims=True)
    Z = Xs @ V.T
    Phi = _act(Z, activation, np)
    c = np.linalg.lstsq(Phi.T, theta, rcond=None)[0]
    scale = max(abs(c[i]) * np.linalg.norm(_act_derivative(Z[i], activation, np)[:, None] * V, 2) for i in range(n))
    s = np.linalg.svd(J, compute_uv=False)
    return int(n * (d - 1) - np.sum(s > rtol * scale))


def training_error(problem: Problem, *, activation: str = "relu") -> float:
    """Relative training error of a trained model: ``mean((Φθ - y)²) / mean(y²)``.

    Zero (up to rounding) when the model interpolates its labels, which the minimum-norm fit does
    as soon as ``p >= n`` and ``Φ`` has full row rank.

    Parameters
    ----------
    problem : Problem
        A trained model and its data (from :func:`synthetic_problem`).
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The nonlinearity the model was trained with.

    Returns
    -------
    float
        The relative mean squared training error, ``>= 0``.

    Raises
    ------
    ValueError
        If ``problem`` is not a :class:`Problem` or the activation is unknown.

    Examples
    --------
    >>> prob = synthetic_problem(4, 8, 2, activation="tanh", rng=np.random.default_rng(0))
    >>> training_error(prob, activation="tanh") > 0.01        # p = 2 < n = 4: labels not fitted
    True
    """
    if not isinstance(problem, Problem):
        raise ValueError(f"problem must be a Problem (from synthetic_problem), got {type(problem).__name__}")
    activation = _check_activation(activation)
    fitted = feature_map(problem.X, problem.V, activation=activation) @ problem.theta
    return float(np.mean((fitted - problem.y) ** 2) / np.mean(problem.y ** 2))


def attack_trials(
    n: int,
    d: int,
    p: int,
    *,
    trials: int = 4,
    activation: str = "relu",
    restarts: int = 16,
    iterations: int = 60,
    ridge: float = 0.0,
    rng: np.random.Generator,
) -> list[dict]:
    """Train ``trials`` random-features models on the synthetic task, attack each, report per model.

    Each trial draws a fresh :func:`synthetic_problem`; all trials are attacked in one batched call
    of :func:`paperlib.wide_networks.reconstruction.reconstruct`.

    Parameters
    ----------
    n, d, p : int
        Samples, input dimension and features, each ``>= 1``.
    trials : int, default 4
        Independent models (data, features, labels), ``>= 1``.
    activation : {"relu", "relu_tanh", "tanh", "linear"}, default "relu"
        The nonlinearity σ.
    restarts : int, default 16
        Attack restarts per model, ``>= 1``.
    iterations : int, default 60
        Gauss-Newton iterations per restart, ``>= 1``.
    ridge : float, default 0.0
        Ridge penalty of the fit (0: minimum-norm least squares).
    rng : numpy.random.Generator
        Source of randomness (keyword-only).

    Returns
    -------
    list of dict
        One row per trial with keys ``n, d, p, trial`` (ints), ``train_mse`` (mean squared training
        error divided by the mean squared label), ``loss`` (the attack's projection loss), ``rho``
        (matched distance to the true inputs), ``outcome`` (one of
        :data:`paperlib.wide_networks.reconstruction.OUTCOMES`), ``zero_dim`` (:func:`zero_loss_dimension` at the
        truth) and ``zero_dim_counted`` (the count ``max(0, n(d-1) - max(0, p-n))``).

    Raises
    ------
    ValueError
        If a size is not a positive integer, ``ridge`` is negative, the activation is unknown or
        ``rng`` is not a Generator.

    Examples
    --------
    >>> rows = attack_trials(2, 3, 24, trials=2, activation="relu_tanh", restarts=4, rng=np.random.default_rng(0))
    >>> [(r["p"], r["outcome"], r["zero_dim"]) for r in rows]
    [(24, 'recovered', 0), (24, 'recovered', 0)]
    """
    trials = check_int("trials", trials, minimum=1)
    activation = _check_activation(activation)
    rng = _check_rng(rng)
    probs = [synthetic_problem(n, d, p, activation=activation, ridge=ridge, rng=rng) for _ in range(trials)]
    res = reconstruct(
        np.stack([pr.theta for pr in probs]), np.stack([pr.V for pr in probs]), n,
        activation=activation, restarts=restarts, iterations=iterations, rng=rng,
    )
    rho = np.array([matched_distance(pr.X, xh) for pr, xh in zip(probs, res.X_hat)])
    outcome = classify_outcomes(res.loss, rho)
    rows = []
    for t, pr in enumerate(probs):
        rows.append(dict(
            n=n, d=d, p=p, trial=t,
            train_mse=training_error(pr, activation=activation),
            loss=float(res.loss[t]), rho=float(rho[t]), outcome=str(outcome[t]),
            zero_dim=zero_loss_dimension(pr.X, pr.theta, pr.V, activation=activation),
            zero_dim_counted=max(0, n * (d - 1) - max(0, p - n)),
        ))
    return rows
