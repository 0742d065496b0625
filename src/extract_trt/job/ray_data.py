"""Cluster mode on Ray Data: the same job as local mode, with the work spread over a Ray cluster (or a
local Ray started here), and the same :class:`~extract_trt.job.output.ShardSink` writing the output.

Dataset: one item per pending shard → **read** (CPU tasks, :func:`~extract_trt.job.readers.iter_shard`,
``read_batch`` records per block) → then, by ``RayOptions.pipeline``:

* ``split`` — **prepare** (CPU tasks: decode + simplify; the blocks, without the DOM tree, go on) →
  **label** (an actor pool of ``workers`` actors, each holding one labeler — one model session — with
  ``num_gpus=gpus_per_actor``) → **finish** (CPU tasks: decode + simplify again, check that the blocks are
  the ones labelled, reconstruct, convert). The DOM tree of a page is several times its HTML and deeply
  nested (pickling it costs about as much as simplifying again and fails on deep pages), so it is
  rebuilt rather than shipped; the GPU actors only ever see blocks. With a cascade labeler
  (``cascade:BIG``) the prepare tasks also run the small model and choose the pages for BIG
  (:meth:`~extract_trt.runtime.labelers.cascade.CascadeLabeler.route`, ranked within each CPU batch); the
  actors run BIG on those pages only and pass the small model's labels of the others through.
* ``fused`` — one actor pool runs the whole extraction (each page simplified once; best without GPUs).

Every stage turns a per-record failure into that record's ``error``; nothing a page does fails a task.
Rows reach the driver in input order (``preserve_order``), where the sink writes each shard and the
manifest: output goes through the driver, so its bandwidth bounds the job (about 17k pages/s per
10 Gb/s at the ~73 KB of main_html + markdown + text per page measured on wcxb-dev pages). Backpressure is Ray Data's streaming executor, bounded by
``max_in_flight_mb`` of object store, ``cpu_tasks`` per CPU stage and the actor pool size.
"""

from __future__ import annotations

import hashlib
import pickle
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from extract_trt.errors import ExtractError, LabelerError
from extract_trt.job.config import JobConfig, JobConfigError, NamedLabeler, RayOptions
from extract_trt.job.output import STREAM_SCHEMA, ShardSink, record_meta, result_row, stream_table
from extract_trt.job.plan import Shard
from extract_trt.job.readers import iter_shard
from extract_trt.runtime.extractor import Extractor, PreparedPage, Result
from extract_trt.runtime.io.batch import extract_records
from extract_trt.runtime.labelers import get_labeler, is_cascade_spec
from extract_trt.runtime.labelers.cascade import CascadeLabeler
from extract_trt.runtime.types import Labels, PageBlocks

__all__ = ["run_ray"]

_META = ("shard", "position", "source", "warc_date", "http_status", "content_type")
_INPUT_SCHEMA = pa.schema(
    [
        *(STREAM_SCHEMA.field(name) for name in (*_META, "id", "url")),
        pa.field("html_bytes", pa.binary()),  # WARC payloads: decoded by the charset rules
        pa.field("html_text", pa.string()),  # JSONL / Parquet strings: already text
        pa.field("error", pa.string()),
    ]
)


def run_ray(
    config: JobConfig,
    shards: list[Shard],
    sink: ShardSink,
    on_rows: Callable[[int, int], None] | None = None,
) -> None:
    """Run the job's ``shards`` on Ray Data into ``sink``; starts (and stops) a local Ray when none is
    connected and no address is given."""
    import ray
    from ray.data import DataContext

    opts = config.ray or RayOptions()
    started = _init_ray(ray, opts)
    ctx = DataContext.get_current()
    saved = (ctx.execution_options.preserve_order, ctx.enable_progress_bars, ctx.execution_options.resource_limits)
    try:
        if opts.resolved_pipeline() == "split":
            _check_cpu_headroom(ray.cluster_resources().get("CPU", 0.0), config.workers, opts.cpus_per_actor)
        # The dataset copies the context when it is created: set, build, restore.
        ctx.execution_options.preserve_order = True  # the sink needs each shard's rows in order
        ctx.enable_progress_bars = False  # the job reports its own progress
        if opts.max_in_flight_mb is not None:
            limits = ctx.execution_options.resource_limits
            ctx.execution_options.resource_limits = limits.copy(object_store_memory=opts.max_in_flight_mb * 2**20)
        dataset = _build_dataset(ray, config, opts, shards)
        for table in dataset.iter_batches(batch_size=None, batch_format="pyarrow"):
            sink.write(table)
            if on_rows is not None:
                on_rows(table.num_rows, table.num_rows - table.column("error").null_count)
    finally:
        ctx.execution_options.preserve_order, ctx.enable_progress_bars, ctx.execution_options.resource_limits = saved
        if started:
            ray.shutdown()


