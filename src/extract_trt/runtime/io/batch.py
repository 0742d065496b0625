"""Run an :class:`~extract_trt.runtime.extractor.Extractor` over a stream of records, in one process or
in a pool of worker processes, always yielding exactly one :class:`Result` per record, in input order.

Rules:

* Records are the dicts of :func:`extract_trt.runtime.io.records.iter_records`. A record that carries an
  ``error`` (it could not be read) is not extracted; its Result has that error and the record's id/url.
* ``workers <= 1``: the extractor runs in this process (``Extractor.extract_many``, labeler batches of
  ``batch_size``).
* ``workers > 1``: worker processes started with the **spawn** method (safe with threaded runtimes such
  as ONNX Runtime, and on every OS); each builds its own Extractor once from ``extractor_kwargs`` (which
  must be picklable) and reports ready. Records go out in chunks of ``batch_size`` (default
  :data:`CHUNK_PAGES`; the worker's Extractor labels a chunk in batches of its own), one chunk per idle worker, through a pipe per worker, so the parent always knows which
  records each worker holds. At most ``4 × workers`` chunks are between input and output (finished
  chunks wait for earlier ones to keep the order), so memory stays bounded on huge inputs.
* ``supervised=True`` with ``workers <= 1``: the same pool with one worker (the CLI's default), so a
  hang in native code is stopped with one worker too.
* **Memory.** Each worker caps its address space at what it holds once its Extractor is built plus
  ``page_memory`` (default :data:`~extract_trt.runtime.limits.DEFAULT_PAGE_MEMORY`, 1.5 GiB; 20 MiB of
  real pages peak at ~0.4 GB): a page that would need more fails its own allocation (an error record,
  usually ``SimplifyError: HTML parser failed``, or ``MemoryError``) instead of exhausting the machine.
* **Crashes and hangs.** A worker that dies (killed, segfault, out of memory) or holds one page longer
  than ``page_timeout`` seconds (the worker reports each page it takes up and each result as it is
  finished, so the clock runs per page, not per chunk) is killed if needed and replaced by a fresh
  one. The records of its chunk that have no result yet are retried once, each on its own; a record that kills or outlasts its worker again gets
  a ``WorkerCrashError`` or ``TimeBudgetExceededError`` result. If new workers die before they are ready
  three times in a row, the pool gives up and every remaining record gets a ``WorkerCrashError`` result.
  A worker whose Extractor cannot be built reports that error for every record it is given.
* ``page_timeout`` defaults to 3 × the extractor's ``time_budget`` (90 s with the default 30 s budget;
  no hard limit when ``time_budget`` is ``None``). The budget itself is enforced inside the worker
  (:mod:`extract_trt.runtime.limits`); the timeout catches what no in-process timer can stop (a hang in
  native code, a stuck labeler).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from extract_trt.errors import TimeBudgetExceededError, WorkerCrashError
from extract_trt.runtime.extractor import Extractor, Result
from extract_trt.runtime.limits import DEFAULT_PAGE_MEMORY, DEFAULT_TIME_BUDGET, cap_memory

__all__ = ["auto_workers", "available_cpus", "default_page_timeout", "extract_records", "parse_workers", "run"]

CHUNK_PAGES = 16  # records per message to a worker when no batch_size is given
_IN_FLIGHT_PER_WORKER = 4
_START_FAILURES = 3  # consecutive workers dying before they are ready: the pool gives up
_START_TIMEOUT = 600.0  # seconds a worker may take to build its Extractor (model loading)
_PAGE_TIMEOUT_FACTOR = 3


def available_cpus() -> int:
    """The CPUs this process may run on (affinity and cgroup cpusets respected where the OS says)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def parse_workers(spec: str) -> int | None:
    """A ``--workers`` value: a number >= 1, or ``None`` for ``auto``.

    Raises:
        ValueError: anything else.
    """
    if spec.strip().lower() == "auto":
        return None
    try:
        n = int(spec)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"--workers {spec!r}: give a number >= 1 or auto")
    return n


