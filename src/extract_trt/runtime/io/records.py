"""Input readers and output writers for batch extraction. Everything streams: memory stays bounded by
one document (or one JSONL line, or one WARC record) plus a small read buffer, whatever the input size.

Inputs (:func:`resolve_inputs`, :func:`iter_records`)
------------------------------------------------------
Each input string is, in this order of precedence:

* ``-``: standard input (at most once). Its format is sniffed from the first bytes (see below); a stream
  that is not JSONL or WARC is read as one HTML document (bytes).
* an existing **directory**: all files below it (recursively, symlinked directories not followed) whose
  name ends in ``.html``, ``.htm`` or ``.xhtml`` (any case), sorted by path.
* an existing **file**: read according to its format (below), whatever its extension.
* a **glob pattern** (contains ``*``, ``?`` or ``[``): expanded with ``glob.glob(recursive=True)``, sorted;
  matched files are read as files, matched directories are expanded as directories.

A path that does not exist, a pattern that matches nothing, or a directory without HTML files raises
:class:`~extract_trt.errors.InputFormatError` up front (before any record is read), so a
typo never silently produces an empty run.

Format of a file or stream: by extension first — ``.warc``, ``.warc.gz``, ``.warc.zst`` → WARC;
``.jsonl``, ``.jsonl.gz``, ``.json.gz``, ``.ndjson``, ``.ndjson.gz`` → JSONL; ``.html``, ``.htm``,
``.xhtml`` (optionally ``.gz``) → HTML — else by content: gzip magic bytes are looked through, then
content starting with ``WARC/`` is WARC, content starting with ``{`` is JSONL (leading whitespace and a
UTF-8 BOM are ignored), anything else is one HTML document. Gzip compression is detected from magic
bytes for every format, so a mislabelled ``.jsonl`` that is really gzipped still reads.

Records
-------
Every record is a dict ``{"id", "url", "source", "format", "html"}`` (plus ``"content_type"`` when
known), or — when the input could not be read as a page — ``{"id", "url", "source", "format",
"error"}`` with ``error`` formatted like ``Result.error`` (``"InputFormatError: reason"``). Nothing is
dropped silently except what the rules below skip on purpose (blank JSONL lines; WARC records that are
not HTML responses, which :func:`iter_records` counts by reason into its ``skipped`` counter; the CLI
prints those counts on stderr).

* HTML file: ``id`` = the path as given/expanded, ``url`` = ``None``, ``html`` = the raw bytes.
  Stdin HTML: ``id`` = ``"-"``.
* JSONL: one JSON object per line. ``html`` = the ``html_field`` value (a string), ``id`` = ``id``, else
  ``track_id``, else ``"<source>:<line number>"`` (1-based; ``source`` is ``stdin`` for ``-``); a string
  id is kept as given, a number is rendered as canonical JSON, anything else makes the line an error
  record (:func:`record_id`), ``url``
  and ``content_type`` when present as strings. Blank lines are skipped. A line that is not valid JSON
  / UTF-8, is not an object, or lacks a string ``html`` field gives an error record (id from the line
  when it parsed). A corrupt or truncated file gives one error record for the rest of the file.
* WARC (via fastwarc): ``response`` records with an HTTP payload whose ``Content-Type`` media type is
  ``text/html`` or ``application/xhtml+xml`` only (records without Content-Type are skipped). ``id`` =
  ``WARC-Record-ID`` (verbatim, e.g. ``<urn:uuid:…>``), ``url`` = ``WARC-Target-URI``, ``content_type``
  = the HTTP ``Content-Type`` value (so decoding can use its charset), ``warc_date`` = ``WARC-Date``,
  ``http_status`` = the HTTP status code (int), ``html`` = the payload bytes. A
  ``Transfer-Encoding: chunked`` and ``Content-Encoding`` ``gzip``/``deflate``/``br`` payload is
  decoded when it decodes; otherwise it is kept as stored (many WARC writers store decoded payloads
  but keep the header). A record whose payload ends early (a truncated file or gzip member) is an
  error record; other corrupt WARC data, and a gzip member cut anywhere (header included), gives one
  error record for the rest of the file.

Checks applied to every page before extraction (error record instead of ``html``): empty or
whitespace-only content; content that looks binary (more than 5 % control bytes, NUL included, in the
first 8 KiB — UTF-16/32 text with a BOM, and UTF-16 without one, is exempt); more than ``max_bytes`` bytes (default 20 MiB,
:class:`~extract_trt.errors.InputTooLargeError`).

Outputs
-------
Every writer first passes a result through :func:`writable`: a result holding a string that UTF-8
cannot store (a lone surrogate, which JSON input may carry) is written as an ``OutputEncodingError``
record with U+FFFD in its id, so one such record never stops a run.

* :class:`JsonlWriter`: one JSON object per line, in the order written, UTF-8, ``ensure_ascii=False``;
  to a path (``.gz`` suffix → gzip) or stdout. Fields per :func:`result_record`. The file is written in
  place as the run progresses (every line is complete JSON, so a partial file is usable).
* :class:`FileTreeWriter`: one file per successful page, ``<safe name>.<ext>`` (``.html``/``.md``/
  ``.txt``/``.json``) with names from :func:`safe_name`, made unique per run (``-2``, ``-3``… suffixes,
  compared case-insensitively), each written atomically (temp file + rename); plus ``index.jsonl``
  (``{"id", "url", "file", "error"}`` per input, in order) and ``errors.jsonl`` (the failed inputs),
  both always created and committed by rename on :meth:`FileTreeWriter.close`. Failed pages get no
  content file.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import hashlib
import io
import json
import os
import re
import sys
import tempfile
import zlib
from collections import Counter
from collections.abc import Iterator
from typing import IO, Any, BinaryIO, Literal

from extract_trt.errors import InputFormatError, InputTooLargeError, OutputEncodingError, describe
from extract_trt.runtime.html.decode import utf16_without_bom

__all__ = [
    "FORMATS",
    "FileTreeWriter",
    "JsonlWriter",
    "check_page",
    "detect_format",
    "iter_records",
    "record_id",
    "resolve_inputs",
    "result_record",
    "safe_name",
    "writable",
    "write_atomic",
]

OutputFormatName = Literal["html", "markdown", "text", "json"]
FORMATS: tuple[str, ...] = ("html", "markdown", "text", "json")
#: JSONL field holding the content for each non-json output format.
CONTENT_FIELD = {"html": "main_html", "markdown": "markdown", "text": "text"}
#: File extension per output format in a file tree.
EXTENSION = {"html": ".html", "markdown": ".md", "text": ".txt", "json": ".json"}

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".json.gz", ".ndjson", ".ndjson.gz")
WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.zst")
HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})
DEFAULT_MAX_BYTES = 20 * 1024 * 1024  # see runtime/limits.py

_GZIP_MAGIC = b"\x1f\x8b"
_SNIFF = 512
_BINARY_SNIFF = 8192
# Binary: over 1/20 of the first 8 KiB are control bytes (NUL included); text has next to none, random
# or compressed bytes about 1/10. A few stray NULs in a page do not make it binary.
_BINARY_SHARE = 20
_GLOB_CHARS = re.compile(r"[*?\[]")
_UTF16_32_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")
# Control bytes that never occur in text: all C0 except \t \n \v \f \r and ESC.
_CONTROL = bytes(c for c in range(32) if c not in (9, 10, 11, 12, 13, 27))
_CONTROL_RE = re.compile(b"[" + re.escape(_CONTROL) + b"]")
_CONTROL_STR_RE = re.compile("[" + re.escape(_CONTROL.decode("ascii")) + "]")

Format = Literal["html", "jsonl", "warc"]


# --------------------------------------------------------------------------------------------- inputs


def resolve_inputs(inputs: list[str], *, dir_suffixes: tuple[str, ...] = HTML_SUFFIXES) -> list[str]:
    """Expand ``inputs`` into the files to read (and ``-``), in order, duplicates kept. Directories are
    searched for files ending in ``dir_suffixes`` (any case; ``run-job`` passes its shard suffixes).

    Raises:
        InputFormatError: no inputs, ``-`` given twice, a missing path, a pattern matching nothing,
            or a directory without HTML files.
    """
    if not inputs:
        raise InputFormatError("no inputs given")
    resolved: list[str] = []
    stdin_seen = False
    for item in inputs:
        if item == "-":
            if stdin_seen:
                raise InputFormatError("'-' (stdin) given more than once")
            stdin_seen = True
            resolved.append(item)
        elif os.path.isdir(item):
            resolved.extend(_expand_dir(item, dir_suffixes))
        elif os.path.exists(item):
            resolved.append(item)
        elif _GLOB_CHARS.search(item):
            matches = sorted(glob.glob(item, recursive=True))
            if not matches:
                raise InputFormatError(f"pattern {item!r} matches no files")
            for match in matches:
                if os.path.isdir(match):
                    resolved.extend(_expand_dir(match, dir_suffixes, required=False))
                else:
                    resolved.append(match)
        else:
            raise InputFormatError(f"input {item!r} does not exist")
    if not resolved:
        raise InputFormatError(f"no input files found in {inputs!r}")
    return resolved


def _expand_dir(path: str, suffixes: tuple[str, ...], *, required: bool = True) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found.extend(os.path.join(root, f) for f in files if f.lower().endswith(suffixes))
    if required and not found:
        raise InputFormatError(f"directory {path!r} contains no {'/'.join(suffixes)} files")
    return sorted(found)


def iter_records(
    inputs: list[str],
    *,
    html_field: str = "html",
    stdin: BinaryIO | None = None,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    skipped: Counter[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield one record per page of ``inputs`` (files, directories, globs, ``-``), streaming, in order.

    See the module docstring for the rules. ``stdin`` overrides ``sys.stdin.buffer`` for ``-``. What is
    skipped on purpose (WARC records that are not HTML responses) is counted into ``skipped`` by reason,
    so that records in = rows out + skipped.

    Raises:
        InputFormatError: from :func:`resolve_inputs` (on the first ``next()``), never for bad content.
    """
    for path in resolve_inputs(inputs):
        if path == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            yield from _iter_stream(stream, "-", html_field, max_bytes, skipped=skipped)
        else:
            yield from _iter_file(path, html_field, max_bytes, skipped)


