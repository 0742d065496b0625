"""A small lxml-shaped element tree built from selectolax (Lexbor), and its HTML serializer.

Why not work on Lexbor nodes directly: the block scheme of MinerU-HTML v1.1 / Pulpie is defined on lxml's
text/tail model (an element's ``text`` is the text before its first child, ``tail`` the text after its end
tag), and it edits two views of the page at once (a cleaned *processing* view and the *original* DOM that
gets ``_item_id`` marks and ``cc-alg-uc-text`` wrappers). Plain Python objects with ``__slots__`` make both
views cheap: the processing view is three extra fields per node instead of a deep copy of the tree.

Everything here is iterative (explicit stacks), so pathological nesting depth cannot overflow the
Python stack.

The serializer reproduces libxml2's ``method="html"`` output (what ``lxml.etree.tostring`` writes), so the
simplified HTML the models read is byte-identical to the reference implementation:
void elements without end tags, ``script``/``style`` raw, ``&<>`` escaped in text, URI attributes
(``href``, ``src``, ``action``, ``name`` on ``a``) percent-encoded, a handful of boolean attributes
minimised, and single quotes around attribute values that contain ``"`` but no ``'``.
"""

from __future__ import annotations

import html as _html
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

try:  # compiled build: Cython's compile-time module; interpreted: its pure-Python stand-in, or ours
    import cython
except ImportError:
    from extract_trt.runtime import _cython_shim as cython

if not cython.compiled:  # compiled: the C function (cimported in dom.pxd)

    def PyErr_CheckSignals() -> int:
        """Compiled loops call CPython's ``PyErr_CheckSignals`` so that a signal handler (the time budget's
        alarm, Ctrl-C) can stop them; interpreted code runs handlers between bytecodes anyway."""
        return 0


# Elements libxml2 writes without an end tag (and without their content).
VOID_TAGS = frozenset(
    {"area", "base", "basefont", "br", "col", "frame", "hr", "img", "input", "isindex", "link", "meta", "param"}
)
# Elements whose text libxml2 writes unescaped.
RAW_TEXT_TAGS = frozenset({"script", "style"})
BOOLEAN_ATTRS = frozenset(
    {
        "checked", "compact", "declare", "defer", "disabled", "ismap", "multiple", "nohref", "noresize",
        "noshade", "nowrap", "readonly", "selected",
    }
)  # fmt: skip
URI_ATTRS = frozenset({"href", "src", "action"})
# HTML5 void elements that libxml2 does not know as void: when it re-reads serialized HTML, everything
# after one of them up to the parent's end tag becomes its content. The reference parses that way.
LIBXML2_NESTING_VOIDS = frozenset({"source", "track", "wbr", "embed", "keygen", "bgsound"})
# libxml2 keeps a whitespace-only text node inside, or right after, these elements and drops it
# elsewhere when parsing with remove_blank_text=True (as the reference reconstruction does).
ALLOW_PCDATA = frozenset(
    {
        "a", "abbr", "acronym", "address", "applet", "b", "bdo", "big", "blockquote", "body", "button",
        "caption", "center", "cite", "code", "dd", "del", "dfn", "div", "dt", "em", "font", "form", "h1",
        "h2", "h3", "h4", "h5", "h6", "i", "iframe", "ins", "kbd", "label", "legend", "li", "noscript",
        "object", "p", "pre", "q", "s", "samp", "small", "span", "strike", "strong", "td", "th", "tt", "u",
        "var",
    }
)  # fmt: skip (measured on lxml 6.1 / libxml2 2.14)
_HTML_SPACE = " \t\n\r\x0c"
# libxml2 ends an open element when certain start tags begin directly inside it (its HTML 4 start-close
# rules), where HTML5 lets them nest: `<h2><p>` is read as `<h2></h2><p>`, `<b><p>` as `<b></b><p>`. The
# reference re-reads Modest's HTML5 tree with libxml2, so its blocks, map and main HTML have the closed
# form. Element → the start tags that end it; measured on libxml2 2.14 (lxml 6.1) by parsing
# `<outer><inner>` for every pair of HTML 4/5 tags (void elements left out: they have no content here).
LIBXML2_CLOSED_BY: dict[str, frozenset[str]] = {
    "a": frozenset("a fieldset table td th".split()),
    "address": frozenset("dd dl dt form li ul".split()),
    "b": frozenset("center p td th".split()),
    "big": frozenset("p".split()),
    "caption": frozenset("col colgroup tbody tfoot thead tr".split()),
    "colgroup": frozenset("colgroup tbody tfoot thead tr".split()),
    "dd": frozenset("dt".split()),
    "dir": frozenset("dd dl dt form ul".split()),
    "dl": frozenset("form li".split()),
    "dt": frozenset("dd dl".split()),
    "font": frozenset("center td th".split()),
    "form": frozenset("form".split()),
    "h1": frozenset("fieldset form li p table".split()),
    "h2": frozenset("fieldset form li p table".split()),
    "h3": frozenset("fieldset form li p table".split()),
    "h4": frozenset("fieldset form li p table".split()),
    "h5": frozenset("fieldset form li p table".split()),
    "h6": frozenset("fieldset form li p table".split()),
    "i": frozenset("center p td th".split()),
    "legend": frozenset("fieldset".split()),
    "li": frozenset("li".split()),
    "listing": frozenset("dd dl dt fieldset form li table ul".split()),
    "menu": frozenset("dd dl dt form ul".split()),
    "ol": frozenset("form".split()),
    "option": frozenset("optgroup option".split()),
    "p": frozenset("address blockquote caption center col colgroup dd dir div dl dt fieldset form frameset h1 h2 h3 h4 h5 h6 hr li listing menu ol p pre table tbody td tfoot th title tr ul xmp".split()),
    "pre": frozenset("dd dl dt fieldset form li table ul".split()),
    "s": frozenset("p".split()),
    "small": frozenset("p".split()),
    "span": frozenset("td th".split()),
    "strike": frozenset("p".split()),
    "tbody": frozenset("tbody tfoot".split()),
    "td": frozenset("tbody td tfoot th tr".split()),
    "tfoot": frozenset("tbody".split()),
    "th": frozenset("tbody td tfoot th tr".split()),
    "thead": frozenset("tbody tfoot".split()),
    "tr": frozenset("tbody tfoot tr".split()),
    "tt": frozenset("p".split()),
    "u": frozenset("p td th".split()),
    "ul": frozenset("address form menu pre".split()),
}  # fmt: skip
# Template content is parsed again from its serialization, which includes the templates inside it, so
# nested templates cost quadratic time (5,000 nested <template> took 30 s). Deeper ones stay empty.
MAX_TEMPLATE_NESTING = 8


