"""convert: Markdown (html2text) for the product, the exact WebMainBench converter, and plain text."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import html2text
import pytest

from extract_trt.runtime.html.convert import benchmark_markdown, remove_spacer_images, to_markdown, to_text

WEBMAINBENCH = Path("/work/shared/data/webmainbench-sample.jsonl.gz")

ARTICLE = """
<article>
  <h1>Main title</h1>
  <p>First paragraph with a <a href="https://example.com/page">link</a> and <b>bold</b> text.</p>
  <h2>Section</h2>
  <ul><li>apple</li><li>banana</li></ul>
  <ol><li>one</li><li>two</li></ol>
  <p><img src="https://example.com/photo.jpg" alt="A photo"></p>
  <table>
    <tr><th>Name</th><th>Age</th></tr>
    <tr><td>Ann</td><td>31</td></tr>
  </table>
  <pre><code>def f(x):
    return x + 1</code></pre>
  <p>Inline <code>code()</code> here.</p>
</article>
"""


# --- to_markdown ------------------------------------------------------------------------------------------


def test_markdown_structure() -> None:
    md = to_markdown(ARTICLE)
    assert md.startswith("# Main title")
    assert "## Section" in md
    assert "* apple" in md and "* banana" in md
    assert "1. one" in md and "2. two" in md
    assert "[link](<https://example.com/page>)" in md
    assert "**bold**" in md
    assert "![A photo](<https://example.com/photo.jpg>)" in md
    assert "| Name | Age |\n| --- | --- |\n| Ann | 31 |" in md  # a GFM pipe table
    assert "```\ndef f(x):\n    return x + 1\n```" in md
    assert "`code()`" in md
    assert md == md.strip()
    assert "\n\n\n" not in md


def test_markdown_links_off() -> None:
    md = to_markdown(ARTICLE, links=False)
    assert "https://example.com/page" not in md
    assert "link" in md
    assert "![A photo](<https://example.com/photo.jpg>)" in md


def test_markdown_images_off() -> None:
    md = to_markdown(ARTICLE, images=False)
    assert "photo.jpg" not in md and "![" not in md
    assert "[link](<https://example.com/page>)" in md


def test_markdown_links_and_images_off() -> None:
    md = to_markdown(ARTICLE, links=False, images=False)
    assert "](" not in md
    assert "First paragraph with a link and **bold** text." in md


def test_markdown_keeps_unicode() -> None:
    md = to_markdown("<p>Café — “quotes” &amp; 北京&nbsp;x</p>")
    assert md == "Café — “quotes” & 北京 x"


def test_markdown_no_wrapping() -> None:
    long = " ".join(["word"] * 300)
    assert to_markdown(f"<p>{long}</p>") == long


def test_markdown_collapses_blank_lines_but_not_in_code() -> None:
    md = to_markdown("<p>a</p><br><br><br><div></div><p>b</p><pre>x\n\n\n\ny</pre>")
    assert md.startswith("a\n\nb")
    assert "x\n\n\n\ny" in md


def test_markdown_removes_spacer_images() -> None:
    html = (
        '<p>Text <img src="/img/spacer.gif"> <img src="/t.png" width="1" height="1">'
        '<img src="https://tracker.example/pixel.gif?id=3"> <img src="data:image/gif;base64,R0lGOD">'
        '<img src="/real/photo.png" alt="Real"></p>'
    )
    md = to_markdown(html)
    assert md == "Text ![Real](</real/photo.png>)"


def test_markdown_lazy_image_source() -> None:
    html = '<p><img src="data:image/gif;base64,R0lGOD" data-src="/big.jpg" alt="Lazy"></p>'
    assert to_markdown(html) == "![Lazy](</big.jpg>)"


def test_markdown_drops_links_left_empty() -> None:
    html = '<p><a href="/home"><img src="/spacer.gif"></a>Hello</p>'
    assert to_markdown(html) == "Hello"


def test_remove_spacer_images_keeps_normal_images() -> None:
    html = '<img src="/transport.jpg"><img src="/nuclear.png" width="100"><IMG SRC="/blank.gif">'
    assert remove_spacer_images(html) == '<img src="/transport.jpg"><img src="/nuclear.png" width="100">'


@pytest.mark.parametrize("html", ["", "   ", "<html></html>", "<html><body></body></html>", "<!-- x -->"])
def test_markdown_empty(html: str) -> None:
    assert to_markdown(html) == ""


# --- benchmark_markdown -----------------------------------------------------------------------------------


def _reference(html: str, url: str | None) -> str:
    conv = html2text.HTML2Text(bodywidth=0)
    conv.ignore_links = True
    conv.ignore_images = True
    conv.baseurl = url or ""
    return conv.handle(html)


def _sample_pages(n: int = 3) -> list[dict]:
    pages = []
    with gzip.open(WEBMAINBENCH, "rt", encoding="utf-8") as fh:
        for line in fh:
            pages.append(json.loads(line))
            if len(pages) >= n:
                break
    return pages


@pytest.mark.skipif(not WEBMAINBENCH.exists(), reason="shared WebMainBench sample not available")
def test_benchmark_markdown_matches_html2text_on_real_pages() -> None:
    pages = _sample_pages(3)
    assert pages
    for rec in pages:
        html = rec["html"]
        got = benchmark_markdown(html, rec.get("url"))
        assert got == _reference(html, rec.get("url"))
        assert got  # real pages produce text


def test_benchmark_markdown_is_unstripped_and_ignores_links() -> None:
    html = '<p>Hi <a href="/x">there</a> <img src="/i.png" alt="pic"></p>'
    got = benchmark_markdown(html, "https://example.com/")
    assert got == _reference(html, "https://example.com/")
    assert got.endswith("\n") and "/x" not in got and "i.png" not in got
    assert benchmark_markdown(html) == _reference(html, None)


# --- to_text ----------------------------------------------------------------------------------------------


def test_text_paragraphs_and_inline() -> None:
    html = "<p>First   para\n with <b>bold</b> and <i>it</i>.</p><p>Second</p>"
    assert to_text(html) == "First para with bold and it.\n\nSecond"


@pytest.mark.parametrize("convert", [to_text, to_markdown])
def test_a_line_break_between_wide_characters_is_no_space(convert) -> None:
    # Chinese and Japanese sources wrap lines anywhere; a browser shows no space there (CSS Text 3)
    html = "<p>计划修建三条地铁线路，\n  方便市民出行。高雄\n巨蛋。日本語の\nテキスト</p>"
    assert convert(html) == "计划修建三条地铁线路，方便市民出行。高雄巨蛋。日本語のテキスト"
    # a Latin or Hangul neighbour, or a plain space, keeps its space
    assert convert("<p>中文\nEnglish\n中文 中文 한국어\n문장</p>") == "中文 English 中文 中文 한국어 문장"
    assert convert("<pre>中文\n中文</pre>").strip("`\n") == "中文\n中文"


def test_text_headings_and_divs() -> None:
    html = "<h1>Title</h1><div>line one</div><div>line two</div><section><p>para</p></section>"
    assert to_text(html) == "Title\n\nline one\nline two\n\npara"


def test_text_br() -> None:
    assert to_text("<p>a<br>b<br><br>c</p>") == "a\nb\n\nc"
    assert to_text("<br><br>x<br>") == "x"


def test_text_pre_keeps_line_breaks() -> None:
    html = "<p>before</p><pre>  x = 1\n\n  if x:\n\ty = 2\n</pre><p>after</p>"
    assert to_text(html) == "before\n\n  x = 1\n\n  if x:\n\ty = 2\n\nafter"


def test_text_pre_with_inline_markup() -> None:
    assert to_text("<pre><code><span>a</span>  <b>b</b>\nc</code></pre>") == "a  b\nc"


def test_text_table() -> None:
    html = "<table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td>31</td></tr></table><p>x</p>"
    assert to_text(html) == "Name | Age\nAnn | 31\n\nx"


def test_text_table_empty_cell_keeps_column() -> None:
    assert to_text("<table><tr><td>a</td><td></td><td>c</td></tr></table>") == "a | | c"
    assert to_text("<table><tr><td>a</td><td> </td><td></td></tr></table>") == "a | |"


def test_text_table_cell_with_blocks() -> None:
    html = "<table><tr><td><p>one</p><p>two</p></td><td>three</td></tr></table>"
    assert to_text(html) == "one\n\ntwo\n\nthree"


def test_text_nested_lists() -> None:
    html = "<ul><li>one<ul><li>one.a</li><li>one.b</li></ul></li><li>two</li></ul><p>end</p>"
    assert to_text(html) == "- one\n- one.a\n- one.b\n- two\n\nend"


def test_text_list_markers() -> None:
    """Unordered items get ``- ``, ordered ones their number (from ``start``), as trafilatura's text does."""
    html = '<p>x</p><ol start="3"><li>three</li><li><b>four</b> and more</li></ol><ul><li>a<ol><li>a.1</li></ol></li></ul>'
    assert to_text(html) == "x\n\n3. three\n4. four and more\n\n- a\n1. a.1"
    # an item whose text begins in a nested list gets the nested marker only; empty items leave nothing
    assert to_text("<ul><li><ul><li>inner</li></ul></li><li></li><li> </li><li>last</li></ul>") == "- inner\n- last"
    assert to_text('<ol start="x"><li>a</li></ol><ol start="0"><li>b</li></ol><ol start="²"><li>c</li></ol>') == (
        "1. a\n\n1. b\n\n1. c"
    )
    assert to_text("<ol><li><pre>code\n  here</pre></li></ol>") == "1. code\n  here"
    assert to_text("<dl><dt>term</dt><dd>definition</dd></dl>") == "term\ndefinition"