def detect_format(path: str) -> Format:
    """The format :func:`iter_records` will read ``path`` as (extension first, then content).

    Raises:
        OSError: the file cannot be opened. Corrupt gzip content reads as ``"html"`` (that is how
            :func:`iter_records` would treat it: one page, reported as an error record).
    """
    by_ext = _format_from_name(path)
    if by_ext is not None:
        return by_ext
    with open(path, "rb") as f:
        try:
            head = _peek_inner(f)[0]
        except (EOFError, zlib.error, gzip.BadGzipFile):
            return "html"
        return _format_from_head(head)


def _format_from_name(name: str) -> Format | None:
    lower = name.lower()
    if lower.endswith(WARC_SUFFIXES):
        return "warc"
    if lower.endswith(JSONL_SUFFIXES):
        return "jsonl"
    if lower.endswith(HTML_SUFFIXES) or lower.endswith(tuple(s + ".gz" for s in HTML_SUFFIXES)):
        return "html"
    return None


def _format_from_head(head: bytes) -> Format:
    start = head.lstrip(b"\xef\xbb\xbf").lstrip()
    if start.startswith(b"WARC/"):
        return "warc"
    if start.startswith(b"{"):
        return "jsonl"
    return "html"


class _Prefixed(io.RawIOBase):
    """A raw stream that replays ``head`` and then continues with ``rest`` (for sniffing pipes)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._rest = rest
        self._pos = 0

    def readable(self) -> bool:
        return True

    def tell(self) -> int:  # fastwarc asks for the start offset; the stream is not seekable
        return self._pos

    def readinto(self, buffer: Any) -> int:
        if len(self._head):
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            self._pos += n
            return n
        # read1: return what is available, so data decoded before a corrupt/truncated tail is not lost
        read1 = getattr(self._rest, "read1", None)
        data = read1(len(buffer)) if read1 is not None else self._rest.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self._pos += n
        return n


def _read_head(stream: IO[bytes], n: int) -> tuple[bytes, io.BufferedReader]:
    """Read up to ``n`` bytes from ``stream`` and return them with a stream that still starts there."""
    chunks: list[bytes] = []
    got = 0
    while got < n:
        data = stream.read(n - got)
        if not data:
            break
        chunks.append(data)
        got += len(data)
    head = b"".join(chunks)
    return head, io.BufferedReader(_Prefixed(head, stream), buffer_size=1 << 16)


def _peek_inner(stream: IO[bytes]) -> tuple[bytes, IO[bytes], bool]:
    """(first bytes of the *decompressed* content, decompressed stream, was-gzipped)."""
    head, stream = _read_head(stream, _SNIFF)
    if head.startswith(_GZIP_MAGIC):
        inner: IO[bytes] = gzip.GzipFile(fileobj=stream, mode="rb")
        inner_head, inner = _read_head(inner, _SNIFF)
        return inner_head, inner, True
    return head, stream, False


def _iter_file(
    path: str, html_field: str, max_bytes: int | None, skipped: Counter[str] | None = None
) -> Iterator[dict[str, Any]]:
    try:
        fmt = _format_from_name(path)
        if fmt == "warc":
            # fastwarc reads the file natively (and detects zstd itself; gzip: see _iter_warc).
            yield from _iter_warc(path, path, max_bytes, skipped)
            return
        with open(path, "rb") as f:
            yield from _iter_stream(f, path, html_field, max_bytes, fmt, skipped)
    except OSError as exc:  # unreadable file (permissions, vanished, corrupt gzip header …)
        yield _error_record(path, path, "html", InputFormatError(f"cannot read {path!r}: {exc}"))


def _iter_stream(
    stream: IO[bytes],
    source: str,
    html_field: str,
    max_bytes: int | None,
    fmt: Format | None = None,
    skipped: Counter[str] | None = None,
) -> Iterator[dict[str, Any]]:
    try:
        head, inner, _gzipped = _peek_inner(stream)
    except (OSError, EOFError, zlib.error) as exc:
        yield _error_record(_doc_id(source), source, fmt or "html", InputFormatError(f"cannot read {_show(source)}: {exc}"))
        return
    fmt = fmt or _format_from_head(head)
    if fmt == "warc":
        yield from _iter_warc(inner, source, max_bytes, skipped)
    elif fmt == "jsonl":
        yield from _iter_jsonl(inner, source, html_field, max_bytes)
    else:
        yield _html_record(inner, source, max_bytes)


def _doc_id(source: str) -> str:
    return source


def _show(source: str) -> str:
    return "stdin" if source == "-" else repr(source)


def _html_record(stream: IO[bytes], source: str, max_bytes: int | None) -> dict[str, Any]:
    record: dict[str, Any] = {"id": _doc_id(source), "url": None, "source": source, "format": "html"}
    try:
        data = stream.read(max_bytes + 1) if max_bytes is not None else stream.read()
    except (OSError, EOFError, zlib.error) as exc:
        return _error_record(record["id"], source, "html", InputFormatError(f"cannot read {_show(source)}: {exc}"))
    return _attach_page(record, data, max_bytes)


def _attach_page(record: dict[str, Any], data: bytes | str, max_bytes: int | None) -> dict[str, Any]:
    """Put ``data`` into ``record`` as its html, or the reason it cannot be a page as its error."""
    problem = check_page(data, max_bytes)
    if problem is not None:
        record["error"] = describe(problem)
    else:
        record["html"] = data
    return record


def check_page(data: bytes | str, max_bytes: int | None = DEFAULT_MAX_BYTES) -> Exception | None:
    """Why ``data`` cannot be a page (empty, binary, too large), or ``None`` when it may be one."""
    if max_bytes is not None and len(data) > max_bytes:
        unit = "bytes" if isinstance(data, bytes) else "characters"
        return InputTooLargeError(f"page is larger than {max_bytes} {unit}")
    head = data[:_BINARY_SNIFF]
    if isinstance(head, bytes):
        if head.startswith(_UTF16_32_BOMS) or utf16_without_bom(data):
            return None if data.strip(b"\x00\xff\xfe \t\r\n") else InputFormatError("page is empty")
        if not head.strip():
            return InputFormatError("page is empty" if not data else "page is only whitespace")
        if len(_CONTROL_RE.findall(head)) * _BINARY_SHARE > len(head):
            return InputFormatError("content looks binary, not HTML (NUL or control bytes)")
        return None
    if not head.strip():
        return InputFormatError("page is empty" if not data else "page is only whitespace")
    if len(_CONTROL_STR_RE.findall(head)) * _BINARY_SHARE > len(head):
        return InputFormatError("content looks binary, not HTML (NUL or control characters)")
    return None


def _iter_jsonl(stream: IO[bytes], source: str, html_field: str, max_bytes: int | None) -> Iterator[dict[str, Any]]:
    label = "stdin" if source == "-" else source
    lineno = 0
    try:
        for lineno, line in enumerate(stream, 1):  # noqa: B007 - lineno used after the loop
            if not line.strip():
                continue
            yield _jsonl_record(line, f"{label}:{lineno}", source, html_field, max_bytes)
    except (OSError, EOFError, zlib.error) as exc:
        yield _error_record(
            f"{label}:{lineno + 1}",
            source,
            "jsonl",
            InputFormatError(f"{_show(source)} is corrupt or truncated after line {lineno}: {exc}"),
        )


def _jsonl_record(line: bytes, line_id: str, source: str, html_field: str, max_bytes: int | None) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return _error_record(line_id, source, "jsonl", InputFormatError(f"line is not valid JSON: {exc}"))
    if not isinstance(obj, dict):
        return _error_record(line_id, source, "jsonl", InputFormatError(f"line is a JSON {type(obj).__name__}, not an object"))
    rid = obj.get("id")
    if rid is None:
        rid = obj.get("track_id")
    url = obj.get("url")
    rid = line_id if rid is None else record_id(rid)
    if isinstance(rid, Exception):
        return _error_record(line_id, source, "jsonl", rid)
    record: dict[str, Any] = {
        "id": rid,
        "url": url if isinstance(url, str) else None,
        "source": source,
        "format": "jsonl",
    }
    ctype = obj.get("content_type")
    if isinstance(ctype, str):
        record["content_type"] = ctype
    html = obj.get(html_field)
    if html is None:
        record["error"] = describe(InputFormatError(f"record has no {html_field!r} field"))
    elif not isinstance(html, str):
        record["error"] = describe(
            InputFormatError(f"record field {html_field!r} is a JSON {type(html).__name__}, not a string")
        )
    else:
        return _attach_page(record, html, max_bytes)
    return record


def _iter_warc(
    stream: str | IO[bytes], source: str, max_bytes: int | None, skipped: Counter[str] | None = None
) -> Iterator[dict[str, Any]]:
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    n = 0
    cut_short = False  # the last row is a record whose payload ends early
    with contextlib.ExitStack() as stack:
        cut: _CutAware | None = None
        if isinstance(stream, str) and _is_gzip(stream):
            # Python's gzip reader, not fastwarc's: it notices a member cut anywhere (fastwarc ends the
            # file quietly when the cut is in a member's header), so the cut becomes an error row.
            cut = _CutAware(stack.enter_context(gzip.open(stream, "rb")))
            stream = io.BufferedReader(cut, buffer_size=1 << 16)
        try:
            kwargs: dict[str, Any] = {"record_types": WarcRecordType.any_type, "parse_http": True}
            if isinstance(stream, str):
                kwargs["fsspec_args"] = False
            for rec in ArchiveIterator(stream, **kwargs):
                reason = _warc_skip_reason(rec)
                if reason is not None:
                    if skipped is not None:
                        skipped[reason] += 1
                    continue
                n += 1
                row = _warc_record(rec, source, max_bytes)
                cut_short = row.get("error", "").startswith(_TRUNCATED)
                yield row
            if cut is not None and cut.error is not None and not (n and cut_short):
                raise cut.error  # the cut left no truncated record to report it
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - fastwarc reports some stream errors as Rust panics
            # (pyo3 PanicException derives from BaseException); any of them ends this file, not the run.
            yield _error_record(
                f"{source}#{n + 1}",
                source,
                "warc",
                InputFormatError(f"WARC {_show(source)} is corrupt or truncated after {n} HTML response records: {exc}"),
            )


class _CutAware(io.RawIOBase):
    """A raw stream over a decompressing reader that ends quietly where the data is cut or corrupt and
    keeps the reason in ``error``: the WARC parser first gets every complete record before the cut."""

    def __init__(self, inner: IO[bytes]) -> None:
        self._inner = inner
        self._pos = 0
        self.error: Exception | None = None

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def readinto(self, buffer: Any) -> int:
        if self.error is not None:
            return 0
        try:
            data = self._inner.read1(len(buffer))  # type: ignore[attr-defined]
        except (OSError, EOFError, zlib.error) as exc:
            self.error = exc
            return 0
        n = len(data)
        buffer[:n] = data
        self._pos += n
        return n


_TRUNCATED = "InputFormatError: WARC record is truncated"


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == _GZIP_MAGIC


def _warc_skip_reason(rec: Any) -> str | None:
    """Why a WARC record gives no row (the key it is counted under), or ``None`` for an HTML response."""
    from fastwarc.warc import WarcRecordType

    if rec.record_type != WarcRecordType.response:
        return f"WARC {str(rec.record_type).rsplit('.', 1)[-1]} records"
    if not rec.is_http:
        return "WARC responses without HTTP"
    media_type = (rec.http_content_type or "").strip().lower()
    if media_type not in HTML_MEDIA_TYPES:
        return "WARC responses not HTML"
    return None


def _warc_record(rec: Any, source: str, max_bytes: int | None) -> dict[str, Any]:
    http = rec.http_headers
    record: dict[str, Any] = {
        "id": rec.record_id or rec.headers.get("WARC-Record-ID"),
        "url": rec.headers.get("WARC-Target-URI"),
        "source": source,
        "format": "warc",
        "content_type": http.get("Content-Type"),
        "warc_date": rec.headers.get("WARC-Date"),
        "http_status": http.status_code,
    }
    limit = max_bytes if max_bytes is not None else -1
    body = rec.reader.read(limit + 1 if limit >= 0 else -1)
    if max_bytes is None or len(body) <= max_bytes:
        if len(body) < rec.content_length:  # after parse_http, content_length is the payload's length
            record["error"] = describe(
                InputFormatError(f"{_TRUNCATED[len('InputFormatError: '):]}: {len(body)} of {rec.content_length} payload bytes")
            )
            return record
        body = _decode_http_body(body, http.get("Transfer-Encoding"), http.get("Content-Encoding"), max_bytes)
    return _attach_page(record, body, max_bytes)


def _decode_http_body(
    body: bytes, transfer_encoding: str | None, content_encoding: str | None, max_bytes: int | None
) -> bytes:
    """Undo chunked transfer coding and gzip/deflate/br content coding; keep ``body`` when it fails."""
    if transfer_encoding and "chunked" in transfer_encoding.lower():
        body = _dechunk(body) or body
    for coding in reversed([c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]):
        decoded = _decompress(body, coding, max_bytes)
        if decoded is None:
            break
        body = decoded
    return body


def _dechunk(body: bytes) -> bytes | None:
    out: list[bytes] = []
    pos = 0
    try:
        while True:
            eol = body.index(b"\r\n", pos)
            size = int(body[pos:eol].split(b";", 1)[0].strip(), 16)
            if size == 0:
                return b"".join(out)
            start = eol + 2
            if start + size > len(body):
                return None
            out.append(body[start : start + size])
            pos = start + size + 2
    except ValueError:
        return None


def _decompress(body: bytes, coding: str, max_bytes: int | None) -> bytes | None:
    limit = max_bytes + 1 if max_bytes is not None else 0
    try:
        if coding in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body, limit)
        if coding == "deflate":
            try:
                return zlib.decompressobj().decompress(body, limit)
            except zlib.error:
                return zlib.decompressobj(-zlib.MAX_WBITS).decompress(body, limit)
        if coding == "br":
            import brotli  # type: ignore[import-not-found]  # optional

            return brotli.decompress(body)
        if coding == "identity":
            return body
    except Exception:  # corrupt payload or missing decoder: keep what was stored
        return None
    return None


def record_id(value: object) -> str | InputFormatError:
    """The id string for an input's ``id`` value, or the error that makes the record an error record.

    Strings are kept as given; numbers (not booleans) are rendered as canonical JSON (``7``, ``1.5``,
    ``1e+100``); anything else (objects, arrays, booleans, NaN/infinity, integers too long to print) is
    an error, so an id never becomes a Python repr such as ``{'a': 1}`` or ``True``.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return json.dumps(value, allow_nan=False)
        except ValueError as exc:  # NaN/infinity, or an integer over sys.get_int_max_str_digits() digits
            return InputFormatError(f"id is a number that has no JSON rendering: {str(exc)[:120]}")
    kind = {bool: "boolean", dict: "object", list: "array"}.get(type(value), type(value).__name__)
    return InputFormatError(f"id is a JSON {kind}, not a string or a number")


