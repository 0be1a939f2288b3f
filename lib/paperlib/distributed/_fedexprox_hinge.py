"""FedExProx on a smooth hinge loss: separable client data, the loss, and the rounds to a target.

This private module holds the non-quadratic experiment of :mod:`paperlib.distributed.fedexprox`:
linearly separable client data (interpolation holds), the smooth hinge loss, and FedExProx whose
clients solve their prox subproblems, which have no closed form here, by local gradient descent.
It is re-exported by the public module :mod:`paperlib.distributed.fedexprox`, where these functions
are documented and should be imported from.
"""

from __future__ import annotations

import math

import numpy as np

from ..core._validation import as_array, check_int, check_real
from .moreau import _gamma, local_steps


def hinge_clients(n, m, d, *, margin=0.5, rng):
    r"""Linearly separable client data for the smooth hinge loss (interpolation holds).

    Points :math:`a \sim N(0, I_d)` are kept when :math:`|a^\top w_\star| \ge` ``margin`` for a random unit
    :math:`w_\star`, and labelled :math:`y = \operatorname{sign}(a^\top w_\star)`; so
    :math:`x = w_\star/\text{margin}` has every margin :math:`y\,a^\top x \ge 1` and zero loss on every client.

    Parameters
    ----------
    n, m, d : int
        Clients, points per client and dimension (all >= 1).
    margin : float, default 0.5
        Minimum :math:`|a^\top w_\star|`, in (0, 2].
    rng : numpy.random.Generator

    Returns
    -------
    X : ndarray, shape (n, m, d)
    y : ndarray, shape (n, m), entries in {-1, +1}

    Raises
    ------
    ValueError
        On a bad size, ``margin`` out of range, or a missing ``rng``.

    Examples
    --------
    >>> X, y = hinge_clients(2, 3, 2, rng=np.random.default_rng(0))
    >>> X.shape, y.shape, bool(np.all(np.abs(y) == 1))
    ((2, 3, 2), (2, 3), True)
    """
    n, m = check_int("n", n, minimum=1), check_int("m", m, minimum=1)
    d = check_int("d", d, minimum=1)
    margin = check_real("margin", margin, minimum=0.0, maximum=2.0, strict_min=True)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    kept = np.empty((0, d))
    while len(kept) < n * m:
        a = rng.standard_normal((4 * n * m, d))
        kept = np.vstack([kept, a[np.abs(a @ w) >= margin]])
    X = kept[: n * m].reshape(n, m, d)
    return X, np.sign(X @ w)


def _hinge_grad(X, y, z):
    t = np.einsum("nmd,nm,ndb->nmb", X, y, z)
    hp = np.where(t < 0, -1.0, np.where(t < 1, t - 1.0, 0.0))
    return np.einsum("nmd,nm,nmb->ndb", X, y, hp) / X.shape[1]


def smooth_hinge_loss(X, y, x) -> np.ndarray:
    r"""Average smooth hinge loss :math:`f(x) = \frac{1}{nm}\sum_{i,j} h(y_{ij} a_{ij}^\top x)` at each column of ``x``.

    :math:`h(t) = \tfrac12 - t` for :math:`t < 0`, :math:`\tfrac12(1-t)^2` on :math:`[0, 1]` and :math:`0` for
    :math:`t > 1`: convex, 1-smooth, zero exactly where the margin is at least one.

    Parameters
    ----------
    X : array_like, shape (n, m, d)
    y : array_like, shape (n, m)
    x : array_like, shape (d, B)

    Returns
    -------
    ndarray, shape (B,)

    Raises
    ------
    ValueError
        On inconsistent shapes or non-finite input.

    Examples
    --------
    >>> smooth_hinge_loss(np.ones((1, 1, 1)), np.ones((1, 1)), np.array([[0.0, 0.5, 2.0]])).tolist()
    [0.5, 0.125, 0.0]
    """
    X = as_array("X", X, ndim=3, min_size=1)
    y = as_array("y", y, shape=X.shape[:2])
    x = as_array("x", x, shape=(X.shape[2], None), min_size=1)
    t = np.einsum("nmd,nm,db->nmb", X, y, x)
    return np.where(t < 0, 0.5 - t, np.where(t < 1, 0.5 * (1.0 - t) ** 2, 0.0)).mean(axis=(0, 1))


