"""Page metadata (title, author, dates, site name, description, language, canonical URL, categories /
tags, image, licence), read in the same pass as the extraction, from the tree the simplifier has parsed.

Sources, in order of trust (per field, the first that gives a value wins; exceptions below):

1. **JSON-LD** (``<script type="application/ld+json">``, head or body): the page's main object — an
   ``Article``-like type (``Article``, ``NewsArticle``, ``BlogPosting``, ``Report``, ``Recipe``, …), else a
   forum post / Q&A (``DiscussionForumPosting``, a ``QAPage``'s ``mainEntity``), else the ``WebPage`` —
   ``@graph`` lists flattened and ``@id`` references to ``Person`` / ``Organization`` nodes resolved.
2. **meta tags**: OpenGraph (``og:*``, ``article:*``), Twitter cards, Dublin Core (``dc.*`` /
   ``dcterms.*``), ``citation_*``, ``parsely-*`` / ``sailthru.*``, plain ``author`` / ``description`` /
   ``keywords``; ``<link rel="canonical">`` / ``rel="license"``.
3. **microdata**: ``itemprop`` on body elements (``headline``, ``author`` / its ``name``, ``datePublished``).
4. **markup**: ``<time datetime>`` (``pubdate`` / ``itemprop`` ones first), ``rel="author"`` links, elements
   whose class names an author or byline, ``rel="tag"`` / ``rel="category"`` links, Creative Commons links.
5. **the URL**: ``/2024/03/15/``, ``/2024-03-15-…``, ``/20240315/`` (a URL day one day off a structured
   time stamp wins: the time stamp is in UTC, the URL has the publisher's day).
6. **text**: a date in an element whose class names a date, or in a short block next to the first ``<h1>``
   ("Dec 12, 2025", "Last updated: …"); then a date in script data (``"publishedAt":"2024-…"``). An author
   in a short block next to the first ``<h1>`` that is a byline ("By Amy Wilhelm", "Written by: …", "Posted
   by BeauHD on …"; :func:`block_author`).
7. **the main content**: its first heading when nothing else names a title; its language (``py3langid``).

The title is the page's ``<h1>`` when it has only one and that is not mostly link text (a logo). Else the
structured title (or ``<title>``) is compared with the first ``<h1>`` that is not a link: ``og:title`` and
``<title>`` usually carry the site's name ("Headline | Site"), which is cut when one part is the ``<h1>`` or
names the site (its ``og:site_name`` or domain). Authors from JSON-LD or repeated author meta tags are joined
with ", ". The rules were tuned on the train and tune domains of ``wcxb-dev`` only.

Cost: the head (its scripts and styles left unbuilt), JSON-LD (found with ``str.find`` in the source) and
the blocks are always read; the body is walked (every element, a few dict lookups each) only when they
leave the author or the date open. The module is part of the compiled core (typed walks over the tree).
The language detection reads the main text's first 100 characters, and its first 300 only when those
leave the answer open (:func:`detect_language`): 134 characters a page on average, as accurate as 300.

Dates are ISO 8601: ``YYYY-MM-DD``, or ``YYYY-MM-DDTHH:MM:SS[+HH:MM]`` when the page gives a time.
``htmldate`` was measured and not used: 5 ms median, 84 ms mean CPU per page (``extensive_search``),
more than the whole extraction.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from extract_trt.runtime.html.dom import NON_ASCII_DIGITS, Node, materialize
from extract_trt.runtime.types import Block

__all__ = [
    "PageMetadata",
    "complete_from_main",
    "detect_language",
    "extract_metadata",
    "front_matter",
    "load_language_model",
    "normalize_date",
]


@dataclass(slots=True)
class PageMetadata:
    """What a page says about itself. Missing values are ``None`` (lists: empty)."""

    title: str | None = None
    author: str | None = None
    date: str | None = None  # publication date, ISO 8601
    date_modified: str | None = None  # ISO 8601, where the page states one
    sitename: str | None = None
    description: str | None = None
    language: str | None = None  # declared: <html lang>, og:locale, content-language, JSON-LD inLanguage
    language_detected: str | None = None  # ISO 639-1 code detected from the main text
    canonical_url: str | None = None
    categories: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    image: str | None = None
    license: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, ``None`` for a missing value, lists as lists."""
        return asdict(self)


# ── collection: one walk over the original tree ─────────────────────────────────────────────────────

_ARTICLE_TYPES = frozenset(
    {
        "article", "newsarticle", "blogposting", "report", "techarticle", "scholarlyarticle", "analysisnewsarticle",
        "opinionnewsarticle", "reportagenewsarticle", "reviewnewsarticle", "backgroundnewsarticle", "liveblogposting",
        "socialmediaposting", "review", "howto", "recipe", "medicalwebpage", "creativework", "podcastepisode",
        "videoobject", "event", "course", "product", "jobposting", "book",
    }
)  # fmt: skip
_POST_TYPES = frozenset({"discussionforumposting", "question", "answer", "comment"})
_PAGE_TYPES = frozenset({"webpage", "itempage", "aboutpage", "faqpage", "collectionpage", "profilepage", "qapage"})
_SITE_TYPES = frozenset({"website", "organization", "newsmediaorganization", "corporation", "localbusiness"})
_AUTHOR_HINT = re.compile(r"(?:^|[\s_-])(?:author|byline|by-line|writer|posted-by|article-author)(?:$|[\s_-]|name)", re.I)
_DATE_HINT = re.compile(r"(?:^|[\s_-])(?:date|time|pubdate|published|publish-date|post-date|posted-on|entry-date|timestamp|meta-date|article-date|byline)(?:$|[\s_-])", re.I)
_BYLINE_PREFIX = re.compile(
    r"^\s*(?:(?:written|posted|published|reviewed|view\s+(?:all|more)\s+posts|more\s+posts|articles?)\s+by|by|von|par|por|di"
    r"|author|autor|auteur)\s*[:\-]?\s+",
    re.I,
)
_SPACES = re.compile(r"\s+")
_MAX_AUTHOR_CHARS = 80
_MAX_HINTS = 8
_MAX_HINTED = 64
_MARKUP_TAGS = frozenset({"time", "a"})
# a first, cheap filter of class values (one C-level scan); _AUTHOR_HINT / _DATE_HINT decide later
_CLASS_HINT = re.compile(r"uthor|yline|riter|osted|date|Date|time|Time|ublish")


