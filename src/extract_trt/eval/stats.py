"""Small summary statistics shared by the report, the bench and the token counts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["mean", "mean_interval", "paired_bootstrap", "percentile"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (``q`` in 0..100; numpy's default method), ``None`` for no values."""
    if not values:
        return None
    s = sorted(values)
    k = (len(s) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean, ``None`` for no values."""
    return sum(values) / len(values) if values else None


def paired_bootstrap(
    differences: Sequence[float], *, resamples: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(mean, low, high): the mean of per-page differences between two extractors and its percentile
    bootstrap interval at ``level``, the pages resampled with replacement. Paired, so what the pages have
    in common (hard pages are hard for both) cancels out. Seeded: the same rows give the same interval."""
    d = np.asarray(differences, dtype=np.float64)
    if d.size == 0:
        raise ValueError("paired_bootstrap needs at least one difference")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    for start in range(0, resamples, 256):  # blocks of resamples: memory stays ~256 × pages floats
        stop = min(start + 256, resamples)
        means[start:stop] = d[rng.integers(0, d.size, size=(stop - start, d.size))].mean(axis=1)
    tail = (1.0 - level) / 2
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(d.mean()), float(low), float(high)


# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (above 30: the normal 1.96 is within 4 %).
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)  # fmt: skip


def mean_interval(values: Sequence[float]) -> tuple[float, float | None, float | None]:
    """(mean, low, high): the mean of independent repeats and its 95 % Student-t interval; no interval
    (``None``, ``None``) from fewer than two values."""
    if not values:
        raise ValueError("mean_interval needs at least one value")
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, None, None
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    half = (_T95[n - 2] if n - 1 <= len(_T95) else 1.96) * sd / math.sqrt(n)
    return m, m - half, m + half
