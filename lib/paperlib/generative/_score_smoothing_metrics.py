"""Sample statistics of :mod:`paperlib.generative.score_smoothing`: memorisation or interpolation?

This private module holds the measuring role of the score-smoothing chapter: the statistics that
sort generated samples into copies of training points, interpolations between them and departures
from the data's subspace, for data on a line (``sample_metrics``), evenly spaced on a circle
(``polygon_metrics``) or on a sphere inside a subspace (``sphere_metrics``, with the training
points ``icosahedron_vertices``). The closed forms of the smoothed score and its flow stay in the
public module :mod:`paperlib.generative.score_smoothing`, which re-exports and documents everything
here; import it from there.
"""

from __future__ import annotations

import numpy as np

from ..core._validation import as_array, check_int, check_real


def sample_metrics(samples, grid, *, near_tol=0.02, interp_tol=0.05):
    """Memorisation / interpolation / subspace statistics of samples for data on the first axis.

    Parameters
    ----------
    samples : array_like, shape (N, d), d >= 2
    grid : array_like, shape (n,), training points ``(y_k, 0, ..., 0)``
    near_tol, interp_tol : float, ``> 0``

    Returns
    -------
    dict with
        ``near``: fraction within ``near_tol`` of a training point;
        ``interp``: fraction farther than ``interp_tol`` from every training point, within
        ``interp_tol`` of the data line and between the end points;
        ``q95_normal``: 95th percentile of the normal distance ``||x_perp||``;
        ``aniso``: RMS(tangential offset from the nearest ``y_k``) / RMS(``||x_perp||``), nan when all
        samples lie on the line (RMS normal distance below 1e-12).

    Raises
    ------
    ValueError
        If ``samples`` is not ``(N, d)`` with ``d >= 2`` or has NaN/inf, ``grid`` is not 1-D, or a
        tolerance is not positive.

    Examples
    --------
    >>> m = sample_metrics([[-1.0, 0.0], [0.0, 0.0], [0.0, 0.5], [2.0, 0.0]], [-1.0, 1.0])
    >>> m["near"], m["interp"]
    (0.25, 0.25)
    """
    X = as_array("samples", samples, ndim=2)
    if X.shape[1] < 2:
        raise ValueError(f"samples must have shape (N, d) with d >= 2, got {X.shape}")
    grid = as_array("grid", grid, ndim=1, min_size=1)
    near_tol = check_real("near_tol", near_tol, minimum=0.0, strict_min=True)
    interp_tol = check_real("interp_tol", interp_tol, minimum=0.0, strict_min=True)
    par, perp = X[:, 0], np.linalg.norm(X[:, 1:], axis=1)
    off = np.min(np.abs(par[:, None] - grid[None, :]), axis=1)
    dist = np.hypot(off, perp)
    inside = (par > grid.min()) & (par < grid.max())
    rms_perp = np.sqrt(np.mean(perp**2))
    return {
        "near": float(np.mean(dist < near_tol)),
        "interp": float(np.mean((dist > interp_tol) & (perp < interp_tol) & inside)),
        "q95_normal": float(np.quantile(perp, 0.95)),
        "aniso": float(np.sqrt(np.mean(off**2)) / rms_perp) if rms_perp > 1e-12 else float("nan"),
    }