@dataclass(slots=True)
class _Sources:
    """Raw candidates found on the page, before any choice."""

    html_lang: str | None = None
    title_tag: str | None = None
    meta: dict[str, str] = field(default_factory=dict)  # lower-cased name/property → first content
    meta_all: dict[str, list[str]] = field(default_factory=dict)  # repeated keys (article:tag, keywords)
    links: dict[str, str] = field(default_factory=dict)  # rel token → first href
    json_ld: list[Any] = field(default_factory=list)
    itemprops: dict[str, str] = field(default_factory=dict)  # microdata property → first value
    times: list[tuple[str, Node]] = field(default_factory=list)  # (datetime attribute, element)
    rel_authors: list[str] = field(default_factory=list)
    hinted: list[Node] = field(default_factory=list)  # elements whose class may name an author or date
    rel_tags: list[str] = field(default_factory=list)
    rel_categories: list[str] = field(default_factory=list)
    cc_license: str | None = None
    h1: str | None = None  # the first <h1> mostly not link text (a logo's <h1><a href="/"> is), else the first
    sole_h1: bool = False  # h1 is the page's only <h1>, and mostly not link text
    body_read: bool = False  # _body_sources has run

    def hinted_texts(self, pattern: re.Pattern[str], limit: int) -> list[str]:
        """Text of the hinted elements whose class matches ``pattern`` (worked out only when asked)."""
        texts = []
        for node in self.hinted:
            if pattern.search(node.attrs.get("class", "")):
                text = text_of(node, limit)
                if text:
                    texts.append(text)
                    if len(texts) == _MAX_HINTS:
                        break
        return texts


def text_of(node: Node, limit: int = 400) -> str:
    """The text under ``node`` (original tree), whitespace collapsed, cut at about ``limit`` characters."""
    parts: list[str] = []
    size = 0
    stack: list[tuple[Node, bool]] = [(node, False)]
    el: Node  # (typed for the compiled build: C-level field access)
    kid: Node
    while stack and size < limit:
        el, tail = stack.pop()
        if tail:
            if el.tail:
                parts.append(el.tail)
                size += len(el.tail)
            continue
        if el.lazy is not None:  # script/style/nav/head content: not text of the element
            continue
        if el.tag in ("script", "style", "noscript", "template"):
            continue
        if el.text:
            parts.append(el.text)
            size += len(el.text)
        for kid in reversed(el.children):
            stack.append((kid, True))
            stack.append((kid, False))
    return _SPACES.sub(" ", "".join(parts)).strip()[: limit + 50]


# Left unbuilt in the head: their content is text, never a <meta>/<link>, and most of a head's size.
_HEAD_TEXT_TAGS = frozenset({"script", "style"})


def _head_sources(root: Node, html: str, blocks: Sequence[Block]) -> _Sources:
    """The cheap sources: the ``<head>``, JSON-LD (found in the source text, head and body), and the first
    ``<h1>`` (a block)."""
    src = _Sources(html_lang=root.attrs.get("lang") or root.attrs.get("xml:lang"))
    head = next((kid for kid in root.children if kid.tag == "head"), None)
    if head is not None:
        materialize(head, _HEAD_TEXT_TAGS)
        stack = head.children[::-1]  # popped in document order: the first of repeated tags wins
        node: Node  # (typed for the compiled build: C-level field access)
        while stack:
            node = stack.pop()
            if node.tag == "title":
                if src.title_tag is None:
                    materialize(node)
                    src.title_tag = node.text or ""
            elif node.attrs:
                _head_tag(node, src)
            if node.lazy is None and node.children:
                stack.extend(reversed(node.children))
    src.json_ld = _json_ld_texts(html)
    h1s = [b for b in blocks if b.tag == "h1"]
    headings = [b for b in h1s if 2 * b.link_text_length < len(b.text)]  # a logo's <h1><a href="/"> is none
    if h1s:
        src.h1 = (headings or h1s)[0].text
        src.sole_h1 = len(h1s) == 1 and len(headings) == 1
    return src


def _head_tag(node: Node, src: _Sources) -> None:
    """A ``<meta>`` or ``<link>`` (in the head or, read by :func:`_body_sources`, the body)."""
    attrs = node.attrs
    if node.tag == "meta":
        content = attrs.get("content")
        if content:
            content = content.strip()
            for key in ("property", "name", "itemprop", "http-equiv"):
                name = attrs.get(key)
                if name:
                    name = name.strip().lower()
                    src.meta.setdefault(name, content)
                    src.meta_all.setdefault(name, []).append(content)
    elif node.tag == "link":
        href = attrs.get("href")
        rel = attrs.get("rel")
        if href and rel:
            for token in rel.lower().split():
                src.links.setdefault(token, href.strip())
        prop = attrs.get("itemprop")
        if href and prop:
            src.itemprops.setdefault(prop.strip(), href.strip())


