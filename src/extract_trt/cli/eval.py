"""``extract-trt eval``: score extractors (ours and peers) on a labeled dataset; thin glue over
:mod:`extract_trt.eval`. Prints the Markdown report; ``--out DIR`` also writes ``report.md``,
``summary.json``, ``pages.json`` (one row per extractor × page) and ``pareto.png``.

Exit status: 0 when the evaluation ran (pages that failed are scored as empty and listed with their
error); 2 when it cannot run (no dataset, bad ids file, unknown extractor, every extractor unavailable).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

EPILOG = """Examples:

  extract-trt eval --dataset ../shared/data/wcxb-dev.jsonl.gz --extractor default --extractor trafilatura

  extract-trt eval --dataset webmainbench.jsonl --extractor default -x resiliparse --out eval-out/

  extract-trt eval --dataset ../shared/data/wcxb-dev.jsonl.gz --ids val-ids.txt -x default -x heuristic

Extractors: default, block-model-precision, block-model-recall, heuristic, annotation, a model directory, module:attr (a Labeler), or a peer:
trafilatura, resiliparse, readability, justext, rs-trafilatura (CPython 3.12 only).
"""


def _fail(message: str) -> typer.Exit:
    typer.echo(f"extract-trt: error: {message}", err=True)
    return typer.Exit(2)


def eval_command(
    dataset: Annotated[
        Path,
        typer.Option(
            "--dataset",
            "-d",
            help="JSONL(.gz): our format (html, groundtruth, groundtruth_format, with/without) or WebMainBench's "
            "(html, convert_main_content, meta).",
            show_default=False,
        ),
    ],
    extractors: Annotated[
        Optional[list[str]],
        typer.Option("--extractor", "-x", help="Extractor to score; repeat for several. Default: default."),
    ] = None,
    ids: Annotated[
        Optional[Path], typer.Option("--ids", help="File of page ids (one per line) to restrict the evaluation to.")
    ] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", min=1, help="Score at most N pages.")] = None,
    out: Annotated[
        Optional[Path],
        typer.Option("--out", "-o", help="Directory for report.md, summary.json, pages.json and pareto.png."),
    ] = None,
    worst: Annotated[int, typer.Option("--worst", min=0, help="Worst pages listed per extractor.")] = 10,
    reference_field: Annotated[
        str, typer.Option("--reference-field", help="WebMainBench ground-truth field.")
    ] = "convert_main_content",
    progress: Annotated[
        Optional[bool], typer.Option("--progress/--no-progress", help="Progress line on stderr (default: on a TTY).")
    ] = None,
    comments: Annotated[
        Optional[bool],
        typer.Option(
            "--comments/--no-comments",
            help="Score reader comments after the main content (--comments) or without them (--no-comments), for ours "
            "and the peers with a switch for them (trafilatura, resiliparse). Default: each one's own (ours without, "
            "trafilatura with).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Score main-content extractors on labeled pages: WCXB word F1, WebMainBench ROUGE-5 (jieba),
    Pulpie ROUGE-5 (whitespace), snippet rates; breakdowns by page type, level and language; speed."""
    from extract_trt.cli.progress import Progress
    from extract_trt.eval import evaluate, read_dataset, read_ids
    from extract_trt.eval.peers import PeerUnavailable
    from extract_trt.runtime.errors import ExtractError

    if not dataset.is_file():
        raise _fail(f"dataset {str(dataset)!r} does not exist")
    try:
        wanted = read_ids(ids) if ids is not None else None
    except OSError as exc:
        raise _fail(f"cannot read --ids {str(ids)!r}: {exc}") from exc
    records = read_dataset(dataset, ids=wanted, limit=limit, reference_field=reference_field)
    bar = Progress(sys.stderr.isatty() if progress is None else progress)
    try:
        report = evaluate(
            records,
            extractors or ["default"],
            dataset=str(dataset),
            on_page=lambda record, rows: bar.update(next((r for r in rows if r.error), rows[0] if rows else None)),
            comments=comments,
        )
    except (ExtractError, ValueError, PeerUnavailable, OSError) as exc:
        raise _fail(str(exc)) from exc
    finally:
        bar.close()
    if not report.candidates:
        raise _fail("no extractor could run:\n" + "\n".join(f"  {k}: {v}" for k, v in report.skipped.items()))
    if not report.rows:
        raise _fail(f"no pages to score in {str(dataset)!r}" + (" with those --ids" if wanted is not None else ""))
    for name, reason in report.skipped.items():
        typer.echo(f"extract-trt: skipped {name}: {reason}", err=True)
    typer.echo(report.to_markdown(worst=worst), nl=False)
    if out is not None:
        paths = report.write(out, worst=worst)
        typer.echo("\nwrote " + ", ".join(str(p) for p in paths.values()))
