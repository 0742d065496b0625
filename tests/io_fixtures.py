"""Shared builders for the I/O and CLI tests: real pages from /work/shared/data, WARCs via warcio."""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path

DATA = Path(os.environ.get("EXTRACT_TRT_DATA", "/work/shared/data"))
PULPIE = DATA / "pulpie-pages.jsonl.gz"

# Used when the shared data is not mounted: small but real-looking pages.
_FALLBACK = [
    {
        "id": f"fallback/{i}",
        "html": f"<html><head><title>Page {i}</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<article><h1>Heading {i}</h1><p>{'Some real sentence about topic %d. ' % i * 12}</p>"
        f"<p>Second paragraph with more words for page {i}, long enough to be content.</p></article>"
        "<footer>Copyright</footer></body></html>",
    }
    for i in range(3)
]


# Pages with real main content (pulpie/07 is a 404 page and yields nothing); smallest first.
PREFERRED = ("pulpie/09_istio_io", "pulpie/02_nodejs_dev", "pulpie/11_tutorialspoint_com")


def real_pages(n: int = 3) -> list[dict]:
    """``n`` (<= 3) small real pages ``{"id", "html"}`` from the pulpie set (Apache-2.0)."""
    if not PULPIE.exists():
        return _FALLBACK[:n]
    with gzip.open(PULPIE, "rt", encoding="utf-8") as f:
        pages = {p["id"]: p for p in map(json.loads, f)}
    return [{"id": pid, "html": pages[pid]["html"]} for pid in PREFERRED[:n]]


def write_warc(path: Path, pages: list[dict], *, gzipped: bool) -> list[dict]:
    """Write ``pages`` as HTML responses, plus records that must be skipped; return the expected
    ``[{"id", "url", "html" (bytes), "content_type"}]`` in order."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    expected = []
    with open(path, "wb") as out:
        writer = WARCWriter(out, gzip=gzipped)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "test"}))
        for i, page in enumerate(pages):
            url = f"https://example.org/{i}"
            body = page["html"].encode("utf-8")
            ctype = "text/html; charset=utf-8" if i % 2 == 0 else "application/xhtml+xml"
            req = writer.create_warc_record(
                url, "request", payload=io.BytesIO(f"GET /{i} HTTP/1.1\r\nHost: example.org\r\n\r\n".encode())
            )
            writer.write_record(req)
            http = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
            rec = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http)
            writer.write_record(rec)
            expected.append(
                {"id": rec.rec_headers.get_header("WARC-Record-ID"), "url": url, "html": body, "content_type": ctype}
            )
            if i == 0:  # a non-HTML response between HTML ones: skipped
                png = StatusAndHeaders("200 OK", [("Content-Type", "image/png")], protocol="HTTP/1.1")
                writer.write_record(
                    writer.create_warc_record(
                        "https://example.org/logo.png", "response", payload=io.BytesIO(b"\x89PNG\r\n\x1a\n\0\0"), http_headers=png
                    )
                )
    return expected