_HEAD_TAGS = frozenset({"meta", "link"})


def _body_sources(root: Node, src: _Sources) -> None:
    """The body's markup (meta tags, microdata, ``<time>``, rel links, classes naming an author or a date):
    one walk over the body, read only when the head's sources leave the author or the date open. Every
    element passes here, so the common case (no attributes of interest) costs a few dict lookups."""
    stack = [kid for kid in reversed(root.children) if kid.tag != "head"]
    hint = _CLASS_HINT.search
    hinted = src.hinted
    class_hints: dict[str, bool] = {}  # a page repeats its class values: each is matched once
    node: Node  # (typed for the compiled build: C-level field access)
    attrs: dict[str, str]
    kids: list[Node]
    while stack:
        node = stack.pop()
        attrs = node.attrs
        if attrs:
            tag = node.tag
            if tag in _HEAD_TAGS:
                _head_tag(node, src)
                continue
            if "itemprop" in attrs or (
                tag in _MARKUP_TAGS and (tag != "a" or "rel" in attrs or "creativecommons.org/" in attrs.get("href", ""))
            ):
                _attrs_candidates(node, tag, attrs, src)
            cls = attrs.get("class")
            if cls is not None and len(hinted) < _MAX_HINTED:
                hinted_class = class_hints.get(cls)
                if hinted_class is None:
                    hinted_class = class_hints[cls] = hint(cls) is not None
                if hinted_class:
                    hinted.append(node)
        if node.lazy is None:
            kids = node.children
            if kids:
                stack.extend(reversed(kids))
    src.body_read = True


_LD_TYPE = "application/ld+json"


def _json_ld_texts(html: str) -> list[str]:
    """The content of every ``<script type="application/ld+json">`` of the page source (``str.find``:
    faster than walking the tree for them)."""
    texts = []
    at = html.find(_LD_TYPE)
    while at >= 0:
        opening = max(html.rfind("<script", max(0, at - 300), at), html.rfind("<SCRIPT", max(0, at - 300), at))
        start = html.find(">", at)
        if opening < 0 or start < 0:
            break
        end = html.find("</script", start)
        if end < 0:
            end = html.find("</SCRIPT", start)
        if end < 0:
            break
        texts.append(html[start + 1 : end])
        at = html.find(_LD_TYPE, end)
    return texts


def _attrs_candidates(node: Node, tag: str, attrs: dict[str, str], src: _Sources) -> None:
    prop = attrs.get("itemprop")
    if prop:
        for name in prop.split():
            if name not in src.itemprops:
                value = attrs.get("content") or attrs.get("datetime") or ""
                if not value and name in ("author", "creator"):
                    value = _microdata_name(node)
                src.itemprops[name] = value.strip() or text_of(node, 200)
    if tag == "time":
        stamp = attrs.get("datetime")
        if stamp and len(src.times) < _MAX_HINTS:
            src.times.append((stamp, node))
    elif tag == "a":
        rel = attrs.get("rel")
        if rel:
            _rel_link(node, rel.lower().split(), attrs, src)
        if src.cc_license is None:
            href = attrs.get("href", "")
            if "creativecommons.org/" in href and ("/licenses/" in href or "/publicdomain/" in href):
                src.cc_license = href.strip()


def _rel_link(node: Node, tokens: list[str], attrs: dict[str, str], src: _Sources) -> None:
    if "author" in tokens:
        src.rel_authors.append(text_of(node, 120))
    if "tag" in tokens or "category" in tokens:
        (src.rel_categories if "category" in tokens else src.rel_tags).append(text_of(node, 120))
    if "license" in tokens and attrs.get("href"):
        src.links.setdefault("license", attrs["href"].strip())


def _microdata_name(node: Node) -> str:
    """The ``itemprop="name"`` inside a microdata ``author`` item, if any."""
    stack = list(node.children)
    while stack:
        el = stack.pop()
        if el.attrs.get("itemprop") == "name":
            return el.attrs.get("content") or text_of(el, 120)
        stack.extend(el.children)
    return ""


# ── JSON-LD ─────────────────────────────────────────────────────────────────────────────────────────


def _json_ld_objects(texts: list[str]) -> list[dict[str, Any]]:
    """Every JSON object of the page's JSON-LD blocks, ``@graph`` members flattened, in order."""
    out: list[dict[str, Any]] = []
    for text in texts:
        try:
            data = json.loads(text.strip().rstrip(";"), strict=False)
        except (ValueError, RecursionError):  # nested deeper than the parser's stack: no metadata, not an error
            continue
        stack = [data]  # its top is its end: items pushed reversed come out in document order
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, dict):
                out.append(item)
                graph = item.get("@graph")
                if isinstance(graph, list):
                    stack.extend(reversed(graph))
    return out


def _types(obj: dict[str, Any]) -> set[str]:
    kind = obj.get("@type")
    kinds = kind if isinstance(kind, list) else [kind]
    return {k.lower().rsplit("/", 1)[-1] for k in kinds if isinstance(k, str)}


@dataclass(slots=True)
class _JsonLd:
    main: dict[str, Any] | None = None  # the article / post
    page: dict[str, Any] | None = None  # the WebPage
    site: dict[str, Any] | None = None  # the WebSite / publisher
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)


