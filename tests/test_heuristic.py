"""HeuristicLabeler: synthetic pages built from Block objects, plus one real-page check against label-all."""

from __future__ import annotations

import collections
import gzip
import json
import re
from pathlib import Path

import numpy as np
import pytest

from extract_trt.runtime.labelers import Labeler, default_labeler
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler, block_scores
from extract_trt.runtime.types import Block, Labels, PageBlocks

WCXB = Path("/work/shared/data/wcxb-dev.jsonl.gz")

PROSE = [
    "The city council approved the new transit plan on Tuesday, after months of debate about costs, routes and "
    "the impact on neighbourhoods along the proposed light-rail corridor.",
    "Supporters argue that the line will cut commuting times by a third. Critics, however, warn that the budget "
    "leaves little room for delays, and that similar projects elsewhere ran far over their estimates.",
    "Construction is expected to start next spring. The first stations, near the university and the central "
    "market, should open within four years if the federal grant arrives on time.",
    "Residents can comment on the final station designs at public meetings next month; the council says the "
    "feedback will shape entrances, bicycle parking and the landscaping around each stop.",
]


class PageBuilder:
    """Builds a PageBlocks with consecutive item ids."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(
        self,
        tag: str,
        text: str,
        *,
        path: str,
        classes: str = "",
        element_id: str = "",
        links: int = 0,
        content_type: str = "block_element",
    ) -> int:
        item_id = len(self.blocks) + 1
        tag_path = f"{path}>{tag}"
        self.blocks.append(
            Block(
                item_id=item_id,
                html=f'<{tag} _item_id="{item_id}">{text}</{tag}>',
                text=text,
                tag=tag,
                classes=classes,
                element_id=element_id,
                depth=tag_path.count(">"),
                tag_path=tag_path,
                link_text_length=links,
                content_type=content_type,
            )
        )
        return len(self.blocks) - 1

    def page(self) -> PageBlocks:
        return PageBlocks(simplified_html="", blocks=self.blocks, page_map=None)  # type: ignore[arg-type]


def linked(text: str) -> dict:
    return {"links": len(text)}


def news_page() -> tuple[PageBlocks, dict[str, list[int]]]:
    """An article with a nav menu, a heading, an image, related links, comments and a footer."""
    b = PageBuilder()
    roles: dict[str, list[int]] = collections.defaultdict(list)
    body = "html>body"
    art = "html>body>div>main>article"
    nav_text = "Home News Sport Weather Contact"
    roles["nav"].append(b.add("ul", nav_text, path=f"{body}>header", classes="main-menu", **linked(nav_text)))
    roles["nav"].append(b.add("a", "Log in", path=f"{body}>header>div", classes="login-link", **linked("Log in")))
    roles["nav"].append(b.add("ol", "Home...Transit", path=f"{body}>div", classes="breadcrumb", links=12))
    roles["heading"].append(b.add("h1", "Council approves transit plan", path=art))
    roles["meta"].append(b.add("div", "By Jane Doe, 12 May 2024", path=art, classes="byline"))
    roles["main"].append(b.add("p", PROSE[0], path=art))
    roles["main"].append(b.add("p", PROSE[1], path=art))
    roles["short"].append(b.add("p", "Here is the map of the route:", path=art))
    roles["image"].append(b.add("figure", "", path=art, classes="wp-block-image"))
    roles["heading"].append(b.add("h2", "What happens next", path=art))
    roles["main"].append(b.add("p", PROSE[2], path=art))
    roles["main"].append(b.add("p", PROSE[3], path=art))
    share = "Share on Facebook Twitter Email"
    roles["share"].append(b.add("div", share, path=art, classes="social-share", links=len(share) - 9))
    related = "Related: Bus fares rise again | New bike lanes downtown | Airport shuttle returns"
    roles["related"].append(b.add("ul", related, path=f"{body}>div>aside", classes="related-posts", links=70))
    roles["comments"].append(b.add("h3", "3 Comments", path=f"{body}>div>section", element_id="comments"))
    roles["comments"].append(
        b.add("div", "Great news, finally!", path=f"{body}>div>section>ol>li>article", classes="comment-content")
    )
    reply = b.add("a", "Reply", path=f"{body}>div>section>ol>li", classes="comment-reply-link", links=5)
    roles["comments"].append(reply)
    roles["footer"].append(
        b.add("p", "© 2024 Example Media Ltd. All rights reserved.", path=f"{body}>footer", classes="copyright")
    )
    foot_links = "Privacy Terms Cookies Advertise"
    roles["footer"].append(b.add("ul", foot_links, path=f"{body}>footer", classes="footer-links", **linked(foot_links)))
    return b.page(), roles


def label_one(page: PageBlocks) -> Labels:
    (labels,) = HeuristicLabeler().label([page])
    return labels


# --- synthetic pages --------------------------------------------------------------------------------------


def test_news_page_main_and_boilerplate() -> None:
    page, roles = news_page()
    labels = label_one(page)
    main = labels.main
    assert main.dtype == bool and main.shape == (len(page),)
    for i in roles["main"]:
        assert main[i], page.blocks[i].text
    for role in ("nav", "footer", "comments", "related", "share"):
        for i in roles[role]:
            assert not main[i], (role, page.blocks[i].text)


def test_headings_and_short_blocks_between_main_text_are_main() -> None:
    page, roles = news_page()
    main = label_one(page).main
    for role in ("heading", "short", "image"):
        for i in roles[role]:
            assert main[i], (role, page.blocks[i].text)


def test_labels_fields() -> None:
    page, _ = news_page()
    labels = label_one(page)
    assert labels.labeler == "heuristic"
    assert labels.fallback is False
    prob = labels.probability
    assert prob is not None and prob.dtype == np.float32 and prob.shape == (len(page),)
    assert np.all((prob >= 0) & (prob <= 1))
    assert np.array_equal(prob > 0.5, labels.main)
    assert set(labels.as_dict(page).values()) == {"main", "other"}


def test_empty_page() -> None:
    (labels,) = HeuristicLabeler().label([PageBuilder().page()])
    assert labels.main.shape == (0,) and labels.main.dtype == bool
    assert labels.probability is not None and labels.probability.shape == (0,)
    assert labels.probability.dtype == np.float32
    assert block_scores([]).shape == (0,)


def test_no_pages() -> None:
    assert HeuristicLabeler().label([]) == []


def test_batch_keeps_page_order_and_lengths() -> None:
    news, _ = news_page()
    single = PageBuilder()
    single.add("p", PROSE[0], path="html>body>div")
    pages = [news, PageBuilder().page(), single.page()]
    labels = HeuristicLabeler().label(pages)
    assert [len(x.main) for x in labels] == [len(p) for p in pages]
    assert labels[2].main.tolist() == [True]


def test_page_without_good_text_keeps_best_block() -> None:
    b = PageBuilder()
    b.add("h1", "Opening hours", path="html>body>div")
    b.add("p", "Mon–Fri 9–17", path="html>body>div")
    menu = "Home Shop Cart"
    b.add("ul", menu, path="html>body>nav", classes="menu", **linked(menu))
    main = label_one(b.page()).main
    assert main.any()
    assert not main[2]


def test_all_boilerplate_page_is_all_other() -> None:
    b = PageBuilder()
    for text in ("Home", "About", "Contact"):
        b.add("a", text, path="html>body>header>div", classes="nav-link", **linked(text))
    b.add("p", "© 2024 Someone", path="html>body>footer", classes="copyright")
    assert not label_one(b.page()).main.any()


def test_link_density_menu_vs_linked_teaser() -> None:
    b = PageBuilder()
    menu = "Products Pricing Docs Blog"
    b.add("div", menu, path="html>body>div", **linked(menu))
    teaser = (
        "A long teaser that links to the full story about the transit plan, the budget, the critics and what "
        "happens next for the city and its residents."
    )
    b.add("p", teaser, path="html>body>div>section>article", **linked(teaser))
    scores = block_scores(b.page().blocks)
    assert scores[1] > scores[0]


def test_boilerplate_tokens_are_whole_words() -> None:
    b = PageBuilder()
    b.add("p", PROSE[0], path="html>body>div", classes="adventure-story")  # "ad" inside a word: no penalty
    b.add("p", PROSE[0], path="html>body>div", classes="ad-slot")
    b.add("p", PROSE[0], path="html>body>div", element_id="sidebarWidget")  # camelCase split
    scores = block_scores(b.page().blocks)
    assert scores[0] > scores[1]
    assert scores[0] > scores[2]


def test_cjk_text_counts_as_words() -> None:
    b = PageBuilder()
    b.add("ul", "首页 新闻 体育", path="html>body>div", classes="nav", links=8)
    b.add(
        "p",
        "北京是中华人民共和国的首都，是全国的政治中心、文化中心。北京历史悠久，有三千多年的建城史。"
        "这里有很多名胜古迹，例如故宫和长城，每年都吸引大量游客前来参观。",
        path="html>body>div>article",
    )
    main = label_one(b.page()).main
    assert main.tolist() == [False, True]


def test_is_a_labeler_and_the_default() -> None:
    labeler = HeuristicLabeler()
    assert isinstance(labeler, Labeler)
    assert labeler.name == "heuristic"
    assert not isinstance(default_labeler(), HeuristicLabeler)  # the shipped block model is


# --- real pages -------------------------------------------------------------------------------------------


def _bag(text: str) -> collections.Counter:
    return collections.Counter(re.findall(r"\w+", text.lower()))


def _word_f1(pred: str, truth: str) -> float:
    p, t = _bag(pred), _bag(truth)
    overlap = sum((p & t).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(p.values()), overlap / sum(t.values())
    return 2 * precision * recall / (precision + recall)


@pytest.mark.skipif(not WCXB.exists(), reason="shared WCXB data not available")
def test_beats_label_all_on_wcxb_pages() -> None:
    simplify_module = pytest.importorskip("extract_trt.runtime.html.simplify")
    pages, truths = [], []
    with gzip.open(WCXB, "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if not rec["groundtruth"].strip():
                continue
            pages.append(simplify_module.simplify(rec["html"]))
            truths.append(rec["groundtruth"])
            if len(pages) == 30:
                break
    labels = HeuristicLabeler().label(pages)
    ours, everything = [], []
    for page, page_labels, truth in zip(pages, labels, truths):
        assert len(page_labels.main) == len(page)
        ours.append(_word_f1("\n".join(b.text for b, m in zip(page.blocks, page_labels.main) if m), truth))
        everything.append(_word_f1("\n".join(b.text for b in page.blocks), truth))
    assert np.mean(ours) > np.mean(everything) + 0.02, (np.mean(ours), np.mean(everything))
