"""Cost per million pages with named parts: a price per vCPU-hour and a price per GPU-hour of each GPU kind.

``$ / M pages = Σ (units × price per unit-hour) / (pages_per_s × 3600) × 10⁶``

A CPU run with ``N`` worker processes is charged ``N`` vCPUs; a GPU run one GPU of its kind plus the vCPUs
of its worker processes; the roofline's projections one GPU of the projected kind (nothing else: the
published figures they are calibrated on are GPU-hour prices). Every :class:`Cost` names the prices and the
units it used, so a printed figure says what it is.

Default prices (:data:`DEFAULT_PRICES`; ``--prices prices.toml`` replaces any of them):

=========== ======= ===================================================================================
part        $/hour  source (date taken)
=========== ======= ===================================================================================
vcpu        0.045   one vCPU: AWS EC2 c7i.large on-demand, us-east-1, $0.08925/h for 2 vCPU (2026-11-30);
                    spot or committed prices are 2-3× lower
gpu.l4      0.39    one NVIDIA L4: the price behind Pulpie's published "$7,900 per billion pages"
                    (Small at 13.7 pages/s: 0.39 / (13.7 × 3600) × 10⁹ = $7,907; spec §3.7, 2026-11-30)
gpu.a100    1.50    one NVIDIA A100 80GB: the price of Pulpie's A100 cost figures (Dripper A100 $77,000
                    = 51,600 GPU-h × $1.50; spec §3.7, 2026-11-30)
=========== ======= ===================================================================================

``prices.toml`` (every key optional; ``source`` is printed with the figure)::

    [vcpu]
    per_hour = 0.03
    source = "our cluster, 2027 contract"

    [gpu.l4]
    per_hour = 0.70
    source = "GCP g2-standard-4 on-demand, 2026-12"

    [gpu.h100]
    per_hour = 2.50
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CASCADE_BUDGETS",
    "DEFAULT_PRICES",
    "PUBLISHED_THROUGHPUT",
    "Cost",
    "Price",
    "PriceTable",
    "Throughput",
    "cascade_costs",
    "cost_per_million",
    "gpu_kind",
    "load_prices",
    "machine_price",
    "resolve_throughput",
]


@dataclass(frozen=True, slots=True)
class Price:
    """What one unit (a vCPU, a GPU of a kind, or a whole machine) costs per hour, and where that comes from."""

    name: str  # "vcpu", "gpu.l4", "machine"
    per_hour: float
    source: str

    def __post_init__(self) -> None:
        if not self.per_hour >= 0:
            raise ValueError(f"price {self.name}: $/hour must be a number >= 0, got {self.per_hour!r}")


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The vCPU price and the price of each GPU kind (keys: lower-case kinds such as ``l4``, ``a100``)."""

    vcpu: Price
    gpus: Mapping[str, Price] = field(default_factory=dict)

    def gpu(self, kind: str) -> Price | None:
        """The price of one GPU of ``kind`` (``None``: no price known for it)."""
        return self.gpus.get(kind.lower())

    def merged(self, data: Mapping[str, object], origin: str) -> PriceTable:
        """This table with the parts ``data`` (a parsed ``prices.toml``) gives replaced or added."""
        unknown = set(data) - {"vcpu", "gpu"}
        if unknown:
            raise ValueError(f"{origin}: unknown section(s) {', '.join(sorted(unknown))}; use [vcpu] and [gpu.KIND]")
        vcpu = self.vcpu
        if "vcpu" in data:
            vcpu = _price_entry("vcpu", data["vcpu"], origin)
        gpus = dict(self.gpus)
        section = data.get("gpu", {})
        if not isinstance(section, Mapping):
            raise ValueError(f"{origin}: [gpu] must hold [gpu.KIND] tables")
        for kind, entry in section.items():
            gpus[kind.lower()] = _price_entry(f"gpu.{kind.lower()}", entry, origin)
        return PriceTable(vcpu, gpus)


