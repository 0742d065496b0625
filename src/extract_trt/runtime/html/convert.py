"""Main content → Markdown or plain text, written from the element tree in one walk.

The extractor converts the kept part of the page tree directly (:func:`to_markdown`/:func:`to_text` given
the :class:`~extract_trt.runtime.html.reconstruct.MainContent` of a page): no main-HTML string is parsed again.
Given an HTML string, they parse it once with Lexbor (:func:`extract_trt.runtime.html.dom.parse`) and walk that.
Both walks see exactly what the main HTML holds: the kept elements, ``cc-alg-uc-text`` wrappers as plain
content, and none of the whitespace-only text that the main HTML's serialisation leaves out.

* ``to_markdown``: CommonMark/GFM (rules in :mod:`extract_trt.runtime.html.markdown`): headings, paragraphs,
  lists with nesting, links and images (each optional; spacer images removed), emphasis, fenced code
  blocks and code spans, blockquotes, pipe tables for data tables, hard breaks for ``<br>``.
* ``to_text``: plain text (rules below).
* ``benchmark_markdown``: *exactly* the WebMainBench conversion (spec §4.3): html2text's
  ``HTML2Text(bodywidth=0)``, ``ignore_links = ignore_images = True``, ``baseurl = url or ""``,
  ``handle(main_html)``, no post-processing. Only evaluation uses it.

Plain text is modelled on the DOM ``innerText`` rules:

* block elements (``div``, ``li``, ``tr``, ``dt``, ``dd``, ``caption``, ``figcaption``, …) start and end a line;
  "paragraph" blocks (``p``, ``h1``–``h6``, ``pre``, ``blockquote``, ``table``, ``figure``, ``section``,
  ``article``, ``header``, ``footer``, ``hr``, top-level ``ul``/``ol``/``dl`` …) are separated by one blank line;
  a list nested in another list only breaks the line, and so does a paragraph block that is its list item's
  only content (``<li><p>…</p></li>`` is one line, like ``<li>…</li>``). Adjacent breaks merge (the strongest wins), so there is
  never more than one blank line in a row.
* ``<br>`` ends the line; a second ``<br>`` in a row gives a blank line.
* A list item starts with a marker, as in trafilatura's text and in Markdown: ``- `` in an unordered list,
  ``1. ``, ``2. ``, … in an ordered one (from its ``start``); a nested list's items are not indented. An item
  whose text begins inside a nested list gets only the nested item's marker.
* Table cells of one row are joined by `` | `` (an empty cell keeps its column: ``a | | c``); a cell holding
  block content starts its own line.
* Outside ``pre``/``textarea``/``listing``/``xmp`` every run of whitespace (no-break space included) becomes one
  space and spaces at line ends are dropped; inside them text is kept verbatim (no-break spaces become spaces).
  A run with a line break between two wide characters (CJK ideographs and punctuation, kana; not Hangul) in one
  text node is dropped, as a browser shows it (CSS Text 3): Chinese and Japanese sources wrap lines anywhere.
* The content of ``script``, ``style``, ``template``, ``head``, ``svg``, ``iframe``, ``select``,
  canvas and plugin objects is dropped, as are comments. So are ruby annotations (``<rt>`` and its
  fallback parentheses ``<rp>``: the furigana over Japanese kanji, pinyin or zhuyin over Chinese), which a
  browser sets above the line: inline they would split every annotated word ("子こども" for "子ども"); the HTML
  keeps the ruby markup. ``noscript`` content is kept: the simplifier makes
  blocks of it (crawler views such as Discourse's put the whole thread there), so a main block inside it
  must reach the text. Entities are decoded by the parser. (``audio``,
  ``video``, ``embed``, ``source`` and ``track`` are kept: in the reference's tree, text that followed a
  ``<source>``/``<track>``/``<embed>`` is inside them.)
* A MathML formula that gives its TeX source is ``$source$`` (``$$source$$`` for display math), once: the
  renderings beside it (an image, glyphs) are left out (:func:`_write_formula`).
* A heading's permalink or copy-link control is left out (in Markdown too): an in-page link (``href="#…"``) or a
  button in an ``h1``–``h6`` whose text is at most three symbols and no word (Sphinx's and MkDocs' ``¶``, ``#``,
  ``§``, ``🔗``) would write "Quickstart¶" for the heading "Quickstart" (:func:`_is_heading_mark`).
* Soft hyphens (U+00AD, ``&shy;``) are dropped, in Markdown too: a browser shows one only where it breaks the
  line, and kept they cut words in two ("Donau\u00addampf\u00adschiff"), as German news sites write many.
* The result has no leading or trailing blank lines and no trailing whitespace.

The walk uses an explicit stack (never Python recursion), so arbitrarily deep trees work. Note that Lexbor's own
tree building is quadratic in nesting depth for block elements (100,000 nested ``div`` take ~30 s to parse).
"""

