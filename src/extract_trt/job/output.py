"""Output shards: the row schema, result rows, and :class:`ShardSink`, which turns the ordered stream of
rows (both modes produce one) into one Parquet file per input shard, each written to a temp file in the
output directory and renamed into place when complete.

Columns of an output shard (:data:`SHARD_SCHEMA`), one row per input record, in input order:

=============== ========= =====================================================================
position        int64     0-based index of the record in its input shard
id              string    WARC-Record-ID / JSONL ``id`` / Parquet ``id`` (see the readers)
url             string    WARC-Target-URI / ``url`` field
warc_date       string    WARC-Date (WARC input)
http_status     int32     HTTP status code (WARC input)
content_type    string    HTTP Content-Type (WARC), ``content_type`` field otherwise
main_html       string    main-content HTML ("" on error)
markdown, text  string    conversions asked for ("" otherwise and on error)
comments        struct    reader comments (``--comments``): html, markdown, text as above; null otherwise
n_blocks        int32     blocks of the simplified page
n_main          int32     blocks labelled main
labeler         string    labeler that produced the labels
error           string    null on success, else ``"<ErrorType>: reason"``
seconds         float64   sum of the stage timings
timings         struct    seconds per stage: decode, simplify, label, reconstruct, convert
source          string    the input shard's path
title, author   string    page metadata (:class:`~extract_trt.runtime.html.metadata.PageMetadata`; all null
                          when the job runs without metadata or the page failed)
date            date32    publication date (its day), ``date_raw`` the ISO 8601 value as found
                          (with time and offset when the page gives them)
date_modified   date32    last-modified date, where the page states one
sitename, description, language, language_detected, canonical_url, image, license
                string    the other metadata fields
categories,     list      of string
tags
=============== ========= =====================================================================
"""

from __future__ import annotations

import contextlib
import datetime
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from extract_trt.job.config import JobError
from extract_trt.job.manifest import make_readable
from extract_trt.job.plan import Shard
from extract_trt.runtime.extractor import Result
from extract_trt.runtime.io.records import result_record

__all__ = [
    "SHARD_SCHEMA", "STREAM_SCHEMA", "ShardSink", "ShardStats", "metadata_columns", "record_meta", "result_row", "stream_table",
]

TIMING_KEYS = ("decode", "simplify", "metadata", "label", "reconstruct", "convert")
METADATA_STRINGS = ("sitename", "description", "language", "language_detected", "canonical_url", "image", "license")

SHARD_SCHEMA = pa.schema(
    [
        pa.field("position", pa.int64(), nullable=False),
        pa.field("id", pa.string()),
        pa.field("url", pa.string()),
        pa.field("warc_date", pa.string()),
        pa.field("http_status", pa.int32()),
        pa.field("content_type", pa.string()),
        pa.field("main_html", pa.string()),
        pa.field("markdown", pa.string()),
        pa.field("text", pa.string()),
        pa.field("comments", pa.struct([pa.field(k, pa.string()) for k in ("html", "markdown", "text")])),
        pa.field("n_blocks", pa.int32()),
        pa.field("n_main", pa.int32()),
        pa.field("labeler", pa.string()),
        pa.field("error", pa.string()),
        pa.field("seconds", pa.float64()),
        pa.field("timings", pa.struct([pa.field(k, pa.float64()) for k in TIMING_KEYS])),
        pa.field("source", pa.string()),
        pa.field("title", pa.string()),
        pa.field("author", pa.string()),
        pa.field("date", pa.date32()),
        pa.field("date_raw", pa.string()),
        pa.field("date_modified", pa.date32()),
        *(pa.field(name, pa.string()) for name in METADATA_STRINGS),
        pa.field("categories", pa.list_(pa.string())),
        pa.field("tags", pa.list_(pa.string())),
    ]
)
#: What the modes stream to the sink: the shard columns plus ``shard``, the index in the pending list.
STREAM_SCHEMA = pa.schema([pa.field("shard", pa.int32(), nullable=False), *SHARD_SCHEMA])


def record_meta(record: dict[str, Any], shard: int) -> dict[str, Any]:
    """The columns a row takes from its input record rather than from the extraction."""
    return {
        "shard": shard,
        "position": record["position"],
        "source": record.get("source"),
        "warc_date": record.get("warc_date"),
        "http_status": record.get("http_status"),
        "content_type": record.get("content_type"),
    }


def result_row(meta: dict[str, Any], result: Result) -> dict[str, Any]:
    """One stream row: ``meta`` (:func:`record_meta`) and what ``result`` holds."""
    row = {**meta, **result_record(result, "json")}
    labels, timings = row.pop("labels"), row.pop("timings")
    row["n_main"] = labels.count("main")
    row["seconds"] = result.seconds
    row["timings"] = {k: timings.get(k) for k in TIMING_KEYS}
    row.update(metadata_columns(row.pop("metadata")))
    return row