def _read_json_ld(texts: list[str]) -> _JsonLd:
    ld = _JsonLd()
    for obj in _json_ld_objects(texts):
        ident = obj.get("@id")
        if isinstance(ident, str) and len(obj) > 2:
            ld.by_id.setdefault(ident, obj)
        kinds = _types(obj)
        if ld.main is None and kinds & _ARTICLE_TYPES:
            ld.main = obj
        elif kinds & _PAGE_TYPES:
            if ld.page is None:
                ld.page = obj
            entity = obj.get("mainEntity")
            if isinstance(entity, dict) and _types(entity) & (_POST_TYPES | _ARTICLE_TYPES) and ld.main is None:
                ld.main = entity
        elif kinds & _POST_TYPES and ld.main is None:
            ld.main = obj
        elif kinds & _SITE_TYPES and ld.site is None and "website" in kinds:
            ld.site = obj
    return ld


def _resolve(ld: _JsonLd, value: Any) -> Any:
    if isinstance(value, dict) and set(value) <= {"@id", "@type"} and value.get("@id") in ld.by_id:
        return ld.by_id[value["@id"]]
    return value


def _ld_names(ld: _JsonLd, value: Any) -> list[str]:
    """Names of a JSON-LD author/publisher value: a string, an object with ``name``, an ``@id``, a list."""
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        item = _resolve(ld, item)
        if isinstance(item, str):
            name = item
        elif isinstance(item, dict):
            name = item.get("name")
            if isinstance(name, list):
                name = name[0] if name else None
            if not isinstance(name, str):
                given, family = item.get("givenName"), item.get("familyName")
                name = " ".join(p for p in (given, family) if isinstance(p, str))
        else:
            continue
        name = _clean(name)
        if name and not name.lower().startswith(("http://", "https://")):
            names.append(name)
    return names


