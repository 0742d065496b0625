"""Lazily parsed content (dom.parse ``lazy_tags``): the simplifier leaves the content of elements its
processing view removes unbuilt; everything that reads the original tree must see it as if built."""

from __future__ import annotations

import gzip
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from extract_trt.runtime.html import dom
from extract_trt.runtime.html.reconstruct import reconstruct
from extract_trt.runtime.html.simplify import REMOVED_TAGS, simplify
from extract_trt.runtime.html.simplify_v1 import DRIPPER_V1
from extract_trt.runtime.types import Labels

DATA = Path("/work/shared/data")

PAGE = (
    "<html><head><title>T</title><style>p{}</style><script>var a = '<p>x</p>';</script></head><body>"
    "<nav><ul><li></li>after empty li<li>Home</li></ul></nav>"
    "<div><p>Main text <script>track()</script>more</p><ul><li></li>tail<li>b</li></ul></div>"
    "<svg><title>icon</title><use xlink:href='#i'></use></svg><p>end</p></body></html>"
)


def _pages(n: int) -> list[str]:
    if not (DATA / "wcxb-dev.jsonl.gz").exists():
        pytest.skip("shared data not available")
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line)["html"] for _, line in zip(range(n), fh)]


def test_lazy_content_is_not_built_until_needed() -> None:
    root = dom.parse(PAGE, lazy_tags=REMOVED_TAGS)
    head, body = root.children
    assert head.lazy is not None and head.children == []
    nav = body.children[0]
    assert nav.tag == "nav" and nav.lazy is not None
    svg = body.children[-2]
    assert [kid.tag for kid in svg.children] == ["title", "use"]  # never lazy inside SVG
    assert svg.children[1].attrs == {"xlink:href": "#i"}
    dom.materialize(nav)
    assert nav.lazy is None and nav.children[0].tag == "ul"


@pytest.mark.parametrize("html", [PAGE, *_pages(3)] if (DATA / "wcxb-dev.jsonl.gz").exists() else [PAGE])
def test_lazy_tree_serializes_like_the_eager_one(html: str) -> None:
    eager = dom.serialize(dom.parse(html))
    assert dom.serialize(dom.parse(html, lazy_tags=REMOVED_TAGS)) == eager
    lazy = dom.parse(html, lazy_tags=REMOVED_TAGS)
    assert [n.tag for n in dom.iter_tree(lazy)] == [n.tag for n in dom.iter_tree(dom.parse(html))]
    assert dom.serialize(pickle.loads(pickle.dumps(dom.parse(html, lazy_tags=REMOVED_TAGS)))) == eager


@pytest.mark.parametrize("profile", [None, DRIPPER_V1])
def test_reconstructing_a_page_twice_equals_fresh_pages(profile) -> None:
    # The second call keeps blocks whose lazily parsed content the first call did not build.
    for html in [PAGE, *_pages(4)]:
        page = simplify(html, profile=profile)
        n = len(page)
        first, second = np.arange(n) % 2 == 0, np.ones(n, dtype=bool)
        got = [reconstruct(page, Labels(first, "t")), reconstruct(page, Labels(second, "t"))]
        fresh = [reconstruct(simplify(html, profile=profile), Labels(labels, "t")) for labels in (first, second)]
        assert got == fresh


def test_main_block_with_a_script_keeps_it_when_markup_is_kept() -> None:
    page = simplify(PAGE)
    main = [b.item_id for b in page.blocks if "Main text" in b.text]
    labels = Labels(np.array([b.item_id in main for b in page.blocks]), "t")
    html = reconstruct(page, labels)
    assert "<script>track()</script>" in html and "Home" not in html
