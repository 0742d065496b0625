"""Cost per million pages from a throughput and a price per hour, with named price presets.

``$ / M pages = price_per_hour / (pages_per_s × 3600) × 10⁶``

Presets (hourly on-demand prices used throughout extract-trt's benchmarks; pass a number to use your own):

========== ======= ==================================================================================
name       $/hour  basis
========== ======= ==================================================================================
l4         0.39    one NVIDIA L4 — the price behind Pulpie's published "$7,900 per billion pages"
                   (Small at 13.7 pages/s: 0.39 / (13.7 × 3600) × 10⁹ = $7,907; spec §3.7)
a100       1.50    one NVIDIA A100 80GB — the price in Pulpie's A100 cost figures (Dripper A100 $77,000
                   = 51,600 GPU-h × $1.50; spec §3.7)
cpu-core   0.045   one vCPU (= one core of these benchmarks' VMs): AWS c7i.large on-demand, us-east-1,
                   $0.08925/h for 2 vCPU [external list price; spot/committed prices are 2-3× lower]
========== ======= ==================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PRICES", "Price", "cost_per_million", "resolve_price"]


@dataclass(frozen=True, slots=True)
class Price:
    name: str
    per_hour: float
    basis: str


PRICES: dict[str, Price] = {
    "l4": Price("l4", 0.39, "NVIDIA L4, Pulpie's basis for $7,900 per 1B pages"),
    "a100": Price("a100", 1.50, "NVIDIA A100 80GB, Pulpie's A100 cost basis"),
    "cpu-core": Price("cpu-core", 0.045, "one vCPU, AWS c7i.large on-demand $0.08925/h ÷ 2"),
}


def resolve_price(value: str | float) -> Price:
    """A preset name (``l4``, ``a100``, ``cpu-core``) or a number of dollars per hour."""
    if isinstance(value, (int, float)):
        per_hour = float(value)
    else:
        key = value.strip().lower()
        if key in PRICES:
            return PRICES[key]
        try:
            per_hour = float(key.lstrip("$"))
        except ValueError:
            raise ValueError(f"price {value!r}: use a number of $/hour or one of {', '.join(PRICES)}") from None
    if per_hour < 0:
        raise ValueError(f"price per hour must be >= 0, got {per_hour}")
    return Price(f"${per_hour:g}/h", per_hour, "given")


def cost_per_million(pages_per_s: float, price_per_hour: float) -> float:
    """Dollars per million pages at ``pages_per_s`` on a machine costing ``price_per_hour``."""
    if pages_per_s <= 0:
        raise ValueError(f"pages/s must be > 0, got {pages_per_s}")
    return price_per_hour / (pages_per_s * 3600.0) * 1e6
