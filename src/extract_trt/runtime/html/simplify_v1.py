"""Profile ``dripper-v1``: the block scheme of Dripper v1.0 (``dripper/process/simplify_html.py``, the
Qwen3-0.6B MinerU-HTML model), as a :class:`~extract_trt.runtime.html.simplify.SimplifyProfile` of the shared
simplifier. Spec §1.9 lists what differs from v1.1; everything else (attribute cleaning, list
shortening, ids, the mapping into the original DOM) is the v1.1 code:

* removed with their tails: ``head header footer nav aside style script noscript link meta iframe frame``;
* also removed, tail text lost: elements with a class token (split on spaces) or an id part (split on
  ``-``) equal to ``nav``/``footer``/``header``, or a ``style`` containing ``display:none``/``display: none``
  (anywhere, not only under ``<body>``); closed ``<details>`` are kept;
* ``br li dd dt textarea select`` are inline too, so ``<br>`` never ends a block and list items never
  split a list;
* a node is a block container when one of its *direct children* is a block; ``td``/``th`` are blocks
  only in layout tables; a table is a data table when it has a caption, ``th``, ``thead``, ``tfoot``,
  ``col``/``colgroup``, a cell with ``headers``, or a ``summary``/``role="table"``/``data-table``
  attribute — data tables are not emitted whole (their rows become the blocks); ``math`` is not special;
* text is capped per text node (an element's own text, each child's tail) at 200 characters + ``...``;
* a run directly under ``<body>`` is read back like ``lxml.html.fromstring`` does: its single element,
  or the run renamed to ``div`` (it holds a block-level tag) / ``span``;
* reconstruction: no ``<br>`` recall, ``html.unescape`` of the whole output.

Not reproduced: v1.0 repairs HTML with BeautifulSoup's ``html.parser`` before lxml (we parse with Lexbor,
as for v1.1; the two differ only on malformed markup) and pretty-prints map_html (internal here: the
mapping is a tree). The v1.0 source was not available to test against; the rules follow the spec,
whose worked example (7 blocks instead of v1.1's 8) the tests reproduce.
"""

from __future__ import annotations

from extract_trt.runtime.html.dom import Node
from extract_trt.runtime.html.simplify import (
    ELLIPSIS,
    INLINE_TAGS,
    MINERU_V11,
    MINERU_V11_WITH_HIDDEN,
    PageBlocks,
    SimplifyProfile,
    _Frag,
    simplify,
    single_child_block,
    table_region,
)

__all__ = ["DRIPPER_V1", "SIMPLIFY_PROFILES", "simplify_profile", "simplify_v1"]

INLINE_TAGS_V1 = INLINE_TAGS | {"br", "li", "dd", "dt", "textarea", "select"}
REMOVED_TAGS_V1 = frozenset(
    {"head", "header", "footer", "nav", "aside", "style", "script", "noscript", "link", "meta", "iframe", "frame"}
)
NAVIGATION_NAMES = frozenset({"nav", "footer", "header"})
DATA_TABLE_TAGS = frozenset({"caption", "th", "thead", "tfoot", "colgroup", "col"})
# lxml.html.defs.block_tags: fromstring() calls a multi-element body a <div> when it holds one of these.
LXML_BLOCK_TAGS = frozenset(
    {
        "address", "blockquote", "caption", "center", "col", "colgroup", "dd", "del", "dir", "div", "dl", "dt",
        "fieldset", "form", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "ins", "isindex", "legend", "li", "menu",
        "noscript", "ol", "optgroup", "option", "p", "pre", "table", "tbody", "td", "tfoot", "th", "thead", "tr",
        "ul",
    }
)  # fmt: skip


def _should_remove(node: Node) -> bool:
    attrs = node.attrs
    if NAVIGATION_NAMES.intersection(attrs.get("class", "").split(" ")):
        return True
    if NAVIGATION_NAMES.intersection(attrs.get("id", "").split("-")):
        return True
    style = attrs.get("style", "")
    return "display:none" in style or "display: none" in style


def _is_data_table(table: Node) -> bool:
    attrs = table.attrs
    if "summary" in attrs or attrs.get("role") == "table" or "data-table" in attrs:
        return True
    return any(
        node.tag in DATA_TABLE_TAGS or (node.tag in ("td", "th") and "headers" in node.attrs)
        for node in table_region(table)
    )


def _truncate_each_text(root: _Frag, limit: int) -> None:
    """Cap every text node (own text, children's tails) at ``limit`` characters, ``...`` appended."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.text and len(node.text) > limit:
            node.text = node.text[:limit] + ELLIPSIS
        for kid in node.children:
            if kid.tail and len(kid.tail) > limit:
                kid.tail = kid.tail[:limit] + ELLIPSIS
        stack.extend(node.children)


def _reread_as_document(root: _Frag) -> _Frag:
    """v1.0 parses a block with ``lxml.html.fromstring``: a ``<body>`` run with one element and no text
    around it is that element; any other run keeps its content under a ``div`` or ``span``."""
    only = single_child_block(root)
    if only is not None:
        return only
    stack = list(root.children)
    block_level = False
    while stack and not block_level:
        node = stack.pop()
        block_level = node.tag in LXML_BLOCK_TAGS
        stack.extend(node.children)
    root.tag = "div" if block_level else "span"
    return root


DRIPPER_V1 = SimplifyProfile(
    name="dripper-v1",
    cutoff_length=200,
    inline_tags=INLINE_TAGS_V1,
    removed_tags=REMOVED_TAGS_V1,
    no_block_tags=frozenset(),
    should_remove=_should_remove,
    keep_removed_tail=False,
    block_descendants=False,
    content_lists=False,
    whole_data_tables=False,
    is_data_table=_is_data_table,
    truncate=_truncate_each_text,
    reread_body_run=_reread_as_document,
    recall_line_breaks=False,
    recall_wrapped_breaks=False,
    unescape_all=True,
)

SIMPLIFY_PROFILES: dict[str, SimplifyProfile] = {p.name: p for p in (MINERU_V11, MINERU_V11_WITH_HIDDEN, DRIPPER_V1)}


def simplify_profile(name: str) -> SimplifyProfile:
    """The simplifier profile called ``name`` (``mineru-v1.1``, ``mineru-v1.1+hidden`` or ``dripper-v1``)."""
    try:
        return SIMPLIFY_PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown simplifier profile {name!r}; use one of {sorted(SIMPLIFY_PROFILES)}") from None


def simplify_v1(html: str, cutoff_length: int | None = None) -> PageBlocks:
    """Segment ``html`` by the Dripper v1.0 rules (see the module docstring)."""
    return simplify(html, cutoff_length, DRIPPER_V1)
