"""A cascade: the built-in model labels every page, the pages it is least sure of go to a big model.

**Page uncertainty** (:func:`page_uncertainty`) is the block model's own estimate of the word F1 it loses
on a page. Each block's p(main) is read as the chance that the block is main content; a block's words
are its ``\\w+`` tokens (what the word-F1 metric counts). With the labels the model gave, the expected
true-positive, false-positive and false-negative word counts are

    E[TP] = Σ_main w·p,   E[FP] = Σ_main w·(1−p),   E[FN] = Σ_other w·p

and the **expected loss** is ``(E[FP] + E[FN]) / (2·E[TP] + E[FP] + E[FN])``: one minus the F1 of those
expected counts, so 0 for a page whose blocks are all near 0 or 1 and up to 1 for one where nothing is
sure. Unlike a mean block entropy it weighs a doubtful 300-word paragraph above a doubtful "Share" button,
and unlike an absolute count of doubtful words it is relative to the page's content, as the F1 loss is (a
long page with one doubtful sentence loses little). Blocks dropped as repeats of an earlier main block
count as decided (their copy carries the words).

The expected loss treats blocks as independent, but the model's mistakes come in runs (a comment thread
or a related-articles list taken whole, an article cut apart), and confident ones escape it. So the score
is the expected loss times ``1 + holes``, capped at 1, where **holes** is the share of the words between
the first and the last main block that the labels leave out: 0 for a main region in one piece, near 1 for
main blocks scattered among dropped text, a page whose structure the model read as broken. The factor
has no fitted constant. It was chosen on pages no model had been tuned or refit on, where it ranked pages
by their real loss better than the expected loss alone for two differently trained models, and calibrated,
smoothed or sampled variants of the expected loss did not. How well it ranks pages is measured in
:mod:`extract_trt.train.routing` (figures and the comparison: BENCHMARKS.md, "Cascade and distillation").

**Routing.** :class:`CascadeLabeler` labels a call's pages with the small labeler, scores them, and sends
to the big labeler either the most uncertain ``budget`` share of pages (ranked within each call of
``pages_per_call`` pages; a fractional remainder is carried to the next call so the share holds over a
run) or every page whose score reaches ``threshold``. Ranking within windows is as good as ranking the
whole set when pages arrive in no particular order, not when similar pages come in runs (a crawl sorted
by site): then a threshold chosen on a sample of the pages (the score of its most uncertain ``budget``
share; :mod:`extract_trt.train.routing` lists them) routes as a global ranking would. The routed pages go to the big labeler together
(in its ``pages_per_call`` batches). Every page keeps its own labels' ``labeler`` name, so a result says
which model decided it. A page the big labeler fails on (an exception, a wrong label count) keeps the
small labeler's labels with ``fallback`` set, and the run goes on.

**Block schemes.** Both labelers read the same blocks. When the big labeler names a simplifier profile
(a Dripper decoder: its prompt format is the v1.0 block scheme) the cascade uses that one and the small
model labels those blocks, as it does as the decoder's draft labeler; otherwise (encoders, TensorRT
engines) the small model's own. With a decoder as the big labeler the small labels of a routed page are
its speculative drafts (no second small-model pass).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence

import numpy as np

from extract_trt.errors import LabelerError
from extract_trt.runtime.labelers import PAGES_PER_CALL, Labeler
from extract_trt.runtime.types import Labels, PageBlocks

__all__ = [
    "CASCADE_PREFIX",
    "CascadeLabeler",
    "block_words",
    "expected_word_loss",
    "main_region_holes",
    "page_expected_loss",
    "page_uncertainty",
]

log = logging.getLogger(__name__)

CASCADE_PREFIX = "cascade:"
_WORD = re.compile(r"\w+")
# Pages scored and ranked together by a budgeted cascade: enough for a share of 5 % to mean whole pages.
RANK_WINDOW = 64


def block_words(page: PageBlocks) -> np.ndarray:
    """Words (``\\w+`` tokens, as word F1 counts them) per block, float64."""
    return np.array([len(_WORD.findall(b.text)) for b in page.blocks], dtype=np.float64)


def page_uncertainty(page: PageBlocks, labels: Labels, threshold: float | None = None) -> float:
    """:func:`expected_word_loss` of ``labels`` on ``page`` times one plus the share of the main region's
    words they leave out (:func:`main_region_holes`), capped at 1 (module doc).

    ``threshold`` is the p(main) the labels were cut at, where ``labels.threshold`` does not say (a block
    model's labels carry their page's cut); blocks whose label disagrees with it (repeats dropped, headings
    of kept sections kept after the cut) count as decided. Raises :class:`LabelerError` when the labels carry no
    probabilities.
    """
    words, p, main = _decided(page, labels, threshold)
    return min(1.0, expected_word_loss(words, p, main) * (1.0 + main_region_holes(words, main)))


def _decided(page: PageBlocks, labels: Labels, threshold: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Words per block (0 for a block decided by a repeat), p(main) and labels, for the page scores."""
    if labels.probability is None:
        raise LabelerError(f"{labels.labeler} gives no block probabilities: page uncertainty needs them")
    p = np.asarray(labels.probability, dtype=np.float64)
    main = np.asarray(labels.main, dtype=bool)
    words = block_words(page)
    threshold = labels.threshold if labels.threshold is not None else threshold  # the page's own cut first
    if threshold is not None:
        words = np.where(main == (p >= threshold), words, 0.0)
    return words, p, main