def test_text_list_item_of_one_paragraph_is_one_line() -> None:
    """``<li><p>…</p></li>`` reads as the item without the ``p``; an item of several blocks keeps its blank lines."""
    html = "<p>x</p><ul><li><p>one</p></li><li> <h3>two</h3> </li><li><p>three</p><p>more</p></li><li>four <p>five</p></li></ul><p>y</p>"
    assert to_text(html) == "x\n\n- one\n- two\n\n- three\n\nmore\n\n- four\n\nfive\n\ny"


def test_text_drops_script_style_and_friends() -> None:
    html = (
        "<div>keep<script>var s = '<p>no</p>';</script><style>p { color: red }</style>"
        "<template><p>tpl</p></template> this</div><!-- comment -->"
    )
    assert to_text(html) == "keep this"


def test_text_keeps_noscript_content() -> None:
    """Crawler views (e.g. Discourse threads) live in <noscript>; the simplifier makes blocks of them."""
    assert to_text("<div><noscript><p>the thread</p></noscript></div>") == "the thread"


def test_text_entities() -> None:
    assert to_text("<p>Tom &amp; Jerry&nbsp;&nbsp;&lt;3 &eacute;&#233;&#x263A;</p>") == "Tom & Jerry <3 éé☺"


def test_text_whitespace_between_inline_elements() -> None:
    assert to_text("<p><span>a</span> <span>b</span><span>c</span>\n<em> d </em>.</p>") == "a bc d ."


