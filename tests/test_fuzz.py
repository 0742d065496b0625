"""Bounded fuzzing of bytes → result through the whole pipeline (the long runs are ``scripts/fuzz.py``).

Properties for every input: no exception escapes, one result per input, an error is ``"Type: reason"``
with no output, labels = blocks, the output text is made of the input's characters, no active content in
the main HTML or in the rendered Markdown. Inputs: random hostile pages (hypothesis drives the
generator, so failures shrink) and byte mutations of real pages from ../shared/data.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extract_trt import Extractor
from extract_trt.runtime.html.decode import decode_html
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

from hostile_pages import AllMain, hostile_pages, mutate, random_page, seed_pages, violations

ALL_MAIN = Extractor(labeler=AllMain(), time_budget=10)
HEURISTIC = Extractor(labeler=HeuristicLabeler(), time_budget=10)


def check(extractor: Extractor, data: str | bytes) -> None:
    results = list(extractor.extract_many([{"id": "fuzz", "html": data}]))
    assert len(results) == 1 and results[0].id == "fuzz"
    source = data if isinstance(data, str) else decode_html(data)
    assert violations(source, results[0]) == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(st.randoms(use_true_random=False), st.booleans())
def test_random_pages(rng: random.Random, all_main: bool) -> None:
    check(ALL_MAIN if all_main else HEURISTIC, random_page(rng))


def test_mutated_real_pages() -> None:
    rng = random.Random(9)
    seeds = [p.encode("utf-8") for p in seed_pages(18, max_chars=20_000)]
    seeds += [p.encode("utf-8") for _, p in hostile_pages() if len(p) < 50_000]
    for i in range(400):
        data = mutate(rng.choice(seeds), rng, other=rng.choice(seeds))
        check(ALL_MAIN if i % 2 else HEURISTIC, data)
