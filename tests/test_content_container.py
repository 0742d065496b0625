"""The page's content container (runtime/html/content_container.py): what the labeler kept after it goes."""

from __future__ import annotations

import numpy as np
from hostile_pages import ARTICLE, AllMain

from extract_trt import Extractor
from extract_trt.runtime.html.content_container import after_content_mask, content_container
from extract_trt.runtime.html.simplify import simplify

EXTRACTOR = Extractor(labeler=AllMain(), output="text")
RELATED = "<div class='more'><h3>More from the valley</h3><p>Bakery on Main Street closes after sixty years.</p></div>"


def _page(body: str) -> str:
    return f"<html><head><title>t</title></head><body>{body}</body></html>"


def test_what_follows_the_content_container_goes_and_what_precedes_it_stays() -> None:
    header = "<header><h1>The valley returns</h1><p>By Ann Lee</p></header>"
    html = _page(f"{header}<article>{ARTICLE * 5}</article>{RELATED}")
    text = EXTRACTOR.extract(html).text
    assert text.startswith("The valley returns") and "By Ann Lee" in text  # the title and byline above the body
    assert text.count("river restoration") == 5
    assert "Bakery" not in text and "More from the valley" not in text


def test_content_in_two_containers_side_by_side_all_stays() -> None:
    # neither column holds 85 % of the text: the container is their parent, and nothing lies after it
    html = _page(f"<div class='a'>{ARTICLE * 3}</div><div class='b'>{ARTICLE * 2}</div>{RELATED}")
    page = simplify(html)
    main = np.ones(len(page.blocks), dtype=bool)
    assert content_container(page, main).tag == "body"
    assert not after_content_mask(page, main).any()
    text = EXTRACTOR.extract(html).text
    assert text.count("river restoration") == 5 and "Bakery" in text


def test_a_declared_thread_keeps_the_replies_after_a_long_first_post() -> None:
    replies = "".join(f"<div class='reply'><p>Reply {n}: thanks, the same fix worked here.</p></div>" for n in range(3))
    body = f"<div class='thread'><div class='post first'>{ARTICLE * 8}</div>{replies}</div>"
    undeclared = EXTRACTOR.extract(_page(body)).text
    assert "Reply 1" not in undeclared  # the first post holds 85 % of the text: it is the container
    kind = '{"@context": "https://schema.org", "@type": "DiscussionForumPosting"}'
    page = _page(body).replace("</head>", f'<script type="application/ld+json">{kind}</script></head>')
    assert EXTRACTOR.extract(page).text.count("Reply") == 3


def test_a_page_without_main_text_has_no_container() -> None:
    page = simplify(_page(f"<article>{ARTICLE}</article>{RELATED}"))
    none = np.zeros(len(page.blocks), dtype=bool)
    assert content_container(page, none) is None
    assert not after_content_mask(page, none).any()


def test_reader_comments_after_the_article_still_come_out_as_comments() -> None:
    comments = (
        "<div id='comments'><ol class='commentlist'><li class='comment'><p>Great news for the birds, finally "
        "somebody listened to the people who live along the river.</p></li></ol></div>"
    )
    result = Extractor(labeler=AllMain(), output="text", comments=True).extract(
        _page(f"<article>{ARTICLE * 5}</article>{comments}{RELATED}")
    )
    assert result.text.count("river restoration") == 5 and "Bakery" not in result.text
    assert "Great news for the birds" in result.comments.text


def test_deep_nesting_costs_one_walk_per_element() -> None:
    # 3,000 nested divs above the article: each element is walked once (no walk per block and level)
    html = _page("<div>" * 3000 + f"<article>{ARTICLE * 200}</article>" + "</div>" * 3000 + RELATED)
    page = simplify(html)
    main = np.ones(len(page.blocks), dtype=bool)
    after = after_content_mask(page, main)
    assert content_container(page, main).tag == "article"
    assert [page.blocks[i].text for i in np.flatnonzero(after)] == [
        "More from the valley", "Bakery on Main Street closes after sixty years."
    ]  # fmt: skip


def test_blocks_whose_elements_share_no_root_give_no_container() -> None:
    page = simplify(_page(f"<div class='a'>{ARTICLE * 2}</div><div class='b'>{ARTICLE * 2}</div>"))
    main = np.ones(len(page.blocks), dtype=bool)
    second = page.page_map.id_nodes[page.blocks[-1].item_id]
    while second.attrs.get("class") != "b":
        second = second.parent
    second.parent = None  # half of the text in a tree of its own: no element holds 85 % of it
    assert content_container(page, main) is None
    assert not after_content_mask(page, main).any()
