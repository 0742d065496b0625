"""Golden-master parity with the reference simplifier/reconstruction on real pages (CI subset).

The full-corpus run (about 2,600 pages) is ``python scripts/parity.py``; figures are in BENCHMARKS.md.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from extract_trt.runtime.html.reconstruct import reconstruct
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.types import Labels

import oracle

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
REF = oracle.load()
pytestmark = pytest.mark.skipif(REF is None, reason="reference (pulpie 0.0.2, selectolax<1.0) not installed")


def records():
    for name in ("pulpie-pages", "webmainbench-sample"):
        with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            yield from (json.loads(line) for line in fh)


@pytest.mark.parametrize("record", list(records()), ids=lambda r: r["id"])
def test_page_matches_reference(record):
    html = record["html"]
    ref_simple, ref_map = REF.simplify(html)
    ours = simplify(html)
    assert [oracle.normalize(b) for b in REF.extract_blocks(ours.simplified_html)] == [
        oracle.normalize(b) for b in REF.extract_blocks(ref_simple)
    ]
    assert [b.html for b in ours.blocks] == [oracle.normalize(b) for b in REF.extract_blocks(ours.simplified_html)][
        : len(ours.blocks) - 1
    ] + [b.html for b in ours.blocks[-1:]]
    assert oracle.normalize(ours.simplified_html) == oracle.normalize(ref_simple)
    main = np.array([b.item_id % 3 != 0 for b in ours.blocks], dtype=bool)
    ref_main = REF.extract_main_html(ref_map, Labels(main, "t").as_dict(ours))
    assert oracle.normalize(reconstruct(ours, Labels(main, "t"))) == oracle.normalize(ref_main)
