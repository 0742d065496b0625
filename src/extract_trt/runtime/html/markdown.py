"""Markdown from an element tree (:class:`~extract_trt.runtime.html.dom.Node`), written in one walk.

:class:`MarkdownWriter` receives ``open``/``text``/``close`` calls from
:func:`extract_trt.runtime.html.convert.walk` and writes CommonMark/GFM directly, with no HTML string in
between. What it writes (the conventions of the html2text output the project used before, minus its
artefacts):

* **Blocks.** ``p div section article header footer main aside nav figure figcaption address form fieldset
  details summary caption center …`` are paragraphs (a blank line around them); adjacent boundaries merge,
  so there is never more than one blank line. ``<br>`` is a hard line break (``"  \\n"``), two in a row a
  paragraph break. ``<hr>`` is ``* * *``. Headings are ``#``…``######`` on one line (breaks inside a heading
  become spaces; empty headings vanish).
* **Lists.** ``* `` for ``ul``, ``1. `` for ``ol`` (``start`` honoured from 1 to 999,999); nested lists are
  indented by the width of their parent's marker; content after a nested list continues the item as a new
  paragraph. A ``<li>`` with nothing in it is dropped. A numbered item that would follow paragraph text
  (a list's first written item numbered other than 1, or an item after content between items) gets a
  blank line before it: CommonMark would otherwise read it, and a fenced block in it, as paragraph text. ``dt`` starts a paragraph and ``dd`` continues it on a new line.
* **Inline.** ``**strong**``/``**b**``, ``_em_``/``_i_``/``_u_``, ``~~del~~``, ``"q"``; marks are written
  around the text only (``a **b** c``, never ``a** b **c``), never empty, and closed and reopened across
  line breaks. ``[text](href "title")``: in-page (``#…``) and empty ``href`` are not links; a link that
  is written once, around its first stretch of text: a link that spans blocks (a card with a heading
  and a summary) links the first line (``## [Title](u)``), the rest is plain text; a link inside a link
  ends the outer one's stretch (if it had text yet; else the outer one starts after the inner one). A
  link whose text is its own absolute URL is written as the bare URL (GFM autolinks it; ``<url>`` would
  be raw HTML to a renderer). ``![alt](src)`` with spacer and tracking images removed and lazy ``data:``
  sources resolved (:func:`image_source`). Destinations: see *Safety*.
* **Code.** ``<pre>`` is a fenced block (text verbatim, ``<br>`` and block children give line breaks, the
  fence is longer than any backtick run at a line start in it). ``code kbd tt samp`` outside ``pre`` are
  code spans (whitespace collapsed, the delimiter longer than any backtick run inside); one holding line
  breaks (``<br>``, block children) becomes a fenced block. Markup inside code is ignored.
* **Formulas.** A MathML ``<math>`` that gives its TeX source (a TeX ``annotation``, as MediaWiki, KaTeX and
  MathJax write, or ``alttext``) is that source in GitHub's math syntax: ``$`\\pi r^{2}`$`` inline, a fenced
  ``math`` block for ``display="block"``; no renderer reads markup in it, and a plain CommonMark one shows the
  TeX in a code span. The renderings beside it (MediaWiki's fallback image, KaTeX's glyphs: ``aria-hidden``
  siblings of its wrapper) are left out: :func:`~extract_trt.runtime.html.convert.walk`. MathML without a
  source is written as its text.
* **Tables.** A table whose rows have at least two cells and whose cells hold only inline content (no
  nested table, list, heading, ``pre``, ``blockquote``, ``hr``; at most :data:`MAX_CELL_TEXT` characters)
  is a GFM pipe table: the first row is the header, every row is padded to the widest, ``|`` in cells is
  escaped, rows with only empty cells are left out. Any other table is layout: its rows and cells are
  paragraphs.
* **Blockquotes** prefix their lines with ``> `` (blank lines inside them with ``>``), also inside lists.
* **Nesting** of blockquotes and list items is written up to :data:`MAX_NESTING` levels; deeper ones are
  flattened into the deepest written level (a deeper item starts a new line there, a deeper quote a new
  paragraph), so a line's prefix is bounded and the Markdown's size is linear in the page's (8,000 nested
  ``<blockquote>`` made 128 MB of Markdown from 112 KB before the bound).
* **Text.** Whitespace runs (no-break spaces included) become one space outside code; soft hyphens are
  dropped (:func:`~extract_trt.runtime.html.convert.walk` leaves them out of every text run).
* **Left out:** ``script style head title meta link base iframe frame canvas select datalist input map
  param`` with their content, and ruby annotations (``rt rp``: furigana, pinyin; a browser sets them above
  the text, and inline they would split every annotated word). Kept: ``noscript`` (lazy-loading pages put their real images there),
  ``template`` (script-rendered content), ``svg`` (its ``desc``/``text`` can be the content), ``audio``/
  ``video`` (in the reference's tree, text that followed a ``<source>``/``<track>`` is inside them).

**Safety** (by construction: nothing is repaired afterwards). Every run of page text is escaped for its
context by :func:`escape_text`: backslashes, backticks, ``[`` and ``]`` always (text can never open or
close a code span, a link, an image or a reference definition, on this line or the next); ``<`` before a
letter, ``/``, ``!``, ``?`` or at the end of the run (raw HTML, autolinks, comments: the next run could
continue it); ``&`` before ``#``, before ``name;`` or at the end of the run (an entity reference). A line
that would start with a block marker (``#`` heading, ``>``, ``-``/``+``/``*`` bullet, ``1.``/``1)`` number,
``:``/``|``/``-`` of a table delimiter row, ``~`` of a fence, ``=`` underline) gets a backslash, so page text
never turns into structure (and no delimiter row made of text can split a line with code spans into table
cells). A ``!`` just before a link is escaped (it would make the link an image); two code spans in a row
get a space between them. Emphasis characters are left as is (as html2text leaves them): at worst they
format text. Code spans and fenced blocks hold their text verbatim, with delimiters longer than any
backtick run inside. Link and image destinations go through :func:`safe_url`: the URL a browser would
read (percent-encoded, no blanks or control characters) must be relative or have a scheme in
:data:`LINK_SCHEMES` (``http https ftp mailto tel``), else the link is written as plain text and the
image left out; it is written in ``<…>`` form with ``\\ < >`` and entity-like ``&`` backslash-escaped, so
the ``href`` a renderer writes is exactly the URL checked. Link titles escape ``"`` and ``\\``; alt text is
escaped as text. The tests render the output with markdown-it-py (raw HTML on, link validation off)
and find only the elements Markdown makes by itself.

Everything is iterative (the walk keeps its own stack), so any nesting depth works, in linear time.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

from extract_trt.runtime.html.dom import Node, collapse_whitespace, collapsed_parts, escape_uri

try:  # compiled build: Cython's compile-time module (C types of the annotations); else a stand-in
    import cython
except ImportError:
    from extract_trt.runtime import _cython_shim as cython

__all__ = [
    "LINK_SCHEMES",
    "MAX_CELL_TEXT",
    "MAX_NESTING",
    "MarkdownWriter",
    "escape_text",
    "first_number",
    "image_source",
    "remove_spacer_images",
    "safe_url",
]

MAX_CELL_TEXT = 400  # a cell with more text than this makes its table a layout table

# ── images ────────────────────────────────────────────────────────────────────

_LAZY_SRC_ATTRS = ("data-src", "data-original", "data-lazy-src", "data-lazy", "data-url", "data-srcset", "srcset")
_SPACER_TOKENS = frozenset(
    {"spacer", "pixel", "blank", "transparent", "trans", "1x1", "clear", "clearpixel", "spacergif", "tracking",
     "tracker", "beacon", "pix", "shim", "dot"}
)  # fmt: skip
_SPACER_EXTENSIONS = frozenset({"", "gif", "png"})
_TINY = frozenset({"0", "1", "0px", "1px"})
_NAME_TOKENS = re.compile(r"[^a-z0-9]+")


def _is_spacer_src(src: str) -> bool:
    path = src.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    name = path.rsplit("/", 1)[-1].lower()
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    if ext not in _SPACER_EXTENSIONS:
        return False
    return any(tok in _SPACER_TOKENS for tok in _NAME_TOKENS.split(stem) if tok)


def image_source(attrs: Mapping[str, str]) -> str | None:
    """The URL an ``<img>`` with ``attrs`` shows, or ``None`` for an image to leave out.

    Left out: ``width``/``height`` of 0 or 1, a file name with a spacer/tracking token (``spacer``,
    ``pixel``, ``blank``, ``transparent``, ``1x1``, ``clear``, ``tracking``, ``beacon`` …; ``.gif``/``.png``/
    no extension), and a missing or ``data:`` ``src`` without a lazy-loading attribute (``data-src``,
    ``data-original``, ``data-lazy-src``, …, ``srcset``) to take the URL from.
    """
    if (attrs.get("width") or "").strip().lower() in _TINY or (attrs.get("height") or "").strip().lower() in _TINY:
        return None
    src = (attrs.get("src") or "").strip()
    if not src or src.lower().startswith("data:"):
        for name in _LAZY_SRC_ATTRS:
            candidate = (attrs.get(name) or "").strip().split(",")[0].split()
            if candidate and not candidate[0].lower().startswith("data:"):
                return candidate[0]
        return None
    return None if _is_spacer_src(src) else src


_IMG_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?""")


