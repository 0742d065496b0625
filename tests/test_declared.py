"""What a page's source declares it to be (runtime/html/declared.py): a product page, an article."""

from __future__ import annotations

import pytest

from extract_trt.runtime.html.declared import declared_address, declared_kinds, declares_article, declares_product


def _page(head: str) -> str:
    return f"<html><head>{head}</head><body><p>text</p></body></html>"


@pytest.mark.parametrize(
    ("source", "product"),
    [
        ('<meta property="og:type" content="product">', True),
        ('<meta name="og:type" content="product.item" />', True),
        ('<script type="application/ld+json">{"@type": ["Thing", "Product"], "name": "x"}</script>', True),
        ('<script type="application/ld+json">{"@type":"ProductGroup"}</script>', True),
        ('<div itemscope itemtype="https://schema.org/Product">', True),
        ('<meta property="og:type" content="article"><script>{"@type": "Product"}</script>', False),
        ('<div itemtype="https://schema.org/ProductModel">', False),
        ("<p>Our \"Product\" of the year: schema.org/Products we like</p>", False),
        ('<meta property="og:type" content="website">', False),
    ],
)
def test_a_page_declares_a_product(source: str, product: bool) -> None:
    assert declares_product(_page(source)) is product
    assert declared_kinds(_page(source))[0] is product


@pytest.mark.parametrize(
    ("source", "article"),
    [
        ('<meta property="og:type" content="article" />', True),
        ('<meta content="Article" name="og:type">', True),
        ('<script type="application/ld+json">{"@type": "NewsArticle", "headline": "x"}</script>', True),
        ('<script type="application/ld+json">{"@type":["WebPage","ReportageNewsArticle"]}</script>', True),
        ('<script type="application/ld+json">{"@type": "http://schema.org/BlogPosting"}</script>', True),
        ('<article itemscope itemtype="http://schema.org/TechArticle">', True),
        # a product page that also marks up a blog post about it is a product page
        ('<meta property="og:type" content="product"><script>{"@type": "BlogPosting"}</script>', False),
        # a thread's post, a forum, a web page or a mere mention is not an article
        ('<script type="application/ld+json">{"@type": "DiscussionForumPosting"}</script>', False),
        ('<meta property="og:type" content="website"><script>{"@type": "WebPage"}</script>', False),
        ("<p>The \"Article\" 5 of the treaty: schema.org/Articles</p>", False),
    ],
)
def test_a_page_declares_an_article(source: str, article: bool) -> None:
    assert declares_article(_page(source)) is article
    assert declared_kinds(_page(source))[1] is article


@pytest.mark.parametrize(
    ("source", "address"),
    [
        ('<link rel="canonical" href="https://example.com/a">', "https://example.com/a"),
        ("<link href='/b' rel=canonical>", "/b"),
        ('<meta property="og:url" content="https://example.com/c" />', "https://example.com/c"),
        ('<meta content="https://example.com/d" property="og:url">', "https://example.com/d"),
        ('<link rel="canonical" href="https://example.com/e"><meta property="og:url" content="https://x.org/">',
         "https://example.com/e"),
        ("<p>the canonical answer</p>", None),
    ],
)  # fmt: skip
def test_the_address_a_page_declares(source: str, address: str | None) -> None:
    assert declared_address(_page(source)) == address
