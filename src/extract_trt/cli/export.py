"""``extract-trt export onnx``: a local Hugging Face checkpoint → a verified ONNX model directory.

Thin glue over :func:`extract_trt.export.encoder.export_encoder`; needs the ``export`` extra
(torch, transformers < 4.58, optimum-onnx). The hub is never contacted (``HF_HUB_OFFLINE=1``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

EPILOG = """Examples:

  extract-trt export onnx ./pulpie-orange-small ./orange-small-onnx --trust-remote-code --fp16 --int8

  extract-trt export onnx ./my-modernbert ./mb-onnx --max-tokens 8192 --logits

  extract-trt export onnx ./MinerU-HTML ./dripper-onnx --task text-generation-with-past --profile dripper-v1 --int8
"""

export_app = typer.Typer(
    help="Build model artifacts from checkpoints (ONNX model directories for ONNX Runtime / TensorRT).",
    no_args_is_help=True,
)


@export_app.command("onnx", no_args_is_help=True, epilog=EPILOG)
def onnx(
    checkpoint: Annotated[Path, typer.Argument(help="Local checkpoint directory (config.json, weights, tokenizer).")],
    out: Annotated[Path, typer.Argument(help="Model directory to write (model.onnx, tokenizer.json, extract-trt.json).")],
    fp16: Annotated[bool, typer.Option("--fp16", help="Also write model.fp16.onnx.")] = False,
    int8: Annotated[bool, typer.Option("--int8", help="Also write model.int8.onnx (dynamic int8 quantization).")] = False,
    max_tokens: Annotated[
        Optional[int], typer.Option("--max-tokens", min=8, help="Chunk size (default: min(8192, model positions)).")
    ] = None,
    opset: Annotated[int, typer.Option("--opset", min=14, help="ONNX opset.")] = 18,
    trust_remote_code: Annotated[
        bool, typer.Option("--trust-remote-code", help="Run the checkpoint's own model code (EuroBERT needs it).")
    ] = False,
    logits: Annotated[
        bool,
        typer.Option("--logits", help="Keep per-token logits as the output instead of the per-block <|sep|> gather."),
    ] = False,
    verify_html: Annotated[
        Optional[list[Path]],
        typer.Option("--verify-html", help="HTML page(s) to verify on (default: the bundled sample pages)."),
    ] = None,
    task: Annotated[
        str,
        typer.Option(
            "--task",
            help="token-classification (encoders) or text-generation-with-past (Dripper-format Qwen3 decoders "
            "with KV cache; a 0.6B model needs about 17 GB of RAM to export).",
        ),
    ] = "token-classification",
    profile: Annotated[
        str, typer.Option("--profile", help="Decoders: dripper-v1 (MinerU-HTML v1.0, JSON) or mineru-v1.1 (compact).")
    ] = "mineru-v1.1",
    max_context: Annotated[
        Optional[int], typer.Option("--max-context", min=64, help="Decoders: prompt + answer tokens (default: min(32768, positions)).")
    ] = None,
) -> None:
    """Export an encoder token classifier (Pulpie format: EuroBERT, BERT, RoBERTa, ModernBERT) or, with
    --task text-generation-with-past, a Dripper-format decoder."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if task == "text-generation-with-past":
        _export_decoder(checkpoint, out, profile, int8, fp16, max_context, opset, verify_html)
        return
    if task != "token-classification":
        raise typer.BadParameter("use token-classification or text-generation-with-past", param_hint="--task")
    from extract_trt.errors import ExtractError
    from extract_trt.export.encoder import EncoderExportOptions, export_encoder

    if not checkpoint.is_dir():
        raise typer.BadParameter(f"{checkpoint} is not a directory", param_hint="CHECKPOINT")
    options = EncoderExportOptions(
        variants=("fp32",) + (("fp16",) if fp16 else ()) + (("int8",) if int8 else ()),
        max_tokens=max_tokens,
        opset=opset,
        trust_remote_code=trust_remote_code,
        sep_gather=not logits,
        verify_html=[p.read_text(encoding="utf-8", errors="replace") for p in verify_html] if verify_html else None,
    )
    try:
        manifest = export_encoder(checkpoint, out, options, report=lambda line: typer.echo(line, err=True))
    except (ExtractError, OSError) as exc:
        typer.echo(f"extract-trt export: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    for name, variant in manifest.variants.items():
        typer.echo(f"{out / variant.file}\t{name}\t{variant.bytes:,} bytes\tmax abs diff {variant.max_abs_diff:.2e}")


def _export_decoder(checkpoint, out, profile, int8, fp16, max_context, opset, verify_html) -> None:
    from extract_trt.errors import ExtractError
    from extract_trt.export.decoder import DecoderExportOptions, export_decoder

    if fp16:
        raise typer.BadParameter("decoders are exported as fp32 (+ --int8)", param_hint="--fp16")
    if not checkpoint.is_dir():
        raise typer.BadParameter(f"{checkpoint} is not a directory", param_hint="CHECKPOINT")
    options = DecoderExportOptions(
        profile=profile,
        variants=("fp32",) + (("int8",) if int8 else ()),
        max_context=max_context,
        opset=opset,
        verify_html=[p.read_text(encoding="utf-8", errors="replace") for p in verify_html] if verify_html else None,
    )
    try:
        manifest = export_decoder(checkpoint, out, options, report=lambda line: typer.echo(line, err=True))
    except (ExtractError, OSError, ValueError) as exc:
        typer.echo(f"extract-trt export: {type(exc).__name__}: {exc}", err=True)
        raise typer.Exit(2) from None
    for name, variant in manifest.variants.items():
        typer.echo(f"{out / variant.file}\t{name}\t{variant.bytes:,} bytes\tmax abs diff {variant.max_abs_diff:.2e}")


from extract_trt.cli import export_trt  # noqa: E402 — registered here so `export` stays one group

export_app.command("trt", no_args_is_help=True, epilog=export_trt.EPILOG)(export_trt.trt)
