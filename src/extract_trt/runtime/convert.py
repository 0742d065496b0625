"""Main HTML → Markdown or plain text.

``to_markdown`` (product output): html2text with ``bodywidth=0`` (no wrapping of text, links, lists or
tables), ``unicode_snob`` (keep “—”, “é” … as is), links and images on or off, tables as Markdown pipe tables,
code blocks fenced with backquotes. Before conversion, spacer/tracking images are dropped: an ``<img>`` whose
``width``/``height`` is 0 or 1, or whose file name has a token such as ``spacer``, ``pixel``, ``blank``,
``transparent``, ``1x1``, ``clear``, ``tracking``, ``beacon`` (``.gif``/``.png``/no extension). A
``data:image`` (or missing) ``src`` is replaced by a lazy-loading attribute (``data-src``,
``data-original``, ``data-lazy-src``, …) when there is one, else the image is dropped. After conversion: empty
links ``[](url)`` are removed, no-break spaces become spaces, whitespace-only lines become empty, code fences get
a blank line around them, runs of blank lines outside fenced code collapse to one (no ``\\n\\n\\n``), and the
result is stripped.

``benchmark_markdown``: *exactly* the WebMainBench conversion (spec §4.3): ``HTML2Text(bodywidth=0)``,
``ignore_links = ignore_images = True``, ``baseurl = url or ""``, ``handle(main_html)``, no post-processing.

``to_text``: plain text from a walk of the selectolax/Lexbor tree, modelled on the DOM ``innerText`` rules:

* block elements (``div``, ``li``, ``tr``, ``dt``, ``dd``, ``caption``, ``figcaption``, …) start and end a line;
  "paragraph" blocks (``p``, ``h1``–``h6``, ``pre``, ``blockquote``, ``table``, ``figure``, ``section``,
  ``article``, ``header``, ``footer``, ``hr``, top-level ``ul``/``ol``/``dl`` …) are separated by one blank line;
  a list nested in another list only breaks the line. Adjacent breaks merge (the strongest wins), so there is
  never more than one blank line in a row.
* ``<br>`` ends the line; a second ``<br>`` in a row gives a blank line.
* Table cells of one row are joined by a tab (``\\t``); a cell holding block content starts its own line.
* Outside ``pre``/``textarea``/``listing``/``xmp`` every run of whitespace (no-break space included) becomes one
  space and spaces at line ends are dropped; inside them text is kept verbatim (no-break spaces become spaces).
* The content of ``script``, ``style``, ``noscript``, ``template``, ``head``, ``svg``, ``iframe``, ``select``,
  media and embedded objects is dropped, as are comments. Entities are decoded by the parser.
* The result has no leading or trailing blank lines and no trailing whitespace.

The walk uses an explicit stack (never Python recursion), so arbitrarily deep trees work. Note that Lexbor's own
tree building is quadratic in nesting depth for block elements (100,000 nested ``div`` take ~30 s to parse).
"""

from __future__ import annotations

import re

import html2text
from selectolax.lexbor import LexborHTMLParser

__all__ = ["benchmark_markdown", "remove_spacer_images", "to_markdown", "to_text"]

# ---------------------------------------------------------------------------------------------------------
# Markdown

_IMG_TAG = re.compile(r"<img\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?""")
_LAZY_SRC_ATTRS = ("data-src", "data-original", "data-lazy-src", "data-lazy", "data-url", "data-srcset", "srcset")
_SPACER_TOKENS = frozenset(
    {"spacer", "pixel", "blank", "transparent", "trans", "1x1", "clear", "clearpixel", "spacergif", "tracking",
     "tracker", "beacon", "pix", "shim", "dot"}
)  # fmt: skip
_SPACER_EXTENSIONS = frozenset({"", "gif", "png"})
_TINY = frozenset({"0", "1", "0px", "1px"})
_EMPTY_LINK = re.compile(r"(?<!!)\[\]\([^()\s]*(?:\s+\"[^\"]*\")?\)")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _img_attrs(tag: str) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for m in _ATTR.finditer(tag, 4):  # skip "<img"
        name = m.group(1).lower()
        if name not in attrs:
            value = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
            attrs[name] = value or ""
    return attrs


