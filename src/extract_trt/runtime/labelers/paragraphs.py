"""Pieces of one paragraph take one label.

The reference block scheme splits a paragraph into several blocks when its markup mixes inline and block
content: ``<p>Install <a><span>Flask<svg>…</svg></span></a> and …</p>`` (a link with an inline icon) becomes
the blocks "Install", "Flask", "and …". The model scores each piece on its own, and a short link piece often falls below the cut
while the text around it is main, which leaves holes in a sentence ("Install the :") — or the reverse, a
link label kept from a menu item whose description was dropped. The pieces of one paragraph (blocks whose
nearest paragraph-level ancestor — ``p``, ``li``, a heading, ``dd``/``dt``, ``blockquote``, ``figcaption``,
``pre`` — is the same element, reached without passing a layout container such as a ``div`` or a layout
table's cell) all take the label of the majority of their words.

A code block is one unit too, however it is wrapped: editors and highlighters put each line of a ``pre`` in
a ``div`` of its own (CodeMirror's ``cm-line``), so the scheme makes a block of every line and the model
scores ``return (`` or ``</div>`` without the code around it, keeping the first line of a snippet and
dropping the rest. The lines of one code block (blocks under the same outermost ``pre`` or ``code``
element, whatever lies between) are all kept when any of them is: a reader never wants half a snippet, and
a snippet the model keeps a line of sits in the content (code in boilerplate is rare, and then every line of
it scores low). The labeler runs this after the paragraph rule, so a ``pre`` split at ``<br>`` (one paragraph,
no element between its lines) keeps the majority vote of its words.
"""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.dom import Node, enclosing_element
from extract_trt.runtime.types import HEADING_TAGS, PageBlocks

__all__ = [
    "CODE_TAGS", "PARAGRAPH_TAGS", "code_block_lines", "join_code_lines", "join_paragraph_pieces", "paragraph_pieces",
    "pre_elements",
]  # fmt: skip

PARAGRAPH_TAGS = HEADING_TAGS | {"p", "li", "dd", "dt", "blockquote", "figcaption", "pre"}
# Inline elements between a piece and its paragraph (a link, a span in it, the simplifier's text wrapper);
# the walk up stops there, so a page of deeply nested inline elements costs at most this many steps a block.
MAX_LEVELS = 8
# Layout containers: a block whose walk up meets one of these before a paragraph tag is not a piece of a
# paragraph (a list item holding a div of blocks is a layout, not a sentence). Table cells among them: the
# scheme only cuts the cells of a layout table into blocks (a data table is one block), and such a cell is a
# page's column, its lines cut at <br> (a menu of links beside the article, a headline over a byline over a
# "Print | Email" toolbar), not a sentence.
_LAYOUT_TAGS = frozenset({"div", "section", "article", "ul", "ol", "table", "td", "th", "body", "html"})
CODE_TAGS = frozenset({"pre", "code"})
_PRE = frozenset({"pre"})


def _paragraph_of(node: Node | None) -> Node | None:
    """The nearest paragraph-level element at or above ``node``, unless a layout container comes first or
    it lies more than :data:`MAX_LEVELS` above."""
    for _ in range(MAX_LEVELS + 1):
        if node is None or node.tag in _LAYOUT_TAGS:
            return None
        if node.tag in PARAGRAPH_TAGS:
            return node
        node = node.parent
    return None


def paragraph_pieces(page: PageBlocks) -> list[list[int]]:
    """The block indices of each paragraph that the scheme split into two or more blocks, in page order.
    A block that is a whole paragraph-level element itself (``content_type == "block_element"``) is a
    paragraph on its own and never a piece."""
    groups: dict[int, list[int]] = {}
    nodes = page.page_map.id_nodes
    for i, block in enumerate(page.blocks):
        if block.content_type == "block_element" and block.tag in PARAGRAPH_TAGS:
            continue
        paragraph = _paragraph_of(nodes.get(block.item_id))
        if paragraph is not None:
            groups.setdefault(id(paragraph), []).append(i)
    return [members for members in groups.values() if len(members) > 1]


def join_paragraph_pieces(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """``main`` with the pieces of each split paragraph set alike: main when the main pieces hold at least
    half of the paragraph's words (each piece counted as its words plus one, so that a wordless piece
    weighs a little), else other."""
    joined = main.copy()
    for members in paragraph_pieces(page):
        labels = main[members]
        if labels.all() or not labels.any():
            continue
        words = np.array([1 + len(page.blocks[i].text.split()) for i in members], dtype=np.float64)
        joined[members] = words[labels].sum() >= 0.5 * words.sum()
    return joined


def code_block_lines(page: PageBlocks) -> list[list[int]]:
    """The block indices of each code block that the scheme split into two or more blocks, in page order."""
    groups: dict[int, list[int]] = {}
    nodes = page.page_map.id_nodes
    outermost: dict = {}  # per element walked: the outermost pre/code at or above it
    for i, block in enumerate(page.blocks):
        # a substring test first (a false hit only costs the walk): most blocks of most pages are not code
        if ">pre" not in block.tag_path and ">code" not in block.tag_path:
            continue
        code = enclosing_element(nodes.get(block.item_id), CODE_TAGS, outermost, outermost=True)
        if code is not None:
            groups.setdefault(id(code), []).append(i)
    return [members for members in groups.values() if len(members) > 1]


def pre_elements(page: PageBlocks, enough: int) -> int:
    """How many ``pre`` elements hold blocks of ``page``, counted up to ``enough``: a snippet is one whether the
    scheme made it one block or a block of every line that an editor wrapped in an element of its own."""
    nodes = page.page_map.id_nodes
    memo: dict = {}
    found: set[int] = set()
    for block in page.blocks:
        # a substring test first, as for code_block_lines: most blocks of most pages are not code
        if block.tag != "pre" and ">pre" not in block.tag_path:
            continue
        pre = enclosing_element(nodes.get(block.item_id), _PRE, memo)
        if pre is not None:
            found.add(id(pre))
            if len(found) >= enough:
                break
    return len(found)


def join_code_lines(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """``main`` with every line of a split code block kept when any of them is."""
    joined = main.copy()
    for members in code_block_lines(page):
        if joined[members].any():
            joined[members] = True
    return joined
