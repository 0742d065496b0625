"""``extract-trt export trt``: TensorRT engines (or ONNX Runtime TensorRT-EP context models) for an
exported model directory. Thin glue over :mod:`extract_trt.export.trt_engine`; needs a GPU and TensorRT."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Annotated, Optional

import typer

EPILOG = """Examples:

  extract-trt export trt ./orange-small-onnx --gpu l4 --precision fp16

  extract-trt export trt ./orange-small-onnx --gpu a100 --precision int8 --sample pages.jsonl.gz --workspace-gb 8

  extract-trt export trt ./dripper-onnx --gpu l4 --precision bf16 --route ort-ep
"""


def trt(
    model_dir: Annotated[Path, typer.Argument(help="A directory written by `extract-trt export onnx`.")],
    gpu: Annotated[str, typer.Option("--gpu", help="Target GPU: l4 (sm_89) or a100 (sm_80); must be this machine's.")],
    precision: Annotated[str, typer.Option("--precision", help="fp16, bf16 or int8 (int8: encoders, QDQ graph).")] = "fp16",
    workspace_gb: Annotated[float, typer.Option("--workspace-gb", min=0.1, help="Builder workspace limit (GiB).")] = 4.0,
    timing_cache: Annotated[
        Optional[Path], typer.Option("--timing-cache", help="Timing cache file (default: engine-<gpu>-<precision>.timing).")
    ] = None,
    sample: Annotated[
        Optional[Path], typer.Option("--sample", help="JSONL(.gz) of pages with an 'html' field for the profiles.")
    ] = None,
    sample_pages: Annotated[int, typer.Option("--sample-pages", min=1, help="Pages of --sample to use.")] = 200,
    route: Annotated[
        str, typer.Option("--route", help="tensorrt (a .plan via the TensorRT API) or ort-ep (ORT TensorRT EP context model).")
    ] = "tensorrt",
) -> None:
    """Build a TensorRT engine tuned to one GPU, record it in the manifest."""
    from extract_trt.errors import ExtractError
    from extract_trt.export.trt_engine import TrtExportOptions, export_ort_ep_context, export_tensorrt

    if route not in ("tensorrt", "ort-ep"):
        raise typer.BadParameter("use tensorrt or ort-ep", param_hint="--route")
    try:
        options = TrtExportOptions(
            gpu=gpu, precision=precision, workspace_gb=workspace_gb, timing_cache=timing_cache,
            sample_html=read_sample(sample, sample_pages) if sample else None,
        )  # fmt: skip
        report = lambda line: typer.echo(line, err=True)  # noqa: E731
        if route == "ort-ep":
            typer.echo(export_ort_ep_context(model_dir, options, report=report))
        else:
            record = export_tensorrt(model_dir, options, report=report)
            typer.echo(f"{model_dir / record.file}\t{record.compute_capability}\tTensorRT {record.tensorrt_version}")
    except (ExtractError, OSError) as exc:
        typer.echo(f"extract-trt export trt: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None


def read_sample(path: Path, limit: int) -> list[str]:
    """The ``html`` of the first ``limit`` records of a JSONL(.gz) file."""
    opener = gzip.open if path.suffix == ".gz" else open
    pages = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if len(pages) >= limit:
                break
            if line.strip():
                pages.append(json.loads(line)["html"])
    return pages
