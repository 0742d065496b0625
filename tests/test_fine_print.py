"""Disclaimers (runtime/html/fine_print.py), through the extractor."""

from __future__ import annotations

import pytest
from hostile_pages import AllMain

from extract_trt import Extractor

EXTRACTOR = Extractor(labeler=AllMain(), output="text")
ARTICLE = (
    "<p>The council voted on Tuesday to restore the old river meadows, a plan that took eleven years of "
    "surveys, public meetings and two lawsuits before the first wetland could be dug out again.</p>"
)
NOTE = "<p>Purchases made through links on this page may earn us a commission.</p>"


def _page(body: str) -> str:
    return f"<html><head><title>t</title></head><body>{body}</body></html>"


@pytest.mark.parametrize(
    "wrapped",
    [
        f'<div class="aawp-disclaimer">{NOTE}</div>',
        f'<div id="disclaimer">{NOTE}</div>',
        f'<div class="text--xsmall disclaimer__text"><span class="x">{NOTE}</span></div>',
        f'<section class="disclaimers"><div class="box"><div class="inner">{NOTE}</div></div></section>',
    ],
)
def test_a_disclaimer_is_not_main_content(wrapped: str) -> None:
    text = EXTRACTOR.extract(_page(f"<article>{ARTICLE}{wrapped}{ARTICLE}</article>")).text
    assert "commission" not in text and text.count("river meadows") == 2


@pytest.mark.parametrize(
    "wrapped",
    [
        # a WordPress post's class list names its taxonomy terms: the article, not a disclaimer
        f'<article class="post hentry status-publish disclaimer">{NOTE}</article>',
        f'<div class="category-disclaimer">{NOTE}</div>',
        # too far up: three named elements between the block and the name
        f'<div class="disclaimer-page"><div class="a"><div class="b"><div class="c">{NOTE}</div></div></div></div>',
        f'<div class="disclaimerbox">{NOTE}</div>',  # not a word of the name
    ],
)
def test_other_names_with_disclaimer_in_them_stay(wrapped: str) -> None:
    assert "commission" in EXTRACTOR.extract(_page(f"<article>{ARTICLE}{wrapped}</article>")).text
