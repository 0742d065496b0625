"""bench/article_widgets.py's body_edges and with_widget: a 2005-2015 news widget put at the edges of a story's body."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import lxml.html
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
_spec = importlib.util.spec_from_file_location("article_widgets", BENCH / "article_widgets.py")
article_widgets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(article_widgets)

STORY = " ".join(["The council met on Tuesday evening to discuss the budget for the coming year."] * 4)
PAGE = (
    "<html><body><div class='menu'><a href='/'>Home</a></div><div class='story'><h1>Budget agreed</h1>"
    + "".join(f"<p>{n}. {STORY}</p>" for n in range(1, 5))
    + "<p>Short closing line.</p></div><div class='footer'>Imprint</div></body></html>"
)


@pytest.mark.parametrize("widget", list(article_widgets.WIDGETS))
def test_widget_goes_next_to_the_first_and_last_long_paragraph(widget):
    markup, phrase = article_widgets.WIDGETS[widget]
    edges = article_widgets.body_edges(PAGE)
    before = article_widgets.with_widget(PAGE, widget, edges["before the body"])
    after = article_widgets.with_widget(PAGE, widget, edges["after the body"])
    assert before.replace(markup, "", 1) == PAGE and after.replace(markup, "", 1) == PAGE
    assert before.index(markup) == PAGE.index("<p>1. ")
    assert after.index(markup) == PAGE.index("<p>Short closing")
    # the probe phrase is what the page shows of the widget, and only the widget holds it
    assert phrase not in PAGE
    assert phrase in " ".join(lxml.html.fragment_fromstring(markup, create_parent="div").text_content().split())


def test_page_without_a_body_flow_gets_no_widget():
    assert article_widgets.body_edges("<html><body><p>Too short.</p></body></html>") == {}
