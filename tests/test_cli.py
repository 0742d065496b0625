"""The extract-trt command line: output routing, every input kind, bad records, workers, exit codes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from io_fixtures import real_pages, write_warc
from typer.testing import CliRunner

from extract_trt.cli import app

PAGES = real_pages(3)
runner = CliRunner()


def invoke(*args: str, input: bytes | None = None):  # noqa: A002 - click's name
    return runner.invoke(app, list(args), input=input, catch_exceptions=False)


def jsonl(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def strip_times(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("seconds", "timings")} for r in records]


@pytest.fixture()
def pages_jsonl(tmp_path: Path) -> Path:
    p = tmp_path / "pages.jsonl"
    p.write_text("".join(json.dumps(pg) + "\n" for pg in PAGES), encoding="utf-8")
    return p


@pytest.fixture()
def html_file(tmp_path: Path) -> Path:
    p = tmp_path / "page.html"
    p.write_text(PAGES[0]["html"], encoding="utf-8")
    return p


# ----------------------------------------------------------------------------------------------- help


def test_help_is_complete() -> None:
    top = invoke("--help")
    assert top.exit_code == 0 and "extract" in top.stdout and "version" in top.stdout
    result = invoke("extract", "--help")
    assert result.exit_code == 0
    command = typer.main.get_command(app).commands["extract"]  # type: ignore[attr-defined]
    options = [param for param in command.params if param.param_type_name == "option"]
    assert len(options) > 10
    for param in options:
        assert param.help, f"option {param.opts} has no help text"
    for flag in ("--output", "--format", "--workers", "--batch-size", "--no-links", "--no-images", "--progress", "--sample"):
        assert flag in result.stdout


def test_piped_help_is_complete_at_any_width() -> None:
    """Help read through a pipe (not a terminal) keeps every option's whole help text and the examples' lines."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "80"}
    root = typer.main.get_command(app)
    for name in ("eval", "bench", "extract", "run-job"):
        checked = 0
        done = subprocess.run([sys.executable, "-c", "from extract_trt.cli import main; main()", name, "--help"],
                              capture_output=True, text=True, env=env, check=True)  # fmt: skip
        flat = "".join(done.stdout.split())  # wrapping may break lines at spaces and hyphens
        assert "╭" not in done.stdout  # no terminal-sized boxes
        for param in root.commands[name].params:  # type: ignore[attr-defined]
            if param.param_type_name == "option" and param.help:  # typer vendors click: no isinstance
                assert "".join(param.help.split()) in flat, (name, param.opts)
                checked += 1
        assert checked >= 5, name
        example = next(line.strip() for line in root.commands[name].epilog.splitlines() if "extract-trt" in line)  # type: ignore[attr-defined]
        assert any(line.strip() == example for line in done.stdout.splitlines())  # not re-wrapped


def test_version() -> None:
    from extract_trt import __version__

    result = invoke("version")
    assert result.exit_code == 0 and __version__ in result.stdout


# ------------------------------------------------------------------------------------- single page


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_single_file_prints_content(html_file: Path, fmt: str) -> None:
    from extract_trt import Extractor

    result = invoke("extract", str(html_file), "--format", fmt)
    assert result.exit_code == 0, result.output
    expected = Extractor().extract(html_file.read_bytes()).content(fmt)
    assert expected.strip(), "page should have main content"
    assert result.stdout.rstrip("\n") == expected.rstrip("\n")


def test_single_file_json_and_output_file(html_file: Path, tmp_path: Path) -> None:
    result = invoke("extract", str(html_file), "-f", "json")
    record = json.loads(result.stdout)
    assert record["id"] == str(html_file) and record["error"] is None
    assert len(record["labels"]) == record["n_blocks"] > 0
    out = tmp_path / "page.md"
    assert invoke("extract", str(html_file), "-o", str(out)).exit_code == 0
    assert out.read_text(encoding="utf-8").strip() == json.loads(
        invoke("extract", str(html_file), "-f", "json").stdout
    )["markdown"].strip()


