"""Quality metrics, each following its reference definition exactly (spec §4.3–§4.6).

* :func:`rouge_n_webmainbench` — the WebMainBench headline metric (``calc_rouge_n_score`` of
  MinerU-HTML's ``eval_baselines/utils.py``): ``jieba.lcut`` tokens of the *unstripped* strings (every
  whitespace character is a token), Counter of ``n``-grams, overlap = Σ min(count), precision =
  overlap / max(|pred n-grams|, 1), recall = overlap / max(|target n-grams|, 1), F1 = 2pr/(p+r) or 0;
  **both empty after ``strip()`` → 1.0**. Fewer than ``n`` tokens on a side → 0 (unless both empty).
* :func:`rouge_n_pulpie` — Pulpie's harness (``eval/bench_all_methods.py``): whitespace tokens
  (``str.split()``), same n-gram overlap; **an empty side (both empty included) → 0**.
* :func:`word_f1` — WCXB: bags (multisets) of ``re.findall(r"\\w+", text.lower())``, precision/recall/F1
  of the bag overlap; **both empty → 1.0**, one empty → 0.
* :func:`metadata_outcome` — page metadata (title, author, publication date) against the dataset's:
  ``exact`` (the same string after stripping; dates: the same day), ``normalised`` (titles and authors:
  the same sequence of casefolded NFKC ``\\w+`` words, "and"/"by" dropped from authors — so case,
  whitespace and punctuation do not count; dates: the same day), ``none`` (nothing said) or ``wrong``.
* :func:`snippet_counts` — how many ``with`` snippets occur in the prediction and how many ``without``
  snippets wrongly do. Matching is a substring test after collapsing every whitespace run to one space on
  both sides (extractors differ in line breaking, snippets do not), counted twice: case-sensitive
  (trafilatura's evaluation) and case-insensitive (WCXB's). The two conventions also aggregate differently
  (:mod:`extract_trt.eval.report`): trafilatura pools the counts over pages, WCXB averages per-page rates.

All functions take ``(prediction, reference)`` in that order except where the reference code's own
argument order is kept and named (``target``). Aggregation (plain mean over pages, failures = empty
prediction) is the harness's job (:mod:`extract_trt.eval.report`).
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "Score",
    "SnippetCounts",
    "METADATA_FIELDS",
    "bag_f1",
    "jieba_tokens",
    "metadata_outcome",
    "ngram_overlap",
    "rouge_n_pulpie",
    "rouge_n_webmainbench",
    "snippet_counts",
    "word_f1",
    "words",
]

_WORD = re.compile(r"\w+")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Score:
    """Precision, recall and F1 of one page."""

    precision: float
    recall: float
    f1: float

    @staticmethod
    def from_counts(overlap: int, n_pred: int, n_ref: int) -> Score:
        """The rouge_score convention: denominators floored at 1, F1 = 0 when p + r = 0."""
        p = overlap / max(n_pred, 1)
        r = overlap / max(n_ref, 1)
        return Score(p, r, 2 * p * r / (p + r) if p + r > 0 else 0.0)


PERFECT = Score(1.0, 1.0, 1.0)
ZERO = Score(0.0, 0.0, 0.0)


def ngram_overlap(pred_tokens: Sequence[str], ref_tokens: Sequence[str], n: int) -> Score:
    """ROUGE-N of two token sequences (``rouge_score._create_ngrams`` + ``_score_ngrams``)."""
    pred = Counter(tuple(pred_tokens[i : i + n]) for i in range(len(pred_tokens) - n + 1))
    ref = Counter(tuple(ref_tokens[i : i + n]) for i in range(len(ref_tokens) - n + 1))
    overlap = sum((pred & ref).values())
    return Score.from_counts(overlap, sum(pred.values()), sum(ref.values()))


@lru_cache(maxsize=1)
def _jieba():  # noqa: ANN202 - the jieba module; imported lazily (it is an `eval` extra and slow to load)
    try:
        import jieba
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the WebMainBench metric needs jieba: pip install 'extract-trt[eval]'") from exc
    jieba.setLogLevel(logging.WARNING)  # the reference sets INFO; we only silence its dictionary messages
    return jieba


def jieba_tokens(text: str) -> list[str]:
    """``jieba.lcut(text)`` (accurate mode, HMM on, default dictionary) — the WebMainBench tokens."""
    return _jieba().lcut(text)


def rouge_n_webmainbench(
    prediction: str,
    target: str,
    n: int = 5,
    *,
    target_tokens: Sequence[str] | None = None,
) -> Score:
    """WebMainBench ROUGE-N of ``prediction`` (html2text Markdown of the predicted main HTML, see
    :func:`extract_trt.runtime.html.convert.benchmark_markdown`, or a text extractor's own text) against
    ``target`` (``convert_main_content``). ``target_tokens`` may pass ``jieba_tokens(target)`` computed
    once for many predictions.
    """
    if not target.strip() and not prediction.strip():
        return PERFECT
    ref = target_tokens if target_tokens is not None else jieba_tokens(target)
    return ngram_overlap(jieba_tokens(prediction), ref, n)


def rouge_n_pulpie(prediction: str, reference: str, n: int = 5) -> Score:
    """Pulpie's ROUGE-N: whitespace tokens; any empty side (both empty too) scores 0."""
    pred, ref = prediction.split(), reference.split()
    if not pred or not ref:
        return ZERO
    return ngram_overlap(pred, ref, n)


def words(text: str) -> Counter[str]:
    """The WCXB word bag: ``Counter(re.findall(r"\\w+", text.lower()))``."""
    return Counter(_WORD.findall(text.lower()))


def word_f1(prediction: str, reference: str, *, reference_bag: Counter[str] | None = None) -> Score:
    """WCXB word-level precision/recall/F1 of the bag overlap; both empty → 1, one empty → 0."""
    return bag_f1(words(prediction), reference_bag if reference_bag is not None else words(reference))


def bag_f1(pred: Counter[str], ref: Counter[str]) -> Score:
    """Precision/recall/F1 of two bags' overlap (WCXB's convention): both empty → 1, one empty → 0."""
    n_pred, n_ref = sum(pred.values()), sum(ref.values())
    if not n_pred and not n_ref:
        return PERFECT
    if not n_pred or not n_ref:
        return ZERO
    return Score.from_counts(sum((pred & ref).values()), n_pred, n_ref)


@dataclass(frozen=True, slots=True)
class SnippetCounts:
    """``with`` snippets found and ``without`` snippets wrongly kept on one page: case-sensitive
    (``with_found``, ``without_kept``: trafilatura's evaluation) and case-insensitive (``*_nocase``: WCXB's)."""

    with_found: int
    with_total: int
    without_kept: int
    without_total: int
    with_found_nocase: int
    without_kept_nocase: int

    @property
    def with_rate(self) -> float | None:
        """Share of ``with`` snippets found, case-sensitive (``None`` when the page has none)."""
        return self.with_found / self.with_total if self.with_total else None

    @property
    def without_rate(self) -> float | None:
        """Share of ``without`` snippets wrongly kept, case-sensitive (``None`` when the page has none)."""
        return self.without_kept / self.without_total if self.without_total else None

    @property
    def with_rate_nocase(self) -> float | None:
        """Share of ``with`` snippets found, case-insensitive (WCXB)."""
        return self.with_found_nocase / self.with_total if self.with_total else None

    @property
    def without_rate_nocase(self) -> float | None:
        """Share of ``without`` snippets wrongly kept, case-insensitive (WCXB)."""
        return self.without_kept_nocase / self.without_total if self.without_total else None


def _squash(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def snippet_counts(prediction: str, with_snippets: Sequence[str], without_snippets: Sequence[str]) -> SnippetCounts:
    """Substring tests of each snippet in the prediction, whitespace runs collapsed on both sides.

    Empty snippets are ignored (an empty string is in every text). Counted case-sensitive and, with both
    sides ``casefold()``-ed, case-insensitive.
    """
    text = _squash(prediction)
    folded = text.casefold()
    wanted = [s for s in map(_squash, with_snippets) if s]
    unwanted = [s for s in map(_squash, without_snippets) if s]
    return SnippetCounts(
        with_found=sum(s in text for s in wanted),
        with_total=len(wanted),
        without_kept=sum(s in text for s in unwanted),
        without_total=len(unwanted),
        with_found_nocase=sum(s.casefold() in folded for s in wanted),
        without_kept_nocase=sum(s.casefold() in folded for s in unwanted),
    )


#: Metadata fields scored, and the dataset key holding each one's ground truth.
METADATA_FIELDS = {"title": "title", "author": "author", "date": "publish_date"}
_AUTHOR_FILLER = frozenset({"and", "by"})


def _metadata_words(value: str, field: str) -> list[str]:
    tokens = re.findall(r"\w+", unicodedata.normalize("NFKC", value).casefold())
    return [t for t in tokens if t not in _AUTHOR_FILLER] if field == "author" else tokens


def metadata_outcome(prediction: str | None, truth: str, field: str) -> str:
    """``"exact"``, ``"normalised"``, ``"none"`` or ``"wrong"`` for one field of one page (module doc)."""
    predicted = (prediction or "").strip()
    if not predicted:
        return "none"
    if field == "date":
        return "exact" if predicted[:10] == truth.strip()[:10] else "wrong"
    if predicted == truth.strip():
        return "exact"
    return "normalised" if _metadata_words(predicted, field) == _metadata_words(truth, field) else "wrong"