def _ld_str(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("url") or value.get("@id") or value.get("name")
    return _clean(value) if isinstance(value, str) else None


def _ld_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [p for p in (_clean(v) for v in value.split(",")) if p]
    if isinstance(value, list):
        return [p for p in (_clean(v) for v in value if isinstance(v, str)) if p]
    return []


# ── choosing ────────────────────────────────────────────────────────────────────────────────────────


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = _SPACES.sub(" ", _unescape(value)).strip()
    return value or None


def _unescape(value: str) -> str:
    if "&" not in value:
        return value
    import html

    return html.unescape(value)


def _first(*values: str | None) -> str | None:
    for value in values:
        value = _clean(value)
        if value:
            return value
    return None


def _meta(src: _Sources, *names: str) -> str | None:
    return _first(*(src.meta.get(n) for n in names))


def extract_metadata(
    root: Node,
    html: str,
    url: str | None = None,
    blocks: Sequence[Block] = (),
) -> PageMetadata:
    """The metadata of the page whose original tree is ``root`` (read before reconstruction changes
    the tree). ``url``: the page's address (date patterns, relative canonical/image links); ``html``: its
    source, searched for a publication date in script data (``"datePublished": "…"``) when the markup
    has none; ``blocks``: the simplifier's blocks, whose text near the ``<h1>`` may state the date. What
    only the labels tell is added by :func:`complete_from_main`.

    The body's markup is walked only when the head and JSON-LD leave the author or the date open (most
    of the cost is that walk); so body ``rel="tag"`` links, for one, are read only on such pages."""
    src = _head_sources(root, html, blocks)
    ld = _read_json_ld(src.json_ld)
    main = ld.main or {}
    page = ld.page or {}
    md = PageMetadata()

    md.author = _choose_author(src, ld, main)
    md.date = _structured_date(src, main, page)
    if md.author is None or md.date is None:
        _body_sources(root, src)
        md.author = _choose_author(src, ld, main) or block_author(blocks)
        md.date = _structured_date(src, main, page)
    in_url = url_date(url)
    if md.date is None or (in_url is not None and _days_apart(md.date, in_url) <= 1):
        # the URL's day is the publisher's local one; a UTC time stamp may have moved it by a day
        md.date = in_url or _text_date(src) or block_date(blocks) or script_date(html)
    md.date_modified = normalize_date(
        _ld_str(main.get("dateModified")) or _ld_str(page.get("dateModified"))
    ) or normalize_date(_meta(src, "article:modified_time", "og:updated_time", "dcterms.modified", "datemodified", "last-modified"))
    publisher = _ld_names(ld, main.get("publisher")) if main.get("publisher") else []
    md.sitename = _first(
        _meta(src, "og:site_name", "application-name", "apple-mobile-web-app-title"),
        _ld_str((ld.site or {}).get("name")),
        publisher[0] if publisher else None,
    )
    md.title = _choose_title(src, main, page, md.sitename, url)
    md.description = _first(
        _ld_str(main.get("description")), _meta(src, "description", "og:description", "twitter:description", "dc.description")
    )
    md.language = _first(
        src.html_lang, _meta(src, "content-language", "og:locale", "dc.language", "language"), _ld_str(main.get("inLanguage"))
    )
    md.canonical_url = _absolute(_first(src.links.get("canonical"), _meta(src, "og:url")), url)
    md.categories = _unique(
        _ld_list(main.get("articleSection")) or src.meta_all.get("article:section", []) or src.rel_categories
    )
    md.tags = _unique(
        _ld_list(main.get("keywords"))
        or src.meta_all.get("article:tag", [])
        or _ld_list(src.meta.get("keywords") or src.meta.get("news_keywords"))
        or src.rel_tags
    )
    md.image = _absolute(
        _first(_ld_str(main.get("image")), _meta(src, "og:image", "og:image:url", "twitter:image", "twitter:image:src")), url
    )
    md.license = _first(
        _ld_str(main.get("license")),
        src.links.get("license"),
        _meta(src, "dcterms.license", "dc.rights"),
        src.cc_license if src.body_read else cc_license_link(html),
    )
    if md.license is not None and md.license.startswith(("/", "./")):
        md.license = _absolute(md.license, url)
    return md


def complete_from_main(metadata: PageMetadata, blocks: Sequence[Block], main: Sequence[bool]) -> None:
    """What only the labels tell: the main text's language (``language_detected``), and its first
    heading as the title of a page that states none. ``main``: one flag per block."""
    parts: list[str] = []
    size = 0
    for block, is_main in zip(blocks, main):
        if not is_main:
            continue
        if metadata.title is None and block.tag in ("h1", "h2") and block.text.strip():
            metadata.title = block.text.strip()
        if size < _DETECT_CHARS:
            parts.append(block.text)
            size += len(block.text)
        elif metadata.title is not None:
            break
    metadata.language_detected = detect_language(" ".join(parts))


_TITLE_SEPARATORS = re.compile(r"\s+[|\-–—·:»/]{1,2}\s+")


def _structured_date(src: _Sources, main: dict[str, Any], page: dict[str, Any]) -> str | None:
    published = _ld_str(main.get("datePublished")) or _ld_str(main.get("dateCreated")) or _ld_str(page.get("datePublished"))
    return normalize_date(published) or _meta_date(src) or _markup_date(src)


_CC_LINK = re.compile(r"""https?://creativecommons\.org/(?:licenses|publicdomain)/[^"'\s<>]+""")


def cc_license_link(html: str) -> str | None:
    """The first Creative Commons licence URL in the page source (a footer's CC mark), or ``None``."""
    if not html:
        return None
    at = html.find("creativecommons.org/")
    while at >= 0:
        match = _CC_LINK.match(html, max(0, html.rfind("http", max(0, at - 8), at)))
        if match:
            return match[0]
        at = html.find("creativecommons.org/", at + 20)
    return None


def _choose_title(src: _Sources, main: dict[str, Any], page: dict[str, Any], sitename: str | None, url: str | None) -> str | None:
    structured = _first(
        _ld_str(main.get("headline")) if main else None,
        _meta(src, "og:title", "twitter:title", "dc.title", "citation_title", "parsely-title", "sailthru.title"),
        src.itemprops.get("headline"),
        _ld_str(main.get("name")) if main else None,
    )
    h1 = _clean(src.h1)
    title = structured or _clean(src.title_tag)
    if not title or (h1 and src.sole_h1 and _norm(h1)):
        # a page's only <h1> is its headline as the reader sees it; og:title and <title> are often written
        # for search results ("Best X of 2026 | Top 10 Picks", a site's name after "•", Reddit's "The heart
        # of the internet"). Chosen on wcxb-dev's train and tune domains: titles right 0.738 -> 0.773 (0.762
        # with a JSON-LD headline kept before the <h1>).
        return h1
    if h1 and _norm(h1) and _norm(h1) != _norm(title):
        # "Headline | Site": the page's own <h1> is one of the parts
        parts = _TITLE_SEPARATORS.split(title)
        if len(parts) > 1 and any(_norm(p) == _norm(h1) for p in parts):
            return h1
    return _strip_site(title, sitename, url)


def _strip_site(title: str, sitename: str | None, url: str | None) -> str:
    """``title`` without a trailing (or leading) part naming the site: its ``sitename`` or domain."""
    parts = _TITLE_SEPARATORS.split(title)
    if len(parts) < 2:
        return title
    names = {_norm(sitename)} if sitename else set()
    host = (urlsplit(url).hostname or "") if url else ""
    labels = [label for label in host.split(".") if label not in ("www", "com", "org", "net", "co", "uk", "io")]
    names.update(_norm(label) for label in labels)
    squashed = {n.replace(" ", "") for n in names if n}

    def is_site(part: str) -> bool:
        key = _norm(part)
        flat = key.replace(" ", "")
        return bool(key) and (key in names or flat in squashed or any(flat and (flat in n or n in flat) for n in squashed if len(n) > 3))

    seps = _TITLE_SEPARATORS.findall(title)
    if is_site(parts[-1]):
        return title[: title.rfind(seps[-1])].strip()
    if is_site(parts[0]):
        return title[title.find(seps[0]) + len(seps[0]) :].strip()
    return title


def _choose_author(src: _Sources, ld: _JsonLd, main: dict[str, Any]) -> str | None:
    for candidates, several in (
        (_ld_names(ld, main.get("author")) if main else [], True),
        (_ld_names(ld, main.get("creator")) if main else [], True),
        (src.meta_all.get("author", []) or src.meta_all.get("article:author", []) or src.meta_all.get("citation_author", []), True),
        ([_meta(src, "dc.creator", "dcterms.creator", "parsely-author", "sailthru.author")], False),
        ([src.itemprops.get("author"), src.itemprops.get("creator")], False),
        (src.rel_authors, False),
        (src.hinted_texts(_AUTHOR_HINT, 160), False),
    ):
        names = [n for n in (_author_name(c) for c in candidates) if n]
        if names:
            return ", ".join(_unique(names)) if several else min(names[:3], key=len)
    return None


_NOT_A_NAME = re.compile(
    r"\d|@|https?:|\b(?:updated|published|posted|min read|editorial|staff writer)\b"
    r"|^(?:written by|view (?:all|more) posts|about the author|author|by)$",  # a byline's label on its own
    re.I,
)


def _author_name(value: str | None) -> str | None:
    value = _clean(value)
    if not value:
        return None
    value = _BYLINE_PREFIX.sub("", value).strip(" ,|·-–—:")
    if value[:2] == "By" and value[2:3].isupper():  # "ByAmy Roeder": the prefix without its space
        value = value[2:]
    if not value or len(value) > _MAX_AUTHOR_CHARS or len(value.split()) > 6 or _NOT_A_NAME.search(value):
        return None
    return value


def _meta_date(src: _Sources) -> str | None:
    for name in (
        "article:published_time", "og:article:published_time", "datepublished", "dc.date", "dcterms.date",
        "dc.date.issued", "dcterms.created", "dcterms.issued", "citation_publication_date", "citation_date",
        "date", "pubdate", "publish_date", "publish-date", "parsely-pub-date", "sailthru.date", "article.published",
        "published_time", "og:published_time", "release_date", "published", "article:published",
    ):  # fmt: skip
        found = normalize_date(src.meta.get(name))
        if found:
            return found
    return None


def _markup_date(src: _Sources) -> str | None:
    found = normalize_date(src.itemprops.get("datePublished"))
    if found:
        return found
    for stamp, node in src.times:
        if "pubdate" in node.attrs or node.attrs.get("itemprop") == "datePublished":
            found = normalize_date(stamp)
            if found:
                return found
    for stamp, _ in src.times:
        found = normalize_date(stamp)
        if found:
            return found
    return None


def _days_apart(a: str, b: str) -> int:
    return abs((date.fromisoformat(a[:10]) - date.fromisoformat(b[:10])).days)


_DIGIT = re.compile(r"\d")
_BYLINE_BLOCKS = 12  # blocks after the first <h1> that a byline's date or author is looked for in
_MAX_DATE_LINE = 100


def _byline_blocks(blocks: Sequence[Block]) -> Sequence[Block]:
    """The blocks where a byline sits: from three before the page's first ``<h1>`` to :data:`_BYLINE_BLOCKS`
    after it; the first blocks when the page has no ``<h1>``."""
    start = next((i for i, b in enumerate(blocks) if b.tag == "h1"), 0)
    return blocks[max(0, start - 3) : start + _BYLINE_BLOCKS]


def block_date(blocks: Sequence[Block]) -> str | None:
    """A date stated in a short block near the page's first ``<h1>`` (a byline's "Dec 12, 2025", "Last updated:
    November 13, 2025")."""
    for block in _byline_blocks(blocks):
        text = block.text
        if len(text) <= _MAX_DATE_LINE and _DIGIT.search(text):  # (the date patterns need a \d digit)
            found = normalize_date(_first_line_date(text))
            if found:
                return found
    return None


# A byline in the text: "By", "Written by", "Posted by", "Published by", German "Von", French "Par", Spanish "Por" …
_BYLINE_TEXT = re.compile(r"^\s*(?:(?:written|posted|published)\s+by|by|von|par|por)\s*:?\s+(.+)", re.I | re.S)
# … and the name after it, up to a separator, a date or time, or a word that follows a name in bylines ("on
# March 3", "in Science", "Updated", "View all posts", "Follow")
_BYLINE_NAME_END = re.compile(
    r"\s*(?:[|•·—–/]| - |\n|,?\s*\d|\b(?:on|in|updated|view|follow|am|le|el)\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d)",
    re.I,
)
# lower-case words a name may hold ("Ursula von der Leyen", "Ana de la Cruz", "Smith and Jones")
_NAME_PARTICLES = frozenset(
    {"de", "van", "von", "der", "den", "da", "di", "du", "la", "le", "del", "bin", "al", "and", "&", "y"}
)
_MAX_BYLINE_CHARS = 120
_MAX_NAME_WORDS = 5


def block_author(blocks: Sequence[Block]) -> str | None:
    """The author a byline block near the page's first ``<h1>`` names ("By Amy Wilhelm", "Posted by BeauHD on
    …"): at most :data:`_MAX_NAME_WORDS` words, the first and every one but a particle capitalised."""
    for block in _byline_blocks(blocks):
        text = block.text
        if len(text) > _MAX_BYLINE_CHARS:
            continue
        match = _BYLINE_TEXT.match(text)
        if match is None:
            continue
        name = _author_name(_BYLINE_NAME_END.split(match[1], 1)[0])
        if name is None:
            continue
        words = name.replace(",", " ").split()
        if len(words) <= _MAX_NAME_WORDS and words[0][0].isupper() and all(
            w[0].isupper() or w.lower() in _NAME_PARTICLES for w in words
        ):
            return name
    return None


def _first_line_date(text: str) -> str:
    if not text.isascii():
        text = text.translate(NON_ASCII_DIGITS)
    match = _TEXT_DATE.search(text) or _ISO_ANYWHERE.search(text)
    return match[0] if match else ""


def _text_date(src: _Sources) -> str | None:
    for text in src.hinted_texts(_DATE_HINT, 100):
        found = normalize_date(text) if len(text) < 60 else None
        if found:
            return found
    return None


# in order of trust
_SCRIPT_DATE_KEYS = (
    "datePublished", "publishedDate", "publishDate", "published_at", "publishedAt", "first_publication_date",
    "published_on", "publish_date", "pubDate", "date_published",
)  # fmt: skip
# what follows a key in script data (JSON, a JS object, escaped JSON in a string): an ISO date
_SCRIPT_DATE_VALUE = re.compile(r"""\\?["']?\s*:\s*\\?["']((?:19|20)\d\d-[01]\d-[0-3]\d[^"'\\]{0,30})""")


def _key_groups(
    keys: Sequence[str], needles: Sequence[str]
) -> tuple[tuple[str, tuple[tuple[int, str, int], ...]], ...]:
    """Each needle with the keys it is the first to be part of: (rank of the key in ``keys``, the key, where
    the needle starts in it)."""
    groups = []
    left = list(keys)
    for needle in needles:
        groups.append((needle, tuple((keys.index(k), k, k.index(needle)) for k in left if needle in k)))
        left = [k for k in left if needle not in k]
    if left:
        raise ValueError(f"no needle finds {left}")
    return tuple(groups)


# A str.find pass over a 250 kB page takes 0.06-0.13 ms whatever it finds, so the keys are found through
# substrings they share ("ublished" is in six): five passes instead of ten on a page without any.
_SCRIPT_DATE_NEEDLES = _key_groups(
    _SCRIPT_DATE_KEYS, ("ublished", "publishDate", "publish_date", "first_publication_date", "pubDate")
)


def script_date(html: str) -> str | None:
    """A publication date from the page's script data (``"datePublished":"2024-03-15…"`` and kin): the
    first one (in the page) of the most trusted key that has one. ``str.find`` locates the keys (a regex
    alternation over a 1 MB page takes tens of milliseconds)."""
    if not html:
        return None
    best_rank = len(_SCRIPT_DATE_KEYS)
    best = None
    for needle, keys in _SCRIPT_DATE_NEEDLES:
        at = html.find(needle)
        while at >= 0:
            for rank, key, offset in keys:
                start = at - offset
                if rank < best_rank and start >= 0 and html.startswith(key, start):
                    match = _SCRIPT_DATE_VALUE.match(html, start + len(key))
                    found = normalize_date(match[1]) if match else None
                    if found:
                        best_rank, best = rank, found
            at = html.find(needle, at + 1)
        if best_rank == 0:
            break
    return best


_URL_DATE = re.compile(r"/((?:19|20)\d\d)[/_-]?(0[1-9]|1[0-2])[/_-]?(0[1-9]|[12]\d|3[01])(?=[/_.+-]|$)")


def url_date(url: str | None) -> str | None:
    """A publication date written in the URL's path: ``/2024/03/15/``, ``/2024-03-15-slug``,
    ``/20240315/``; ``YYYY-MM-01`` is not invented from ``/2024/03/``."""
    if not url:
        return None
    path = urlsplit(url).path
    match = _URL_DATE.search(path)
    if match is None:
        return None
    return _valid_date(int(match[1]), int(match[2]), int(match[3]))


_ISO_PREFIX = re.compile(r"^\s*((?:19|20)\d\d)[-/.](\d{1,2})[-/.](\d{1,2})(?:[T\s]+(\d{1,2}):(\d\d)(?::(\d\d))?(?:\.\d+)?\s*(Z|[+-]\d\d:?\d\d)?)?")
_ISO_ANYWHERE = re.compile(r"\b(?:19|20)\d\d-[01]\d-[0-3]\d\b")
# Month names and their usual short forms in English, German, French, Spanish, Italian, Portuguese and Dutch
# (short forms that are English words, "set", "mag", "ago", are left out)
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        (
            "january jan januar janvier janv enero ene gennaio janeiro januari",
            "february feb februar février févr fevrier febrero febbraio fevereiro februari",
            "march mar märz mär maerz mars marzo março maart",
            "april apr avril avr abril aprile",
            "may mai mayo maggio maio mei",
            "june jun juni juin junio giugno junho",
            "july jul juli juillet juil julio luglio julho",
            "august aug août aout agosto augustus",
            "september sep sept septembre septiembre setiembre settembre setembro",
            "october oct oktober okt octobre octubre ottobre outubro",
            "november nov noviembre novembre novembro",
            "december dec dezember dez décembre decembre diciembre dic dicembre dezembro",
        )
    )
    for m in names.split()
}  # fmt: skip
# "12 February 2024", "12. Februar 2024", "12 de febrero de 2024", "February 12, 2024", "2024 Feb 12"; and the
# CJK "2024年2月12日" / "2024년 2월 12일" (groups 10–12; no word boundary: CJK text runs into the year)
_TEXT_DATE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th|\.)?\s+(?:de\s+)?([^\W\d_]{3,10})\.?,?\s+(?:de\s+)?((?:19|20)\d\d)"
    r"|([^\W\d_]{3,10})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d\d)"
    r"|((?:19|20)\d\d)\s+([^\W\d_]{3,10})\.?\s+(\d{1,2}))\b"
    r"|((?:19|20)\d\d)\s*[年년]\s*(\d{1,2})\s*[月월]\s*(\d{1,2})"
)


