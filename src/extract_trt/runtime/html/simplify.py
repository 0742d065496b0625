"""HTML → numbered blocks, in the exact block scheme of MinerU-HTML v1.1 / Pulpie (profile ``mineru-v1.1``).

The published labelers were trained on these block boundaries and strings, so this module reproduces the
reference rules (``../shared/docs/reference-spec.md`` §1.2–§1.6) including their quirks, on a Lexbor parse
instead of lxml + uuid-per-node deep copies:

1. parse (Lexbor), comments dropped;
2. a *processing view*: ``title head style script link meta iframe frame nav`` removed with their tails;
   then, post-order, elements with ``class``/``id`` exactly ``nav`` directly under ``<body>``, with an
   invisible inline style, or inside a closed ``<details>`` (except ``<summary>``) removed, their tail text
   kept (appended to the previous sibling's tail, else its text, else the parent's text);
3. segmentation: data vs layout tables, content vs layout lists, block vs inline elements, ``<br>`` ends a
   paragraph, loose text becomes a block named after its container, identical text runs of one container
   are dropped;
4. per block: attributes cut to ``class``/``id`` (+ ``src``/``alt`` on ``img``), lists shortened to
   first … last, blocks without text or image skipped, text capped at ``cutoff_length`` characters (text
   inside ``table``/``math`` not counted), ``_item_id`` 1..N;
5. the original DOM gets the same ids (``cc-alg-uc-text`` wrappers for loose text runs) → :class:`PageMap`.

Two reference quirks are kept on purpose because the models saw them: loose text directly under ``<body>``
never becomes a block, and a run under ``<body>`` holding exactly one element becomes that element.

The rules that differ between reference versions are the fields of :class:`SimplifyProfile`; this module
defines :data:`MINERU_V11` (the default) and :data:`MINERU_V11_WITH_HIDDEN` (the built-in block model's:
the same blocks plus those of the elements the reference drops as invisible). The Dripper v1.0 variant is
``simplify_v1.DRIPPER_V1``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from extract_trt.runtime.html import dom
from extract_trt.runtime.html.dom import (
    RAW_TEXT_TAGS,
    VOID_TAGS,
    Node,
    collapse_whitespace,
    escape_text,
    format_attr,
    iter_tree,
    serialize,
)
from extract_trt.errors import OutputTooLargeError, SimplifyError, describe
from extract_trt.runtime.types import Block, PageBlocks

try:  # compiled build: Cython's compile-time module; interpreted: its pure-Python stand-in, or ours
    import cython
except ImportError:
    from extract_trt.runtime import _cython_shim as cython

if not cython.compiled:  # compiled: the C function (cimported in the .pxd)
    from extract_trt.runtime.html.dom import PyErr_CheckSignals


INLINE_TAGS = frozenset(
    {
        "map", "optgroup", "span", "input", "time", "u", "strong", "small", "sub", "samp", "blink", "b",
        "code", "nobr", "strike", "bdo", "basefont", "abbr", "var", "i", "cccode-inline", "s", "pic", "label",
        "mark", "object", "ccmath-inline", "svg", "button", "a", "font", "dfn", "sup", "kbd", "q", "script",
        "acronym", "option", "img", "big", "cite", "em", "marked-tail", "marked-text",
    }
)  # fmt: skip
TABLE_TAGS = frozenset({"caption", "colgroup", "col", "thead", "tbody", "tfoot", "tr", "td", "th", "br"})
REMOVED_TAGS = frozenset({"title", "head", "style", "script", "link", "meta", "iframe", "frame", "nav"})
NO_BLOCK_TAGS = frozenset({"math"})
UNCOUNTED_TEXT_TAGS = frozenset({"math", "table"})
INVISIBLE_STYLES = {"display": "none", "font-size": "0px", "color": "transparent", "visibility": "hidden", "opacity": "0"}
NAV_MARKERS = frozenset({"nav"})
WRAPPER_TAG = "cc-alg-uc-text"
ELLIPSIS = "..."
_SHELL_HEAD = '<html><head><meta charset="utf-8"></head><body>'
_SHELL_TAIL = "</body></html>"
_TEXT_RUNS = re.compile(r"(<[^>]+>)|([^<]+)")
_LIST_TAGS = frozenset({"ul", "ol", "dl"})
_OWNED_TAGS = frozenset({"td", "th", "li", "dt", "dd"})  # blocks or not by their table's or list's kind


class PageMap:
    """The original DOM with block ids placed (the reference's ``map_html``, kept as a tree)."""

    __slots__ = ("root", "id_nodes", "profile")

    def __init__(self, root: Node, id_nodes: dict[int, Node], profile: SimplifyProfile | None = None) -> None:
        self.root = root
        self.id_nodes = id_nodes  # item id → the element or wrapper that carries it
        self.profile = profile or MINERU_V11  # reconstruction follows the same reference version

    def map_html(self) -> str:
        return serialize(self.root, with_marks=True)


@dataclass(frozen=True, slots=True)
class SimplifyProfile:
    """The rules in which the reference versions differ (spec §1.9); everything else is shared."""

    name: str
    cutoff_length: int  # default per-block text cap
    inline_tags: frozenset[str]
    removed_tags: frozenset[str]  # removed from the processing view with their tail text
    no_block_tags: frozenset[str]  # never a block container, never split
    should_remove: Callable[[Node], bool]  # attribute-based removal (hidden, navigation)
    keep_removed_tail: bool  # the tail of an attribute-removed element moves to its neighbour
    block_descendants: bool  # "has a block below" looks at all descendants (else direct children)
    content_lists: bool  # plain lists are one block, layout lists one block per item
    whole_data_tables: bool  # a data table is one block however large
    is_data_table: Callable[[Node], bool]
    truncate: Callable[[_Frag, int], None]
    reread_body_run: Callable[[_Frag], _Frag]  # how a run directly under <body> parses back (may _Skip)
    recall_line_breaks: bool  # reconstruction keeps <br> next to kept elements
    recall_wrapped_breaks: bool  # ... and a <br> alone in wrapper elements (<span><br></span>) beside one
    unescape_all: bool  # reconstruction unescapes the whole output (else only absolute URLs)


def simplify(
    html: object, cutoff_length: int | None = None, profile: SimplifyProfile | None = None, max_chars: int | None = None
) -> PageBlocks:
    """Segment the page ``html`` (a ``str``) into numbered blocks (``profile``: default :data:`MINERU_V11`;
    ``cutoff_length``: default the profile's).

    Raises :class:`SimplifyError` when ``html`` is not a ``str`` or the page cannot be parsed at all, and
    :class:`OutputTooLargeError` when its blocks' HTML passes ``max_chars`` characters (every run of text
    repeats its element's start tag, class and id included, as the reference writes it: 50,000 lines under
    one ``<div>`` with a 1 MB class would be 50 GB).
    """
    profile = profile or MINERU_V11
    if cutoff_length is None:
        cutoff_length = profile.cutoff_length
    if not isinstance(html, str):
        raise SimplifyError(f"simplify expects str, got {type(html).__name__}")
    try:
        # Content the processing view removes is built only if reconstruction or map_html needs it.
        root = dom.parse(html, lazy_tags=profile.removed_tags)
    except Exception as exc:  # Lexbor refusing input is rare but must not escape as a bare error
        raise SimplifyError(f"HTML parser failed: {describe(exc)}") from exc
    _remove_hidden(_remove_tags(root, profile), profile.keep_removed_tail)
    paragraphs = _Segmenter(root, profile).run()
    return _number_blocks(root, paragraphs, cutoff_length, profile, max_chars)


# ── processing view ──────────────────────────────────────────────────────────────


def _remove_tags(root: Node, profile: SimplifyProfile) -> list[Node]:
    """Drop the profile's removed tags (with their tails) from the processing view; return the hidden
    elements left."""
    removed = profile.removed_tags
    should_remove = profile.should_remove
    hidden: list[Node] = []
    stack = [root]
    node: Node  # (typed for the compiled build: C-level field access)
    kid: Node
    while stack:
        node = stack.pop()
        kids = node.pchildren
        if not kids:
            continue
        if any(k.tag in removed for k in kids):
            kids = node.pchildren = [k for k in kids if k.tag not in removed]
        for kid in kids:
            # The decision reads only attributes and the parent, so it can be taken before any removal.
            if (kid.attrs or node.tag == "details") and should_remove(kid):
                hidden.append(kid)
        stack.extend(reversed(kids))
    return hidden


def _should_remove(node: Node) -> bool:
    if _is_nav_marker(node):
        return True
    style = node.attrs.get("style")
    if style:
        for decl in style.split(";"):
            key, sep, value = decl.partition(":")
            if sep and INVISIBLE_STYLES.get(key.strip()) == value.strip():
                return True
    parent = node.parent
    if parent is not None and parent.tag == "details" and node.tag != "summary":
        return "open" not in parent.attrs
    return False


def _is_nav_marker(node: Node) -> bool:
    parent = node.parent
    attrs = node.attrs
    return (
        parent is not None
        and parent.tag == "body"
        and (attrs.get("class", "") in NAV_MARKERS or attrs.get("id", "") in NAV_MARKERS)
    )


def _post_order_key(node: Node) -> tuple[int, int]:
    last = node
    while last.pchildren:
        last = last.pchildren[-1]
    return last.index, -node.index


def _remove_hidden(hidden: list[Node], keep_tail: bool) -> None:
    """Remove hidden elements in post-order (the reference's order); with ``keep_tail`` their tail text
    moves to the previous sibling's tail, else its text, else the parent's text."""
    for node in sorted(hidden, key=_post_order_key):
        parent = node.parent
        tail = node.ptail or ""
        siblings = parent.pchildren
        pos = next(i for i, kid in enumerate(siblings) if kid is node)
        if keep_tail:
            _keep_tail(parent, siblings[pos - 1] if pos else None, tail)
        parent.pchildren = siblings[:pos] + siblings[pos + 1 :]


def _keep_tail(parent: Node, prev: Node | None, tail: str) -> None:
    if prev is not None:
        if prev.ptail is not None:
            prev.ptail += tail
        elif prev.ptext is not None:
            prev.ptext += tail
        else:
            prev.ptext = tail
    elif parent.ptext is not None:
        parent.ptext += tail
    else:
        parent.ptext = tail


# ── segmentation ─────────────────────────────────────────────────────────────────


def _nearest(node: Node | None, tags: tuple[str, ...]) -> Node | None:
    while node is not None and node.tag not in tags:
        node = node.parent
    return node


class _Paragraph:
    """A block before cleaning: a whole element, or a run of text/inline elements in a container."""

    __slots__ = ("container", "text", "elements", "content_type")

    def __init__(self, container: Node, text: str | None, elements: list[Node], content_type: str) -> None:
        self.container = container
        self.text = text  # leading text of a run (stripped pieces joined by a space)
        self.elements = elements  # run elements in order (empty for a whole-element block)
        self.content_type = content_type


class _Segmenter:
    def __init__(self, root: Node, profile: SimplifyProfile) -> None:
        self.root = root
        self.profile = profile
        self.inline_tags = profile.inline_tags
        self.no_block_tags = profile.no_block_tags
        self.table_data: dict[Node, bool] = {}
        self.list_content: dict[Node, bool] = {}
        self.block_below: dict[Node, bool] = {}
        self.block: dict[Node, bool] = {}  # _is_block of every node below the root, once types are known

    def run(self) -> list[_Paragraph]:
        order: list[Node] = []  # the processing view in document order
        tables, lists = [], []
        content_lists = self.profile.content_lists
        stack = [self.root]
        node: Node
        while stack:
            node = stack.pop()
            order.append(node)
            tag = node.tag
            if tag == "table":
                tables.append(node)
            elif content_lists and tag in _LIST_TAGS:
                lists.append(node)
            kids = node.pchildren
            if kids:
                stack.extend(reversed(kids))
        # (Nested tables and lists make these quadratic: the signal check lets the time budget stop them.)
        for table in tables:
            PyErr_CheckSignals()
            self.table_data[table] = self.profile.is_data_table(table)
        for lst in lists:  # document order: an outer list is judged before the lists inside it
            PyErr_CheckSignals()
            self.list_content[lst] = self._is_content_list(lst)
        self._compute_block_below(order)
        return self._paragraphs()

    def _is_block(self, node: Node) -> bool:
        tag = node.tag
        if tag in ("td", "th"):
            owner = _nearest(node, ("table",))
            return owner is not None and not self.table_data.get(owner, False)
        if tag in self.inline_tags:  # li/dt/dd are inline in some profiles
            return False
        if tag == "li":
            owner = _nearest(node, ("ul", "ol"))
            return owner is not None and not self.list_content.get(owner, False)
        if tag in ("dt", "dd"):
            owner = _nearest(node, ("dl",))
            return owner is not None and not self.list_content.get(owner, False)
        return tag not in self.no_block_tags

    def _scan_block_below(self, node: Node) -> bool:
        """Has ``node`` a block descendant (text inside ``math`` never counts)? Scans; no memo."""
        if node.tag in self.no_block_tags:
            return False
        stack = list(reversed(node.pchildren))
        while stack:
            cur = stack.pop()
            if self._is_block(cur):
                return True
            if cur.tag not in self.no_block_tags and cur.pchildren:
                stack.extend(reversed(cur.pchildren))
        return False

    def _is_content_list(self, lst: Node) -> bool:
        allowed = ("li",) if lst.tag in ("ul", "ol") else ("dt", "dd")
        items = [k for k in lst.pchildren if k.tag in ("li", "dt", "dd")]
        if not items:
            return False
        if any(k.tag not in allowed for k in lst.pchildren):
            return False
        if (lst.ptext and lst.ptext.strip()) or any(k.ptail and k.ptail.strip() for k in lst.pchildren):
            return False
        return not any(self._scan_block_below(item) for item in items)

    def _compute_block_below(self, order: list[Node]) -> None:
        """Memoise "is a block" and "has a block descendant" (or, by profile, "has a block child") for every
        node, bottom-up, once all types are known."""
        below = self.block_below
        block = self.block
        is_block = self._is_block
        inline_tags = self.inline_tags
        no_block = self.no_block_tags
        descendants: cython.bint = self.profile.block_descendants
        found: cython.bint
        kid_block: cython.bint
        node: Node
        kid: Node
        for node in reversed(order):
            PyErr_CheckSignals()  # (_is_block walks up to the owning table or list)
            found = False
            for kid in node.pchildren:
                tag = kid.tag
                if tag in _OWNED_TAGS:
                    kid_block = is_block(kid)
                else:  # what _is_block says for any other tag
                    kid_block = tag not in inline_tags and tag not in no_block
                block[kid] = kid_block
                if kid_block or (descendants and below[kid]):
                    found = True
            below[node] = found and node.tag not in no_block

    def _paragraphs(self) -> list[_Paragraph]:
        """The reference's ``process_node`` walk, with an explicit stack instead of recursion.

        A run collects ``pieces`` (stripped text before its first element — the only text the reference
        copies into the run's container clone; later text stays in the elements' raw tails), ``elements``,
        and ``sources`` (which kinds of item it saw, for its content type).
        """
        out: list[_Paragraph] = []
        seen_text_runs: set[tuple[int, str]] = set()
        below = self.block_below
        block = self.block
        table_data = self.table_data if self.profile.whole_data_tables else {}
        inline_tags = self.inline_tags
        node: Node
        child: Node
        run: _Run

        def flush(node: Node, run: _Run, final: bool) -> None:
            sources = run.sources
            if sources == {"direct"}:
                kind = "unwrapped_text"
            elif sources == {"element"}:
                kind = "inline_elements"
            elif final and "element" not in sources:
                kind = "unwrapped_text"
            else:
                kind = "mixed"
            text = " ".join(run.pieces) if run.pieces else None
            if not run.elements:
                # Text-only runs of one container serialize identically when their text is equal; the
                # reference drops such duplicates.
                key = (node.index, text or "")
                if key in seen_text_runs:
                    return
                seen_text_runs.add(key)
            out.append(_Paragraph(node, text, run.elements, kind))

        stack: list[tuple[Node, _Run, list[int]]] = [(self.root, _Run(self.root.ptext, "direct"), [0])]
        while stack:
            node, run, cursor = stack[-1]
            kids = node.pchildren
            i = cursor[0]
            if i >= len(kids):
                if run.sources:
                    flush(node, run, final=True)
                stack.pop()
                continue
            cursor[0] = i + 1
            child = kids[i]
            child_below = below[child]
            if not (child_below or block[child]):
                run.add_element(child)
                run.add_text(child.ptail, "tail")
                continue
            if child_below and child.tag in inline_tags:
                child.block_type_mark = True
            if child.tag == "br":
                run.add_element(child)
            if run.sources:
                flush(node, run, final=False)
                run.reset()
            if child.tag != "br":
                if table_data.get(child) or not child_below:
                    out.append(_Paragraph(child, None, [], "block_element"))
                else:
                    stack.append((child, _Run(child.ptext, "direct"), [0]))
            # Queued before the child's own paragraphs are produced, but the run only flushes later,
            # so the order of paragraphs is the reference's.
            run.add_text(child.ptail, "tail")
        return out


class _Run:
    __slots__ = ("pieces", "elements", "sources")

    def __init__(self, text: str | None, source: str) -> None:
        self.pieces: list[str] = []
        self.elements: list[Node] = []
        self.sources: set[str] = set()
        self.add_text(text, source)

    def add_text(self, text: str | None, source: str) -> None:
        if text:
            stripped = text.strip()
            if stripped:
                if not self.elements:
                    self.pieces.append(stripped)
                self.sources.add(source)

    def add_element(self, node: Node) -> None:
        self.elements.append(node)
        self.sources.add("element")

    def reset(self) -> None:
        self.pieces = []
        self.elements = []
        self.sources = set()


# ── per-block cleaning, numbering and mapping ─────────────────────────────────────


class _Frag(Node):
    """A node of a block fragment (the cleaned copy the model reads): a detached node, serialized like the
    page's own; only ``tag``, ``attrs``, ``text``, ``tail``, ``children`` and ``parent`` are used."""

    __slots__ = ()

    def __init__(self, tag: str, attrs: dict[str, str], text: str | None, tail: str | None, parent: _Frag | None):
        Node.__init__(self, tag, attrs, parent)
        self.text = text
        self.tail = tail


class _Skip(Exception):
    """The reference drops this paragraph without consuming an id."""


def _clean_attrs(node: Node) -> dict[str, str]:
    attrs: dict = node.attrs
    if not attrs:
        return {}
    out: dict[str, str] = {}
    if node.tag == "img":
        src = attrs.get("src", "").strip()
        if src and not src.startswith("data:image/"):
            out["src"] = src
        alt = attrs.get("alt", "").strip()
        if alt:
            out["alt"] = alt
    cls = attrs.get("class", "").strip()
    if cls:
        out["class"] = cls
    ident = attrs.get("id", "").strip()
    if ident:
        out["id"] = ident
    return out


class _CopyStats:
    """What the block's copy saw on the way: its text length and whether it has content (see
    :func:`_is_meaningful`), so that neither needs a walk of its own."""

    __slots__ = ("chars", "meaningful")

    def __init__(self) -> None:
        self.chars = 0
        self.meaningful = False


def _shortened(tag: str, items: list[Node]) -> list[int | None]:
    """Which of a list's ``items`` the reference's list shortening keeps, by index (first, ``...``, last; a
    ``<dl>`` keeps its first term group and its last one); ``None`` stands for the ``...`` span."""
    if tag == "dl":
        dts = [i for i, item in enumerate(items) if item.tag == "dt"]
        return [*range(dts[0], dts[1]), None, *range(dts[-1], len(items))] if len(dts) > 1 else list(range(len(items)))
    return [0, None, len(items) - 1]


def _copy_children(top: _Frag, kids: list[Node], tails: list[str | None] | None, stats: _CopyStats) -> None:
    """Copy ``kids`` (processing view, cleaned attributes) under ``top``, shortening lists on the way.

    ``tails`` overrides the tails of ``kids`` (the run of a block). Adds what it copies to ``stats``.
    """
    meaningful = stats.meaningful
    chars = stats.chars
    # (fragment parent, its tag, source children, their tails or None, inside an <img>)
    stack: list[tuple[_Frag, str, list[Node], list | None, bool]] = [(top, top.tag, kids, tails, top.tag == "img")]
    while stack:
        parent, tag, items, item_tails, in_img = stack.pop()
        if len(items) > 2 and tag in _LIST_TAGS:
            kept = _shortened(tag, items)
            if item_tails is not None:
                item_tails = [None if i is None else item_tails[i] for i in kept]
            items = [None if i is None else items[i] for i in kept]
        out = parent.children
        for i, k in enumerate(items):
            if k is None:
                out.append(_Frag("span", {}, ELLIPSIS, None, parent))
                chars += 3
                meaningful = meaningful or not in_img
                continue
            text = k.ptext
            tail = k.ptail if item_tails is None else item_tails[i]
            ktag = k.tag
            c = _Frag(ktag, _clean_attrs(k), text, tail, parent)
            out.append(c)
            if text:
                chars += len(text)
            if tail:
                chars += len(tail)
            if not meaningful and not in_img:
                if ktag == "img":
                    meaningful = bool((text and text.strip()) or c.attrs.get("src", "").strip())
                else:
                    meaningful = bool((text and text.strip()) or (tail and tail.strip()))
            if k.pchildren:
                stack.append((c, ktag, k.pchildren, None, in_img or ktag == "img"))
    stats.meaningful = meaningful
    stats.chars = chars


def _build_fragment(par: _Paragraph, profile: SimplifyProfile, stats: _CopyStats) -> tuple[_Frag, Node, list[Node]]:
    """The block's fragment (lists shortened), the node it stands for, and that node's top-level children
    (for mapping). ``stats`` describes the fragment that is returned."""
    container = par.container
    if par.content_type == "block_element":
        root = _Frag(container.tag, _clean_attrs(container), container.ptext or None, None, None)
        sources = container.pchildren
        tails = None
    else:
        root = _Frag(container.tag, _clean_attrs(container), par.text, None, None)
        sources = par.elements
        tails = [el.ptail for el in sources]
        # Where a <br> ends its run (not inline), the reference clears the tail of a run's last <br>.
        if sources and sources[-1].tag == "br" and "br" not in profile.inline_tags:
            tails[-1] = None
    text = root.text
    stats.chars = len(text) if text else 0
    if root.tag == "img":
        stats.meaningful = bool((text and text.strip()) or root.attrs.get("src", "").strip())
    else:
        stats.meaningful = bool(text and text.strip())
    _copy_children(root, sources, tails, stats)
    if container.tag in ("body", "html"):
        # The reference re-parses each block; a <body> block merges into the parser's own body.
        block = profile.reread_body_run(root)
        stats.meaningful = _is_meaningful(block)
        stats.chars = _text_length(block)
        if block is not root:
            node = sources[0]
            return block, node, node.pchildren
    return root, container, sources


def single_child_block(root: _Frag) -> _Frag | None:
    """The only child element of a ``<body>`` run without text around it (what a re-parse returns)."""
    if (root.text and root.text.strip()) or len(root.children) != 1:
        return None
    only = root.children[0]
    if only.tail and only.tail.strip():
        return None
    only.tail = None
    only.parent = None
    return only


def _reread_as_fragment(root: _Frag) -> _Frag:
    """v1.1 parses a block with ``fragment_fromstring``: a ``<body>`` run is either its single child
    element or an error (the block is skipped)."""
    only = single_child_block(root)
    if only is None:
        raise _Skip
    return only


def table_region(table: Node) -> Iterator[Node]:
    """The elements ``table`` owns, in its processing view: all below it but what lies inside a nested table
    (the nested ``<table>`` element itself is yielded). What a nested table holds belongs to it, so a check
    per table reads each element once, not once per enclosing table (nested tables would make it quadratic)."""
    stack = list(reversed(table.pchildren))
    node: Node
    while stack:
        node = stack.pop()
        yield node
        if node.tag != "table" and node.pchildren:
            stack.extend(reversed(node.pchildren))


def _is_data_table(table: Node) -> bool:
    """v1.1: a caption/col/colgroup/headers cell of its own, role="table"/data-table, or only table and
    inline tags inside (a nested table is neither)."""
    layout = False
    for node in table_region(table):
        tag = node.tag
        if tag in ("caption", "col", "colgroup") or (tag in ("td", "th") and "headers" in node.attrs):
            return True
        if tag not in TABLE_TAGS and tag not in INLINE_TAGS:
            layout = True
    if table.attrs.get("role") == "table" or table.attrs.get("data-table"):
        return True
    return not layout


def _text_length(root: _Frag) -> int:
    total = 0
    stack = [root]
    while stack:
        node = stack.pop()
        total += len(node.text or "") + len(node.tail or "")
        stack.extend(node.children)
    return total


def _is_meaningful(root: _Frag) -> bool:
    # Mirrors the reference recursion, including its early return on <img> that ignores the img's tail.
    stack: list[tuple[_Frag, bool]] = [(root, False)]
    while stack:
        node, after = stack.pop()
        if after:
            if node.tail and node.tail.strip():
                return True
            continue
        if node.text and node.text.strip():
            return True
        if node.tag == "img":
            if node.attrs.get("src", "").strip():
                return True
            continue
        stack.append((node, True))
        stack.extend((kid, False) for kid in reversed(node.children))
    return False


def _truncate(root: _Frag, limit: int) -> None:
    """Cap the block's text at ``limit`` characters (text inside table/math not counted; tails always)."""
    # Entries in document order: (node, is_text, excluded-context-for-modification).
    entries: list[tuple[_Frag, bool, bool]] = []
    total = 0
    stack: list[tuple[_Frag, bool, bool]] = [(root, False, False)]  # node, parent excluded, after-children
    while stack:
        node, parent_excluded, after = stack.pop()
        if after:
            if node.tail:
                entries.append((node, False, parent_excluded))
                total += len(node.tail)
            continue
        excluded = parent_excluded or node.tag in UNCOUNTED_TEXT_TAGS
        if node.text and not excluded:
            entries.append((node, True, False))
            total += len(node.text)
        stack.append((node, parent_excluded, True))
        stack.extend((kid, excluded, False) for kid in reversed(node.children))
    if total <= limit:
        return
    length = 0
    cut = False
    for node, is_text, locked in entries:
        if cut:
            if is_text:
                node.text = None
            else:
                node.tail = None
            continue
        value = node.text if is_text else node.tail
        if length + len(value) <= limit:
            length += len(value)
        elif locked:
            length += len(value)
        else:
            # `limit - length` can be negative after locked text inside tables; the reference slices
            # with it anyway (dropping characters from the end), and so do we.
            clipped = value[: limit - length] + ELLIPSIS
            if is_text:
                node.text = clipped
            else:
                node.tail = clipped
            cut = True
            cur = node
            while cur.parent is not None:
                siblings = cur.parent.children
                del siblings[_index(siblings, cur) + 1 :]
                cur = cur.parent


def _index(items: list, target: object, start: int = 0) -> int:
    """The position of ``target`` in ``items``, looked for from ``start`` on first (a hint), then before it."""
    n = len(items)
    i = min(max(start, 0), n)
    for j in range(i, n):
        if items[j] is target:
            return j
    for j in range(i):
        if items[j] is target:
            return j
    raise ValueError("node is not a child of its parent")


def _write_block(root: _Frag) -> tuple[str, str, int] | None:
    """The block string (serialized like ``lxml.etree.tostring(method="html")``, whitespace runs in text
    collapsed to one space), its plain text (collapsed, stripped) and the length of its text inside links,
    in one walk. ``None`` when the fragment holds something this fast path does not write the same way
    (raw-text elements, content inside a void element); :func:`_collapse` and :func:`_fragment_text` on
    :func:`~extract_trt.runtime.html.dom.serialize` give those.

    Collapsing per text piece equals collapsing the finished string's text runs because every text piece
    is written between two tags (text and attribute values never contain a raw ``<`` or ``>``).
    """
    out: list[str] = []
    parts: list[str] = []
    link_chars = 0
    stack: list[tuple[_Frag, bool, int]] = [(root, False, 0)]  # node, closing, <a> elements around it
    while stack:
        node, closing, in_link = stack.pop()
        tag = node.tag
        if closing:
            if tag not in VOID_TAGS and not (tag == "li" and not node.text and not node.children):
                out.append(f"</{tag}>")
            tail = node.tail
            if tail and node is not root:
                parts.append(tail)
                if in_link:
                    link_chars += len(tail)
                out.append(collapse_whitespace(escape_text(tail)))
            continue
        out.append(_open_tag(tag, node.attrs))
        stack.append((node, True, in_link))
        text = node.text
        if tag in VOID_TAGS or tag in RAW_TEXT_TAGS:
            if text or node.children:
                return None
            continue
        inside = in_link + 1 if tag == "a" else in_link
        if text:
            parts.append(text)
            if inside:
                link_chars += len(text)
            out.append(collapse_whitespace(escape_text(text)))
        kids = node.children
        if kids:
            stack.extend([(kid, False, inside) for kid in reversed(kids)])
    return "".join(out), collapse_whitespace("".join(parts)).strip(), link_chars


def _open_tag(tag: str, attrs: dict[str, str]) -> str:
    """A block element's start tag, as :func:`~extract_trt.runtime.html.dom.format_attr` writes it, for the
    cleaned attributes (``class``, ``id``, ``alt``, ``_item_id``; only ``src`` is a URI, none is boolean)."""
    if not attrs:
        return f"<{tag}>"
    out = [f"<{tag}"]
    for name, value in attrs.items():
        if name == "src":
            out.append(format_attr(tag, name, value))
            continue
        if "&" in value or "<" in value or ">" in value:
            value = escape_text(value)
        if '"' in value:
            if "'" not in value:
                out.append(f" {name}='{value}'")
                continue
            value = value.replace('"', "&quot;")
        out.append(f' {name}="{value}"')
    out.append(">")
    return "".join(out)


class _Direct:
    """A block written straight from the page tree (what copy, clean and write would give)."""

    __slots__ = ("attrs", "body", "parts", "link_chars", "text", "close")

    def __init__(self, attrs, body, parts, link_chars, text, close) -> None:
        self.attrs = attrs  # the root's cleaned attributes (the item id still to add)
        self.body = body  # everything after the root's start tag
        self.parts = parts  # text pieces in document order
        self.link_chars = link_chars
        self.text = text  # the root's own text
        self.close = close  # the root's end tag (or "")


def _write_direct(par: _Paragraph, profile: SimplifyProfile, cutoff_length: int) -> _Direct | bool | None:
    """The block of ``par`` written in one walk of the processing view, with attributes cleaned and lists
    shortened on the way, for the common case that needs no copy: ``False`` when the block has no
    content (skipped), ``None`` when the copy path must build it (text over the cap, a run directly under
    ``<body>``, content inside a void or raw-text element)."""
    # Typed locals: C types for the compiled build; the interpreter never evaluates local annotations.
    container: Node = par.container
    node: Node
    tag: str = container.tag
    chars: cython.Py_ssize_t
    link_chars: cython.Py_ssize_t
    inside: cython.Py_ssize_t
    in_link: cython.Py_ssize_t
    meaningful: cython.bint
    text: str | None
    ntag: str
    ntext: str | None
    kids: list
    nattrs: dict
    if tag == "body" or tag == "html":
        return None
    if par.content_type == "block_element":
        text = container.ptext or None
        items: list = container.pchildren
        tails = None
    else:
        text = par.text
        items = par.elements
        tails = [el.ptail for el in items]
        if items and items[-1].tag == "br" and "br" not in profile.inline_tags:
            tails[-1] = None
    attrs = _clean_attrs(container)
    if tag in VOID_TAGS or tag in RAW_TEXT_TAGS:
        if text or items:
            return None
        meaningful = tag == "img" and bool(attrs.get("src", "").strip())
        return _Direct(attrs, [], [], 0, None, "") if meaningful else False
    chars = 0
    meaningful = False
    link_chars = 0
    parts: list = []
    out: list = []
    inside = 1 if tag == "a" else 0
    if text:
        chars = len(text)
        meaningful = not text.isspace()
        parts.append(text)
        if inside:
            link_chars = chars
        out.append(collapse_whitespace(escape_text(text)))
    if len(items) > 2 and tag in _LIST_TAGS:
        kept = _shortened(tag, items)
        if tails is not None:
            tails = [None if i is None else tails[i] for i in kept]
        items = [None if i is None else items[i] for i in kept]
    close = "" if tag == "li" and not text and not items else f"</{tag}>"
    # (node or None for the "..." span, closing, <a> elements around it, its tail)
    stack: list[tuple[Node | None, bool, int, str | None]] = [
        (k, False, inside, None if k is None else (k.ptail if tails is None else tails[i]))
        for i, k in reversed(list(enumerate(items)))
    ]
    while stack:
        node, closing, in_link, tail = stack.pop()
        if node is None:
            out.append("<span>...</span>")
            parts.append(ELLIPSIS)
            chars += 3
            meaningful = True
            if in_link:
                link_chars += 3
            continue
        ntag = node.tag
        if closing:
            if ntag not in VOID_TAGS and not (ntag == "li" and not node.ptext and not node.pchildren):
                out.append(f"</{ntag}>")
            if tail:
                chars += len(tail)
                if not meaningful and ntag != "img":  # the reference ignores an image's tail here
                    meaningful = not tail.isspace()
                parts.append(tail)
                if in_link:
                    link_chars += len(tail)
                out.append(collapse_whitespace(escape_text(tail)))
            continue
        nattrs = _clean_attrs(node)
        out.append(_open_tag(ntag, nattrs))
        stack.append((node, True, in_link, tail))
        ntext = node.ptext
        kids = node.pchildren
        if ntag in VOID_TAGS or ntag in RAW_TEXT_TAGS:
            if ntext or kids:
                return None
            if ntag == "img" and not meaningful:
                meaningful = bool(nattrs.get("src", "").strip())
            continue
        if ntag == "a":
            in_link += 1
        if ntext:
            chars += len(ntext)
            if not meaningful:
                meaningful = not ntext.isspace()
            parts.append(ntext)
            if in_link:
                link_chars += len(ntext)
            out.append(collapse_whitespace(escape_text(ntext)))
        if kids:
            if len(kids) > 2 and ntag in _LIST_TAGS:
                kids = [None if i is None else kids[i] for i in _shortened(ntag, kids)]
            stack.extend([(k, False, in_link, None if k is None else k.ptail) for k in reversed(kids)])
    if not meaningful:
        return False
    if chars > cutoff_length:
        return None
    return _Direct(attrs, out, parts, link_chars, text, close)


def _collapse(fragment: str) -> str:
    return _TEXT_RUNS.sub(lambda m: m.group(1) or collapse_whitespace(m.group(2)), fragment)


def _fragment_text(root: _Frag) -> tuple[str, int]:
    """Plain text of a fragment (whitespace collapsed) and the length of the text inside links."""
    parts: list[str] = []
    link_chars = 0
    stack: list[tuple[_Frag, bool, int]] = [(root, False, 0)]
    while stack:
        node, after, in_link = stack.pop()
        if after:
            if node.tail:
                parts.append(node.tail)
                if in_link:
                    link_chars += len(node.tail)
            continue
        inside = in_link + (node.tag == "a")
        if node.text:
            parts.append(node.text)
            if inside:
                link_chars += len(node.text)
        stack.append((node, True, in_link))
        stack.extend((kid, False, inside) for kid in reversed(node.children))
    return collapse_whitespace("".join(parts)).strip(), link_chars


def _first_select(node: Node) -> str | None:
    """The ``cc-select`` mark of ``node``'s first descendant (document order) that has one: a mark the
    mapping already copied onto it, else its attribute."""
    stack = node.children[::-1]
    while stack:
        desc = stack.pop()
        if desc.select is not None:
            return desc.select
        if "cc-select" in desc.attrs:
            return desc.attrs["cc-select"]
        if desc.lazy is not None:
            dom.materialize(desc)
        if desc.children:
            stack.extend(reversed(desc.children))
    return None


class _Mapper:
    """Places block ids in the original DOM (the reference's map_html rules)."""

    def __init__(self, inline_tags: frozenset[str]) -> None:
        self.inline_tags = inline_tags
        self.id_nodes: dict[int, Node] = {}
        # per parent, where its last run was wrapped: the runs of a paragraph split at <br> come in document
        # order, so the next one is looked for from there (a scan from the start is quadratic in the pieces)
        self.wrapped_at: dict[Node, int] = {}

    def mark(self, node: Node, item_id: int) -> None:
        if node.item_id is not None and self.id_nodes.get(node.item_id) is node:
            del self.id_nodes[node.item_id]
        node.item_id = item_id
        self.id_nodes[item_id] = node

    def wrapper(self, parent: Node, item_id: int, text: str | None) -> Node:
        wrapper = Node(WRAPPER_TAG, {}, parent)
        wrapper.text = text
        select = parent.attrs.get("cc-select", parent.select)
        if select is not None:
            wrapper.select = select
        self.mark(wrapper, item_id)
        return wrapper

    def place(self, par: _Paragraph, node: Node, sources: list[Node], text: str | None, item_id: int) -> None:
        container = par.container
        if par.content_type == "block_element":
            self.mark(container, item_id)
            select = _first_select(container)
            if select is not None:
                container.select = select
            return
        if sources:
            if node.tag in self.inline_tags and node.tag != "body" and not node.block_type_mark:
                self.mark(node, item_id)
            else:
                self._wrap_run(container, sources, item_id)
        elif par.content_type == "inline_elements":
            self.mark(node, item_id)
        elif text and text.strip():
            self._wrap_text(container, text.strip(), item_id)

    def _wrap_run(self, parent: Node, run: list[Node], item_id: int) -> None:
        kids = parent.children
        start = _index(kids, run[0], self.wrapped_at.get(parent, 0))
        end = _index(kids, run[-1], start)
        self.wrapped_at[parent] = start + 1
        last = run[-1]
        leading = parent.text if start == 0 else kids[start - 1].tail
        wrapper = self.wrapper(parent, item_id, leading or None)
        if leading:
            if start == 0:
                parent.text = None
            else:
                kids[start - 1].tail = None
        moved = kids[start : end + 1]
        for node in moved:
            node.parent = wrapper
        wrapper.children = moved
        kids[start : end + 1] = [wrapper]  # in place: a new list per run is quadratic in the pieces
        if last.tag == "br" and last.tail:
            wrapper.tail = last.tail
            last.tail = None

    def _wrap_text(self, parent: Node, text: str, item_id: int) -> None:
        if parent.text and parent.text.strip() == text:
            wrapper = self.wrapper(parent, item_id, parent.text)
            parent.text = None
            parent.children = [wrapper, *parent.children]
            return
        kids = parent.children
        for i, kid in enumerate(kids):
            if kid.tail and kid.tail.strip() == text:
                wrapper = self.wrapper(parent, item_id, kid.tail)
                kid.tail = None
                parent.children = kids[: i + 1] + [wrapper] + kids[i + 1 :]
                return


_ANCESTOR_NAMES = 8  # nearest ancestors with a class or id whose names a Block keeps
# Characters of a class or id value that a Block keeps (its own and its ancestors'): each block's names are
# searched (comments, fine print), so one 100 KB class over 20,000 paragraphs cost 16 s of searches.
# The longest on the shared pages has 7,481 (a Squarespace body's class list); the model hashes the first 300.
MAX_NAME_CHARS = 1000
_SHARED_NAMES = 256  # Block.ancestor_names longer than this are one string per distinct value (see _TagPaths)
CONTAINER_LEVELS = 6  # nearest ancestors whose identity a Block keeps (Block.containers)
# A tag path names at most MAX_PATH_TAGS tags: a deeper one keeps its outermost PATH_HEAD_TAGS and its
# innermost tags with PATH_GAP between. The shared pages nest at most 55 deep; a hostile page nesting
# 9,000 deep would otherwise carry paths of ~50 KB per block (a gigabyte, and quadratic time in the
# features' substring tests).
MAX_PATH_TAGS = 128
PATH_HEAD_TAGS = 16
PATH_GAP = "…"


def capped_path(tags: Sequence[str]) -> Sequence[str]:
    """``tags`` (a tag path, outermost first) with at most :data:`MAX_PATH_TAGS` + 1 items: a longer path
    keeps its head and tail around :data:`PATH_GAP` (a path that has a gap already keeps it where it is)."""
    if len(tags) <= MAX_PATH_TAGS:
        return tags
    return (*tags[:PATH_HEAD_TAGS], PATH_GAP, *tags[PATH_HEAD_TAGS - MAX_PATH_TAGS :])


class _TagPaths:
    """``html>…>tag``, depth, the class/id values of the nearest named ancestors and the numbers of the
    nearest ancestors (``Block.containers``) of block nodes.

    Memoised at the nodes asked about (block parents), so a block's walk up stops at the nearest parent
    of an earlier block; storing every ancestor's path would be quadratic on deep pages.
    """

    def __init__(self) -> None:
        # node → (path, depth, names of it and above, numbers of it and above)
        self.memo: dict[Node, tuple[str, int, tuple[str, ...], tuple[int, ...]]] = {}
        self.numbers: dict[Node, int] = {}  # ancestors in the order first met: the same in every process
        # an element's names and each distinct long Block.ancestor_names made once: eight long class lists
        # over 100,000 paragraphs would otherwise be 100,000 copies of up to 16 KB
        self.names: dict[Node, str] = {}
        self.joined: dict[str, str] = {}

    def _info(self, node: Node) -> tuple[str, int, tuple[str, ...], tuple[int, ...]]:
        memo = self.memo
        found = memo.get(node)
        if found is not None:
            return found
        numbers = self.numbers
        tags: list[str] = []
        names: list[str] = []
        ids: list[int] = []
        cur: Node | None = node
        attrs: dict
        while cur is not None and cur not in memo:
            tags.append(cur.tag)
            attrs = cur.attrs
            if len(names) < _ANCESTOR_NAMES and ("class" in attrs or "id" in attrs):
                name = self.names.get(cur)
                if name is None:
                    name = f"{attrs.get('class', '')[:MAX_NAME_CHARS]} {attrs.get('id', '')[:MAX_NAME_CHARS]}"
                    self.names[cur] = name
                names.append(name)
            if len(ids) < CONTAINER_LEVELS:
                ids.append(numbers.setdefault(cur, len(numbers)))
            cur = cur.parent
        tags.reverse()
        if cur is None:
            info = (_joined("", -1, tags), len(tags) - 1, tuple(names), tuple(ids))
        else:
            path, depth, above, above_ids = memo[cur]
            info = (_joined(path, depth, tags), depth + len(tags), (*names, *above)[:_ANCESTOR_NAMES],
                    (*ids, *above_ids)[:CONTAINER_LEVELS])  # fmt: skip
        memo[node] = info
        return info

    def of(self, node: Node) -> tuple[str, int, str, tuple[int, ...]]:
        parent = node.parent
        if parent is None:
            return node.tag, 0, "", ()
        path, depth, names, ids = self._info(parent)
        joined = " ".join(names)
        if len(joined) > _SHARED_NAMES:
            joined = self.joined.setdefault(joined, joined)
        return _joined(path, depth, [node.tag]), depth + 1, joined, ids


def _joined(path: str, depth: int, tags: list[str]) -> str:
    """The path of an element at ``depth`` (``""``, -1: none) followed by ``tags``, capped (:func:`capped_path`)."""
    if depth + 1 + len(tags) <= MAX_PATH_TAGS:  # never capped: the path has depth + 1 tags
        return f"{path}>{'>'.join(tags)}" if path else ">".join(tags)
    return ">".join(capped_path([*path.split(">"), *tags] if path else tags))


def _number_blocks(
    root: Node, paragraphs: list[_Paragraph], cutoff_length: int, profile: SimplifyProfile, max_chars: int | None
) -> PageBlocks:
    mapper = _Mapper(profile.inline_tags)
    paths = _TagPaths()
    stats = _CopyStats()
    blocks: list[Block] = []
    fragments: list[str] = []
    chars = 0
    par: _Paragraph
    node: Node
    for par in paragraphs:
        PyErr_CheckSignals()
        direct = _write_direct(par, profile, cutoff_length)
        if direct is False:
            continue
        try:
            if direct is None:
                frag, node, sources = _build_fragment(par, profile, stats)  # lists already shortened
                if not stats.meaningful:
                    continue
                text_before_cleaning = frag.text
                if stats.chars > cutoff_length:  # else no text can be over the cap
                    profile.truncate(frag, cutoff_length)
                tag, attrs = frag.tag, frag.attrs
            else:
                node = par.container
                sources = node.pchildren if par.content_type == "block_element" else par.elements
                text_before_cleaning = direct.text
                tag, attrs = node.tag, direct.attrs
            item_id = len(blocks) + 1
            attrs["_item_id"] = str(item_id)
            mapper.place(par, node, sources, text_before_cleaning, item_id)
        except (_Skip, ValueError):
            continue
        if direct is not None:
            html = _open_tag(tag, attrs) + "".join(direct.body) + direct.close
            text = collapse_whitespace("".join(direct.parts)).strip()
            link_chars = direct.link_chars
        else:
            written = _write_block(frag)
            if written is None:
                html = _collapse(serialize(frag).strip())
                text, link_chars = _fragment_text(frag)
            else:
                html, text, link_chars = written
        fragments.append(html)
        chars += len(html)
        if max_chars is not None and chars > max_chars:
            raise OutputTooLargeError(
                f"the simplified page passes {max_chars:,} characters at block {item_id:,} (limit max_output_ratio)"
            )
        path, depth, ancestor_names, containers = paths.of(node)
        blocks.append(
            Block(
                item_id=item_id,
                html=html,
                text=text,
                tag=tag,
                classes=node.attrs.get("class", "")[:MAX_NAME_CHARS],
                element_id=node.attrs.get("id", "")[:MAX_NAME_CHARS],
                depth=depth,
                tag_path=path,
                ancestor_names=ancestor_names,
                containers=containers,
                link_text_length=link_chars,
                content_type=par.content_type,
            )
        )
    simplified = _SHELL_HEAD + "".join(fragments) + _SHELL_TAIL
    return PageBlocks(simplified_html=simplified, blocks=blocks, page_map=PageMap(root, mapper.id_nodes, profile))


MINERU_V11 = SimplifyProfile(
    name="mineru-v1.1",
    cutoff_length=500,
    inline_tags=INLINE_TAGS,
    removed_tags=REMOVED_TAGS,
    no_block_tags=NO_BLOCK_TAGS,
    should_remove=_should_remove,
    keep_removed_tail=True,
    block_descendants=True,
    content_lists=True,
    whole_data_tables=True,
    is_data_table=_is_data_table,
    truncate=_truncate,
    reread_body_run=_reread_as_fragment,
    recall_line_breaks=True,
    recall_wrapped_breaks=False,
    unescape_all=False,
)

# The built-in block model's segmentation: the reference's blocks, and also those of the elements it drops as
# invisible (an inline style such as display:none or opacity:0, the body of a closed <details>). Pages hide
# content the reader does see that way — tab panels, accordions, text a script fades in, a page shown once
# loaded — as well as menus and dialogs; the model, not the scheme, tells them apart. Models trained on the
# reference's blocks keep MINERU_V11.
MINERU_V11_WITH_HIDDEN = replace(
    MINERU_V11, name="mineru-v1.1+hidden", should_remove=_is_nav_marker, recall_wrapped_breaks=True
)
