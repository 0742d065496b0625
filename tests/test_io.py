"""Readers and writers of extract_trt.runtime.io.records: every input kind, bad records, streaming, writers."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
import zlib
from pathlib import Path

import pytest
from io_fixtures import real_pages, write_warc

from extract_trt.errors import InputFormatError
from extract_trt.runtime.extractor import Result
from extract_trt.runtime.io.records import (
    FileTreeWriter,
    JsonlWriter,
    _decode_http_body,
    check_page,
    detect_format,
    iter_records,
    resolve_inputs,
    result_record,
    safe_name,
)

PAGES = real_pages(3)


def records(*inputs: str, **kw) -> list[dict]:
    return list(iter_records(list(inputs), **kw))


def write_jsonl(path: Path, lines: list, *, gz: bool = False) -> None:
    data = "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines).encode()
    path.write_bytes(gzip.compress(data) if gz else data)


# ------------------------------------------------------------------------------------ resolve_inputs


def test_resolve_errors(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match="no inputs"):
        resolve_inputs([])
    with pytest.raises(InputFormatError, match="does not exist"):
        resolve_inputs([str(tmp_path / "nope.html")])
    with pytest.raises(InputFormatError, match="matches no files"):
        resolve_inputs([str(tmp_path / "*.html")])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("x")
    with pytest.raises(InputFormatError, match="no .html"):
        resolve_inputs([str(tmp_path / "empty")])
    with pytest.raises(InputFormatError, match="more than once"):
        resolve_inputs(["-", "-"])


def test_directory_recursive_sorted_and_glob(tmp_path: Path) -> None:
    for rel in ["b.html", "a.htm", "sub/c.XHTML", "sub/deeper/d.html", "skip.txt", "sub/skip.json"]:
        p = tmp_path / "site" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("<p>x</p>")
    site = str(tmp_path / "site")
    got = resolve_inputs([site])
    assert got == sorted(got)
    assert [os.path.relpath(p, site) for p in got] == ["a.htm", "b.html", "sub/c.XHTML", "sub/deeper/d.html"]
    globbed = resolve_inputs([str(tmp_path / "site" / "**" / "*.html")])
    assert [os.path.relpath(p, site) for p in globbed] == ["b.html", "sub/deeper/d.html"]
    # a glob matching a directory expands it
    assert len(resolve_inputs([str(tmp_path / "si*")])) == 4


# ----------------------------------------------------------------------------------------- HTML files


def test_html_file_is_read_as_bytes(tmp_path: Path) -> None:
    p = tmp_path / "page.html"
    p.write_bytes(PAGES[0]["html"].encode("utf-8"))
    [rec] = records(str(p))
    assert rec["id"] == str(p) and rec["source"] == str(p) and rec["url"] is None
    assert rec["html"] == PAGES[0]["html"].encode("utf-8") and rec["format"] == "html"


def test_gzipped_html_and_unknown_extension(tmp_path: Path) -> None:
    body = PAGES[1]["html"].encode()
    (tmp_path / "a.html.gz").write_bytes(gzip.compress(body))
    (tmp_path / "page.txt").write_bytes(body)
    (tmp_path / "noext").write_bytes(gzip.compress(body))
    for name in ("a.html.gz", "page.txt", "noext"):
        [rec] = records(str(tmp_path / name))
        assert rec["html"] == body, name
        assert detect_format(str(tmp_path / name)) == "html"


def test_bad_html_files_give_error_records(tmp_path: Path) -> None:
    (tmp_path / "empty.html").write_bytes(b"")
    (tmp_path / "blank.html").write_bytes(b"  \n\t ")
    (tmp_path / "junk.html").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "pdf.html").write_bytes(b"%PDF-1.4\n\x00\x01\x02\x03stream")
    (tmp_path / "utf16.html").write_bytes("<p>hello</p>".encode("utf-16"))
    out = records(str(tmp_path))
    by_name = {os.path.basename(r["id"]): r for r in out}
    assert len(out) == 5
    assert "empty" in by_name["empty.html"]["error"]
    assert "whitespace" in by_name["blank.html"]["error"]
    assert by_name["junk.html"]["error"].startswith("InputFormatError: ") and "binary" in by_name["junk.html"]["error"]
    assert "binary" in by_name["pdf.html"]["error"]
    assert "error" not in by_name["utf16.html"]  # BOM'd UTF-16 is text


def test_max_bytes(tmp_path: Path) -> None:
    p = tmp_path / "big.html"
    p.write_bytes(b"<p>" + b"x" * 5000 + b"</p>")
    [rec] = records(str(p), max_bytes=1000)
    assert rec["error"].startswith("InputTooLargeError")
    assert "html" in records(str(p), max_bytes=None)[0]


def test_unreadable_file(tmp_path: Path) -> None:
    p = tmp_path / "x.html"
    p.write_text("<p>x</p>")
    p.chmod(0)
    try:
        if os.access(p, os.R_OK):  # running as root: permissions do not apply
            pytest.skip("file stays readable")
        [rec] = records(str(p))
        assert rec["error"].startswith("InputFormatError: cannot read")
    finally:
        p.chmod(0o644)


# ---------------------------------------------------------------------------------------------- JSONL


@pytest.mark.parametrize("name,gz", [("p.jsonl", False), ("p.jsonl.gz", True), ("p.json.gz", True), ("p.data", False)])
def test_jsonl_files(tmp_path: Path, name: str, gz: bool) -> None:
    lines = [{"id": p["id"], "url": f"https://x/{i}", "html": p["html"]} for i, p in enumerate(PAGES)]
    write_jsonl(tmp_path / name, lines, gz=gz)
    out = records(str(tmp_path / name))
    assert [r["id"] for r in out] == [p["id"] for p in PAGES]
    assert [r["html"] for r in out] == [p["html"] for p in PAGES]
    assert [r["url"] for r in out] == ["https://x/0", "https://x/1", "https://x/2"]
    assert all(r["format"] == "jsonl" and r["source"] == str(tmp_path / name) for r in out)


def test_jsonl_gzip_detected_by_magic(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "mislabelled.jsonl", [{"id": 1, "html": "<p>a</p>"}], gz=True)
    assert records(str(tmp_path / "mislabelled.jsonl"))[0]["html"] == "<p>a</p>"


def test_jsonl_ids_and_bad_lines(tmp_path: Path) -> None:
    p = tmp_path / "mixed.jsonl"
    write_jsonl(
        p,
        [
            {"id": 7, "html": "<p>seven</p>", "content_type": "text/html; charset=utf-8"},
            {"track_id": "t-1", "html": "<p>track</p>"},
            {"html": "<p>no id</p>"},
            "",  # blank line: skipped
            "{not json",
            {"id": "nohtml", "text": "x"},
            {"id": "num", "html": 42},
            {"id": "empty", "html": ""},
            {"id": "junk", "html": "\x00\x01\x02\x03" * 10},
            "[1, 2]",
            {"id": "last", "html": "<p>last</p>"},
        ],
    )
    out = records(str(p))
    assert [r["id"] for r in out] == ["7", "t-1", f"{p}:3", f"{p}:5", "nohtml", "num", "empty", "junk", f"{p}:10", "last"]
    ok = [r for r in out if "error" not in r]
    assert [r["id"] for r in ok] == ["7", "t-1", f"{p}:3", "last"]
    assert out[0]["content_type"] == "text/html; charset=utf-8"
    errors = {r["id"]: r["error"] for r in out if "error" in r}
    assert "not valid JSON" in errors[f"{p}:5"]
    assert "no 'html' field" in errors["nohtml"]
    assert "not a string" in errors["num"]
    assert "empty" in errors["empty"]
    assert "binary" in errors["junk"]
    assert "not an object" in errors[f"{p}:10"]
    assert all(e.startswith("InputFormatError: ") for e in errors.values())
    assert all("html" not in r for r in out if "error" in r)


def test_jsonl_html_field_option(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "x.jsonl", [{"id": "a", "raw": "<p>a</p>"}])
    assert records(str(tmp_path / "x.jsonl"), html_field="raw")[0]["html"] == "<p>a</p>"


def test_jsonl_invalid_utf8_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"id": "a", "html": "<p>a</p>"}\n{"id": "b", "html": "\xff\xfe"}\n{"id": "c", "html": "<p>c</p>"}\n')
    out = records(str(p))
    assert [r.get("error") is None for r in out] == [True, False, True]


def test_truncated_jsonl_gz(tmp_path: Path) -> None:
    data = gzip.compress("".join(json.dumps({"id": i, "html": "<p>%d</p>" % i * 200}) + "\n" for i in range(50)).encode())
    p = tmp_path / "cut.jsonl.gz"
    p.write_bytes(data[: len(data) // 2])
    out = records(str(p))
    assert out[-1]["error"].startswith("InputFormatError:") and "truncated" in out[-1]["error"]
    assert all("html" in r for r in out[:-1]) and len(out) >= 2


# ----------------------------------------------------------------------------------------------- stdin


def test_stdin_html() -> None:
    body = PAGES[0]["html"].encode()
    [rec] = records("-", stdin=io.BytesIO(body))
    assert rec == {"id": "-", "url": None, "source": "-", "format": "html", "html": body}


def test_stdin_jsonl_plain_and_gzip() -> None:
    data = "".join(json.dumps({"html": p["html"]}) + "\n" for p in PAGES).encode()
    for blob, first_line in ((b"\n  " + data, 2), (gzip.compress(data), 1)):
        out = records("-", stdin=io.BytesIO(blob))
        assert [r["id"] for r in out] == [f"stdin:{first_line + i}" for i in range(3)]
        assert [r["html"] for r in out] == [p["html"] for p in PAGES]


def test_stdin_is_streamed() -> None:
    """Records come out before the input ends: an endless stdin still yields the first records."""

    class Endless(io.RawIOBase):
        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:  # type: ignore[override]
            line = b'{"html": "<p>again and again</p>"}\n'
            n = min(len(b), len(line))
            b[:n] = line[:n]
            return n

    first = list(itertools.islice(iter_records(["-"], stdin=io.BufferedReader(Endless())), 5))
    assert len(first) == 5 and all(r["html"] == "<p>again and again</p>" for r in first)


# ------------------------------------------------------------------------------------------------ WARC


@pytest.mark.parametrize("name,gz", [("crawl.warc", False), ("crawl.warc.gz", True), ("crawl.bin", True)])
def test_warc(tmp_path: Path, name: str, gz: bool) -> None:
    expected = write_warc(tmp_path / name, PAGES, gzipped=gz)
    out = records(str(tmp_path / name))
    assert [r["id"] for r in out] == [e["id"] for e in expected]
    assert [r["url"] for r in out] == [e["url"] for e in expected]
    assert [r["html"] for r in out] == [e["html"] for e in expected]
    assert [r["content_type"] for r in out] == [e["content_type"] for e in expected]
    assert all(r["format"] == "warc" and r["id"].startswith("<urn:uuid:") for r in out)


def test_warc_on_stdin(tmp_path: Path) -> None:
    expected = write_warc(tmp_path / "c.warc.gz", PAGES[:2], gzipped=True)
    out = records("-", stdin=io.BytesIO((tmp_path / "c.warc.gz").read_bytes()))
    assert [r["id"] for r in out] == [e["id"] for e in expected]


def test_warc_truncated(tmp_path: Path) -> None:
    write_warc(tmp_path / "c.warc.gz", PAGES, gzipped=True)
    data = (tmp_path / "c.warc.gz").read_bytes()
    (tmp_path / "cut.warc.gz").write_bytes(data[: int(len(data) * 0.6)])
    out = records(str(tmp_path / "cut.warc.gz"))
    assert 1 <= len(out) <= 4  # never raises; what fastwarc can read comes out, in order


def test_http_body_decoding() -> None:
    html = b"<p>hello</p>"
    assert _decode_http_body(gzip.compress(html), None, "gzip", None) == html
    assert _decode_http_body(zlib.compress(html), None, "deflate", None) == html
    assert _decode_http_body(b"5\r\n<p>he\r\n7\r\nllo</p>\r\n0\r\n\r\n", "chunked", None, None) == html
    assert _decode_http_body(html, "chunked", "gzip", None) == html  # stored decoded: kept


def test_check_page() -> None:
    assert check_page("<p>ok</p>") is None
    assert check_page(b"<p>ok</p>") is None
    assert isinstance(check_page(""), InputFormatError)
    assert isinstance(check_page(b"\x89PNG\r\n\x1a\n\x00\x00"), InputFormatError)


# --------------------------------------------------------------------------------------------- writers


def _results() -> list[Result]:
    return [
        Result(id="a/x.html", url="https://a/", main_html="<p>A</p>", markdown="A", text="A", labels=["main"], n_blocks=1, labeler="t", timings={"label": 0.5}),
        Result(id="bad", url=None, error="InputFormatError: page is empty"),
        Result(id="b/x.html", url=None, main_html="<p>B é</p>", markdown="B é", text="B é", labels=["main", "other"], n_blocks=2, labeler="t"),
    ]


@pytest.mark.parametrize("fmt,field", [("text", "text"), ("markdown", "markdown"), ("html", "main_html")])
def test_jsonl_writer(tmp_path: Path, fmt: str, field: str) -> None:
    path = tmp_path / "out.jsonl"
    with JsonlWriter(str(path), fmt) as w:
        for r in _results():
            w.write(r)
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["a/x.html", "bad", "b/x.html"]
    assert list(lines[0]) == ["id", "url", field, "error", "seconds"]
    assert list(lines[1]) == ["id", field, "error", "seconds"]  # no url known
    assert lines[0][field] == _results()[0].content(fmt) and lines[0]["seconds"] == 0.5
    assert lines[1]["error"] == "InputFormatError: page is empty"
    assert "é" in path.read_text(encoding="utf-8")  # not \u-escaped


def test_jsonl_writer_json_and_gzip(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl.gz"
    with JsonlWriter(str(path), "json") as w:
        for r in _results():
            w.write(r)
    lines = [json.loads(line) for line in gzip.open(path, "rt", encoding="utf-8")]
    keys = ["id", "url", "main_html", "markdown", "text", "labels", "n_blocks", "labeler", "timings", "error", "metadata"]
    assert all(list(line) == keys for line in lines)
    assert lines[2]["labels"] == ["main", "other"]


def test_jsonl_writer_unwritable(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        JsonlWriter(str(tmp_path / "missing-dir" / "out.jsonl"), "text")
    with pytest.raises(ValueError):
        JsonlWriter(str(tmp_path / "o.jsonl"), "yaml")


def test_file_tree_writer(tmp_path: Path) -> None:
    out = tmp_path / "tree"
    with FileTreeWriter(out, "markdown") as w:
        names = [w.write(r) for r in _results()]
    assert names == ["x.md", None, "x-2.md"]
    assert (out / "x.md").read_text(encoding="utf-8") == "A"
    assert (out / "x-2.md").read_text(encoding="utf-8") == "B é"
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert errors == [{"id": "bad", "url": None, "error": "InputFormatError: page is empty"}]
    index = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]
    assert [e["file"] for e in index] == ["x.md", None, "x-2.md"]
    assert sorted(p.name for p in out.iterdir()) == ["errors.jsonl", "index.jsonl", "x-2.md", "x.md"]  # no temp files


def test_file_tree_json(tmp_path: Path) -> None:
    with FileTreeWriter(tmp_path, "json") as w:
        w.write(_results()[0])
    assert json.loads((tmp_path / "x.json").read_text())["labels"] == ["main"]


def test_safe_name() -> None:
    assert safe_name("<urn:uuid:1234-abcd>") == "1234-abcd"
    assert safe_name("https://example.org/a/b.html?q=1") == "example.org_a_b.html_q_1"
    assert safe_name("https://example.org/a/index.html") == "example.org_a_index"
    assert safe_name("/tmp/dir/page.HTM") == "page"
    assert safe_name("pulpie/01_article_pg") == "01_article_pg"
    assert safe_name("..") == "page" and safe_name(None) == "page" and safe_name("") == "page"
    assert safe_name("a b/c:d*e") == "c_d_e"
    long = safe_name("x" * 500)
    assert len(long) == 80 and long != safe_name("x" * 499)


def test_result_record_rounding() -> None:
    r = Result(id="a", timings={"decode": 0.1234567891, "label": 1.0})
    assert result_record(r, "text")["seconds"] == round(1.1234567891, 6)