def _init_ray(ray: Any, opts: RayOptions) -> bool:
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False}
    if opts.address is not None:
        kwargs["address"] = opts.address
    else:
        kwargs["num_cpus"] = opts.num_cpus
        if opts.object_store_mb is not None:
            kwargs["object_store_memory"] = opts.object_store_mb * 2**20
    ray.init(**kwargs)
    return True


def _check_cpu_headroom(cpus: float, workers: int, cpus_per_actor: float) -> None:
    """The split pipeline's CPU tasks need CPUs the label actors do not hold, or the job never moves.

    Raises:
        JobConfigError: the actors would hold every CPU of the cluster (as it is now).
    """
    held = workers * cpus_per_actor
    if held >= cpus:
        raise JobConfigError(
            f"the split pipeline's {workers} label actors would hold {held:g} of the cluster's {cpus:g} CPUs, "
            f"leaving none for its CPU stages; use fewer workers, cpus_per_actor below {cpus / workers:g}, "
            "or pipeline 'fused'"
        )


def _build_dataset(ray: Any, config: JobConfig, opts: RayOptions, shards: list[Shard]) -> Any:
    from ray.data import ActorPoolStrategy

    split = opts.resolved_pipeline() == "split"
    items = [{"shard": k, "path": shard.input} for k, shard in enumerate(shards)]
    dataset = ray.data.from_items(items, override_num_blocks=max(1, len(items)))
    read_kwargs = {"html_field": config.html_field, "max_bytes": config.max_bytes, "rows_per_block": opts.read_batch}
    # Fused: no concurrency limit on the read, so that Ray fuses it into the actors (no CPU of its own).
    dataset = dataset.map_batches(
        _read_shards, batch_size=1, batch_format="pyarrow", fn_kwargs=read_kwargs, concurrency=opts.cpu_tasks if split else None
    )
    actors: dict[str, Any] = {
        "compute": ActorPoolStrategy(size=config.workers),
        "batch_size": opts.label_batch,
        "batch_format": "pyarrow",
        "num_cpus": opts.cpus_per_actor,
        "fn_constructor_kwargs": {"extractor_kwargs": config.extractor_kwargs(opts.label_batch)},
    }
    if opts.gpus_per_actor > 0:
        actors["num_gpus"] = opts.gpus_per_actor
    if not split:
        return dataset.map_batches(_ExtractActor, **actors)
    # The CPU stages segment pages as the labeler expects: the driver builds it once to learn how.
    profile = NamedLabeler(config.labeler, config.labeler_args).simplify_profile
    cpu_stage: dict[str, Any] = {
        "batch_size": opts.cpu_batch,
        "batch_format": "pyarrow",
        "concurrency": opts.cpu_tasks,
        "fn_kwargs": {"extractor_kwargs": {**config.extractor_kwargs(), "labeler": _ActorsLabel(profile)}},
    }
    cascade = is_cascade_spec(config.labeler)
    prepare_stage = {**cpu_stage, "fn_kwargs": {**cpu_stage["fn_kwargs"], "router": config.labeler if cascade else None}}
    dataset = dataset.map_batches(_prepare, **prepare_stage)
    dataset = dataset.map_batches(_CascadeLabelActor if cascade else _LabelActor, **actors)
    return dataset.map_batches(_finish, **cpu_stage)


# ------------------------------------------------------------------------------------------- stages


def _read_shards(items: pa.Table, html_field: str, max_bytes: int | None, rows_per_block: int) -> Iterator[pa.Table]:
    for shard, path in zip(items.column("shard").to_pylist(), items.column("path").to_pylist()):
        rows: list[dict[str, Any]] = []
        for record in iter_shard(path, html_field=html_field, max_bytes=max_bytes):
            html = record.get("html")
            rows.append(
                {
                    **record_meta(record, shard),
                    "id": record.get("id"),
                    "url": record.get("url"),
                    "html_bytes": html if isinstance(html, bytes) else None,
                    "html_text": html if isinstance(html, str) else None,
                    "error": record.get("error"),
                }
            )
            if len(rows) >= rows_per_block:
                yield pa.Table.from_pylist(rows, schema=_INPUT_SCHEMA)
                rows = []
        if rows:
            yield pa.Table.from_pylist(rows, schema=_INPUT_SCHEMA)


