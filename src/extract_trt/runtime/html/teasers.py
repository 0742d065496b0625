"""Teaser lists on an article page: cards of linked headlines outside the article's body.

Under or beside a news story or a blog post sits a list of cards pointing to other pages ("Recommended for
you", "Related", "Latest", a course or product rail): each card a linked headline, often a summary, a
byline or a date. The labeler sees each summary as a sentence or two of prose and often keeps it; the
ground truths here leave such lists out of an article (a service page calling itself one may keep them).
The same cards *are* the content of a listing page or a blog's front page, so the lists are found from
markup and layout, and dropped only where the page declares itself an article
(:func:`~extract_trt.runtime.html.declared.declares_article`) and has an article's body of its own beside
them:

- a **card** is an element holding a *linked headline* — a heading (``h1``–``h6``) of at least
  :data:`MIN_HEADLINE_CHARS` characters, at least :data:`MIN_LINKED_SHARE` of them link text — and the
  blocks after it inside that element;
- a **list** is :data:`MIN_CARDS` or more headlines of one kind (tag, classes and depth), each in a card of its
  own under one common ancestor (within the six ancestors a block records), the cards short: at most
  :data:`MAX_CARD_CHARS` characters besides the headline on average and :data:`MAX_CARD_BLOCKS` blocks each (a
  teaser is a line or two; an article's sections with linked headings, each in an element of its own, are
  longer);
- the list's headlines point into the site: more than half of them link to a relative address (not an anchor
  on the page) or to the page's own site (its address, or the one it declares; the last two labels of the
  host, three under a two-letter country domain with a short second label: ``bbc.co.uk``). A listicle's items
  link out (a video channel, a shop), an accordion's titles to anchors on the page: those are the content;
- a list is a **teaser list** when the page's main text outside every list (its body) holds at least
  :data:`MIN_BODY_CHARS` characters (of the blocks' text as the simplifier cuts it, 500 a block), and main
  text between the list's cards, outside them, is at most :data:`MAX_INTERLEAVED_SHARE` of the cards' own:
  an article whose section headings are links keeps its paragraphs between them and is not a list.

The heading that titles a teaser list ("Recommended for you"), the last main block before its first card, goes
with it. Called after the labeler and the comment sections, like them on the labels: the labels say what the
page's main text is, the markup says where the cards are.
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import urlsplit

import numpy as np

from extract_trt.runtime.html.dom import iter_tree
from extract_trt.runtime.types import HEADING_TAGS, Block, PageBlocks

__all__ = ["teaser_mask"]

MIN_HEADLINE_CHARS = 12  # shorter linked headings are menus and tabs ("News", "Sport"), not headlines
MIN_LINKED_SHARE = 0.8
MIN_CARDS = 3
# An article's worth of body text (about 300 English words). Chosen on the tune pages: a blog's front page
# that declares itself an article kept 1,635 characters outside its card lists, the articles with teaser
# lists 4,300-21,000.
MIN_BODY_CHARS = 2000
MAX_INTERLEAVED_SHARE = 0.1
# On the tune pages the cards of teaser lists held 16-310 characters besides the headline on average; lists
# of longer cards were the content (a blog's posts, a documentation page's sections, a listing's entries, a
# listicle's linked titles over a paragraph each: 430-500 characters).
MAX_CARD_CHARS = 400
MAX_CARD_BLOCKS = 12  # and at most this many blocks besides the headline (the tune pages' teasers: 1-4)


def _is_headline(block: Block) -> bool:
    chars = len(block.text.strip())
    return (
        block.tag in HEADING_TAGS and chars >= MIN_HEADLINE_CHARS and block.link_text_length >= MIN_LINKED_SHARE * chars
    )


def _cards(blocks: list[Block], headlines: list[int]) -> list[list[int]] | None:
    """The blocks of each headline's card, or None when the headlines do not each sit in a card of their own
    under one common ancestor, or the cards are too long for teasers."""
    shared = set(blocks[headlines[0]].containers)
    for i in headlines[1:]:
        shared.intersection_update(blocks[i].containers)
    if not shared:
        return None
    cards, outers = [], set()
    for k, i in enumerate(headlines):
        own = []
        for container in blocks[i].containers:
            if container in shared:
                break
            own.append(container)
        if not own or own[-1] in outers:  # right under the common ancestor, or in another headline's card
            return None
        outers.add(own[-1])
        card = [i]
        stop = headlines[k + 1] if k + 1 < len(headlines) else len(blocks)
        for j in range(i + 1, stop):
            if own[-1] not in blocks[j].containers:
                break
            if len(card) > MAX_CARD_BLOCKS:  # bounds the scan, too: each block is looked at once per kind
                return None
            card.append(j)
        cards.append(card)
    besides = sum(len(blocks[j].text) for card in cards for j in card[1:])
    return cards if besides <= MAX_CARD_CHARS * len(cards) else None


def _site(host: str | None) -> str | None:
    """The part of a host name that names the site: ``news.example.com`` → ``example.com``, ``www.bbc.co.uk``
    → ``bbc.co.uk``."""
    if not host:
        return None
    labels = host.lower().rstrip(".").split(".")
    keep = 3 if len(labels) >= 3 and len(labels[-1]) == 2 and len(labels[-2]) <= 3 else 2
    return ".".join(labels[-keep:])


def _href(page: PageBlocks, block: Block) -> str:
    """The address of the first link in ``block``'s element ("" when it has none)."""
    node = page.page_map.id_nodes.get(block.item_id)
    if node is None:
        return ""
    for element in iter_tree(node):
        if element.tag == "a" and element.attrs.get("href"):
            return element.attrs["href"].strip()
    return ""


