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


def test_eval_without_its_extra_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "jieba", None)  # as if the `eval` extra were not installed
    result = runner.invoke(app, ["eval", "-d", str(DATA / "wcxb-dev.jsonl.gz"), "-x", "heuristic"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "pip install 'extract-trt[eval]'" in lines[0] and "jieba" in lines[0]


def test_eval_save_text_and_compare(tmp_path):
    args = ["eval", "-d", str(DATA / "wcxb-dev.jsonl.gz"), "--limit", "2", "-x", "heuristic", "--no-progress"]
    for run in ("a", "b"):
        result = runner.invoke(app, [*args, "--save-text", "-o", str(tmp_path / run)])
        assert result.exit_code == 0, result.output
    pages = json.loads((tmp_path / "a" / "pages.json").read_text())
    assert all(p["text"] for p in pages)
    compared = runner.invoke(app, ["eval", "--compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "c")])
    assert compared.exit_code == 0, compared.output
    assert "| heuristic | 2 |" in compared.output and "+0.0000" in compared.output  # the same extractor twice
    assert json.loads((tmp_path / "c" / "compare.json").read_text())["extractors"]["heuristic"]["text_changed"] == 0
    bad = runner.invoke(app, ["eval", "--compare", str(tmp_path / "a"), str(tmp_path / "nope")])
    assert bad.exit_code == 2 and "pages.json" in bad.output
