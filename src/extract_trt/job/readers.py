"""Records of one input shard, in order, each exactly once: WARC and JSONL through
:func:`extract_trt.runtime.io.records.iter_records` (same records, same error records), Parquet here.

A record is the dict :mod:`extract_trt.runtime.io.records` describes (``id``, ``url``, ``html`` or ``error``,
and for WARC ``content_type``, ``warc_date``, ``http_status``) plus ``position``: its 0-based index in
the shard, which the output keeps so that every record can be accounted for.

Parquet shards: the ``html_field`` column (string or binary), ``id`` (else ``track_id``, else
``<path>:<row>``, 1-based), and ``url`` / ``content_type`` when present. A null or non-text page, or a
page failing :func:`~extract_trt.runtime.io.records.check_page`, gives an error record; a file without the
column, or one that cannot be read (corrupt, truncated), gives one error record for the rest of the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from extract_trt.errors import InputFormatError
from extract_trt.runtime.io.records import JSONL_SUFFIXES, WARC_SUFFIXES, check_page, detect_format, iter_records, record_id

__all__ = ["PARQUET_SUFFIXES", "SHARD_SUFFIXES", "ShardFormat", "iter_shard", "shard_format"]

ShardFormat = Literal["warc", "jsonl", "parquet"]
PARQUET_SUFFIXES = (".parquet", ".pq")
SHARD_SUFFIXES = WARC_SUFFIXES + JSONL_SUFFIXES + PARQUET_SUFFIXES
_PARQUET_MAGIC = b"PAR1"
_PARQUET_BATCH = 256


def shard_format(path: str) -> ShardFormat:
    """How :func:`iter_shard` reads ``path``: by extension, else by content.

    Raises:
        InputFormatError: the file is none of WARC, JSONL, Parquet.
        OSError: it cannot be opened.
    """
    if path.lower().endswith(PARQUET_SUFFIXES):
        return "parquet"
    if not path.lower().endswith(SHARD_SUFFIXES):
        with open(path, "rb") as f:
            if f.read(len(_PARQUET_MAGIC)) == _PARQUET_MAGIC:
                return "parquet"
    fmt = detect_format(path)
    if fmt == "html":
        raise InputFormatError(f"{path!r} is not a WARC, JSONL or Parquet shard")
    return fmt


def iter_shard(path: str, *, html_field: str = "html", max_bytes: int | None = None) -> Iterator[dict[str, Any]]:
    """Yield the records of the shard at ``path`` with their ``position``; never raises for bad content."""
    records: Iterator[dict[str, Any]]
    try:
        fmt = shard_format(path)
    except (OSError, InputFormatError) as exc:
        records = iter([_error(f"{path}#1", path, "unknown", exc)])
    else:
        if fmt == "parquet":
            records = _iter_parquet(path, html_field, max_bytes)
        else:
            records = iter_records([path], html_field=html_field, max_bytes=max_bytes)
    for position, record in enumerate(records):
        record["position"] = position
        yield record


def _iter_parquet(path: str, html_field: str, max_bytes: int | None) -> Iterator[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    row = 0
    try:
        parquet = pq.ParquetFile(path)
        names = set(parquet.schema_arrow.names)
        if html_field not in names:
            raise InputFormatError(f"Parquet file {path!r} has no {html_field!r} column")
        columns = [c for c in (html_field, "id", "track_id", "url", "content_type") if c in names]
        for batch in parquet.iter_batches(batch_size=_PARQUET_BATCH, columns=columns):
            data = batch.to_pydict()
            for i in range(batch.num_rows):
                row += 1
                yield _parquet_record(path, row, {c: data[c][i] for c in columns}, html_field, max_bytes)
    except (OSError, pa.ArrowException, InputFormatError) as exc:
        if not isinstance(exc, InputFormatError):
            exc = InputFormatError(f"Parquet file {path!r} is corrupt or truncated after {row} rows: {exc}")
        yield _error(f"{path}:{row + 1}", path, "parquet", exc)


def _parquet_record(path: str, row: int, values: dict[str, Any], html_field: str, max_bytes: int | None) -> dict[str, Any]:
    rid = values.get("id")
    if rid is None:
        rid = values.get("track_id")
    url, ctype = values.get("url"), values.get("content_type")
    rid = f"{path}:{row}" if rid is None else record_id(rid)
    if isinstance(rid, Exception):
        return _error(f"{path}:{row}", path, "parquet", rid)
    record: dict[str, Any] = {
        "id": rid,
        "url": url if isinstance(url, str) else None,
        "source": path,
        "format": "parquet",
    }
    if isinstance(ctype, str):
        record["content_type"] = ctype
    html = values.get(html_field)
    if not isinstance(html, (str, bytes)):
        problem: Exception | None = InputFormatError(
            f"column {html_field!r} is {'null' if html is None else type(html).__name__}, not text"
        )
    else:
        problem = check_page(html, max_bytes)
    if problem is None:
        record["html"] = html
    else:
        record["error"] = f"{type(problem).__name__}: {problem}"
    return record


def _error(rid: str, path: str, fmt: str, exc: Exception) -> dict[str, Any]:
    return {"id": rid, "url": None, "source": path, "format": fmt, "error": f"{type(exc).__name__}: {exc}"}
