"""Dataset readers: our shared JSONL and the WebMainBench JSONL format."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from extract_trt.errors import InputFormatError
from extract_trt.eval.datasets import read_dataset, read_ids

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_ours_text_groundtruth_with_snippets_and_page_type():
    records = list(read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=3))
    assert [r.id for r in records] == ["wcxb/dev/0001", "wcxb/dev/0002", "wcxb/dev/0003"]
    r = records[0]
    assert r.groundtruth_format == "text" and r.wants == "text" and r.has_text_groundtruth
    assert r.groundtruth.startswith("Fall isn't just pumpkin spice season")
    assert r.with_snippets and r.without_snippets == ["Home", "Login", "Order Now", "Chef's Choice Menu Previews"]
    assert r.meta == {"language": "en", "page_type": "article"}


def test_ids_keep_file_order_and_limit_counts_kept_records():
    wanted = ["wcxb/dev/0040", "wcxb/dev/0005", "wcxb/dev/0012"]
    assert [r.id for r in read_dataset(DATA / "wcxb-dev.jsonl.gz", ids=wanted)] == sorted(wanted)
    assert [r.id for r in read_dataset(DATA / "wcxb-dev.jsonl.gz", ids=wanted, limit=2)] == sorted(wanted)[:2]


def test_snippet_only_and_markdown_and_no_groundtruth_sets():
    traf = next(read_dataset(DATA / "trafilatura-eval.jsonl.gz"))
    assert traf.groundtruth_format == "snippets" and not traf.has_text_groundtruth and traf.wants == "text"
    wmb = next(read_dataset(DATA / "webmainbench-sample.jsonl.gz"))
    assert wmb.wants == "markdown" and wmb.annotated_html and 'cc-select="true"' in wmb.annotated_html
    pulpie = next(read_dataset(DATA / "pulpie-pages.jsonl.gz"))
    assert pulpie.groundtruth is None and pulpie.groundtruth_format is None


def _webmainbench_file(tmp_path: Path) -> Path:
    sample = json.loads(gzip.open(DATA / "webmainbench-sample.jsonl.gz", "rt", encoding="utf-8").readline())
    rows = [
        {"track_id": "t-1", "url": sample["url"], "html": sample["annotated_html"], "main_html": "<p>x</p>",
         "convert_main_content": "Official reference", "groundtruth_content": "Hand-calibrated reference",
         "meta": {"language": "en", "style": "Article", "level": "mid", "table": [], "code": ["inline"]}},
        {"track_id": "t-2", "url": None, "html": "<p>b</p>", "convert_main_content": "",
         "meta": {"language": "zh", "level": "hard"}},
    ]  # fmt: skip
    path = tmp_path / "webmainbench.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_webmainbench_format(tmp_path):
    path = _webmainbench_file(tmp_path)
    a, b = read_dataset(path)
    assert a.id == "t-1" and a.groundtruth == "Official reference" and a.groundtruth_format == "markdown"
    assert a.meta == {"level": "mid", "language": "en", "style": "Article"}  # list-valued meta keys are skipped
    assert a.annotated_html == a.html  # WebMainBench keeps its cc-select marks in the html
    assert b.groundtruth == "" and b.has_text_groundtruth  # an empty reference is still a reference
    (c, _) = read_dataset(path, reference_field="groundtruth_content")
    assert c.groundtruth == "Hand-calibrated reference"


def test_gzip_detected_by_content_and_bad_lines_raise(tmp_path):
    gz = tmp_path / "pages.data"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "p", "html": "<p>x</p>", "groundtruth": "x", "groundtruth_format": "text"}) + "\n\n")
    assert [r.id for r in read_dataset(gz)] == ["p"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "html": "<p>x</p>"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match="line 2"):
        list(read_dataset(bad))
    bad.write_text('{"id": "a", "html": 3}\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match="html"):
        list(read_dataset(bad))
    bad.write_text('{"id": "a", "html": "x", "groundtruth": "x", "groundtruth_format": "pdf"}\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match="pdf"):
        list(read_dataset(bad))


def test_read_ids(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("# validation split\nwcxb/dev/0001\n\n  wcxb/dev/0002  \n", encoding="utf-8")
    assert read_ids(path) == ["wcxb/dev/0001", "wcxb/dev/0002"]