def _error_record(rid: str, source: str, fmt: str, exc: Exception) -> dict[str, Any]:
    return {"id": rid, "url": None, "source": source, "format": fmt, "error": describe(exc)}


# -------------------------------------------------------------------------------------------- outputs


_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT_FIELDS = ("id", "url", "main_html", "markdown", "text", "labeler", "error")


def writable(result: Any) -> Any:
    """``result`` when UTF-8 can store every string in it, else an error record for the same input.

    JSON input may carry lone surrogates (``"x\\ud800"`` is valid JSON, and so is the Python ``str`` it
    becomes), which no UTF-8 writer — JSONL, file names, Parquet, a terminal — can store. Such a result
    becomes an ``OutputEncodingError`` record: content dropped, each lone surrogate in ``id``/``url``
    replaced by U+FFFD (so the id is safe and still recognisable), the original error kept after the
    reason. Every writer calls this, so one such record never stops a run.
    """
    bad = [name for name in _TEXT_FIELDS if isinstance(getattr(result, name), str) and _SURROGATE.search(getattr(result, name))]
    if not bad:
        return result
    first = _SURROGATE.search(getattr(result, bad[0]))
    reason = (
        f"{', '.join(bad)} held a lone surrogate (U+{ord(first.group()):04X}) that UTF-8 cannot encode; "
        "written with U+FFFD in its place"
    )
    if result.error is not None:
        reason += f" (the page's own error: {_SURROGATE.sub(chr(0xFFFD), result.error)})"
    return type(result)(
        id=None if result.id is None else _SURROGATE.sub("\ufffd", result.id),
        url=None if result.url is None else _SURROGATE.sub("\ufffd", result.url),
        timings=dict(result.timings),
        error=describe(OutputEncodingError(reason)),
    )