class Node:
    """An element. ``text``/``tail``/``children`` are the original DOM; ``p*`` fields the processing view."""

    __slots__ = (
        "tag", "attrs", "text", "tail", "children", "parent",
        "ptext", "ptail", "pchildren",
        "item_id", "block_type_mark", "select", "index", "lazy",
    )  # fmt: skip

    def __init__(self, tag: str, attrs: dict[str, str], parent: Node | None) -> None:
        _init_node(self, tag, attrs, parent)

    def __repr__(self) -> str:
        return f"<Node {self.tag} {self.attrs!r}>"

    def __reduce__(self) -> tuple:
        # Explicit, so that the compiled build (an extension type) pickles the same way as the source.
        materialize(self)  # a Lexbor node cannot be pickled; its content can
        return _unpickled_node, (), (None, {name: getattr(self, name) for name in _NODE_FIELDS})


_NODE_FIELDS = Node.__slots__


def _init_node(node: Node, tag: str, attrs: dict, parent: Node | None) -> None:
    node.tag = tag
    node.attrs = attrs
    node.text = None
    node.tail = None
    node.children = []
    node.parent = parent
    node.ptext = None
    node.ptail = None
    node.pchildren = node.children
    node.item_id = None  # the `_item_id` written into map_html
    node.block_type_mark = False  # `cc-block-type="true"`: an inline element that holds blocks
    node.select = None  # `cc-select` value copied onto a block by the mapping
    node.index = 0  # document order in the original tree
    node.lazy = None  # content not built yet (see parse's ``lazy_tags``): (LexborTree or None, first node, templates)


def _add_text(parent: Node, kids: list, text: str) -> None:
    """Tree build: a text node's ``text`` (not empty) goes to the tail of the last child, else to the text
    of ``parent``."""
    if parent.tag == "xmp":
        # Modest writes <xmp> text escaped and libxml2 reads it back raw.
        text = escape_text(text)
    last: Node
    if kids:
        last = kids[-1]
        last.tail = last.ptail = text if last.tail is None else last.tail + text
    else:
        parent.text = parent.ptext = text if parent.text is None else parent.text + text


def _add_element(
    tag: str, attrs: dict, parent: Node, kids: list, index: cython.Py_ssize_t, nesting: list, closing: list
) -> Node:
    """Tree build: a new element, the last child of ``parent`` (whose children list is ``kids``), number
    ``index`` in document order. Noted for :func:`_reread_like_libxml2`: libxml2's nesting voids in
    ``nesting``, elements that libxml2 would not let start inside ``parent`` in ``closing``."""
    el = _new_node(tag, attrs, parent)
    el.index = index
    kids.append(el)
    if tag in LIBXML2_NESTING_VOIDS:
        nesting.append(el)
    closed_by = LIBXML2_CLOSED_BY.get(parent.tag)
    if closed_by is not None and tag in closed_by:
        closing.append(el)
    return el


def _new_node(tag: str, attrs: dict, parent: Node | None) -> Node:
    """``Node(tag, attrs, parent)``; compiled, a C function and a bare allocation instead of a Python call
    of the class (the tree build makes a thousand per page)."""
    node = Node.__new__(Node)
    _init_node(node, tag, attrs, parent)
    return node


def _unpickled_node() -> Node:
    return Node("", {}, None)  # the pickled state then sets every field


