"""Throughput of the full pipeline and of each stage, per labeler, ONNX Runtime provider and worker count.

:func:`bench_pipeline` runs an :class:`~extract_trt.Extractor` over pages given as **bytes** (HTML strings
from JSONL are UTF-8 encoded first, so the decode stage does the work it does on crawled bytes) and
reports:

* pages/s of the full pipeline, counted from the first finished page on (process and worker start-up and
  the first labeller batch are excluded, so 1 and N workers compare at steady state);
* per stage (``decode`` bytes → str, ``simplify`` = parse + simplify, ``label``, ``reconstruct``,
  ``convert``): total seconds, pages/s of the stage alone (pages / its summed seconds) and share of the page
  time, from the per-page timings the Extractor records (in the workers when ``workers > 1``);
* the label stage split into ``tokenize+pack`` and ``infer`` for labelers with the two-step API
  ``prepare(pages) -> prepared`` / ``infer(prepared) -> labels`` (the encoder backend), measured in a second,
  single-process pass over the same simplified pages in groups of ``batch_size``;
* p50/p95 per-page latency (sum of the page's stage times);
* pages per CPU-second of the process tree (this process + workers; robust to other load on the machine);
* peak RSS of the process tree, sampled every 20 ms with psutil;
* the ONNX Runtime providers the labeler's sessions actually use: every ``onnxruntime.InferenceSession``
  found among the labeler's attributes (two levels deep) is asked ``get_providers()``. When a provider was
  requested and the session's first provider differs, the run is flagged ``fallback`` — a silent CPU
  fallback cannot pass as GPU.

Labelers are named as in :mod:`extract_trt.eval.labelers` (``default``, ``heuristic``, a model directory,
``module:attr``). Providers are chosen for exported ONNX model directories (``extract-trt export``); other
labelers run once, on whatever they use (reported all the same).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from extract_trt.eval.cost import Price, cost_per_million, resolve_price
from extract_trt.eval.labelers import make_labeler, takes_provider
from extract_trt.eval.stats import percentile
from extract_trt.runtime.batch import run as run_batch
from extract_trt.runtime.decode import decode_html
from extract_trt.runtime.simplify import simplify
from extract_trt.runtime.types import PageBlocks

__all__ = [
    "STAGES",
    "BenchReport",
    "PipelineRun",
    "ProcessSampler",
    "available_labelers",
    "bench_matrix",
    "bench_pipeline",
    "format_runs",
    "label_sub_stages",
    "run_bench",
    "session_providers",
]

STAGES = ("decode", "simplify", "label", "reconstruct", "convert")  # plus "metadata" when it runs
_GPU_PROVIDERS = ("CUDAExecutionProvider", "TensorrtExecutionProvider", "ROCMExecutionProvider", "MIGraphXExecutionProvider")


def available_labelers() -> list[str]:
    """The labelers a plain ``extract-trt bench`` measures: the default one and the heuristic."""
    return ["default", "heuristic"]


def session_providers(labeler: object) -> list[str] | None:
    """Providers in use by the ONNX Runtime sessions among ``labeler``'s attributes (``None``: no session)."""
    try:
        import onnxruntime as ort
    except ImportError:  # pragma: no cover - onnxruntime is a core dependency
        return None
    found: list[str] = []
    seen: set[int] = set()

    def visit(obj: object, depth: int) -> None:
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, ort.InferenceSession):
            found.extend(p for p in obj.get_providers() if p not in found)
            return
        if depth == 0:
            return
        values: Iterable[Any]
        if isinstance(obj, dict):
            values = obj.values()
        elif isinstance(obj, (list, tuple)):
            values = obj
        else:
            values = list(getattr(obj, "__dict__", {}).values())
            values += [getattr(obj, s) for s in getattr(type(obj), "__slots__", ()) if hasattr(obj, s)]
        for value in values:
            visit(value, depth - 1)

    visit(labeler, 2)
    return found or None


