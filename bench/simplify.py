"""Simplifier speed: the reference (pulpie 0.0.2 = MinerU-HTML v1.1, lxml + Modest) and extract-trt's
Lexbor simplifier side by side on the same pages, one process on one core.

    python bench/simplify.py [--pages 200] [--runs 5] [--set wcxb-dev]

Each run times, one after the other on the same pages: reference simplify; ours simplify (blocks +
mapping tree); ours simplify + map_html string (what the reference returns). Both the process CPU time
(robust to other processes on a shared machine) and the wall time are taken; the ratio to the reference
is computed within each run (interleaved, so load drifts hit both alike), and the median over runs of
each figure is printed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import oracle  # noqa: E402

from extract_trt.runtime import describe  # noqa: E402
from extract_trt.runtime.html.simplify import simplify  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(name: str, n: int) -> list[str]:
    pages = []
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            pages.append(json.loads(line)["html"])
            if len(pages) >= n:
                break
    return pages


def timed(fn, pages: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) for ``fn`` over all ``pages``."""
    c0, w0 = time.process_time(), time.perf_counter()
    for html in pages:
        fn(html)
    return time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="wcxb-dev")
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    pages = load(args.set, args.pages)
    mb = sum(len(p.encode()) for p in pages) / len(pages) / 1e6
    print(f"{len(pages)} pages of {args.set} (mean {mb:.2f} MB), median of {args.runs} runs, one core")
    print(f"extract-trt: {describe()}")
    ref = oracle.load()
    contenders = {}
    if ref is not None:
        contenders["reference simplify (pulpie 0.0.2)"] = ref.simplify
    else:
        print("reference not installed: pip install --no-deps pulpie==0.0.2 'selectolax<1.0' lxml beautifulsoup4")
    contenders["extract-trt simplify"] = simplify
    contenders["extract-trt simplify + map_html string"] = lambda h: simplify(h).map_html
    for fn in contenders.values():
        fn(pages[0])  # warm up
    runs = [{name: timed(fn, pages) for name, fn in contenders.items()} for _ in range(args.runs)]
    base = next(iter(contenders)) if ref is not None else None
    print(f"{'simplifier':42s} {'pages/s cpu':>11s} {'× ref':>6s} {'pages/s wall':>12s} {'× ref':>6s}")
    for name in contenders:
        cells = []
        for clock in (0, 1):
            rate = statistics.median(len(pages) / run[name][clock] for run in runs)
            ratio = statistics.median(run[base][clock] / run[name][clock] for run in runs) if base else None
            cells.append(f"{rate:{11 if clock == 0 else 12}.1f} " + (f"{ratio:6.2f}" if ratio else "     -"))
        print(f"{name:42s} {cells[0]} {cells[1]}")


if __name__ == "__main__":
    main()
