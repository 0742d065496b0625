"""Batch integrity: N records in → N results out, same ids, same order, when worker processes die or hang.

The workers are real spawned processes; a labeler defined here kills or stalls its own process when it
sees a marker in a page, which is exactly what a segfaulting or stuck model does to a worker.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import psutil

from extract_trt.runtime.io.batch import run
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

PARAGRAPH = "<p>This page has a paragraph with enough words in it to be the main content of the page.</p>"


class ChaosLabeler:
    """Heuristic labels; ``KILL-WORKER`` in a page: SIGKILL its process; ``HANG-WORKER``: sleep for an
    hour; ``ONCE-<name>``: SIGKILL the first time only (a marker file in ``marker_dir`` remembers);
    ``SLOW``: 0.3 s per batch."""

    name = "chaos"

    def __init__(self, marker_dir: str = "") -> None:
        self.marker_dir = marker_dir

    def label(self, pages):
        for page in pages:
            html = page.simplified_html
            if "KILL-WORKER" in html:
                os.kill(os.getpid(), signal.SIGKILL)
            if "HANG-WORKER" in html:
                time.sleep(3600)
            once = re.search(r"ONCE-(\w+)", html)
            if once:
                marker = Path(self.marker_dir, once.group(1))
                if not marker.exists():
                    marker.touch()
                    os.kill(os.getpid(), signal.SIGKILL)
            if "SLOW" in html:
                time.sleep(0.3)
        return HeuristicLabeler().label(pages)


class DiesWhileLoading(ChaosLabeler):
    """Kills the worker while the worker unpickles its Extractor arguments (a model that crashes on load)."""

    def __setstate__(self, state):
        os._exit(3)


def page(i: int, marker: str = "") -> dict:
    html = f"<html><body><h1>Page {i} {marker}</h1>{PARAGRAPH}</body></html>"
    return {"id": f"p{i}", "url": f"https://example.com/{i}", "html": html}


def test_dying_workers_lose_no_record(tmp_path: Path) -> None:
    records = [page(i) for i in range(10)]
    records[3] = page(3, "KILL-WORKER")  # kills its worker on the first try and on the retry
    records[6] = page(6, "ONCE-six")  # kills its worker once; the retry succeeds
    records[8] = {"id": "p8", "url": None, "source": "x", "format": "jsonl", "error": "InputFormatError: bad line"}
    kwargs = {"labeler": ChaosLabeler(str(tmp_path)), "batch_size": 2, "output": "text"}
    results = list(run(records, workers=2, extractor_kwargs=kwargs))
    assert [r.id for r in results] == [r["id"] for r in records]
    errors = {r.id: r.error for r in results if r.error}
    assert set(errors) == {"p3", "p8"}
    assert errors["p3"].startswith("WorkerCrashError: the worker died (exit code -9) on this page twice")
    assert errors["p8"] == "InputFormatError: bad line"
    assert (tmp_path / "six").exists()
    assert all("enough words" in r.text for r in results if r.error is None)


def test_a_hanging_page_is_killed_and_reported(tmp_path: Path) -> None:
    records = [page(0), page(1, "HANG-WORKER"), page(2), page(3)]
    kwargs = {"labeler": ChaosLabeler(str(tmp_path)), "batch_size": 2, "output": "text"}
    start = time.monotonic()
    results = list(run(records, workers=2, extractor_kwargs=kwargs, page_timeout=1.0))
    assert [r.id for r in results] == ["p0", "p1", "p2", "p3"]
    assert results[1].error.startswith("TimeBudgetExceededError: the worker held this page over page_timeout=1 s")
    assert [r.error for r in results if r.id != "p1"] == [None, None, None]
    assert time.monotonic() - start < 60


def test_worker_killed_from_outside_mid_batch(tmp_path: Path) -> None:
    records = [page(i, "SLOW") for i in range(12)]
    kwargs = {"labeler": ChaosLabeler(str(tmp_path)), "batch_size": 2, "output": "text"}
    results = []
    killed = None
    for result in run(records, workers=2, extractor_kwargs=kwargs):
        results.append(result)
        if killed is None:
            workers = [p for p in psutil.Process().children() if "spawn_main" in " ".join(p.cmdline())]
            killed = workers[0].pid
            workers[0].kill()
    assert killed is not None
    assert [r.id for r in results] == [r["id"] for r in records]
    assert all(r.error is None and "enough words" in r.text for r in results)


def test_workers_that_cannot_start_fail_every_record_but_the_run_ends() -> None:
    records = [page(i) for i in range(5)]
    results = list(run(records, workers=2, extractor_kwargs={"labeler": DiesWhileLoading(), "batch_size": 2}))
    assert [r.id for r in results] == [r["id"] for r in records]
    expected = "WorkerCrashError: 3 worker processes in a row died before they were ready"
    assert all(r.error.startswith(expected) for r in results)
