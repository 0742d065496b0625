"""``extract-trt doctor``: providers, GPU, CUDA/TensorRT and matching engines on this machine (thin glue
over :mod:`extract_trt.doctor`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

EPILOG = """Examples:

  extract-trt doctor

  extract-trt doctor ./orange-small-onnx --json
"""


def doctor_command(
    model_dirs: Annotated[
        list[Path] | None, typer.Argument(help="Model directories whose TensorRT engines to check against this machine.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
) -> None:
    """Show the execution providers ONNX Runtime really offers, the GPU (name, compute capability), the CUDA
    and TensorRT versions found, which engines of a model directory match, and what to install."""
    from extract_trt.doctor import diagnose, render

    found = diagnose(tuple(model_dirs or ()))
    typer.echo(json.dumps(found.to_dict(), indent=1) if as_json else render(found))