def hinge_rounds(X, y, x0, gamma, *, eps, max_rounds, local=None, alpha=None) -> float:
    r"""Rounds until :math:`\max_b f(x_k^{(b)})/f(x_0^{(b)}) \le \varepsilon` for FedExProx on the smooth hinge loss.

    Each client solves its prox subproblem with ``local`` GD steps of size :math:`1/(L_i + 1/\gamma)`,
    :math:`L_i = \lambda_{\max}(X_i^\top X_i)/m` (default :func:`~paperlib.distributed.moreau.local_steps` with :math:`L_{\max}`), and the
    server extrapolates with ``alpha``, by default :math:`1/(\gamma \hat L_\gamma)` where
    :math:`\hat L_\gamma = \frac1n\sum_i L_i/(1+\gamma L_i)` bounds the smoothness of :math:`M^\gamma`.
    ``gamma = 0`` runs GD on :math:`f` with step :math:`1/L`, :math:`L = \lambda_{\max}(\frac{1}{nm}\sum X_i^\top X_i)`.

    Parameters
    ----------
    X, y : array_like, shapes (n, m, d) and (n, m)
        Client data and labels.
    x0 : array_like, shape (d, B)
        Starting points with positive loss.
    gamma : float
        Prox step, >= 0.
    eps : float
        Target loss ratio in (0, 1).
    max_rounds : int
        Give up after this many rounds.
    local : int, optional
        Local GD steps per round.
    alpha : float, optional
        Extrapolation.

    Returns
    -------
    float
        The number of rounds, or ``inf`` if ``max_rounds`` rounds do not reach the target.

    Raises
    ------
    ValueError
        On bad input, a start with zero loss, or ``local``/``alpha`` with ``gamma = 0``.

    Notes
    -----
    :math:`\hat L_\gamma` is an upper bound, so the extrapolation is safe but smaller than the paper's
    :math:`1/(\gamma L_\gamma)` with the exact smoothness constant of :math:`M^\gamma`, which has no closed form here.

    Examples
    --------
    >>> X, y = hinge_clients(2, 3, 2, rng=np.random.default_rng(0))
    >>> hinge_rounds(X, y, -np.ones((2, 1)), 1.0, eps=1e-6, max_rounds=500) < 500
    True
    """
    d = as_array("X", X, ndim=3, min_size=1).shape[2]
    x0 = as_array("x0", x0, shape=(d, None), min_size=1)
    f0 = smooth_hinge_loss(X, y, x0)
    X, y, x = np.asarray(X, float), np.asarray(y, float), np.asarray(x0, float).copy()
    gamma = _gamma(gamma, positive=False)
    eps = check_real("eps", eps, minimum=0.0, maximum=1.0, strict_min=True, strict_max=True)
    max_rounds = check_int("max_rounds", max_rounds, minimum=1)
    if np.any(f0 <= 0):
        raise ValueError("x0 must have positive loss in every column")
    n, m, d = X.shape
    L_i = np.linalg.eigvalsh(np.einsum("nmi,nmj->nij", X, X) / m)[:, -1]
    if gamma == 0:
        if local is not None or alpha is not None:
            raise ValueError("local and alpha apply only to gamma > 0 (gamma = 0 is GD with step 1/L)")
        L = np.linalg.eigvalsh(np.einsum("nmi,nmj->ij", X, X) / (n * m))[-1]
        step = lambda x: x - _hinge_grad(X, y, x[None].repeat(n, 0)).mean(axis=0) / L    # noqa: E731
    else:
        t = local_steps(gamma, L_i.max()) if local is None else check_int("local", local, minimum=1)
        a = (1.0 / (gamma * np.mean(L_i / (1 + gamma * L_i))) if alpha is None
             else check_real("alpha", alpha, minimum=0.0, strict_min=True))
        lr = (1.0 / (L_i + 1.0 / gamma))[:, None, None]

        def step(x):
            z = x[None].repeat(n, 0)
            for _ in range(t):
                z = z - lr * (_hinge_grad(X, y, z) + (z - x[None]) / gamma)
            return x + a * (z.mean(axis=0) - x)

    for k in range(1, max_rounds + 1):
        x = step(x)
        if np.max(smooth_hinge_loss(X, y, x) / f0) <= eps:
            return float(k)
    return math.inf
