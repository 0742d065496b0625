"""``extract-trt eval`` end to end on shared pages."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from typer.testing import CliRunner

from extract_trt.cli import app

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
runner = CliRunner()


def test_eval_prints_the_table_and_writes_json_and_chart(tmp_path):
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        ["eval", "--dataset", str(DATA / "wcxb-dev.jsonl.gz"), "--limit", "3", "-x", "heuristic",
         "-x", "resiliparse", "-x", "rs-trafilatura", "--out", str(out), "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "| heuristic |" in result.output and "| resiliparse |" in result.output
    assert "rs-trafilatura" in result.output  # scored, or (without its CPython 3.12 wheel) skipped with the reason
    assert {p.name for p in out.iterdir()} == {"report.md", "summary.json", "pages.json", "pareto.png"}
    pages = json.loads((out / "pages.json").read_text())
    scored = {"heuristic", "resiliparse"} | ({"rs-trafilatura"} if importlib.util.find_spec("rs_trafilatura") else set())
    assert len(pages) == 3 * len(scored) and {p["extractor"] for p in pages} == scored


def test_eval_ids_restrict_the_pages(tmp_path):
    ids = tmp_path / "val.txt"
    ids.write_text("wcxb/dev/0007\nwcxb/dev/0003\n", encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(
        app, ["eval", "-d", str(DATA / "wcxb-dev.jsonl.gz"), "--ids", str(ids), "-x", "resiliparse", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert [p["id"] for p in json.loads((out / "pages.json").read_text())] == ["wcxb/dev/0003", "wcxb/dev/0007"]


def test_eval_cannot_run(tmp_path):
    missing = runner.invoke(app, ["eval", "-d", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    unknown = runner.invoke(app, ["eval", "-d", str(DATA / "pulpie-pages.jsonl.gz"), "-x", "no-such-thing"])
    assert unknown.exit_code == 2 and "no-such-thing" in unknown.output
    ids = tmp_path / "ids.txt"
    ids.write_text("not-a-page\n", encoding="utf-8")
    empty = runner.invoke(app, ["eval", "-d", str(DATA / "pulpie-pages.jsonl.gz"), "--ids", str(ids), "-x", "heuristic"])
    assert empty.exit_code == 2 and "no pages" in empty.output
