"""bench/era_pages.py's rewrite: the markup of 2005-2012 sites around the same text."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import lxml.html

BENCH = Path(__file__).resolve().parents[1] / "bench"
_spec = importlib.util.spec_from_file_location("era_pages", BENCH / "era_pages.py")
era_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(era_pages)

PAGE = """<html><head><title>t</title></head><body>
<header role="banner"><nav><a href="/">Home</a> <a href="/news">News</a></nav></header>
<div id="page">lead text<div class="menu"><ul><li>Sports</li></ul></div>
<div class="story"><main><article><h1>Headline</h1><p>First paragraph of the story.</p>
<figure><img src="a.jpg"><figcaption>A caption</figcaption></figure></article></main></div>
<p>loose paragraph</p> tail text</div>
<footer>Imprint</footer></body></html>"""


def _words(html: str) -> list[str]:
    return lxml.html.document_fromstring(html).text_content().split()


def test_tables_form_keeps_the_text_and_leaves_no_landmark():
    out = era_pages.rewrite(PAGE, "tables")
    root = lxml.html.document_fromstring(out)
    assert _words(out) == _words(PAGE)
    assert not [e for e in root.iter() if isinstance(e.tag, str) and e.tag in era_pages.SECTIONING]
    assert not [e for e in root.iter() if isinstance(e.tag, str) and "role" in e.attrib]
    (table,) = root.iter("table")  # div#page: the one div holding two divs
    cells = table.findall("./tbody/tr/td")
    assert [c.get("class") for c in cells] == [None, "menu", "story", None]  # lead text, two divs, the <p> wrapped
    assert cells[0].text == "lead text" and cells[3].find("p").tail.strip() == "tail text"


def test_html4_form_renames_without_tables_and_as_is_returns_the_input():
    out = era_pages.rewrite(PAGE, "html4")
    root = lxml.html.document_fromstring(out)
    assert _words(out) == _words(PAGE)
    assert not list(root.iter("table")) and not list(root.iter("nav"))
    assert era_pages.rewrite(PAGE, "as is") is PAGE
    assert era_pages.rewrite("", "tables") == ""  # lxml cannot parse it: the page as it is


def test_nested_layout_divs_stay_in_their_cells():
    # a column that is itself laid out in columns: a table straight inside a row would be moved out of the
    # table by any HTML parser (foster parenting), scrambling the page's order
    page = (
        "<html><body><div id='outer'><div id='left'><div>one</div><div>two</div></div>"
        "<div id='right'>three</div> four</div></body></html>"
    )
    out = era_pages.rewrite(page, "tables")
    root = lxml.html.document_fromstring(out)
    assert len(list(root.iter("table"))) == 2
    assert all(t.getparent().tag in ("td", "body") for t in root.iter("table"))
    assert not [e for e in root.iter("tr") if e.text and e.text.strip()]
    reparsed = lxml.html.document_fromstring(lxml.html.tostring(root, encoding="unicode"))
    assert [t.strip() for t in reparsed.itertext() if t.strip()] == ["one", "two", "three", "four"]


def test_text_after_an_early_closing_html_tag_stays_in_every_form():
    # a theme's header template that ends in </body></html>, the story after it: a browser (and our parser)
    # reads on into the body, libxml2 drops what follows </html>
    page = "<html><body><header>Menu</header></body></html>\n<div><h1>Story</h1><p>Text after the tags.</p></div>"
    for form in ("reparsed", "html4", "tables"):
        root = lxml.html.document_fromstring(era_pages.rewrite(page, form))
        assert " ".join(" ".join(root.itertext()).split()) == "Menu Story Text after the tags.", form
