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

__all__ = [
    "CASCADE_BUDGETS", "PRICES", "PUBLISHED_THROUGHPUT", "Price", "Throughput", "cascade_costs", "cost_per_million", "resolve_price",
    "resolve_throughput",
]  # fmt: skip


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


@dataclass(frozen=True, slots=True)
class Throughput:
    """A big model's pages/s on a priced machine, and where the figure comes from."""

    name: str
    pages_per_s: float
    price: Price
    source: str


CASCADE_BUDGETS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)  # shares of pages routed, as `extract-trt bench` costs them

# The big models' published figures (spec §3.7; Pulpie's BENCHMARKS.md, 500 Common Crawl pages): not measured here.
PUBLISHED_THROUGHPUT: dict[str, Throughput] = {
    t.name: t
    for t in (
        Throughput("pulpie-small-l4", 13.7, PRICES["l4"], "published: Pulpie Small encoder on an L4"),
        Throughput("pulpie-small-a100", 25.7, PRICES["a100"], "published: Pulpie Small encoder on an A100, batched"),
        Throughput("dripper-l4", 0.68, PRICES["l4"], "published: Dripper decoder on an L4"),
        Throughput("dripper-a100", 3.6, PRICES["a100"], "published: Dripper decoder on an A100 (vLLM, batched)"),
    )
}


def resolve_throughput(value: str) -> Throughput:
    """A :data:`PUBLISHED_THROUGHPUT` name, or ``PAGES_PER_S@PRICE`` (a measured figure and a price preset
    or $/hour, e.g. ``40@l4``)."""
    key = value.strip().lower()
    if key in PUBLISHED_THROUGHPUT:
        return PUBLISHED_THROUGHPUT[key]
    rate, sep, price = key.partition("@")
    try:
        pages_per_s = float(rate)
    except ValueError:
        pages_per_s = 0.0
    if not sep or pages_per_s <= 0:
        raise ValueError(f"big-model throughput {value!r}: use PAGES_PER_S@PRICE or one of {', '.join(PUBLISHED_THROUGHPUT)}")
    return Throughput(value, pages_per_s, resolve_price(price), "given")


def cascade_costs(
    small_pages_per_core_s: float,
    big: Throughput,
    budgets: tuple[float, ...] = CASCADE_BUDGETS,
    cpu: Price = PRICES["cpu-core"],
) -> list[dict[str, float]]:
    """$/M pages of a cascade at each budget: the small model on every page (CPU core-seconds) plus the big
    model on the ``budget`` share (its machine's time). The big model's machine is taken as fully used by
    routed pages (a queue of them), the small model's cores as fully used."""
    small = cost_per_million(small_pages_per_core_s, cpu.per_hour)
    whole = cost_per_million(big.pages_per_s, big.price.per_hour)
    return [{"budget": b, "small": small, "big": b * whole, "total": small + b * whole,
             "big_machines_per_1000_pages_s": 1000 * b / big.pages_per_s} for b in budgets]  # fmt: skip
