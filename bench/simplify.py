"""Simplifier speed: the reference (pulpie 0.0.2 = MinerU-HTML v1.1, lxml + Modest) and extract-trt's
Lexbor simplifier side by side on the same pages, one process on one core, median of several runs.

    python bench/simplify.py [--pages 200] [--runs 3] [--set wcxb-dev]

Prints pages/s for: reference simplify; ours simplify (blocks + mapping tree); ours simplify + map_html
string (what the reference returns); and the ratio to the reference.
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

from extract_trt.runtime.simplify import simplify  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(name: str, n: int) -> list[str]:
    pages = []
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            pages.append(json.loads(line)["html"])
            if len(pages) >= n:
                break
    return pages


def rate(fn, pages: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for html in pages:
            fn(html)
        times.append(time.perf_counter() - t0)
    return len(pages) / statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="wcxb-dev")
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    pages = load(args.set, args.pages)
    mb = sum(len(p.encode()) for p in pages) / len(pages) / 1e6
    print(f"{len(pages)} pages of {args.set} (mean {mb:.2f} MB), median of {args.runs} runs, one core")
    rows = []
    ref = oracle.load()
    if ref is not None:
        rows.append(("reference simplify (pulpie 0.0.2)", rate(ref.simplify, pages, args.runs)))
    else:
        print("reference not installed: pip install --no-deps pulpie==0.0.2 'selectolax<1.0' lxml beautifulsoup4")
    rows.append(("extract-trt simplify", rate(simplify, pages, args.runs)))
    rows.append(("extract-trt simplify + map_html string", rate(lambda h: simplify(h).map_html, pages, args.runs)))
    base = rows[0][1] if ref is not None else None
    print(f"{'simplifier':42s} {'pages/s':>9s} {'× ref':>7s}")
    for name, value in rows:
        ratio = f"{value / base:7.2f}" if base else "      -"
        print(f"{name:42s} {value:9.1f} {ratio}")


if __name__ == "__main__":
    main()