def expected_word_loss(words: np.ndarray, p: np.ndarray, main: np.ndarray) -> float:
    """One minus the F1 of the expected true-positive, false-positive and false-negative word counts of the
    labels ``main`` when each block is main with probability ``p`` (module doc)."""
    tp = float(np.sum(words[main] * p[main]))
    fp = float(np.sum(words[main] * (1.0 - p[main])))
    fn = float(np.sum(words[~main] * p[~main]))
    denominator = 2.0 * tp + fp + fn
    return (fp + fn) / denominator if denominator > 0 else 0.0


def page_expected_loss(page: PageBlocks, labels: Labels, threshold: float | None = None) -> float:
    """:func:`expected_word_loss` of ``labels`` on ``page`` alone (:func:`page_uncertainty` without the holes
    factor), for comparing page scores."""
    return expected_word_loss(*_decided(page, labels, threshold))


def main_region_holes(words: np.ndarray, main: np.ndarray) -> float:
    """Share of the words from the first to the last main block (with words) that are not main; 0 without
    a main block."""
    spans = np.flatnonzero(main & (words > 0))
    if not len(spans):
        return 0.0
    region = slice(spans[0], spans[-1] + 1)
    return float(words[region][~main[region]].sum() / words[region].sum())


class _Drafts:
    """The small labeler's labels of the pages being routed, as a decoder's draft labeler (by page object);
    a page it has not seen is labelled by the small labeler itself."""

    name = "cascade-drafts"

    def __init__(self, small: Labeler) -> None:
        self.small = small
        self.known: dict[int, Labels] = {}

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        missing = [p for p in pages if id(p) not in self.known]
        fresh = iter(self.small.label(missing) if missing else [])
        return [self.known[id(p)] if id(p) in self.known else next(fresh) for p in pages]