def parse(html: str, lazy_tags: frozenset[str] = frozenset()) -> Node:
    """Parse HTML with Lexbor and return the ``<html>`` element as a :class:`Node` tree.

    Comments, doctypes and processing instructions are dropped (the reference parses with
    ``remove_comments=True``); adjacent text nodes are merged; tag and attribute names are lower-cased
    and valueless attributes get ``""``, as libxml2 does when it re-reads serialized HTML.

    The content of elements named in ``lazy_tags`` (outside SVG/MathML) is built only when first needed
    (:func:`materialize`; :func:`iter_tree` and :func:`serialize` do it): the simplifier passes the tags
    its processing view removes (``head``, ``script``, ``style``, ``nav`` …, a quarter of a page's nodes),
    whose content only matters if reconstruction keeps them or the whole map is written.
    """
    parser = LexborHTMLParser(_as_reference_reads(html))
    lex_root = parser.root
    if lex_root is None:
        root = Node("html", {}, None)
        root.children.append(Node("body", {}, root))
        return root
    root = Node("html", _attrs(lex_root), None)
    first = lex_root.child
    if first is None:
        return root
    if not _walker_enabled():
        _build(first, root, 0, lazy_tags)
    else:
        _walk(LexborTree(parser, lex_root), first.mem_id, root, 0, lazy_tags)
    return root


def materialize(node: Node, lazy_tags: frozenset[str] = frozenset()) -> None:
    """Build the content of a lazily parsed element (no-op for any other); the elements named in
    ``lazy_tags`` inside it are left lazy in turn (as by :func:`parse`)."""
    lazy = node.lazy
    if lazy is not None:
        node.lazy = None
        tree, first, templates = lazy
        if tree is None:  # built by _build: ``first`` is the selectolax node
            _build(first, node, templates, lazy_tags)
        else:
            _walk(tree, first, node, templates, lazy_tags)


def _build(first: LexborNode | None, top: Node, templates: int, lazy_tags: frozenset[str]) -> None:
    """Convert ``first`` and its following siblings (with their descendants) into children of ``top``."""
    nesting: list[Node] = []
    closing: list[Node] = []
    foreign: list[tuple[LexborNode, Node]] = []
    keep_alive = []  # template contents are parsed separately; their trees must outlive the walk
    names: dict = _TAG_NAMES
    # Typed locals: C types for the compiled build; the interpreter never evaluates local annotations.
    count: cython.Py_ssize_t = 0
    in_foreign: cython.bint
    inner_foreign: cython.bint
    parent: Node
    el: Node
    kids: list
    tag: str
    text: str
    attrs: dict
    # (first Lexbor sibling to convert, parent Node, number of <template>s around it, inside svg/math)
    work: list[tuple[LexborNode | None, Node, int, bool]] = [(first, top, templates, False)]
    while work:
        PyErr_CheckSignals()
        lex, parent, templates, in_foreign = work.pop()
        kids = parent.children
        while lex is not None:
            tag_id = lex.tag_id
            tag = names.get(tag_id)
            if tag is None:
                tag = _tag_name(lex, tag_id)
            if tag == "-text":
                # A frameset's text (and the html element's after one) keeps only its whitespace: Lexbor moves
                # it to the front of the token in place, and selectolax's text_content reads the old length
                # ("a b c" → "  b c"); the node's serialization reads the new one.
                framed = not in_foreign and (
                    parent.tag == "frameset" or (parent.tag == "html" and any(k.tag == "frameset" for k in kids))
                )
                text = lex.html if framed else lex.text_content
                if text:
                    _add_text(parent, kids, text)
            elif tag:
                attrs = _attrs(lex, in_foreign or tag in _FOREIGN_ROOTS)
                count += 1
                el = _add_element(tag, attrs, parent, kids, count, nesting, closing)
                if in_foreign and tag in LIBXML2_NESTING_VOIDS:
                    keep_foreign_closed(nesting, el, lex.html)
                inner_foreign = in_foreign
                if tag in _FOREIGN_ROOTS:
                    if not in_foreign:  # the outermost root's pass covers the roots nested in it (linear)
                        foreign.append((lex, el))
                    inner_foreign = True
                child = lex.child
                inner = templates
                if tag == "template":
                    inner += 1
                    if child is None and inner <= MAX_TEMPLATE_NESTING:
                        child = _template_content(lex, keep_alive)
                if child is not None:
                    if tag in lazy_tags and not in_foreign:
                        # Attribute-name restoration in SVG/MathML needs their whole subtree built.
                        el.lazy = (None, child, inner)
                    else:
                        work.append((lex.next, parent, templates, in_foreign))
                        work.append((child, el, inner, inner_foreign))
                        break
            lex = lex.next
    for lex, el in foreign:
        _restore_foreign_attr_names(el, lambda lex=lex: lex.html)
    _reread_like_libxml2(top, nesting, closing)


def _reread_like_libxml2(top: Node, nesting: list[Node], closing: list[Node]) -> None:
    """The tree under ``top`` as libxml2 reads it back from its serialization (what the reference works
    on): content after a nesting void goes inside it, then start-close rules end elements early."""
    for el in nesting:  # document order, so a later one is already inside an earlier one
        _nest_following(el)
    if closing:  # (rare: only pages with such a pair are walked again)
        _close_started(top)