def auto_workers(pages: int, chunk: int = CHUNK_PAGES, cpus: int | None = None) -> int:
    """``--workers auto``: one worker process per available CPU, but no more than there are chunks of
    ``chunk`` pages among ``pages`` (count them up to ``cpus × chunk``; more do not change the answer), and
    1 (in this process, no start-up) for a single chunk."""
    cpus = available_cpus() if cpus is None else cpus
    chunks = -(-max(pages, 0) // max(1, chunk))
    return max(1, min(cpus, chunks))


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


def default_page_timeout(extractor_kwargs: dict[str, Any]) -> float | None:
    """The hard per-record limit of a worker: 3 × ``time_budget``, ``None`` when the budget is off."""
    budget = extractor_kwargs.get("time_budget", DEFAULT_TIME_BUDGET)
    return None if budget is None else _PAGE_TIMEOUT_FACTOR * float(budget)


def run(
    records: Iterable[dict[str, Any]],
    *,
    workers: int = 1,
    extractor_kwargs: dict[str, Any] | None = None,
    extractor: Extractor | None = None,
    page_timeout: float | None = None,
    supervised: bool = False,
    page_memory: int | None = DEFAULT_PAGE_MEMORY,
) -> Iterator[Result]:
    """Extract ``records`` with ``workers`` processes; yields one Result per record, in order.

    ``extractor`` (in-process only) is used as is; otherwise ``Extractor(**extractor_kwargs)``.
    ``page_timeout``: seconds per record before a worker is killed (default :func:`default_page_timeout`).
    ``supervised``: with ``workers <= 1``, still extract in one worker process, so that a page stuck in
    native code (which no in-process timer can stop) is killed after ``page_timeout`` like with several.
    ``page_memory``: bytes of address space a worker may add to what it holds once its Extractor is
    built (:func:`~extract_trt.runtime.limits.cap_memory`; ``None``: no cap).
    """
    kwargs = dict(extractor_kwargs or {})
    if workers <= 1 and not supervised:
        yield from extract_records(extractor if extractor is not None else Extractor(**kwargs), records)
        return
    timeout = page_timeout if page_timeout is not None else default_page_timeout(kwargs)
    yield from _Pool(max(1, workers), kwargs, timeout, page_memory).run(records)


# ---------------------------------------------------------------------------------- worker processes


def _worker_main(conn: Connection, kwargs: dict[str, Any], page_memory: int | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when workers stop
    extractor: Extractor | None = None
    init_error: str | None = None
    try:
        extractor = Extractor(**kwargs)
    except Exception as exc:  # reported per record; raising here would only restart the worker forever
        init_error = f"{type(exc).__name__}: {exc}"
    cap_memory(page_memory)
    conn.send(("ready", None))
    while True:
        try:
            chunk = conn.recv()
        except EOFError:
            return
        if chunk is None:
            return
        _work(conn, extractor, init_error, chunk)
        conn.send(("done", None))


def _work(conn: Connection, extractor: Extractor | None, init_error: str | None, chunk: list[dict[str, Any]]) -> None:
    """Send one ``("result", Result)`` per record of ``chunk`` as it is finished, and a ``("tick", None)``
    whenever a record is taken up, so the parent can hold each page (not the chunk) to ``page_timeout``."""
    sent = 0

    def feed() -> Iterator[dict[str, Any]]:
        for i, record in enumerate(chunk):
            if i:
                conn.send(("tick", None))
            yield record

    try:
        if extractor is None:
            raise RuntimeError(f"the worker could not build its Extractor: {init_error}")
        for result in extract_records(extractor, feed()):
            conn.send(("result", result))
            sent += 1
    except Exception as exc:  # one broken chunk must not stop the run
        reason = f"ExtractError: worker failed on this batch: {type(exc).__name__}: {exc}"
        for record in chunk[sent:]:
            conn.send(("result", _error_result(record, reason)))


def _error_result(record: dict[str, Any], reason: str) -> Result:
    rid = record.get("id")
    return Result(id=None if rid is None else str(rid), url=record.get("url"), error=record.get("error") or reason)


@dataclass(slots=True)
class _Task:
    seq: int  # chunk number in input order
    offset: int  # position of records[0] in that chunk
    records: list[dict[str, Any]]
    retry: bool = False
    done: int = 0  # results received so far (records[:done])


class _Worker:
    """One worker process, its pipe, and the task it holds."""

    def __init__(self, ctx: Any, kwargs: dict[str, Any], page_memory: int | None) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, kwargs, page_memory), daemon=True)
        self.process.start()
        child.close()
        self.ready = False
        self.task: _Task | None = None
        self.since = time.monotonic()  # when the current page (or the start) began
        self.deadline: float | None = self.since + _START_TIMEOUT

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()


