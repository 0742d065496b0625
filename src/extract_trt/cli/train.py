"""``extract-trt train``: retrain the built-in block model from the shared labeled pages."""

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer


def train(
    data_dir: Annotated[Path, typer.Option("--data", help="Directory holding wcxb-dev.jsonl.gz etc.")] = Path(
        "../shared/data"
    ),
    out_dir: Annotated[Path, typer.Option("--out", "-o", help="Model directory to write.")] = Path("block-model"),
    epochs: Annotated[int, typer.Option(help="Passes over the training pages.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed for initialisation, order and crops.")] = 13,
    threads: Annotated[int, typer.Option(help="PyTorch CPU threads (more than 1 only pays on an idle machine).")] = 1,
    max_pages: Annotated[int | None, typer.Option(help="Read at most this many pages per dataset.")] = None,
    refit: Annotated[
        bool,
        typer.Option(
            "--refit/--no-refit",
            help="After picking the threshold on the tune pages, train again on train + tune and ship that "
            "(the shipped recipe). --no-refit ships the train-only model, the one to score on the tune pages "
            "(their ids are in the manifest's tune.ids) when comparing recipes.",
        ),
    ] = True,
    train_share: Annotated[
        float,
        typer.Option(
            min=0.001,
            max=1.0,
            help="Train on this share of the training domains (the same domains on every run; a smaller share's "
            "are inside every larger one), tune and validation pages unchanged: a learning curve.",
        ),
    ] = 1.0,
    members: Annotated[
        int,
        typer.Option(
            min=1,
            help="Models trained with seeds SEED, SEED+1, ... and shipped as one graph averaging their logits "
            "(the shipped recipe: 2); 1: a single model.",
        ),
    ] = 2,
    teacher: Annotated[
        Optional[str],
        typer.Option(
            "--teacher",
            help="Distil: label --pages with this teacher and train on its labels. A model directory (exported "
            "encoder/decoder, TensorRT engine, block model), cascade[@BUDGET]:BIG, a peer of `extract-trt eval` "
            "(trafilatura, rs-trafilatura, ...), or oracle:DATASET.jsonl.gz (that dataset's ground truth).",
        ),
    ] = None,
    pages: Annotated[
        Optional[list[str]],
        typer.Option("--pages", help="With --teacher: the pages to label (WARC, JSONL, Parquet, HTML files, directories, globs); repeat."),
    ] = None,
    cache: Annotated[
        Optional[Path],
        typer.Option("--cache", help="With --teacher: where the teacher's labels are kept (resumable). Default: OUT.teacher-cache."),
    ] = None,
    mix: Annotated[
        bool, typer.Option("--mix/--no-mix", help="With --teacher: also train on the human-labelled sets of --data.")
    ] = False,
    progress: Annotated[
        Optional[bool], typer.Option("--progress/--no-progress", help="Teacher-pass progress on stderr (default: on a TTY).")
    ] = None,
) -> None:
    """Train the block model (features -> small Transformer over blocks), export fp32 + int8 ONNX.

    Needs the ``train`` extra (PyTorch). The shipped model is this command with its defaults, run from the
    repository root: ``extract-trt train -o src/extract_trt/models/block-model``.
    """
    from extract_trt.errors import ExtractError

    try:
        from extract_trt.train.trainer import TrainConfig, train_block_model
    except ImportError as exc:  # torch/onnx missing
        raise typer.BadParameter(f"training needs the train extra (pip install 'extract-trt[train]'): {exc}") from exc
    if (teacher is None) != (not pages):
        raise typer.BadParameter("--teacher and --pages go together", param_hint="--teacher")
    if (teacher is None or mix) and not (data_dir / "wcxb-dev.jsonl.gz").is_file():
        raise typer.BadParameter(f"{data_dir} has no wcxb-dev.jsonl.gz", param_hint="--data")
    config = TrainConfig(
        epochs=epochs, seed=seed, threads=threads, max_pages=max_pages, refit=refit, train_share=train_share,
        members=members,
    )
    log = lambda line: typer.echo(line, err=True)  # noqa: E731
    if teacher is None:
        train_block_model(data_dir, out_dir, config, log=log)
        return
    from extract_trt.cli.progress import Progress
    from extract_trt.train.distill import distil

    bar = Progress(sys.stderr.isatty() if progress is None else progress)
    try:
        distil(teacher, pages or [], out_dir, config, cache_dir=cache, data_dir=data_dir if mix else None, log=log,
               on_page=lambda failed: bar.add(1, int(failed)), on_teacher_done=bar.close)  # fmt: skip
    except ExtractError as exc:
        typer.echo(f"extract-trt: error: {exc}", err=True)
        raise typer.Exit(2) from None