class ProcessSampler:
    """Peak resident memory of this process and its children, and the CPU seconds the children used,
    sampled in a thread every ``interval`` seconds (context manager)."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak_rss = 0
        self.child_cpu: dict[int, float] = {}  # pid → last seen user + system seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def children_cpu_seconds(self) -> float:
        return sum(self.child_cpu.values())

    def _sample(self) -> None:
        import psutil

        proc = psutil.Process()
        total = proc.memory_info().rss
        for child in proc.children(recursive=True):
            try:
                total += child.memory_info().rss
                times = child.cpu_times()
                self.child_cpu[child.pid] = times.user + times.system
            except psutil.Error:  # a worker that just exited
                pass
        self.peak_rss = max(self.peak_rss, total)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.interval)

    def __enter__(self) -> ProcessSampler:
        self._sample()
        self.child_cpu.clear()  # children that existed before are not part of the measurement
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()


@dataclass(slots=True)
class PipelineRun:
    """One measured configuration."""

    labeler: str
    workers: int
    pages: int
    errors: int = 0
    steady_pages: int = 0  # pages finished after the first result
    steady_seconds: float = 0.0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process + its worker processes
    latencies: list[float] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    sub_stage_seconds: dict[str, float] = field(default_factory=dict)
    peak_rss: int = 0
    provider_requested: str | None = None
    providers_used: list[str] | None = None
    skipped: str | None = None
    metadata: bool = False  # the Extractor read page metadata

    @property
    def name(self) -> str:
        """The labeler, marked when page metadata was read (``--metadata both`` measures its cost)."""
        return f"{self.labeler} +meta" if self.metadata else self.labeler

    @property
    def pages_per_s(self) -> float | None:
        if self.steady_seconds > 0 and self.steady_pages > 0:
            return self.steady_pages / self.steady_seconds
        return self.pages / self.wall_seconds if self.wall_seconds > 0 else None

    @property
    def pages_per_core_s(self) -> float | None:
        """Pages per CPU second of this process and its workers (= pages/s per fully used core)."""
        return self.pages / self.cpu_seconds if self.cpu_seconds > 0 else None

    @property
    def fallback(self) -> bool:
        """A provider was requested but the session runs on another one."""
        if not self.provider_requested or not self.providers_used:
            return False
        return self.providers_used[0] != self.provider_requested

    @property
    def on_gpu(self) -> bool:
        return bool(self.providers_used) and self.providers_used[0] in _GPU_PROVIDERS

    def stage_rates(self) -> dict[str, float | None]:
        """pages/s of each stage alone = pages / its summed seconds."""
        return {k: (self.pages / s if s > 0 else None) for k, s in self.stage_seconds.items()}

    def as_json(self) -> dict[str, Any]:
        return {
            "labeler": self.labeler, "metadata": self.metadata, "workers": self.workers, "pages": self.pages, "errors": self.errors,
            "pages_per_s": self.pages_per_s, "pages_per_core_s": self.pages_per_core_s,
            "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds,
            "latency_p50_ms": _ms(percentile(self.latencies, 50)), "latency_p95_ms": _ms(percentile(self.latencies, 95)),
            "stage_seconds": self.stage_seconds, "stage_pages_per_s": self.stage_rates(),
            "sub_stage_seconds": self.sub_stage_seconds, "peak_rss_mb": self.peak_rss / 2**20,
            "provider_requested": self.provider_requested, "providers_used": self.providers_used,
            "fallback": self.fallback, "skipped": self.skipped,
        }  # fmt: skip


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def as_bytes_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with their ``html`` as UTF-8 bytes (read errors kept), materialised for repeated runs."""
    out = []
    for r in records:
        html = r.get("html")
        out.append({**r, "html": html.encode("utf-8") if isinstance(html, str) else html})
    return out