def _close_started(top: Node) -> None:
    """libxml2's start-close rules over ``top``'s subtree, in document order: an element with a child in
    ``LIBXML2_CLOSED_BY[its tag]`` ends before that child (:func:`_end_before`); the child is then checked
    against its new parent, as libxml2 checks each start tag against the element open at that point."""
    kid: Node
    stack: list[tuple[Node, int]] = [(top, 0)]
    while stack:
        node, i = stack.pop()
        kids = node.children
        closed_by = LIBXML2_CLOSED_BY.get(node.tag)
        while i < len(kids):
            kid = kids[i]
            if closed_by is not None and kid.tag in closed_by and node.parent is not None:
                _end_before(node, i)  # the parent's entry on the stack goes on with the moved child
                break
            if kid.children:
                stack.append((node, i + 1))
                stack.append((kid, 0))
                break
            i += 1


def _end_before(el: Node, pos: int) -> None:
    """``el`` ends before its child number ``pos``: that child and the ones after it follow ``el`` in its
    parent, and ``el``'s tail comes after them (libxml2 ignores the end tag that no longer matches)."""
    parent = el.parent
    moved = el.children[pos:]
    el.children = el.pchildren = el.children[:pos]
    siblings = parent.children
    at = next(i for i, kid in enumerate(siblings) if kid is el)
    parent.children = parent.pchildren = siblings[: at + 1] + moved + siblings[at + 1 :]
    for kid in moved:
        kid.parent = parent
    if el.tail is not None:
        last = moved[-1]
        last.tail = last.ptail = el.tail if last.tail is None else last.tail + el.tail
        el.tail = el.ptail = None


# Lexbor's ids of the standard tag names are fixed; custom element names get per-document ids (large
# numbers) and are looked up each time. "" marks nodes that are not elements or text (comments, doctypes).
_STANDARD_TAG_IDS = 1 << 16
_UNDEFINED_TAG_ID = 0
_TAG_NAMES: dict[int, str] = {}
_FOREIGN_ROOTS = frozenset({"svg", "math"})


def _tag_name(lex: LexborNode, tag_id: int) -> str:
    return name_of_tag(lex.tag, tag_id)


def name_of_tag(tag: str | None, tag_id: int) -> str:
    """Our name for a Lexbor node whose selectolax ``tag`` is ``tag`` (``-text`` for text, ``-comment`` …
    for other non-elements): lower-cased, ``""`` for what the tree leaves out; cached by standard tag id.
    Tag id 0 (Lexbor's "undefined") is a processing instruction's (``<?php … ?>`` in a page): never an
    element, and selectolax names it after whatever it read last ("#text", "address")."""
    if tag_id == _UNDEFINED_TAG_ID:
        return ""
    name = "" if tag is None or tag[0] in "_!" or (tag[0] == "-" and tag != "-text") else tag.lower()
    if tag_id < _STANDARD_TAG_IDS:
        _TAG_NAMES[tag_id] = name
    return name


def _template_content(lex: LexborNode, keep_alive: list) -> LexborNode | None:
    """First node of a <template>'s content, which Lexbor keeps outside the tree."""
    tree = _template_parser(lex.html)
    if tree is None:
        return None
    keep_alive.append(tree)
    body = tree.body
    return body.child if body is not None else None


def _template_parser(outer: str | None) -> LexborHTMLParser | None:
    """A <template>'s content parsed on its own, in a ``<body>``, from ``outer``, the template's HTML.

    The reference's parsers treat template content as ordinary children, so it is parsed again from the
    template's own serialization.
    """
    outer = outer or ""
    start = outer.find(">") + 1
    end = outer.rfind("</template>")
    if start <= 0 or end < start:
        return None
    return LexborHTMLParser(f"<body>{outer[start:end]}</body>")


# ── the C walker (compiled build) ─────────────────────────────────────────────────

_LEXBOR_WALK: object = None  # the lexbor_walk module once loaded
_USE_WALKER: bool | None = None  # whether parse uses it (None: not checked yet)


class LexborTree:
    """A parsed document as :mod:`lexbor_walk` sees it: the address of its Lexbor document (the walker
    frees its text copies there) and the parser that keeps its nodes alive."""

    __slots__ = ("parser", "document")

    def __init__(self, parser: LexborHTMLParser, root: LexborNode) -> None:
        self.parser = parser
        self.document = root.parent.mem_id  # Lexbor's document struct starts with its node

    def html_at(self, address: int) -> str | None:
        """The HTML of the node at ``address`` (selectolax's ``LexborNode.html``)."""
        return _LEXBOR_WALK.html(address, self.document)

    def template_content(self, address: int) -> tuple[LexborTree, int] | None:
        """(tree, address of the first node) of the content of the <template> at ``address``."""
        parser = _template_parser(self.html_at(address))
        body = parser.body if parser is not None else None
        if body is None or body.child is None:
            return None
        return LexborTree(parser, parser.root), body.child.mem_id


def _walk(tree: LexborTree, first: int, top: Node, templates: int, lazy_tags: frozenset[str]) -> None:
    """:func:`_build` by the C walker, from the Lexbor node at address ``first``."""
    nesting, closing = _LEXBOR_WALK.build(
        tree, first, top, templates, lazy_tags, _TAG_NAMES, _FOREIGN_ROOTS, MAX_TEMPLATE_NESTING
    )
    _reread_like_libxml2(top, nesting, closing)