def test_text_full_document_ignores_head() -> None:
    html = "<html><head><title>T</title><style>x{}</style></head><body><p>Body</p></body></html>"
    assert to_text(html) == "Body"


@pytest.mark.parametrize("html", ["", "  \n ", "<html></html>", "<html><body></body></html>", "<p></p><div> </div>"])
def test_text_empty(html: str) -> None:
    assert to_text(html) == ""


def test_text_has_no_blank_line_runs_or_trailing_spaces() -> None:
    html = "<div><p>a </p><br><br><br><hr><div><p> b</p></div></div><table><tr><td>c </td></tr></table>"
    out = to_text(html)
    assert out == "a\n\nb\n\nc"


def test_text_deep_nesting_100k() -> None:
    # 100,000 nested inline elements: the walk must not recurse.
    depth = 100_000
    html = "<span>" * depth + "deep text" + "</span>" * depth
    assert to_text(html) == "deep text"


def test_text_deep_div_nesting_100k() -> None:
    # 100,000 levels with a <div> on every fifth: table cells bound Lexbor's per-<div> scope scan, which is
    # otherwise quadratic in depth (pure 100,000-deep <div> nesting takes ~30 s to *parse*).
    levels = 20_000
    html = "<table><tr><td><div>" * levels + "deep text" + "</div></td></tr></table>" * levels
    assert to_text(html) == "deep text"


def test_text_deep_pure_div_nesting() -> None:
    depth = 20_000
    html = "<div>" * depth + "<p>deep</p>" + "</div>" * depth + "<p>after</p>"
    assert to_text(html) == "deep\n\nafter"


# --- properties -------------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PIECES = st.sampled_from(
    ["<p>", "</p>", "<div>", "</div>", "<br>", "<li>", "<ul>", "</ul>", "<table>", "<tr>", "<td>", "</td>", "<th>",
     "<h2>", "</h2>", "<span>", "</span>", "<b>", "</b>", "<script>", "</script>", "<!--", "-->", "&amp;", "&nbsp;",
     "&#0;", "&", "<", ">", " ", "\n", "\t", "word", "mot", "北京", "<a href='/x'>", "</a>", "<img src='/i.png'>"]
)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_text_properties(html: str) -> None:
    out = to_text(html)
    assert out == out.strip()
    assert "\n\n\n" not in out
    assert all(line == line.rstrip() for line in out.split("\n"))
    assert "  " not in out.replace("\t", "|")


@settings(max_examples=100, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_markdown_properties(html: str) -> None:
    out = to_markdown(html)
    assert out == out.strip()
    assert "\n\n\n" not in out


def test_text_no_cell_separator_before_any_text() -> None:
    """Found by test_text_properties: an empty first cell must not leave a leading tab."""
    assert to_text("<table><td><br><td>-->") == "-->"