def normalize_date(value: str | None) -> str | None:
    """``value`` as ISO 8601 (``YYYY-MM-DD``, or with the time and offset when it has them), or ``None``
    when it is not a date: ISO forms, RFC 2822 (``Mon, 12 Feb 2024 10:00:00 GMT``), ``12 February 2024``
    and ``February 12, 2024`` (month names in seven languages: ``12. Februar 2024``, ``12 de febrero de 2024``),
    ``2024年2月12日``; digits of any script; years 1900–2099 only."""
    if not value or not isinstance(value, str):
        return None
    value = value.strip()
    if not value.isascii():
        value = value.translate(NON_ASCII_DIGITS)
    match = _ISO_PREFIX.match(value)
    if match:
        day = _valid_date(int(match[1]), int(match[2]), int(match[3]))
        if day is None or match[4] is None:
            return day
        hour, minute, second = int(match[4]), int(match[5]), int(match[6] or 0)
        if hour > 23 or minute > 59 or second > 59:
            return day
        zone = match[7]
        stamp = f"{day}T{hour:02d}:{minute:02d}:{second:02d}"
        if zone == "Z":
            return stamp + "+00:00"
        if zone:
            zone = zone.replace(":", "")
            return f"{stamp}{zone[:3]}:{zone[3:]}"
        return stamp
    if value.isdigit() and len(value) in (10, 13):  # a Unix timestamp (seconds or milliseconds)
        try:
            return datetime.fromtimestamp(int(value) / (1000 if len(value) == 13 else 1), tz=timezone.utc).date().isoformat()
        except (OverflowError, ValueError, OSError):
            return None
    if "," in value[:5]:
        try:
            return parsedate_to_datetime(value).isoformat()
        except (TypeError, ValueError, IndexError):
            pass
    match = _TEXT_DATE.search(value)
    if match:
        if match[10]:
            return _valid_date(int(match[10]), int(match[11]), int(match[12]))
        if match[1]:
            day, month, year = match[1], match[2], match[3]
        elif match[4]:
            month, day, year = match[4], match[5], match[6]
        else:
            year, month, day = match[7], match[8], match[9]
        number = _MONTHS.get(month.lower())
        if number:
            return _valid_date(int(year), number, int(day))
    return None


