"""Full pipeline speed on one core: HTML string in, Markdown out, with the built-in model, per stage.

    python bench/pipeline.py [--pages 200] [--runs 3] [--set wcxb-dev] [--labeler default]

Each run times, on the same pages and interleaved (so machine load hits all alike):

* extract-trt ``Extractor(output=("markdown",))`` end to end (pages/s) and its per-stage ``Result.timings``
  (decode, simplify, label, reconstruct, convert; ms/page);
* the reference simplifier (pulpie 0.0.2 = MinerU-HTML v1.1), when installed, against our simplify stage;
* the html2text conversion extract-trt used before (``tests/html2text_oracle.py``) on the same main HTML,
  against our convert stage.

Prints the median over runs of each figure and the ratios. Every figure is read on the process CPU clock
(one core, single-threaded ONNX Runtime: CPU time is the work done; other load on a shared machine
inflates wall time, unevenly between runs); ``--clock wall`` reads the wall clock instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import oracle  # noqa: E402
from html2text_oracle import html2text_markdown  # noqa: E402

from simplify import load  # noqa: E402  (bench/simplify.py: the same pages)

import extract_trt.runtime.extractor as extractor_module  # noqa: E402
from extract_trt import Extractor  # noqa: E402
from extract_trt.runtime import describe  # noqa: E402

STAGES = ("decode", "simplify", "label", "reconstruct", "convert")
_clock = time.process_time


def one_run(extractor: Extractor, pages: list[str], reference) -> dict[str, float]:
    """Seconds per page for each measured thing in one pass over ``pages``."""
    n = len(pages)
    out: dict[str, float] = dict.fromkeys(STAGES, 0.0)
    t0 = _clock()
    results = list(extractor.extract_many(pages))
    out["pipeline"] = (_clock() - t0) / n
    for r in results:
        for stage in STAGES:
            out[stage] += r.timings.get(stage, 0.0) / n
    t0 = _clock()
    for r in results:
        html2text_markdown(r.main_html, links=extractor.links, images=extractor.images)
    out["html2text convert"] = (_clock() - t0) / n
    if reference is not None:
        t0 = _clock()
        for html in pages:
            reference.simplify(html)
        out["reference simplify"] = (_clock() - t0) / n
    out["errors"] = sum(r.error is not None for r in results)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default="wcxb-dev")
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--labeler", default=None, help="labeler name or model directory (default: built-in model)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="clock for every figure (default: cpu)")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    # Result.timings are read on the extractor's clock: the process CPU clock unless --clock wall (other
    # load on a shared machine inflates wall time, unevenly between runs).
    extractor_module.time = types.SimpleNamespace(perf_counter=clock)
    global _clock
    _clock = clock
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    pages = load(args.set, args.pages)
    extractor = Extractor(args.labeler, output=("markdown",), time_budget=None)
    extractor.extract(pages[0])  # warm up (model session, first-call allocations)
    reference = oracle.load()
    if reference is None:
        print("reference not installed: pip install --no-deps pulpie==0.0.2 'selectolax<1.0' lxml beautifulsoup4")
    runs = [one_run(extractor, pages, reference) for _ in range(args.runs)]
    med = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    mb = sum(len(p.encode()) for p in pages) / len(pages) / 1e6
    print(
        f"{len(pages)} pages of {args.set} (mean {mb:.2f} MB), labeler {extractor.labeler.name}, "
        f"median of {args.runs} interleaved runs, one core, {args.clock} clock; {int(med['errors'])} error records"
    )
    print(f"extract-trt: {describe()}")
    print(f"{'stage':34s} {'ms/page':>8s} {'share':>6s}")
    for stage in STAGES:
        print(f"{'  ' + stage:34s} {1000 * med[stage]:8.1f} {med[stage] / med['pipeline']:6.0%}")
    print(f"{'extract-trt pipeline':34s} {1000 * med['pipeline']:8.1f}   {1 / med['pipeline']:.1f} pages/s")
    print()
    print(f"{'comparison':34s} {'ms/page':>8s} {'pages/s':>8s} {'ours ×':>7s}")
    rows = [("html2text convert (before)", "html2text convert", "convert")]
    if reference is not None:
        rows.insert(0, ("reference simplify (pulpie 0.0.2)", "reference simplify", "simplify"))
    for label, key, ours in rows:
        print(f"{label:34s} {1000 * med[key]:8.1f} {1 / med[key]:8.1f} {med[key] / med[ours]:7.2f}")
        print(f"{'  extract-trt ' + ours:34s} {1000 * med[ours]:8.1f} {1 / med[ours]:8.1f}")


if __name__ == "__main__":
    main()
