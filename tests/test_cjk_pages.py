"""bench/cjk_pages.py: pages rewritten in a Chinese-like script, and the character-bag F1 they are scored with."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from extract_trt import Extractor

BENCH = Path(__file__).resolve().parents[1] / "bench"
_spec = importlib.util.spec_from_file_location("cjk_pages", BENCH / "cjk_pages.py")
cjk_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cjk_pages)

STORY = "The council met on Tuesday evening, and it agreed the budget for the coming year. Schools get more."
PAGE = (
    "<html><head><title>Budget</title><style>p.lead { color: red }</style></head><body>"
    "<div class='menu'><a href='/news'>News</a> <a href='/sport'>Sport</a></div>"
    "<div class='story'><h1>Budget agreed by the council</h1>"
    + "".join(f"<p class='lead'>{STORY} &amp; {n} more lines of it.</p>" for n in range(1, 7))
    + "<!-- story ends --><script>var story = 'council';</script></div></body></html>"
)


def test_text_is_rewritten_and_markup_scripts_comments_entities_are_not():
    page = cjk_pages.cjk_html(PAGE)
    tags, text = re.findall(r"<[^>]*>", PAGE), re.sub(r"<[^>]*>", "", PAGE)
    assert re.findall(r"<[^>]*>", page) == tags  # every tag and attribute as it was
    assert "p.lead { color: red }" in page and "var story = 'council';" in page and "<!-- story ends -->" in page
    assert page.count("&amp;") == PAGE.count("&amp;")
    assert "council" not in re.sub(r"<script.*?</script>|<[^>]*>", "", page) and "council" in text
    assert cjk_pages.cjk_text(STORY).endswith("\u3002") and "\uff0c" in cjk_pages.cjk_text(STORY)
    assert " " not in cjk_pages.cjk_text("Budget agreed by the council")  # no spaces between words
    assert "7 more" not in cjk_pages.cjk_text("7 more") and cjk_pages.cjk_text("7 more").startswith("7 ")


def test_a_word_is_the_same_two_characters_on_the_page_and_in_the_ground_truth():
    council = cjk_pages.cjk_text("council")
    assert len(council) == 2 and all("\u4e00" <= c <= "\u9fff" for c in council)
    assert cjk_pages.cjk_text("Council") == council and council in cjk_pages.cjk_html(PAGE)
    assert cjk_pages.cjk_text("budget") != council


def test_character_f1_counts_each_cjk_character_and_each_latin_word():
    assert cjk_pages.character_f1("", "") == 1.0 and cjk_pages.character_f1("a", "") == 0.0
    assert cjk_pages.character_f1("the budget", "The  Budget") == 1.0
    assert cjk_pages.character_f1("\u4e00\u4e01", "\u4e00") == 2 * (1 / 2 * 1) / (1 / 2 + 1)


def test_the_rewritten_story_is_what_the_extractor_keeps():
    result = Extractor(output="text").extract(cjk_pages.cjk_html(PAGE))
    story = cjk_pages.cjk_text(STORY)
    assert result.error is None and story in result.text
    assert cjk_pages.cjk_text("Sport") not in result.text
    expected = "\n".join(cjk_pages.cjk_text(f"{STORY} & {n} more lines of it.") for n in range(1, 7))
    assert cjk_pages.character_f1(result.text, expected) > 0.9
