"""Costs of the hostile-input limits: time and peak RSS for the largest and deepest pages, and the overhead of
the limits and sanitising on ordinary pages.

    python bench/robustness.py            # all cases (a few minutes on 2 cores)
    python bench/robustness.py --cases big-50mb-nolimit deep-span-100k

Every large/deep case runs in a fresh subprocess (peak RSS = that process's ``VmHWM``; "input RSS" is
the RSS once the page is read, before extraction). Labeler: the heuristic, so the figures are the
pipeline's own (decode, scan, simplify, reconstruct, sanitise, convert), not a model's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# name → (page builder expression, Extractor keyword arguments as Python source)
CASES: dict[str, tuple[str, str]] = {
    "big-50mb-default": ("real_page(50)", "{}"),
    "big-20mb-default": ("real_page(19.9)", "{}"),
    "big-50mb-nolimit": ("real_page(50)", "{'max_bytes': None, 'time_budget': None, 'max_blocks': None}"),
    "deep-span-100k": ("'<div>' + '<span>' * 100_000 + '<p>deep</p>' + '</span>' * 100_000 + '</div>'", "{}"),
    "deep-div-100k": ("'<div>' * 100_000 + '<p>deep</p>' + '</div>' * 100_000", "{}"),
    "deep-div-100k-nolimit": ("'<div>' * 100_000 + '<p>deep</p>' + '</div>' * 100_000", "{'max_parser_work': None, 'time_budget': None}"),
    "nested-tables-5k": ("'<table><tr><td>x' * 5_000", "{}"),
}

CHILD = """
import json, sys, time
from extract_trt import Extractor
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

def real_page(mb):
    return open(%(cache)r + f"/real-{float(mb)}.html", "rb").read()

def rss_mb(field):
    # /proc, not ru_maxrss: Linux carries ru_maxrss over from the forking parent across exec.
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024

page = %(page)s
input_rss = rss_mb("VmRSS")
ex = Extractor(labeler=HeuristicLabeler(), **%(kwargs)s)
t = time.perf_counter()
r = ex.extract(page)
seconds = time.perf_counter() - t
print(json.dumps({"bytes": len(page), "seconds": round(seconds, 2), "input_rss_mb": round(input_rss),
                  "peak_rss_mb": round(rss_mb("VmHWM")),
                  "blocks": r.n_blocks, "error": (r.error or "")[:70],
                  "timings": {k: round(v, 2) for k, v in r.timings.items()}}))
"""


def build_real_page(mb: float, cache: Path) -> None:
    """Bodies of real WCXB pages, concatenated into one page of ``mb`` MiB (UTF-8), cached as a file."""
    path = cache / f"real-{float(mb)}.html"
    if path.exists():
        return
    parts, size = [], 0
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            html = json.loads(line)["html"]
            start = html.lower().find("<body")
            body = html[start:] if start >= 0 else html
            parts.append(body.replace("</body>", "").replace("</html>", ""))
            size += len(parts[-1].encode("utf-8"))
            if size >= mb * 2**20:
                break
    page = ("<html><head><title>big</title></head>" + "".join(parts) + "</body></html>").encode("utf-8")
    path.write_bytes(page[: int(mb * 2**20)])


def run_case(name: str, cache: Path) -> dict:
    page, kwargs = CASES[name]
    if page.startswith("real_page("):
        build_real_page(float(page[len("real_page(") : -1]), cache)
    code = CHILD % {"cache": str(cache), "page": page, "kwargs": kwargs}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"case": name, "failed": out.stderr.strip().splitlines()[-1:]}
    return {"case": name, **json.loads(out.stdout.strip().splitlines()[-1])}


def overhead(pages: int) -> list[dict]:
    """Pages/s on real WCXB pages with the default limits + sanitising vs everything off (heuristic labeler)."""
    from extract_trt import Extractor
    from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

    htmls = []
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            htmls.append(json.loads(line)["html"])
            if len(htmls) >= pages:
                break
    configs = {
        "defaults (limits on, sanitised)": {},
        "limits off, original markup": {"max_bytes": None, "max_parser_work": None, "max_blocks": None,
                                        "time_budget": None, "keep_markup": True},
    }  # fmt: skip
    rows = []
    for label, kwargs in configs.items():
        ex = Extractor(labeler=HeuristicLabeler(), **kwargs)
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            results = list(ex.extract_many(htmls))
            best = min(best, time.perf_counter() - t)
        errors = sum(r.error is not None for r in results)
        rows.append({"config": label, "pages": len(htmls), "pages_per_s": round(len(htmls) / best, 1), "errors": errors})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--overhead-pages", type=int, default=200, help="0 skips the overhead measurement")
    args = parser.parse_args()
    print(f"{'case':28} {'MB':>6} {'seconds':>8} {'input RSS':>10} {'peak RSS':>9} {'blocks':>7}  error / stage seconds")
    cache = Path(tempfile.gettempdir()) / "extract-trt-robustness"
    cache.mkdir(exist_ok=True)
    for name in args.cases:
        row = run_case(name, cache)
        if "failed" in row:
            print(f"{name:28} failed: {row['failed']}")
            continue
        detail = row["error"] or " ".join(f"{k}={v}" for k, v in row["timings"].items())
        print(
            f"{name:28} {row['bytes'] / 2**20:6.1f} {row['seconds']:8.2f} {row['input_rss_mb']:8} MB "
            f"{row['peak_rss_mb']:6} MB {row['blocks']:7}  {detail}",
            flush=True,
        )
    if args.overhead_pages:
        for row in overhead(args.overhead_pages):
            print(f"{row['config']:34} {row['pages']} WCXB pages: {row['pages_per_s']} pages/s (best of 3), errors {row['errors']}")


if __name__ == "__main__":
    main()