def result_record(result: Any, fmt: str) -> dict[str, Any]:
    """The JSON object written for ``result`` (an :class:`~extract_trt.runtime.extractor.Result`), after
    :func:`writable`.

    ``json``: ``id, url, main_html, markdown, text, labels, n_blocks, labeler, timings, error, metadata``
    (``metadata``: :meth:`~extract_trt.runtime.html.metadata.PageMetadata.as_dict`, ``null`` when off).
    Otherwise ``id``, ``url`` (only when known), the content under ``main_html``/``markdown``/``text``
    (empty string on failure), ``error`` (``null`` on success) and ``seconds`` (total, 6 decimals).
    When the extractor was asked for reader comments (``result.comments`` set), ``comments`` follows the
    content: ``{"html", "markdown", "text"}`` for ``json``, else the comments in ``fmt``.
    """
    result = writable(result)
    comments = result.comments
    if fmt == "json":
        record = {
            "id": result.id,
            "url": result.url,
            "main_html": result.main_html,
            "markdown": result.markdown,
            "text": result.text,
            "labels": list(result.labels),
            "n_blocks": result.n_blocks,
            "labeler": result.labeler,
            "timings": {k: round(v, 6) for k, v in result.timings.items()},
            "error": result.error,
            "metadata": result.metadata.as_dict() if result.metadata is not None else None,
        }
        if comments is not None:
            record["comments"] = {"html": comments.html, "markdown": comments.markdown, "text": comments.text}
        return record
    record = {"id": result.id}
    if result.url is not None:
        record["url"] = result.url
    record[CONTENT_FIELD[fmt]] = result.content(fmt)
    if comments is not None:
        record["comments"] = comments.content(fmt)
    record["error"] = result.error
    record["seconds"] = round(result.seconds, 6)
    return record


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; use one of {', '.join(FORMATS)}")


