"""Scoring a reconstruction of :mod:`paperlib.wide_networks.reconstruction`: matching and outcomes.

This private module holds the evaluation role: what the true training set says about a
reconstruction once the attack has run. It has the Hungarian matching (``_assignment``,
``matched_distance``, ``matched_rows``), the chance level of the matched distance
(``random_guess_distance``) and the sorting of attack runs into outcomes (``classify_outcomes``),
with the argument checks they use (``_check_pair``, ``_check_rng``). Everything here is re-exported
by the public module :mod:`paperlib.wide_networks.reconstruction`, which documents it; import it
from there.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..core._validation import as_array, check_int, check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


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