def bench_pipeline(
    records: Sequence[dict[str, Any]],
    labeler: str = "default",
    *,
    provider: str | None = None,
    workers: int = 1,
    output: str = "markdown",
    batch_size: int = 16,
    metadata: bool = False,
) -> PipelineRun:
    """Measure one configuration on ``records`` (dicts with ``html`` bytes, e.g. from :func:`as_bytes_records`)."""
    run = PipelineRun(labeler=labeler, workers=workers, pages=len(records), provider_requested=provider, metadata=metadata)
    try:
        lab = make_labeler(labeler, provider)
    except Exception as exc:  # a model that is not there, a provider it cannot use: reported, not fatal
        run.skipped = f"{type(exc).__name__}: {exc}"
        return run
    run.providers_used = session_providers(lab)
    # Worker processes build their own labeler from its name when they can (ORT sessions do not pickle).
    by_name = workers > 1 and provider is None and not takes_provider(labeler) and ":" not in labeler
    kwargs = {"labeler": labeler if by_name else lab, "output": output, "batch_size": batch_size, "metadata": metadata}
    stages = dict.fromkeys(STAGES, 0.0)
    with ProcessSampler() as sampler:
        cpu0, t0 = time.process_time(), time.perf_counter()
        first: float | None = None
        try:
            for result in run_batch(records, workers=workers, extractor_kwargs=kwargs):
                if first is None:
                    first = time.perf_counter()
                run.errors += result.error is not None
                run.latencies.append(result.seconds)
                for key, value in result.timings.items():
                    stages[key] = stages.get(key, 0.0) + value
        except Exception as exc:  # e.g. a labeler that cannot be pickled to worker processes
            run.skipped = f"{type(exc).__name__}: {exc}"
            return run
        end = time.perf_counter()
        run.wall_seconds = end - t0
        own_cpu = time.process_time() - cpu0
    run.cpu_seconds = own_cpu + sampler.children_cpu_seconds
    run.peak_rss = sampler.peak_rss
    if first is not None:
        # Pages finished after the first result arrived, over the time since then (module doc).
        run.steady_pages = run.pages - _first_batch(run.pages, batch_size)
        run.steady_seconds = end - first
    run.stage_seconds = {k: v for k, v in stages.items() if v > 0 or k in STAGES}
    if workers <= 1:
        run.sub_stage_seconds = label_sub_stages(lab, records, batch_size)
    return run


def simplified_pages(records: Sequence[dict[str, Any]]) -> list[PageBlocks]:
    """The simplified pages of byte records (read errors skipped)."""
    return [simplify(decode_html(r["html"])) for r in records if isinstance(r.get("html"), bytes)]


def label_sub_stages(labeler: object, records: Sequence[dict[str, Any]], batch_size: int = 16) -> dict[str, float]:
    """Seconds of ``prepare`` (tokenize + pack) and ``infer`` for a labeler with that two-step API, else ``{}``."""
    prepare, infer = getattr(labeler, "prepare", None), getattr(labeler, "infer", None)
    if not (callable(prepare) and callable(infer)):
        return {}
    pages = simplified_pages(records)
    out = {"tokenize+pack": 0.0, "infer": 0.0}
    for start in range(0, len(pages), max(1, batch_size)):
        t0 = time.perf_counter()
        prepared = prepare(pages[start : start + batch_size])
        t1 = time.perf_counter()
        infer(prepared)
        out["tokenize+pack"] += t1 - t0
        out["infer"] += time.perf_counter() - t1
    return out


def _first_batch(pages: int, batch_size: int) -> int:
    # Results arrive batch by batch: the first result comes with its whole batch finished.
    return min(pages, batch_size)


def available_providers() -> list[str]:
    """ONNX Runtime's available execution providers (``get_available_providers()``), without the Azure
    provider (it forwards to a remote endpoint; it is not a device to measure)."""
    import onnxruntime as ort

    return [p for p in ort.get_available_providers() if p != "AzureExecutionProvider"]