def _img_attrs(tag: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for m in _ATTR.finditer(tag, 4):  # skip "<img"
        name = m.group(1).lower()
        if name not in attrs:
            value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
            attrs[name] = value or ""
    return attrs


def _clean_img(match: re.Match[str]) -> str:
    tag = match.group(0)
    attrs = _img_attrs(tag)
    src = image_source(attrs)
    if src is None:
        return ""
    if src == attrs.get("src", "").strip():
        return tag
    alt = attrs.get("alt", "").replace('"', "&quot;")
    title = attrs.get("title", "").replace('"', "&quot;")
    extra = f' title="{title}"' if title else ""
    return f'<img src="{src.replace(chr(34), "%22")}" alt="{alt}"{extra}>'


def remove_spacer_images(html: str) -> str:
    """``html`` with the ``<img>`` tags :func:`image_source` leaves out removed and lazy sources resolved."""
    if "<img" not in html and "<IMG" not in html:
        return html
    return _IMG_TAG.sub(_clean_img, html)


# ── element kinds ─────────────────────────────────────────────────────────────

(
    _SKIP, _BLOCK, _HEADING, _LIST, _ITEM, _TERM, _DEFINITION, _PRE, _CODE, _QUOTE, _TABLE, _ROW, _CELL, _BR,
    _HR, _LINK, _IMG, _MARK,
) = range(18)  # fmt: skip

_KINDS: dict[str, int] = {
    **dict.fromkeys(
        ("script", "style", "head", "title", "meta", "link", "base", "iframe", "frame", "canvas", "select",
         "datalist", "input", "map", "param", "rt", "rp", "annotation", "annotation-xml"),  # not shown: ruby
        # annotations are set above the text, a formula's annotations are its sources
        _SKIP,
    ),
    **dict.fromkeys(
        ("p", "div", "section", "article", "header", "footer", "main", "aside", "nav", "figure", "figcaption",
         "address", "form", "fieldset", "legend", "details", "summary", "dialog", "hgroup", "center", "search",
         "caption", "menuitem", "dir", "listing", "xmp", "plaintext", "frameset", "noframes", "body", "html",
         "dl", "option", "optgroup", "textarea"),
        _BLOCK,
    ),
    **dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), _HEADING),
    **dict.fromkeys(("ul", "ol", "menu"), _LIST),
    "li": _ITEM,
    "dt": _TERM,
    "dd": _DEFINITION,
    "pre": _PRE,
    **dict.fromkeys(("code", "kbd", "tt", "samp"), _CODE),
    "blockquote": _QUOTE,
    "table": _TABLE,
    **dict.fromkeys(("tr", "thead", "tbody", "tfoot"), _ROW),
    **dict.fromkeys(("td", "th"), _CELL),
    "br": _BR,
    "hr": _HR,
    "a": _LINK,
    "img": _IMG,
    **dict.fromkeys(("b", "strong", "em", "i", "u", "del", "s", "strike", "q"), _MARK),
}
_MARKS = {"b": "**", "strong": "**", "em": "_", "i": "_", "u": "_", "del": "~~", "s": "~~", "strike": "~~", "q": '"'}
# Inside a table cell, these make the table a layout table.
_CELL_BLOCKERS = frozenset(
    {"table", "ul", "ol", "dl", "li", "menu", "pre", "blockquote", "hr", "h1", "h2", "h3", "h4", "h5", "h6",
     "listing", "xmp", "plaintext"}
)  # fmt: skip

