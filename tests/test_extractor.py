"""The Extractor API: every input yields one result, bad input becomes an error record."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from extract_trt import Extractor
from extract_trt.export.common import sample_pages
from extract_trt.runtime.labelers.annotation import AnnotationLabeler
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler
from extract_trt.runtime.types import Labels

ARTICLE = (
    "<html><head><title>T</title></head><body><nav><a href='/'>Home</a></nav>"
    "<div class='post'><h1>A headline</h1><p cc-select='true'>" + "This is the article body with real sentences. " * 8
    + "</p></div><footer>Copyright 2026</footer></body></html>"
)


class ParagraphLabeler:
    """Marks <p> blocks main; a real, minimal implementation of the Labeler protocol."""

    name = "paragraphs"

    def label(self, pages):
        return [Labels(np.array([b.tag == "p" for b in p.blocks], dtype=bool), self.name) for p in pages]


class BrokenOnSecondPage(ParagraphLabeler):
    name = "broken"

    def label(self, pages):
        if any("SECOND" in p.simplified_html for p in pages):
            raise RuntimeError("model exploded")
        return super().label(pages)


def test_extract_str_and_bytes_agree():
    ex = Extractor(labeler=ParagraphLabeler())
    a, b = ex.extract(ARTICLE), ex.extract(ARTICLE.encode("utf-8"))
    assert a.error is None and a.text == b.text
    assert "article body" in a.text and "Copyright" not in a.text and "Home" not in a.text
    assert a.labels.count("main") == 1 and a.n_blocks == len(a.labels)
    assert a.markdown.startswith("This is the article body")
    assert {"decode", "simplify", "label", "reconstruct", "convert"} <= set(a.timings)


def test_annotation_labeler_end_to_end():
    r = Extractor(labeler=AnnotationLabeler(), output="text").extract(ARTICLE)
    assert r.text.startswith("This is the article body") and r.markdown == "" and r.main_html == ""


def test_only_the_formats_asked_for_are_written():
    full = Extractor(labeler=ParagraphLabeler()).extract(ARTICLE)
    assert full.main_html and full.markdown and full.text
    for output in ("html", "markdown", "text", ("markdown", "text")):
        r = Extractor(labeler=ParagraphLabeler(), output=output).extract(ARTICLE)
        for fmt in ("html", "markdown", "text"):
            assert r.content(fmt) == (full.content(fmt) if fmt in output else "")
        assert r.labels == full.labels


@pytest.mark.parametrize(
    "bad",
    ["", "   ", b"", b"\x00\x01\x02\x03 binary junk", "<p>truncated <b>mark", "<html><head></head></html>", 42, None],
)
def test_bad_input_gives_a_record_not_an_exception(bad):
    r = Extractor(labeler=ParagraphLabeler()).extract(bad, id="x")
    assert r.id == "x"
    if r.error is None:
        assert r.n_blocks == len(r.labels)
    else:
        assert ":" in r.error


def test_extract_many_keeps_order_and_isolates_a_failing_page():
    pages = [
        {"id": "1", "html": "<p>first page text</p>"},
        {"id": "2", "html": "<p>SECOND page text</p>"},
        {"id": "3", "html": b"\xff\xfe\x00"},
        {"id": "4", "html": "<p>fourth page text</p>"},
    ]
    results = list(Extractor(labeler=BrokenOnSecondPage(), batch_size=4).extract_many(pages))
    assert [r.id for r in results] == ["1", "2", "3", "4"]
    assert results[0].text == "first page text" and results[3].text == "fourth page text"
    assert results[1].error.startswith("LabelerError: broken failed: RuntimeError: model exploded")
    assert results[2].error is not None


class BareStopOnSecondPage(ParagraphLabeler):
    name = "bare"

    def label(self, pages):
        if any("SECOND" in p.simplified_html for p in pages):
            next(iter(()))  # a bug's bare exception: no message of its own
        return super().label(pages)


def test_an_error_without_a_message_says_where_it_was_raised():
    pages = [{"id": "1", "html": "<p>first page text</p>"}, {"id": "2", "html": "<p>SECOND page text</p>"}]
    results = list(Extractor(labeler=BareStopOnSecondPage(), batch_size=1).extract_many(pages))
    assert results[0].text == "first page text"
    assert results[1].error.startswith("LabelerError: bare failed: StopIteration: no message, raised in label (")
    assert "test_extractor.py:" in results[1].error


def test_deep_page_through_the_whole_pipeline():
    html = "<div>" + "<span>" * 100_000 + "<p>deep</p>" + "</span>" * 100_000 + "</div>"
    r = Extractor(labeler=ParagraphLabeler()).extract(html)
    assert r.error is None and r.text == "deep"


def test_default_labeler_runs():
    r = Extractor().extract(ARTICLE)
    assert r.error is None and r.labeler == "block-model" and "article body" in r.text


class CountingLabeler(ParagraphLabeler):
    """Records how many pages each label() call gets."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def label(self, pages):
        self.calls.append(len(pages))
        return super().label(pages)