def test_stdin_html() -> None:
    result = invoke("extract", "-", "-f", "text", input=PAGES[1]["html"].encode())
    assert result.exit_code == 0 and result.stdout.strip()
    assert not result.stdout.lstrip().startswith("{")


def test_stdin_jsonl() -> None:
    data = "".join(json.dumps(p) + "\n" for p in PAGES).encode()
    out = jsonl(invoke("extract", "-", "-f", "text", input=data).stdout)
    assert [r["id"] for r in out] == [p["id"] for p in PAGES]
    assert all(r["error"] is None and r["text"] for r in out)


def test_failed_single_page_reports_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "empty.html").write_bytes(b"")
    result = invoke("extract", str(tmp_path / "empty.html"))
    assert result.exit_code == 0
    assert "InputFormatError" in result.stderr and result.stdout == ""


# ---------------------------------------------------------------------------------- many pages


def test_jsonl_to_stdout_in_order(pages_jsonl: Path) -> None:
    result = invoke("extract", str(pages_jsonl), "-f", "markdown")
    out = jsonl(result.stdout)
    assert [r["id"] for r in out] == [p["id"] for p in PAGES]
    assert all(list(r) == ["id", "markdown", "error", "seconds"] for r in out)


@pytest.mark.parametrize("fmt,field", [("text", "text"), ("html", "main_html"), ("markdown", "markdown")])
def test_format_fields(pages_jsonl: Path, tmp_path: Path, fmt: str, field: str) -> None:
    out = tmp_path / "o.jsonl"
    assert invoke("extract", str(pages_jsonl), "-o", str(out), "--format", fmt).exit_code == 0
    records = jsonl(out.read_text(encoding="utf-8"))
    assert len(records) == 3 and all(r[field] and r["error"] is None for r in records)


def test_json_format_full_record(pages_jsonl: Path) -> None:
    out = jsonl(invoke("extract", str(pages_jsonl), "-f", "json").stdout)
    keys = ["id", "url", "main_html", "markdown", "text", "labels", "n_blocks", "labeler", "timings", "error", "metadata"]
    assert all(list(r) == keys for r in out)
    assert all(r["markdown"] and r["text"] and r["main_html"] for r in out)
    assert all(r["metadata"] is None for r in out)  # page metadata: off unless --metadata


