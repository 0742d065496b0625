"""Script source shown as text (a broken attribute quote swallowing a <script> tag) is not main content."""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.block_model import BlockModelLabeler
from extract_trt.runtime.labelers.script_text import drop_script_text, is_noscript_markup, is_script_text

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


def test_drop_script_text_only_changes_main_script_blocks() -> None:
    page = _article_with_leak()
    leak = next(i for i, b in enumerate(page.blocks) if is_script_text(b))
    main = np.ones(len(page.blocks), dtype=bool)
    kept = drop_script_text(page, main)
    assert not kept[leak] and kept.sum() == len(page.blocks) - 1
    assert main.all()  # the input mask is left as it was
    assert not drop_script_text(page, np.zeros(len(page.blocks), dtype=bool)).any()


def test_labeler_leaves_leaked_script_out_whatever_its_score() -> None:
    page = _article_with_leak()
    leak = next(i for i, b in enumerate(page.blocks) if is_script_text(b))
    for labeler in (BlockModelLabeler(), BlockModelLabeler(threshold=0.0)):
        labels = labeler.label([page])[0]
        assert not labels.main[leak]
        assert sum(labels.main) >= 6  # the report's paragraphs stay


def test_markup_a_noscript_shows_as_text_is_not_main() -> None:
    # a page saved from a browser's DOM: the noscript's content escaped, so it reads as markup
    pixel = '&lt;div style="position:absolute;"&gt;&lt;img width=1 height=1 alt="" src="/b?P=1"&gt;&lt;/div&gt;'
    parsed = "<div><p>Posted by a reader: the crawler view of a forum post, real text.</p></div>"
    page = _page(_REPORT.format(i=1) + f"<noscript>{pixel}</noscript><noscript>{parsed}</noscript>")
    flags = {b.text[:20]: is_noscript_markup(b) for b in page.blocks}
    assert flags == {_REPORT.format(i=1)[3:23]: False, '<div style="position': True, "Posted by a reader: ": False}
    labels = BlockModelLabeler(threshold=0.0).label([page])[0]
    assert labels.main.tolist() == [not flag for flag in flags.values()]