def _unpack(table: pa.Table) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(meta, record) per row; the record as :meth:`Extractor.extract_many` / ``extract_records`` take it."""
    for row in table.to_pylist():
        meta = {k: row[k] for k in _META}
        record: dict[str, Any] = {"id": row["id"], "url": row["url"], "content_type": row["content_type"]}
        if row["error"] is not None:
            record["error"] = row["error"]
        else:
            record["html"] = row["html_text"] if row["html_text"] is not None else row["html_bytes"]
        yield meta, record


class _ExtractActor:
    """Fused pipeline: the whole extraction, with this actor's own labeler."""

    def __init__(self, extractor_kwargs: dict[str, Any]) -> None:
        extractor_kwargs["labeler"].build()  # load the model once, when the actor starts
        self.extractor = Extractor(**extractor_kwargs)

    def __call__(self, table: pa.Table) -> pa.Table:
        pairs = list(_unpack(table))
        results = extract_records(self.extractor, [record for _meta, record in pairs])
        return stream_table([result_row(meta, result) for (meta, _record), result in zip(pairs, results)])


class _ActorsLabel:
    """The labeler of the split pipeline's CPU stages, which never label (the actors do); it carries the
    simplifier profile of the actors' labeler."""

    name = "label-actors"

    def __init__(self, simplify_profile: Any) -> None:
        self.simplify_profile = simplify_profile

    def label(self, pages: list[PageBlocks]) -> list[Labels]:
        raise LabelerError("in the split pipeline only the label actors label")