class _Pool:
    def __init__(self, workers: int, kwargs: dict[str, Any], page_timeout: float | None, page_memory: int | None) -> None:
        self.kwargs = kwargs
        self.page_memory = page_memory
        self.batch_size = max(1, int(kwargs.get("batch_size") or CHUNK_PAGES))
        self.page_timeout = page_timeout
        self.window = workers * _IN_FLIGHT_PER_WORKER
        self.ctx = multiprocessing.get_context("spawn")
        self.workers = [_Worker(self.ctx, kwargs, page_memory) for _ in range(workers)]
        self.retries: deque[_Task] = deque()
        self.slots: dict[int, list[Result | None]] = {}  # chunk number → its results so far
        self.missing: dict[int, int] = {}  # chunk number → results still to come
        self.start_failures = 0
        self.broken: str | None = None  # why the pool gave up on workers

    def run(self, records: Iterable[dict[str, Any]]) -> Iterator[Result]:
        iterator = iter(records)
        exhausted = False
        next_seq = next_out = 0
        try:
            while True:
                for worker in self.workers:
                    if self.broken is None and not (worker.ready and worker.task is None):
                        continue
                    if self.retries:
                        task = self.retries.popleft()
                    elif not exhausted and next_seq < next_out + self.window:
                        chunk = list(itertools.islice(iterator, self.batch_size))
                        if not chunk:
                            exhausted = True
                            continue
                        task = _Task(next_seq, 0, chunk)
                        self.slots[next_seq] = [None] * len(chunk)
                        self.missing[next_seq] = len(chunk)
                        next_seq += 1
                    else:
                        continue
                    if self.broken is not None:
                        rest = task.records[task.done :]
                        self._complete(_Task(task.seq, task.offset + task.done, rest), [_error_result(r, self.broken) for r in rest])
                    else:
                        self._assign(worker, task)
                while self.missing.get(next_out) == 0:
                    del self.missing[next_out]
                    yield from self.slots.pop(next_out)  # type: ignore[misc]  # all filled
                    next_out += 1
                if exhausted and next_out == next_seq:
                    return
                if self.broken is None:
                    self._wait()
        finally:
            self._close()

    def _assign(self, worker: _Worker, task: _Task) -> None:
        worker.task = task
        self._restart_clock(worker)
        try:
            worker.conn.send(task.records)
        except OSError:  # the worker died before it took the task; the sentinel reports it
            pass

    def _restart_clock(self, worker: _Worker) -> None:
        """The worker has started a page: it may hold it ``page_timeout`` seconds from now."""
        worker.since = time.monotonic()
        worker.deadline = None if self.page_timeout is None else worker.since + self.page_timeout

    def _complete(self, task: _Task, results: list[Result]) -> None:
        slot = self.slots[task.seq]
        for i, result in enumerate(results):
            slot[task.offset + i] = result
        self.missing[task.seq] -= len(results)

    def _wait(self) -> None:
        deadlines = [w.deadline for w in self.workers if w.deadline is not None and (w.task or not w.ready)]
        timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        handles: list[Any] = [w.conn for w in self.workers] + [w.process.sentinel for w in self.workers]
        ready = wait(handles, timeout)
        for i, worker in enumerate(list(self.workers)):
            if self.broken is not None:
                return
            if worker.conn in ready:
                try:
                    kind, payload = worker.conn.recv()
                except (EOFError, OSError):
                    self._replace(i, None)
                    continue
                task = worker.task
                if kind == "ready":
                    worker.ready = True
                    worker.deadline = None
                    self.start_failures = 0
                elif kind == "tick":
                    self._restart_clock(worker)
                elif kind == "result" and task is not None:
                    self._complete(_Task(task.seq, task.offset + task.done, []), [payload])
                    task.done += 1
                    self._restart_clock(worker)
                elif kind == "done" and task is not None:
                    worker.task, worker.deadline = None, None
                    if task.done != len(task.records):
                        reason = f"ExtractError: worker returned {task.done} results for {len(task.records)}"
                        rest = task.records[task.done :]
                        self._complete(_Task(task.seq, task.offset + task.done, rest), [_error_result(r, reason) for r in rest])
            elif worker.process.sentinel in ready:
                self._replace(i, None)
            elif worker.deadline is not None and time.monotonic() >= worker.deadline:
                self._replace(i, self.page_timeout)

    def _replace(self, index: int, timed_out_after: float | None) -> None:
        """Kill worker ``index`` (dead, or past its deadline), start a new one, and retry or fail its task."""
        worker = self.workers[index]
        worker.kill()
        task = worker.task
        if not worker.ready:
            self.start_failures += 1
        if self.start_failures >= _START_FAILURES:
            self.broken = (
                f"WorkerCrashError: {_START_FAILURES} worker processes in a row died before they were ready "
                f"(last exit code {worker.process.exitcode})"
            )
            self.retries.extend(w.task for w in self.workers if w.task is not None)
            for w in self.workers:
                w.task = None
                w.kill()
            return
        self.workers[index] = _Worker(self.ctx, self.kwargs, self.page_memory)
        if task is None:
            return
        held = time.monotonic() - worker.since
        start = task.offset + task.done  # the results before it came back
        rest = task.records[task.done :]
        if not task.retry:
            self.retries.extend(_Task(task.seq, start + i, [r], retry=True) for i, r in enumerate(rest))
            return
        if timed_out_after is not None:
            error: Exception = TimeBudgetExceededError(
                f"the worker held this page over page_timeout={timed_out_after:g} s twice and was killed"
            )
        else:
            error = WorkerCrashError(f"the worker died (exit code {worker.process.exitcode}) on this page twice")
        failed = [_error_result(r, f"{type(error).__name__}: {error}") for r in rest]
        for result in failed:
            result.timings = {"worker": held}  # the time the killed worker spent on it (second try)
        self._complete(_Task(task.seq, start, rest), failed)

    def _close(self) -> None:
        idle = [w for w in self.workers if w.task is None and w.process.is_alive()]
        for worker in idle:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        for worker in idle:
            worker.process.join(timeout=1.0)
        for worker in self.workers:  # busy ones (the consumer stopped early) and stragglers
            worker.kill()
