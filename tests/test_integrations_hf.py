"""extract_trt.integrations.hf with a real datasets.Dataset.map(batched=True)."""

from __future__ import annotations

import importlib.util
import json

import pytest

datasets = pytest.importorskip("datasets", reason="needs the hf extra (pip install 'extract-trt[hf]')")

from extract_trt import Extractor  # noqa: E402
from extract_trt.integrations import process_extractor  # noqa: E402
from extract_trt.integrations.hf import ExtractBatch  # noqa: E402
from io_fixtures import real_pages  # noqa: E402

HAS_METADATA = importlib.util.find_spec("extract_trt.runtime.metadata") is not None


def _rows() -> list[dict]:
    pages = real_pages(3)
    rows = [{"html": p["html"], "url": f"https://example.org/{i}", "keep": i} for i, p in enumerate(pages)]
    rows.insert(1, {"html": "\x00\x01binary", "url": "https://example.org/bad", "keep": 99})
    return rows


@pytest.mark.parametrize("num_proc", [None, 2])
def test_map_batched_adds_columns_row_for_row(num_proc, tmp_path):
    rows = _rows()
    ds = datasets.Dataset.from_list(rows)
    out = ds.map(ExtractBatch(url_column="url", output=("text", "markdown")), batched=True, batch_size=2,
                 num_proc=num_proc, cache_file_name=str(tmp_path / "cache.arrow"))  # fmt: skip

    assert out.column_names == ["html", "url", "keep", "text", "markdown", "extract_error"]
    assert out["keep"] == [r["keep"] for r in rows]  # same rows, same order
    reference = Extractor(output=("text", "markdown"))
    for row, got in zip(rows, out):
        want = reference.extract(row["html"], url=row["url"])
        assert (got["text"], got["markdown"], got["extract_error"]) == (want.text, want.markdown, want.error)
    assert out[1]["extract_error"].startswith("InputFormatError") and out[1]["text"] == ""
    assert all(out[i]["text"].strip() for i in (0, 2, 3))


def test_one_extractor_per_process_and_configuration():
    batch = {"html": [real_pages(1)[0]["html"]]}
    fn = ExtractBatch(output=("text",))
    fn(batch)
    assert process_extractor("default", output=("text",)) is process_extractor("default", output=("text",))
    assert process_extractor("default", output=("text",)) is not process_extractor("heuristic", output=("text",))
    with pytest.raises(KeyError, match="no column 'page'"):
        ExtractBatch(html_column="page")(batch)


@pytest.mark.skipif(not HAS_METADATA, reason="needs metadata (issue-29-meta)")
def test_metadata_column_is_json():
    html = "<html><head><title>T</title></head><body><article><p>" + "Words of content here. " * 30 + "</p></article></body></html>"
    out = ExtractBatch(metadata=True)({"html": [html, ""]})
    assert json.loads(out["metadata"][0])["title"] == "T" and out["metadata"][1] is None