def polygon_metrics(samples, n_points, *, near_tol=0.02, interp_tol=0.05):
    """Chord-or-arc statistics of 2-D samples for training points evenly spaced on the unit circle.

    Training points ``y_k = (cos 2 pi k/n, sin 2 pi k/n)``. At polar angle ``theta`` in gap ``k``, the
    chord between its two training points has radius ``rho = cos(pi/n) / cos(theta - theta_mid)``.

    Parameters
    ----------
    samples : array_like, shape (N, 2)
    n_points : int, ``>= 3``
    near_tol, interp_tol : float, ``> 0``

    Returns
    -------
    dict with
        ``near``: fraction within ``near_tol`` of a training point;
        ``interp``: fraction farther than ``interp_tol`` from every training point and within
        ``interp_tol`` of the chord polygon or of the circle;
        ``chord_position``: median of ``(r - rho) / (1 - rho)`` over the ``interp`` samples in the middle
        half of a gap (``0``: on the chord, the polygon; ``1``: on the arc); nan if there are none;
        ``q95_off``: 95th percentile of the distance to the nearer of chord and arc over those samples.

    Raises
    ------
    ValueError
        If ``samples`` is not ``(N, 2)`` and finite, ``n_points < 3`` or a tolerance is not positive.

    Examples
    --------
    >>> m = polygon_metrics([[1.0, 0.0], [0.5, 0.5], [0.0, 0.0]], 4)  # a point, a chord midpoint, the centre
    >>> round(m["near"], 3), round(m["interp"], 3), round(m["chord_position"], 3)
    (0.333, 0.333, 0.0)
    """
    X = as_array("samples", samples, shape=(None, 2))
    n = check_int("n_points", n_points, minimum=3)
    near_tol = check_real("near_tol", near_tol, minimum=0.0, strict_min=True)
    interp_tol = check_real("interp_tol", interp_tol, minimum=0.0, strict_min=True)
    ang = 2 * np.pi * np.arange(n) / n
    Y = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    dist = np.min(np.linalg.norm(X[:, None, :] - Y[None], axis=2), axis=1)
    r = np.linalg.norm(X, axis=1)
    gap = 2 * np.pi / n
    theta = np.mod(np.arctan2(X[:, 1], X[:, 0]), 2 * np.pi)
    off_mid = theta - (np.floor(theta / gap) + 0.5) * gap
    rho = np.cos(np.pi / n) / np.cos(off_mid)
    off = np.minimum(np.abs(r - rho), np.abs(r - 1.0))
    interp = (dist > interp_tol) & (off < interp_tol)
    mid = interp & (np.abs(off_mid) < gap / 4)  # there 1 - rho >= 1 - cos(pi/n) / cos(pi/(4n)) > 0
    pos = (r[mid] - rho[mid]) / (1.0 - rho[mid])
    return {
        "near": float(np.mean(dist < near_tol)),
        "interp": float(np.mean(interp)),
        "chord_position": float(np.median(pos)) if mid.any() else float("nan"),
        "q95_off": float(np.quantile(off[mid], 0.95)) if mid.any() else float("nan"),
    }