from __future__ import annotations

import re
from typing import Protocol

import html2text

from extract_trt.runtime.html import dom
from extract_trt.runtime.html.dom import Node, child_place, collapsed_parts, dropped_blank, is_blank
from extract_trt.runtime.html.markdown import MarkdownWriter, first_number, remove_spacer_images
from extract_trt.runtime.html.reconstruct import MainContent
from extract_trt.runtime.types import HEADING_TAGS

try:  # compiled build: Cython's compile-time module; interpreted: its pure-Python stand-in, or ours
    import cython
except ImportError:
    from extract_trt.runtime import _cython_shim as cython

if not cython.compiled:  # compiled: the C function (cimported in the .pxd)
    from extract_trt.runtime.html.dom import PyErr_CheckSignals


_WORD_CHARACTER = re.compile(r"\w")

__all__ = ["benchmark_markdown", "remove_spacer_images", "to_markdown", "to_text", "walk"]


class TreeWriter(Protocol):
    def open(self, node: Node) -> bool: ...  # False: skip the element's content
    def text(self, text: str) -> None: ...
    def formula(self, source: str, display: bool) -> None: ...  # a formula's TeX source
    def close(self, node: Node) -> None: ...


def walk(root: Node, writer: TreeWriter, keep: set[Node] | None = None, *, drop_blanks: bool = False) -> None:
    """Feed ``root`` and its descendants to ``writer`` in document order (``root``'s tail excluded).

    ``keep``: the elements to visit below ``root`` (``None``: all); an element outside it is left out with
    its tail, as in the main HTML. ``drop_blanks``: leave out the whitespace-only text that the main HTML's
    serialisation drops (:func:`~extract_trt.runtime.html.dom.dropped_blank`).
    """
    stack: list[tuple[Node, bool]] = [(root, True)]  # (node, opening); replaces recursion
    twins: set[Node] = set()  # other renderings of a formula already written as TeX (:func:`_write_formula`)
    places: dict[Node, dict[Node, int]] = {}  # per parent of a formula, its children's places (dom.child_place)
    while stack:
        node, opening = stack.pop()
        if opening:
            PyErr_CheckSignals()
            if (
                (node.tag == "math" and _write_formula(node, writer, twins, places))
                or (twins and node in twins)
                or ((node.tag == "a" or node.tag == "button") and _is_heading_mark(node))
            ):
                pass  # written as TeX, a rendering of a formula, a heading's permalink: only the tail is left
            elif writer.open(node):
                stack.append((node, False))
                text = node.text
                if text and not (drop_blanks and dropped_blank(text, node, None)):
                    _write_text(writer, text)
                kids = node.children
                if kids:
                    for kid in reversed(kids):  # a loop: a generator expression is a generator in C too
                        if keep is None or kid in keep:
                            stack.append((kid, True))
                continue
        else:
            writer.close(node)
        if node is not root:
            tail = node.tail
            if tail and not (drop_blanks and dropped_blank(tail, node.parent, node)):
                _write_text(writer, tail)


_HEADING_MARK_DEPTH = 3  # how far up from the control its heading may be
_HEADING_MARK_CHARS = 3


def _is_heading_mark(control: Node) -> bool:
    """Is ``control`` (an ``a`` or ``button``) a heading's permalink or copy-link: inside an ``h1``–``h6``,
    an in-page link or a button, whose text is a few symbols and no word (``¶``, ``#``, ``§``, ``🔗``)?"""
    if control.tag == "a" and not control.attrs.get("href", "").startswith("#"):
        return False
    up = control.parent
    for _ in range(_HEADING_MARK_DEPTH):
        if up is None or up.tag in HEADING_TAGS:
            break
        up = up.parent
    if up is None or up.tag not in HEADING_TAGS:
        return False
    parts = [control.text or ""]
    stack = list(control.children)
    while stack:
        node = stack.pop()
        parts.append(node.text or "")
        parts.append(node.tail or "")
        if len(parts) > 2 * _HEADING_MARK_CHARS + 8:
            return False  # more inside than a mark
        stack.extend(node.children)
    text = "".join(parts).strip()
    return len(text) <= _HEADING_MARK_CHARS and not _WORD_CHARACTER.search(text)