def _valid_date(year: int, month: int, day: int) -> str | None:
    if not 1900 <= year <= 2099:
        return None
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def _absolute(link: str | None, base: str | None) -> str | None:
    if not link:
        return None
    if base and not link.startswith(("http://", "https://")):
        try:
            return urljoin(base, link)
        except ValueError:
            return link
    return link


def _norm(value: str) -> str:
    return " ".join(re.findall(r"\w+", value.casefold()))


def _unique(values: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for value in values:
        value = _clean(value)
        if value and value.casefold() not in seen:
            seen.add(value.casefold())
            out.append(value)
    return out


# ── language detection ──────────────────────────────────────────────────────────────────────────────

_DETECT_CHARS = 300  # py3langid's cost grows with the text (a loop per byte); 300 characters decide it
_MIN_DETECT_CHARS = 40
# Most pages are told by their first 100 characters: when the best language's log-probability leads the
# next by _QUICK_LEAD, the rest is not read. On the main text of the 2,583 shared pages with a `lang` label,
# this reads 134 characters on average instead of 300, answers as 300 characters do on 99.9 % of them, and
# is right as often (99.07 % against 99.03 %; 100 characters alone: 97.99 %).
_QUICK_CHARS = 100
_QUICK_LEAD = 20.0
_identifier: Any = None


def load_language_model() -> bool:
    """Load py3langid's model now (0.4 s once per process); whether language detection is available."""
    global _identifier
    if _identifier is None:
        try:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier
        except ImportError:
            _identifier = False
        else:
            _identifier = _flat_tables(LanguageIdentifier.from_model_file(MODEL_FILE))
    return _identifier is not False


def _flat_tables(identifier: Any) -> Any:
    """``identifier`` with its automaton's row offsets and outputs in flat arrays (the same values).

    py3langid keeps them as lists of Python ints, so every byte it reads follows two pointers to int
    objects spread over a few MB; the extraction between two pages evicts them, and the cache misses
    were a quarter of a detection's time in the pipeline. An identifier of another py3langid version
    (without these lists) is used as it is."""
    for name in ("_rowbase", "tk_output"):
        table = getattr(identifier, name, None)
        if isinstance(table, list):
            setattr(identifier, name, array("q", table))
    return identifier


def detect_language(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language (py3langid, on its first 100 characters when they settle
    it, else its first 300), or ``None`` when py3langid is not installed or the text is too short to tell."""
    sample = text[:_DETECT_CHARS]
    if len(sample.strip()) < _MIN_DETECT_CHARS or not load_language_model():
        return None
    if len(sample) > _QUICK_CHARS and hasattr(_identifier, "_decide"):  # py3langid 0.4's raw scores
        scores = _identifier._decide(sample[:_QUICK_CHARS])
        best = int(scores.argmax())
        top = float(scores[best])
        scores[best] = -float("inf")
        if top - float(scores.max()) >= _QUICK_LEAD:
            return _identifier.nb_classes[best]
    return _identifier.classify(sample)[0]


# ── YAML front matter ───────────────────────────────────────────────────────────────────────────────

# Characters a YAML reader would take as a line break or refuse (C1 controls, BOM, line/paragraph
# separators): written as \u escapes inside the double-quoted scalar.
_YAML_UNSAFE = re.compile("[\u007f-\u009f\u2028\u2029\ufeff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _yaml_string(value: str) -> str:
    """``value`` as a YAML double-quoted scalar: JSON's escaping (quotes, backslashes, control characters,
    newlines) is YAML's, and the characters YAML reads differently are escaped too, so no value can end
    the scalar or the front matter block."""
    text = json.dumps(_SURROGATE.sub("\ufffd", value), ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def front_matter(metadata: PageMetadata) -> str:
    """The metadata as a YAML front matter block (``---`` … ``---`` and a blank line) for Markdown output:
    present fields only, every string double-quoted and escaped, lists in flow style."""
    lines = ["---"]
    for key, value in metadata.as_dict().items():
        if value is None or value == []:
            continue
        if isinstance(value, list):
            lines.append(f"{key}: [{', '.join(_yaml_string(v) for v in value)}]")
        else:
            lines.append(f"{key}: {_yaml_string(value)}")
    lines.append("---")
    return "\n".join(lines) + "\n\n"