def _blocks_digest(page: PageBlocks) -> str:
    return hashlib.blake2b("\x1f".join(b.html for b in page.blocks).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


_ROUTERS: dict[str, CascadeLabeler] = {}  # per worker process: the model loaded once, the budget's remainder kept


def _router(spec: str) -> CascadeLabeler:
    if spec not in _ROUTERS:
        router = get_labeler(spec)
        if not isinstance(router, CascadeLabeler):
            raise JobConfigError(f"{spec!r} is not a cascade")
        _ROUTERS[spec] = router
    return _ROUTERS[spec]


def _prepare(table: pa.Table, extractor_kwargs: dict[str, Any], router: str | None = None) -> pa.Table:
    """Split stage 1: decode + simplify; adds ``blocks`` (the pickled result so far and the blocks without
    the DOM tree) and ``digest``; with a cascade ``router`` spec also ``small_labels`` (pickled) and
    ``routed`` (the page goes to the big model)."""
    # page metadata is read by _finish, which parses the page again; here it would only be shipped around
    extractor = Extractor(**{**extractor_kwargs, "metadata": False})
    blobs: list[bytes | None] = []
    digests: list[str | None] = []
    prepared: dict[int, PageBlocks] = {}
    errors = table.column("error").to_pylist()
    for i, (_meta, record) in enumerate(_unpack(table)):
        blob = digest = None
        if errors[i] is None:
            page = extractor.prepare(record)
            if page.blocks is None:
                errors[i] = page.result.error
            else:
                blocks = PageBlocks(page.blocks.simplified_html, page.blocks.blocks, None)  # no DOM tree
                blob = pickle.dumps((page.result, blocks), protocol=5)
                digest = _blocks_digest(page.blocks)
                prepared[i] = page.blocks
        blobs.append(blob)
        digests.append(digest)
    table = table.set_column(table.schema.get_field_index("error"), "error", pa.array(errors, pa.string()))
    table = table.append_column("blocks", pa.array(blobs, pa.binary())).append_column("digest", pa.array(digests, pa.string()))
    if router is None:
        return table
    small: list[bytes | None] = [None] * len(blobs)
    routed = [False] * len(blobs)
    if prepared:
        try:
            labels, chosen = _router(router).route(list(prepared.values()))
        except Exception as exc:  # the small model failing on the batch: every page's error, none lost
            for i in prepared:
                errors[i] = f"{LabelerError.__name__}: cascade routing failed: {type(exc).__name__}: {exc}"
            return table.set_column(table.schema.get_field_index("error"), "error", pa.array(errors, pa.string()))
        rows = list(prepared)
        for i, page_labels in zip(rows, labels):
            small[i] = pickle.dumps(page_labels, protocol=5)
        for k in chosen:
            routed[rows[k]] = True
    return table.append_column("small_labels", pa.array(small, pa.binary())).append_column("routed", pa.array(routed, pa.bool_()))


class _LabelActor:
    """Split stage 2: labels the blocks with this actor's own labeler; replaces ``blocks`` by ``labels``."""

    def __init__(self, extractor_kwargs: dict[str, Any]) -> None:
        extractor_kwargs["labeler"].build()  # load the model once, when the actor starts
        self.extractor = Extractor(**extractor_kwargs)

    def __call__(self, table: pa.Table) -> pa.Table:
        blobs = table.column("blocks").to_pylist()
        errors = table.column("error").to_pylist()
        pages = {i: PreparedPage(*pickle.loads(blob)) for i, blob in enumerate(blobs) if blob is not None}
        labelled = dict(zip(pages, self.extractor.label_pages(list(pages.values()))))
        labels: list[bytes | None] = [None] * len(blobs)
        seconds: list[float | None] = [None] * len(blobs)
        for i, page in pages.items():
            if labelled[i] is None:
                errors[i] = page.result.error
            else:
                labels[i] = pickle.dumps(labelled[i], protocol=5)
                seconds[i] = page.result.timings.get("label")
        table = table.drop_columns(["blocks", "error"])
        return (
            table.append_column("error", pa.array(errors, pa.string()))
            .append_column("labels", pa.array(labels, pa.binary()))
            .append_column("label_seconds", pa.array(seconds, pa.float64()))
        )


class _CascadeLabelActor:
    """Split stage 2 of a cascade: the big model on the routed pages, the small model's labels (from
    :func:`_prepare`) passed through for the others; replaces ``blocks`` by ``labels``."""

    def __init__(self, extractor_kwargs: dict[str, Any]) -> None:
        self.cascade = extractor_kwargs["labeler"].build()  # load the big model once, when the actor starts
        if not isinstance(self.cascade, CascadeLabeler):
            raise JobConfigError(f"{extractor_kwargs['labeler'].spec!r} is not a cascade")

    def __call__(self, table: pa.Table) -> pa.Table:
        blobs = table.column("blocks").to_pylist()
        labels = table.column("small_labels").to_pylist()
        routed = [i for i, flag in enumerate(table.column("routed").to_pylist()) if flag and blobs[i] is not None]
        seconds: list[float | None] = [None] * len(blobs)
        if routed:
            pages = [pickle.loads(blobs[i])[1] for i in routed]
            t0 = time.perf_counter()
            decided = self.cascade.label_routed(pages, [pickle.loads(labels[i]) for i in routed])
            per_page = (time.perf_counter() - t0) / len(routed)
            for i, page_labels in zip(routed, decided):
                labels[i] = pickle.dumps(page_labels, protocol=5)
                seconds[i] = per_page
        table = table.drop_columns(["blocks", "small_labels", "routed"])
        return table.append_column("labels", pa.array(labels, pa.binary())).append_column(
            "label_seconds", pa.array(seconds, pa.float64())
        )


def _finish(table: pa.Table, extractor_kwargs: dict[str, Any]) -> pa.Table:
    """Split stage 3: simplify again, check the blocks, reconstruct and convert; one stream row per record."""
    extractor = Extractor(**extractor_kwargs)
    labels = table.column("labels").to_pylist()
    digests = table.column("digest").to_pylist()
    seconds = table.column("label_seconds").to_pylist()
    rows = []
    for i, (meta, record) in enumerate(_unpack(table)):
        if "error" in record:
            result = Result(id=record["id"], url=record["url"], error=record["error"])
        else:
            page = extractor.prepare(record)
            if page.blocks is not None and _blocks_digest(page.blocks) != digests[i]:
                page.result.error = f"{ExtractError.__name__}: the page gave other blocks when simplified again"
            result = extractor.finish(page, pickle.loads(labels[i]) if page.result.error is None else None)
            page.release()
            if seconds[i] is not None:
                result.timings["label"] = seconds[i]
        rows.append(result_row(meta, result))
    return stream_table(rows)
