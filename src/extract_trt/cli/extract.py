"""``extract-trt extract``: read pages, extract main content, write it. Thin glue over
:mod:`extract_trt.runtime.io.records` (readers/writers) and :mod:`extract_trt.runtime.io.batch` (workers).

Where the output goes (first rule that applies):

1. ``-o DIR/`` (trailing slash) or ``-o`` an existing directory → one file per page + ``index.jsonl`` +
   ``errors.jsonl`` (:class:`~extract_trt.runtime.io.records.FileTreeWriter`).
2. ``-o FILE.jsonl`` (``.jsonl.gz``, ``.ndjson``) → JSON lines (:class:`~extract_trt.runtime.io.records.JsonlWriter`).
3. No ``-o`` (or ``-o -``): the single page's content to stdout when the input is exactly one HTML
   document (one HTML file, or stdin holding HTML); otherwise JSON lines to stdout.
4. ``-o`` another path: the single page's content to that file (atomic write); an error (exit 2) when
   the input is not exactly one HTML document.

Positional output: ``extract-trt extract in.jsonl out.jsonl`` — exactly two positionals, no ``-o``, the
first a JSONL file and the second ending in ``.jsonl``/``.jsonl.gz`` — writes to the second. Exception,
so an input is never overwritten: when the second exists and its first line is a JSON object with the
HTML field, both are read as inputs (a note says so on stderr).

Exit status: 0 when the run completed, even if some pages failed (each failure is an output record
with ``error``); 2 when it cannot run (no inputs, missing path, unwritable output, bad option).
"""

import contextlib
import itertools
import json
import os
import sys
from collections import Counter
from enum import Enum
from importlib import resources
from typing import Annotated, Any, Optional

import typer

from extract_trt.errors import ExtractError
from extract_trt.runtime.limits import DEFAULT_PAGE_MEMORY, DEFAULT_TIME_BUDGET, memory_capped
from extract_trt.runtime.io.records import (
    DEFAULT_MAX_BYTES,
    FileTreeWriter,
    JsonlWriter,
    detect_format,
    iter_records,
    resolve_inputs,
    result_record,
    writable,
    write_atomic,
)

JSONL_OUT_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson")


class OutputFormat(str, Enum):
    html = "html"
    markdown = "markdown"
    text = "text"
    json = "json"


#: What the Extractor must produce for each output format.
_EXTRACTOR_OUTPUTS = {"html": ("html",), "markdown": ("markdown",), "text": ("text",), "json": ("html", "markdown", "text")}


EPILOG = """Examples:

  extract-trt extract --sample --format markdown

  extract-trt extract page.html -f text

  extract-trt extract --format text in.jsonl out.jsonl

  extract-trt extract crawl.warc.gz -o out/ -w 8

  cat page.html | extract-trt extract - -f text
"""


def fail(message: str) -> "typer.Exit":
    """Print ``extract-trt: error: message`` on stderr; return the exit-2 exception to raise."""
    typer.echo(f"extract-trt: error: {message}", err=True)
    return typer.Exit(2)


def sample_paths() -> list[str]:
    """The bundled sample pages (``extract_trt/samples/*.html``), sorted."""
    folder = resources.files("extract_trt") / "samples"
    return sorted(str(p) for p in folder.iterdir() if p.name.endswith(".html"))


