"""The pieces of a paragraph that the block scheme split take one label."""

from __future__ import annotations

import html

import numpy as np

from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.paragraphs import (
    code_block_lines,
    join_code_lines,
    join_paragraph_pieces,
    paragraph_pieces,
)

# An inline SVG icon in a link ("opens an external page") makes the paragraph mixed content: the reference
# scheme cuts it into the text before each link, the link's text, and the text after it.
_ICON = '<span><svg viewBox="0 0 20 20"><title>(external page)</title><path d="M8 4h3z"></path></svg></span>'
_SPLIT = (
    f'<li><p>Install <a href="/flask"><span>Flask{_ICON}</span></a> and '
    f'<a href="/sdk"><span>the Python SDK{_ICON}</span></a>. To install them with pip, '
    "run the command below in a terminal.</p></li>"
)
_WHOLE = "<li><p>A whole paragraph with a <a href='/x'>plain link</a> stays one block of its own.</p></li>"


def _page(items: str):
    return simplify(f"<html><body><article><h1>Quickstart</h1><ul>{items}</ul></article></body></html>")


def _texts(page, members):
    return [page.blocks[i].text for i in members]


def test_split_paragraph_pieces_are_found() -> None:
    page = _page(_SPLIT + _WHOLE)
    groups = paragraph_pieces(page)
    assert len(groups) == 1
    pieces = _texts(page, groups[0])
    assert pieces[0].startswith("Install") and "Flask" in pieces and "the Python SDK" in pieces
    assert not any("whole paragraph" in t for t in pieces)


def test_pieces_follow_the_majority_of_their_words() -> None:
    page = _page(_SPLIT + _WHOLE)
    (members,) = paragraph_pieces(page)
    links = [i for i in members if page.blocks[i].text in ("Flask", "the Python SDK")]
    main = np.zeros(len(page.blocks), dtype=bool)
    main[members] = True
    main[links] = False  # the short link pieces fell below the cut
    joined = join_paragraph_pieces(page, main)
    assert joined[members].all()
    main[:] = False
    main[links] = True  # only the link pieces kept: a minority of the paragraph's words
    assert not join_paragraph_pieces(page, main)[members].any()


def test_blocks_outside_split_paragraphs_are_left_alone() -> None:
    page = _page(_SPLIT + _WHOLE)
    rng = np.random.default_rng(0)
    main = rng.random(len(page.blocks)) < 0.5
    joined = join_paragraph_pieces(page, main)
    pieces = {i for g in paragraph_pieces(page) for i in g}
    others = [i for i in range(len(page.blocks)) if i not in pieces]
    assert (joined[others] == main[others]).all()


def test_blocks_in_a_layout_div_are_not_pieces() -> None:
    # a list item holding a div is a layout: the div's pieces are not pieces of the list item's paragraph
    page = _page(f"<li><div>Open the <a href='/m'><span>menu{_ICON}</span></a> to start the tour.</div></li>")
    assert len(page.blocks) > 2 and paragraph_pieces(page) == []


def test_the_lines_of_a_layout_table_cell_are_not_pieces() -> None:
    # a page laid out with a table: the article's cell holds a headline, a byline and a toolbar cut at <br>,
    # the next cell a menu of links; each line is a block, and no line follows the others' vote
    page = simplify(
        "<html><body><table><tr><td><b>Council approves the budget</b><br>By Mary Jones<br>"
        "<a href='/print'>Print article</a> | <a href='/email'>Email article</a><br>"
        "<p>The city council voted on Monday night to approve a budget for the coming year.</p></td>"
        "<td><a href='/local'>Local news</a><br><a href='/state'>State</a><br><a href='/world'>World</a></td>"
        "</tr></table></body></html>"
    )
    texts = [b.text for b in page.blocks]
    assert "By Mary Jones" in texts and "State" in texts  # the cells were cut into lines
    assert paragraph_pieces(page) == []
    main = np.array([t not in ("By Mary Jones", "Print article | Email article") for t in texts])  # cut low
    assert (join_paragraph_pieces(page, main) == main).all()


# an editor's code block: every line a div of its own inside pre > code (CodeMirror's markup)
_LINES = ("function App() {", "return (", "<h1>Hi</h1>", ");", "}")
_CODE = "<pre><code>" + "".join(f"<div class='cm-line'>{html.escape(line)}</div>" for line in _LINES) + "</code></pre>"


def test_the_lines_of_a_code_block_are_kept_together() -> None:
    page = simplify(
        f"<html><body><article><p>Components are functions that return markup:</p>{_CODE}<pre>one()</pre>"
        f"<p>Then nest it.</p><pre><code><div>a()</div><div>b()</div></code></pre></article></body></html>"
    )
    first, second = code_block_lines(page)
    assert _texts(page, first) == list(_LINES)
    assert _texts(page, second) == ["a()", "b()"]  # the one-block pre between them is no group
    main = np.zeros(len(page.blocks), dtype=bool)
    main[first[0]] = True  # the model kept the snippet's first line only
    joined = join_code_lines(page, main)
    assert joined[first].all() and not joined[second].any()
    assert joined.sum() == len(first)