def icosahedron_vertices():
    """The 12 vertices of a regular icosahedron on the unit sphere of ``R^3``.

    Evenly spaced training points on a 2-sphere (each has five neighbours at chord distance
    ``1.0515``; the faces are at distance ``0.7947`` from the centre, the inradius).

    Returns
    -------
    ndarray, shape (12, 3), unit rows

    Examples
    --------
    >>> v = icosahedron_vertices()
    >>> v.shape, round(float(np.linalg.norm(v[0] - v[1])), 4)
    ((12, 3), 1.0515)
    """
    phi = (1.0 + np.sqrt(5.0)) / 2.0
    base = []
    for a in (1.0, -1.0):
        for b in (phi, -phi):
            base += [(0.0, a, b), (a, b, 0.0), (b, 0.0, a)]
    v = np.asarray(base)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def sphere_metrics(samples, data, basis, *, near_tol=0.05, away_tol=0.2, normal_tol=0.1, shell=(0.75, 1.05)):
    """Memorisation / interpolation / subspace statistics for data on a sphere inside a subspace of ``R^d``.

    The training points ``data`` lie on the unit sphere of the ``k``-dimensional subspace spanned by the
    orthonormal columns of ``basis``. A sample ``x`` splits into subspace coordinates ``u = B^T x``
    and a normal part ``x_perp = x - B u`` with ``d - k`` degrees of freedom.

    Parameters
    ----------
    samples : array_like, shape (N, d)
    data : array_like, shape (n, d), training points (on the unit sphere of the subspace)
    basis : array_like, shape (d, k), ``1 <= k < d``, orthonormal columns ``B``
    near_tol : float, ``> 0``, default 0.05; "a copy": within this distance of a training point
    away_tol : float, ``> 0``, default 0.2; "novel": farther than this from every training point
    normal_tol : float, ``> 0``, default 0.1; "on the subspace": ``||x_perp|| <= normal_tol``
    shell : (float, float), default (0.75, 1.05); ``0 <= lo < hi``, allowed radius ``||u||`` of a novel
        sample (between the faces of the training points' convex hull and the sphere, with a margin)

    Returns
    -------
    dict with
        ``near``: fraction within ``near_tol`` of a training point;
        ``interp``: fraction that is novel, on the subspace and inside the shell;
        ``q95_normal``: 95th percentile of ``||x_perp||``;
        ``aniso``: per-coordinate RMS of the in-subspace offset to the nearest training point over the
        per-coordinate RMS of ``x_perp`` (``sqrt(mean ||u - u_k||^2 / k) / sqrt(mean ||x_perp||^2 / (d-k))``);
        ``1`` for any isotropic spread around the training points, large for interpolation along the
        subspace; nan when the normal parts all vanish;
        ``r_q10``: 10th percentile of the in-subspace radius ``||u||`` of the novel samples that lie on
        the subspace (farther than ``away_tol`` from every training point, within ``normal_tol`` of the
        subspace; no shell condition): near the sphere's radius ``1`` when the novel samples stay near
        the sphere, lower when they fill its inside; nan when there are none.

    Raises
    ------
    ValueError
        If an array has the wrong shape or non-finite entries, ``basis`` is not orthonormal, a
        tolerance is not positive, or ``shell`` is not ``0 <= lo < hi``.

    Examples
    --------
    >>> B = np.eye(3)[:, :2]                                  # the circle in the (x1, x2)-plane of R^3
    >>> Y = np.array([[1.0, 0, 0], [0, 1.0, 0], [-1.0, 0, 0], [0, -1.0, 0]])
    >>> X = [[1.0, 0, 0.01], [0.71, 0.71, 0.0], [0.71, 0.71, 0.5]]   # a copy, a novel point, one off the plane
    >>> m = sphere_metrics(X, Y, B)
    >>> round(m["near"], 3), round(m["interp"], 3)
    (0.333, 0.333)
    """
    X = as_array("samples", samples, ndim=2)
    d = X.shape[1]
    Y = as_array("data", data, shape=(None, d))
    B = as_array("basis", basis, ndim=2)
    if B.shape[0] != d or not 1 <= B.shape[1] < d:
        raise ValueError(f"basis must have shape ({d}, k) with 1 <= k < {d}, got {B.shape}")
    if not np.allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-6):
        raise ValueError("basis must have orthonormal columns")
    near_tol = check_real("near_tol", near_tol, minimum=0.0, strict_min=True)
    away_tol = check_real("away_tol", away_tol, minimum=0.0, strict_min=True)
    normal_tol = check_real("normal_tol", normal_tol, minimum=0.0, strict_min=True)
    shell = as_array("shell", shell, shape=(2,))
    if not 0.0 <= shell[0] < shell[1]:
        raise ValueError(f"shell must satisfy 0 <= lo < hi, got {shell}")
    k = B.shape[1]
    u, uy = X @ B, Y @ B
    perp = np.linalg.norm(X - u @ B.T, axis=1)
    dist = np.min(np.linalg.norm(X[:, None, :] - Y[None], axis=2), axis=1)
    off = np.min(np.linalg.norm(u[:, None, :] - uy[None], axis=2), axis=1)
    radius = np.linalg.norm(u, axis=1)
    novel_on = (dist > away_tol) & (perp <= normal_tol)
    interp = novel_on & (radius >= shell[0]) & (radius <= shell[1])
    rms_perp = np.sqrt(np.mean(perp**2) / (d - k))
    return {
        "near": float(np.mean(dist < near_tol)),
        "interp": float(np.mean(interp)),
        "q95_normal": float(np.quantile(perp, 0.95)),
        "aniso": float(np.sqrt(np.mean(off**2) / k) / rms_perp) if rms_perp > 1e-12 else float("nan"),
        "r_q10": float(np.quantile(radius[novel_on], 0.1)) if novel_on.any() else float("nan"),
    }
