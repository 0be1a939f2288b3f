"""Coverage tables of :mod:`paperlib.online.conformal`: the threshold grid, miss/size tables and losses.

This private module holds the evaluation view of a conformal stream: the grid of thresholds (the
arms, :func:`threshold_grid`), the table of what every threshold would have done in every round
(:class:`CoverageTable`, built by :func:`coverage_table` for classification and
:func:`interval_coverage_table` for regression), and the learner's loss computed from it
(:func:`conformal_losses`). Everything here is re-exported by :mod:`paperlib.online.conformal`,
which is where it is documented and should be imported from.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..core._validation import as_array, check_int, check_real

# float arguments reach JAX's float32: _validation's checks refuse finite values past float32's range
_JAX_FLOAT32 = True


def _check_probs(name, probs, ndim=(2, 3)):
    probs = as_array(name, probs, ndim=ndim, min_size=1)
    if np.any(probs < 0) or np.any(probs > 1 + 1e-6):
        raise ValueError(f"{name} must hold scores in [0, 1]")
    return probs


def threshold_grid(num_arms, *, low=0.01, high=0.9):
    r"""The arms: :math:`\pi_0 = 0` (the full label set) and :math:`K-1` geometrically spaced thresholds.

    Parameters
    ----------
    num_arms : int
        Number of thresholds :math:`K \ge 2`.
    low, high : float, default 0.01 and 0.9
        Smallest and largest positive threshold, :math:`0 < \text{low} < \text{high} \le 1`.

    Returns
    -------
    ndarray, shape (K,)
        Increasing thresholds.

    Raises
    ------
    ValueError
        If ``num_arms < 2`` or the range is invalid.

    Notes
    -----
    A geometric grid puts arms where the :math:`\alpha`-quantile of softmax scores lies (often at
    0.01–0.3); a uniform grid on [0, 1] wastes most arms on thresholds that miss far too often. The
    paper treats the grid as given.

    Examples
    --------
    >>> threshold_grid(4, low=0.01, high=1.0).round(3).tolist()
    [0.0, 0.01, 0.1, 1.0]
    """
    num_arms = check_int("num_arms", num_arms, minimum=2)
    low = check_real("low", low, minimum=0.0, strict_min=True)
    high = check_real("high", high, maximum=1.0)
    if not low < high:
        raise ValueError(f"low must be < high, got low={low}, high={high}")
    return np.concatenate([[0.0], np.geomspace(low, high, num_arms - 1)])


class CoverageTable(NamedTuple):
    """What every threshold would have done in every round (the evaluation view of a stream).

    Attributes
    ----------
    misses : ndarray of bool, shape (..., T, K)
        :math:`m_t(k) = \\mathbb 1[s_t < \\pi_k]`.
    sizes : ndarray, shape (..., T, K)
        :math:`|C_{\\pi_k}(x_t)|` (number of labels, or interval length), observable from :math:`x_t`
        alone.
    num_covering : ndarray of int, shape (..., T)
        :math:`j_t = \\#\\{k : \\pi_k \\le s_t\\}`: arms ``0 .. j_t - 1`` cover, the rest miss.
    size_scale : float
        Size of the largest possible set (:math:`|\\mathcal Y|` for classification, the widest
        interval's length for regression); losses use ``sizes / size_scale`` in [0, 1].
    """

    misses: np.ndarray
    sizes: np.ndarray
    num_covering: np.ndarray
    size_scale: float


def coverage_table(probs, labels, grid):
    r"""Miss indicators and set sizes of every threshold of ``grid`` in every round.

    Parameters
    ----------
    probs : array_like, shape (..., T, C)
        Scores :math:`f(x_t, y)` of every label, in [0, 1].
    labels : array_like of int, shape (..., T)
        True labels :math:`y_t \in \{0, \dots, C-1\}`.
    grid : array_like, shape (K,)
        Increasing thresholds in [0, 1] starting at 0 (:func:`threshold_grid`).

    Returns
    -------
    CoverageTable

    Raises
    ------
    ValueError
        If shapes disagree, scores are outside [0, 1], a label is out of range, or the grid is not
        increasing from 0.

    Examples
    --------
    >>> tab = coverage_table([[0.7, 0.2, 0.1]], [1], [0.0, 0.15, 0.5])
    >>> tab.misses.tolist(), tab.sizes.tolist(), tab.num_covering.tolist()
    ([[False, False, True]], [[3, 2, 1]], [2])
    """
    probs = _check_probs("probs", probs)
    labels = np.asarray(labels)
    if not np.issubdtype(labels.dtype, np.integer) or labels.shape != probs.shape[:-1]:
        raise ValueError(f"labels must be integers of shape {probs.shape[:-1]}, got {labels.dtype} {labels.shape}")
    c = probs.shape[-1]
    if labels.min() < 0 or labels.max() >= c:
        raise ValueError(f"labels must lie in [0, {c - 1}]")
    grid = as_array("grid", grid, ndim=1, min_size=2)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0) or grid[-1] > 1:
        raise ValueError("grid must increase strictly from 0 within [0, 1]")
    scores = np.take_along_axis(probs, labels[..., None], axis=-1)[..., 0]
    misses = scores[..., None] < grid
    sizes = (probs[..., None, :] >= grid[:, None]).sum(-1, dtype=np.int32)
    return CoverageTable(misses, sizes, (~misses).sum(-1), float(c))


def interval_coverage_table(residuals, grid, *, max_radius):
    r"""Coverage table of symmetric prediction intervals for regression.

    The score is :math:`s_t = 1 - |y_t - \hat y_t|/r_{\max}` and threshold :math:`\pi_k` gives the
    interval :math:`\hat y_t \pm (1-\pi_k)\,r_{\max}`, so the same grid and learner serve
    classification and regression. Arm 0 (:math:`\pi_0 = 0`) is the widest interval,
    :math:`\pm r_{\max}`.

    Parameters
    ----------
    residuals : array_like, shape (..., T)
        Absolute residuals :math:`|y_t - \hat y_t| \ge 0` of a fitted regressor.
    grid : array_like, shape (K,)
        Increasing thresholds in [0, 1) starting at 0.
    max_radius : float
        :math:`r_{\max} > 0`; residuals beyond it are missed even by arm 0.

    Returns
    -------
    CoverageTable
        ``sizes`` are interval lengths :math:`2(1-\pi_k)\,r_{\max}` and ``size_scale`` is
        :math:`2 r_{\max}`.

    Raises
    ------
    ValueError
        If a residual is negative or not finite, the grid is invalid, or ``max_radius`` is not positive.

    Examples
    --------
    >>> tab = interval_coverage_table([10.0, 60.0], [0.0, 0.5, 0.8], max_radius=100.0)
    >>> tab.misses.tolist(), tab.sizes[0].round(6).tolist()
    ([[False, False, False], [False, True, True]], [200.0, 100.0, 40.0])
    """
    residuals = as_array("residuals", residuals, ndim=(1, 2), min_size=1)
    if np.any(residuals < 0):
        raise ValueError("residuals must be absolute values (>= 0)")
    grid = as_array("grid", grid, ndim=1, min_size=2)
    if grid[0] != 0.0 or np.any(np.diff(grid) <= 0) or grid[-1] >= 1:
        raise ValueError("grid must increase strictly from 0 within [0, 1)")
    max_radius = check_real("max_radius", max_radius, minimum=0.0, strict_min=True)
    scores = 1.0 - residuals / max_radius
    misses = scores[..., None] < grid
    sizes = np.broadcast_to(2 * (1 - grid) * max_radius, misses.shape).copy()
    return CoverageTable(misses, sizes, (~misses).sum(-1), 2 * max_radius)


def conformal_losses(table, *, lam):
    r"""The learner's loss :math:`\ell_t(k) = m_t(k) + \lambda\,|C_{\pi_k}(x_t)|/|\mathcal Y|`.

    Parameters
    ----------
    table : CoverageTable
        From :func:`coverage_table`.
    lam : float
        Size penalty :math:`\lambda \ge 0`; losses lie in :math:`[0, 1+\lambda]`.

    Returns
    -------
    ndarray, shape (..., T, K)

    Raises
    ------
    ValueError
        If ``table`` is not a CoverageTable or ``lam`` is negative.

    Notes
    -----
    The paper's loss adds a term rewarding coverage and penalising a miss (with constants depending on
    :math:`\alpha`) to a size term weighted by :math:`\lambda`. Any such term is affine in
    :math:`m_t(k)`, say :math:`c_0 + u\,m_t(k)` with :math:`u > 0`; EXP3.P normalises losses to
    [0, 1], so that loss runs the same learner as this one with :math:`\lambda` replaced by
    :math:`\lambda/u`. We use the simplest form. The paper's size term (reported to be
    :math:`\propto e^{-\pi}`) is replaced by the actual normalised set size.

    References
    ----------
    Yang, Kim and Park (2026), loss design (their exact constants are not reproduced here).

    Examples
    --------
    >>> tab = coverage_table([[0.7, 0.2, 0.1]], [1], [0.0, 0.15, 0.5])
    >>> conformal_losses(tab, lam=0.3).round(2).tolist()
    [[0.3, 0.2, 1.1]]
    """
    if not isinstance(table, CoverageTable):
        raise ValueError(f"table must be a CoverageTable (from coverage_table), got {type(table).__name__}")
    lam = check_real("lam", lam, minimum=0.0)
    return table.misses + lam * table.sizes / table.size_scale

