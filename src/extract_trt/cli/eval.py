"""``extract-trt eval``: score extractors (ours and peers) on a labeled dataset; thin glue over
:mod:`extract_trt.eval`. Prints the Markdown report; ``--out DIR`` also writes ``report.md``,
``summary.json``, ``pages.json`` (one row per extractor × page; ``--save-text`` adds the scored text) and
``pareto.png``. ``--compare RUN_A RUN_B`` compares two such runs page by page instead.

Exit status: 0 when the evaluation ran (pages that failed are scored as empty and listed with their
error); 2 when it cannot run (no dataset, bad ids file, unknown extractor, every extractor unavailable,
the ``eval`` extra not installed, runs that cannot be compared).
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

  extract-trt eval -d ../shared/data/wcxb-dev.jsonl.gz -x default --save-text -o run1/

  extract-trt eval --compare run1/ run2/

Extractors: default, block-model-precision, block-model-recall, block-model-balanced, heuristic, annotation, a model directory, module:attr (a Labeler), or a peer:
trafilatura, resiliparse, readability, justext, rs-trafilatura (CPython 3.12 only).
"""


def _fail(message: str) -> typer.Exit:
    typer.echo(f"extract-trt: error: {message}", err=True)
    return typer.Exit(2)


def _compare(runs: tuple[Path, Path], out: Path | None) -> None:
    import json

    from extract_trt.eval.compare import compare_runs

    try:
        comparison = compare_runs(*runs)
    except ValueError as exc:
        raise _fail(str(exc)) from exc
    text = comparison.to_markdown()
    typer.echo(text, nl=False)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(text, encoding="utf-8")
        (out / "compare.json").write_text(json.dumps(comparison.to_json(), indent=1, ensure_ascii=False), encoding="utf-8")
        typer.echo(f"\nwrote {out / 'compare.md'}, {out / 'compare.json'}")


def eval_command(
    dataset: Annotated[
        Optional[Path],
        typer.Option(
            "--dataset",
            "-d",
            help="JSONL(.gz): our format (html, groundtruth, groundtruth_format, with/without) or WebMainBench's "
            "(html, convert_main_content, meta). Required unless --compare.",
            show_default=False,
        ),
    ] = None,
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
    save_text: Annotated[
        bool,
        typer.Option("--save-text", help="Keep each scored prediction in pages.json (`text`), to re-score or diff later."),
    ] = False,
    compare: Annotated[
        Optional[tuple[Path, Path]],
        typer.Option(
            "--compare",
            help="Compare two --out runs (RUN_A RUN_B) page by page: differences with a bootstrap interval, the "
            "pages that moved most, text diffs (with --save-text). Writes compare.md/.json to --out.",
            show_default=False,
        ),
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
    from extract_trt.errors import ExtractError
    from extract_trt.eval import evaluate, read_dataset, read_ids
    from extract_trt.eval.peers import PeerUnavailable

    if compare is not None:
        return _compare(compare, out)
    if dataset is None:
        raise _fail("give --dataset (or --compare RUN_A RUN_B)")
    from extract_trt.cli.extras import EVAL_EXTRA, missing_extra

    missing = missing_extra(EVAL_EXTRA, "eval")
    if missing is not None:
        raise _fail(f"extract-trt eval: {missing}")
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
            keep_text=save_text,
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