# Text: a backslash, a backtick and a bracket are always escaped (no text can open or close a code span, a
# link or an image); ``<`` before what could start a tag or autolink (or at the end of a text run, where the
# next run could), and ``&`` before what could be an entity reference (or at a run end), are escaped too.
_TEXT_SPECIALS = re.compile(r"[\\`\[\]]|<(?=[A-Za-z/!?]|$)|&(?=#|[A-Za-z0-9]+;|$)")
# Link titles: the title's own delimiter and the backslash (entities in titles are decoded, inertly).
_TITLE_SPECIALS = re.compile(r'[\\"]')
# Link destinations, written in ``<…>`` form: what would end the form early or be decoded by the renderer.
_DESTINATION_SPECIALS = re.compile(r"[\\<>]|&(?=#|[A-Za-z0-9]+;)")
# A line that starts with a block marker (heading, quote, bullet, number, fence, table delimiter row).
_LINE_MARKER = re.compile(r"(?:#{1,6}|[+*])(?:\s|$)|[>:|=~-]")
_LINE_NUMBER = re.compile(r"\d{1,9}(?=[.)](?:\s|$))")
_BACKTICKS = re.compile(r"`+")
_ABSOLUTE_URL = re.compile(r"[a-zA-Z+]+://")
_UNESCAPED_URLS = ("http://", "https://", "ftp://", "HTTP://", "HTTPS://", "FTP://", "//")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
LINK_SCHEMES = frozenset({"http", "https", "ftp", "mailto", "tel"})
MAX_NESTING = 16  # blockquote and list-item levels written as such; deeper ones are flattened into the 16th


