"""extract_trt.integrations.datatrove inside real datatrove pipelines: reader → ExtractTrt → writer."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

pytest.importorskip("datatrove", reason="needs the datatrove extra (pip install 'extract-trt[datatrove]')")

from datatrove.executor import LocalPipelineExecutor  # noqa: E402
from datatrove.pipeline.readers import JsonlReader, WarcReader  # noqa: E402
from datatrove.pipeline.writers import JsonlWriter  # noqa: E402

from extract_trt import Extractor  # noqa: E402
from extract_trt.integrations.datatrove import ExtractTrt  # noqa: E402
from io_fixtures import real_pages, write_warc  # noqa: E402



def _run(pipeline: list, tmp_path: Path) -> list[dict]:
    out = tmp_path / "out"
    executor = LocalPipelineExecutor(pipeline=[*pipeline, JsonlWriter(str(out), compression=None)], tasks=1,
                                     logging_dir=str(tmp_path / "logs"))  # fmt: skip
    executor.run()
    return [json.loads(line) for f in sorted(out.glob("*.jsonl")) for line in f.read_text().splitlines()]


def test_warc_reader_step_writer_gives_the_extractor_text(tmp_path):
    pages = real_pages(3)
    (tmp_path / "warc").mkdir()
    expected = write_warc(tmp_path / "warc" / "crawl.warc.gz", pages, gzipped=True)
    rows = _run([WarcReader(str(tmp_path / "warc")), ExtractTrt(timeout=30)], tmp_path)

    reference = Extractor(labeler="block-model-precision", output="text")
    want = {e["url"]: reference.extract(e["html"]).text for e in expected}
    assert [r["metadata"]["url"] for r in rows] == [e["url"] for e in expected]  # the PNG record never reaches us
    for row in rows:
        assert row["text"] == want[row["metadata"]["url"]] and row["text"].strip()
        assert "<" not in row["text"][:50]  # text, not the HTML the reader gave
    assert [r["id"] for r in rows] == [e["id"] for e in expected]


def test_jsonl_pages_that_fail_are_dropped_and_counted(tmp_path):
    pages = real_pages(2)
    records = [{"id": "good-0", "html": pages[0]["html"]}, {"id": "empty", "html": "   "},
               {"id": "good-1", "html": pages[1]["html"]}, {"id": "huge", "html": "<p>" + "x" * 200_000 + "</p>"}]  # fmt: skip
    (tmp_path / "in").mkdir()
    with gzip.open(tmp_path / "in" / "pages.jsonl.gz", "wt") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)
    step = ExtractTrt(output_format="markdown", timeout=30, max_bytes=150_000)
    rows = _run([JsonlReader(str(tmp_path / "in"), text_key="html"), step], tmp_path)

    assert [r["id"] for r in rows] == ["good-0", "good-1"]
    reference = Extractor(labeler="block-model-precision", output="markdown")
    assert rows[0]["text"] == reference.extract(pages[0]["html"]).markdown
    steps = json.loads((tmp_path / "logs" / "stats.json").read_text())
    stats = next(s["stats"] for s in steps if "extract-trt" in s["name"])
    counts = {name: value["total"] if isinstance(value, dict) else value for name, value in stats.items()}
    assert counts["total"] == 4 and counts["forwarded"] == 2 and counts["dropped"] == 2
    assert counts["clean_error"] == 2  # empty input and over max_bytes: error records, not exceptions


def test_step_extracts_one_page_directly():
    html = real_pages(1)[0]["html"]
    assert ExtractTrt().extract(html) == Extractor(labeler="block-model-precision", output="text").extract(html).text
    assert ExtractTrt().extract("") == ""


def test_page_metadata_goes_into_the_document_metadata(tmp_path):
    body = ("Tomatoes grow best in warm soil with plenty of sun. Water them deeply once a week, early in the "
            "morning, and feed them every two weeks once the first fruit sets. Pinch out the side shoots so "
            "that the plant puts its energy into fruit, and stake tall varieties before they start to lean.")
    page = {"id": "p", "html": f"<html><head><title>The Title</title></head><body><article><p>{body}</p>"
            f"<p>{body}</p></article></body></html>"}  # fmt: skip
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "p.jsonl").write_text(json.dumps(page) + "\n")
    rows = _run([JsonlReader(str(tmp_path / "in"), text_key="html"), ExtractTrt(timeout=30)], tmp_path)
    assert rows[0]["metadata"]["extract_trt"]["title"] == "The Title"