def _into_site(href: str, site: str | None) -> bool:
    try:
        parts = urlsplit(href)
        host = parts.hostname
    except ValueError:  # a malformed address ("http://[::1")
        return False
    if parts.scheme not in ("", "http", "https"):
        return False
    if not parts.netloc:
        return bool(parts.path)  # relative; an anchor on the page ("#part-2") has none
    return site is not None and _site(host) == site


def teaser_mask(page: PageBlocks, main: np.ndarray, address: str | None = None) -> np.ndarray:
    """Per block, whether it is a main block of a teaser list (see the module docstring) or the heading that
    titles one. ``address``: the page's URL or the one it declares (None: only relative links count as the
    site's). Only meaningful on a page that declares itself an article; the caller decides that."""
    blocks = page.blocks
    drop = np.zeros(len(blocks), dtype=bool)
    kinds: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    for i, block in enumerate(blocks):
        if _is_headline(block):
            kinds[(block.tag, block.classes, block.depth)].append(i)
    lists = []
    for headlines in kinds.values():
        if len(headlines) >= MIN_CARDS:
            cards = _cards(blocks, headlines)
            if cards is not None:
                lists.append(cards)
    if not lists:
        return drop
    try:
        site = _site(urlsplit(address).hostname) if address else None
    except ValueError:  # a malformed address
        site = None
    chars = np.fromiter((len(b.text) for b in blocks), dtype=np.int64, count=len(blocks))
    in_lists = np.zeros(len(blocks), dtype=bool)
    for cards in lists:
        for card in cards:
            in_lists[card] = True
    if chars[main & ~in_lists].sum() < MIN_BODY_CHARS:
        return drop
    for cards in lists:
        inward = sum(_into_site(_href(page, blocks[card[0]]), site) for card in cards)
        if 2 * inward <= len(cards):
            continue
        in_cards = np.zeros(len(blocks), dtype=bool)
        for card in cards:
            in_cards[card] = True
        own = int(chars[main & in_cards].sum())
        first, last = cards[0][0], cards[-1][-1]
        between = main.copy()
        between[:first] = between[last + 1 :] = False
        if not own or chars[between & ~in_cards].sum() > MAX_INTERLEAVED_SHARE * own:
            continue
        drop |= main & in_cards
        title = _title_before(blocks, main, first)
        if title is not None:
            drop[title] = True
    return drop


def _title_before(blocks: list[Block], main: np.ndarray, first: int) -> int | None:
    """The main heading right before block ``first`` (no main block between them), if any."""
    for i in range(first - 1, -1, -1):
        if main[i]:
            return i if blocks[i].tag in HEADING_TAGS else None
    return None
