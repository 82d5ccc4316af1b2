"""Small statistics without scipy: Student's t distribution and confidence intervals over
seeds (used by sweeps' summaries)."""

from __future__ import annotations

import functools
import math

import numpy as np

# Two-sided confidence level of the intervals over seeds.
CONFIDENCE = 0.95
# Simpson intervals for Student's t CDF: error far below the 4 digits of printed t tables.
SIMPSON_INTERVALS = 4000
# Bisection steps for the t quantile: 2^-60 of the bracket, below float resolution.
BISECTION_STEPS = 60


def _t_density(x: np.ndarray, df: int) -> np.ndarray:
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return np.exp(log_norm - (df + 1) / 2 * np.log1p(x * x / df))


def t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with df degrees of freedom (Simpson's rule from 0)."""
    if x < 0:
        return 1.0 - t_cdf(-x, df)
    ys = _t_density(np.linspace(0.0, x, SIMPSON_INTERVALS + 1), df)
    area = x / SIMPSON_INTERVALS / 3 * (ys[0] + ys[-1] + 4 * ys[1:-1:2].sum() + 2 * ys[2:-1:2].sum())
    return 0.5 + float(area)


@functools.cache
def t_quantile(p: float, df: int) -> float:
    """The x with P(T <= x) = p, for 0.5 < p < 1, by bisection."""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, 2 * hi
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2


def confidence_interval(values: np.ndarray, level: float = CONFIDENCE) -> tuple[float, float]:
    """(mean, half-width) of the two-sided t interval; half-width NaN below two finite values."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan
    if x.size == 1:
        return float(x[0]), math.nan
    t = t_quantile(0.5 + level / 2, int(x.size - 1))
    return float(x.mean()), float(t * x.std(ddof=1) / math.sqrt(x.size))
