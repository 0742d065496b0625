"""Labels → main HTML, by the reference rules (MinerU-HTML v1.1 ``map_to_main``, spec §2.6).

For every block labelled main, its element in the original DOM is kept with all its descendants and
ancestors; a ``<br>`` right after a kept element or right before one is kept too (profiles with
``recall_wrapped_breaks``: also one alone in wrapper elements beside a kept piece); everything else goes
with its tail text; ``cc-alg-uc-text`` wrappers are unwrapped; entities inside absolute ``href``/``src``
URLs are unescaped (the Dripper v1.0 profile, spec §1.9: no ``<br>`` recall, the whole output
unescaped). The result keeps the ``<html><body>`` skeleton and the ``_item_id`` marks, like the
reference (sanitised output: the marks only when asked for). Works on the
:class:`~extract_trt.runtime.html.simplify.PageMap` tree directly: no re-serialising
and re-parsing of the whole page.
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass
from itertools import product

from extract_trt.runtime.html.dom import Node, child_place, is_blank, iter_tree, serialize
from extract_trt.runtime.html.sanitize import sanitize_tree
from extract_trt.runtime.html.simplify import WRAPPER_TAG
from extract_trt.runtime.types import Labels, PageBlocks

# What the reference's case-insensitive ``href="`` and ``src="`` match (Unicode case folding: "ſ" is an "s").
_HREF_SPELLINGS = frozenset(map("".join, product("Hh", "Rr", "Ee", "Ff")))
_SRC_SPELLINGS = frozenset(map("".join, product("Ss\u017f", "Rr", "Cc")))
_ABSOLUTE = ("http://", "https://", "ftp://", "HTTP://", "HTTPS://", "FTP://", "//")
_UNWRAP = frozenset({WRAPPER_TAG})
_BREAKOUT = str.maketrans({'"': "%22", "<": "%3C", ">": "%3E"})


@dataclass(frozen=True, slots=True)
class MainContent:
    """The main content of a page: its HTML, and the kept part of the page tree that the HTML was written
    from (``root`` and the elements in ``keep``), which Markdown and text conversion walk directly."""

    html: str
    root: Node
    keep: set[Node]


def reconstruct(page: PageBlocks, labels: Labels, *, sanitize: bool = False, item_ids: bool = False) -> str:
    """Main HTML of ``page`` for ``labels`` (one bool per block, block order).

    ``sanitize`` removes active content (:mod:`extract_trt.runtime.html.sanitize`) from the kept part of the
    tree, in place, unescapes URLs without letting them break out of their attribute and leaves out the
    ``_item_id`` marks unless ``item_ids``; without it the output is the reference's, byte for byte.
    """
    return reconstruct_main(page, labels, sanitize=sanitize, item_ids=item_ids).html


def reconstruct_main(
    page: PageBlocks, labels: Labels, *, sanitize: bool = False, item_ids: bool = False, html: bool = True
) -> MainContent:
    """:func:`reconstruct`, returning the kept tree with the HTML (for :mod:`~extract_trt.runtime.html.convert`);
    ``html=False``: the tree only (``MainContent.html`` is ``""``), for callers that only convert it."""
    id_nodes = page.page_map.id_nodes
    mains = [id_nodes.get(block.item_id) for block, is_main in zip(page.blocks, labels.main) if is_main]
    for node in mains:  # build lazily parsed content inside main blocks, before the re-read below
        if node is not None:
            for _ in iter_tree(node):
                pass
    nodes = _as_libxml2_rereads(page.page_map.root)
    keep: set[Node] = set()
    for node in mains:
        if node is None or node in keep:
            continue
        keep.update(iter_tree(node))
        parent = node.parent
        while parent is not None and parent not in keep:
            keep.add(parent)
            parent = parent.parent
    root = page.page_map.root
    profile = page.page_map.profile
    if keep and profile.recall_line_breaks:
        _recall_line_breaks(nodes, keep)
    if keep and profile.recall_wrapped_breaks:
        _recall_wrapped_breaks(nodes, keep)
    if sanitize:
        sanitize_tree(root, keep)
    if not html:
        return MainContent("", root, keep)
    written = serialize(root, with_marks=item_ids or not sanitize, keep=keep, unwrap=_UNWRAP, drop_blanks=True)
    if sanitize:  # never the whole-page unescape: it would turn escaped text into markup
        written = _unescape_urls(written, keep_closed=True)
    else:
        written = _html.unescape(written) if profile.unescape_all else _unescape_urls(written)
    return MainContent(written, root, keep)


def _as_libxml2_rereads(root: Node) -> list[Node]:
    """The reference re-parses map_html, where an empty ``<li>`` is written without its end tag: what
    follows it up to the next ``<li>`` (its tail text, later siblings) ends up inside it. Applied to the
    built part of the tree (content still unparsed holds no main block and is never kept); idempotent, so
    a later reconstruction of the same page applies it to what has been built since.

    Returns the built part's nodes in document order, which moving siblings into an ``<li>`` (they
    followed it already) does not change."""
    nodes = list(iter_tree(root, expand=False))
    for node in nodes:
        if any(kid.tag == "li" and not kid.text and not kid.children for kid in node.children):
            _reread_items(node)
    return nodes


def _reread_items(parent: Node) -> None:
    """Move the siblings that follow each empty ``<li>`` of ``parent``, up to the next ``<li>``, into it, in
    one pass over the children (a page of 50,000 empty items is one pass, not one per item)."""
    children: list[Node] = []
    item: Node | None = None  # the empty <li> that takes what follows it
    for kid in parent.children:
        if kid.tag == "li":
            item = None
            if not kid.text and not kid.children:
                kid.text, kid.tail = kid.tail, None
                kid.children = []
                item = kid
            children.append(kid)
        elif item is not None:
            item.children.append(kid)
            kid.parent = item
        else:
            children.append(kid)
    parent.children = children


def _recall_line_breaks(nodes: list[Node], keep: set[Node]) -> None:
    """Keep a ``<br>`` right after or right before a kept element; ``nodes``: the built part of the tree
    in document order. (Unbuilt, lazily parsed content holds no kept element, so a ``<br>`` inside it is
    never written whatever happens to it.)"""
    previous: Node | None = None
    for node in nodes:
        if previous is not None:
            if node.tag == "br" and previous.tag != "br" and previous in keep:
                keep.add(node)
            if previous.tag == "br" and node.tag != "br" and node in keep:
                keep.add(previous)
        previous = node


def _recall_wrapped_breaks(nodes: list[Node], keep: set[Node]) -> None:
    """Keep a ``<br>`` that is alone in wrapper elements (``<span><br> </span>``: how editors pasted from Word
    write a line break; any element holding only it, an empty ``<div><br></div>`` too), with the wrappers,
    when their parent is kept and so is the ``<br>`` or a sibling beside the outermost wrapper. A split
    paragraph's pieces are kept one by one and such a wrapper is in no block, so without this the lines run
    together ("curl your toesinto the grass")."""
    places: dict[Node, dict[Node, int]] = {}  # per parent, its children's places (dom.child_place)
    for node in nodes:
        if node.tag != "br" or node.parent in keep:
            continue
        wrapper = node
        parent = node.parent
        while (
            parent is not None
            and parent not in keep
            and len(parent.children) == 1
            and is_blank(parent.text)
            and is_blank(wrapper.tail)
        ):
            wrapper = parent
            parent = parent.parent
        if wrapper is node or parent is None or parent not in keep:
            continue
        siblings = parent.children
        at = child_place(wrapper, places)
        if node in keep or (at and siblings[at - 1] in keep) or (at + 1 < len(siblings) and siblings[at + 1] in keep):
            keep.update(iter_tree(wrapper))


def _unescape_urls(html: str, *, keep_closed: bool = False) -> str:
    """Entities unescaped inside absolute URLs of ``href="…"``/``src="…"`` (the reference's
    ``re.sub(r'(href="|src=")(.*?)(")', …, flags=IGNORECASE | DOTALL)`` over the whole output).

    Same matches as that regex, found with ``str.find`` instead: every match has ``="`` at a fixed offset
    from its start, so only the text before each ``="`` is compared with the spellings the case-insensitive
    prefix accepts. The regex tried a match at every character (~70 % of reconstruction time).
    ``keep_closed`` (sanitised output): an unescaped ``&quot;`` must not close the attribute, nor ``&lt;``
    open a tag inside raw-text parents, so those three characters are percent-encoded instead.
    """
    out: list[str] = []
    written = 0  # html[:written] is in out
    free = 0  # the regex would look for its next match from here (after the last match's closing quote)
    i = html.find('="')
    while i >= 0:
        # both spellings end in f/F (href) or c/C (src): most attributes are ruled out by that one character
        prefix = html[i - 1] in "fFcC" and (
            (i - 4 >= free and html[i - 4 : i] in _HREF_SPELLINGS) or (i - 3 >= free and html[i - 3 : i] in _SRC_SPELLINGS)
        )
        if not prefix:
            i = html.find('="', i + 2)
            continue
        end = html.find('"', i + 2)
        if end < 0:
            break  # no closing quote: neither this nor any later prefix matches
        url = html[i + 2 : end]
        if url.startswith(_ABSOLUTE):
            unescaped = _html.unescape(url)
            if keep_closed:
                unescaped = unescaped.translate(_BREAKOUT)
            if unescaped != url:
                out.append(html[written : i + 2])
                out.append(unescaped)
                written = end
        free = end + 1
        i = html.find('="', free)
    if not out:
        return html
    out.append(html[written:])
    return "".join(out)