def _walker_enabled() -> bool:
    """Whether :func:`parse` uses the C walker: it is built, and it gives the same tree as :func:`_build`
    on a probe page."""
    global _USE_WALKER
    if _USE_WALKER is None:
        _USE_WALKER = False  # (the check parses with _build)
        _USE_WALKER = _load_walker() and _probe_trees_equal()
    return _USE_WALKER


_PROBE_PAGE = (
    "<!DOCTYPE html><html lang=en><head><title>t</title><style>p{}</style></head><body class='a b' data-x>"
    "<!-- c --><p id=p1 data-uid=u1>One &amp; <b data-uid>two</b> tail<br>line</p><my-widget Foo=1>w</my-widget><xmp><i></xmp>"
    "<template><p>in<template><i>deep</i></template></p></template><nav><a href='/x'>nav</a></nav>"
    "<svg viewBox='0 0 1 1'><use xlink:href='#i'/></svg><ul><li>a<source>b</li></ul>\u00e9\u4e2d</body></html>"
)


def _load_walker() -> bool:
    global _LEXBOR_WALK
    if not cython.compiled:
        return False  # its Node type is the compiled one
    try:
        import selectolax.lexbor

        from extract_trt.runtime import compiled_core
        from extract_trt.runtime.html import lexbor_walk

        if not compiled_core.fresh("html.lexbor_walk"):
            return False
        lexbor_walk.load(selectolax.lexbor.__file__)
    except (ImportError, OSError, ValueError, AttributeError):
        return False
    _LEXBOR_WALK = lexbor_walk
    return True


def _probe_trees_equal() -> bool:
    global _USE_WALKER
    lazy = frozenset({"head", "nav", "style"})
    built = _tree_signature(parse(_PROBE_PAGE, lazy))
    _USE_WALKER = True
    try:
        walked = _tree_signature(parse(_PROBE_PAGE, lazy))
    except Exception:  # noqa: BLE001 - whatever the walker fails on, the selectolax walk stays
        return False
    finally:
        _USE_WALKER = False
    return walked == built


def _tree_signature(root: Node) -> list[tuple]:
    return [(n.tag, n.attrs, n.text, n.tail, n.index) for n in iter_tree(root)]


def c_walker_in_use() -> bool:
    """Whether :func:`parse` builds trees with the C walker (:mod:`lexbor_walk`)."""
    return _walker_enabled()


# The reference tags every element with ``data-uid`` for its own mapping and strips them all before writing
# its map, the page's own ``data-uid`` attributes included; so they never reach its map or main HTML.
REFERENCE_UID_ATTR = "data-uid"

# Local names of the foreign attributes the HTML parser adjusts from a prefixed name (xlink:*, xml:*,
# xmlns:xlink); other attribute names read back the same from Lexbor's serialization.
_PREFIXED_LOCAL_NAMES = frozenset({"actuate", "arcrole", "href", "role", "show", "title", "type", "lang", "space", "xlink"})
_START_TAG = re.compile(r"<([^\s/>!?]+)((?:\s+[^\s=/>]+(?:=\"[^\"]*\")?)*)\s*/?>")
_ATTR = re.compile(r"\s+([^\s=/>]+)(?:=\"([^\"]*)\")?")


def _restore_foreign_attr_names(el: Node, html_of: Callable[[], str | None]) -> None:
    """Put back prefixed names (``xlink:href``, ``xml:space``, ``xmlns:xlink``) inside SVG/MathML.

    selectolax < 1.0 reports attributes by local name, so ``<use href=a xlink:href=b>`` even comes out as
    one ``href``; the reference keeps the qualified names it read from the serialized page (as selectolax
    >= 1.0 and the C walker read them). Lexbor's own serialization has them, in the same element order,
    with the values escaped (``&amp;``, ``&quot;``, ``&nbsp;``).
    """
    nodes = list(iter_tree(el))
    if not any(_PREFIXED_LOCAL_NAMES.intersection(node.attrs) for node in nodes if node.attrs):
        return  # no attribute that can have lost a prefix (most inline icons): skip the serialization
    tags = _START_TAG.findall(html_of() or "")
    if len(tags) != len(nodes):
        return
    for node, (_, attr_text) in zip(nodes, tags):
        if not node.attrs:
            continue
        pairs = [(name.lower(), value) for name, value in _ATTR.findall(attr_text) if name.lower() != REFERENCE_UID_ATTR]
        if [name for name, _ in pairs] != list(node.attrs):
            node.attrs = {name: _html.unescape(value) for name, value in pairs}


def keep_foreign_closed(nesting: list, el: Node, html: str | None) -> None:
    """Takes ``el``, just noted in ``nesting`` as a nesting void, back out when it is a MathML or SVG element
    of a void's name: the HTML parser reads ``<math><wbr>`` as MathML (which may hold children), and the
    serialization writes its end tag, so libxml2 reads nothing after it into it. ``html``: Lexbor's
    serialization of ``el``. (Inside ``<mi>`` or ``<foreignObject>`` a ``<wbr>`` is HTML again, written without
    an end tag.)"""
    if html is not None and html.endswith(f"</{el.tag}>") and nesting and nesting[-1] is el:
        nesting.pop()


