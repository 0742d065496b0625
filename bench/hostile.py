"""A hostile corpus of 150+ inputs, run through ``extract-trt extract`` with 1 and 2 workers: records in,
rows out, unsafe outputs after rendering (each Markdown output rendered by markdown-it-py with raw HTML on:
``tests/markdown_render.py``), peak memory of the process tree, worst page time and wall time.

    python bench/hostile.py                  # builds the corpus in a temp dir, runs -w 1 and -w 2
    python bench/hostile.py --workers 1 --keep /tmp/hostile
    python bench/hostile.py --supervision-cost 300   # real pages: in process vs one supervised worker

The corpus is written from general categories, not from the tests' pages: deep nesting behind every
tokenizer state that hides markup, attribute floods, formatting-element reconstruction bombs, hostile
ids (lone surrogates, NUL, control characters, huge, non-string), hostile characters in the HTML,
charsets (UTF-16 without BOM, stray bytes in UTF-8), binary, broken WARC/gzip, and pages whose output
would be huge. Inputs: one JSONL file (``text`` pages and ids), one HTML file per byte-level page, and
a few WARC files. Every JSONL line and HTML file must give one row (``page_records_in`` = ``page_rows``);
every WARC record gives a row or is counted in the CLI's "skipped" note (``warc_skipped``), and a file
cut or corrupt gives one error row for its tail (``warc_tail_errors``).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from markdown_render import markdown_violations  # noqa: E402

# ── the corpus ──────────────────────────────────────────────────────────────────

HIDERS = {
    "none": "",
    "comment-empty": "<!-->",
    "comment-dash": "<!--->",
    "svg-title": "<svg><title>",
    "svg-script": "<svg><script>",
    "svg-style": "<svg><style>",
    "math-style": "<math><style>",
    "math-title": "<math><mi><title>",
    "attr-comment": '<p title="<!--">',
    "attr-script": "<p title='<script>'>",
    "noscript": "<noscript>",
    "template": "<template>",
    "bogus-comment": "<!x>",
    "pi": "<?x>",
    "cdata-svg": "<svg><![CDATA[x]]>",
}
NESTERS = {"div": "<div>", "blockquote": "<blockquote>", "table": "<table><tr><td>"}
TAIL = "x --></title></script></style></noscript></template>"


def text_pages() -> list[tuple[str, str]]:
    pages: list[tuple[str, str]] = []
    for hider, prefix in HIDERS.items():
        for nester, tag in NESTERS.items():
            for n in (25_000, 90_000) if nester != "table" else (5_000,):
                pages.append((f"deep/{hider}/{nester}-{n}", "<p>Intro.</p>" + prefix + tag * n + TAIL))
    forms = {
        "valueless": "a{i}",
        "quoted": 'a{i}="v"',
        "quoted-gt": 'a{i}=">"',
        "quoted-lt": 'a{i}="<"',
        "unquoted": "a{i}=v",
        "no-space": 'a{i}="v"',
    }
    for name, form in forms.items():
        sep = "" if name == "no-space" else " "
        for n in (1_000, 10_000, 100_000):
            pages.append((f"attrs/{name}-{n}", "<p " + sep.join(form.format(i=i) for i in range(n)) + ">x</p>"))
    for elem in ("b", "a", "font", "nobr", "i"):
        attr = "href" if elem == "a" else "id"
        for n in (300, 800, 1_500):
            opened = "".join(f"<{elem} {attr}=x{i}>" for i in range(n))
            pages.append((f"reconstruct/{elem}-{n}", f"<body><p>{opened}</p>" + "<p>x</p>" * n))
    text = "<p>The committee published its report on the river restoration project.</p>"
    pages += [
        ("chars/surrogate-in-text", f"<p>a \ud800 b \udfff c</p>{text}"),
        ("chars/nul-in-text", f"<p>a\x00b</p>{text}"),
        ("chars/controls", f"<p>{''.join(map(chr, range(1, 32)))}</p>{text}"),
        ("chars/bidi", f"<p>\u202eevil\u202c text</p>{text}"),
        ("chars/nonchars", f"<p>\ufffe\uffff\U0010ffff</p>{text}"),
        ("chars/entities-bad", f"<p>&#xD800; &#0; &#x110000; &#x80;</p>{text}"),
        ("output/plaintext-tags", "<p>Intro.</p><plaintext>" + "<div>" * 60_000),
        ("output/xmp-tags", "<xmp>" + "<b>&amp;" * 60_000 + "</xmp>"),
        ("output/ampersands", "<p>" + "&" * 500_000 + "</p>"),
        ("output/entities", "<p>" + "&lt;" * 200_000 + "</p>"),
        ("output/siblings", "<div>" + "<p>p</p>" * 50_000 + "</div>"),
        ("output/wrapped-breaks", "<p>" + "<span>x</span><span><br> </span>" * 50_000 + "</p>"),
        ("output/formulas", "<p>" + '<span><math alttext="x">x</math></span><b aria-hidden="true">x</b>' * 50_000),
        ("output/nested-formulas", "<p>" + "<math><mrow>" * 20_000 + "x" + "</mrow></math>" * 20_000 + "</p>"),
        ("metadata/json-ld-deep", '<script type="application/ld+json">' + '{"a":' * 50_000 + "1" + "}" * 50_000 + "</script>" + text),
        ("metadata/json-ld-list", '<script type="application/ld+json">[' + ",".join(['{"@type":"Thing"}'] * 300_000) + "]</script>" + text),
        ("output/long-word", "<p>" + "x" * 2_000_000 + "</p>"),
        ("output/long-class-runs", '<div class="' + "c" * 1_000_000 + '">' + "line<br>" * 50_000 + "</div>"),
        ("blocks/long-class-paragraphs", '<div class="' + "c" * 100_000 + '">' + "<p>para</p>" * 50_000 + "</div>"),
        ("blocks/deep-quotes", "".join(f"<blockquote><p>level {i}</p>" for i in range(9_000))),
        ("blocks/deep-lines", "<div>" * 8_000 + "line<br>" * 40_000),
        ("blocks/nested-replies", f"{text}<div id=comments>" + '<div class="comments"><p>A reply.</p>' * 8_000),
        ("plaintext/all-tags-after", "<plaintext>" + "<div><p>" * 40_000),
        ("plaintext/early", "<p>a</p><plaintext></plaintext><div>" * 10_000),
        ("misc/only-comment", "<!--" + "<div>" * 30_000),
        ("misc/unclosed-script", "<script>" + "<div>" * 30_000),
        ("misc/unclosed-title", "<title>" + "<div>" * 30_000),
        ("misc/select-soup", "<select>" + "<option><div>" * 20_000),
        ("misc/select-options", "<select>" + "<option>x" * 200_000),
        ("misc/frameset", "<frameset>" + "<frame>" * 20_000),
        ("misc/nested-templates", "<template>" * 20_000 + "x"),
        ("misc/nested-svg", "<svg>" * 30_000),
        ("misc/nested-tables", "<table>" * 20_000),
        ("misc/li-run", "<ul>" + "<li>" * 50_000),
        ("misc/empty", ""),
        ("misc/whitespace", " \n\t" * 100),
    ]
    return pages


def hostile_ids() -> list[str]:
    """JSONL lines whose ids (and fields) are hostile; the HTML is an ordinary paragraph."""
    html = "<p>The committee published its report on the river restoration project.</p>"
    ids = ['"x\\ud800"', '"\\udc00"', '"a\\u0000b"', '"\\u0001\\u001f\\u007f"', json.dumps("i" * 1_000_000),
           "7", "1.50", "1e400", "9" * 5000, "true", "null", '{"a": 1}', "[1, 2]", '""', '"line\\nbreak"',
           '"\\u202eevil"', '"../../etc/passwd"', '"con"', '"a/b\\\\c"']  # fmt: skip
    lines = [f'{{"id": {rid}, "html": {json.dumps(html)}}}' for rid in ids]
    lines.append('{"id": "url-surrogate", "url": "http://x/\\ud800", "html": "<p>x</p>"}')
    lines.append('{"id": "html-not-string", "html": 42}')
    lines.append('{"id": "deep-json", "html": ' + "[" * 100_000 + "]" * 100_000 + "}")
    lines.append("not json at all")
    lines.append('{"id": "truncated", "html": "<p>')
    return lines


def byte_pages() -> list[tuple[str, bytes]]:
    doc = "<html><head><meta charset=utf-8></head><body><p>Gr\u00fc\u00dfe aus K\u00f6ln \u6771\u4eac, a report on rivers.</p></body></html>"
    return [
        ("utf16le-nobom", doc.replace("utf-8", "utf-16").encode("utf-16-le")),
        ("utf16be-nobom", doc.replace("utf-8", "utf-16").encode("utf-16-be")),
        ("utf16-bom", doc.encode("utf-16")),
        ("utf8-stray-bytes", doc.encode().replace("K\u00f6ln".encode(), b"K\xf6ln")),
        ("utf8-declared-cp1251", doc.replace("K\u00f6ln \u6771\u4eac", "\u041c\u043e\u0441\u043a\u0432\u0430 " * 50).encode("cp1251", "replace")),
        ("nul-in-head", b"<p>a\x00b</p>" + doc.encode()),
        ("utf7-declared", b'<meta charset="utf-7"><p>+ADw-script+AD4-alert(1)+ADw-/script+AD4-</p>'),
        ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4),
        ("random", bytes((i * 7919 + 13) % 256 for i in range(8192))),
        ("gzip-bytes", gzip.compress(doc.encode())),
        ("latin1-undeclared", doc.replace("<meta charset=utf-8>", "").encode("latin-1", "replace")),
        ("bom-only", b"\xef\xbb\xbf"),
    ]


def warc_files(root: Path) -> list[Path]:
    """WARCs: broken gzip members, non-HTML and odd records, bad content codings."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    page = b"<html><body><p>The committee published its report on the river restoration project.</p></body></html>"

    def write(path: Path, records: list[tuple[str, bytes, list[tuple[str, str]]]]) -> bytes:
        buf = io.BytesIO()
        writer = WARCWriter(buf, gzip=True)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "hostile"}))
        for i, (ctype, body, extra) in enumerate(records):
            http = StatusAndHeaders("200 OK", [("Content-Type", ctype), *extra], protocol="HTTP/1.1")
            url = f"https://example.com/{path.stem}/{i}"
            request = io.BytesIO(f"GET /{i} HTTP/1.1\r\nHost: example.com\r\n\r\n".encode())
            writer.write_record(writer.create_warc_record(url, "request", payload=request))
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http))
        return buf.getvalue()

    normal = [("text/html; charset=utf-8", page, [])] * 3
    files = []
    data = write(root / "ok.warc.gz", normal + [("image/png", b"\x89PNG", []), ("application/json", b"{}", [])])
    (root / "ok.warc.gz").write_bytes(data)
    files.append(root / "ok.warc.gz")
    last = data.rindex(b"\x1f\x8b\x08")
    for name, cut in (("cut-gzip-header", last + 5), ("cut-gzip-body", last + (len(data) - last) // 2), ("cut-mid-file", len(data) // 2)):
        (root / f"{name}.warc.gz").write_bytes(data[:cut])
        files.append(root / f"{name}.warc.gz")
    (root / "garbage-member.warc.gz").write_bytes(data[:last] + b"\x1f\x8b\x08\x00garbage" + data[last:])
    files.append(root / "garbage-member.warc.gz")
    odd = [
        ("text/html", gzip.compress(page)[:-8], [("Content-Encoding", "gzip")]),
        ("text/html", b"zz\r\n" + page, [("Transfer-Encoding", "chunked")]),
        ("text/html", b"", []),
        ("application/xhtml+xml", page, []),
        ("text/html", page.replace(b"<p>", b"<p>" + b"<div>" * 50_000), []),
    ]
    (root / "odd.warc.gz").write_bytes(write(root / "odd.warc.gz", odd))
    files.append(root / "odd.warc.gz")
    return files


def build(root: Path) -> tuple[list[str], int]:
    """Write the corpus under ``root``; (inputs for the CLI, number of page records: JSONL lines + HTML files)."""
    root.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"id": name, "html": html}) for name, html in text_pages()] + hostile_ids()
    (root / "pages.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    inputs = [str(root / "pages.jsonl")]
    for name, data in byte_pages():
        (root / f"{name}.html").write_bytes(data)
        inputs.append(str(root / f"{name}.html"))
    inputs += [str(p) for p in warc_files(root)]
    return inputs, len(lines) + len(byte_pages())


# ── the run ─────────────────────────────────────────────────────────────────────


def run(inputs: list[str], out: Path, workers: int) -> dict:
    cmd = [sys.executable, "-c", "import sys; from extract_trt.cli import main; sys.exit(main())"]
    cmd += ["extract", *inputs, "-o", str(out), "-f", "markdown", "--metadata", "-w", str(workers)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        root = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                tree = [root, *root.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree))
            except psutil.Error:
                pass
            time.sleep(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, stderr = proc.communicate()
    stop.set()
    sampler.join()
    wall = time.perf_counter() - start
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    skipped = 0
    for line in stderr.splitlines():
        if "skipped (no output row)" in line:
            counts = line.split("skipped (no output row):", 1)[1].split(",")
            skipped = sum(int(part.strip().split(" ", 1)[0].replace(",", "")) for part in counts)
    warc_rows = [r for r in rows if str(r["id"]).startswith("<urn:") or ".warc.gz#" in str(r["id"])]
    worst = max(rows, key=lambda r: r.get("seconds") or 0)
    errors: dict[str, int] = {}
    for r in rows:
        if r.get("error"):
            kind = r["error"].split(":", 1)[0]
            errors[kind] = errors.get(kind, 0) + 1
    unsafe = sum(bool(markdown_violations(r.get("markdown") or "")) for r in rows)
    return {"workers": workers, "rc": proc.returncode, "rows": len(rows), "page_rows": len(rows) - len(warc_rows),
            "unsafe_after_render": unsafe,
            "warc_rows": len(warc_rows), "warc_tail_errors": sum(".warc.gz#" in str(r["id"]) for r in warc_rows),
            "warc_skipped": skipped, "wall_s": round(wall, 1),
            "peak_rss_mb": round(peak / 2**20), "worst_page_s": round(worst.get("seconds") or 0, 2),
            "worst_page": str(worst.get("id"))[:60], "errors": errors, "stderr_tail": stderr.strip().splitlines()[-2:]}  # fmt: skip


def supervision_cost(pages: int, rounds: int) -> None:
    """Pages/s on real WCXB pages (built-in model), one process vs one supervised worker, rounds alternated
    so that load on the machine hits both alike; the worker's start is counted (it is part of a run)."""
    from extract_trt.runtime.io.batch import run as run_pages

    data = Path(__file__).resolve().parents[2] / "shared" / "data" / "wcxb-dev.jsonl.gz"
    records = []
    with gzip.open(data, "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            records.append({"id": str(len(records)), "html": obj["html"]})
            if len(records) >= pages:
                break
    kwargs = {"output": ("markdown",)}
    best = {False: float("inf"), True: float("inf")}
    for _ in range(rounds):
        for supervised in (False, True):
            start = time.perf_counter()
            n = sum(1 for _ in run_pages(records, workers=1, supervised=supervised, extractor_kwargs=kwargs))
            best[supervised] = min(best[supervised], time.perf_counter() - start)
            assert n == len(records)
    for supervised, seconds in best.items():
        label = "one supervised worker" if supervised else "in process"
        print(f"{label:22} {len(records)} pages: {len(records) / seconds:6.1f} pages/s (best of {rounds}, start included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    parser.add_argument("--keep", help="build the corpus here (kept) instead of a temp dir")
    parser.add_argument("--supervision-cost", type=int, metavar="PAGES", help="only measure the supervised worker's cost")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.supervision_cost:
        supervision_cost(args.supervision_cost, args.rounds)
        return
    root = Path(args.keep or tempfile.mkdtemp(prefix="extract-trt-hostile-"))
    inputs, n_pages = build(root)
    n_warc = sum(p.endswith(".warc.gz") for p in inputs)
    print(f"corpus: {n_pages} page records + {n_warc} WARC files, {len(inputs)} inputs under {root}", flush=True)
    for workers in args.workers:
        row = run(inputs, root / f"out-w{workers}.jsonl", workers)
        print(json.dumps({"page_records_in": n_pages, **row}), flush=True)


if __name__ == "__main__":
    main()
