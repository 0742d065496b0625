"""What a page's source declares it to be: a product page, an article, and where it lives.

Found in the source, not the tree (the tree keeps no script text, and JSON-LD is script text): an Open Graph
``og:type``, a schema.org ``@type`` in JSON-LD, or a microdata ``itemtype``. Each check is a substring
search of a page already in memory, with bounded patterns (a pathological 930 KB page takes 14 ms).
"""

from __future__ import annotations

import re

__all__ = ["declared_address", "declared_kinds", "declares_article", "declares_product", "declares_thread"]

_OG_TYPE = re.compile(
    r"""<meta\b[^>]*?(?:property|name)\s*=\s*["']og:type["'][^>]*?content\s*=\s*["']\s*([\w:.]*)"""
    r"""|<meta\b[^>]*?content\s*=\s*["']\s*([\w:.]*)["'][^>]*?(?:property|name)\s*=\s*["']og:type["']""",
    re.IGNORECASE,
)
_META_SPAN = 1024  # characters either side of "og:type" (or "canonical", "og:url") that its tag may span
# the page's own address: <link rel="canonical" href="…"> or <meta property="og:url" content="…">, either order
_CANONICAL = re.compile(
    r"""<link\b[^>]*?rel\s*=\s*["']?canonical["']?[^>]*?href\s*=\s*["']\s*([^"'\s>]{1,2048})"""
    r"""|<link\b[^>]*?href\s*=\s*["']\s*([^"'\s>]{1,2048})["'][^>]*?rel\s*=\s*["']?canonical\b""",
    re.IGNORECASE,
)
_OG_URL = re.compile(
    r"""<meta\b[^>]*?(?:property|name)\s*=\s*["']og:url["'][^>]*?content\s*=\s*["']\s*([^"'\s>]{1,2048})"""
    r"""|<meta\b[^>]*?content\s*=\s*["']\s*([^"'\s>]{1,2048})["'][^>]*?(?:property|name)\s*=\s*["']og:url["']""",
    re.IGNORECASE,
)
# schema.org Product (or ProductGroup) as a JSON-LD "@type" (alone or in a list) or a microdata itemtype
_LD_PRODUCT = re.compile(r'"@type"\s{0,64}:\s{0,64}(?:\[[^\]]{0,256}?)?"(?:https?://schema\.org/)?Product(?:Group)?"')
_MICRODATA_PRODUCT = re.compile(r'schema\.org/Product(?:Group)?["\'\s]')
# schema.org Article and its kinds (NewsArticle, ReportageNewsArticle, TechArticle, ScholarlyArticle …) and blog
# posts; not DiscussionForumPosting, a thread's post
_LD_ARTICLE = re.compile(
    r'"@type"\s{0,64}:\s{0,64}(?:\[[^\]]{0,256}?)?"'
    r'(?:https?://schema\.org/)?(?:[A-Za-z]{0,32}Article|(?:Live)?BlogPosting)"'
)
_MICRODATA_ARTICLE = re.compile(r'schema\.org/(?:[A-Za-z]{0,32}Article|(?:Live)?BlogPosting)["\'\s]')

# a forum topic or a Q&A page: schema.org DiscussionForumPosting or QAPage, as a JSON-LD "@type" or a microdata
# itemtype (not Question: an article's FAQ block is made of them)
_THREAD = re.compile(
    r'"@type"\s{0,64}:\s{0,64}(?:\[[^\]]{0,256}?)?"(?:https?://schema\.org/)?(?:DiscussionForumPosting|QAPage)"'
    r"|schema\.org/(?:DiscussionForumPosting|QAPage)[\"'\s]"
)


def _tag_value(html: str, marker: str, pattern: re.Pattern[str]) -> str | None:
    """The value ``pattern`` (two alternatives, one group each) reads from the tag around the first ``marker``."""
    at = html.find(marker)
    if at < 0:
        return None
    match = pattern.search(html, max(0, at - _META_SPAN), at + _META_SPAN)
    return (match.group(1) or match.group(2)) if match else None


def _og_type(html: str) -> str:
    """The page's ``og:type``, lower case ("" when it has none)."""
    return (_tag_value(html, "og:type", _OG_TYPE) or "").lower()


def _product(html: str, kind: str) -> bool:
    if kind.startswith("article"):
        return False
    if "product" in kind:
        return True
    if '"Product' in html and _LD_PRODUCT.search(html):
        return True
    return "schema.org/Product" in html and _MICRODATA_PRODUCT.search(html) is not None


def _article(html: str, kind: str) -> bool:
    if kind.startswith("article"):
        return True
    if "product" in kind:
        return False
    if ('Article"' in html or 'Posting"' in html) and _LD_ARTICLE.search(html):
        return True
    return "schema.org/" in html and _MICRODATA_ARTICLE.search(html) is not None


def declares_product(html: str) -> bool:
    """Whether the page declares itself a product page: a schema.org ``Product`` or ``ProductGroup`` (JSON-LD or
    microdata) or an ``og:type`` of ``product`` (``product.item``, ``og:product``). An ``og:type`` of
    ``article`` wins over a ``Product`` in its structured data: a buying guide marks up what it reviews."""
    return _product(html, _og_type(html))


def declares_article(html: str) -> bool:
    """Whether the page declares itself an article (a news story, a blog post): an ``og:type`` of
    ``article``, or else a schema.org ``Article`` of any kind or a ``BlogPosting`` (JSON-LD or microdata). An
    ``og:type`` of ``product`` wins over an article in its structured data."""
    return _article(html, _og_type(html))


def declares_thread(html: str) -> bool:
    """Whether the page declares itself a thread (a forum topic, a Q&A page): a schema.org
    ``DiscussionForumPosting`` or ``QAPage`` in JSON-LD or microdata. Its replies are its content."""
    return ("ForumPosting" in html or "QAPage" in html) and _THREAD.search(html) is not None


def declared_kinds(html: str) -> tuple[bool, bool]:
    """``(declares_product(html), declares_article(html))``, reading the page's ``og:type`` once."""
    kind = _og_type(html)
    return _product(html, kind), _article(html, kind)


def declared_address(html: str) -> str | None:
    """The address the page gives itself: its ``<link rel="canonical">``, else its ``og:url`` (None when it
    gives none)."""
    return _tag_value(html, "canonical", _CANONICAL) or _tag_value(html, "og:url", _OG_URL)