def formula_source(math: Node) -> str | None:
    """The TeX source of a MathML ``<math>`` element: its ``annotation`` in a TeX encoding (MediaWiki, KaTeX,
    MathJax's TeX input), else its ``alttext``; ``{\\displaystyle …}`` unwrapped. None when it gives none."""
    source = None
    stack = list(math.children)
    while stack:
        node = stack.pop()
        if node.tag == "annotation" and "tex" in node.attrs.get("encoding", "").lower():
            source = node.text
            break
        if node.tag != "math":  # a nested formula's annotation is its own (and each node is scanned once)
            stack.extend(node.children)
    if source is None:
        source = math.attrs.get("alttext")
    source = source.strip() if source else ""
    for style in ("{\\displaystyle", "{\\textstyle"):
        if source.startswith(style) and source.endswith("}"):
            source = source[len(style) : -1].strip()
    return source or None


def _write_formula(
    math: Node, writer: TreeWriter, twins: set[Node], places: dict[Node, dict[Node, int]]
) -> bool:
    """Writes ``math`` as its TeX source (:func:`formula_source`; ``display="block"``: display math) when it
    gives one, and marks the renderings beside it as ``twins``: the ``aria-hidden`` siblings after its wrapper
    (MediaWiki's fallback ``<img>``, KaTeX's ``katex-html``), which would repeat it as glyphs or as an image
    (``places``: :func:`~extract_trt.runtime.html.dom.child_place`'s memo). False when there is no source: the
    MathML's own text is written then."""
    source = formula_source(math)
    if source is None:
        return False
    writer.formula(source, math.attrs.get("display") == "block")
    wrapper = math  # up through the elements that hold the formula alone (no text beside it)
    while (
        wrapper.parent is not None
        and len(wrapper.parent.children) == 1
        and is_blank(wrapper.parent.text)
        and is_blank(wrapper.tail)
    ):
        wrapper = wrapper.parent
    if wrapper.parent is not None:
        siblings = wrapper.parent.children
        for i in range(child_place(wrapper, places) + 1, len(siblings)):
            if siblings[i].attrs.get("aria-hidden") != "true":
                break
            twins.add(siblings[i])
    return True


def _write_text(writer: TreeWriter, text: str) -> None:
    """``text`` to ``writer`` without soft hyphens (U+00AD): invisible unless a browser breaks the line there,
    they would cut a word in two for any reader of the text ("Donau\u00addampf\u00adschiff")."""
    if "\xad" in text:
        text = text.replace("\xad", "")
        if not text:
            return
    writer.text(text)


def _tree(main: str | MainContent) -> tuple[Node | None, set[Node] | None, bool]:
    if isinstance(main, MainContent):
        return main.root, main.keep, True
    if not main or not main.strip():
        return None, None, False
    return dom.parse(main), None, False


def to_markdown(main: str | MainContent, *, links: bool = True, images: bool = True) -> str:
    """Markdown of ``main`` (a page's :class:`MainContent`, or HTML), stripped; rules in
    :mod:`extract_trt.runtime.html.markdown`."""
    root, keep, drop_blanks = _tree(main)
    if root is None:
        return ""
    writer = MarkdownWriter(links=links, images=images, keep=keep)
    walk(root, writer, keep, drop_blanks=drop_blanks)
    return writer.result()


def benchmark_markdown(main_html: str, url: str | None = None) -> str:
    """The WebMainBench prediction text (spec §4.3): html2text without links/images, unstripped."""
    conv = html2text.HTML2Text(bodywidth=0)
    conv.ignore_links = True
    conv.ignore_images = True
    conv.baseurl = url or ""
    return conv.handle(main_html)


# ---------------------------------------------------------------------------------------------------------
# Plain text

_SKIP_TAGS = frozenset(
    {"script", "style", "template", "head", "title", "meta", "link", "base", "svg", "iframe", "frame",
     "frameset", "object", "applet", "canvas", "select", "datalist", "input", "map", "param", "rt", "rp",
     "annotation", "annotation-xml"}
)  # fmt: skip
_PARAGRAPH_TAGS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "hr", "figure", "section", "article",
     "header", "footer", "main", "aside", "nav", "address", "form", "fieldset", "details", "dialog", "hgroup",
     "center", "search"}
)  # fmt: skip
_LINE_TAGS = frozenset(
    {"div", "li", "dt", "dd", "tr", "caption", "figcaption", "summary", "legend", "option", "optgroup", "body",
     "html", "dir", "noframes", "menuitem", "thead", "tbody", "tfoot"}
)  # fmt: skip
_LIST_TAGS = frozenset({"ul", "ol", "dl", "menu"})
_PRE_TAGS = frozenset({"pre", "listing", "xmp", "plaintext", "textarea"})
_CELL_TAGS = frozenset({"td", "th"})