def _dumps(obj: Any, *, indent: int | None = None) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=indent)


class JsonlWriter:
    """Write one JSON line per result, in the order given, to a path (``.gz`` → gzip) or stdout.

    ``target`` ``None`` or ``"-"`` means stdout (UTF-8 bytes, flushed after every line so pipes see
    records as they are produced). Opening a path raises :class:`OSError` when it cannot be written.
    """

    def __init__(self, target: str | os.PathLike[str] | None, fmt: str = "markdown") -> None:
        _check_format(fmt)
        self.fmt = fmt
        self.count = 0
        self._to_stdout = target is None or str(target) == "-"
        self._file: IO[bytes]
        if self._to_stdout:
            with contextlib.suppress(Exception):
                sys.stdout.flush()
            self._file = getattr(sys.stdout, "buffer", None) or _TextAsBytes(sys.stdout)
        else:
            path = os.fspath(target)  # type: ignore[arg-type]
            self._file = gzip.open(path, "wb") if path.endswith(".gz") else open(path, "wb")  # noqa: SIM115

    def write(self, result: Any) -> None:
        self._file.write(_dumps(result_record(result, self.fmt)).encode("utf-8") + b"\n")
        if self._to_stdout:
            self._file.flush()
        self.count += 1

    def close(self) -> None:
        if self._to_stdout:
            self._file.flush()
        else:
            self._file.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _TextAsBytes:
    """Adapter for a text stream without ``.buffer`` (rare: some test harnesses)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, data: bytes) -> int:
        return self._stream.write(data.decode("utf-8"))

    def flush(self) -> None:
        self._stream.flush()


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and :func:`os.replace`."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_HTML_EXT = re.compile(r"\.(x?html?)$", re.IGNORECASE)
_MAX_NAME = 80


def safe_name(rid: str | None) -> str:
    """A file-name stem for a page id (not yet unique; :class:`FileTreeWriter` adds suffixes).

    Rules: surrounding ``<>`` dropped; a URL (``scheme://…``) keeps host and path; ``urn:`` and
    ``uuid:`` prefixes are dropped; any other id (a path, a JSONL id) keeps its last ``/``/``\\``
    component; a trailing ``.html``/``.htm``/``.xhtml`` is dropped; runs of characters outside
    ``[A-Za-z0-9._-]`` become ``_``; leading/trailing ``._-`` are stripped; longer than 80 characters →
    cut to 71 + ``-`` + 8 hex digits of the id's SHA-1; empty → ``page``.
    """
    text = (rid or "").strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    if _SCHEME.match(text):
        text = _SCHEME.sub("", text).rstrip("/")
        text = text.split("#", 1)[0]
    else:
        for prefix in ("urn:", "uuid:"):
            if text.lower().startswith(prefix):
                text = text[len(prefix) :]
        text = re.split(r"[/\\]", text.rstrip("/\\"))[-1]
    text = _HTML_EXT.sub("", text)
    text = _UNSAFE.sub("_", text).strip("._-")
    if len(text) > _MAX_NAME:
        digest = hashlib.sha1((rid or "").encode("utf-8", "surrogatepass")).hexdigest()[:8]
        text = text[: _MAX_NAME - 9].rstrip("._-") + "-" + digest
    return text or "page"


class FileTreeWriter:
    """Write one file per successful page into ``out_dir`` plus ``index.jsonl`` and ``errors.jsonl``.

    The directory is created when missing (:class:`OSError` when that fails). See the module docstring
    for naming. Existing files with the same names are replaced.
    """

    def __init__(self, out_dir: str | os.PathLike[str], fmt: str = "markdown") -> None:
        _check_format(fmt)
        self.fmt = fmt
        self.out_dir = os.fspath(out_dir)
        os.makedirs(self.out_dir, exist_ok=True)
        self.count = 0
        self.errors = 0
        self._used: set[str] = set()
        self._index_path = os.path.join(self.out_dir, "index.jsonl")
        self._errors_path = os.path.join(self.out_dir, "errors.jsonl")
        self._index = tempfile.NamedTemporaryFile("wb", dir=self.out_dir, prefix=".index.", suffix=".tmp", delete=False)  # noqa: SIM115
        self._errs = tempfile.NamedTemporaryFile("wb", dir=self.out_dir, prefix=".errors.", suffix=".tmp", delete=False)  # noqa: SIM115
        self._closed = False

    def _unique(self, stem: str) -> str:
        ext = EXTENSION[self.fmt]
        name, n = stem + ext, 1
        while name.casefold() in self._used or name.casefold() in ("index.jsonl", "errors.jsonl"):
            n += 1
            name = f"{stem}-{n}{ext}"
        self._used.add(name.casefold())
        return name

    def write(self, result: Any) -> str | None:
        """Write ``result``; returns the file name written, or ``None`` for a failed page."""
        self.count += 1
        result = writable(result)
        entry: dict[str, Any] = {"id": result.id, "url": result.url, "file": None, "error": result.error}
        if result.error is None:
            name = self._unique(safe_name(result.id))
            if self.fmt == "json":
                data = _dumps(result_record(result, "json"), indent=2) + "\n"
            else:
                data = result.content(self.fmt, comments=True)  # the comments follow when extracted
            write_atomic(os.path.join(self.out_dir, name), data)
            entry["file"] = name
        else:
            self.errors += 1
            self._errs.write(_dumps({"id": result.id, "url": result.url, "error": result.error}).encode("utf-8") + b"\n")
        self._index.write(_dumps(entry).encode("utf-8") + b"\n")
        return entry["file"]

    def close(self) -> None:
        """Commit ``index.jsonl`` and ``errors.jsonl`` (by rename)."""
        if self._closed:
            return
        self._closed = True
        for tmp, final in ((self._index, self._index_path), (self._errs, self._errors_path)):
            tmp.close()
            os.replace(tmp.name, final)

    def __enter__(self) -> FileTreeWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
