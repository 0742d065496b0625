"""Sanitised output: main HTML and Markdown without active content (the default; see ``keep_markup``).

Main HTML (:func:`sanitize_tree`, applied by :func:`~extract_trt.runtime.html.reconstruct.reconstruct` to the
kept part of the page tree just before it is serialised, so the reference serialisation is unchanged
elsewhere):

* **Elements removed with their content** (their tail text stays, so no surrounding text is lost):
  :data:`DROPPED_ELEMENTS` — ``script style iframe frame param base link meta portal fencedframe noembed``,
  SVG's animation/event elements (``animate set animatemotion animatetransform animatecolor handler``
  ``listener``), which can rewrite ``href`` to ``javascript:``, and the form controls that hold no page
  text: ``input``, ``select`` and ``datalist`` (a list of choices; plain text and Markdown leave them out
  too).
* **Forms become text** (:data:`FORM_ELEMENTS`): ``form`` and ``fieldset`` become ``section``, ``legend``,
  ``option`` and ``optgroup`` ``div``, ``label``, ``button`` and ``output`` ``span``, ``textarea`` ``pre``,
  each without its attributes (``action``, ``formaction``, ``method``, ``for`` …): the page's words stay,
  laid out as before (plain text and Markdown are unchanged), but nothing can be typed in or submitted.
* **Elements unwrapped** (tag and attributes removed, content kept and sanitised in turn):
  :data:`UNWRAPPED_ELEMENTS` — ``object embed applet frameset``. Their children are fallback content, or,
  after the libxml2 re-read the block scheme emulates (``<embed>`` is not void there), the text that
  followed them: page text either way.
* **Attributes removed**: every ``on*`` event handler; ``srcdoc``; the pipeline's own marks ``_item_id``
  and ``cc-block-type`` when the *input* carries them (the real marks are written from the tree, and only
  when asked for: ``Extractor(item_ids=True)``; so every ``_item_id`` in sanitised output is a real block
  id); an ``id`` or ``name`` whose value is one of :data:`CLOBBERED_NAMES`, the properties of
  ``document``, nodes and form elements that a named element would shadow (DOM clobbering:
  ``<img name="cookie">`` makes ``document.cookie`` an element); a URL attribute (:data:`URL_ATTRS`, ``*:href``,
  ``srcset``) whose scheme is ``javascript:``, ``vbscript:``, ``livescript:``, ``mocha:`` or ``data:``
  — except ``data:image/…`` in ``src``/``srcset``/``poster`` (an inert image); a ``style`` with
  ``expression(``, ``javascript:``, ``vbscript:``, ``-moz-binding``, ``behavior:`` or a CSS escape.
  Schemes are read as browsers read them: entities already decoded by the parser, ASCII whitespace and
  control characters removed anywhere, case ignored.
* **Legacy raw-text elements** are renamed so their text reads back as text: ``xmp``, ``listing`` and
  ``plaintext`` become ``pre`` (``plaintext`` would otherwise swallow the rest of the page, closing tags
  included), ``noframes`` becomes ``div``; the extra escaping the parser applies to ``xmp`` text for
  reference parity is undone.
* **Kept on purpose**: ``template`` (inert in a browser until a script clones it; its content is sanitised
  like the rest, so a clone is safe too) and ``noscript`` (lazy-loading pages put their real images there;
  its content is page content that the serializer escapes, so no text or attribute can hold the
  ``</noscript`` that a browser with scripting on would end it at).
* The serializer escapes ``<``, ``>`` and ``&`` in text and attribute values, so no text can turn into
  markup when the output is parsed again (comments are never kept). Reconstruction's reference quirks
  that *unescape* serialised HTML (entities inside absolute URLs; the Dripper v1.0 profile's whole-page
  unescape) are replaced by an unescape of URLs only that percent-encodes the ``"``, ``<`` and ``>`` it
  produces (an ``&quot;`` in a URL must not close the attribute).

Markdown is safe by construction, whatever ``keep_markup`` says: its writer escapes every text run for
its context and allow-lists link schemes (:mod:`extract_trt.runtime.html.markdown`), so nothing is repaired
afterwards. Plain text has no active content.

:func:`active_content` audits finished HTML the way a browser would read it (an independent Lexbor
parse); the tests and ``scripts/fuzz.py`` hold every sanitised output to it.
"""

from __future__ import annotations

import re

from selectolax.lexbor import LexborHTMLParser

from extract_trt.runtime.html.dom import Node