def escape_text(text: str) -> str:
    """``text`` (one run of page text) with every character that could start Markdown syntax beyond
    emphasis escaped: backslashes, backticks, brackets, ``<`` of a possible tag and ``&`` of a possible
    entity (see :data:`_TEXT_SPECIALS`)."""
    if "\\" in text or "`" in text or "[" in text or "]" in text or "<" in text or "&" in text:
        return _TEXT_SPECIALS.sub(r"\\\g<0>", text)
    return text  # most runs: six substring tests are ten times faster than the regex finding nothing


def first_number(node: Node) -> int:
    """The number of an ``<ol>``'s first item: its ``start``, or 1 when that is missing, invalid or outside
    1…999,999 (a list marker has at most 9 digits, and no sign)."""
    start = node.attrs.get("start", "").strip()
    return int(start) if start.isascii() and start.isdigit() and 0 < int(start) < 1_000_000 else 1


def _escape_line_start(text: str) -> str:
    first = text[0]
    if first in "#>-+*:|=~":
        return "\\" + text if _LINE_MARKER.match(text) else text
    if first.isdigit():
        m = _LINE_NUMBER.match(text)
        if m:
            return f"{text[: m.end()]}\\{text[m.end() :]}"
    return text


def safe_url(url: str) -> str | None:
    """``url`` (an attribute value, entities decoded) as a Markdown link destination in ``<…>`` form, or
    ``None`` when its scheme is not in :data:`LINK_SCHEMES` (a relative URL has none).

    The URL is percent-encoded like the main HTML's attributes (entities in an absolute URL decoded once
    more first, as reconstruction does), so it has no blanks or control characters and its scheme is the
    one a browser reads; the renderer's own decoding (backslash escapes, entity references) is undone by
    escaping, so the ``href`` it writes is exactly the URL checked here."""
    url = escape_uri(url)
    if "&" in url and url.startswith(_UNESCAPED_URLS):
        url = escape_uri(html.unescape(url))  # as the reference's main HTML has it (reconstruct._unescape_urls)
    scheme = _SCHEME.match(url)
    if scheme is not None and scheme.group(1).lower() not in LINK_SCHEMES:
        return None
    if "\\" in url or "<" in url or ">" in url or "&" in url:
        url = _DESTINATION_SPECIALS.sub(r"\\\g<0>", url)
    return "<" + url + ">"


def _longest_run(text: str) -> int:
    return max((len(m) for m in _BACKTICKS.findall(text)), default=0)


class _Mark:
    """An open inline construct (emphasis, link): written around the text only, once text comes."""

    __slots__ = ("node", "open", "close", "shown", "suspended", "done", "href")

    def __init__(self, node: Node, open_: str, close: str) -> None:
        self.node = node
        self.open = open_
        self.close = close
        self.shown = False
        self.suspended = False  # a link inside this link is open: its text links there
        self.done = False
        self.href: str | None = None  # an absolute link's URL: text equal to it is written bare


class _Table:
    """A pipe table being collected: its cells are written into their own buffers."""

    __slots__ = ("node", "rows", "cell", "saved")

    def __init__(self, node: Node) -> None:
        self.node = node
        self.rows: list[list[str]] = []
        self.cell: Node | None = None
        self.saved: tuple | None = None