def bench_matrix(
    records: Sequence[dict[str, Any]],
    labelers: Sequence[str],
    *,
    providers: Sequence[str | None] = (None,),
    worker_counts: Sequence[int] = (1,),
    output: str = "markdown",
    batch_size: int = 16,
    metadata_modes: Sequence[bool] = (False,),
    on_run: Callable[[PipelineRun], None] | None = None,
) -> list[PipelineRun]:
    """Every labeler × provider × worker count × metadata on/off; configurations that cannot run are kept
    with ``skipped``.

    A provider other than ``None`` is only tried on labelers whose factory takes ``providers`` (module
    doc); for the others one run without a provider request is made.
    """
    runs = []
    for name in labelers:
        wanted = list(providers) if takes_provider(name) else [None]
        for provider in dict.fromkeys(wanted):
            for workers, metadata in itertools.product(dict.fromkeys(worker_counts), dict.fromkeys(metadata_modes)):
                run = bench_pipeline(
                    records, name, provider=provider, workers=workers, output=output, batch_size=batch_size, metadata=metadata
                )
                runs.append(run)
                if on_run is not None:
                    on_run(run)
    return runs


def run_cost(run: PipelineRun, price: Price | None) -> tuple[Price, float | None]:
    """The price a run is costed at and its $/M pages (module doc of :mod:`extract_trt.eval.cost`).

    A given price is the whole machine's: $/h ÷ measured pages/s. Otherwise a GPU run is priced as an L4
    on its pages/s, and a CPU run per core-second it used: cpu-core $/h ÷ pages per CPU-second (what a
    saturated machine of such cores costs per page, whatever else ran on this one meanwhile).
    """
    if price is not None or run.on_gpu:
        chosen = price if price is not None else resolve_price("l4")
        pps = run.pages_per_s
    else:
        chosen, pps = resolve_price("cpu-core"), run.pages_per_core_s
    return chosen, (cost_per_million(pps, chosen.per_hour) if pps else None)


def format_runs(runs: Sequence[PipelineRun], price: Price | None = None) -> str:
    """Plain-text tables: one line per run, then the per-stage breakdown of each run."""
    lines = [
        f"{'labeler':<18} {'provider used':<26} {'workers':>7} {'pages':>6} {'pages/s':>8} {'p/s/core':>8} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'peak RSS':>9} {'$/M pages':>10}  price"
    ]
    for run in runs:
        used = ",".join(p.removesuffix("ExecutionProvider") for p in run.providers_used) if run.providers_used else "- (no ORT session)"
        if run.fallback:
            used = f"FALLBACK {used} (asked {run.provider_requested})"
        if run.skipped:
            lines.append(f"{run.name:<18} {used:<26} {run.workers:>7} skipped: {run.skipped}")
            continue
        p, dollars = run_cost(run, price)
        cost = f"{dollars:10.2f}" if dollars is not None else f"{'-':>10}"
        lines.append(
            f"{run.name:<18} {used:<26} {run.workers:>7} {run.pages:>6} {run.pages_per_s or 0:8.1f} "
            f"{run.pages_per_core_s or 0:8.1f} "
            f"{_ms(percentile(run.latencies, 50)) or 0:7.1f} {_ms(percentile(run.latencies, 95)) or 0:7.1f} "
            f"{run.peak_rss / 2**20:7.0f}MB {cost}  {p.name} ${p.per_hour:g}/h"
        )
    for run in runs:
        if run.skipped:
            continue
        total = sum(run.stage_seconds.values()) or 1.0
        lines.append("")
        lines.append(f"stages: {run.name}, {run.workers} worker(s), {run.pages} pages")
        lines.append(f"  {'stage':<12} {'seconds':>8} {'pages/s':>9} {'share':>6}")
        rates = run.stage_rates()
        for key, seconds in run.stage_seconds.items():
            rate = rates.get(key)
            lines.append(f"  {key:<12} {seconds:8.3f} {rate or 0:9.1f} {seconds / total:6.1%}")
        for key, seconds in run.sub_stage_seconds.items():
            lines.append(f"    {key:<13} {seconds:8.3f} {run.pages / seconds if seconds > 0 else 0:9.1f}  (label, measured apart)")
    return "\n".join(lines)


