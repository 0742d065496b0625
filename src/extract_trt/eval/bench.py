"""Throughput of the full pipeline and of each stage, per labeler, ONNX Runtime provider and worker count.

:func:`bench_pipeline` runs an :class:`~extract_trt.Extractor` over pages given as **bytes** (HTML strings
from JSONL are UTF-8 encoded first, so the decode stage does the work it does on crawled bytes) and
reports:

* pages/s of the full pipeline at steady state, measured explicitly (:func:`bench_pipeline`): first
  ``warmup_pages`` pages (default: one labeller batch per worker, taken from the input again) that are not
  counted, then the input pages ``repeats`` times, then (several workers) a cool-down of one batch per
  worker that is not counted either, so every measured stretch runs between two completions of a busy pool.
  Each repeat gives a pages/s (its pages over the time between the last result before it and its own last
  result); the figure is their mean with a 95 % Student-t interval, and :meth:`PipelineRun.warnings` says
  when the sample is too small for it. Start-up (process and worker start, model loading, the first batch)
  is its own figure: the seconds until the first result;
* per stage (``decode`` bytes → str, ``simplify`` = parse + simplify, ``label``, ``reconstruct``,
  ``convert``): total seconds, pages/s of the stage alone (pages / its summed seconds) and share of the page
  time, from the per-page timings the Extractor records (in the workers when ``workers > 1``);
* the label stage split into ``tokenize+pack`` and ``infer`` for labelers with the two-step API
  ``prepare(pages) -> prepared`` / ``infer(prepared) -> labels`` (the encoder backend), measured in a second,
  single-process pass over the same simplified pages in groups of ``batch_size``;
* p50/p95 per-page latency (sum of the page's stage times);
* pages per CPU-second of the process tree (this process + workers) over the measured repeats only (start-up
  CPU of the workers is not counted; robust to other load on the machine);
* $/M pages (:mod:`extract_trt.eval.cost`): ``N`` vCPUs for ``N`` workers, one GPU of the machine's kind plus
  the workers' vCPUs for a run on a GPU, or the whole machine at ``--price-per-hour``; each row names them;
  CPU runs also priced on the CPU time they used (:func:`cpu_time_cost`);
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
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from extract_trt.eval.cost import (
    DEFAULT_PRICES, Cost, Price, PriceTable, Throughput, cascade_costs, cost_per_million, gpu_kind, resolve_throughput,
)  # fmt: skip
from extract_trt.eval.labelers import make_labeler, takes_provider
from extract_trt.eval.stats import mean_interval, percentile
from extract_trt.runtime.html.decode import decode_html
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.io.batch import available_cpus
from extract_trt.runtime.io.batch import run as run_batch
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
    sampled in a thread every ``interval`` seconds (context manager); :meth:`snapshot` samples on the spot."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak_rss = 0
        self.child_cpu: dict[int, float] = {}  # pid → last seen user + system seconds
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def children_cpu_seconds(self) -> float:
        return sum(self.child_cpu.values())

    def snapshot(self) -> float:
        """The children's CPU seconds now."""
        self._sample()
        return self.children_cpu_seconds

    def _sample(self) -> None:
        import psutil

        with self._lock:
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


#: A pages/s interval wider than this share of the mean (either side) is flagged as too wide to read.
MAX_RELATIVE_HALF_WIDTH = 0.10
#: Fewer measured pages than this (pages per repeat × repeats) are flagged as a small sample.
MIN_MEASURED_PAGES = 100


