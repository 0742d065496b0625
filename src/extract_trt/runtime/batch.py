"""Run an :class:`~extract_trt.runtime.extractor.Extractor` over a stream of records, in one process or
in a pool of worker processes, always yielding exactly one :class:`Result` per record, in input order.

Rules:

* Records are the dicts of :func:`extract_trt.runtime.io.iter_records`. A record that carries an
  ``error`` (it could not be read) is not extracted; its Result has that error and the record's id/url.
* ``workers <= 1``: the extractor runs in this process (``Extractor.extract_many``, labeler batches of
  ``batch_size``).
* ``workers > 1``: a ``multiprocessing`` pool with the **spawn** start method (safe with threaded
  runtimes such as ONNX Runtime, and on every OS); each worker builds its own Extractor once, in the
  pool initializer, from ``extractor_kwargs`` (which must be picklable). Records are sent in chunks of
  ``batch_size`` (one chunk = one labeler batch) through ``Pool.imap`` (chunksize 1), which keeps the
  input order. At most ``4 × workers`` chunks are in flight, so memory stays bounded on huge inputs
  (plain ``imap`` would read the whole input ahead). If a worker raises on a chunk, every record of
  that chunk gets an ``ExtractError`` result; the run continues.
"""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from extract_trt.runtime.extractor import Extractor, Result

__all__ = ["extract_records", "run"]

_IN_FLIGHT_PER_WORKER = 4


def extract_records(extractor: Extractor, records: Iterable[dict[str, Any]]) -> Iterator[Result]:
    """One Result per record, in order, in this process; read errors are passed through."""
    pending: deque[dict[str, Any]] = deque()

    def feed() -> Iterator[dict[str, Any]]:
        for record in records:
            pending.append(record)
            if "error" in record:  # still goes through so that order is kept; fails fast on html=None
                yield {"id": record.get("id"), "url": record.get("url"), "html": None}
            else:
                yield record

    for result in extractor.extract_many(feed()):
        record = pending.popleft()
        if "error" in record:
            result.error = record["error"]
            result.timings = {}
        yield result


def run(
    records: Iterable[dict[str, Any]],
    *,
    workers: int = 1,
    extractor_kwargs: dict[str, Any] | None = None,
    extractor: Extractor | None = None,
) -> Iterator[Result]:
    """Extract ``records`` with ``workers`` processes; yields one Result per record, in order.

    ``extractor`` (single process only) is used as is; otherwise ``Extractor(**extractor_kwargs)``.
    """
    kwargs = dict(extractor_kwargs or {})
    if workers <= 1:
        yield from extract_records(extractor if extractor is not None else Extractor(**kwargs), records)
        return
    yield from _run_pool(records, workers, kwargs)


# ---------------------------------------------------------------------------------- worker processes

_worker_extractor: Extractor | None = None
_worker_init_error: str | None = None


def _init_worker(kwargs: dict[str, Any]) -> None:
    # An exception here would make the pool respawn workers forever; keep it and report it per record.
    global _worker_extractor, _worker_init_error
    try:
        _worker_extractor = Extractor(**kwargs)
    except Exception as exc:
        _worker_init_error = f"{type(exc).__name__}: {exc}"


def _work(chunk: list[dict[str, Any]]) -> list[Result]:
    try:
        if _worker_extractor is None:
            raise RuntimeError(f"the worker could not build its Extractor: {_worker_init_error}")
        return list(extract_records(_worker_extractor, chunk))
    except Exception as exc:  # one broken chunk must not stop the run
        reason = f"ExtractError: worker failed on this batch: {type(exc).__name__}: {exc}"
        return [
            Result(id=None if r.get("id") is None else str(r.get("id")), url=r.get("url"), error=r.get("error") or reason)
            for r in chunk
        ]


def _run_pool(records: Iterable[dict[str, Any]], workers: int, kwargs: dict[str, Any]) -> Iterator[Result]:
    batch_size = max(1, int(kwargs.get("batch_size", 16)))
    slots = threading.BoundedSemaphore(workers * _IN_FLIGHT_PER_WORKER)
    stop = threading.Event()
    iterator = iter(records)

    def chunks() -> Iterator[list[dict[str, Any]]]:
        # Runs in the pool's task-feeding thread: block until a slot frees up, but give up on stop.
        while True:
            while not slots.acquire(timeout=0.1):
                if stop.is_set():
                    return
            chunk = list(itertools.islice(iterator, batch_size))
            if not chunk or stop.is_set():
                return
            yield chunk

    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(workers, initializer=_init_worker, initargs=(kwargs,))
    try:
        for results in pool.imap(_work, chunks(), chunksize=1):
            slots.release()
            yield from results
        pool.close()
    finally:
        stop.set()
        pool.terminate()
        pool.join()
