"""A model-free labeler: text and link density plus boilerplate names, then a neighbour pass (jusText-like).

Per-block score (features of :class:`~extract_trt.runtime.types.Block`), a sum of:

* **length**: ``log2(words + 1) - 3`` (7 words → 0, 31 → +2), where words are ``\\w+`` tokens and a CJK
  character counts half a word (a ``\\w+`` run would swallow a whole CJK sentence);
* **prose**: up to +1.5 for sentence punctuation (``. , ; : ! ?`` and CJK forms), ``6 × marks / words``;
* **link density** ``link_text_length / len(text)``: ``-6 × density``, fading as ``8 / (words + 1)`` beyond
  7 words (menus are short links; a long, fully linked teaser on a listing page is content);
* **names**: -2 when a whole token of ``classes``/``element_id`` (split on non-alphanumerics and camelCase) is a
  boilerplate word (``nav menu footer header sidebar comment share social breadcrumb cookie widget ad banner
  related subscribe login …``), +1 for a content word (``article content post entry body text story main …``);
* **ancestors** (``tag_path``): -2 under ``footer aside nav form menu button select label``, -1.5 under
  ``header`` outside ``article``/``main``, +0.75 under ``article``/``main``;
* **copyright**: -3 for a short (< 200 chars) line with ``©``/``copyright``/``all rights reserved``.

A block without words (image-only) starts at 0 and is capped at 0. Blocks scoring ``≥ GOOD`` (1) are *good*,
``< BAD`` (-1) *bad*, the rest *short* (undecided: headings, short paragraphs, images).

Context pass (jusText's neighbour rule): a short block is main when its nearest decided neighbours on both sides
are good; or when one of them is good, at most one block away, and the block's own score is above ``BAD / 2``;
otherwise it is other. A heading (``h1``–``h6``) not scored bad is main when good text follows within two
blocks. A page where nothing is good keeps its best block (if not bad) and the undecided blocks around it.

``probability`` is the logistic of the final score (context decisions move it across 0.5), float32.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from extract_trt.runtime.html.dom import CLAUSE_MARKS, SENTENCE_END, word_count
from extract_trt.runtime.types import HEADING_TAGS, Block, Labels, PageBlocks

__all__ = ["HeuristicLabeler", "block_scores"]

GOOD = 1.0  # score at or above which a block is main on its own
BAD = -1.0  # score below which a block is boilerplate on its own

_WORD = re.compile(r"\w+")
_PUNCT = re.compile(f"[{re.escape(CLAUSE_MARKS + SENTENCE_END)}]")
_TOKEN_SPLIT = re.compile(r"[^0-9a-zA-Z]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_COPYRIGHT = re.compile(r"©|&copy;|\bcopyright\b|\ball rights reserved\b", re.IGNORECASE)

_BOILER_TOKENS = frozenset(
    {
        "nav", "navbar", "navigation", "menu", "menubar", "submenu", "footer", "foot", "header", "masthead",
        "sidebar", "side", "aside", "comment", "comments", "reply", "replies", "share", "sharing", "social",
        "breadcrumb", "breadcrumbs", "cookie", "cookies", "consent", "gdpr", "widget", "widgets", "ad", "ads",
        "advert", "advertisement", "adsense", "sponsor", "sponsored", "promo", "banner", "related",
        "recommended", "popular", "trending", "subscribe", "newsletter", "signup", "login", "signin",
        "register", "search", "pagination", "pager", "tags", "tag", "tagcloud", "categories", "category",
        "meta", "byline", "author", "copyright", "legal", "disclaimer", "skip", "toolbar", "topbar", "modal",
        "popup", "overlay", "button", "btn", "icon", "logo", "branding", "outbrain", "taboola", "disqus",
        "rss", "print", "email", "facebook", "twitter", "linkedin", "pinterest", "whatsapp", "follow",
        "crumbs", "dropdown", "mega", "offcanvas", "drawer", "hidden", "sr", "screen", "reader", "noprint",
    }
)  # fmt: skip
_CONTENT_TOKENS = frozenset(
    {"article", "content", "post", "entry", "body", "text", "story", "main", "prose", "blog", "description",
     "richtext", "markdown", "paragraph", "lead", "summary", "abstract", "answer", "question", "review"}
)  # fmt: skip
_BOILER_ANCESTORS = frozenset({"footer", "aside", "nav", "form", "menu", "button", "select", "label"})
_CONTENT_ANCESTORS = frozenset({"article", "main"})


def _name_tokens(*names: str) -> set[str]:
    tokens: set[str] = set()
    for name in names:
        if name:
            for part in _TOKEN_SPLIT.split(_CAMEL.sub(" ", name)):
                if part:
                    tokens.add(part.lower())
    return tokens


def _words(text: str) -> int:
    # a \w+ run would swallow a whole CJK phrase: word_count counts CJK text by characters instead
    return word_count(text, _WORD.findall)


def _score(block: Block) -> float:
    text = block.text.strip()
    n_chars = len(text)
    words = _words(text)
    link_density = min(1.0, block.link_text_length / n_chars) if n_chars else 0.0

    if words:
        score = math.log2(words + 1) - 3.0  # 7 words → 0, 31 → +2, 127 → +4
        punct = len(_PUNCT.findall(text))
        score += min(1.5, 6.0 * punct / words)  # prose has roughly one mark per 5-15 words
        # Menus are short links; a long fully linked teaser (listing pages) is content, so the penalty fades.
        score -= 6.0 * min(1.0, 8.0 / (words + 1)) * link_density
    else:
        score = 0.0  # image-only or punctuation-only: left to the neighbours unless its names say otherwise

    names = _name_tokens(block.classes, block.element_id)
    if names & _BOILER_TOKENS:
        score -= 2.0
    if names & _CONTENT_TOKENS:
        score += 1.0

    path = set(block.tag_path.split(">")) if block.tag_path else set()
    in_content = bool(path & _CONTENT_ANCESTORS)
    if path & _BOILER_ANCESTORS:
        score -= 2.0
    if "header" in path and not in_content:
        score -= 1.5
    if in_content:
        score += 0.75
    if n_chars < 200 and _COPYRIGHT.search(text):
        score -= 3.0
    if not words:
        score = min(score, 0.0)
    return score


def block_scores(blocks: Sequence[Block]) -> np.ndarray:
    """The per-block score before the context pass (float64, one per block)."""
    return np.fromiter((_score(b) for b in blocks), dtype=np.float64, count=len(blocks))


_GOOD, _SHORT, _BAD = 1, 0, -1


def _context(blocks: Sequence[Block], scores: np.ndarray) -> np.ndarray:
    n = len(blocks)
    cls = np.where(scores >= GOOD, _GOOD, np.where(scores < BAD, _BAD, _SHORT))
    if n == 0:
        return cls.astype(bool)

    # Nearest decided class (and its index) to the left and right of every block.
    prev_cls = np.zeros(n, dtype=np.int8)
    prev_idx = np.full(n, -1)
    last, last_i = 0, -1
    for i in range(n):
        prev_cls[i], prev_idx[i] = last, last_i
        if cls[i] != _SHORT:
            last, last_i = cls[i], i
    next_cls = np.zeros(n, dtype=np.int8)
    next_idx = np.full(n, n)
    last, last_i = 0, n
    for i in range(n - 1, -1, -1):
        next_cls[i], next_idx[i] = last, last_i
        if cls[i] != _SHORT:
            last, last_i = cls[i], i

    main = cls == _GOOD
    for i in range(n):
        if cls[i] != _SHORT:
            continue
        left, right = prev_cls[i], next_cls[i]
        if left == _GOOD and right == _GOOD:
            main[i] = True
        elif (left == _GOOD or right == _GOOD) and scores[i] > BAD / 2:
            near = (left == _GOOD and i - prev_idx[i] <= 2) or (right == _GOOD and next_idx[i] - i <= 2)
            main[i] = bool(near)

    # Headings announce the text below them.
    for i in range(n):
        if not main[i] and blocks[i].tag in HEADING_TAGS and scores[i] >= BAD:
            if any(cls[j] == _GOOD for j in range(i + 1, min(n, i + 3))):
                main[i] = True

    if not main.any():
        best = int(np.argmax(scores))
        if scores[best] >= BAD:
            main[best] = True
            j = best - 1
            while j >= 0 and cls[j] == _SHORT:
                main[j] = True
                j -= 1
            j = best + 1
            while j < n and cls[j] == _SHORT:
                main[j] = True
                j += 1
    return main


class HeuristicLabeler:
    """Text/link-density labeler with boilerplate names and a neighbour pass; no model, no training data."""

    name = "heuristic"
    pages_per_call = 1  # page by page

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        """One :class:`Labels` per page, ``main[i]`` for ``pages[k].blocks[i]``."""
        return [self._label_page(page) for page in pages]

    def _label_page(self, page: PageBlocks) -> Labels:
        blocks = page.blocks
        scores = block_scores(blocks)
        main = _context(blocks, scores)
        # Context decisions override the raw score, so push it across 0.5 accordingly.
        final = np.where(main, np.maximum(scores, 0.5), np.minimum(scores, -0.5))
        probability = (1.0 / (1.0 + np.exp(-final))).astype(np.float32)
        return Labels(main=main.astype(bool), labeler=self.name, probability=probability)