def test_no_links_no_images(tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    body = "".join(
        f"<p>Paragraph {i} has enough words to be main content, see <a href='https://x.org/{i}'>this link</a> "
        f"and <img src='https://x.org/{i}.png' alt='pic {i}'> more text follows here to be long.</p>"
        for i in range(8)
    )
    page.write_text(f"<html><body><article><h1>Title</h1>{body}</article></body></html>")
    with_all = invoke("extract", str(page)).stdout
    without = invoke("extract", str(page), "--no-links", "--no-images").stdout
    assert "https://x.org/1" in with_all
    assert "https://x.org/1" not in without and "Paragraph 1" in without


def test_positional_output_contract(pages_jsonl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = invoke("extract", "--format", "text", str(pages_jsonl), str(out))
    assert result.exit_code == 0 and result.stdout == ""
    assert [r["id"] for r in jsonl(out.read_text())] == [p["id"] for p in PAGES]
    # a second JSONL that holds input records is read, never overwritten
    other = tmp_path / "more.jsonl"
    other.write_text(json.dumps({"id": "more", "html": PAGES[0]["html"]}) + "\n")
    result = invoke("extract", "-f", "text", str(pages_jsonl), str(other))
    assert [r["id"] for r in jsonl(result.stdout)] == [p["id"] for p in PAGES] + ["more"]
    assert "reading it as an input" in result.stderr
    assert json.loads(other.read_text())["id"] == "more"


def test_all_input_kinds_together(tmp_path: Path, html_file: Path, pages_jsonl: Path) -> None:
    gz = tmp_path / "pages.jsonl.gz"
    gz.write_bytes(gzip.compress(pages_jsonl.read_bytes()))
    warc = write_warc(tmp_path / "crawl.warc", PAGES, gzipped=False)
    warc_gz = write_warc(tmp_path / "crawl.warc.gz", PAGES[:2], gzipped=True)
    site = tmp_path / "site"
    (site / "sub").mkdir(parents=True)
    (site / "b.html").write_text(PAGES[1]["html"])
    (site / "sub" / "a.htm").write_text(PAGES[2]["html"])
    (site / "notes.txt").write_text("not html")
    result = invoke(
        "extract", str(html_file), str(pages_jsonl), str(gz), str(tmp_path / "crawl.warc"), str(tmp_path / "crawl.warc.gz"),
        str(site), str(tmp_path / "pag*.jsonl"), "-f", "text",
    )  # fmt: skip
    assert result.exit_code == 0
    ids = [r["id"] for r in jsonl(result.stdout)]
    page_ids = [p["id"] for p in PAGES]
    assert ids == (
        [str(html_file)] + page_ids + page_ids + [w["id"] for w in warc] + [w["id"] for w in warc_gz]
        + [str(site / "b.html"), str(site / "sub" / "a.htm")] + page_ids
    )  # fmt: skip
    urls = [r.get("url") for r in jsonl(result.stdout)]
    assert urls[7:10] == [w["url"] for w in warc]


def test_bad_records_each_give_an_error_record(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok1", "html": PAGES[0]["html"]}),
                "{this is not json",
                json.dumps({"id": "nohtml", "body": "x"}),
                json.dumps({"id": "junk", "html": "\x00\x01\x02\x7f\x00" * 50}),
                json.dumps({"id": "empty", "html": ""}),
                json.dumps({"id": "ok2", "html": PAGES[1]["html"]}),
            ]
        )
        + "\n"
    )
    result = invoke("extract", str(p), "-f", "text")
    assert result.exit_code == 0
    out = jsonl(result.stdout)
    assert [r["id"] for r in out] == ["ok1", f"{p}:2", "nohtml", "junk", "empty", "ok2"]
    assert [r["error"] is None for r in out] == [True, False, False, False, False, True]
    assert all(r["error"].startswith("InputFormatError: ") for r in out[1:5])


def test_binary_file_among_html_files(tmp_path: Path) -> None:
    (tmp_path / "a.html").write_text(PAGES[0]["html"])
    (tmp_path / "b.html").write_bytes(os.urandom(4000) + b"\x00")
    (tmp_path / "c.html").write_text(PAGES[1]["html"])
    out = jsonl(invoke("extract", str(tmp_path)).stdout)
    assert [os.path.basename(r["id"]) for r in out] == ["a.html", "b.html", "c.html"]
    assert [r["error"] is None for r in out] == [True, False, True]


def test_file_tree_output(tmp_path: Path, pages_jsonl: Path) -> None:
    bad = tmp_path / "more.jsonl"
    bad.write_text(json.dumps({"id": "pulpie/x", "html": ""}) + "\n")
    out = tmp_path / "out"
    result = invoke("extract", str(pages_jsonl), str(bad), "-o", str(out) + "/", "-f", "markdown")
    assert result.exit_code == 0
    index = jsonl((out / "index.jsonl").read_text())
    assert [e["id"] for e in index] == [p["id"] for p in PAGES] + ["pulpie/x"]
    files = [e["file"] for e in index]
    assert files[-1] is None and all(f and f.endswith(".md") for f in files[:-1])
    for entry in index[:-1]:
        assert (out / entry["file"]).read_text(encoding="utf-8").strip()
    assert [e["id"] for e in jsonl((out / "errors.jsonl").read_text())] == ["pulpie/x"]
    # an existing directory also selects the tree, and json files hold full records
    result = invoke("extract", str(pages_jsonl), "-o", str(out), "-f", "json")
    assert json.loads((out / files[0].replace(".md", ".json")).read_text())["labels"]


