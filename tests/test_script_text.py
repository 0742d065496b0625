"""Text that is no content (script source a broken attribute quote shows as text, noscript markup, filler) is
never main."""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.block_model import BlockModelLabeler
from extract_trt.runtime.labelers.script_text import is_filler_text, is_noscript_markup, is_script_text, not_content

_REPORT = (
    "<p>Paragraph {i} of the report tells how the council voted on the new budget, what the mayor said "
    "afterwards, and why residents of the northern districts are worried about the cuts to bus services.</p>"
)
_SCRIPT = (
    "var _gaq = _gaq || []; _gaq.push(['_setAccount', 'UA-1234-1']); (function() { var ga = "
    "document.createElement('script'); ga.async = true; if (window.location.protocol === 'https:') { ga.src = "
    "'https://ssl.example.com/ga.js'; } document.body.appendChild(ga); })();"
)
# the class attribute's quote is never closed: the <script> tag becomes part of it, its source the div's text
_LEAK = f'<div class="share><script type="text/javascript">{_SCRIPT}</script></div>'


def _page(body: str):
    return simplify(f"<html><head><title>Budget vote</title></head><body><article>{body}</article></body></html>")


def _article_with_leak():
    paragraphs = [_REPORT.format(i=i) for i in range(6)]
    return _page("<h1>Council passes budget</h1>" + "".join(paragraphs[:3]) + _LEAK + "".join(paragraphs[3:]))


def test_leaked_script_source_is_script_text() -> None:
    page = _article_with_leak()
    flagged = [b.text for b in page.blocks if is_script_text(b)]
    assert len(flagged) == 1 and flagged[0].startswith("var _gaq")


def test_css_source_is_script_text() -> None:
    css = (
        '<div class="x><style type="text/css">.header { color: #333; margin: 0 auto; } '
        ".nav li { display: inline; padding: 4px; }</style></div>"
    )
    assert [b for b in _page(css).blocks if is_script_text(b)]


def test_code_blocks_and_prose_about_code_are_not_script_text() -> None:
    body = (
        f"<pre><code>{_SCRIPT}</code></pre>"
        f"<p>Inline: <code>{_SCRIPT}</code></p>"
        "<p>Call document.getElementById() with the element's id; it returns null when there is none (and "
        "the page has to handle that case).</p>"
        "<p>if (x) {}</p>"
    )
    page = _page(body)
    assert [b.tag for b in page.blocks if is_script_text(b)] == []


def test_not_content_flags_only_the_script_block() -> None:
    page = _article_with_leak()
    leak = next(i for i, b in enumerate(page.blocks) if is_script_text(b))
    flags = not_content(page, np.ones(len(page.blocks), dtype=bool))
    assert flags.dtype == bool and flags.shape == (len(page.blocks),)
    assert flags.nonzero()[0].tolist() == [leak]


def test_labeler_leaves_leaked_script_out_whatever_its_score() -> None:
    page = _article_with_leak()
    leak = next(i for i, b in enumerate(page.blocks) if is_script_text(b))
    for labeler in (BlockModelLabeler(), BlockModelLabeler(threshold=0.0)):
        labels = labeler.label([page])[0]
        assert not labels.main[leak] and labels.probability[leak] == 0.0
        assert sum(labels.main) >= 6  # the report's paragraphs stay


def test_markup_a_noscript_shows_as_text_is_not_main() -> None:
    # a page saved from a browser's DOM: the noscript's content escaped, so it reads as markup
    pixel = '&lt;div style="position:absolute;"&gt;&lt;img width=1 height=1 alt="" src="/b?P=1"&gt;&lt;/div&gt;'
    one_tag = '&lt;img height="1" width="1" src="https://tracker.example/tr?id=1&amp;ev=PageView"&gt;'
    parsed = "<div><p>Posted by a reader: the crawler view of a forum post, real text.</p></div>"
    page = _page(
        _REPORT.format(i=1) + f"<noscript>{pixel}</noscript><noscript>{one_tag}</noscript><noscript>{parsed}</noscript>"
    )
    flags = {b.text[:20]: is_noscript_markup(b) for b in page.blocks}
    assert flags == {
        _REPORT.format(i=1)[3:23]: False, '<div style="position': True, '<img height="1" widt': True,
        "Posted by a reader: ": False,
    }  # fmt: skip
    labels = BlockModelLabeler(threshold=0.0).label([page])[0]
    assert labels.main.tolist() == [not flag for flag in flags.values()]


def test_filler_words_are_never_main() -> None:
    # a font-measuring script's div, as a page saved from a browser's DOM keeps it
    filler = "<div>" + "word " * 200 + "</div>"
    figures = "<table>" + "".join(f"<tr><td>{m}/1/2014</td><td>+{m}.5%</td></tr>" for m in range(1, 13)) + "</table>"
    page = _page("<h1>Council passes budget</h1>" + "".join(_REPORT.format(i=i) for i in range(3)) + figures + filler)
    flagged = [b.tag for b in page.blocks if is_filler_text(b)]
    assert flagged == ["div"]  # not the headline, the report, nor the table of dates and figures
    for labeler in (BlockModelLabeler(), BlockModelLabeler(threshold=0.0)):
        labels = labeler.label([page])[0]
        assert not labels.main[-1] and labels.main[1:4].all()  # the report's paragraphs stay
    assert labels.probability[-1] == 0.0  # a candidate at any cut: scored 0, so it cannot move the page's cut


def test_prose_lists_and_short_repeats_are_not_filler() -> None:
    body = (
        _REPORT.format(i=1)
        + "<p>" + "Buffalo " * 8 + "</p>"  # a repeat too short to count
        + "<ul>" + "".join(f"<li>Yes</li><li>No</li><li>Feature {i} of the plan</li>" for i in range(10)) + "</ul>"
    )
    assert not any(is_filler_text(b) for b in _page(body).blocks)