__all__ = [
    "CLOBBERED_NAMES",
    "DROPPED_ELEMENTS",
    "FORM_ELEMENTS",
    "UNWRAPPED_ELEMENTS",
    "URL_ATTRS",
    "active_content",
    "is_unsafe_url",
    "sanitize_tree",
]

DROPPED_ELEMENTS = frozenset(
    {"script", "style", "iframe", "frame", "param", "base", "link", "meta", "portal", "fencedframe", "noembed",
     "animate", "set", "animatemotion", "animatetransform", "animatecolor", "handler", "listener", "input",
     "select", "datalist"}
)  # fmt: skip
UNWRAPPED_ELEMENTS = frozenset({"object", "embed", "applet", "frameset"})
_REMOVED = DROPPED_ELEMENTS | UNWRAPPED_ELEMENTS
# Form elements → the element with the same layout in plain text (convert._TextWriter) and Markdown.
FORM_ELEMENTS = {"form": "section", "fieldset": "section", "legend": "div", "option": "div", "optgroup": "div",
                 "label": "span", "button": "span", "output": "span", "textarea": "pre"}  # fmt: skip
# ``document`` and form elements let named elements override their own properties ([LegacyOverrideBuiltIns]);
# ``window``'s own properties win over named ones, and ``location``/``window``/``document``/``top`` cannot be
# overridden at all, so those (and ids such as "top" that in-page links use) are kept.
CLOBBERED_NAMES = frozenset(
    # document
    {"activeElement", "adoptNode", "all", "anchors", "applets", "body", "characterSet", "charset", "children",
     "close", "compatMode", "contentType", "cookie", "createElement", "createEvent", "createRange",
     "createTextNode", "currentScript", "defaultView", "designMode", "dir", "doctype", "documentElement",
     "documentURI", "domain", "embeds", "evaluate", "execCommand", "fonts", "forms", "getElementById",
     "getElementsByClassName", "getElementsByName", "getElementsByTagName", "getSelection", "hasFocus", "head",
     "hidden", "images", "implementation", "importNode", "lastModified", "links", "open", "plugins",
     "querySelector", "querySelectorAll", "readyState", "referrer", "scripts", "styleSheets", "title", "URL",
     "write", "writeln",
     # nodes and elements (a form's named controls shadow these on the form)
     "appendChild", "attributes", "childNodes", "cloneNode", "firstChild", "innerHTML", "insertBefore",
     "lastChild", "nodeName", "nodeType", "nodeValue", "outerHTML", "ownerDocument", "parentElement",
     "parentNode", "removeChild", "replaceChild", "setAttribute", "getAttribute", "textContent", "style",
     "addEventListener", "dispatchEvent", "removeEventListener",
     # forms
     "acceptCharset", "action", "elements", "encoding", "enctype", "length", "method", "noValidate", "reset",
     "requestSubmit", "submit", "target",
     # objects
     "__proto__", "constructor", "hasOwnProperty", "prototype", "toString", "valueOf"}
)  # fmt: skip
URL_ATTRS = frozenset(
    {"href", "src", "action", "formaction", "background", "cite", "codebase", "data", "dynsrc", "lowsrc",
     "longdesc", "manifest", "ping", "poster", "profile", "usemap", "classid", "archive", "icon", "xml:base"}
)  # fmt: skip
_SRCSET_ATTRS = frozenset({"srcset", "imagesrcset"})
_IMAGE_ATTRS = frozenset({"src", "srcset", "imagesrcset", "poster"})
_DROPPED_ATTRS = frozenset({"srcdoc", "_item_id", "cc-block-type"})
_SCRIPT_SCHEMES = ("javascript:", "vbscript:", "livescript:", "mocha:")
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]+")
_UNSAFE_CSS = re.compile(r"expression\(|javascript:|vbscript:|-moz-binding|behavior:|\\")
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_RAW_TEXT_RENAMED = {"xmp": "pre", "listing": "pre", "plaintext": "pre", "noframes": "div"}


def is_unsafe_url(value: str, attr: str = "href") -> bool:
    """Whether a URL attribute value would run script (or load a non-image ``data:`` document)."""
    url = _IGNORED_IN_URL.sub("", value).lower()
    if url.startswith(_SCRIPT_SCHEMES):
        return True
    if url.startswith("data:"):
        return not (attr in _IMAGE_ATTRS and url.startswith("data:image/"))
    return False


