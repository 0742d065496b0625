"""Analytic roofline projection of GPU labelers: pages/s and $/M pages on GPUs this machine does not have.

**FLOPs** (the Dripper paper's appendix formulas; ``L`` layers, ``d`` hidden size, ``N`` input tokens,
``M`` generated tokens; the ``24·L·d²`` term is 2 FLOPs per weight of a ``12·d²``-per-layer block):

* prefill (an encoder chunk, or a decoder's prompt): ``24·L·d²·N + 4·L·d·N²``
* decode (``M`` tokens, each attending to the prompt and the answer so far):
  ``24·L·d²·M + 4·L·d·M·N + 2·L·d·M²``

**Bytes moved** (bf16, 2 bytes per value; our model of the memory traffic, stated so it can be checked):

* prefill: the weights once per batch of ``batch_tokens`` tokens (Pulpie's ``max_batch_tokens`` = 16,384),
  i.e. ``W·N / batch_tokens`` per sequence, plus activations ``2·2·L·N·(6·d + 3·ffn)`` (each layer's
  hidden, q/k/v/o and FFN tensors written and read once);
* decode: per step, the weights shared by the ``B`` sequences decoded together (``W / B``) plus the sequence's
  KV cache ``2·L·kv_dim·ctx·2``; ``B`` = how many sequences' KV caches fit in ``memory_utilization`` of the
  GPU memory after the weights, at most ``max_seqs`` (vLLM's defaults: 0.8 as MinerU-HTML sets it, 256).

**Time** per page = Σ over phases of ``max(FLOPs / (peak·compute_efficiency), bytes / (bandwidth·
bandwidth_efficiency))``; pages/s = pages / Σ time. Assumed efficiencies: **0.5** of peak bf16 tensor FLOP/s
(a typical model FLOPs utilisation of large-batch transformer inference) and **0.8** of peak memory
bandwidth. Peak figures are the vendors' datasheet numbers (dense, no sparsity), see :data:`GPUS`.

What the roofline leaves out, and why published figures are lower: Python/launch overhead per forward
(eager PyTorch, vLLM ``enforce_eager=True``), padding, CPU preprocessing on the critical path, guided-
decoding automata built per request (Dripper), clocks below boost. :func:`check_published` reports the
projection's error against the measured figures of spec §3.7 (the raw roofline is 2-6.5× above them) and
the efficiency that would match them. Projections on other pages are therefore headed by their *calibrated*
figures (:func:`calibration`): scaled by published / projected of the same model and GPU, i.e. what the
published setup would do on those pages if its shortfall from the roofline stayed the same; the raw figure is
printed as an upper bound. Each projection is priced as one GPU of its kind (:mod:`extract_trt.eval.cost`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from extract_trt.eval.cost import DEFAULT_PRICES, PriceTable, cost_per_million
from extract_trt.eval.tokens import PageTokens, TokenStats, measure_pages, token_stats
from extract_trt.runtime.types import PageBlocks

__all__ = [
    "ARCHS",
    "GPUS",
    "PUBLISHED",
    "Assumptions",
    "Check",
    "Gpu",
    "ModelArch",
    "PageCost",
    "Projection",
    "RooflineReport",
    "calibration",
    "check_published",
    "format_checks",
    "format_projections",
    "decode_flops",
    "page_cost",
    "prefill_flops",
    "project",
    "published_workload",
    "roofline_report",
]


@dataclass(frozen=True, slots=True)
class Gpu:
    name: str
    bf16_flops: float  # dense tensor-core FLOP/s
    bandwidth: float  # bytes/s
    memory: float  # bytes
    source: str


GPUS: dict[str, Gpu] = {
    "l4": Gpu("NVIDIA L4", 121e12, 300e9, 24e9,
              "datasheet: 242 TFLOPS FP16/BF16 with sparsity = 121 dense; 300 GB/s GDDR6; 24 GB"),
    "a100": Gpu("NVIDIA A100 80GB SXM", 312e12, 2039e9, 80e9,
                "datasheet: 312 TFLOPS BF16 dense; 2,039 GB/s HBM2e; 80 GB"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class ModelArch:
    name: str
    kind: str  # "encoder" (one forward per chunk) or "decoder" (prefill + generated answer)
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    params: float  # all weights, embeddings included
    source: str

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim


ARCHS: dict[str, ModelArch] = {
    "pulpie-small": ModelArch("Pulpie Small (EuroBERT-210m)", "encoder", 12, 768, 12, 12, 64, 3072, 128257, 210e6,
                              "EuroBERT-210m HF config via spec §3.4"),
    "pulpie-base": ModelArch("Pulpie Base (EuroBERT-610m)", "encoder", 26, 1152, 18, 6, 64, 4096, 128257, 610e6,
                             "EuroBERT paper via spec §3.4 [unverified]; kv_heads assumed 6"),
    "pulpie-large": ModelArch("Pulpie Large (EuroBERT-2.1B)", "encoder", 32, 2304, 18, 6, 128, 6144, 128257, 2.1e9,
                              "EuroBERT-2.1B HF config via spec §3.4"),
    "dripper-v1.1": ModelArch("Dripper v1.1 (Hunyuan-0.5B)", "decoder", 24, 1024, 16, 8, 64, 3584, 120818, 0.5e9,
                              "Hunyuan-0.5B HF config [external, unverified here]"),
    "dripper-v1.0": ModelArch("Dripper v1.0 (Qwen3-0.6B)", "decoder", 28, 1024, 16, 8, 128, 3072, 151936, 0.6e9,
                              "Qwen3-0.6B HF config [external]"),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Assumptions:
    """The free parameters of the projection (module doc)."""

    compute_efficiency: float = 0.5
    bandwidth_efficiency: float = 0.8
    bytes_per_value: int = 2  # bf16 weights, activations and KV cache
    batch_tokens: int = 16384  # tokens per prefill batch (Pulpie max_batch_tokens)
    max_seqs: int = 256  # concurrent decode sequences (vLLM max_num_seqs)
    memory_utilization: float = 0.8  # share of GPU memory for weights + KV cache (MinerU-HTML's vLLM setting)


def prefill_flops(arch: ModelArch, n: float) -> float:
    """``24·L·d²·N + 4·L·d·N²``."""
    L, d = arch.layers, arch.hidden
    return 24 * L * d * d * n + 4 * L * d * n * n


def decode_flops(arch: ModelArch, n: float, m: float) -> float:
    """``24·L·d²·M + 4·L·d·M·N + 2·L·d·M²``."""
    L, d = arch.layers, arch.hidden
    return 24 * L * d * d * m + 4 * L * d * m * n + 2 * L * d * m * m


@dataclass(slots=True)
class PageCost:
    """FLOPs, bytes and projected seconds of one page; ``compute_s``/``memory_s`` are the phase maxima's parts."""

    flops: float = 0.0
    bytes: float = 0.0
    seconds: float = 0.0
    compute_s: float = 0.0  # Σ over phases of the compute time
    memory_s: float = 0.0  # Σ over phases of the memory time

    def add_phase(self, flops: float, nbytes: float, gpu: Gpu, a: Assumptions) -> None:
        tc = flops / (gpu.bf16_flops * a.compute_efficiency)
        tm = nbytes / (gpu.bandwidth * a.bandwidth_efficiency)
        self.flops += flops
        self.bytes += nbytes
        self.compute_s += tc
        self.memory_s += tm
        self.seconds += max(tc, tm)


