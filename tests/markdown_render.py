""""Safe when rendered", for the Markdown output: render it as a real CommonMark/GFM renderer would and audit
the HTML that comes out.

The renderer is markdown-it-py (CommonMark + GFM tables and strikethrough) with raw HTML *enabled* and its
own link validation *off* (``validateLink`` accepts everything): the most permissive reader, so whatever
the writer lets through shows up. The rendered HTML is parsed the way a browser parses it (Lexbor) and is
safe when

* every element is one Markdown makes by itself (:data:`MARKDOWN_TAGS`): no raw ``<img onerror>``,
  ``<script>``, ``<iframe>`` … from the page's text;
* every attribute is one Markdown writes for that element (:data:`MARKDOWN_ATTRS`): no event handler,
  ``style`` or ``srcdoc``;
* every ``href``/``src`` (entities decoded by the parser, blanks and control characters removed as a
  browser removes them) is relative or has a scheme in
  :data:`~extract_trt.runtime.html.markdown.LINK_SCHEMES` (``http https ftp mailto tel``).
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from selectolax.lexbor import LexborHTMLParser

from extract_trt.runtime.html.markdown import LINK_SCHEMES

MARKDOWN_TAGS = frozenset(
    {"html", "head", "body", "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre",
     "code", "em", "strong", "s", "a", "img", "hr", "br", "table", "thead", "tbody", "tr", "th", "td"}
)  # fmt: skip
MARKDOWN_ATTRS = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}, "th": {"style"},
                  "td": {"style"}}  # fmt: skip
_ALIGN_STYLE = re.compile(r"text-align:(left|right|center)")
_IGNORED_IN_URL = re.compile(r"[\x00-\x20\x7f]+")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")

_RENDERER = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_RENDERER.validateLink = lambda url: True


def render(markdown: str) -> str:
    """``markdown`` as HTML, rendered permissively (raw HTML on, every link destination accepted)."""
    return _RENDERER.render(markdown)


def markdown_violations(markdown: str) -> list[str]:
    """What in the rendered ``markdown`` is not safe (module docstring); empty: safe."""
    tree = LexborHTMLParser(render(markdown))
    found: list[str] = []
    for node in tree.root.traverse() if tree.root is not None else ():
        tag = (node.tag or "").lower()
        if tag.startswith(("-", "_", "!")):  # text, comments
            if tag == "_comment":
                found.append("comment")
            continue
        if tag not in MARKDOWN_TAGS:
            found.append(f"<{tag}>")
        allowed = MARKDOWN_ATTRS.get(tag, set())
        for name, value in (node.attributes or {}).items():
            name = name.lower()
            value = value or ""
            if name not in allowed or (name == "style" and not _ALIGN_STYLE.fullmatch(value)):
                found.append(f"{tag}[{name}]")
            elif name in ("href", "src"):
                scheme = _SCHEME.match(_IGNORED_IN_URL.sub("", value))
                if scheme is not None and scheme.group(1).lower() not in LINK_SCHEMES:
                    found.append(f"{tag}[{name}={value[:40]!r}]")
    return found