def _nest_following(el: Node) -> None:
    """libxml2 reads what follows a nesting void (``<source>``, ``<wbr>`` …) in its parent as the void's
    content, after any the void has already."""
    parent = el.parent
    siblings = parent.children
    pos = next(i for i, kid in enumerate(siblings) if kid is el)
    following = siblings[pos + 1 :]
    parent.children = parent.pchildren = siblings[: pos + 1]
    if el.tail is not None:
        _add_text(el, el.children, el.tail)
    el.tail = el.ptail = None
    el.children = el.pchildren = el.children + following
    for kid in following:
        kid.parent = el


_STRAY_END_TAG = re.compile(rb"</>")
# Elements whose content the tokenizer reads as raw text (``plaintext``: all the rest of the page), where a
# ``</>`` is text already; a tag-level approximation (it does not tell a start tag inside a comment).
_RAW_TEXT_START = re.compile(rb"<(script|style|xmp|iframe|noembed|noframes|plaintext)[\t\n\f\r />]", re.IGNORECASE)


def _stray_end_tags_as_text(data: bytes) -> bytes:
    """``data`` with each stray ``</>`` outside raw-text elements written as text (``&lt;/&gt;``)."""
    out: list[bytes] = []
    pos = 0
    while True:
        start = _RAW_TEXT_START.search(data, pos)
        out.append(data[pos : len(data) if start is None else start.start()].replace(b"</>", b"&lt;/&gt;"))
        if start is None:
            return b"".join(out)
        name = start.group(1)
        close = None
        if name.lower() != b"plaintext":
            close = re.compile(rb"</" + name + rb"[\t\n\f\r />]", re.IGNORECASE).search(data, start.end())
        pos = len(data) if close is None else close.start()
        out.append(data[start.start() : pos])


def _as_reference_reads(html: str) -> bytes:
    """The page as the UTF-8 that Lexbor reads, with two spots where the reference's parser (Modest) keeps
    what Lexbor drops: a stray ``</>`` is text (inside a raw-text element it is text to both), and NUL
    characters survive (libxml2 then turns them into U+FFFD).

    Encoded here as selectolax encodes a ``str`` (lone surrogates dropped), because searching the bytes is
    several times faster than searching the text (most pages are not Latin-1: two or four bytes per
    character); replacing ASCII sequences in UTF-8 equals replacing them in the text.
    """
    data = html.encode("utf-8", "ignore")
    if _STRAY_END_TAG.search(data) is not None:  # twice as fast as `in` here (every tag ends in ">")
        data = _stray_end_tags_as_text(data)
    if b"\x00" in data:
        data = data.replace(b"\x00", "\ufffd".encode())
    return data


def _attrs(lex: LexborNode, foreign: bool = False) -> dict[str, str]:
    """``lex``'s attributes as the reference reads them: ``""`` for a valueless one, names lower-cased,
    :data:`REFERENCE_UID_ATTR` left out. ``foreign``: an SVG/MathML element, where selectolax >= 1.0 gives
    qualified camel-case names (``viewBox``) and libxml2 lower-cases them (HTML names come lower-cased)."""
    raw = lex.attributes
    if not raw:
        return {}
    if foreign or None in raw.values() or REFERENCE_UID_ATTR in raw:
        # Lexbor has lower-cased the ASCII letters of an HTML name; str.lower would change others ("Москва")
        return {k.lower() if foreign else k: "" if v is None else v for k, v in raw.items() if k != REFERENCE_UID_ATTR}
    return raw


def iter_tree(root: Node, *, processing: bool = False, expand: bool = True) -> Iterator[Node]:
    """All elements under ``root`` in document order, ``root`` first: the original tree, or with
    ``processing`` the processing view. In the original tree, lazily parsed content is built on the way,
    unless ``expand`` is false (then it is left out)."""
    stack = [root]
    node: Node  # typed: the compiled build reads the fields directly, not through attribute lookups
    while stack:
        node = stack.pop()
        yield node
        if processing:
            kids = node.pchildren
        else:
            if expand and node.lazy is not None:
                materialize(node)
            kids = node.children
        if kids:
            stack.extend(reversed(kids))


def up_to_memo(node: Node | None, memo: dict) -> tuple[list[Node], Any]:
    """The elements from ``node`` up to the nearest one in ``memo`` (that one left out), top first, and its
    memo value (``None`` when none is in it). A pass that works out something per element from the one
    above it (the top-down walk over the list) and memoises it walks up from each block only as far as
    the elements met before: one step per element of the page, not per block and level."""
    path: list[Node] = []
    while node is not None:
        hit = memo.get(node)
        if hit is not None:
            path.reverse()
            return path, hit
        path.append(node)
        node = node.parent
    path.reverse()
    return path, None


def enclosing_element(node: Node | None, tags: frozenset, memo: dict, outermost: bool = False) -> Node | None:
    """The nearest element at or above ``node`` whose tag is in ``tags`` (``outermost``: the highest one).
    ``memo`` remembers the answer for every element walked (``False``: none), so the blocks under one element
    cost one walk up between them (:func:`up_to_memo`), however deep they lie; keep one ``memo`` per question."""
    path, above = up_to_memo(node, memo)
    found = above if above is not None else False
    for element in path:  # top first: for what lies below, a match met on the way down is the nearest
        if element.tag in tags and (found is False or not outermost):
            found = element
        memo[element] = found
    return None if found is False else found