def _is_spacer_src(src: str) -> bool:
    path = src.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    name = path.rsplit("/", 1)[-1].lower()
    stem, dot, ext = name.rpartition(".")
    if not dot:
        stem, ext = name, ""
    if ext not in _SPACER_EXTENSIONS:
        return False
    return any(tok in _SPACER_TOKENS for tok in re.split(r"[^a-z0-9]+", stem) if tok)


def _clean_img(match: re.Match[str]) -> str:
    tag = match.group(0)
    attrs = _img_attrs(tag)
    if attrs.get("width", "").strip().lower() in _TINY or attrs.get("height", "").strip().lower() in _TINY:
        return ""
    src = attrs.get("src", "").strip()
    if not src or src.lower().startswith("data:"):
        for name in _LAZY_SRC_ATTRS:
            candidate = attrs.get(name, "").strip().split(",")[0].split()
            if candidate and not candidate[0].lower().startswith("data:"):
                alt = attrs.get("alt", "").replace('"', "&quot;")
                title = attrs.get("title", "").replace('"', "&quot;")
                new_src = candidate[0].replace('"', "%22")
                extra = f' title="{title}"' if title else ""
                return f'<img src="{new_src}" alt="{alt}"{extra}>'
        return ""
    if _is_spacer_src(src):
        return ""
    return tag


def remove_spacer_images(html: str) -> str:
    """Drop spacer/tracking ``<img>`` tags and resolve lazy-loaded ``data:`` sources (rules in the module doc)."""
    if "<img" not in html and "<IMG" not in html:
        return html
    return _IMG_TAG.sub(_clean_img, html)


def _converter(links: bool, images: bool) -> html2text.HTML2Text:
    # A fresh converter per call: HTML2Text keeps parse state and is not reentrant.
    conv = html2text.HTML2Text(baseurl="", bodywidth=0)
    conv.unicode_snob = True
    conv.ignore_links = not links
    conv.ignore_images = not images
    conv.images_to_alt = False
    conv.default_image_alt = ""
    conv.inline_links = True
    conv.protect_links = False
    conv.wrap_links = False
    conv.wrap_list_items = False
    conv.wrap_tables = False
    conv.bypass_tables = False
    conv.ignore_tables = False
    conv.pad_tables = False
    conv.backquote_code_style = True  # fenced ``` blocks instead of 4-space indents
    conv.mark_code = False
    conv.single_line_break = False
    conv.escape_snob = False
    return conv


def _tidy_markdown(md: str) -> str:
    md = md.replace("\xa0", " ")
    if "[](" in md:
        md = _EMPTY_LINK.sub("", md)
    out: list[str] = []
    in_fence = False
    blank = True  # the previous emitted line is blank (or nothing yet): drops leading blank lines
    for line in md.split("\n"):
        if line.lstrip().startswith("```"):
            # html2text glues fences to neighbouring tables/text and leaves spaces after them.
            line = line.rstrip()
            if not in_fence and not blank:
                out.append("")
            out.append(line)
            in_fence = not in_fence
            blank = False
            if not in_fence:
                out.append("")
                blank = True
            continue
        if in_fence:
            out.append(line)
            continue
        if not line.strip():
            if not blank:
                out.append("")
            blank = True
            continue
        out.append(line)
        blank = False
    return "\n".join(out).strip()


