"""Full-corpus parity of extract-trt's simplifier and reconstruction against the reference (pulpie 0.0.2).

    python scripts/parity.py [--limit N] [--sets wcxb-dev,...] [--workers 2] [--show 5]

For every page: simplified HTML, per-block strings, map HTML and reconstruction (labels: every block
whose id is odd is main) are compared after whitespace normalisation; "main*" also counts a main HTML that
differs only by Modest's empty-named attribute (``x="" =""``), a reference bug we do not reproduce.
Prints block- and page-level identity rates per dataset and examples of each difference.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import re
import sys
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import oracle  # noqa: E402

from extract_trt.runtime.html.reconstruct import reconstruct  # noqa: E402
from extract_trt.runtime.html.simplify import simplify  # noqa: E402
from extract_trt.runtime.types import Labels  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SETS = ["pulpie-pages", "webmainbench-sample", "readability-pages", "wcxb-dev", "trafilatura-eval"]
REF = None
# Modest (the reference's first parser) writes a valueless attribute right before "/>" back as
# `attr="" =""`, an attribute with an empty name; we do not reproduce that. "main*" compares without it.
_MODEST_EMPTY_NAME_ATTR = re.compile(r'(?<=") =""')


def compare(page: dict) -> dict:
    global REF
    if REF is None:
        REF = oracle.load()
    import numpy as np

    html = page["html"]
    norm = oracle.normalize
    ref_simple, ref_map = REF.simplify(html)
    ours = simplify(html)
    our_map = norm(ours.map_html)  # before reconstruction, which re-reads the tree like libxml2
    ref_blocks = [norm(b) for b in REF.extract_blocks(ref_simple)]
    our_blocks = [norm(b) for b in REF.extract_blocks(ours.simplified_html)]
    matcher = difflib.SequenceMatcher(a=ref_blocks, b=our_blocks, autojunk=False)
    same_blocks = sum(m.size for m in matcher.get_matching_blocks())
    labels_main = np.array([b.item_id % 2 == 1 for b in ours.blocks], dtype=bool)
    ref_labels = {str(i): ("main" if i % 2 == 1 else "other") for i in range(1, len(ref_blocks) + 1)}
    ref_main = norm(REF.extract_main_html(ref_map, ref_labels))
    our_main = norm(reconstruct(ours, Labels(main=labels_main, labeler="parity")))
    return {
        "id": page.get("id"),
        "ref_blocks": len(ref_blocks),
        "our_blocks": len(our_blocks),
        "same_blocks": same_blocks,
        "simplified": norm(ref_simple) == norm(ours.simplified_html),
        "map": norm(ref_map) == our_map,
        "main": ref_main == our_main,
        "main_modest_aside": ref_main == our_main or _MODEST_EMPTY_NAME_ATTR.sub("", ref_main) == our_main,
        "diff": None if ref_blocks == our_blocks else _first_diff(ref_blocks, our_blocks),
        "map_diff": None if norm(ref_map) == our_map else _first_char_diff(norm(ref_map), our_map),
        "main_diff": None if ref_main == our_main else _first_char_diff(ref_main, our_main),
    }


def _first_diff(a: list[str], b: list[str]) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"block {i + 1}:\n  ref: {x[:300]}\n  our: {y[:300]}"
    return f"block count ref={len(a)} ours={len(b)}; extra: {(a[len(b):] or b[len(a):])[:2]}"


def _first_char_diff(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"at {i}:\n  ref: …{a[max(0, i - 120): i + 160]}\n  our: …{b[max(0, i - 120): i + 160]}"


def pages(name: str, limit: int | None):
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            if limit is not None and n >= limit:
                break
            rec = json.loads(line)
            yield {"id": rec.get("id"), "html": rec["html"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--limit", type=int)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--show", type=int, default=3)
    ap.add_argument("--json", help="write per-page rows here")
    args = ap.parse_args()
    if oracle.load() is None:
        sys.exit("the reference is not installed: pip install --no-deps pulpie==0.0.2 'selectolax<1.0' lxml beautifulsoup4")
    rows_all = []
    total = Counter()
    with Pool(args.workers) as pool:
        for name in args.sets.split(","):
            rows = pool.map(compare, list(pages(name, args.limit)), chunksize=4)
            rows_all += [{**r, "set": name} for r in rows]
            c = Counter()
            for r in rows:
                c["pages"] += 1
                c["ref_blocks"] += r["ref_blocks"]
                c["same_blocks"] += r["same_blocks"]
                c["pages_blocks_identical"] += r["diff"] is None
                c["pages_simplified_identical"] += r["simplified"]
                c["pages_map_identical"] += r["map"]
                c["pages_main_identical"] += r["main"]
                c["pages_main_modest_aside"] += r["main_modest_aside"]
            total.update(c)
            _report(name, c)
            shown = 0
            for r in rows:
                if r["diff"] and shown < args.show:
                    print(f"  - {r['id']}: {r['diff']}")
                    shown += 1
            shown = 0
            for r in rows:
                if r["diff"] is None and r["map_diff"] and shown < args.show:
                    print(f"  - map {r['id']}: {r['map_diff']}")
                    shown += 1
            shown = 0
            for r in rows:
                if r["map_diff"] is None and r["main_diff"] and shown < args.show:
                    print(f"  - main {r['id']}: {r['main_diff']}")
                    shown += 1
    _report("ALL", total)
    if args.json:
        Path(args.json).write_text("\n".join(json.dumps(r) for r in rows_all))


def _report(name: str, c: Counter) -> None:
    p = max(c["pages"], 1)
    print(
        f"{name:22s} pages={c['pages']:5d} blocks identical {c['same_blocks']}/{c['ref_blocks']}"
        f" = {c['same_blocks'] / max(c['ref_blocks'], 1):.4%} | pages identical: blocks {c['pages_blocks_identical'] / p:.2%}"
        f" simplified {c['pages_simplified_identical'] / p:.2%} map {c['pages_map_identical'] / p:.2%}"
        f" main {c['pages_main_identical'] / p:.2%} (main* {c['pages_main_modest_aside'] / p:.2%})",
        flush=True,
    )


if __name__ == "__main__":
    main()