def test_workers_give_identical_output(tmp_path: Path) -> None:
    p = tmp_path / "many.jsonl"
    lines = [json.dumps({"id": f"{i}", "html": PAGES[i % 3]["html"]}) for i in range(10)]
    lines.insert(4, "{broken")
    p.write_text("\n".join(lines) + "\n")
    one = jsonl(invoke("extract", str(p), "-f", "json", "--workers", "1", "--batch-size", "3").stdout)
    two = jsonl(invoke("extract", str(p), "-f", "json", "--workers", "2", "--batch-size", "3").stdout)
    assert len(one) == 11 and strip_times(one) == strip_times(two)
    assert [r["id"] for r in two][3:6] == ["3", f"{p}:5", "4"]


def test_sample_pages() -> None:
    result = invoke("extract", "--sample", "--format", "markdown")
    out = jsonl(result.stdout)
    assert result.exit_code == 0 and len(out) == 3
    assert all(r["id"].startswith("samples/") and r["markdown"] and r["error"] is None for r in out)


def test_progress_forced(pages_jsonl: Path) -> None:
    result = invoke("extract", str(pages_jsonl), "--progress", "-f", "text")
    assert "3 pages" in result.stderr and "pages/s" in result.stderr and "0 errors" in result.stderr
    assert "pages/s" not in invoke("extract", str(pages_jsonl), "-f", "text").stderr  # not a TTY


# ------------------------------------------------------------------------------------ exit status 2


def test_cannot_run_exits_2(tmp_path: Path, pages_jsonl: Path, html_file: Path) -> None:
    cases = [
        (["extract", "-f", "text"], "no inputs"),
        (["extract", str(tmp_path / "missing.html")], "does not exist"),
        (["extract", str(tmp_path / "*.nothing")], "matches no files"),
        (["extract", str(pages_jsonl), "-o", str(tmp_path / "no" / "dir" / "o.jsonl")], "cannot write"),
        (["extract", str(pages_jsonl), "-o", str(tmp_path / "o.md")], "several pages"),
        (["extract", "--sample", str(html_file)], "--sample"),
        (["extract", str(pages_jsonl), "-o", str(pages_jsonl)], "also an input"),
    ]
    for args, message in cases:
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.stderr, (args, result.stderr)


# ------------------------------------------------------------------------------ console script


def test_console_script_subprocess(tmp_path: Path, pages_jsonl: Path) -> None:
    script = Path(sys.executable).with_name("extract-trt")
    if not script.exists():
        pytest.skip("console script not installed (pip install -e .)")
    out = tmp_path / "out.jsonl"
    proc = subprocess.run(
        [str(script), "extract", "--format", "text", str(pages_jsonl), str(out)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in jsonl(out.read_text())] == [p["id"] for p in PAGES]
    proc = subprocess.run(
        [str(script), "extract", "-", "-f", "text"], input=PAGES[2]["html"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() and proc.stderr == ""
    proc = subprocess.run([str(script), "extract", str(tmp_path / "nope")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_workers_auto_uses_the_available_cpus_for_more_than_one_batch() -> None:
    from extract_trt.cli.extract import _workers
    from extract_trt.runtime.io.batch import auto_workers, available_cpus

    assert auto_workers(1, 16, cpus=16) == 1  # a single page (or batch): no worker start-up
    assert auto_workers(40, 16, cpus=16) == 3  # no more workers than batches
    assert auto_workers(10_000, 16, cpus=16) == 16  # a big input: every core
    assert auto_workers(0, 16, cpus=4) == 1
    records = [{"id": str(i)} for i in range(5)]
    n, stream = _workers("auto", iter(records), 1, None)
    assert n == min(available_cpus(), 5) and list(stream) == records  # the peeked records are all still read
    assert _workers("auto", iter(records), 1, "cuda")[0] == 1  # one process holds the model on the GPU
    assert _workers("3", iter(records), None, None)[0] == 3
    for bad in ("0", "many"):
        with pytest.raises(typer.BadParameter):
            _workers(bad, iter(records), None, None)
    assert invoke("extract", "--sample", "-w", "nope").exit_code == 2