def _unsafe_attr(name: str, value: str) -> bool:
    if name.startswith("on") or name in _DROPPED_ATTRS:
        return True
    if name == "id" or name == "name":
        return value.strip() in CLOBBERED_NAMES
    if name in URL_ATTRS or name.endswith(":href"):
        return is_unsafe_url(value, name)
    if name in _SRCSET_ATTRS:
        return any(is_unsafe_url(candidate.strip(), name) for candidate in value.split(","))
    if name == "style":
        return bool(_UNSAFE_CSS.search(_IGNORED_IN_URL.sub("", _CSS_COMMENT.sub("", value)).lower()))
    return False


def _safe_attrs(attrs: dict[str, str]) -> dict[str, str] | None:
    """``attrs`` without the unsafe ones, or ``None`` when all are safe (the common case: no copy)."""
    bad = [name for name, value in attrs.items() if _unsafe_attr(name.lower(), value)]
    if not bad:
        return None
    return {name: value for name, value in attrs.items() if name not in bad}


def _unescape_once(text: str | None) -> str | None:
    return text.replace("&gt;", ">").replace("&lt;", "<").replace("&amp;", "&") if text else text


def sanitize_tree(root: Node, keep: set[Node] | None = None) -> None:
    """Remove active content, in place, from ``root`` and the descendants in ``keep`` (all when ``None``).

    Only the original-tree fields (``children``/``text``/``tail``/``attrs``) change. Elements outside
    ``keep`` are left alone: the serializer drops them anyway.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        if node.tag in _RAW_TEXT_RENAMED:
            if node.tag == "xmp":  # dom.parse escaped its text once for parity (Modest's output)
                node.text = _unescape_once(node.text)
                for kid in node.children:  # an <xmp> in MathML or SVG holds elements, and text between them
                    kid.tail = _unescape_once(kid.tail)
            node.tag = _RAW_TEXT_RENAMED[node.tag]
        elif node.tag in FORM_ELEMENTS:
            node.tag = FORM_ELEMENTS[node.tag]
            node.attrs = {}
        if node.attrs:
            cleaned = _safe_attrs(node.attrs)
            if cleaned is not None:
                node.attrs = cleaned
        kids = node.children
        if not kids:
            continue
        if any(kid.tag in _REMOVED and (keep is None or kid in keep) for kid in kids):
            kids = node.children = _without_removed(node, kids, keep)
        stack.extend(kid for kid in kids if keep is None or kid in keep)


def _without_removed(parent: Node, kids: list[Node], keep: set[Node] | None) -> list[Node]:
    """``parent``'s new children: dropped elements gone, unwrapped ones replaced by their children.

    Text that was inside or after a removed element moves to the previous *kept* sibling's tail (unkept
    siblings are not written, and their tails with them), else to the parent's text.
    """
    out: list[Node] = []
    previous: Node | None = None

    def add_text(text: str) -> None:
        if previous is not None:
            previous.tail = (previous.tail or "") + text
        else:
            parent.text = (parent.text or "") + text

    pending: list[Node | str] = list(reversed(kids))  # a str is the tail of an unwrapped element
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            add_text(item)
            continue
        kept = keep is None or item in keep
        if kept and item.tag in DROPPED_ELEMENTS:
            if item.tail:
                add_text(item.tail)
            continue
        if kept and item.tag in UNWRAPPED_ELEMENTS:
            if item.text:
                add_text(item.text)
            if item.tail:
                pending.append(item.tail)
            pending.extend(reversed(item.children))
            continue
        item.parent = parent
        out.append(item)
        if kept:
            previous = item
    return out


_TEMPLATE_TAG = re.compile(r"<(/?)template\b", re.IGNORECASE)


def active_content(html: str) -> list[str]:
    """What in ``html`` a browser could run: scripting elements, event handlers, unsafe URLs (empty: none).

    Parses ``html`` with Lexbor as a browser would (``<template>`` content is inspected too) and reports
    each element in :data:`DROPPED_ELEMENTS`, :data:`UNWRAPPED_ELEMENTS` or :data:`FORM_ELEMENTS` and each
    attribute that the sanitiser would remove (``on*``, unsafe URLs and styles, clobbering ``id``/``name``),
    as ``"tag"`` / ``"tag[attr]"`` strings.
    """
    tree = LexborHTMLParser(_TEMPLATE_TAG.sub(r"<\1div", html))
    found: list[str] = []
    for node in tree.root.traverse() if tree.root is not None else ():
        tag = (node.tag or "").lower()
        if tag.startswith(("-", "_", "!")):
            continue
        if tag in _REMOVED or tag in FORM_ELEMENTS:
            found.append(tag)
        for name, value in (node.attributes or {}).items():
            if name.lower() not in ("_item_id", "cc-block-type") and _unsafe_attr(name.lower(), value or ""):
                found.append(f"{tag}[{name}]")
    return found
