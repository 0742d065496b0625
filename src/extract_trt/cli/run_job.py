"""``extract-trt run-job``: crawl-scale extraction over shard files, resumable, locally or on Ray. Thin glue
over :func:`extract_trt.job.run_job`.

Exit status: 0 when every shard is written (pages that failed are error rows); 2 when the job cannot start
(no inputs, a directory written with other settings, another run on the same directory, bad option);
1 when it stopped part-way (run the same command again: finished shards are kept).
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Annotated, Any, Optional

import typer

from extract_trt.cli.extract import fail
from extract_trt.errors import ExtractError
from extract_trt.runtime.io.records import DEFAULT_MAX_BYTES
from extract_trt.runtime.limits import DEFAULT_TIME_BUDGET

EPILOG = """Examples:

  extract-trt run-job 'crawl/*.warc.gz' -o out/            # one worker per CPU (-w auto)

  extract-trt run-job pages.parquet --html-field content -o out/

  extract-trt run-job @warc.paths -o /shared/out --ray --address auto -w 8 --gpus-per-actor 1
"""


class Pipeline(str, Enum):
    auto = "auto"
    split = "split"
    fused = "fused"


def _labeler_args(items: list[str]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise fail(f"--labeler-arg {item!r}: use KEY=VALUE")
        try:
            args[key] = json.loads(value)
        except ValueError:
            args[key] = value
    return args


def run_job_command(
    inputs: Annotated[
        list[str],
        typer.Argument(
            help="Shards: WARC/.warc.gz, .jsonl(.gz) or .parquet files, glob patterns, directories, or @LIST "
            "(a file with one path per line, relative to the list).",
            show_default=False,
        ),
    ],
    output: Annotated[
        str, typer.Option("--output", "-o", help="Output directory: one Parquet file per shard + manifest.json.")
    ],
    workers: Annotated[
        str,
        typer.Option(
            "--workers",
            "-w",
            help="Local worker processes, or label actors with --ray. auto: one per CPU available here (with a local "
            "Ray: its CPUs ÷ --cpus-per-actor; one with --gpus-per-actor); a cluster (--address) needs a number.",
        ),
    ] = "auto",
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Pages labelled together (local mode).")] = 16,
    labeler: Annotated[
        str,
        typer.Option(
            "--labeler", "-l", help="A labeler name (default, heuristic, …), a model directory, cascade:BIG (BIG on "
            "the --budget share of pages the default model is least sure of), or package.module:factory."
        ),
    ] = "default",
    budget: Annotated[
        Optional[float],
        typer.Option("--budget", min=0.0, max=1.0, help="With --labeler cascade:BIG: the share of pages sent to BIG (default 0.2)."),
    ] = None,
    labeler_arg: Annotated[
        Optional[list[str]],
        typer.Option("--labeler-arg", help="KEY=VALUE passed to the labeler factory (VALUE parsed as JSON if it is JSON)."),
    ] = None,
    outputs: Annotated[
        str, typer.Option("--outputs", help="Conversions besides main_html: 'markdown,text', 'markdown', 'text' or 'none'.")
    ] = "markdown,text",
    comments: Annotated[
        bool, typer.Option("--comments/--no-comments", help="Also extract reader comments (the 'comments' column).")
    ] = False,
    links: Annotated[bool, typer.Option("--links/--no-links", help="Keep hyperlinks in Markdown.")] = True,
    images: Annotated[bool, typer.Option("--images/--no-images", help="Keep images in Markdown.")] = True,
    html_field: Annotated[str, typer.Option("--html-field", help="JSONL field / Parquet column with the HTML.")] = "html",
    max_bytes: Annotated[int, typer.Option("--max-bytes", min=1, help="Larger pages become error rows.")] = DEFAULT_MAX_BYTES,
    time_budget: Annotated[
        float, typer.Option("--time-budget", min=0, help="Seconds per page before it becomes an error row (0: no limit).")
    ] = DEFAULT_TIME_BUDGET,
    keep_markup: Annotated[
        bool, typer.Option("--keep-markup", help="Keep scripts/handlers in main_html (default: sanitised).")
    ] = False,
    metadata: Annotated[
        bool,
        typer.Option(
            "--metadata/--no-metadata",
            help="Fill the metadata columns (title, author, date, ...; about 9 % more time per page); off: null.",
        ),
    ] = False,
    item_ids: Annotated[
        bool, typer.Option("--item-ids", help="Keep the blocks' _item_id marks in the sanitised main_html.")
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="If OUTPUT holds a job with other settings, delete its shards and start over.")
    ] = False,
    progress: Annotated[
        Optional[bool],
        typer.Option(
            "--progress/--no-progress",
            help="Progress line (pages/s, errors, shards) on a terminal, one line per shard otherwise. Default: on.",
            show_default=False,
        ),
    ] = None,
    ray: Annotated[bool, typer.Option("--ray", help="Run on Ray Data (local Ray unless --address).")] = False,
    address: Annotated[Optional[str], typer.Option("--address", help="Existing Ray cluster (implies --ray).")] = None,
    ray_cpus: Annotated[Optional[int], typer.Option("--ray-cpus", min=1, help="CPUs of a local Ray.")] = None,
    object_store_mb: Annotated[
        Optional[int], typer.Option("--object-store-mb", min=50, help="Object store of a local Ray.")
    ] = None,
    gpus_per_actor: Annotated[float, typer.Option("--gpus-per-actor", min=0, help="GPUs per label actor.")] = 0.0,
    cpus_per_actor: Annotated[float, typer.Option("--cpus-per-actor", min=0, help="CPUs per label actor.")] = 1.0,
    pipeline: Annotated[
        Pipeline,
        typer.Option("--pipeline", help="split: CPU preprocess → label actors → CPU reconstruct; fused: actors do all; "
                     "auto: split with GPUs, else fused."),
    ] = Pipeline.auto,
    read_batch: Annotated[int, typer.Option("--read-batch", min=1, help="Records per block read from a shard.")] = 64,
    label_batch: Annotated[int, typer.Option("--label-batch", min=1, help="Pages per label-actor call.")] = 64,
    cpu_batch: Annotated[int, typer.Option("--cpu-batch", min=1, help="Pages per CPU-stage call.")] = 16,
    cpu_tasks: Annotated[
        Optional[int], typer.Option("--cpu-tasks", min=1, help="Concurrent tasks per CPU stage, split pipeline (default: as fit).")
    ] = None,
    max_in_flight_mb: Annotated[
        Optional[int], typer.Option("--max-in-flight-mb", min=1, help="Object store the job may fill (backpressure).")
    ] = None,
) -> None:
    """Extract WARC / JSONL / Parquet shards into Parquet shards, resumably, locally or on a Ray cluster.

    One output file per input shard (written atomically) and OUTPUT/manifest.json; running the same command again skips finished shards and redoes interrupted ones.
    """
    try:
        from extract_trt.job import JobConfig, RayOptions
    except ImportError as exc:
        raise fail(f"run-job needs {exc.name}: pip install 'extract-trt[scale]'") from None

    conversions = tuple(o.strip() for o in outputs.split(",") if o.strip() and o.strip() != "none")
    n_workers = _workers(workers, ray or address is not None, address, ray_cpus, cpus_per_actor, gpus_per_actor)
    ray_options = None
    if ray or address is not None:
        ray_options = RayOptions(
            address=address,
            num_cpus=ray_cpus,
            object_store_mb=object_store_mb,
            gpus_per_actor=gpus_per_actor,
            cpus_per_actor=cpus_per_actor,
            pipeline=pipeline.value,
            read_batch=read_batch,
            label_batch=label_batch,
            cpu_batch=cpu_batch,
            cpu_tasks=cpu_tasks,
            max_in_flight_mb=max_in_flight_mb,
        )
    if budget is not None:
        from extract_trt.runtime.labelers import with_budget

        try:
            labeler = with_budget(labeler, budget)
        except ExtractError as exc:
            raise fail(str(exc)) from None
    try:
        config = JobConfig(
            inputs=list(inputs),
            output_dir=output,
            labeler=labeler,
            labeler_args=_labeler_args(labeler_arg or []),
            outputs=conversions,
            comments=comments,
            links=links,
            images=images,
            max_bytes=max_bytes,
            time_budget=time_budget or None,
            keep_markup=keep_markup,
            metadata=metadata,
            item_ids=item_ids,
            html_field=html_field,
            workers=n_workers,
            batch_size=batch_size,
            overwrite=overwrite,
            ray=ray_options,
        )
    except ExtractError as exc:
        raise fail(str(exc)) from None
    _run(config, progress)


def _workers(
    spec: str, ray: bool, address: Optional[str], ray_cpus: Optional[int], cpus_per_actor: float, gpus_per_actor: float
) -> int:
    """``--workers``: a number, or auto (see the option's help)."""
    from extract_trt.runtime.io.batch import available_cpus, parse_workers

    try:
        n = parse_workers(spec)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if n is not None:
        return n
    if not ray:
        return available_cpus()
    if address is not None:
        raise fail("--workers auto cannot see a cluster's CPUs or GPUs: give the number of label actors")
    if gpus_per_actor > 0:
        return 1
    return max(1, int((ray_cpus or available_cpus()) // max(cpus_per_actor, 1e-9)))


def _run(config: Any, progress: Optional[bool]) -> None:
    from extract_trt.cli.progress import Progress
    from extract_trt.job import run_job

    counts = {"shards": 0}
    live = progress is not False and sys.stderr.isatty()
    per_shard = progress is not False and not live
    bar = Progress(live, detail=lambda: f"{counts['shards']} shards written")

    def on_shard(shard: Any, stats: Any) -> None:
        counts["shards"] += 1
        if per_shard:
            typer.echo(
                f"extract-trt: shard {shard.output}: {stats.records} records, {stats.errors} errors, "
                f"{stats.seconds:.1f} s",
                err=True,
            )

    started = False

    def on_rows(rows: int, errors: int) -> None:
        nonlocal started
        started = True
        bar.add(rows, errors)

    try:
        summary = run_job(config, on_rows=on_rows, on_shard=on_shard)
    except ImportError as exc:
        raise fail(f"--ray needs {exc.name}: pip install 'extract-trt[scale]'") from None
    except Exception as exc:  # noqa: BLE001 - any failure of the engine ends the run the same way
        bar.close()
        message = str(exc) if isinstance(exc, (ExtractError, OSError)) else f"{type(exc).__name__}: {exc}"
        if not (started or counts["shards"]):
            raise fail(message) from None
        typer.echo(f"extract-trt: error: the job stopped: {message}; run it again to resume", err=True)
        raise typer.Exit(1) from None
    bar.close()
    typer.echo(
        f"extract-trt: {summary.written} shards written, {summary.skipped} already done; {summary.records} records, "
        f"{summary.errors} errors, {summary.seconds:.1f} s ({summary.pages_per_second:.1f} pages/s); "
        f"manifest {summary.manifest_path}",
        err=True,
    )