def metadata_columns(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """The metadata columns of a row from :meth:`PageMetadata.as_dict` (``None``: all null)."""
    if metadata is None:
        return {}
    columns = {name: metadata[name] for name in ("title", "author", *METADATA_STRINGS, "categories", "tags")}
    columns["date_raw"] = metadata["date"]
    columns["date"] = _day(metadata["date"])
    columns["date_modified"] = _day(metadata["date_modified"])
    return columns


def _day(iso: str | None) -> datetime.date | None:
    return datetime.date.fromisoformat(iso[:10]) if iso else None


def stream_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=STREAM_SCHEMA)


@dataclass
class ShardStats:
    records: int
    errors: int
    output_bytes: int
    seconds: float  # wall time from the previous shard's completion (or the start) to this one's


class ShardSink:
    """Write the stream of rows into one Parquet file per shard of ``shards`` (the pending list).

    :meth:`write` takes :data:`STREAM_SCHEMA` tables whose ``shard`` values never decrease and whose
    positions continue each shard's previous ones without gap or repeat (else :class:`JobError`: a record
    would be lost or duplicated). A shard is committed (``on_done``) as soon as a later shard's row
    arrives; shards without rows get an empty file. :meth:`close` commits the rest; :meth:`abort` deletes
    the temp file of the shard in progress.
    """

    def __init__(
        self,
        out_dir: str,
        shards: list[Shard],
        on_done: Callable[[Shard, ShardStats], None],
        row_group_size: int = 256,
    ) -> None:
        self.out_dir = out_dir
        self.shards = shards
        self.on_done = on_done
        self.row_group_size = row_group_size
        self._next = 0  # index in shards of the shard being written
        self._file: _ShardFile | None = None
        self._since = time.monotonic()

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        keys = table.column("shard").to_numpy()
        starts = [0, *(np.flatnonzero(np.diff(keys)) + 1).tolist()]
        for start, end in zip(starts, [*starts[1:], len(keys)]):
            shard = int(keys[start])
            if shard < self._next or shard >= len(self.shards):
                raise JobError(f"rows of shard #{shard} arrived out of order (writing #{self._next})")
            while self._next < shard:
                self._commit()
            self._current().append(table.slice(start, end - start).drop_columns(["shard"]))

    def close(self) -> None:
        while self._next < len(self.shards):
            self._commit()

    def abort(self) -> None:
        if self._file is not None:
            self._file.discard()
            self._file = None

    def _current(self) -> _ShardFile:
        if self._file is None:
            self._file = _ShardFile(self.out_dir, self.shards[self._next], self.row_group_size)
        return self._file

    def _commit(self) -> None:
        shard_file = self._current()
        self._file = None
        records, errors, size = shard_file.commit()
        now = time.monotonic()
        stats = ShardStats(records, errors, size, now - self._since)
        self._since = now
        self._next += 1
        self.on_done(shard_file.shard, stats)


class _ShardFile:
    """One output shard being written: temp file, row-group buffer, counts, position check."""

    def __init__(self, out_dir: str, shard: Shard, row_group_size: int) -> None:
        self.shard = shard
        self.path = os.path.join(out_dir, shard.output)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{shard.output}.", suffix=".tmp", dir=out_dir)
        os.close(fd)
        self.writer = pq.ParquetWriter(self.tmp, SHARD_SCHEMA, compression="zstd")
        self.row_group_size = row_group_size
        self.buffer: list[pa.Table] = []
        self.buffered = 0
        self.records = 0
        self.errors = 0

    def append(self, table: pa.Table) -> None:
        positions = table.column("position").to_numpy()
        if not np.array_equal(positions, np.arange(self.records, self.records + len(positions))):
            raise JobError(
                f"shard {self.shard.input}: record positions {positions[:3].tolist()}… do not continue at "
                f"{self.records} (a record would be lost or duplicated)"
            )
        self.records += table.num_rows
        self.errors += table.num_rows - table.column("error").null_count
        self.buffer.append(table)
        self.buffered += table.num_rows
        if self.buffered >= self.row_group_size:
            self._flush()

    def _flush(self) -> None:
        if self.buffer:
            self.writer.write_table(pa.concat_tables(self.buffer), row_group_size=self.row_group_size)
            self.buffer, self.buffered = [], 0

    def commit(self) -> tuple[int, int, int]:
        """Write what is buffered, close, make durable, rename into place; (records, errors, bytes)."""
        try:
            self._flush()
            self.writer.close()
            with open(self.tmp, "rb+") as f:
                os.fsync(f.fileno())
            make_readable(self.tmp)
            os.replace(self.tmp, self.path)
        except BaseException:
            self.discard()
            raise
        return self.records, self.errors, os.path.getsize(self.path)

    def discard(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.tmp)