@dataclass(slots=True)
class PipelineRun:
    """One measured configuration (module doc: warm-up, repeats, cool-down)."""

    labeler: str
    workers: int
    pages: int  # input pages
    pages_per_repeat: int = 0  # input pages, cycled up to whole labeller batches
    repeats: int = 0
    warmup_pages: int = 0
    errors: int = 0
    repeat_rates: list[float] = field(default_factory=list)  # pages/s of each repeat
    startup_seconds: float | None = None  # from the start until the first result
    measured_seconds: float = 0.0  # wall time of all repeats
    wall_seconds: float = 0.0  # start to the last measured result
    cpu_seconds: float = 0.0  # this process + its worker processes, during the repeats
    latencies: list[float] = field(default_factory=list)  # measured pages only
    stage_seconds: dict[str, float] = field(default_factory=dict)  # measured pages only
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
    def measured_pages(self) -> int:
        return self.pages_per_repeat * self.repeats

    @property
    def pages_per_s(self) -> float | None:
        """Mean pages/s over the repeats."""
        return mean_interval(self.repeat_rates)[0] if self.repeat_rates else None

    @property
    def pages_per_s_interval(self) -> tuple[float, float] | None:
        """95 % interval of :attr:`pages_per_s` (``None`` with fewer than two repeats)."""
        if len(self.repeat_rates) < 2:
            return None
        _, low, high = mean_interval(self.repeat_rates)
        return (low, high)  # type: ignore[return-value]

    @property
    def pages_per_core_s(self) -> float | None:
        """Measured pages per CPU second of this process and its workers (= pages/s per fully used core)."""
        return self.measured_pages / self.cpu_seconds if self.cpu_seconds > 0 else None

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
        """pages/s of each stage alone = measured pages / its summed seconds."""
        return {k: (self.measured_pages / s if s > 0 else None) for k, s in self.stage_seconds.items()}

    def warnings(self) -> list[str]:
        """What makes the pages/s figure of this run less than it looks (module doc)."""
        out = []
        pps, interval = self.pages_per_s, self.pages_per_s_interval
        if self.skipped or pps is None:
            return out
        if interval is None:
            out.append("one repeat: pages/s has no interval; use --repeats 3 or more")
        elif (interval[1] - interval[0]) / 2 > MAX_RELATIVE_HALF_WIDTH * pps:
            half = (interval[1] - interval[0]) / 2 / pps
            out.append(
                f"pages/s varies ±{half:.0%} between repeats (95 % interval): more pages (-n) or --repeats "
                "before reading more than its first digit"
            )
        if self.measured_pages < MIN_MEASURED_PAGES:
            out.append(
                f"pages/s rests on {self.measured_pages} measured pages ({self.pages_per_repeat} × {self.repeats} "
                f"repeats): a small sample"
            )
        if self.pages_per_repeat > 1.05 * self.pages:  # a few pages counted twice would not change the figure
            out.append(
                f"{self.pages} input pages: each repeat cycles them to {self.pages_per_repeat} (whole labeller batches)"
            )
        if self.warmup_pages == 0:
            out.append("no warm-up: the first repeat includes start-up")
        return out

    def as_json(self) -> dict[str, Any]:
        interval = self.pages_per_s_interval
        return {
            "labeler": self.labeler, "metadata": self.metadata, "workers": self.workers, "pages": self.pages,
            "pages_per_repeat": self.pages_per_repeat, "repeats": self.repeats, "warmup_pages": self.warmup_pages,
            "errors": self.errors, "pages_per_s": self.pages_per_s,
            "pages_per_s_low": interval[0] if interval else None, "pages_per_s_high": interval[1] if interval else None,
            "repeat_pages_per_s": self.repeat_rates, "startup_seconds": self.startup_seconds,
            "pages_per_core_s": self.pages_per_core_s, "measured_seconds": self.measured_seconds,
            "wall_seconds": self.wall_seconds, "cpu_seconds": self.cpu_seconds,
            "latency_p50_ms": _ms(percentile(self.latencies, 50)), "latency_p95_ms": _ms(percentile(self.latencies, 95)),
            "stage_seconds": self.stage_seconds, "stage_pages_per_s": self.stage_rates(),
            "sub_stage_seconds": self.sub_stage_seconds, "peak_rss_mb": self.peak_rss / 2**20,
            "provider_requested": self.provider_requested, "providers_used": self.providers_used,
            "fallback": self.fallback, "skipped": self.skipped, "warnings": self.warnings(),
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


def _cycled(records: Sequence[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    return [records[i % len(records)] for i in range(n)]


def bench_pipeline(
    records: Sequence[dict[str, Any]],
    labeler: str = "default",
    *,
    provider: str | None = None,
    workers: int = 1,
    output: str = "markdown",
    batch_size: int = 16,
    warmup_pages: int | None = None,
    repeats: int = 3,
    sub_stages: bool = True,
    metadata: bool = False,
) -> PipelineRun:
    """Measure one configuration on ``records`` (dicts with ``html`` bytes, e.g. from :func:`as_bytes_records`).

    One stream goes through the pipeline: ``warmup_pages`` (default: ``workers × batch_size``, rounded up to
    whole batches) cycled from ``records``, then ``records`` ``repeats`` times (each cycled up to whole
    batches of ``batch_size``, so no batch straddles two repeats), then with several workers a cool-down of
    ``workers × batch_size`` pages; only the repeats are counted (module doc).
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    batch_size = max(1, batch_size)
    run = PipelineRun(labeler=labeler, workers=workers, pages=len(records), provider_requested=provider, metadata=metadata)
    if not records:
        run.skipped = "no pages"
        return run
    try:
        lab = make_labeler(labeler, provider)
    except Exception as exc:  # a model that is not there, a provider it cannot use: reported, not fatal
        run.skipped = f"{type(exc).__name__}: {exc}"
        return run
    run.providers_used = session_providers(lab)
    # Worker processes build their own labeler from its name when they can (ORT sessions do not pickle).
    by_name = workers > 1 and provider is None and not takes_provider(labeler) and ":" not in labeler
    kwargs = {"labeler": labeler if by_name else lab, "output": output, "batch_size": batch_size, "metadata": metadata}

    def whole_batches(n: int) -> int:
        return -(-n // batch_size) * batch_size

    warm = whole_batches(workers * batch_size if warmup_pages is None else warmup_pages)
    run.warmup_pages, run.repeats, run.pages_per_repeat = warm, repeats, whole_batches(len(records))
    cool = workers * batch_size if workers > 1 else 0
    stream = (_cycled(records, warm) + _cycled(records, run.pages_per_repeat) * repeats + _cycled(records, cool))
    ends = [warm + run.pages_per_repeat * (r + 1) - 1 for r in range(repeats)]  # index of each repeat's last page
    stages = dict.fromkeys(STAGES, 0.0)
    with ProcessSampler() as sampler:
        cpu0, t0 = time.process_time(), time.perf_counter()
        marks: list[float] = []  # the time the warm-up ended, then the end of each repeat
        cpu_start = cpu_end = 0.0
        if warm == 0:
            marks.append(t0)
        try:
            for index, result in enumerate(run_batch(stream, workers=workers, extractor_kwargs=kwargs)):
                now = time.perf_counter()
                if index == 0:
                    run.startup_seconds = now - t0
                if index == warm - 1:
                    marks.append(now)
                    cpu_start = time.process_time() - cpu0 + sampler.snapshot()
                if index < warm:
                    continue
                run.errors += result.error is not None
                run.latencies.append(result.seconds)
                for key, value in result.timings.items():
                    stages[key] = stages.get(key, 0.0) + value
                if index in ends:
                    marks.append(now)
                if index == ends[-1]:  # the cool-down only kept the pool busy until here
                    cpu_end = time.process_time() - cpu0 + sampler.snapshot()
                    break
        except Exception as exc:  # e.g. a labeler that cannot be pickled to worker processes
            run.skipped = f"{type(exc).__name__}: {exc}"
            return run
    run.wall_seconds = marks[-1] - t0
    run.measured_seconds = marks[-1] - marks[0]
    run.repeat_rates = [run.pages_per_repeat / (b - a) for a, b in zip(marks, marks[1:]) if b > a]
    run.cpu_seconds = cpu_end - cpu_start
    run.peak_rss = sampler.peak_rss
    run.stage_seconds = {k: v for k, v in stages.items() if v > 0 or k in STAGES}
    if workers <= 1 and sub_stages:
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
    warmup_pages: int | None = None,
    repeats: int = 3,
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
                    records, name, provider=provider, workers=workers, output=output, batch_size=batch_size,
                    warmup_pages=warmup_pages, repeats=repeats, metadata=metadata,
                )  # fmt: skip
                runs.append(run)
                if on_run is not None:
                    on_run(run)
    return runs


def run_cost(run: PipelineRun, prices: PriceTable = DEFAULT_PRICES, machine: Price | None = None,
             gpu_name: str | None = None) -> Cost:  # fmt: skip
    """What a run costs per million pages (:mod:`extract_trt.eval.cost`): the whole ``machine`` when given;
    else one GPU of ``gpu_name``'s kind plus a vCPU per worker for a run on a GPU, a vCPU per worker otherwise."""
    if machine is not None:
        return Cost(((machine, 1),), run.pages_per_s)
    if run.on_gpu:
        kind = gpu_kind(gpu_name or "")
        gpu = prices.gpu(kind) if kind else None
        if gpu is None:
            missing = (f"no price for GPU {gpu_name or '(unknown)'}: add [gpu.{kind or 'KIND'}] to --prices "
                       "or give --price-per-hour")  # fmt: skip
            return Cost((), run.pages_per_s, missing)
        return Cost(((gpu, 1), (prices.vcpu, run.workers)), run.pages_per_s)
    return Cost(((prices.vcpu, run.workers),), run.pages_per_s)


def cpu_time_cost(run: PipelineRun, prices: PriceTable = DEFAULT_PRICES) -> float | None:
    """$/M pages of a CPU run priced on the CPU time it used: the vCPU price ÷ pages per CPU-second. What
    the run costs where its cores do nothing else (a dedicated, saturated machine); on a shared machine
    the wall-clock figure also pays for the time other work took. ``None`` for a GPU run."""
    if run.on_gpu or not run.pages_per_core_s:
        return None
    return cost_per_million(run.pages_per_core_s, prices.vcpu.per_hour)


def _rate_cell(run: PipelineRun) -> str:
    interval = run.pages_per_s_interval
    pps = run.pages_per_s or 0.0
    return f"{pps:.1f} ± {(interval[1] - interval[0]) / 2:.1f}" if interval else f"{pps:.1f}"


def format_runs(
    runs: Sequence[PipelineRun], costs: Sequence[Cost] | None = None, prices: PriceTable = DEFAULT_PRICES
) -> str:
    """Plain-text tables: one line per run, start-up lines, the per-stage breakdown of each run, warnings."""
    costs = list(costs) if costs is not None else [run_cost(r, prices) for r in runs]
    lines = [
        f"{'labeler':<18} {'provider used':<26} {'workers':>7} {'pages':>9} {'pages/s (95 %)':>15} {'p/s/core':>8} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'peak RSS':>9} {'$/M pages':>10} {'$/M CPU-s':>10}  priced as"
    ]
    for run, cost in zip(runs, costs):
        used = ",".join(p.removesuffix("ExecutionProvider") for p in run.providers_used) if run.providers_used else "- (no ORT session)"
        if run.fallback:
            used = f"FALLBACK {used} (asked {run.provider_requested})"
        if run.skipped:
            lines.append(f"{run.name:<18} {used:<26} {run.workers:>7} skipped: {run.skipped}")
            continue
        dollars, busy = cost.dollars_per_million, cpu_time_cost(run, prices)
        cell = f"{dollars:10.2f}" if dollars is not None else f"{'-':>10}"
        cell += f" {busy:10.2f}" if busy is not None else f" {'-':>10}"
        lines.append(
            f"{run.name:<18} {used:<26} {run.workers:>7} {f'{run.pages_per_repeat}×{run.repeats}':>9} "
            f"{_rate_cell(run):>15} {run.pages_per_core_s or 0:8.1f} "
            f"{_ms(percentile(run.latencies, 50)) or 0:7.1f} {_ms(percentile(run.latencies, 95)) or 0:7.1f} "
            f"{run.peak_rss / 2**20:7.0f}MB {cell}  {cost.describe()}"
        )
    lines.append("")
    for run in runs:
        if not run.skipped and run.startup_seconds is not None:
            lines.append(
                f"start-up: {run.name}, {run.workers} worker(s): {run.startup_seconds:.2f} s until the first result "
                f"(process/worker start, model load, first batch); warm-up {run.warmup_pages} pages, not counted"
            )
    for run in runs:
        if run.skipped:
            continue
        total = sum(run.stage_seconds.values()) or 1.0
        lines.append("")
        lines.append(f"stages: {run.name}, {run.workers} worker(s), {run.measured_pages} measured pages")
        lines.append(f"  {'stage':<12} {'seconds':>8} {'pages/s':>9} {'share':>6}")
        rates = run.stage_rates()
        for key, seconds in run.stage_seconds.items():
            rate = rates.get(key)
            lines.append(f"  {key:<12} {seconds:8.3f} {rate or 0:9.1f} {seconds / total:6.1%}")
        for key, seconds in run.sub_stage_seconds.items():
            lines.append(f"    {key:<13} {seconds:8.3f} {run.pages / seconds if seconds > 0 else 0:9.1f}  (label, measured apart)")
    warned = [(run, w) for run in runs for w in run.warnings()]
    if warned:
        lines.append("")
        lines += [f"warning: {run.name}, {run.workers} worker(s): {w}" for run, w in warned]
    return "\n".join(lines)


def default_workers() -> int:
    """N for the multi-process run: the CPUs this process may use."""
    return available_cpus()


@dataclass(slots=True)
class BenchReport:
    """What ``extract-trt bench`` prints: the environment, pipeline runs with costs, and the roofline."""

    runs: list[PipelineRun]
    prices: PriceTable = DEFAULT_PRICES
    machine: Price | None = None  # --price-per-hour: the whole machine's price
    roofline: Any = None  # extract_trt.eval.roofline.RooflineReport
    environment: dict[str, Any] = field(default_factory=dict)
    cascades: list[tuple[Throughput, list[dict[str, float]]]] = field(default_factory=list)

    def add_cascades(self, bigs: Sequence[str]) -> None:
        """$/M pages of a cascade from the default labeler to each of ``bigs`` at :data:`CASCADE_BUDGETS`: a
        labeler benched here on a GPU (its measured pages/s, priced as an L4 unless a price was given), a
        published figure (:data:`PUBLISHED_THROUGHPUT`) or ``PAGES_PER_S@PRICE``. The small model's cost is
        the default labeler's measured pages per CPU-second (a single-worker run of it must be in the bench)."""
        small = next((r for r in self.runs if r.labeler == "default" and not r.skipped and r.pages_per_core_s), None)
        if small is None:
            raise ValueError("cascade costs need a run of the default labeler in the bench (--labeler default)")
        for spec in bigs:
            gpu = next((r for r in self.runs if r.labeler == spec and r.on_gpu and r.pages_per_s), None)
            if gpu is not None:
                price = self.machine or self.prices.gpu(gpu_kind(self.environment.get("gpu") or "") or "l4")
                if price is None:  # a GPU kind the price table does not know
                    raise ValueError(f"no price for the GPU {self.environment.get('gpu')!r}: add it with --prices")
                source = f"measured here on {gpu.providers_used[0]}, {gpu.workers} worker(s)"
                big = Throughput(spec, gpu.pages_per_s, price, source)
            else:
                big = resolve_throughput(spec, self.prices)
            self.cascades.append((big, cascade_costs(small.pages_per_core_s, big, cpu=self.prices.vcpu)))

    def _cascade_text(self) -> list[str]:
        lines = []
        for big, rows in self.cascades:
            lines += ["", f"cascade: default labeler on every page, {big.name} on the routed share "
                      f"({big.pages_per_s:g} pages/s at ${big.price.per_hour:g}/h, {big.source})",
                      f"  {'routed':>6} {'$/M small':>10} {'$/M big':>10} {'$/M total':>10}"]  # fmt: skip
            lines += [f"  {r['budget']:6.0%} {r['small']:10.2f} {r['big']:10.2f} {r['total']:10.2f}" for r in rows]
        return lines

    def costs(self) -> list[Cost]:
        return [run_cost(run, self.prices, self.machine, self.environment.get("gpu")) for run in self.runs]

    def to_text(self) -> str:
        env = self.environment
        used = {price.name: price for cost in self.costs() for price, _ in cost.parts}
        lines = [
            f"machine: {env.get('cpus')} CPUs available; GPU: {env.get('gpu') or 'none found'}; onnxruntime "
            f"{env.get('onnxruntime')} providers available: {', '.join(env.get('providers', []))}",
            "",
            format_runs(self.runs, self.costs(), self.prices),
            "",
            "pages: pages per repeat × repeats (warm-up and cool-down not counted); pages/s: mean over the repeats "
            "± half its 95 % interval; p/s/core: measured pages per CPU-second of all processes.",
            "$/M pages = Σ units × $/unit-hour / (pages/s × 3600) × 10⁶; a worker = one vCPU. $/M CPU-s: CPU runs "
            "priced on the CPU time used (vCPU $/h ÷ p/s/core): what a machine busy with this work only would cost, "
            "where the wall-clock figure also pays for other load on this one. Prices used:",
            *(f"  {p.name} ${p.per_hour:g}/h: {p.source}" for p in used.values()),
        ]
        lines += self._cascade_text()
        if self.roofline is not None:
            lines += ["", self.roofline.to_text()]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"environment": self.environment, "runs": []}
        for run, cost in zip(self.runs, self.costs()):
            row = run.as_json()
            if not run.skipped:
                row["cost"] = cost.as_json()
                row["dollars_per_million"] = cost.dollars_per_million
                row["dollars_per_million_cpu_time"] = cpu_time_cost(run, self.prices)
            out["runs"].append(row)
        if self.cascades:
            out["cascades"] = [{"big": big.name, "pages_per_s": big.pages_per_s, "price_per_hour": big.price.per_hour,
                                "source": big.source, "rows": rows} for big, rows in self.cascades]  # fmt: skip
        if self.roofline is not None:
            out["roofline"] = self.roofline.to_json()
        return out


def gpu_name() -> str | None:
    """The first GPU's name from ``nvidia-smi`` (``None``: no NVIDIA GPU or no driver tools)."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return None
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=20, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    names = done.stdout.strip().splitlines()
    return names[0].strip() if names else None


def environment() -> dict[str, Any]:
    """CPUs, the GPU's name, onnxruntime version and its available providers."""
    import onnxruntime as ort

    return {"cpus": default_workers(), "gpu": gpu_name(), "onnxruntime": ort.__version__, "providers": available_providers()}


def run_bench(
    records: Iterable[dict[str, Any]],
    labelers: Sequence[str] | None = None,
    *,
    providers: Sequence[str] | None = None,
    workers: int | None = None,
    output: str = "markdown",
    batch_size: int = 16,
    warmup_pages: int | None = None,
    repeats: int = 3,
    prices: PriceTable = DEFAULT_PRICES,
    machine_price: Price | None = None,
    roofline: bool = True,
    tokenizer_file: str | None = None,
    assumptions: Any = None,
    metadata_modes: Sequence[bool] = (False,),
    on_run: Callable[[PipelineRun], None] | None = None,
    cascade_bigs: Sequence[str] = (),
) -> BenchReport:
    """Everything ``extract-trt bench`` does: :func:`bench_matrix` over labelers × providers × {1, N}
    workers, costs, and (``roofline``) the analytic GPU projection on the same pages.

    ``providers`` default to all of ONNX Runtime's available ones (they only apply to exported model
    directories); ``workers`` (N) defaults to the CPUs this process may use. ``machine_price`` prices the
    measured runs as a whole machine; the roofline's GPUs keep their own prices from ``prices``.
    ``metadata_modes``: ``(False, True)`` measures every configuration with page metadata off and on (its cost).
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
        warmup_pages=warmup_pages,
        repeats=repeats,
        metadata_modes=metadata_modes,
        on_run=on_run,
    )
    report = BenchReport(runs, prices, machine_price, environment=environment())
    if cascade_bigs:
        report.add_cascades(cascade_bigs)
    if roofline:
        report.roofline = roofline_report(
            simplified_pages(data), tokenizer_file=tokenizer_file, assumptions=assumptions or Assumptions(), prices=prices
        )
    return report