def _price_entry(name: str, entry: object, origin: str) -> Price:
    if not isinstance(entry, Mapping) or "per_hour" not in entry:
        raise ValueError(f"{origin}: [{name}] needs per_hour = <dollars per hour>")
    value = entry["per_hour"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{origin}: [{name}] per_hour must be a number, got {value!r}")
    return Price(name, float(value), str(entry.get("source", origin)))


DEFAULT_PRICES = PriceTable(
    vcpu=Price("vcpu", 0.045, "AWS EC2 c7i.large on-demand us-east-1 $0.08925/h ÷ 2 vCPU (2026-11-30)"),
    gpus={
        "l4": Price("gpu.l4", 0.39, "Pulpie's basis for $7,900 per 1B pages (spec §3.7, 2026-11-30)"),
        "a100": Price("gpu.a100", 1.50, "Pulpie's A100 cost figures, $1.50/GPU-h (spec §3.7, 2026-11-30)"),
    },
)


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """:data:`DEFAULT_PRICES` with the parts a ``prices.toml`` gives replaced (module doc)."""
    if path is None:
        return DEFAULT_PRICES
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from exc
    return DEFAULT_PRICES.merged(data, str(path))


def machine_price(per_hour: str | float) -> Price:
    """A whole machine's price (``--price-per-hour``): a number of dollars per hour."""
    try:
        value = float(str(per_hour).strip().lstrip("$"))
    except ValueError:
        raise ValueError(
            f"price per hour {per_hour!r}: give a number of $/hour for this whole machine; "
            "vCPU and GPU prices go in --prices prices.toml"
        ) from None
    return Price("machine", value, "given with --price-per-hour")


def cost_per_million(pages_per_s: float, price_per_hour: float) -> float:
    """Dollars per million pages at ``pages_per_s`` on hardware costing ``price_per_hour``."""
    if pages_per_s <= 0:
        raise ValueError(f"pages/s must be > 0, got {pages_per_s}")
    return price_per_hour / (pages_per_s * 3600.0) * 1e6


@dataclass(frozen=True, slots=True)
class Cost:
    """$/M pages of one throughput and the priced parts behind it: ``(price, units)`` pairs."""

    parts: tuple[tuple[Price, int], ...]
    pages_per_s: float | None
    missing: str | None = None  # why there is no figure (a GPU kind without a price)

    @property
    def per_hour(self) -> float:
        return sum(price.per_hour * units for price, units in self.parts)

    @property
    def dollars_per_million(self) -> float | None:
        if not self.pages_per_s or self.missing is not None:
            return None
        return cost_per_million(self.pages_per_s, self.per_hour)

    def describe(self) -> str:
        """``2 vcpu × $0.045/h`` / ``1 gpu.l4 × $0.39/h + 2 vcpu × $0.045/h``."""
        if self.missing is not None:
            return self.missing
        return " + ".join(f"{units} {price.name} × ${price.per_hour:g}/h" for price, units in self.parts)

    def as_json(self) -> dict[str, object]:
        return {
            "dollars_per_million": self.dollars_per_million,
            "price_per_hour": self.per_hour,
            "priced_as": self.describe(),
            "parts": [{"price": p.name, "units": u, "per_hour": p.per_hour, "source": p.source} for p, u in self.parts],
        }


#: GPU kinds recognised in a device name (``nvidia-smi``/ORT), most specific first.
_GPU_KINDS = ("h200", "h100", "a100", "a10g", "a10", "l40s", "l40", "l4", "t4", "v100")


def gpu_kind(device_name: str) -> str | None:
    """The price-table kind of a GPU from its device name (``"NVIDIA L4"`` → ``l4``); ``None``: not known."""
    words = device_name.lower().replace("-", " ").split()
    for kind in _GPU_KINDS:
        if kind in words:
            return kind
    return None


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
        Throughput("pulpie-small-l4", 13.7, DEFAULT_PRICES.gpus["l4"], "published: Pulpie Small encoder on an L4"),
        Throughput("pulpie-small-a100", 25.7, DEFAULT_PRICES.gpus["a100"], "published: Pulpie Small encoder on an A100, batched"),
        Throughput("dripper-l4", 0.68, DEFAULT_PRICES.gpus["l4"], "published: Dripper decoder on an L4"),
        Throughput("dripper-a100", 3.6, DEFAULT_PRICES.gpus["a100"], "published: Dripper decoder on an A100 (vLLM, batched)"),
    )
}


def resolve_throughput(value: str, prices: PriceTable = DEFAULT_PRICES) -> Throughput:
    """A :data:`PUBLISHED_THROUGHPUT` name, or ``PAGES_PER_S@PRICE`` (a measured figure and a GPU kind of
    ``prices`` or $/hour, e.g. ``40@l4``)."""
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
    return Throughput(value, pages_per_s, _gpu_or_machine_price(price, prices), "given")


def cascade_costs(
    small_pages_per_core_s: float,
    big: Throughput,
    budgets: tuple[float, ...] = CASCADE_BUDGETS,
    cpu: Price = DEFAULT_PRICES.vcpu,
) -> list[dict[str, float]]:
    """$/M pages of a cascade at each budget: the small model on every page (CPU core-seconds) plus the big
    model on the ``budget`` share (its machine's time). The big model's machine is taken as fully used by
    routed pages (a queue of them), the small model's cores as fully used."""
    small = cost_per_million(small_pages_per_core_s, cpu.per_hour)
    whole = cost_per_million(big.pages_per_s, big.price.per_hour)
    return [{"budget": b, "small": small, "big": b * whole, "total": small + b * whole,
             "big_machines_per_1000_pages_s": 1000 * b / big.pages_per_s} for b in budgets]  # fmt: skip


def _gpu_or_machine_price(value: str, prices: PriceTable) -> Price:
    """A GPU kind of ``prices`` (``l4``) or a number of dollars per hour for the big model's machine."""
    known = prices.gpu(value)
    if known is not None:
        return known
    try:
        return machine_price(value)
    except ValueError:
        raise ValueError(f"price {value!r}: use a number of $/hour or a GPU kind ({', '.join(prices.gpus)})") from None