class CascadeLabeler:
    """Small labeler on every page, big labeler on the most uncertain ones (module doc).

    Args:
        small: a labeler with block probabilities (the built-in block model).
        big: any labeler (encoder, decoder, TensorRT engine, another block model, …).
        budget: share of pages (0–1) sent to ``big``.
        threshold: instead of a budget, send every page whose :func:`page_uncertainty` reaches this.
        pages_per_call: pages scored and ranked together (default :data:`RANK_WINDOW`).

    ``routed`` / ``seen`` / ``big_failures`` count pages over the labeler's life.
    """

    def __init__(
        self,
        small: Labeler,
        big: Labeler,
        budget: float | None = None,
        threshold: float | None = None,
        pages_per_call: int = RANK_WINDOW,
    ) -> None:
        if (budget is None) == (threshold is None):
            raise LabelerError("a cascade needs exactly one of budget (a share of pages) or threshold (an uncertainty)")
        if budget is not None and not 0.0 <= budget <= 1.0:
            raise LabelerError(f"the cascade budget is a share of pages between 0 and 1, got {budget}")
        self.small, self.big = small, big
        self.budget, self.threshold = budget, threshold
        self.pages_per_call = max(1, pages_per_call)
        self.name = f"cascade({getattr(small, 'name', 'small')}→{getattr(big, 'name', 'big')})"
        # a decoder reads its own block scheme; the small model then labels that one (module doc)
        self.simplify_profile = getattr(big, "simplify_profile", None) or getattr(small, "simplify_profile", None)
        self._small_threshold = getattr(small, "threshold", None)
        self._credit = 0.0
        self._drafts: _Drafts | None = None
        if getattr(big, "_draft_labeler", False) is None:  # a DecoderLabeler left to draft with the default model
            self._drafts = _Drafts(small)
            big._draft_labeler = self._drafts
        self.seen = self.routed = self.big_failures = 0

    def uncertainties(self, pages: Sequence[PageBlocks], labels: Sequence[Labels]) -> np.ndarray:
        """:func:`page_uncertainty` of each page under the small labeler's labels."""
        return np.array([page_uncertainty(p, lab, self._small_threshold) for p, lab in zip(pages, labels)])

    def _choose(self, scores: np.ndarray) -> np.ndarray:
        """Indices of the pages to route, most uncertain first."""
        order = np.argsort(-scores, kind="stable")
        if self.threshold is not None:
            return order[scores[order] >= self.threshold]
        self._credit += self.budget * len(scores)
        take = min(len(scores), math.floor(self._credit + 1e-9))
        self._credit -= take
        return order[:take]

    def route(self, pages: Sequence[PageBlocks]) -> tuple[list[Labels], np.ndarray]:
        """The small labeler's labels of ``pages`` and the sorted indices of the pages to send to the big
        one: the first half of :meth:`label` (a cluster runs it on CPU, :meth:`label_routed` on GPU)."""
        small_labels = self.small.label(pages)
        if len(small_labels) != len(pages):
            raise LabelerError(f"{self.small.name} returned {len(small_labels)} label sets for {len(pages)} pages")
        chosen = self._choose(self.uncertainties(pages, small_labels)) if pages else np.zeros(0, dtype=int)
        self.seen += len(pages)
        self.routed += len(chosen)
        return list(small_labels), np.sort(chosen)

    def label_routed(self, pages: Sequence[PageBlocks], small_labels: Sequence[Labels]) -> list[Labels]:
        """The big labeler's labels of routed ``pages`` (in its batches); where it fails, the small labels
        flagged as a fallback."""
        out: list[Labels] = []
        if self._drafts is not None:
            self._drafts.known = {id(p): lab for p, lab in zip(pages, small_labels)}
        step = getattr(self.big, "pages_per_call", PAGES_PER_CALL)
        try:
            for start in range(0, len(pages), step):
                part = slice(start, start + step)
                for labels, small in zip(self._label_big(list(pages[part])), small_labels[part]):
                    out.append(labels if labels is not None else self._fallback(small))
        finally:
            if self._drafts is not None:
                self._drafts.known = {}
        return out

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        out, chosen = self.route(pages)
        decided = self.label_routed([pages[i] for i in chosen], [out[i] for i in chosen])
        for i, labels in zip(chosen, decided):
            out[i] = labels
        return out

    def _label_big(self, pages: list[PageBlocks]) -> list[Labels | None]:
        """The big labeler's labels, ``None`` for a page it failed on (a failed batch is retried page by page)."""
        try:
            labels = self.big.label(pages)
            if len(labels) != len(pages):
                raise LabelerError(f"{self.big.name} returned {len(labels)} label sets for {len(pages)} pages")
        except Exception as exc:  # the big model failing must not cost the pages their labels
            if len(pages) > 1:
                return [self._label_big([p])[0] for p in pages]
            log.warning("cascade: %s failed on a page, keeping the small labels: %s: %s",
                        getattr(self.big, "name", "big"), type(exc).__name__, exc)  # fmt: skip
            return [None]
        return [lab if len(lab.main) == len(p) else None for p, lab in zip(pages, labels)]

    def _fallback(self, labels: Labels) -> Labels:
        self.big_failures += 1
        return Labels(main=labels.main, labeler=labels.labeler, probability=labels.probability, fallback=True,
                      threshold=labels.threshold)
