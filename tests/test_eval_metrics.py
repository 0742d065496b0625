"""The quality metrics against their reference definitions (spec §4.3–§4.6): hand-computed cases and
independent straightforward implementations."""

from __future__ import annotations

import gzip
import json
import re
from itertools import islice
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_trt.eval.metrics import (
    jieba_tokens,
    rouge_n_pulpie,
    rouge_n_webmainbench,
    snippet_counts,
    word_f1,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def reference_rouge(target_tokens: list[str], pred_tokens: list[str], n: int = 5) -> tuple[float, float, float]:
    """rouge_score's _create_ngrams + _score_ngrams written out with lists: each target n-gram can be matched
    by one prediction n-gram (the multiset intersection), denominators floored at 1."""
    target = [tuple(target_tokens[i : i + n]) for i in range(len(target_tokens) - n + 1)]
    remaining = [tuple(pred_tokens[i : i + n]) for i in range(len(pred_tokens) - n + 1)]
    n_pred = len(remaining)
    overlap = 0
    for gram in target:
        if gram in remaining:
            remaining.remove(gram)
            overlap += 1
    p, r = overlap / max(n_pred, 1), overlap / max(len(target), 1)
    return p, r, (2 * p * r / (p + r) if p + r > 0 else 0.0)


def reference_word_f1(pred: str, gt: str) -> float:
    a = sorted(re.findall(r"\w+", pred.lower()))
    b = sorted(re.findall(r"\w+", gt.lower()))
    if not a and not b:
        return 1.0
    i = j = common = 0
    while i < len(a) and j < len(b):  # merge of two sorted lists = size of the multiset intersection
        if a[i] == b[j]:
            common, i, j = common + 1, i + 1, j + 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    if not common:
        return 0.0
    p, r = common / len(a), common / len(b)
    return 2 * p * r / (p + r)


# ------------------------------------------------------------------------------------------ jieba / WebMainBench


def test_jieba_tokens_are_the_documented_ones():
    assert jieba_tokens("Hello, world  foo\n\nbar") == ["Hello", ",", " ", "world", " ", " ", "foo", "\n", "\n", "bar"]
    assert jieba_tokens("state-of-the-art e.g. 3.14%") == [
        "state", "-", "of", "-", "the", "-", "art", " ", "e", ".", "g", ".", " ", "3.14%",
    ]  # fmt: skip
    assert jieba_tokens("don't") == ["don", "'", "t"]


def test_webmainbench_rouge_hand_computed():
    # target: the,_,cat,_,sat,_,on,_,the,_,mat = 11 tokens → 7 five-grams; prediction: 5 tokens → 1 five-gram,
    # found in the target: P = 1, R = 1/7, F1 = 2·(1/7)/(8/7) = 0.25
    s = rouge_n_webmainbench("the cat sat", "the cat sat on the mat")
    assert (s.precision, s.recall) == (1.0, pytest.approx(1 / 7))
    assert s.f1 == pytest.approx(0.25)


def test_webmainbench_rouge_tokenises_the_unstripped_strings():
    # "\n\nHello world foo" → \n,\n,Hello,_,world,_,foo: 3 five-grams; the prediction's one five-gram is the last.
    s = rouge_n_webmainbench("Hello world foo", "\n\nHello world foo")
    assert s.precision == 1.0 and s.recall == pytest.approx(1 / 3) and s.f1 == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("prediction", "target", "f1"),
    [
        ("", "", 1.0),
        ("  \n", "\t", 1.0),  # both empty after strip()
        ("", "some words here and more", 0.0),
        ("some words here and more", "", 0.0),
        ("a b", "a b", 0.0),  # identical but fewer than 5 tokens: no 5-grams, so 0 (the reference's behaviour)
        ("one two three four", "one two three four", 1.0),  # 7 tokens each: 3 identical 5-grams
    ],
)
def test_webmainbench_rouge_edge_conventions(prediction, target, f1):
    assert rouge_n_webmainbench(prediction, target).f1 == f1