def test_pages_per_labeler_call_follow_the_labeler_unless_given():

    assert Extractor("heuristic").batch_size == HeuristicLabeler.pages_per_call == 1  # page by page
    plain = CountingLabeler()
    list(Extractor(plain).extract_many([ARTICLE] * 20))
    assert plain.calls == [16, 4]  # a labeler that does not say gets batches of PAGES_PER_CALL
    paged = CountingLabeler()
    paged.pages_per_call = 3
    list(Extractor(paged).extract_many([ARTICLE] * 7))
    assert paged.calls == [3, 3, 1]
    given = CountingLabeler()
    list(Extractor(given, batch_size=5).extract_many([ARTICLE] * 7))
    assert given.calls == [5, 2]


def test_page_trees_are_freed_without_the_garbage_collector():
    """Finished pages drop their tree's parent links, so reference counting frees them (the cyclic
    collector found ~1,000 nodes per page before)."""
    extractor = Extractor()
    pages = sample_pages()
    list(extractor.extract_many(pages))  # warm up
    gc.collect()
    gc.disable()
    try:
        results = list(extractor.extract_many(pages))
        unreachable = gc.collect()
    finally:
        gc.enable()
    assert len(results) == 3 and all(r.markdown and r.error is None for r in results)
    assert unreachable < 100


def _collections_during(run) -> int:
    seen = []

    def count(phase: str, info: dict) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(count)
    try:
        run()
    finally:
        gc.callbacks.remove(count)
    return len(seen)


def test_collector_paused_within_pages_and_back_on_between_them():
    """With pause_gc the collector is off while a page is worked on, on again whenever a result is
    handed out, and left off when the caller had switched it off."""
    pages = sample_pages() * 4
    states: list[bool] = []
    extractor = Extractor()
    list(extractor.extract_many(pages[:1]))  # warm up
    for result in extractor.extract_many(pages):
        states.append(gc.isenabled())
        assert result.error is None
    assert states == [True] * len(pages)
    paused = _collections_during(lambda: list(extractor.extract_many(pages)))
    unpaused = _collections_during(lambda: list(Extractor(pause_gc=False).extract_many(pages)))
    assert paused < unpaused
    gc.disable()
    try:
        list(extractor.extract_many(pages[:2]))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_garbage_left_by_pages_is_still_collected_with_the_collector_paused():
    """Cycles a page leaves behind are collected after the page (a young pass once they are due), even
    when nothing between pages allocates: garbage stays bounded over a long run."""

    class Cyclic:
        def __init__(self) -> None:
            self.me = self

    class LitteringLabeler(HeuristicLabeler):
        def label(self, pages):
            for _ in range(500):
                Cyclic()
            return super().label(pages)

    extractor = Extractor(LitteringLabeler())
    gc.collect()
    for _ in extractor.extract_many([ARTICLE] * 40):  # 20,000 cycles left over in all
        assert gc.get_count()[0] < 2 * 500 + gc.get_threshold()[0]


def test_extraction_leaves_the_float_mode_of_the_process_alone():
    """No flush-to-zero of subnormal floats left behind by a runtime (ONNX Runtime can set it per thread)."""
    Extractor().extract(sample_pages()[0])
    smallest_normal = np.float64(np.finfo(np.float64).tiny)
    assert smallest_normal / 2 > 0 and float(smallest_normal) / 2 > 0