def to_markdown(main_html: str, *, links: bool = True, images: bool = True) -> str:
    """Markdown of ``main_html`` (html2text, spacer images removed, blank lines collapsed, stripped)."""
    if not main_html or not main_html.strip():
        return ""
    html = remove_spacer_images(main_html) if images else main_html
    md = _converter(links, images).handle(html)
    return _tidy_markdown(md)


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
    {"script", "style", "noscript", "template", "head", "title", "meta", "link", "base", "svg", "iframe", "frame",
     "frameset", "object", "embed", "applet", "canvas", "audio", "video", "source", "track", "select", "datalist",
     "input", "map", "param"}
)  # fmt: skip
_PARAGRAPH_TAGS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "hr", "figure", "section", "article",
     "header", "footer", "main", "aside", "nav", "address", "form", "fieldset", "details", "dialog", "hgroup",
     "center", "search"}
)  # fmt: skip
_LINE_TAGS = frozenset(
    {"div", "li", "dt", "dd", "tr", "caption", "figcaption", "summary", "legend", "option", "optgroup", "body",
     "html", "dir", "noframes", "menuitem", "cc-alg-uc-text", "thead", "tbody", "tfoot"}
)  # fmt: skip
_LIST_TAGS = frozenset({"ul", "ol", "dl", "menu"})
_PRE_TAGS = frozenset({"pre", "listing", "xmp", "plaintext", "textarea"})
_CELL_TAGS = frozenset({"td", "th"})
_WS = re.compile(r"\s+")


class _TextWriter:
    """Accumulates text with deferred line breaks, so adjacent block boundaries merge into one."""

    __slots__ = ("parts", "pending", "space", "boundary", "pre", "rows", "lists")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pending = 0  # line breaks owed before the next text: 0, 1 or 2
        self.space = False  # a collapsed space is owed before the next text on this line
        self.boundary = True  # at a line start or just after a cell separator: no space needed
        self.pre = 0
        self.rows: list[int] = []  # cells seen so far in each open <tr>
        self.lists = 0

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
            self.parts.append(text)
            self.boundary = text.endswith("\n")
            self.space = False
            return
        collapsed = _WS.sub(" ", text)
        core = collapsed.strip(" ")
        if not core:
            self.space = True
            return
        self._flush()
        if (self.space or collapsed[0] == " ") and not self.boundary:
            self.parts.append(" ")
        self.parts.append(core)
        self.boundary = False
        self.space = collapsed[-1] == " "

    def brk(self, n: int) -> None:
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

    def open(self, tag: str) -> None:
        if tag in _PARAGRAPH_TAGS:
            self.brk(2)
        elif tag in _LINE_TAGS:
            self.brk(1)
            if tag == "tr":
                self.rows.append(0)
        elif tag in _CELL_TAGS:
            if self.rows:
                if self.rows[-1] and not self.pending:
                    self.parts.append("\t")
                    self.boundary = True
                    self.space = False
                self.rows[-1] += 1
        elif tag in _LIST_TAGS:
            self.brk(1 if self.lists else 2)
            self.lists += 1
        elif tag in _PRE_TAGS:
            self.brk(2)
            self.pre += 1
        elif tag == "br":
            self.line_break()

    def close(self, tag: str) -> None:
        if tag in _PARAGRAPH_TAGS:
            self.brk(2)
        elif tag in _LINE_TAGS:
            self.brk(1)
            if tag == "tr" and self.rows:
                self.rows.pop()
        elif tag in _LIST_TAGS:
            self.lists -= 1
            self.brk(1 if self.lists else 2)
        elif tag in _PRE_TAGS:
            self.pre -= 1
            self.brk(2)

    def result(self) -> str:
        return "".join(self.parts).rstrip().lstrip("\n")


def to_text(main_html: str) -> str:
    """Plain text of ``main_html`` (block elements on their own lines; rules in the module doc)."""
    if not main_html or not main_html.strip():
        return ""
    tree = LexborHTMLParser(main_html)
    node = tree.root
    writer = _TextWriter()
    stack: list[tuple[object, str]] = []  # open elements as (node, tag); replaces recursion
    while node is not None:
        if node.is_text_node:
            writer.text(node.text_content or "")
        elif node.is_element_node:
            tag = node.tag or ""
            if tag not in _SKIP_TAGS:
                writer.open(tag)
                child = node.child
                if child is not None:
                    stack.append((node, tag))
                    node = child
                    continue
                writer.close(tag)
        # Advance to the next sibling, closing finished ancestors on the way up.
        while True:
            nxt = node.next
            if nxt is not None:
                node = nxt
                break
            if not stack:
                node = None
                break
            node, tag = stack.pop()
            writer.close(tag)
    return writer.result()
