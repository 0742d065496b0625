"""Ours vs the peers in one run: speed (pages/s on one core) and quality on the same pages, with ratios.

    python bench/extractors.py [--set wcxb-dev] [--pages 200] [-x default -x trafilatura ...]

Every extractor goes through ``extract_trt.eval.evaluate`` (HTML string in, the scored text out: for our
extractor decode → simplify → label → reconstruct → plain text; for peers their own call), pinned to one
core, one untimed warm-up page each. pages/s/core = pages / CPU seconds. Timed for speed only: our default
extractor with Markdown out (``Extractor(output="markdown")``: the issue's "HTML string in, Markdown out"
pipeline), and the reference simplifiers (pulpie 0.0.2 = MinerU-HTML v1.1, and ours) — simplification is
the first stage of a block-labelling extractor, so they bound its speed from above. "× default" is the
speed ratio to our default extractor.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import oracle  # noqa: E402

from extract_trt import Extractor  # noqa: E402
from extract_trt.eval import Prediction, evaluate, read_dataset  # noqa: E402
from extract_trt.eval.peers import PEER_NAMES  # noqa: E402
from extract_trt.runtime.html.simplify import simplify  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


class SpeedOnly:
    """A function of the page's HTML timed as a candidate (speed only: its output is not scored)."""

    def __init__(self, name: str, description: str, fn) -> None:
        self.name, self.description, self.fn = name, description, fn

    def predict(self, records):
        out = []
        for record in records:
            t0 = time.perf_counter()
            self.fn(record.html)
            out.append(Prediction("", time.perf_counter() - t0))
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="wcxb-dev")
    ap.add_argument("--pages", type=int, default=200)
    ap.add_argument("-x", "--extractor", action="append", help="default: default, heuristic and every peer")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    names = args.extractor or ["default", "heuristic", *PEER_NAMES]
    markdown = Extractor(output="markdown")
    speed_only = [
        SpeedOnly("default, Markdown out", "extract-trt, HTML string in, Markdown out",
                  lambda html: markdown.extract(html).markdown),
        SpeedOnly("extract-trt simplify", "extract-trt simplifier (Lexbor)", simplify),
    ]
    ref = oracle.load()
    if ref is not None:
        speed_only.append(SpeedOnly("reference simplify", "pulpie 0.0.2 = MinerU-HTML v1.1 simplify", ref.simplify))
    records = list(read_dataset(DATA / f"{args.set}.jsonl.gz", limit=args.pages))
    report = evaluate(records, [*names, *speed_only], dataset=args.set)
    summary = report.summary()
    metric = report.headline
    base = summary.get("default", {}).get("pages_per_s_core")
    speed_names = {c.name for c in speed_only}
    print(f"{len(records)} pages of {args.set}, one core, HTML string in, scored text out (quality: {metric})")
    print(f"{'extractor':<22} {'pages/s/core':>12} {'p50 ms':>8} {'p95 ms':>8} {'× default':>9} {'quality':>8}  what")
    for name, s in summary.items():
        pps = s["pages_per_s_core"]
        ratio = f"{pps / base:9.2f}" if base and pps else f"{'-':>9}"
        quality = "speed only" if name in speed_names else (f"{s[metric]:.3f}" if metric and s[metric] is not None else "-")
        print(f"{name:<22} {pps or 0:12.1f} {s['latency_p50_ms']:8.1f} {s['latency_p95_ms']:8.1f} {ratio} {quality:>8}  {s['description']}")
    for name, reason in report.skipped.items():
        print(f"{name:<22} skipped: {reason}")


if __name__ == "__main__":
    main()
