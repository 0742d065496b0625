"""Teaser lists beside an article's body (runtime/html/teasers.py), through the extractor."""

from __future__ import annotations

from hostile_pages import AllMain

from extract_trt import Extractor

OG_ARTICLE = '<meta property="og:type" content="article">'
PARAGRAPH = (
    "<p>The council voted on Tuesday to restore the old river meadows, a plan that took eleven years of "
    "surveys, public meetings and two lawsuits before the first wetland could be dug out again.</p>"
)
BODY = PARAGRAPH * 14  # about 2,600 characters: an article's worth


def _card(n: int) -> str:
    return (
        f'<div class="card"><h3 class="card-title"><a href="/story-{n}">Another story worth reading, number {n}</a>'
        f'</h3><p>A summary of story {n} that the labeler could take for a paragraph of the article.</p>'
        f'<span class="date">May {n}</span></div>'
    )


RAIL = '<h2>Recommended for you</h2><div class="rail">' + "".join(_card(n) for n in range(1, 6)) + "</div>"


def _page(body: str, head: str = OG_ARTICLE) -> str:
    return f"<html><head><title>t</title>{head}</head><body><article>{body}</article>{RAIL}</body></html>"


EXTRACTOR = Extractor(labeler=AllMain(), output="text")


def test_the_teaser_list_beside_an_article_goes() -> None:
    text = EXTRACTOR.extract(_page(BODY)).text
    assert text.count("river meadows") == 14
    assert "A summary of story" not in text and "Another story worth reading" not in text
    assert "Recommended for you" not in text  # the list's title goes with it


def test_cards_stay_where_the_page_is_not_an_article_or_has_no_body_of_its_own() -> None:
    for page in (_page(BODY, head=""), _page(BODY, head='<meta property="og:type" content="website">'),
                 _page(PARAGRAPH * 3)):  # fmt: skip
        text = EXTRACTOR.extract(page).text
        assert text.count("A summary of story") == 5 and "Recommended for you" in text


def _part(n: int) -> str:
    return f"Part {n} of the restoration story"


def test_an_article_whose_headings_are_links_keeps_its_sections() -> None:
    # linked section headings, each in a section of its own, with the article's paragraphs inside them
    sections = "".join(
        f'<section><h3 class="s"><a href="#part-{n}">{_part(n)}</a></h3>{PARAGRAPH * 4}</section>' for n in range(1, 5)
    )
    text = EXTRACTOR.extract(_page(sections)).text
    assert text.count("Part ") == 4 and text.count("river meadows") == 16
    assert "A summary of story" not in text  # and the teasers beside them still go
    # the same headings with the paragraphs between the cards, not inside them: the article, not a list
    interleaved = "".join(
        f'<div class="h"><h3 class="s"><a href="#part-{n}">{_part(n)}</a></h3></div>{PARAGRAPH * 4}'
        for n in range(1, 5)
    )
    text = EXTRACTOR.extract(_page(interleaved)).text
    assert text.count("Part ") == 4 and text.count("river meadows") == 16


def _linked_rail(href: str) -> str:
    return RAIL.replace('href="/story-', f'href="{href}')


def test_cards_whose_headlines_link_out_of_the_site_are_the_content() -> None:
    # a listicle's items link to a shop or a video channel, an accordion's titles to anchors on the page
    for href in ("https://shop.example.net/item-", "#section-"):
        page = _page(BODY).replace(RAIL, _linked_rail(href))
        assert EXTRACTOR.extract(page).text.count("A summary of story") == 5
    # absolute links into the page's own site are teasers: the site from the record's URL, or the page's
    # canonical address when the record has none
    same_site = _page(BODY).replace(RAIL, _linked_rail("https://www.news.example.com/2024/story-"))
    assert "A summary of story" not in EXTRACTOR.extract(same_site, url="https://news.example.com/a").text
    assert EXTRACTOR.extract(same_site).text.count("A summary of story") == 5  # no address: cannot tell
    canonical = same_site.replace("<head>", '<head><link rel="canonical" href="https://example.com/a">')
    assert "A summary of story" not in EXTRACTOR.extract(canonical).text