class _TextWriter:
    """Accumulates text with deferred line breaks, so adjacent block boundaries merge into one."""

    __slots__ = ("parts", "pending", "space", "boundary", "pre", "rows", "lists", "marker")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending = 0  # line breaks owed before the next text: 0, 1 or 2
        self.space = False  # a collapsed space is owed before the next text on this line
        self.boundary = True  # at a line start or just after a cell separator: no space needed
        self.pre = 0
        self.rows: list[int] = []  # cells seen so far in each open <tr>
        self.lists: list[int] = []  # per open list: the next item's number (ordered), else 0
        self.marker = ""  # the list marker owed before the open item's first text

    def _flush(self) -> None:
        if not self.pending:
            return
        parts = self.parts
        while parts:
            last = parts[-1].rstrip()
            if last:
                parts[-1] = last
                break
            parts.pop()
        if parts:
            parts.append("\n" * self.pending)
            self.boundary = True
        self.pending = 0
        self.space = False

    def text(self, text: str) -> None:
        if not text:
            return
        if self.pre:
            self._flush()
            if self.space and not self.boundary:
                self.parts.append(" ")
            text = text.replace("\xa0", " ")
            if self.marker and not text.isspace():
                text = self.marker + text
                self.marker = ""
            self.parts.append(text)
            self.boundary = text.endswith("\n")
            self.space = False
            return
        core, lead, trail = collapsed_parts(text)
        if not core:
            self.space = True
            return
        self._flush()
        if (self.space or lead) and not self.boundary:
            self.parts.append(" ")
        if self.marker:
            core = self.marker + core
            self.marker = ""
        self.parts.append(core)
        self.boundary = False
        self.space = trail

    def formula(self, source: str, display: bool) -> None:
        fence = "$$" if display else "$"
        self.text(f"{fence}{source}{fence}")

    def brk(self, n: cython.int) -> None:
        if n > self.pending:
            self.pending = n
        self.space = False

    def line_break(self) -> None:
        if self.pre:
            self.text("\n")
        elif self.pending or self.boundary:
            # Already at a line start: a further <br> opens a blank line.
            self.pending = min(self.pending + 1, 2) if self.parts else 0
        else:
            self.pending = 1
        self.space = False

    def open(self, node: Node) -> bool:
        tag = node.tag
        if tag in _SKIP_TAGS:
            return False
        if tag in _PARAGRAPH_TAGS:
            self.brk(1 if _item_paragraph(node) else 2)
        elif tag in _LINE_TAGS:
            self.brk(1)
            if tag == "tr":
                self.rows.append(0)
            elif tag == "li":
                self._item_marker()
        elif tag in _CELL_TAGS:
            if self.rows:
                if self.rows[-1] and not self.pending and self.parts:  # no separator before any text
                    self.parts.append(" |")
                    self.boundary = False
                    self.space = True
                self.rows[-1] += 1
        elif tag in _LIST_TAGS:
            self.brk(1 if self.lists else 2)
            self.lists.append(first_number(node) if tag == "ol" else 0)
        elif tag in _PRE_TAGS:
            self.brk(2)
            self.pre += 1
        elif tag == "br":
            self.line_break()
        return True

    def close(self, node: Node) -> None:
        tag = node.tag
        if tag in _PARAGRAPH_TAGS:
            self.brk(1 if _item_paragraph(node) else 2)
        elif tag in _LINE_TAGS:
            self.brk(1)
            if tag == "tr" and self.rows:
                self.rows.pop()
            elif tag == "li":
                self.marker = ""
        elif tag in _LIST_TAGS:
            if self.lists:
                self.lists.pop()
            self.brk(1 if self.lists else 2)
        elif tag in _PRE_TAGS:
            self.pre -= 1
            self.brk(2)

    def _item_marker(self) -> None:
        lists = self.lists
        if lists and lists[-1]:
            self.marker = f"{lists[-1]}. "
            lists[-1] += 1
        else:
            self.marker = "- "

    def result(self) -> str:
        return "".join(self.parts).rstrip().lstrip("\n")


def _item_paragraph(node: Node) -> bool:
    """Whether ``node`` is the one element of a list item (``<li><p>…</p></li>``): such an item is a line of
    its list, as the item without the ``p`` would be."""
    parent = node.parent
    if parent is None or parent.tag != "li" or len(parent.children) != 1:
        return False
    return is_blank(parent.text) and is_blank(node.tail)


def to_text(main: str | MainContent) -> str:
    """Plain text of ``main`` (a page's :class:`MainContent`, or HTML): block elements on their own lines;
    rules in the module doc."""
    root, keep, drop_blanks = _tree(main)
    if root is None:
        return ""
    writer = _TextWriter()
    walk(root, writer, keep, drop_blanks=drop_blanks)
    return writer.result()