def release(root: Node) -> None:
    """Drop the parent links of ``root``'s tree once it is no longer needed; the tree must not be used
    afterwards. Parent links make a page's tree a web of reference cycles, which only CPython's cyclic
    garbage collector frees, late and in bulk (measured over the whole pipeline: 0.9 ms per page of
    collections, 0.35 ms with this); without them reference counting frees the tree as soon as its last
    reference goes. (Nodes only in the processing view keep theirs: few, and the collector still frees
    them.) A plain loop rather than :func:`iter_tree`, whose generator doubles the cost (0.12 → 0.22 ms
    per page)."""
    stack = [root]
    node: Node
    while stack:
        node = stack.pop()
        node.parent = None
        stack.extend(node.children)


# ── serialization (libxml2 method="html") ────────────────────────────────────────




def collapse_whitespace(text: str) -> str:
    """``text`` with each whitespace run (``\\s+``, no-break space included) made one space. Most text has
    none to collapse: every whitespace character but the space is non-printable, so a printable text
    without a double space is returned as is. Otherwise ``str.split`` finds the runs (the same characters
    as ``\\s``; several times faster than the regex on short text)."""
    if "  " not in text and text.isprintable():
        return text
    words = text.split()
    if not words:
        return " " if text else text
    collapsed = " ".join(words)
    if text[0].isspace():
        collapsed = " " + collapsed
    if text[-1].isspace():
        collapsed += " "
    return collapsed


# Characters of East Asian Width F, W or H but Hangul's (CJK ideographs and punctuation, kana, Bopomofo, Yi,
# full-width forms): a line break between two of them is no space (CSS Text 3, segment break transformation).
_WIDE = (
    "\u2e80-\u2fff\u3001-\u303e\u3040-\u312f\u3190-\u31ff\u3200-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf"
    "\uf900-\ufaff\ufe30-\ufe4f\uff01-\uff60\uffe0-\uffe6\U00020000-\U0003fffd"
)
_BREAK_BETWEEN_WIDE = re.compile(f"(?<=[{_WIDE}])[ \t\f]*\n\\s*(?=[{_WIDE}])")


def collapsed_parts(text: str) -> tuple[str, bool, bool]:
    """``text`` whitespace-collapsed, as (the text without its edge spaces, whether a space led, whether
    one trailed) — what text writers need to merge spaces across element boundaries. A run of whitespace with
    a line break in it between two wide characters goes: Chinese and Japanese sources wrap their lines anywhere,
    and a browser shows no space there (within one text node; the simplifier's block text keeps the reference's
    collapsing)."""
    if "\n" in text and not text.isascii():
        text = _BREAK_BETWEEN_WIDE.sub("", text)
    collapsed = collapse_whitespace(text)
    return collapsed.strip(" "), collapsed[:1] == " ", collapsed[-1:] == " "


def escape_text(text: str) -> str:
    if "&" in text:
        text = text.replace("&", "&amp;")
    if "<" in text:
        text = text.replace("<", "&lt;")
    if ">" in text:
        text = text.replace(">", "&gt;")
    return text


def escape_uri(value: str) -> str:
    """A URI attribute value as libxml2 writes it: leading blanks dropped, bytes outside printable ASCII
    (and spaces) percent-encoded as UTF-8."""
    value = value.lstrip(" \t\n\r")
    if value.isascii() and value.isprintable() and " " not in value:
        return value
    out = []
    for ch in value:
        code = ord(ch)
        if 0x20 < code < 0x7F:
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    return "".join(out)


def format_attr(tag: str, name: str, value: str) -> str:
    if name in BOOLEAN_ATTRS:
        return " " + name
    if name in URI_ATTRS or (name == "name" and tag == "a"):
        value = escape_uri(value)
    value = escape_text(value)
    if '"' in value:
        if "'" not in value:
            return f" {name}='{value}'"
        value = value.replace('"', "&quot;")
    return f' {name}="{value}"'


def _with_marks(node: Node) -> dict[str, str]:
    # Same attribute order as the reference, which sets them in this order on lxml elements.
    attrs = dict(node.attrs)
    if node.block_type_mark:
        attrs["cc-block-type"] = "true"
    if node.item_id is not None:
        attrs["_item_id"] = str(node.item_id)
    if node.select is not None:
        attrs["cc-select"] = node.select
    return attrs


