"""Local mode: the shards' records, in order, through the extract CLI's worker pool
(:func:`extract_trt.runtime.io.batch.run`: spawned processes, each with its own Extractor and labeler,
bounded in-flight batches, results in input order) into the :class:`~extract_trt.job.output.ShardSink`.

The driver reads the shards and writes the output; the workers decode, simplify, label, reconstruct and
convert. Records cross to the workers one batch at a time, so memory stays bounded by the in-flight
batches and one row group per shard, whatever the shard sizes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from extract_trt.job.config import JobConfig
from extract_trt.job.output import ShardSink, record_meta, result_row, stream_table
from extract_trt.job.plan import Shard
from extract_trt.job.readers import iter_shard
from extract_trt.runtime.extractor import Extractor
from extract_trt.runtime.io import batch

__all__ = ["run_local"]

_PAGE_FIELDS = ("id", "url", "html", "content_type", "error")


def run_local(
    config: JobConfig,
    shards: list[Shard],
    sink: ShardSink,
    on_rows: Callable[[int, int], None] | None = None,
) -> None:
    """Extract every record of ``shards`` with ``config.workers`` processes into ``sink``.

    Raises:
        LabelerError: the labeler cannot be built (before anything is written).
    """
    metas: deque[dict[str, Any]] = deque()  # one per record handed to the pool, popped per result

    def records() -> Iterator[dict[str, Any]]:
        # The pool may pull records from another thread than the one reading results: deque is thread-safe.
        for k, shard in enumerate(shards):
            for record in iter_shard(shard.input, html_field=config.html_field, max_bytes=config.max_bytes):
                metas.append(record_meta(record, k))
                yield {key: record[key] for key in _PAGE_FIELDS if key in record}

    # Build the labeler here first: a labeler that cannot load must stop the job before it writes shards
    # of error rows. One process: this is the labeler it uses; a pool: each worker builds its own.
    kwargs = config.extractor_kwargs()
    kwargs["labeler"].build()
    # With a time budget, one worker is a supervised process too (a page stuck in native code is killed).
    supervised = kwargs.get("time_budget") is not None
    extractor = Extractor(**kwargs) if config.workers == 1 and not supervised else None
    rows: list[dict[str, Any]] = []
    errors = 0
    results = batch.run(
        records(), workers=config.workers, extractor_kwargs=config.extractor_kwargs(), extractor=extractor, supervised=supervised
    )
    try:
        for result in results:
            rows.append(result_row(metas.popleft(), result))
            errors += result.error is not None
            if len(rows) >= config.batch_size:
                sink.write(stream_table(rows))
                if on_rows is not None:
                    on_rows(len(rows), errors)
                rows, errors = [], 0
        sink.write(stream_table(rows))
        if on_rows is not None and rows:
            on_rows(len(rows), errors)
    finally:
        results.close()  # stops the pool when the consumer gave up early
