"""The simplifier writes most blocks straight from the page tree and the rest through a fragment copy
(text over the cap, runs under <body>, void or raw-text elements with content): both paths must write the
same blocks, and the same as the reference."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import extract_trt.runtime.html.simplify as simplify_module
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.html.simplify_v1 import DRIPPER_V1

import oracle

REF = oracle.load()
DATA = Path("/work/shared/data")

COPY_PATH_PAGES = {
    # The reference moves a hidden element's tail into the previous sibling's text: here an <img>.
    "void_with_text": '<html><body><figure><img src="/a.png"><div style="display:none">x</div> tail</figure></body></html>',
    "over_the_cap": "<html><body><p>" + "word " * 120 + "<b>bold</b> end</p></body></html>",
    "body_run": "<html><body>loose <b>bold</b> text<p>para</p></body></html>",
}


def _blocks(html: str, profile=None) -> list[tuple]:
    page = simplify(html, profile=profile)
    return [(b.html, b.text, b.link_text_length, b.tag, b.tag_path) for b in page.blocks]


@pytest.mark.parametrize("name", ["over_the_cap", "body_run"])
@pytest.mark.skipif(REF is None, reason="reference (pulpie 0.0.2) not installed")
def test_copy_path_pages_match_the_reference(name: str) -> None:
    # Not "void_with_text": libxml2 writes a void element's text after its tag (" tail" here), our
    # serializer leaves it out, as it always has (a known parity difference, see BENCHMARKS.md).
    html = COPY_PATH_PAGES[name]
    got = simplify(html)
    assert got.blocks
    assert oracle.normalize(got.simplified_html) == oracle.normalize(REF.simplify(html)[0])


def _real_pages(n: int) -> list[str]:
    if not (DATA / "trafilatura-eval.jsonl.gz").exists():
        pytest.skip("shared data not available")
    with gzip.open(DATA / "trafilatura-eval.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line)["html"] for _, line in zip(range(n), fh)]


@pytest.mark.parametrize("profile", [None, DRIPPER_V1])
def test_both_paths_write_the_same_blocks(monkeypatch, profile) -> None:
    pages = list(COPY_PATH_PAGES.values()) + _real_pages(8)
    direct = [_blocks(html, profile) for html in pages]
    monkeypatch.setattr(simplify_module, "_write_direct", lambda *args: None)  # every block via the copy
    assert [_blocks(html, profile) for html in pages] == direct
