"""Shard builders for the run-job tests: real pages from /work/shared/data written as WARC (warcio), JSONL
and Parquet shards, plus shards with broken records. Each builder returns the ids it wrote, in order."""

from __future__ import annotations

import gzip
import io
import json
from itertools import islice
from pathlib import Path

from io_fixtures import DATA, real_pages

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


def data_pages(n: int, name: str = "wcxb-dev") -> list[dict]:
    """The first ``n`` pages ``{"id", "html"}`` of a shared data set (the pulpie pages when it is missing)."""
    path = DATA / f"{name}.jsonl.gz"
    if not path.exists():
        return (real_pages(3) * n)[:n]
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [{"id": p["id"], "html": p["html"]} for p in map(json.loads, islice(f, n))]


def warc_shard(path: Path, payloads: list[tuple[str, bytes]], *, gzipped: bool = True) -> list[str]:
    """A WARC of HTTP 200 responses ``(content type, body)``, each preceded by its request record."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    ids = []
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=gzipped)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "extract-trt tests"}))
        for i, (ctype, body) in enumerate(payloads):
            url = f"https://example.org/{path.stem}/{i}"
            request = f"GET /{i} HTTP/1.1\r\nHost: example.org\r\n\r\n".encode()
            writer.write_record(writer.create_warc_record(url, "request", payload=io.BytesIO(request)))
            http = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
            record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
            writer.write_record(record)
            ids.append(record.rec_headers.get_header("WARC-Record-ID"))
    return ids


def html_warc(path: Path, pages: list[dict], *, gzipped: bool = True) -> list[str]:
    return warc_shard(path, [("text/html; charset=utf-8", p["html"].encode("utf-8")) for p in pages], gzipped=gzipped)


def jsonl_shard(path: Path, pages: list[dict]) -> list[str]:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for p in pages:
            f.write(json.dumps({"id": p["id"], "url": f"https://example.org/{p['id']}", "html": p["html"]}) + "\n")
    return [p["id"] for p in pages]


def parquet_shard(path: Path, pages: list[dict], html_field: str = "html") -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": [p["id"] for p in pages], html_field: [p["html"] for p in pages]}), path)
    return [p["id"] for p in pages]


def shard_set(root: Path, pages: list[dict]) -> dict[str, list[str]]:
    """Four shards of mixed formats (WARC.gz, plain WARC, JSONL.gz, Parquet) and an empty WARC, from
    ``pages`` split in four; returns {input path: ids in order}."""
    root.mkdir(parents=True, exist_ok=True)
    q = max(1, len(pages) // 4)
    parts = [pages[:q], pages[q : 2 * q], pages[2 * q : 3 * q], pages[3 * q :]]
    return {
        str(root / "a.warc.gz"): html_warc(root / "a.warc.gz", parts[0]),
        str(root / "b.warc"): html_warc(root / "b.warc", parts[1], gzipped=False),
        str(root / "c.jsonl.gz"): jsonl_shard(root / "c.jsonl.gz", parts[2]),
        str(root / "d.parquet"): parquet_shard(root / "d.parquet", parts[3]),
        str(root / "e-empty.warc.gz"): warc_shard(root / "e-empty.warc.gz", []),
    }


def broken_shards(root: Path, good: list[dict]) -> dict[str, dict]:
    """Shards with broken records; {path: {"ids": ids in order, "errors": {id: part of its error message}}}.

    * ``broken.warc.gz``: a page, a text/html record whose payload is a PNG, a page declared UTF-8 with
      invalid bytes (decoded with replacement: no error), another page;
    * ``cut.warc.gz``: three pages, the file cut inside the last record's gzip member;
    * ``badenc.jsonl.gz``: a page, a line that is not UTF-8, a page;
    * ``nulls.parquet``: a page and a null html value.
    """
    root.mkdir(parents=True, exist_ok=True)
    bad_utf8 = good[1]["html"].encode("utf-8").replace(b"<body", b"<body data-x='\xff\xfe\xc3'", 1)
    broken = warc_shard(
        root / "broken.warc.gz",
        [
            ("text/html; charset=utf-8", good[0]["html"].encode("utf-8")),
            ("text/html", PNG),
            ("text/html; charset=utf-8", bad_utf8),
            ("text/html; charset=utf-8", good[2]["html"].encode("utf-8")),
        ],
    )
    cut_ids = html_warc(root / "full.warc.gz", good[:3])
    data = (root / "full.warc.gz").read_bytes()
    last_member = data.rfind(b"\x1f\x8b\x08")  # the last response record's gzip member
    (root / "cut.warc.gz").write_bytes(data[: last_member + (len(data) - last_member) // 2])
    (root / "full.warc.gz").unlink()

    with gzip.open(root / "badenc.jsonl.gz", "wb") as f:
        f.write(json.dumps({"id": "ok-1", "html": good[0]["html"]}).encode() + b"\n")
        f.write(b'{"id": "latin1", "html": "caf\xe9 <p>not utf-8</p>"}\n')
        f.write(json.dumps({"id": "ok-2", "html": good[1]["html"]}).encode() + b"\n")

    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["p-ok", "p-null"], "html": [good[2]["html"], None]}), root / "nulls.parquet")
    latin1 = f"{root / 'badenc.jsonl.gz'}:2"  # a line that does not parse is named by its line number
    return {
        str(root / "broken.warc.gz"): {"ids": broken, "errors": {broken[1]: "content looks binary"}},
        str(root / "cut.warc.gz"): {"ids": cut_ids, "errors": {cut_ids[2]: "WARC record is truncated"}},
        str(root / "badenc.jsonl.gz"): {"ids": ["ok-1", latin1, "ok-2"], "errors": {latin1: "not valid JSON"}},
        str(root / "nulls.parquet"): {"ids": ["p-ok", "p-null"], "errors": {"p-null": "is null"}},
    }
