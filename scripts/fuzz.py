"""Coverage-guided fuzzing of bytes → Result through the whole pipeline (long runs; CI runs tests/test_fuzz.py).

    nice -n 19 python scripts/fuzz.py --minutes 15 --out fuzz-out/

Each execution extracts one input with a fresh-per-run Extractor (labelers alternate between one that
keeps every block, which stresses reconstruction and sanitising, and the heuristic) and checks the
properties of ``tests/hostile_pages.violations``: no exception, labels = blocks, output text made of
the input's characters, no active content in the main HTML, and none in the Markdown once rendered
(markdown-it-py with raw HTML on and link validation off: ``tests/markdown_render.py``). An execution slower than ``--hang`` seconds counts as a hang.

Inputs come from a corpus seeded with the hostile test pages, real pages from ../shared/data (cut to
``--seed-chars``) and random hostile pages; each step mutates a corpus entry (byte edits, hostile snippets,
splices with another entry, random re-encoding). With coverage guidance on (the default) a line-pair
tracer over the ``extract_trt`` package keeps every input that reaches a new pair in the corpus.

Findings are written to ``--out`` (``<kind>-<n>.bin`` + ``findings.jsonl``); ``summary.json`` has the
counts (executions, corpus, coverage, findings by kind, slowest input).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import extract_trt  # noqa: E402
from extract_trt import Extractor  # noqa: E402
from extract_trt.runtime.html.decode import decode_html  # noqa: E402
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler  # noqa: E402

from hostile_pages import AllMain, hostile_pages, mutate, random_page, seed_pages, violations  # noqa: E402

PACKAGE = str(Path(extract_trt.__file__).resolve().parent)


class Coverage:
    """Line-pair ("edge") coverage of the extract_trt package via ``sys.settrace``."""

    def __init__(self) -> None:
        self.edges: set[tuple[object, int, int]] = set()
        self.new = 0
        self._last: dict[int, int] = {}

    def _local(self, frame, event, arg):  # noqa: ANN001 - sys.settrace signature
        if event == "line":
            key = id(frame)
            edge = (frame.f_code, self._last.get(key, -1), frame.f_lineno)
            self._last[key] = frame.f_lineno
            if edge not in self.edges:
                self.edges.add(edge)
                self.new += 1
        elif event == "return":
            self._last.pop(id(frame), None)
        return self._local

    def _global(self, frame, event, arg):  # noqa: ANN001
        return self._local if frame.f_code.co_filename.startswith(PACKAGE) else None

    def run(self, fn, *args):  # noqa: ANN001, ANN201
        self.new = 0
        sys.settrace(self._global)
        try:
            return fn(*args)
        finally:
            sys.settrace(None)
            self._last.clear()


def reencode(data: bytes, rng: random.Random) -> bytes:
    codec = rng.choice(["utf-16", "cp1251", "gb18030", "shift_jis", "cp1252", "utf-8-sig"])
    return decode_html(data).encode(codec, "replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="fuzz-out")
    parser.add_argument("--seed-pages", type=int, default=200)
    parser.add_argument("--seed-chars", type=int, default=30_000)
    parser.add_argument("--hang", type=float, default=20.0, help="seconds after which an execution counts as a hang")
    parser.add_argument("--no-coverage", action="store_true")
    args = parser.parse_args()

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    extractors = [Extractor(labeler=AllMain(), time_budget=5), Extractor(labeler=HeuristicLabeler(), time_budget=5)]
    sets = ("pulpie-pages", "webmainbench-sample", "readability-pages", "wcxb-dev", "trafilatura-eval")
    corpus: list[bytes] = [p.encode("utf-8") for _, p in hostile_pages() if len(p) < 300_000]
    corpus += [p.encode("utf-8") for p in seed_pages(args.seed_pages, args.seed_chars, sets)]
    coverage = None if args.no_coverage else Coverage()
    stats = {"executions": 0, "seconds": 0.0, "corpus_start": len(corpus), "findings": {}, "slowest": [0.0, ""]}
    findings = open(out / "findings.jsonl", "a", encoding="utf-8")
    deadline = time.monotonic() + 60 * args.minutes
    last_report = time.monotonic()

    while time.monotonic() < deadline:
        n = stats["executions"]
        choice = rng.random()
        if choice < 0.15:
            data = random_page(rng)
        elif choice < 0.2:
            data = reencode(rng.choice(corpus), rng)
        else:
            data = mutate(rng.choice(corpus), rng, other=rng.choice(corpus))
        extractor = extractors[n % 2]
        start = time.perf_counter()
        result = None
        try:
            if coverage is not None:
                result = coverage.run(extractor.extract, data)
            else:
                result = extractor.extract(data)
            source = data if isinstance(data, str) else decode_html(data)
            problems = violations(source, result)
        except Exception:
            problems = ["exception: " + traceback.format_exc(limit=-3).strip().replace("\n", " | ")]
        elapsed = time.perf_counter() - start
        stats["executions"] += 1
        stats["seconds"] += elapsed
        if elapsed > stats["slowest"][0]:
            stats["slowest"] = [round(elapsed, 3), getattr(result, "error", None) or ""]
        if elapsed > args.hang:
            problems.append(f"hang: {elapsed:.1f} s")
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        if problems:
            kind = problems[0].split(":")[0]
            count = stats["findings"].get(kind, 0) + 1
            stats["findings"][kind] = count
            name = f"{kind.replace(' ', '_')}-{count}.bin"
            (out / name).write_bytes(raw)
            findings.write(json.dumps({"file": name, "labeler": extractor.labeler.name, "problems": problems}) + "\n")
            findings.flush()
        elif coverage is not None and coverage.new and len(raw) < 200_000:
            corpus.append(raw)
        if time.monotonic() - last_report > 60:
            last_report = time.monotonic()
            edges = len(coverage.edges) if coverage is not None else 0
            print(
                f"{stats['executions']} execs, {stats['executions'] / max(stats['seconds'], 1e-9):.1f}/s, "
                f"corpus {len(corpus)}, edges {edges}, findings {stats['findings']}",
                flush=True,
            )
    stats["corpus_end"] = len(corpus)
    stats["edges"] = len(coverage.edges) if coverage is not None else None
    stats["minutes"] = args.minutes
    (out / "summary.json").write_text(json.dumps(stats, indent=2) + "\n")
    print(json.dumps(stats, indent=2))


if __name__ == "__main__":
    main()