def _prefill_bytes(arch: ModelArch, n: float, a: Assumptions) -> float:
    weights = arch.params * a.bytes_per_value * n / a.batch_tokens
    activations = 2 * a.bytes_per_value * arch.layers * n * (6 * arch.hidden + 3 * arch.ffn)
    return weights + activations


def decode_batch(arch: ModelArch, gpu: Gpu, context: float, a: Assumptions) -> int:
    """Sequences decoded together: KV caches of ``context`` tokens that fit next to the weights."""
    free = gpu.memory * a.memory_utilization - arch.params * a.bytes_per_value
    per_seq = 2 * arch.layers * arch.kv_dim * context * a.bytes_per_value
    if free <= 0:
        return 1
    return max(1, min(a.max_seqs, int(free // max(per_seq, 1.0))))


def page_cost(arch: ModelArch, gpu: Gpu, page: PageTokens, a: Assumptions = Assumptions()) -> PageCost:
    """Projected cost of one page: encoder chunks, or decoder prompt + answer (module doc)."""
    cost = PageCost()
    if arch.kind == "encoder":
        for n in page.chunks:
            cost.add_phase(prefill_flops(arch, n), _prefill_bytes(arch, n, a), gpu, a)
        return cost
    n, m = page.prompt, page.output
    cost.add_phase(prefill_flops(arch, n), _prefill_bytes(arch, n, a), gpu, a)
    if m > 0:
        b = decode_batch(arch, gpu, n + m, a)
        kv = 2 * arch.layers * arch.kv_dim * a.bytes_per_value * (m * n + m * (m + 1) / 2)
        cost.add_phase(decode_flops(arch, n, m), m * arch.params * a.bytes_per_value / b + kv, gpu, a)
    return cost


@dataclass(slots=True)
class Projection:
    model: str
    gpu: str
    pages: int
    pages_per_s: float
    flops_per_page: float
    bytes_per_page: float
    compute_share: float  # compute time / (compute + memory time): > 0.5 means mostly compute-bound
    dollars_per_million: float | None  # one GPU of the kind at its price; None: no price for the kind
    price_per_hour: float | None


def project(
    model: str, gpu: str, pages: Sequence[PageTokens], a: Assumptions = Assumptions(), prices: PriceTable = DEFAULT_PRICES
) -> Projection:
    """Projected pages/s and $/M pages of ``model`` (:data:`ARCHS` key) on one ``gpu`` (:data:`GPUS` key),
    priced at that GPU kind's price in ``prices``."""
    if not pages:
        raise ValueError("no pages to project")
    arch, dev = ARCHS[model], GPUS[gpu]
    costs = [page_cost(arch, dev, p, a) for p in pages]
    seconds = sum(c.seconds for c in costs)
    pps = len(pages) / seconds if seconds > 0 else float("inf")
    compute, memory = sum(c.compute_s for c in costs), sum(c.memory_s for c in costs)
    price = prices.gpu(gpu)
    return Projection(
        model=model,
        gpu=gpu,
        pages=len(pages),
        pages_per_s=pps,
        flops_per_page=sum(c.flops for c in costs) / len(pages),
        bytes_per_page=sum(c.bytes for c in costs) / len(pages),
        compute_share=compute / (compute + memory) if compute + memory else 0.0,
        dollars_per_million=cost_per_million(pps, price.per_hour) if price is not None else None,
        price_per_hour=price.per_hour if price is not None else None,
    )


#: Published measured throughputs (pages/s) on 500 Common Crawl pages (spec §3.7, Pulpie BENCHMARKS.md).
PUBLISHED: dict[tuple[str, str], float] = {
    ("pulpie-small", "l4"): 13.7, ("pulpie-base", "l4"): 3.9, ("pulpie-large", "l4"): 1.3,
    ("dripper-v1.1", "l4"): 0.68,
    ("pulpie-small", "a100"): 25.7, ("pulpie-base", "a100"): 7.7, ("pulpie-large", "a100"): 3.5,
    ("dripper-v1.1", "a100"): 3.6,
}  # fmt: skip

# Token statistics published for those pages (spec §3.2, §3.7): encoder chunks/page mean 1.2 of mean 3,728
# tokens (EuroBERT tokenizer); Dripper L4 prompts 4,372 tokens and answers 157 tokens on average.
PUBLISHED_CHUNK_TOKENS = 3728
PUBLISHED_PROMPT_TOKENS = 4372
PUBLISHED_OUTPUT_TOKENS = 157


def published_workload() -> list[PageTokens]:
    """Five pages with the published means: one chunk on four pages, two on the fifth (1.2 chunks/page)."""
    page = dict(blocks=0, html_chars=0, html_tokens=0, prompt=PUBLISHED_PROMPT_TOKENS, output=PUBLISHED_OUTPUT_TOKENS)
    return [PageTokens(chunks=[PUBLISHED_CHUNK_TOKENS] * (2 if i == 4 else 1), **page) for i in range(5)]


@dataclass(slots=True)
class Check:
    """The projection against one published figure."""

    projection: Projection
    published: float
    assumptions: Assumptions = field(default_factory=Assumptions)

    @property
    def error(self) -> float:
        """Relative error of the projection: ``projected / published - 1``."""
        return self.projection.pages_per_s / self.published - 1

    @property
    def implied_efficiency(self) -> float:
        """The compute efficiency (bandwidth efficiency scaled alike) at which projection = published."""
        return self.assumptions.compute_efficiency * self.published / self.projection.pages_per_s


def check_published(pages: Sequence[PageTokens] | None = None, a: Assumptions = Assumptions()) -> list[Check]:
    """Project every :data:`PUBLISHED` (model, GPU) on ``pages`` (default: :func:`published_workload`)."""
    pages = published_workload() if pages is None else pages
    return [Check(project(model, gpu, pages, a), value, a) for (model, gpu), value in PUBLISHED.items()]


def format_checks(checks: Sequence[Check]) -> str:
    """The published-figure check as a plain-text table."""
    a = checks[0].assumptions if checks else Assumptions()
    lines = [
        f"Roofline check against published measurements (500 CC pages; {PUBLISHED_CHUNK_TOKENS:,}-token chunks, "
        f"1.2/page; Dripper prompt {PUBLISHED_PROMPT_TOKENS:,} + answer {PUBLISHED_OUTPUT_TOKENS} tokens; "
        f"efficiency {a.compute_efficiency:g} compute / {a.bandwidth_efficiency:g} bandwidth):",
        f"  {'model':<14} {'GPU':<5} {'projected p/s':>13} {'published p/s':>13} {'error':>7} {'implied eff.':>12}",
    ]
    for c in checks:
        p = c.projection
        lines.append(
            f"  {p.model:<14} {p.gpu:<5} {p.pages_per_s:13.2f} {c.published:13.2f} {c.error:+7.0%} {c.implied_efficiency:12.3f}"
        )
    return "\n".join(lines)


def calibration(checks: Sequence[Check]) -> dict[tuple[str, str], float]:
    """(model, GPU) → published / projected pages/s, from the published-figure check."""
    return {(c.projection.model, c.projection.gpu): c.published / c.projection.pages_per_s for c in checks}


#: Where the calibration factors come from (printed with them).
CALIBRATION_SOURCE = (
    "published ÷ roofline on the published workload of the same model and GPU; published: Pulpie's and "
    "Dripper's measured pages/s on 500 Common Crawl pages (spec §3.7)"
)


def _money(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def format_projections(projections: Sequence[Projection], factors: dict[tuple[str, str], float] | None = None) -> str:
    """Projections on measured pages as a plain-text table. The headline columns are the *calibrated*
    pages/s and $/M pages (the roofline × ``factors`` of :func:`calibration`, what the published setup would
    do on these pages); the raw roofline follows as an upper bound."""
    factors = factors or {}
    lines = [
        f"  {'model':<14} {'GPU':<5} {'pages/s':>8} {'$/M pages':>10} {'factor':>7} {'upper bound p/s':>15} "
        f"{'$/M at bound':>12} {'GFLOP/page':>10} {'GB/page':>8} {'compute':>8}",
    ]
    for p in projections:
        k = factors.get((p.model, p.gpu))
        if k:
            dollars = None if p.dollars_per_million is None else p.dollars_per_million / k
            head = f"{p.pages_per_s * k:8.2f} {_money(dollars):>10} {k:7.3f}"
        else:
            head = f"{'-':>8} {'-':>10} {'none':>7}"
        lines.append(
            f"  {p.model:<14} {p.gpu:<5} {head} {p.pages_per_s:15.2f} {_money(p.dollars_per_million):>12} "
            f"{p.flops_per_page / 1e9:10.0f} {p.bytes_per_page / 1e9:8.2f} {p.compute_share:8.0%}"
        )
    return "\n".join(lines)


@dataclass(slots=True)
class RooflineReport:
    """The published-figure check plus projections of every model × GPU on measured pages."""

    checks: list[Check]
    projections: list[Projection]
    token_stats: TokenStats | None
    tokens_from: str
    assumptions: Assumptions

    prices: PriceTable = DEFAULT_PRICES

    def to_text(self) -> str:
        lines = [format_checks(self.checks)]
        if self.token_stats is not None:
            t = self.token_stats
            gpus = [p for key in GPUS if (p := self.prices.gpu(key)) is not None]
            lines += [
                "",
                f"GPU projection on these {t.pages} pages — computed, not measured (no GPU ran them). Read the "
                "calibrated pages/s and $/M pages: the roofline × factor, where factor = "
                f"{CALIBRATION_SOURCE}. The upper bound is the raw roofline (peak FLOP/s × "
                f"{self.assumptions.compute_efficiency:g}, bandwidth × {self.assumptions.bandwidth_efficiency:g}), "
                "which no published setup reaches (see the check above). Cost: one GPU at "
                + ", ".join(f"{p.name} ${p.per_hour:g}/h" for p in gpus) + ".",
                f"Tokens: {self.tokens_from}; {t.chars_per_token:.2f} chars/token of simplified HTML; encoder "
                f"{t.chunks_per_page:.2f} chunks/page, mean {t.chunk_mean:,.0f} tokens; decoder prompt mean "
                f"{t.prompt_mean:,.0f}, answer mean {t.output_mean:,.0f} tokens.",
                format_projections(self.projections, calibration(self.checks)),
            ]
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {
            "assumptions": asdict(self.assumptions),
            "gpus": {k: asdict(v) for k, v in GPUS.items()},
            "models": {k: asdict(v) for k, v in ARCHS.items()},
            "checks": [{**asdict(c.projection), "published": c.published, "error": c.error,
                        "implied_efficiency": c.implied_efficiency} for c in self.checks],  # fmt: skip
            "projections": [asdict(p) for p in self.projections],
            "calibration": {f"{m}/{g}": k for (m, g), k in calibration(self.checks).items()},
            "calibration_source": CALIBRATION_SOURCE,
            "calibrated": [
                {"model": p.model, "gpu": p.gpu, "factor": k, "pages_per_s": p.pages_per_s * k,
                 "dollars_per_million": None if p.dollars_per_million is None else p.dollars_per_million / k}
                for p in self.projections if (k := calibration(self.checks).get((p.model, p.gpu)))
            ],  # fmt: skip
            "prices": {key: asdict(p) for key in GPUS if (p := self.prices.gpu(key)) is not None},
            "token_stats": None if self.token_stats is None else asdict(self.token_stats),
            "tokens_from": self.tokens_from,
        }


def roofline_report(
    pages: Sequence[PageBlocks] = (),
    *,
    tokenizer_file: str | None = None,
    assumptions: Assumptions = Assumptions(),
    prices: PriceTable = DEFAULT_PRICES,
) -> RooflineReport:
    """Check the model against the published figures and project every model × GPU on ``pages``.

    Token counts come from :func:`extract_trt.eval.tokens.measure_pages` (``tokenizer_file`` or the
    two-fold local BPE). Each GPU is priced at its kind's price in ``prices``.
    """
    checks = check_published(a=assumptions)
    if not pages:
        return RooflineReport(checks, [], None, "", assumptions, prices)
    counts, how = measure_pages(pages, tokenizer_file)
    projections = [project(m, g, counts, assumptions, prices) for m in ARCHS for g in GPUS]
    return RooflineReport(checks, projections, token_stats(counts), how, assumptions, prices)