class MarkdownWriter:
    """Builds Markdown from ``open(node)``/``text(str)``/``close(node)`` calls in document order.

    ``keep`` (the nodes that are written, ``None``: all) is needed to look ahead into tables.
    """

    def __init__(self, *, links: bool = True, images: bool = True, keep: set[Node] | None = None) -> None:
        self.links = links
        self.images = images
        self.keep = keep
        self.out: list[str] = []
        self.written = False  # content has been written (so owed breaks are real)
        self.pending = 0  # line breaks owed before the next content: 0, 1 or 2 (a blank line)
        self.space = False  # a collapsed space is owed before the next content on this line
        self.col0 = True  # at a line start whose prefix is not written yet
        self.boundary = True  # nothing after the line prefix/marker yet: an owed space is dropped
        self.line_start = True  # the next text starts a line (block markers in it are escaped)
        self.after_list = False  # a nested list just ended: text after it needs a blank line
        self.prefix: list[list] = []  # [continuation indent, bullet still to write, owner node]
        self.line_owners: list[Node] = []  # owners of the prefix entries of the current line
        self.bullets = 0  # bullets still to write: breaks before the item's first content are dropped
        self.marks: list[_Mark] = []
        self.heading = 0  # level of a heading whose marker is still to write
        self.inline = 0  # inside a heading or a pipe-table cell: breaks become spaces
        self.lists: list[list] = []  # [owner node, ordered, next number, end of last written item]
        self.tables: list[_Table | None] = []  # pipe tables being collected; None for a layout table
        self.capture: list[str] | None = None  # text of the <pre> or inline code being collected
        self.capture_node: Node | None = None
        self.capture_raw = False

    # ── walk interface ──

    def open(self, node: Node) -> bool:
        """Handle a start tag; ``False``: leave out the element's content."""
        kind = _KINDS.get(node.tag)
        if kind is None:
            return True
        if kind == _SKIP:
            return False
        if self.capture is not None:
            self._capture_break(kind)
            return True
        if kind == _MARK:
            self._open_mark(node, _MARKS[node.tag])
        elif kind == _LINK:
            self._open_link(node)
        elif kind == _BLOCK:
            self.brk(2)
        elif kind == _BR:
            self._line_break()
        elif kind == _IMG:
            self._image(node)
        elif kind == _ITEM:
            self._open_item(node)
        elif kind == _LIST:
            self.brk(1 if self.lists else 2)
            self.lists.append([node, node.tag == "ol", first_number(node), -1])
        elif kind == _HEADING:
            if not self.inline:
                self.brk(2)
                self.heading = int(node.tag[1])
            self.inline += 1
        elif kind == _PRE or kind == _CODE:
            self.capture = []
            self.capture_node = node
            self.capture_raw = kind == _PRE
        elif kind == _CELL:
            self._open_cell(node)
        elif kind == _ROW:
            table = self.tables[-1] if self.tables else None
            if table is None:
                self.brk(2)
            elif node.tag == "tr":
                table.rows.append([])
        elif kind == _TABLE:
            self._open_table(node)
        elif kind == _TERM:
            self.brk(2)
        elif kind == _DEFINITION:
            self.brk(1)
        elif kind == _QUOTE:
            self.brk(2)
            if not self.inline and len(self.prefix) < MAX_NESTING:
                self.prefix.append(["> ", "", node])
        elif kind == _HR:
            if self.inline:
                self.space = True
            else:
                self.brk(2)
                self._open_line()
                self._put("* * *")
                self.pending = 2
        return True

    def close(self, node: Node) -> None:
        kind = _KINDS.get(node.tag)
        if kind is None:
            return
        if self.capture is not None:
            if node is self.capture_node:
                self._end_capture()
            elif kind != _BR:
                self._capture_break(kind)
            return
        if kind == _MARK or kind == _LINK:
            marks = self.marks
            if marks and marks[-1].node is node:
                mark = marks.pop()
                if mark.shown:
                    self.out.append(mark.close)
                if kind == _LINK:
                    for outer in reversed(marks):
                        if outer.suspended:
                            outer.suspended = False
                            break
        elif kind == _BLOCK:
            self.brk(2)
        elif kind == _ITEM:
            prefix = self.prefix
            if prefix and prefix[-1][2] is node:
                if prefix.pop()[1]:
                    self.bullets -= 1  # an empty item: its bullet was never written
                elif self.lists:
                    self.lists[-1][3] = len(self.out)  # where the list's last written item ended (_open_item)
            self.brk(1)
        elif kind == _LIST:
            lists = self.lists
            if lists and lists[-1][0] is node:
                lists.pop()
            if lists:
                self.brk(1)
                self.after_list = True
            else:
                self.brk(2)
        elif kind == _HEADING:
            self.inline -= 1
            if not self.inline:
                self.heading = 0
                self.brk(2)
        elif kind == _CELL:
            self._close_cell(node)
        elif kind == _ROW:
            if not self.tables or self.tables[-1] is None:
                self.brk(2)
        elif kind == _TABLE:
            self._close_table(node)
        elif kind == _TERM or kind == _DEFINITION:
            self.brk(1)
        elif kind == _QUOTE:
            prefix = self.prefix
            if prefix and prefix[-1][2] is node:
                prefix.pop()
            self.brk(2)

    def text(self, text: str) -> None:
        if self.capture is not None:
            self.capture.append(text.replace("\xa0", " ") if self.capture_raw else collapse_whitespace(text))
            return
        core, lead, trail = collapsed_parts(text)
        if not core:
            self.space = True
            return
        marks = self.marks
        if marks and marks[-1].href == core and not marks[-1].shown:
            marks[-1].done = True  # <a href="https://x.org/">https://x.org/</a>: the URL itself, unlinked
        self._begin(lead)
        core = escape_text(core)
        if self.line_start:
            core = _escape_line_start(core)
        elif core[0] == "~" and self.out and self.out[-1][-1:] == "~":
            core = "\\" + core  # after a strikethrough mark at a line start it would make a ~~~ fence
        self._put(core)
        self.space = trail

    def result(self) -> str:
        return "".join(self.out).strip()

    # ── lines and breaks ──

    def brk(self, n: cython.int) -> None:
        """Owe ``n`` line breaks (1: new line, 2: blank line) before the next content."""
        if self.inline:
            self.space = True
        elif not self.bullets and n > self.pending:
            self.pending = n
            self.space = False

    def _line_break(self) -> None:
        if self.inline:
            self.space = True
        elif not self.bullets:
            if self.pending or self.boundary:
                # Already at a line start: a further <br> opens a blank line.
                self.pending = 2 if self.written and self.pending else (1 if self.written else 0)
            else:
                self.pending = 1
            self.space = False

    def _open_line(self) -> None:
        """Write the owed line breaks and the line prefix (blockquote marks, list indent, bullets)."""
        out = self.out
        if self.pending:
            if self.written:
                self._close_marks()
                n = self.pending
                if n == 1 and self.after_list and not self.bullets:
                    n = 2
                if n == 1:
                    out.append("\n" if self.bullets else "  \n")
                else:
                    out.append(self._blank_line())
                self.col0 = True
            self.pending = 0
            self.after_list = False
        if self.col0:
            self.line_owners = [entry[2] for entry in self.prefix]
            if self.prefix:
                parts = []
                for entry in self.prefix:
                    if entry[1]:
                        parts.append(entry[1])
                        entry[1] = ""
                    else:
                        parts.append(entry[0])
                out.append("".join(parts))
                self.bullets = 0
            self.col0 = False
            self.boundary = True
            self.line_start = True

    def _blank_line(self) -> str:
        """The line break, blank line and line break between two paragraphs: the blank line keeps the
        blockquote marks that both lines share (so a quote stays one quote, and does not start early)."""
        shared = []
        for entry, owner in zip(self.prefix, self.line_owners):
            if entry[2] is not owner:
                break
            shared.append(entry[0])
        cont = "".join(shared)
        return "\n" + cont.rstrip() + "\n" if ">" in cont else "\n\n"

    def _close_marks(self, down_to: cython.Py_ssize_t = 0) -> None:
        """Close the shown marks from the innermost down to index ``down_to`` (they reopen when text comes)."""
        marks = self.marks
        for i in range(len(marks) - 1, down_to - 1, -1):
            mark = marks[i]
            if mark.shown:
                self.out.append(mark.close)
                mark.shown = False
                mark.done = mark.open == "["  # a link is written once, around its first stretch of text

    def _begin(self, lead_space: cython.bint) -> None:
        """Prepare for inline content: breaks, prefix, heading marker, owed space, pending marks."""
        if self.pending or self.col0:
            self._open_line()
        out = self.out
        if self.heading:
            out.append("#" * self.heading + " ")
            self.heading = 0
            self.boundary = True
            self.line_start = False
        if (self.space or lead_space) and not self.boundary:
            out.append(" ")
        self.space = False
        for mark in self.marks:
            if not (mark.shown or mark.suspended or mark.done):
                if mark.open == "_" and not self.boundary and out[-1][-1:].isalnum():
                    out.append(" ")  # `a_b_` would not be emphasis
                elif mark.open == "[" and out and out[-1][-1:] == "!":
                    out[-1] = out[-1][:-1] + "\\!"  # text's "!" and a link would make an image
                out.append(mark.open)
                mark.shown = True
                self.line_start = False

    def _put(self, text: str) -> None:
        self.out.append(text)
        self.written = True
        self.boundary = False
        self.line_start = False

    # ── inline constructs ──

    def _open_mark(self, node: Node, mark: str) -> None:
        if not any(m.open == mark for m in self.marks):
            self.marks.append(_Mark(node, mark, mark))

    def _open_link(self, node: Node) -> None:
        if not self.links:
            return
        href = node.attrs.get("href")
        if not href or href.startswith("#"):
            return
        for i in range(len(self.marks) - 1, -1, -1):
            outer = self.marks[i]
            if outer.open == "[" and not outer.suspended:
                # Markdown has no nested links: the outer link's text stops here and resumes after.
                self._close_marks(i)
                outer.suspended = True
                break
        destination = safe_url(href)
        if destination is None or len(self.marks) >= MAX_NESTING:
            return  # a script URL (or a link nested past the bound, in SVG) is left as plain text
        title = collapse_whitespace(node.attrs.get("title") or "").strip()
        if title:
            title = ' "' + _TITLE_SPECIALS.sub(r"\\\g<0>", title) + '"'
        mark = _Mark(node, "[", f"]({destination}{title})")
        if _ABSOLUTE_URL.match(href):
            mark.href = href
        self.marks.append(mark)

    def _image(self, node: Node) -> None:
        if not self.images:
            return
        src = image_source(node.attrs)
        destination = None if src is None else safe_url(src)
        if destination is None:
            return
        alt = escape_text(collapse_whitespace(node.attrs.get("alt") or "").strip())
        self._begin(False)
        self._put(f"![{alt}]({destination})")

    # ── lists ──

    def _open_item(self, node: Node) -> None:
        lst = self.lists[-1] if self.lists else None
        if lst is not None and lst[3] >= 0 and self.written and not self.bullets:
            # Items of one list stay tight, whatever blocks ended the previous one; but after content
            # between two items (outside both), a blank line: a numbered item cannot interrupt a paragraph.
            self.pending = 1 if lst[3] == len(self.out) else 2
            self.space = False
        elif lst is not None and lst[1] and lst[3] < 0 and lst[2] != 1:
            self.brk(2)  # nor can a list's first written item numbered other than 1
        else:
            self.brk(1)
        if lst is not None and lst[1]:
            bullet = f"{lst[2]}. "
            lst[2] += 1
        else:
            bullet = "* "
        if self.inline or len(self.prefix) >= MAX_NESTING:
            return  # an item nested past the bound starts a line of the deepest written one
        self.prefix.append([" " * len(bullet), bullet, node])
        self.bullets += 1

    # ── code ──

    def _capture_break(self, kind: int) -> None:
        if kind == _BR:
            self.capture.append("\n")
        elif kind in (_BLOCK, _HEADING, _LIST, _ITEM, _TERM, _DEFINITION, _QUOTE, _ROW, _TABLE, _PRE, _HR):
            capture = self.capture
            if capture and not capture[-1].endswith("\n"):
                capture.append("\n")

    def _end_capture(self) -> None:
        content = "".join(self.capture)
        raw = self.capture_raw
        self.capture = self.capture_node = None
        if raw:
            lines = [line.rstrip() for line in content.strip("\n").rstrip().split("\n")]
        else:
            lines = [line.strip(" ") for line in content.split("\n")]
            while lines and not lines[-1]:
                lines.pop()
            while lines and not lines[0]:
                lines.pop(0)
        if (raw or len(lines) > 1) and lines != [""] and not self.inline:
            self._code_block(lines)
        elif raw:
            self._code_span(collapse_whitespace(" ".join(lines)).strip(), False, False)
        else:
            stripped = content.strip(" ")
            self._code_span(" ".join(lines), content[:1] == " ", content[-1:] == " " and stripped != "")

    def formula(self, source: str, display: bool) -> None:
        """A formula's TeX source in GitHub's math syntax, which no renderer reads as markup: ``$`…`$`` (a
        code span between dollars), a fenced ``math`` block for display math outside inline content. Inside
        code it is the code's text."""
        if self.capture is not None:
            self.capture.append(source)
            return
        if display and not self.inline:
            self._code_block([line.rstrip() for line in source.strip("\n").split("\n")], "math")
            return
        code = collapse_whitespace(source).strip()
        delim = "`" * (_longest_run(code) + 1)
        pad = " " if code[0] == "`" or code[-1] == "`" else ""
        self._begin(False)
        self._put(f"${delim}{pad}{code}{pad}{delim}$")

    def _code_span(self, code: str, lead: bool, trail: bool) -> None:
        if not code:
            self.space = self.space or lead or trail
            return
        delim = "`" * (_longest_run(code) + 1)
        pad = " " if code[0] == "`" or code[-1] == "`" else ""
        self._begin(lead)
        if self.out and self.out[-1][-1:] == "`":
            self.out.append(" ")  # two code spans in a row would read as one (or as none)
        self._put(f"{delim}{pad}{code}{pad}{delim}")
        self.space = trail

    def _code_block(self, lines: list[str], info: str = "") -> None:
        fence = "`" * max(3, max((_longest_run(line) for line in lines if line.lstrip().startswith("`")), default=0) + 1)
        self.brk(2)
        self._open_line()
        cont = "".join(p[0] for p in self.prefix)
        blank = "\n" + cont.rstrip() if ">" in cont else "\n"
        nl = "\n" + cont
        self._put(fence + info + "".join(nl + line if line else blank for line in lines) + nl + fence)
        self.pending = 2
        self.space = False

    # ── tables ──

    def _open_table(self, node: Node) -> None:
        if self.inline or _table_columns(node, self.keep) < 2:
            self.tables.append(None)
            self.brk(2)
        else:
            self.tables.append(_Table(node))
            self.brk(2)

    def _open_cell(self, node: Node) -> None:
        table = self.tables[-1] if self.tables else None
        if table is None or table.cell is not None:
            self.brk(2)
            return
        if not table.rows:
            table.rows.append([])
        table.cell = node
        table.saved = self._state()
        self.out = []
        self.marks = []
        self.space = self.col0 = self.line_start = self.after_list = False
        self.boundary = True
        self.pending = 0
        self.inline += 1

    def _close_cell(self, node: Node) -> None:
        table = self.tables[-1] if self.tables else None
        if table is None or table.cell is not node:
            self.brk(2)
            return
        self._close_marks()
        cell = "".join(self.out).strip().replace("|", "\\|")
        self._restore(table.saved)
        table.saved = table.cell = None
        self.inline -= 1
        table.rows[-1].append(cell)

    def _state(self) -> tuple:
        return (self.out, self.marks, self.written, self.pending, self.space, self.col0, self.boundary,
                self.line_start, self.after_list)  # fmt: skip

    def _restore(self, state: tuple) -> None:
        (self.out, self.marks, self.written, self.pending, self.space, self.col0, self.boundary, self.line_start,
         self.after_list) = state  # fmt: skip

    def _close_table(self, node: Node) -> None:
        table = self.tables.pop() if self.tables else None
        if table is None or table.node is not node:
            self.brk(2)
            return
        rows = [row for row in table.rows if any(row)]
        if not rows:
            return
        width = max(len(row) for row in rows)
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
        lines.insert(1, "|" + " --- |" * width)
        self.brk(2)
        self._open_line()
        self._put(("\n" + "".join(p[0] for p in self.prefix)).join(lines))
        self.pending = 2
        self.space = False


def _table_columns(table: Node, keep: set[Node] | None) -> int:
    """The widest row of ``table`` when it can be a pipe table (cells with inline content only), else 0."""
    widest = cells = 0
    stack = list(reversed(table.children))
    while stack:
        node = stack.pop()
        if keep is not None and node not in keep:
            continue
        tag = node.tag
        if tag == "td" or tag == "th":
            cells += 1
            if not _inline_cell(node, keep):
                return 0
        elif tag in _CELL_BLOCKERS:
            return 0
        else:
            if tag == "tr":
                widest = max(widest, cells)
                cells = 0
            stack.extend(reversed(node.children))
    return max(widest, cells)


def _inline_cell(cell: Node, keep: set[Node] | None) -> bool:
    size = len(cell.text or "")
    if size > MAX_CELL_TEXT:
        return False
    stack = list(cell.children)
    while stack:
        node = stack.pop()
        if keep is not None and node not in keep:
            continue
        if node.tag in _CELL_BLOCKERS:
            return False
        size += len(node.text or "") + len(node.tail or "")
        if size > MAX_CELL_TEXT:
            return False
        stack.extend(node.children)
    return True
