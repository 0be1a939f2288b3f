"""Power laws: fit a log-log slope with its uncertainty.

Scaling claims ("n* grows like 1/Delta^2", "error decays like n^{-1/2}") are checked by fitting a
straight line to ``log y`` against ``log x`` by ordinary least squares and comparing the slope, with
its standard error, to the paper's exponent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._validation import as_array, check_probability

__all__ = ["PowerLawFit", "power_law_fit"]


@dataclass(frozen=True)
class PowerLawFit:
    """Result of :func:`power_law_fit`: ``y ≈ prefactor * x ** slope``.

    Attributes
    ----------
    slope : float
        Fitted exponent (the log-log slope).
    stderr : float
        Standard error of the slope (OLS on the logs; ``nan`` with two points).
    prefactor : float
        ``exp(intercept)`` of the log-log line.
    ci : tuple of float
        Two-sided confidence interval for the slope at ``level`` (Student t, ``n - 2`` dof).
    level : float
        Confidence level of ``ci``.
    r2 : float
        Coefficient of determination of the log-log fit.
    n : int
        Number of points.
    """

    slope: float
    stderr: float
    prefactor: float
    ci: tuple[float, float]
    level: float
    r2: float
    n: int

    def predict(self, x):
        """Evaluate the fitted power law at ``x`` (array-like, positive)."""
        x = np.asarray(x, dtype=float)
        return self.prefactor * x**self.slope

    def __str__(self) -> str:
        return f"slope {self.slope:.3f} ± {self.stderr:.3f} (n={self.n}, R²={self.r2:.4f})"


def power_law_fit(x, y, *, level: float = 0.95) -> PowerLawFit:
    """Fit ``y = c * x**slope`` by least squares on ``(log x, log y)``.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Positive, finite values; ``n >= 2``. Units are whatever the chapter measures; only ratios
        matter for the slope.
    level : float, default 0.95
        Confidence level of the slope interval, in (0, 1).

    Returns
    -------
    PowerLawFit
        Slope, its standard error and confidence interval, prefactor and R².

    Raises
    ------
    ValueError
        If ``x`` or ``y`` is not one-dimensional, their lengths differ, ``n < 2``, any entry is
        non-positive or not finite, all ``x`` are equal, or ``level`` is outside (0, 1).

    Examples
    --------
    >>> fit = power_law_fit([1.0, 2.0, 4.0, 8.0], [3.0, 0.75, 0.1875, 0.046875])
    >>> round(fit.slope, 6), round(fit.prefactor, 6)
    (-2.0, 3.0)
    """
    x = as_array("x", x, ndim=1, min_size=2)
    y = as_array("y", y, ndim=1, min_size=2)
    level = check_probability("level", level, open_interval=True)
    if x.shape != y.shape:
        raise ValueError(f"x and y must have the same length, got {x.shape[0]} and {y.shape[0]}")
    if np.any(x <= 0):
        raise ValueError("x must be positive for a log-log fit")
    if np.any(y <= 0):
        raise ValueError("y must be positive for a log-log fit")
    lx, ly = np.log(x), np.log(y)
    if np.ptp(lx) == 0:
        raise ValueError("x must take at least two distinct values")
    n = x.size
    res = stats.linregress(lx, ly)
    if n > 2:
        stderr = float(res.stderr)
        half = float(stats.t.ppf(0.5 + level / 2, n - 2)) * stderr
    else:
        stderr, half = float("nan"), float("nan")
    return PowerLawFit(
        slope=float(res.slope),
        stderr=stderr,
        prefactor=float(np.exp(res.intercept)),
        ci=(float(res.slope) - half, float(res.slope) + half),
        level=level,
        r2=float(res.rvalue**2),
        n=int(n),
    )