def default_workers() -> int:
    """N for the multi-process run: the CPUs this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


@dataclass(slots=True)
class BenchReport:
    """What ``extract-trt bench`` prints: the environment, pipeline runs with costs, and the roofline."""

    runs: list[PipelineRun]
    price: Price | None = None
    roofline: Any = None  # extract_trt.eval.roofline.RooflineReport
    environment: dict[str, Any] = field(default_factory=dict)

    def to_text(self) -> str:
        env = self.environment
        lines = [
            f"machine: {env.get('cpus')} CPUs available; onnxruntime {env.get('onnxruntime')} "
            f"providers available: {', '.join(env.get('providers', []))}",
            "",
            format_runs(self.runs, self.price),
            "",
            "pages/s: wall clock, from the first finished page on; p/s/core: pages per CPU-second of all processes.",
            "$/M pages = $/h / (pages/s × 3600) × 10⁶: with --price-per-hour on pages/s; otherwise GPU runs as an "
            "L4 ($0.39/h) and CPU runs per core-second used (cpu-core $0.045/h on p/s/core).",
        ]
        if self.roofline is not None:
            lines += ["", self.roofline.to_text()]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"environment": self.environment, "runs": []}
        for run in self.runs:
            row = run.as_json()
            if not run.skipped:
                p, dollars = run_cost(run, self.price)
                row.update(price=p.name, price_per_hour=p.per_hour, dollars_per_million=dollars)
            out["runs"].append(row)
        if self.roofline is not None:
            out["roofline"] = self.roofline.to_json()
        return out


def environment() -> dict[str, Any]:
    """CPUs, onnxruntime version and its available providers."""
    import onnxruntime as ort

    return {"cpus": default_workers(), "onnxruntime": ort.__version__, "providers": available_providers()}


def run_bench(
    records: Iterable[dict[str, Any]],
    labelers: Sequence[str] | None = None,
    *,
    providers: Sequence[str] | None = None,
    workers: int | None = None,
    output: str = "markdown",
    batch_size: int = 16,
    price: str | float | None = None,
    roofline: bool = True,
    tokenizer_file: str | None = None,
    assumptions: Any = None,
    metadata_modes: Sequence[bool] = (False,),
    on_run: Callable[[PipelineRun], None] | None = None,
) -> BenchReport:
    """Everything ``extract-trt bench`` does: :func:`bench_matrix` over labelers × providers × {1, N}
    workers, costs, and (``roofline``) the analytic GPU projection on the same pages.

    ``providers`` default to all of ONNX Runtime's available ones (they only apply to exported model
    directories); ``workers`` (N) defaults to the CPUs this process may use. ``metadata_modes``:
    ``(False, True)`` measures every configuration with page metadata off and on (its cost).
    """
    from extract_trt.eval.roofline import Assumptions, roofline_report

    data = as_bytes_records(records)
    n = workers or default_workers()
    runs = bench_matrix(
        data,
        list(labelers or available_labelers()),
        providers=list(providers) if providers is not None else available_providers(),
        worker_counts=(1, n),
        output=output,
        batch_size=batch_size,
        metadata_modes=metadata_modes,
        on_run=on_run,
    )
    chosen = resolve_price(price) if price is not None else None
    report = BenchReport(runs, chosen, environment=environment())
    if roofline:
        report.roofline = roofline_report(
            simplified_pages(data),
            tokenizer_file=tokenizer_file,
            assumptions=assumptions or Assumptions(),
            price_per_hour=chosen.per_hour if chosen is not None else None,
        )
    return report
