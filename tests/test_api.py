"""extract_trt.extract: the trafilatura-shaped entry point."""

from __future__ import annotations

import json

import pytest

import extract_trt
from extract_trt import Extractor
from extract_trt.api import _render
from extract_trt.export.common import sample_pages
from extract_trt.runtime.extractor import Result

PAGE = sample_pages()[0]


def test_formats_are_the_extractor_outputs() -> None:
    reference = Extractor().extract(PAGE, url="https://example.org/a")
    assert extract_trt.extract(PAGE) == reference.text
    assert extract_trt.extract(PAGE, output_format="markdown", include_links=True, include_images=True) == reference.markdown
    assert extract_trt.extract(PAGE, output_format="html") == reference.main_html
    data = json.loads(extract_trt.extract(PAGE, url="https://example.org/a", output_format="json"))
    assert data == {"url": "https://example.org/a", "text": reference.text}


def test_markdown_has_no_links_or_images_unless_asked_as_in_trafilatura() -> None:
    first = "Plenty of words about the river valley and its old mills. " * 5
    second = "The second paragraph tells of the miller and his family, who lived there for years. " * 4
    html = (f'<html><body><article><h1>Old mills</h1><p>{first}Read about <a href="https://example.org/mills">the '
            f'mills</a> here.</p><img src="https://example.org/mill.jpg" alt="A mill"><p>{second}</p></article></body></html>')  # fmt: skip
    plain = extract_trt.extract(html, output_format="markdown")
    linked = extract_trt.extract(html, output_format="markdown", include_links=True)
    both = extract_trt.extract(html, output_format="markdown", include_links=True, include_images=True)
    assert "Read about the mills here." in plain and "](" not in plain
    assert "[the mills](<https://example.org/mills>)" in linked and "![" not in linked
    assert both == Extractor().extract(html).markdown and "![A mill](<https://example.org/mill.jpg>)" in both


def test_favor_flags_pick_the_model_thresholds() -> None:
    precision = Extractor(labeler="block-model-precision").extract(PAGE).text
    recall = Extractor(labeler="block-model-recall").extract(PAGE).text
    assert extract_trt.extract(PAGE, favor_precision=True) == precision
    assert extract_trt.extract(PAGE, favor_recall=True) == recall
    assert extract_trt.extract(PAGE, labeler="heuristic") == Extractor(labeler="heuristic").extract(PAGE).text
    assert len(recall) >= len(precision)


def test_nothing_to_extract_is_none_as_in_trafilatura() -> None:
    assert extract_trt.extract("") is None
    assert extract_trt.extract(b"\x00\x01\x02 binary") is None
    assert extract_trt.extract("<html><body><nav><a href='/'>Home</a></nav></body></html>") is None


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"output_format": "xml"}, ValueError, "txt, markdown, json, html"),
        ({"favor_precision": True, "favor_recall": True}, ValueError, "exclude each other"),
        ({"favor_recall": True, "labeler": "heuristic"}, ValueError, "not with labeler"),
    ],
)
def test_unsupported_options_are_errors_not_silent(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        extract_trt.extract(PAGE, **kwargs)


def test_target_language_keeps_only_pages_in_that_language() -> None:
    english = "<html><body><article><p>" + "The gardens were quiet in the morning light. " * 20 + "</p></article></body></html>"
    german = english.replace("The gardens were quiet in the morning light.", "Die Gärten lagen still im Morgenlicht.")
    assert extract_trt.extract(english, target_language="en") == extract_trt.extract(english)
    assert extract_trt.extract(english, target_language="de") is None
    assert extract_trt.extract(german, target_language="DE") is not None
    assert extract_trt.extract(german, output_format="json", target_language="de").startswith('{"url"')


def test_metadata_rendering() -> None:
    result = Result(url="https://example.org/a", text="Body text", main_html="<p>Body</p>")
    meta = {"title": "A <b>title</b>\nsplit", "author": None, "tags": ["x", "y"], "categories": []}
    assert _render(result, "txt", meta) == "---\ntitle: A <b>title</b> split\ntags: x; y\n---\nBody text"
    html = _render(result, "html", meta)
    assert html == ('<html><head><title>A &lt;b&gt;title&lt;/b&gt; split</title><meta name="tags" content="x; y">'
                    "</head><body><p>Body</p></body></html>")  # fmt: skip
    assert json.loads(_render(result, "json", meta))["tags"] == ["x", "y"]
    assert _render(result, "txt", None) == "Body text"


def test_with_metadata_end_to_end() -> None:
    html = "<html><head><title>The Title</title></head><body><article><p>" + "Plenty of words in here. " * 30 + "</p></article></body></html>"
    assert extract_trt.extract(html, with_metadata=True).startswith("---\ntitle: The Title\n")
    assert json.loads(extract_trt.extract(html, output_format="json", with_metadata=True))["title"] == "The Title"
