"""Hostile input, second round (issue 28, part A): nothing lost, bounds that hold, decoding, WARC.

Each test is built from a reproduction of the issue, at a size that keeps it fast.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest
from io_fixtures import real_pages, write_warc
from test_batch_integrity import ChaosLabeler, page
from typer.testing import CliRunner

from extract_trt import Extractor
from extract_trt.cli import app
from extract_trt.errors import OutputTooLargeError
from extract_trt.runtime.html.decode import decode_html
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.io.batch import run
from extract_trt.runtime.io.records import check_page, iter_records
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler
from extract_trt.runtime.limits import check_attributes, check_nesting, markup_only

runner = CliRunner()
SURROGATE_JSONL = (
    '{"id":"a","html":"<p>one</p>"}\n{"id":"x\\ud800","html":"<p>two</p>"}\n{"id":"b","html":"<p>3</p>"}\n'
)


def test_a_lone_surrogate_id_gives_an_error_record_and_the_run_goes_on(tmp_path: Path) -> None:
    src = tmp_path / "s.jsonl"
    src.write_text(SURROGATE_JSONL)
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["extract", "-l", "heuristic", "-f", "text", str(src), str(out)], catch_exceptions=False)
    assert result.exit_code == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["a", "x\ufffd", "b"]
    assert rows[1]["error"].startswith("OutputEncodingError: id held a lone surrogate (U+D800)")
    assert rows[0]["error"] is None and rows[2]["error"] is None
    tree = tmp_path / "tree"
    result = runner.invoke(app, ["extract", "-l", "heuristic", "-f", "text", "--time-budget", "0", str(src), "-o", f"{tree}/"])
    assert result.exit_code == 0
    index = [json.loads(line) for line in (tree / "index.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [e["file"] for e in index] == ["a.txt", None, "b.txt"]
    assert not [p for p in tree.iterdir() if p.name.endswith(".tmp")]


def test_ids_are_strings_or_canonical_numbers(tmp_path: Path) -> None:
    lines = ['{"id": 7, "html": "<p>a</p>"}', '{"id": 1.50, "html": "<p>a</p>"}', '{"id": {"a": 1}, "html": "<p>a</p>"}',
             '{"id": true, "html": "<p>a</p>"}', '{"id": [1], "html": "<p>a</p>"}', '{"id": "x\\u0000y", "html": "<p>a</p>"}']  # fmt: skip
    src = tmp_path / "ids.jsonl"
    src.write_text("\n".join(lines) + "\n")
    records = list(iter_records([str(src)]))
    assert [r["id"] for r in records] == ["7", "1.5", f"{src}:3", f"{src}:4", f"{src}:5", "x\x00y"]
    assert [r.get("error", "")[:40] for r in records[2:5]] == [
        "InputFormatError: id is a JSON object, n",
        "InputFormatError: id is a JSON boolean, ",
        "InputFormatError: id is a JSON array, no",
    ]


def test_a_warc_gzip_member_cut_in_its_header_gives_an_error_row_and_skips_are_counted(tmp_path: Path) -> None:
    expected = write_warc(tmp_path / "c.warc.gz", real_pages(3), gzipped=True)
    data = (tmp_path / "c.warc.gz").read_bytes()
    last_member = data.rindex(b"\x1f\x8b\x08")
    (tmp_path / "cut.warc.gz").write_bytes(data[: last_member + 5])  # inside the last member's gzip header
    skipped: Counter[str] = Counter()
    rows = list(iter_records([str(tmp_path / "cut.warc.gz")], skipped=skipped))
    assert [r["id"] for r in rows[:2]] == [e["id"] for e in expected[:2]] and "html" in rows[1]
    assert rows[-1]["error"].startswith("InputFormatError: WARC") and "truncated" in rows[-1]["error"]
    assert skipped["WARC warcinfo records"] == 1 and skipped["WARC request records"] >= 2


def test_an_error_record_says_how_long_the_page_took() -> None:
    ex = Extractor(labeler=HeuristicLabeler(), time_budget=0.05, max_parser_work=None)
    r = ex.extract("<div>" * 8000 + "<table><tr><td>x" * 3000)
    assert r.error.startswith("TimeBudgetExceededError") and r.seconds >= 0.05


def test_decoding_stray_bytes_utf16_without_bom_and_nul() -> None:
    body = "<html><head><meta charset=utf-8></head><body><p>Gr\u00fc\u00dfe aus K\u00f6ln, \u6771\u4eac</p></body></html>"
    data = body.encode("utf-8").replace(b"K\xc3\xb6ln", b"K\xf6ln")  # one Latin-1 byte in a UTF-8 page
    assert decode_html(data) == body.replace("K\u00f6ln", "K\ufffdln")
    for codec in ("utf-16-le", "utf-16-be"):
        assert check_page(body.encode(codec)) is None and decode_html(body.encode(codec)) == body
    assert check_page(b"<p>a\x00b</p>" + b" text" * 20) is None  # a stray NUL is not binary
    assert check_page(bytes(range(256)) * 8) is not None  # random-looking bytes still are


def test_markup_hidden_from_the_nesting_scan() -> None:
    deep = "<div>" * 25_000
    for hider in ("<!-->", "<!--->", "<svg><title>", "<svg><script>", "<math><style>"):
        assert check_nesting("<p>Intro.</p>" + hider + deep + "x --></title></script></style>") is not None, hider
    assert check_nesting("<!--" + deep + "-->") is None  # a real comment hides them from the parser too
    assert check_nesting("<p>Intro.</p><plaintext>" + deep) is None  # all text after <plaintext>
    assert markup_only("a<!---->b<script>x<div></script>c<title><p></title>d") == "ab<script></script>c<title></title>d"


def test_one_supervised_worker_kills_a_hanging_page_after_page_timeout(tmp_path: Path) -> None:
    records = [page(i, "HANG-WORKER" if i == 1 else "") for i in range(6)]
    kwargs = {"labeler": ChaosLabeler(str(tmp_path)), "batch_size": 6, "output": "text"}
    start = time.monotonic()
    results = list(run(records, workers=1, supervised=True, extractor_kwargs=kwargs, page_timeout=1.0))
    assert [r.id for r in results] == [r["id"] for r in records]
    assert results[1].error.startswith("TimeBudgetExceededError: the worker held this page over page_timeout=1 s")
    assert results[1].seconds >= 1.0
    assert all(r.error is None for r in results if r.id != "p1")
    assert time.monotonic() - start < 30  # per page: not page_timeout x 6 per chunk, twice


def test_a_formatting_reconstruction_bomb_is_stopped_by_the_worker_memory_cap() -> None:
    bomb = "<body><p>" + "".join(f"<b id=b{i}>" for i in range(600)) + "</p>" + "<p>x</p>" * 600
    records = [{"id": "bomb", "html": bomb}, page(1)]
    kwargs = {"labeler": "heuristic", "output": "text"}
    results = list(run(records, workers=1, supervised=True, extractor_kwargs=kwargs, page_memory=64 * 2**20))
    assert results[0].error is not None and results[1].error is None and "enough words" in results[1].text


def test_an_attribute_flood_is_rejected_before_parsing() -> None:
    ex = Extractor(labeler=HeuristicLabeler())
    for form in ("a{i}", 'a{i}=">"', 'a{i}="<"'):
        flood = "<p " + " ".join(form.format(i=i) for i in range(100_000)) + ">x</p>"
        assert ex.extract(flood).error.startswith("TooManyAttributesError: an element has more than 1,000 attributes"), form
    assert ex.extract("<p " + " ".join(f"a{i}" for i in range(900)) + ">some text here</p>").error is None
    in_script = "<script>var s = '<a " + "b " * 2_000 + "';</script><p>Some text.</p>"
    assert check_attributes(in_script) is None  # a script's text is no tag


def test_output_far_larger_than_the_page_is_an_error_record() -> None:
    page_ = "<p>" + "&" * 300_000 + "</p>"  # each & is written as &amp; in the main HTML
    r = Extractor(labeler=HeuristicLabeler(), output="html", max_output_ratio=2.0).extract(page_)
    assert r.error.startswith("OutputTooLargeError: the main HTML output has") and r.main_html == ""
    assert Extractor(labeler=HeuristicLabeler(), output="html").extract(page_).error is None  # default ratio 8


def test_a_simplified_page_far_larger_than_the_page_is_an_error_record() -> None:
    # every line under the <div> is a block that repeats its start tag, class and all (the reference's
    # scheme): 50,000 lines under a 1 MB class would be 50 GB of blocks
    flood = '<div class="' + "c" * 1_000_000 + '">' + "".join(f"line {i}<br>" for i in range(50_000)) + "</div>"
    r = Extractor(labeler=HeuristicLabeler(), output="text").extract(flood)
    assert r.error.startswith(f"OutputTooLargeError: the simplified page passes {8 * len(flood):,} characters")
    assert r.timings["simplify"] < 5  # before: 30 s and 7.8 GB, cut by the time budget
    lines = '<div class="' + "c" * 1_000 + '">' + "".join(f"line {i}<br>" for i in range(50)) + "</div>"
    chars = sum(len(b.html) for b in simplify(lines).blocks)
    assert len(simplify(lines, max_chars=chars).blocks) == 50
    with pytest.raises(OutputTooLargeError, match="at block 50 "):
        simplify(lines, max_chars=chars - 1)


def test_a_single_page_runs_in_process_under_a_memory_cap_that_is_lifted_afterwards(tmp_path: Path) -> None:
    import resource

    before = resource.getrlimit(resource.RLIMIT_AS)
    bomb = tmp_path / "bomb.html"
    bomb.write_text("<body><p>" + "".join(f"<b id=b{i}>" for i in range(50)) + "</p>" + "<p>x</p>" * 50)
    result = runner.invoke(app, ["extract", "-l", "heuristic", "-f", "text", str(bomb)], catch_exceptions=False)
    assert result.exit_code == 0
    assert resource.getrlimit(resource.RLIMIT_AS) == before  # the CLI's caller (here: pytest) is not left capped
