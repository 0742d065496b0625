"""The C walker (runtime/html/lexbor_walk.pyx) against the selectolax walk it replaces in dom.parse: the same
tree — tags, attributes, text, tails, element order, lazily built content — on real and hostile pages."""

from __future__ import annotations

import gzip
import json

import pytest
from hostile_pages import DATA, hostile_pages, mutate

from extract_trt.runtime import compiled
from extract_trt.runtime.html import dom
from extract_trt.runtime.html.simplify import MINERU_V11

LAZY = MINERU_V11.removed_tags

needs_walker = pytest.mark.skipif(not dom.c_walker_in_use(), reason="C walker not built (interpreted core)")


def _signature(html: str, walker: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple], str]:
    monkeypatch.setattr(dom, "_USE_WALKER", walker)
    root = dom.parse(html, lazy_tags=LAZY)
    serialized = dom.serialize(root)  # builds the lazy content (by the walker that left it lazy)
    return dom._tree_signature(root), serialized


def _walks() -> list[bool]:
    """The walks to compare: the C walker's (where built) and selectolax's."""
    return [True, False] if dom.c_walker_in_use() else [False]


def _real_pages() -> list[str]:
    pages = []
    for name, n in (("pulpie-pages", 13), ("webmainbench-sample", 5), ("readability-pages", 40)):
        with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            pages += [json.loads(line)["html"] for _, line in zip(range(n), fh)]
    return pages


def test_walker_runs_in_the_compiled_core() -> None:
    # The compiled build on Linux must not silently lose the walker (it is half the tree build's speed).
    assert dom.c_walker_in_use() == compiled()


@needs_walker
def test_same_tree_as_selectolax_walk_on_real_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    for html in _real_pages():
        assert _signature(html, True, monkeypatch) == _signature(html, False, monkeypatch)


@needs_walker
def test_same_tree_on_hostile_and_mutated_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    rng = random.Random(7)
    pages = [html for _, html in hostile_pages() if len(html) < 200_000]
    seeds = _real_pages()[:6]
    pages += [mutate(seed.encode(), rng).decode("utf-8", "replace") for seed in seeds for _ in range(5)]
    pages += [
        "<template><p>a<template><i>b</i></template></p></template><svg><a xlink:href='#x' xml:space=p/></svg>",
        "<my-el Data-X=1><Other-El>t</Other-El></my-el><math><mi xlink:href='u'>x</mi></math><xmp><b>&</xmp>",
        "<nav><svg><title>t</title></svg></nav><head><style>s</style></head><p>\u00e9\u4e2d\U0001f600</p>",
        "<svg viewBox='0 0 9 9'><use href='#a&amp;b' xlink:href='#c' data-uid=1 XML:Lang=\"x&quot;y\"/></svg>",
    ]
    for html in pages:
        assert _signature(html, True, monkeypatch) == _signature(html, False, monkeypatch)


@needs_walker
def test_a_walker_failing_the_probe_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        @staticmethod
        def build(*args: object) -> tuple[list, list]:
            return [], []  # builds nothing: the probe page's tree differs

    monkeypatch.setattr(dom, "_LEXBOR_WALK", Broken)
    monkeypatch.setattr(dom, "_USE_WALKER", None)
    monkeypatch.setattr(dom, "_load_walker", lambda: True)
    assert not dom.c_walker_in_use()
    assert dom.serialize(dom.parse("<p>kept</p>")) == "<html><head></head><body><p>kept</p></body></html>"


def test_walker_counts_as_fresh_where_its_sources_are_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    from extract_trt.runtime import compiled_core

    if compiled_core._built("html.lexbor_walk") is None:
        pytest.skip("C walker not built")
    assert compiled_core.fresh("html.lexbor_walk")
    # a wheel holds the built module but not lexbor_walk.pyx / dom.pxd
    monkeypatch.setitem(compiled_core.CYTHON_MODULES, "html.lexbor_walk", ("not-installed.pyx", "not-installed.pxd"))
    assert compiled_core.fresh("html.lexbor_walk")


def test_the_references_mapping_attribute_is_dropped_by_both_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    # The reference strips every data-uid (its own marks and the page's) before writing its map.
    html = "<div data-uid='7' class='c'><p data-uid>text</p><svg data-uid='s'><g data-uid='g'/></svg></div>"
    for walker in _walks():
        signature, serialized = _signature(html, walker, monkeypatch)
        assert "data-uid" not in serialized
        assert [attrs for _, attrs, *_ in signature[3:]] == [{"class": "c"}, {}, {}, {}]  # div p svg g


def test_processing_instructions_are_dropped_by_both_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    # "<?php … ?>" left in a page is a node of its own in Lexbor (tag id 0, which selectolax names after
    # whatever it read last); the tree keeps elements and text only, as the C walker does by node type. The
    # interpreted walk kept it as an element, "address" or "#text" (a block of inline content became
    # "block_element" there, and its label differed from the compiled build's)
    html = "<address>x</address><div class='side'><?php posts(4); ?>\n<a href='/c'>more</a></div><p>a<?xml x?>b</p>"
    for walker in _walks():
        _, serialized = _signature(html, walker, monkeypatch)
        body = '<body><address>x</address><div class="side">\n<a href="/c">more</a></div><p>ab</p></body>'
        assert body in serialized


def test_frameset_text_and_non_ascii_names_read_alike_by_both_walks(monkeypatch: pytest.MonkeyPatch) -> None:
    # A frameset keeps only the whitespace of its text, moved to the front of the token in place: selectolax's
    # text_content read the old length ("a b c" as "  b c"). And HTML lower-cases ASCII letters of names only:
    # a valueless attribute made the interpreted walk lower-case every name with str.lower ("Москва").
    pages = [
        "<frameset> a b c </frameset> after text",
        "<svg><frameset>a &amp; b</frameset></svg>",  # an SVG element of that name: text as any other
        "<p Москва ÉTÉ hidden>x</p>",
    ]
    expected = [
        "<html><head></head><frameset>    </frameset>  </html>",
        "<body><svg><frameset>a &amp; b</frameset></svg></body>",
        '<p Москва="" ÉtÉ="" hidden="">x</p>',
    ]
    for walker in _walks():
        for html, want in zip(pages, expected):
            assert want in _signature(html, walker, monkeypatch)[1], (walker, html)


@pytest.mark.parametrize("walker", [True, False])
def test_svg_attributes_keep_their_qualified_names(walker: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # <use href xlink:href>: two attributes that selectolax < 1.0 reports as one "href"; the reference has both.
    if walker and not dom.c_walker_in_use():
        pytest.skip("C walker not built (interpreted core)")
    monkeypatch.setattr(dom, "_USE_WALKER", walker)
    root = dom.parse("<p>x<svg viewBox='0 0 9 9'><use href='#a&amp;b' xlink:href='#c' data-uid=1/></svg></p>")
    svg = next(node for node in dom.iter_tree(root) if node.tag == "svg")
    assert svg.attrs == {"viewbox": "0 0 9 9"}
    assert svg.children[0].attrs == {"href": "#a&b", "xlink:href": "#c"}
