"""``extract-trt bench``: pipeline and per-stage throughput, latency, peak RSS and $/M pages for every
labeler × ONNX Runtime provider × {1, N} worker processes (warm-up excluded, repeats with a 95 % interval),
then the analytic GPU roofline projection on the same pages. Thin glue over
:func:`extract_trt.eval.bench.run_bench`.

Exit status: 0 when the bench ran (configurations that cannot run are listed as skipped); 2 when it
cannot start (no inputs, bad price or prices file).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

EPILOG = """Examples:

  extract-trt bench                                   # the bundled sample pages, all labelers

  extract-trt bench ../shared/data/wcxb-dev.jsonl.gz -n 200 --labeler default --workers 2

  extract-trt bench pages.jsonl --prices prices.toml --tokenizer tokenizer.json --json bench.json

  extract-trt bench pages.jsonl -l default --repeats 5 --warmup-pages 64 --price-per-hour 0.17

  extract-trt bench pages.jsonl --labeler models/encoder-onnx --provider CUDAExecutionProvider
"""


def bench_command(
    inputs: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="Pages, as for `extract-trt extract` (files, directories, globs, JSONL, WARC). "
            "Default: the bundled sample pages.",
            show_default=False,
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Pages to read from the inputs.")] = 200,
    labelers: Annotated[
        Optional[list[str]],
        typer.Option(
            "--labeler",
            "-l",
            help="Labeler (default, heuristic, a model directory, module:attr); repeat. Default: default and heuristic.",
        ),
    ] = None,
    providers: Annotated[
        Optional[list[str]],
        typer.Option(
            "--provider",
            help="ONNX Runtime provider for exported model directories; repeat. Default: all available.",
        ),
    ] = None,
    workers: Annotated[
        Optional[int], typer.Option("--workers", "-w", min=1, help="N of the multi-process run (default: CPUs).")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="Conversion stage output: markdown, text or html.")] = "markdown",
    batch_size: Annotated[int, typer.Option("--batch-size", min=1, help="Pages labelled together.")] = 16,
    warmup_pages: Annotated[
        Optional[int],
        typer.Option(
            "--warmup-pages", min=0, help="Pages run first and not counted (default: one batch per worker)."
        ),
    ] = None,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Times the pages are measured; pages/s gets a 95 % interval.")
    ] = 3,
    prices_file: Annotated[
        Optional[Path],
        typer.Option(
            "--prices",
            help="prices.toml: [vcpu] per_hour, [gpu.KIND] per_hour (and source). Default: vcpu $0.045/h, "
            "gpu.l4 $0.39/h, gpu.a100 $1.50/h.",
        ),
    ] = None,
    price: Annotated[
        Optional[str],
        typer.Option(
            "--price-per-hour",
            help="Price the measured runs as this whole machine at this many $/hour (the roofline's GPUs keep "
            "their own prices). Default: a vCPU per worker, plus the GPU for GPU runs.",
        ),
    ] = None,
    roofline: Annotated[
        bool, typer.Option("--roofline/--no-roofline", help="Analytic GPU projection on the same pages.")
    ] = True,
    tokenizer: Annotated[
        Optional[Path],
        typer.Option("--tokenizer", help="tokenizer.json for the projection's token counts (default: a local BPE)."),
    ] = None,
    compute_efficiency: Annotated[float, typer.Option(min=0.01, max=1.0, help="Share of peak FLOP/s assumed.")] = 0.5,
    bandwidth_efficiency: Annotated[
        float, typer.Option(min=0.01, max=1.0, help="Share of peak memory bandwidth assumed.")
    ] = 0.8,
    json_out: Annotated[Optional[Path], typer.Option("--json", help="Also write every figure to this JSON file.")] = None,
    cascade_big: Annotated[
        Optional[list[str]],
        typer.Option(
            "--cascade-big",
            help="Also cost a cascade (the default labeler on every page, this big model on 0-100 %% of them): a "
            "labeler benched here on a GPU (measured), a published figure (pulpie-small-l4, pulpie-small-a100, "
            "dripper-l4, dripper-a100) or PAGES_PER_S@PRICE; repeat.",
        ),
    ] = None,
    metadata: Annotated[
        str,
        typer.Option(
            "--metadata", help="Page metadata: off (the default, as in Extractor), on, or both (each configuration twice: its cost)."
        ),
    ] = "off",
) -> None:
    """Measure speed and cost: stages, pages/s, p50/p95, peak RSS, providers in use, $/M pages, GPU roofline."""
    from extract_trt.cli.extract import sample_paths
    from extract_trt.errors import InputFormatError
    from extract_trt.eval.bench import run_bench
    from extract_trt.eval.cost import load_prices, machine_price, resolve_throughput
    from extract_trt.eval.roofline import Assumptions
    from extract_trt.runtime.io.records import iter_records

    from extract_trt.cli.extras import BENCH_EXTRA, missing_extra

    missing = missing_extra(BENCH_EXTRA, "eval")
    if missing is not None:
        typer.echo(f"extract-trt: error: extract-trt bench: {missing}", err=True)
        raise typer.Exit(2)
    if fmt not in ("markdown", "text", "html"):
        raise typer.BadParameter("use markdown, text or html", param_hint="--format")
    modes = {"on": (True,), "off": (False,), "both": (False, True)}
    if metadata not in modes:
        raise typer.BadParameter("use on, off or both", param_hint="--metadata")
    try:
        machine = machine_price(price) if price is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--price-per-hour") from exc
    try:
        prices = load_prices(prices_file)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--prices") from exc
    try:
        records = list(itertools.islice(iter_records(inputs or sample_paths()), limit))
    except InputFormatError as exc:
        typer.echo(f"extract-trt: error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if cascade_big and labelers and "default" not in labelers:
        raise typer.BadParameter("cascade costs need the default labeler in the bench", param_hint="--cascade-big")
    for spec in cascade_big or []:
        if spec not in (labelers or []):
            try:
                resolve_throughput(spec, prices)
            except ValueError as exc:
                raise typer.BadParameter(str(exc), param_hint="--cascade-big") from exc
    report = run_bench(
        records,
        labelers,
        providers=providers,
        workers=workers,
        output=fmt,
        batch_size=batch_size,
        warmup_pages=warmup_pages,
        repeats=repeats,
        prices=prices,
        machine_price=machine,
        roofline=roofline,
        tokenizer_file=str(tokenizer) if tokenizer else None,
        assumptions=Assumptions(compute_efficiency=compute_efficiency, bandwidth_efficiency=bandwidth_efficiency),
        cascade_bigs=cascade_big or (),
        metadata_modes=modes[metadata],
        on_run=lambda run: typer.echo(
            f"measured {run.name}, {run.workers} worker(s)" + (f": skipped ({run.skipped})" if run.skipped else ""),
            err=True,
        ),
    )
    typer.echo(report.to_text())
    if json_out is not None:
        json_out.write_text(json.dumps(report.to_json(), indent=1), encoding="utf-8")
        typer.echo(f"\nwrote {json_out}")
