"""What the reader-comment detector costs: its time per page, and the whole extractor with and without
``comments=True`` (HTML string in, Markdown out, one core).

    python bench/comments.py [--set wcxb-dev] [--pages 200]

The detector (:func:`extract_trt.runtime.html.comments.comment_mask`) runs on every page whatever the setting;
``comments=True`` adds a second reconstruction and conversion on the pages that have comments.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

import numpy as np

from extract_trt import Extractor
from extract_trt.runtime.html.comments import comment_mask
from extract_trt.runtime.html.simplify import simplify

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _pages(name: str, limit: int) -> list[str]:
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line)["html"] for _, line in zip(range(limit), f)]


def _extract_seconds(extractor: Extractor, pages: list[str]) -> float:
    extractor.extract(pages[0])  # warm-up: model session, lazy imports
    t0 = time.process_time()
    for html in pages:
        extractor.extract(html)
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="wcxb-dev")
    ap.add_argument("--pages", type=int, default=200)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    pages = _pages(args.set, args.pages)
    plain = Extractor(output="markdown")
    profile = plain.labeler.simplify_profile
    detector = 0.0
    with_sections = 0
    for html in pages:
        blocks = simplify(html, profile=profile)
        main = np.ones(len(blocks), dtype=bool)  # worst case: every block main (no early exit on the content rule)
        t0 = time.process_time()
        in_section, _ = comment_mask(blocks, main)
        detector += time.process_time() - t0
        with_sections += bool(in_section.any())
    without = _extract_seconds(plain, pages)
    including = _extract_seconds(Extractor(output="markdown", comments=True), pages)
    n = len(pages)
    print(f"{n} pages of {args.set}; {with_sections} with a comment section")
    print(f"detector: {detector / n * 1e3:.3f} ms/page ({detector / without:.1%} of the extractor's CPU time)")
    print(f"Extractor(output='markdown'):                {n / without:.1f} pages/s/core")
    print(f"Extractor(output='markdown', comments=True): {n / including:.1f} pages/s/core")


if __name__ == "__main__":
    main()
