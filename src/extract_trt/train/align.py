"""Training labels from ground-truth text: which blocks of a page are its main content.

The ground truth of WCXB-style sets is the page's main content as plain text, not block labels, so the
labels come from an alignment. The block words (``\\w+`` over lower-cased text, in block order) and the
ground-truth words are matched monotonically with :class:`difflib.SequenceMatcher` — the ground truth
follows document order, so a boilerplate string that occurs in several places on the page (a "Share"
button, a repeated heading) is matched at most as often as the ground truth contains it, and at the
place that keeps the order. A block is main when at least ``MAIN_SHARE`` of its words are matched.

Blocks without words (an image, an empty cell) get no label of their own (``IGNORE``): for training they
carry no loss; for reconstruction they follow their neighbours (main when both nearest worded blocks
are main).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

import numpy as np

from extract_trt.runtime.types import PageBlocks

__all__ = ["IGNORE", "MAIN_SHARE", "align_labels", "fill_ignored", "snippet_labels"]

MAIN_SHARE = 0.5
IGNORE = -1
_WORD = re.compile(r"\w+")


def align_labels(page: PageBlocks, groundtruth: str) -> np.ndarray:
    """Per-block labels: 1 main, 0 other, :data:`IGNORE` for blocks without words. int8, block order."""
    block_words = [_WORD.findall(b.text.lower()) for b in page.blocks]
    owner = np.repeat(np.arange(len(block_words)), [len(w) for w in block_words])
    words = [w for ws in block_words for w in ws]
    matched = np.zeros(len(words), dtype=bool)
    truth = _WORD.findall(groundtruth.lower())
    if words and truth:
        matcher = SequenceMatcher(None, words, truth, autojunk=False)
        for start, _, size in matcher.get_matching_blocks():
            matched[start : start + size] = True
    sizes = np.array([len(w) for w in block_words], dtype=np.int64)
    hits = np.bincount(owner, weights=matched, minlength=len(block_words))
    labels = np.where(hits >= MAIN_SHARE * np.maximum(sizes, 1), 1, 0).astype(np.int8)
    labels[sizes == 0] = IGNORE
    return labels


def snippet_labels(page: PageBlocks, with_snippets: list[str], without_snippets: list[str]) -> np.ndarray:
    """Weak labels from must-have / must-not-have snippets (trafilatura's evaluation set).

    A block is main when it contains a ``with`` snippet or is contained in one, other when the same holds
    for a ``without`` snippet, and :data:`IGNORE` otherwise (most blocks: the snippets cover a few places
    per page) or when both hold. Comparison is on lower-cased text with whitespace runs collapsed;
    snippets and blocks under ``MIN_SNIPPET`` characters are not used for containment the other way round.
    """
    blocks = [_norm(b.text) for b in page.blocks]
    labels = np.full(len(blocks), IGNORE, dtype=np.int8)
    positive = [_norm(s) for s in with_snippets if s.strip()]
    negative = [_norm(s) for s in without_snippets if s.strip()]
    for i, text in enumerate(blocks):
        if not text:
            continue
        is_main = any(_overlaps(text, s) for s in positive)
        is_other = any(_overlaps(text, s) for s in negative)
        if is_main != is_other:
            labels[i] = 1 if is_main else 0
    return labels


MIN_SNIPPET = 12


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _overlaps(block: str, snippet: str) -> bool:
    if snippet in block:
        return True
    return len(block) >= MIN_SNIPPET and block in snippet


def fill_ignored(labels: np.ndarray) -> np.ndarray:
    """Bool main mask where an :data:`IGNORE` block is main iff its nearest labelled neighbours both are."""
    main = labels == 1
    known = np.flatnonzero(labels != IGNORE)
    for i in np.flatnonzero(labels == IGNORE):
        pos = np.searchsorted(known, i)
        before = known[pos - 1] if pos > 0 else None
        after = known[pos] if pos < len(known) else None
        main[i] = before is not None and after is not None and main[before] and main[after]
    return main
