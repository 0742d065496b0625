"""Small summary statistics shared by the report, the bench and the token counts."""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["mean", "percentile"]


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