def extract(
    inputs: Annotated[
        Optional[list[str]],
        typer.Argument(
            help="HTML files, directories (searched recursively for .html/.htm/.xhtml), glob patterns, "
            ".jsonl/.jsonl.gz files (one page per line, HTML in the 'html' field), WARC/.warc.gz files "
            "(HTML responses), or - for stdin. Also: 'in.jsonl out.jsonl' writes to out.jsonl.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Optional[str],
        typer.Option(
            "--output",
            "-o",
            help="Where to write: FILE.jsonl for JSON lines, DIR/ (or an existing directory) for one file "
            "per page, another path for the content of a single page. Default: stdout — the page content "
            "for a single HTML input, else JSON lines.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        OutputFormat,
        typer.Option(
            "--format",
            "-f",
            help="Output: main-content html, markdown, plain text, or json (the full record: main_html, "
            "markdown, text, per-block labels, timings, metadata).",
            case_sensitive=False,
        ),
    ] = OutputFormat.markdown,
    workers: Annotated[
        str,
        typer.Option(
            "--workers",
            "-w",
            help="Worker processes, or auto: one per CPU available to this process, at most one per batch of "
            "pages, one for a single batch or with --provider. Output order is the input order either way.",
        ),
    ] = "auto",
    batch_size: Annotated[
        Optional[int],
        typer.Option(
            "--batch-size", min=1,
            help="Pages labelled together (default: the labeler's choice, 1 for the block model and the heuristic, "
            "else 16); also the unit sent to a worker (default 16).",
        ),
    ] = None,
    labeler: Annotated[
        str,
        typer.Option(
            "--labeler", "-l",
            help="default (the built-in block model, each page cut at its own threshold), block-model-precision / "
            "block-model-recall / block-model-balanced (the same model, every page cut at its threshold favoring "
            "precision, recall or neither), heuristic, annotation (cc-select marks), a model "
            "directory, or cascade:BIG (the default model on every page, BIG — a name or model directory — on the "
            "--budget share it is least sure of).",
        ),
    ] = "default",
    budget: Annotated[
        Optional[float],
        typer.Option(
            "--budget", min=0.0, max=1.0,
            help="With --labeler cascade:BIG: the share of pages sent to BIG (default 0.2).",
        ),
    ] = None,
    provider: Annotated[
        Optional[list[str]],
        typer.Option(
            "--provider",
            help="ONNX Runtime execution provider for an exported model directory: tensorrt, cuda or cpu; repeat "
            "in order of preference. Default: the available ones, TensorRT > CUDA > CPU.",
        ),
    ] = None,
    allow_cpu_fallback: Annotated[
        bool,
        typer.Option("--allow-cpu-fallback", help="Run on CPU when a requested GPU provider is missing or fails to start."),
    ] = False,
    comments: Annotated[
        bool,
        typer.Option(
            "--comments/--no-comments",
            help="Also extract reader comments (blog/article comment sections; a product page's customer reviews): "
            "a 'comments' field in JSONL records, after the main content in single-page and per-file output. Either "
            "way they are not main content.",
        ),
    ] = False,
    links: Annotated[bool, typer.Option("--links/--no-links", help="Keep hyperlinks in Markdown output.")] = True,
    images: Annotated[bool, typer.Option("--images/--no-images", help="Keep images in Markdown output.")] = True,
    html_field: Annotated[
        str, typer.Option("--html-field", help="JSONL field that holds the page HTML.")
    ] = "html",
    keep_markup: Annotated[
        bool,
        typer.Option(
            "--keep-markup",
            help="Keep the page's original markup in the main HTML (scripts, event handlers, javascript: URLs), "
            "as the reference reconstruction writes it, byte for byte. Default: sanitised HTML (Markdown is "
            "always escaped).",
        ),
    ] = False,
    item_ids: Annotated[
        bool,
        typer.Option("--item-ids", help="Keep the blocks' _item_id marks in the sanitised main HTML (default: left out)."),
    ] = False,
    max_mb: Annotated[
        float, typer.Option("--max-mb", min=0, help="Pages larger than this many MiB get an error record (0: no limit).")
    ] = DEFAULT_MAX_BYTES / 2**20,
    time_budget: Annotated[
        float,
        typer.Option(
            "--time-budget",
            min=0,
            help="Seconds a page may take (0: no limit); over half of it before labelling means the heuristic "
            "labels that page. With --workers, a worker holding a page 3x this long is killed and replaced.",
        ),
    ] = DEFAULT_TIME_BUDGET,
    metadata: Annotated[
        Optional[bool],
        typer.Option(
            "--metadata/--no-metadata",
            help="Read the page's metadata (title, author, date, site name, language, canonical URL, tags, ...): "
            "the 'metadata' object of --format json. Default: off (it adds about 9 % to a page's time), on with "
            "--front-matter.",
            show_default=False,
        ),
    ] = None,
    front_matter: Annotated[
        bool,
        typer.Option(
            "--front-matter", help="Markdown output: start each page with its metadata as YAML front matter (implies --metadata)."
        ),
    ] = False,
    sample: Annotated[
        bool,
        typer.Option("--sample", help="Run on the 3 bundled sample pages instead of INPUTS (a quick demo)."),
    ] = False,
    progress: Annotated[
        Optional[bool],
        typer.Option(
            "--progress/--no-progress",
            help="Show pages done, pages/s and errors on stderr. Default: only when stderr is a terminal.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Extract the main content of web pages.

    Every page gives one output record, in input order. A page that fails gets a record with "error" and the run goes on (exit status 0); exit status 2 means the run could not start.
    """
    fmt_name = fmt.value
    if front_matter and (fmt_name != "markdown" or metadata is False):
        raise fail("--front-matter needs --format markdown (and not --no-metadata)")
    metadata = bool(metadata or front_matter)
    inputs = list(inputs or [])
    if sample:
        if inputs:
            raise fail("--sample runs on the bundled pages; do not give INPUTS with it")
        inputs = sample_paths()
    elif not inputs:
        raise fail("no inputs given: pass files, directories, glob patterns or - (stdin), or use --sample")

    if output is None and not sample:
        inputs, output = _positional_output(inputs, html_field)

    try:
        resolved = resolve_inputs(inputs)
    except ExtractError as exc:
        raise fail(str(exc)) from None

    max_bytes = int(max_mb * 2**20) or None
    skipped: Counter[str] = Counter()
    records = iter_records(resolved, html_field=html_field, max_bytes=max_bytes, skipped=skipped)
    if sample:
        records = _sample_ids(records)
    first = next(records, None)
    if first is None:
        typer.echo("extract-trt: note: the inputs hold no pages (no HTML responses / no JSONL lines)", err=True)
    single = len(resolved) == 1 and first is not None and first.get("format") == "html"
    stream = records if first is None else itertools.chain([first], records)
    n_workers, stream = _workers(workers, stream, batch_size, provider)

    if budget is not None:
        from extract_trt.runtime.labelers import with_budget

        try:
            labeler = with_budget(labeler, budget)
        except ExtractError as exc:
            raise fail(str(exc)) from None
    if provider or allow_cpu_fallback:  # built here so a missing GPU stops the run before it starts
        from extract_trt.runtime.labelers import get_labeler
        from extract_trt.runtime.labelers.session import SessionConfig

        try:
            labeler = get_labeler(labeler, SessionConfig(providers=provider or "auto", allow_cpu_fallback=allow_cpu_fallback))
        except (ExtractError, ValueError) as exc:
            raise fail(f"{type(exc).__name__}: {exc}") from None
    kwargs: dict[str, Any] = {
        "labeler": labeler,
        "output": _EXTRACTOR_OUTPUTS[fmt_name],
        "links": links,
        "images": images,
        "batch_size": batch_size,
        "max_bytes": max_bytes,
        "time_budget": time_budget or None,
        "keep_markup": keep_markup,
        "metadata": metadata,
        "item_ids": item_ids,
        "comments": comments,
    }
    show_progress = sys.stderr.isatty() if progress is None else progress
    _run(stream, resolved, output, fmt_name, single, n_workers, kwargs, show_progress, front_matter)
    if skipped:  # so that input records = output rows + skipped can be checked
        detail = ", ".join(f"{n:,} {reason}" for reason, n in sorted(skipped.items()))
        typer.echo(f"extract-trt: note: skipped (no output row): {detail}", err=True)


def _workers(spec: str, stream: Any, batch_size: Optional[int], provider: Optional[str]) -> tuple[int, Any]:
    """The number of worker processes for ``--workers`` and the stream to read (auto peeks at most
    CPUs × batch records ahead to count the batches; see :func:`extract_trt.runtime.io.batch.auto_workers`)."""
    from extract_trt.runtime.io.batch import CHUNK_PAGES, auto_workers, available_cpus, parse_workers

    try:
        n = parse_workers(spec)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--workers") from None
    if n is not None:
        return n, stream
    if provider:  # one process holds the model on the accelerator; workers would each load it again
        return 1, stream
    chunk = batch_size or CHUNK_PAGES
    head = list(itertools.islice(stream, available_cpus() * chunk))
    return auto_workers(len(head), chunk), itertools.chain(head, stream)


def _positional_output(inputs: list[str], html_field: str) -> tuple[list[str], Optional[str]]:
    """Apply the ``in.jsonl out.jsonl`` rule (module docstring)."""
    if len(inputs) != 2 or not inputs[1].lower().endswith((".jsonl", ".jsonl.gz")):
        return inputs, None
    first, second = inputs
    try:
        if not os.path.isfile(first) or detect_format(first) != "jsonl":
            return inputs, None
    except OSError:
        return inputs, None
    if os.path.isfile(second) and _looks_like_input(second, html_field):
        typer.echo(f"extract-trt: note: {second} holds '{html_field}' records; reading it as an input", err=True)
        return inputs, None
    return [first], second


def _looks_like_input(path: str, html_field: str) -> bool:
    import gzip

    try:
        with open(path, "rb") as raw:
            gzipped = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            f = gzip.GzipFile(fileobj=raw) if gzipped else raw
            line = f.readline(1 << 24)
        obj = json.loads(line)
    except (OSError, ValueError, EOFError):
        return False
    return isinstance(obj, dict) and html_field in obj


def _sample_ids(records: Any) -> Any:
    for record in records:
        record["id"] = "samples/" + os.path.basename(str(record["id"]))
        yield record


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _open_writer(output: Optional[str], fmt: str, single: bool, resolved: list[str]) -> Any:
    """A writer (``.write(result)``, ``.close()``) per the output rules, or exit 2."""
    if output is not None and output != "-":
        if any(p != "-" and _same_file(output, p) for p in resolved):
            raise fail(f"output {output!r} is also an input")
    try:
        if output is None or output == "-":
            return _SingleWriter(None, fmt) if single else JsonlWriter(None, fmt)
        if output.endswith(("/", os.sep)) or os.path.isdir(output):
            return FileTreeWriter(output, fmt)
        if output.lower().endswith(JSONL_OUT_SUFFIXES):
            return JsonlWriter(output, fmt)
        if single:
            parent = os.path.dirname(output) or "."
            if not os.path.isdir(parent):
                raise OSError(f"directory {parent!r} does not exist")
            return _SingleWriter(output, fmt)
    except OSError as exc:
        raise fail(f"cannot write output {output!r}: {exc}") from None
    raise fail(
        f"output {output!r}: several pages need a .jsonl file or a directory (end the path with /); "
        "a plain file takes the content of exactly one HTML input"
    )


class _SingleWriter:
    """The content of the one page, to stdout or a file; the page's error (if any) goes to stderr."""

    def __init__(self, path: Optional[str], fmt: str) -> None:
        self.path = path
        self.fmt = fmt

    def write(self, result: Any) -> None:
        result = writable(result)
        if self.fmt == "json":
            data = json.dumps(result_record(result, "json"), ensure_ascii=False, indent=2) + "\n"
        else:
            data = result.content(self.fmt, comments=True)  # the comments follow when extracted
        if result.error is not None:
            typer.echo(f"extract-trt: {result.id}: {result.error}", err=True)
            if self.fmt != "json":
                return
        if self.path is None:
            if data and not data.endswith("\n"):
                data += "\n"
            out = getattr(sys.stdout, "buffer", None)
            if out is not None:
                sys.stdout.flush()
                out.write(data.encode("utf-8"))
                out.flush()
            else:
                sys.stdout.write(data)
        else:
            write_atomic(self.path, data)

    def close(self) -> None:
        pass


def _run(
    stream: Any,
    resolved: list[str],
    output: Optional[str],
    fmt: str,
    single: bool,
    workers: int,
    kwargs: dict[str, Any],
    show_progress: bool,
    front_matter: bool = False,
) -> None:
    from extract_trt.cli.progress import Progress
    from extract_trt.runtime.extractor import Extractor
    from extract_trt.runtime.html.metadata import front_matter as front_matter_block
    from extract_trt.runtime.io.batch import run

    extractor = None
    if workers <= 1:
        try:
            extractor = Extractor(**kwargs)
        except Exception as exc:  # a labeler that cannot load: the run cannot proceed
            raise fail(f"cannot build the extractor: {type(exc).__name__}: {exc}") from None
    writer = _open_writer(output, fmt, single, resolved)
    bar = Progress(show_progress)
    # One worker process even with --workers 1 (unless there is no time budget to hold a page to): a page
    # stuck in native code is then killed after page_timeout instead of hanging the run. A single HTML
    # document (interactive use: a worker's start would double the wait) stays in this process, under the
    # same memory cap a worker has.
    limited = kwargs.get("time_budget") is not None
    supervised = limited and not single
    cap = DEFAULT_PAGE_MEMORY if limited and single and workers <= 1 else None
    results = run(stream, workers=workers, extractor_kwargs=kwargs, extractor=None if supervised else extractor, supervised=supervised)
    try:
        with contextlib.closing(results), memory_capped(cap):
            for result in results:
                if front_matter and result.error is None and result.metadata is not None:
                    result.markdown = front_matter_block(result.metadata) + result.markdown
                writer.write(result)
                bar.update(result)
        writer.close()
    except BrokenPipeError:  # e.g. `| head`: stop quietly
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None
    except OSError as exc:
        raise fail(f"cannot write output {output!r}: {exc}") from None
    except BaseException:  # an interrupted run keeps what it wrote (a file tree's index files included)
        with contextlib.suppress(Exception):
            writer.close()
        raise
    finally:
        bar.close()
