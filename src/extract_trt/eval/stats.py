"""Small summary statistics shared by the report, the bench and the token counts."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["mean", "paired_bootstrap", "percentile"]


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