def test_webmainbench_rouge_on_chinese_uses_word_segmentation():
    target = "我们可以使用函数创建一个对象。这个内置的函数告诉我们对象的类型。"
    s = rouge_n_webmainbench(target, target)
    assert s.f1 == 1.0
    t = jieba_tokens(target)
    assert len(t) < len(target)  # words, not characters
    p, r, f = reference_rouge(t, jieba_tokens(target[: len(target) // 2]))
    half = rouge_n_webmainbench(target[: len(target) // 2], target)
    assert (half.precision, half.recall, half.f1) == pytest.approx((p, r, f))


# Pieces, not characters: Latin words, separators and Chinese words, so jieba's segmentation is exercised.
_TEXT = st.lists(st.sampled_from(["a", "b", " ", "c", "\n", ".", ",", "的", "我们", "使用", "x y"]), max_size=30).map("".join)


@settings(max_examples=150, deadline=None)
@given(pred=_TEXT, target=_TEXT)
def test_webmainbench_rouge_equals_a_straightforward_implementation(pred, target):
    s = rouge_n_webmainbench(pred, target)
    if not pred.strip() and not target.strip():
        assert s.f1 == 1.0
    else:
        assert (s.precision, s.recall, s.f1) == pytest.approx(reference_rouge(jieba_tokens(target), jieba_tokens(pred)))


def test_webmainbench_rouge_on_real_pages_with_precomputed_target_tokens():
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as fh:
        gts = [json.loads(line)["groundtruth"] for line in islice(fh, 3)]
    for gt in gts:
        pred = "\n".join(gt.split("\n")[::2]) + "\nNavigation Home About"  # half the lines, plus boilerplate
        tokens = jieba_tokens(gt)
        s = rouge_n_webmainbench(pred, gt, target_tokens=tokens)
        assert (s.precision, s.recall, s.f1) == pytest.approx(reference_rouge(tokens, jieba_tokens(pred)))
        assert 0 < s.recall < 1 and s.precision > s.recall


# ------------------------------------------------------------------------------------------ Pulpie


def test_pulpie_rouge_hand_computed_and_conventions():
    s = rouge_n_pulpie("a b c d e", "a b c d e f")  # pred 1 five-gram, ref 2: P = 1, R = 1/2, F1 = 2/3
    assert (s.precision, s.recall, s.f1) == (1.0, 0.5, pytest.approx(2 / 3))
    assert rouge_n_pulpie("", "").f1 == 0.0  # both empty = 0 in Pulpie's harness
    assert rouge_n_pulpie("a b c d e", "").f1 == 0.0
    # whitespace-insensitive: newlines and runs of spaces are just separators
    assert rouge_n_pulpie("a  b\nc d\te", "a b c d e").f1 == 1.0


@settings(max_examples=80, deadline=None)
@given(pred=_TEXT, target=_TEXT)
def test_pulpie_rouge_equals_a_straightforward_implementation(pred, target):
    s = rouge_n_pulpie(pred, target)
    if not pred.split() or not target.split():
        assert s.f1 == 0.0
    else:
        assert (s.precision, s.recall, s.f1) == pytest.approx(reference_rouge(target.split(), pred.split()))


# ------------------------------------------------------------------------------------------ WCXB word F1


def test_word_f1_hand_computed():
    # pred bag {the: 2, cat, hat} (4 words), gt {the, cat, sat} (3): overlap 2 → P 1/2, R 2/3, F1 4/7
    s = word_f1("The cat, the hat.", "the cat sat")
    assert (s.precision, s.recall, s.f1) == (0.5, pytest.approx(2 / 3), pytest.approx(4 / 7))
    assert word_f1("", "").f1 == 1.0
    assert word_f1("!!! ...", "  ").f1 == 1.0  # no \w+ words on either side = both empty
    assert word_f1("", "words").f1 == 0.0 and word_f1("words", "").f1 == 0.0
    assert word_f1("Café_2 ÉTÉ", "café_2 été").f1 == 1.0  # \w+ is Unicode-aware; lower() folds case


@settings(max_examples=150, deadline=None)
@given(pred=st.text(alphabet="abAB _1.\n", max_size=30), gt=st.text(alphabet="abAB _1.\n", max_size=30))
def test_word_f1_equals_a_straightforward_implementation(pred, gt):
    assert word_f1(pred, gt).f1 == pytest.approx(reference_word_f1(pred, gt))


# ------------------------------------------------------------------------------------------ snippets


def test_snippet_counts():
    text = "Intro line\nThe quick   brown\nfox jumps.\nFooter: Impressum"
    c = snippet_counts(text, ["The quick brown fox jumps.", "missing sentence", ""], ["Impressum", "Login", " "])
    assert (c.with_found, c.with_total, c.without_kept, c.without_total) == (1, 2, 1, 2)
    assert c.with_rate == 0.5 and c.without_rate == 0.5
    none = snippet_counts("x", [], [])
    assert none.with_rate is None and none.without_rate is None


def test_snippet_counts_in_both_conventions():
    """trafilatura's evaluation matches case-sensitively, WCXB's case-insensitively."""
    c = snippet_counts("THE QUICK brown fox. Share on Facebook", ["the quick brown fox."], ["share on facebook", "Login"])
    assert (c.with_found, c.without_kept) == (0, 0)  # trafilatura: case differs, no match
    assert (c.with_found_nocase, c.without_kept_nocase) == (1, 1)  # wcxb
    assert c.with_rate == 0.0 and c.with_rate_nocase == 1.0 and c.without_rate_nocase == 0.5