def serialize(
    root: Node,
    *,
    original: bool = True,
    with_marks: bool = False,
    keep: set[Node] | None = None,
    unwrap: frozenset[str] = frozenset(),
    drop_blanks: bool = False,
) -> str:
    """Serialize ``root`` and its descendants (not its tail) like ``lxml.etree.tostring(method="html")``.

    ``original`` picks the original tree (else the processing view); ``with_marks`` writes the map marks
    (``cc-block-type``, ``_item_id``); ``keep`` (a set of nodes) drops every element not in
    it together with its tail, as reconstruction does; tags in ``unwrap`` are written without their own
    tags (their content and tail stay); ``drop_blanks`` leaves out the whitespace-only text that libxml2
    drops when it parses with ``remove_blank_text=True`` (see :data:`ALLOW_PCDATA`).
    """
    out: list[str] = []
    append = out.append
    # Stack of (node, closing) entries: closing=False → open the node; True → close it and emit its tail.
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        tag = node.tag
        if closing:
            if tag not in VOID_TAGS and tag not in unwrap and not (tag == "li" and _is_empty(node, original)):
                append(f"</{tag}>")
            tail = node.tail if original else node.ptail
            if tail and node is not root:
                if not (drop_blanks and dropped_blank(tail, node.parent, node)):
                    append(escape_text(tail))
            continue
        PyErr_CheckSignals()
        if tag not in unwrap:
            attrs = node.attrs
            if with_marks and (node.block_type_mark or node.item_id is not None or node.select is not None):
                attrs = _with_marks(node)
            if attrs:
                append(f"<{tag}{''.join(format_attr(tag, k, v) for k, v in attrs.items())}>")
            else:
                append(f"<{tag}>")
        stack.append((node, True))
        if tag in VOID_TAGS and tag not in unwrap:
            continue
        if original and node.lazy is not None:
            materialize(node)
        text = node.text if original else node.ptext
        if text and not (drop_blanks and dropped_blank(text, node, None)):
            append(text if tag in RAW_TEXT_TAGS else escape_text(text))
        kids = node.children if original else node.pchildren
        for child in reversed(kids):
            if keep is None or child in keep:
                stack.append((child, False))
    return "".join(out)


def _is_empty(node: Node, original: bool) -> bool:
    # libxml2 writes an empty <li> (no text, no children) without its end tag.
    return not (node.text if original else node.ptext) and not (node.children if original else node.pchildren)


def is_blank(text: str | None) -> bool:
    """Whether ``text`` (an element's text or tail) is missing or whitespace only."""
    return not text or text.isspace()


def child_place(node: Node, places: dict[Node, dict[Node, int]]) -> int:
    """The position of ``node`` among its parent's children. ``places`` memoises each parent's children's
    positions (one pass per parent), so looking up many children of one parent stays linear; the children
    must not change between lookups."""
    parent = node.parent
    where = places.get(parent)
    if where is None:
        where = places[parent] = {kid: i for i, kid in enumerate(parent.children)}
    return where[node]


# What ends a sentence: the Latin marks, and those of scripts that end sentences otherwise (the CJK full stops,
# the Devanagari/Bengali danda, the Urdu full stop, the Arabic question mark, the Armenian, Ethiopic, Myanmar,
# Khmer and Tibetan full stops). A Hindi paragraph ends in "।": read as no sentence end, it looks like a menu entry.
SENTENCE_END = ".!?\u3002\uff01\uff1f\uff0e\uff61\u0964\u0965\u06d4\u061f\u0589\u1362\u104b\u17d4\u0f0d"
CLAUSE_MARKS = ",;:\uff0c\u3001\uff1b\uff1a\u060c\u061b"  # commas, semicolons and colons (CJK, Arabic script)

# The decimal digits of every script but ASCII, as ASCII ones ("٢" → "2", "２" → "2"): a str.translate table
NON_ASCII_DIGITS = {
    c: ord("0") + unicodedata.digit(chr(c)) for c in range(0x80, 0x10000) if unicodedata.category(chr(c)) == "Nd"
}

# Kana, CJK ideographs and hangul: a word of them is about two characters (Chinese and Japanese are written
# without spaces between words)
CJK_CHARACTER = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# Thai, Lao, Myanmar and Khmer are written without spaces between words as well (a space ends a phrase or a
# sentence), in letters: a word of them is about five
UNSPACED_LETTER_RANGES = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))
LETTERS_PER_UNSPACED_WORD = 5
UNSPACED_LETTER = re.compile("[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in UNSPACED_LETTER_RANGES) + "]")
_UNSPACED = re.compile(f"{CJK_CHARACTER.pattern}|{UNSPACED_LETTER.pattern}")


def word_count(text: str, split: Callable[[str], list[str]] = str.split) -> int:
    """Words of ``text`` (as ``split`` cuts them: whitespace-separated by default), where two
    :data:`CJK_CHARACTER` count as one word, and :data:`LETTERS_PER_UNSPACED_WORD` :data:`UNSPACED_LETTER`: a
    Chinese, Japanese or Thai sentence would otherwise be a single word."""
    if not _UNSPACED.search(text):
        return len(split(text))
    cjk = len(CJK_CHARACTER.findall(text))
    letters = len(UNSPACED_LETTER.findall(text))
    rest = split(_UNSPACED.sub(" ", text))
    return len(rest) + (cjk + 1) // 2 + (letters + LETTERS_PER_UNSPACED_WORD - 1) // LETTERS_PER_UNSPACED_WORD


def dropped_blank(text: str, parent: Node | None, previous: Node | None) -> bool:
    """Whether libxml2's ``remove_blank_text`` parse drops ``text`` (the text of ``parent`` before its
    first child when ``previous`` is ``None``, else the tail of ``previous``)."""
    if text.strip(_HTML_SPACE):
        return False
    if parent is None or parent.tag in ("html", "head"):
        return True
    return (previous.tag if previous is not None else parent.tag) not in ALLOW_PCDATA
