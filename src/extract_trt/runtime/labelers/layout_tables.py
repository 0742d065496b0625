"""A page's skeleton tables read as the ``div``s a page of today would use, for the block model's markup.

Sites of 2000-2012 laid their pages out with tables: a row for the masthead, a row of columns (the menu, the
story, a column of headlines and a poll), a row for the footer. The block model learned from pages of today,
where such columns are ``div``s, and from the few older pages among them, which are mostly forum threads and
listings whose table cells *are* the content; so it reads text in a table cell as content, and on a page
laid out with tables keeps the menu column, the article's toolbar and the poll. The same page written with
``div``s comes out right, so the model reads the skeleton as ``div``s:

- a **skeleton table** is a layout table (one the simplifier cut into blocks; a data table is one block of
  its own) above a block, with at most :data:`SKELETON_ROWS` rows (a header, the columns, a footer). A table
  of more rows — a forum thread's posts, a listing's rows, a menu of one link a row — stays a table: its
  rows are repeated items, which the model knows from the pages it learned from;
- in a block's tag path, a skeleton table and its cells read as ``div``, and its rows and row groups
  (``tr``, ``tbody``, ``thead``, ``tfoot``), which a ``div`` layout has no counterpart for, are left out, of
  the path, the depth and the nearest containers (``Block.containers``) alike.

Only the model's view changes (:meth:`BlockModelLabeler.probabilities
<extract_trt.runtime.labelers.block_model.BlockModelLabeler.probabilities>`): the blocks, their text and
the rules after the model (a table cell is no paragraph) see the page as it is. A page without a layout
table is returned as it is, after one look at each block's path.
"""

from __future__ import annotations

from typing import NamedTuple

from extract_trt.runtime.html.dom import Node, up_to_memo
from extract_trt.runtime.html.simplify import CONTAINER_LEVELS, WRAPPER_TAG, capped_path
from extract_trt.runtime.types import Block, PageBlocks

__all__ = ["SKELETON_ROWS", "skeleton_tables_as_divs"]

# A masthead, a row of columns and a footer. Chosen on the tune pages (train-only model): the one-row
# tables of `bench/era_pages.py`'s `tables` form all qualify, and the tune pages' tables of many rows (Hacker
# News' listing, forum threads) stay tables; read as divs they lost their items (0.72 → 0.58). Six rows scored
# the same on the tune pages and lower on the training pages laid out with tables.
SKELETON_ROWS = 3
_ROW_GROUPS = frozenset({"tbody", "thead", "tfoot"})
_CELLS = frozenset({"td", "th"})
_DOCUMENT = frozenset({"-undef", "#document"})


class _Seen(NamedTuple):
    """An element as the model reads it: its path (tags, skeleton parts as ``div``, rows left out; capped as
    the simplifier caps it), how many of its ancestors-or-self were left out, the numbers of the nearest kept
    elements at or above it (itself first unless left out), and whether the nearest table at or above it is
    a skeleton table."""

    path: tuple[str, ...]
    dropped: int
    kept: tuple[int, ...]
    in_skeleton: bool


def _rows(table: Node) -> int:
    rows = 0
    for child in table.children:
        if child.tag == "tr":
            rows += 1
        elif child.tag in _ROW_GROUPS:
            rows += sum(1 for row in child.children if row.tag == "tr")
    return rows


def _has_layout_table(blocks: list[Block]) -> bool:
    return any(">td" in b.tag_path or ">th" in b.tag_path for b in blocks)


class _View:
    def __init__(self) -> None:
        self.memo: dict[Node, _Seen] = {}
        self.numbers: dict[Node, int] = {}

    def of(self, node: Node) -> _Seen:
        """How the model reads the block element ``node``: its ancestors memoised (a page is one walk up
        from each block to the nearest element already seen), the block's own element not (a table that
        is a block is a data table, whatever its rows)."""
        path, seen = up_to_memo(node.parent, self.memo)
        seen = seen or _Seen((), 0, (), False)
        for el in path:  # from the top down
            seen = self.memo[el] = self._step(seen, el, above=True)
        return self._step(seen, node, above=False)

    def _step(self, parent: _Seen, el: Node, above: bool) -> _Seen:
        tag, in_skeleton = el.tag, parent.in_skeleton
        if tag in _DOCUMENT:  # the document above <html>: no element of a path
            return parent
        if tag == "table" and above:  # a table above a block is a layout table (a data table is one block)
            in_skeleton = _rows(el) <= SKELETON_ROWS
            as_tag = "div" if in_skeleton else tag
        elif tag in _CELLS and in_skeleton:
            as_tag = "div"
        elif (tag == "tr" or tag in _ROW_GROUPS) and in_skeleton and above:
            return _Seen(parent.path, parent.dropped + 1, parent.kept, in_skeleton)
        else:
            as_tag = tag
        kept = (self.numbers.setdefault(el, len(self.numbers)), *parent.kept[:CONTAINER_LEVELS])
        return _Seen(capped_path((*parent.path, as_tag)), parent.dropped, kept, in_skeleton)


def _as_seen(b: Block, tag: str, tag_path: str, depth: int, containers: tuple[int, ...]) -> Block:
    # a Block built whole: dataclasses.replace was most of the view's time
    return Block(b.item_id, b.html, b.text, tag, b.classes, b.element_id, depth, tag_path, b.link_text_length,
                 b.content_type, b.ancestor_names, containers)  # fmt: skip


def skeleton_tables_as_divs(page: PageBlocks) -> PageBlocks:
    """``page`` with each block's tag, tag path, depth and containers as the block model reads them: a
    skeleton table's parts as ``div``s, its rows left out. ``page`` itself when it has no layout table."""
    blocks = page.blocks
    if not _has_layout_table(blocks):
        return page
    nodes = page.page_map.id_nodes
    view = _View()
    seen_blocks = []
    for block in blocks:
        node = nodes.get(block.item_id)
        if node is None:  # not met on the shared pages; its containers must not meet the view's numbers
            seen_blocks.append(_as_seen(block, block.tag, block.tag_path, block.depth, ()))
            continue
        if node.tag == WRAPPER_TAG and node.parent is not None:  # a run of text: its parent is the block
            node = node.parent
        seen = view.of(node)
        path = ">".join(seen.path)
        seen_blocks.append(_as_seen(block, seen.path[-1], path, block.depth - seen.dropped, seen.kept[1:]))
    return PageBlocks(page.simplified_html, seen_blocks, page.page_map)
