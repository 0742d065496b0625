"""Page metadata through the CLI (json records, --front-matter, --no-metadata), run-job's Parquet columns
and the eval harness's metadata scores."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

from extract_trt.cli import app
from extract_trt.eval import evaluate
from extract_trt.eval.datasets import record_from_json
from extract_trt.eval.metrics import metadata_outcome

runner = CliRunner()
BODY = "<p>" + "Plain words about gardens and the weather, written in English for this test. " * 4 + "</p>"
HOSTILE_TITLE = 'Tomatoes "quoted" ---\nsecond: line\u2028 & \'more\''
PAGE = (
    "<html lang='en'><head>"
    + '<script type="application/ld+json">'
    + json.dumps({"@type": "NewsArticle", "headline": HOSTILE_TITLE, "author": [{"name": "Ann"}, {"name": "Bo"}],
                  "datePublished": "2024-03-15T08:30:00Z", "keywords": ["a", "b"]})  # fmt: skip
    + "</script></head><body><h2>Tomatoes</h2>"  # an <h1> would be the title
    + BODY
    + "</body></html>"
)
TITLE = " ".join(HOSTILE_TITLE.split())  # titles come with their whitespace runs collapsed


def invoke(*args: str):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_json_record_carries_metadata(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(PAGE, encoding="utf-8")
    record = json.loads(invoke("extract", str(page), "-f", "json", "-l", "heuristic", "--metadata").stdout)
    md = record["metadata"]
    assert md["title"] == TITLE and md["author"] == "Ann, Bo" and md["tags"] == ["a", "b"]
    assert md["date"] == "2024-03-15T08:30:00+00:00" and md["language"] == "en" and md["language_detected"] == "en"
    off = json.loads(invoke("extract", str(page), "-f", "json", "-l", "heuristic").stdout)  # off by default
    assert off["metadata"] is None and "metadata" not in off["timings"]


def test_front_matter_is_safe_yaml(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(PAGE, encoding="utf-8")
    out = invoke("extract", str(page), "-l", "heuristic", "--front-matter").stdout  # implies --metadata
    assert out.startswith("---\n")
    header, body = out[4:].split("\n---\n", 1)
    parsed = yaml.safe_load(header)
    assert parsed["title"] == TITLE and parsed["author"] == "Ann, Bo" and "second" not in parsed
    assert "Plain words about gardens" in body
    plain = invoke("extract", str(page), "-l", "heuristic").stdout
    assert not plain.startswith("---") and body.lstrip("\n") == plain


def test_front_matter_needs_markdown_and_metadata(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(PAGE, encoding="utf-8")
    assert invoke("extract", str(page), "-f", "text", "--front-matter").exit_code == 2
    assert invoke("extract", str(page), "--no-metadata", "--front-matter").exit_code == 2


def test_run_job_metadata_columns(tmp_path: Path) -> None:
    shard = tmp_path / "in.jsonl"
    pages = [{"id": "a", "url": "https://example.com/2023/01/02/x", "html": PAGE}, {"id": "b", "html": ""}]
    shard.write_text("".join(json.dumps(p) + "\n" for p in pages), encoding="utf-8")
    for flag, out in (("--metadata", tmp_path / "on"), ("--no-metadata", tmp_path / "off")):
        result = invoke("run-job", str(shard), "-o", str(out), "-l", "heuristic", flag, "--no-progress")
        assert result.exit_code == 0, result.stdout
        [path] = list(out.glob("*.parquet"))
        table = pq.read_table(path)
        schema = table.schema
        assert schema.field("date").type == pa.date32() and schema.field("date_modified").type == pa.date32()
        assert schema.field("tags").type == pa.list_(pa.string()) and schema.field("title").type == pa.string()
        rows = table.to_pylist()
        assert rows[1]["error"] is not None and rows[1]["title"] is None  # a failed page: null metadata
        if flag == "--metadata":
            assert rows[0]["date"] == datetime.date(2024, 3, 15) and rows[0]["date_raw"] == "2024-03-15T08:30:00+00:00"
            assert rows[0]["title"] == TITLE and rows[0]["tags"] == ["a", "b"] and rows[0]["language"] == "en"
            assert rows[0]["timings"]["metadata"] is not None
        else:
            assert rows[0]["title"] is None and rows[0]["date"] is None and rows[0]["tags"] is None


def test_metadata_outcome() -> None:
    assert metadata_outcome("How to Grow", "How to Grow", "title") == "exact"
    assert metadata_outcome("how to grow!", "How  to Grow", "title") == "normalised"
    assert metadata_outcome("Ann Smith; Bo Li", "Ann Smith and Bo Li", "author") == "normalised"
    assert metadata_outcome("Bo Li", "Ann Smith", "author") == "wrong"
    assert metadata_outcome(None, "Ann", "author") == metadata_outcome(" ", "Ann", "author") == "none"
    assert metadata_outcome("2024-03-15T23:00:00+00:00", "2024-03-15", "date") == "exact"
    assert metadata_outcome("2024-03-16", "2024-03-15", "date") == "wrong"


def test_eval_scores_metadata_ours_and_trafilatura() -> None:
    truth = {"title": TITLE, "author": "Ann and Bo", "publish_date": "2024-03-15"}
    record = record_from_json({"id": "p", "url": "https://example.com/p", "html": PAGE, "groundtruth": "Plain words",
                               "groundtruth_format": "text", **truth})  # fmt: skip
    assert record.metadata == {"title": TITLE, "author": "Ann and Bo", "date": "2024-03-15"}
    report = evaluate([record], ["heuristic", "trafilatura"], warmup=False)
    summary = report.metadata_summary()
    assert set(summary) == {"heuristic", "trafilatura"}
    ours = summary["heuristic"]
    assert ours["author"]["normalised"] == 1.0 and ours["date"]["exact"] == 1.0 and ours["title"]["exact"] == 1.0
    assert ours["ms_per_page"] is not None and summary["trafilatura"]["ms_per_page"] is not None
    assert "### Metadata" in report.to_markdown() and report.to_json()["metadata"] == summary


def test_bench_measures_metadata_off_and_on() -> None:
    from extract_trt.eval.bench import as_bytes_records, bench_matrix

    records = as_bytes_records([{"id": str(i), "html": PAGE} for i in range(3)])
    off, on = bench_matrix(records, ["heuristic"], metadata_modes=(False, True), batch_size=1)
    assert (off.metadata, on.metadata) == (False, True) and (off.name, on.name) == ("heuristic", "heuristic +meta")
    assert "metadata" not in off.stage_seconds and on.stage_seconds["metadata"] > 0
