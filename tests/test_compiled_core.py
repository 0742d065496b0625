"""The compiled core (Cython build of the hot-path modules from their .py sources, and the C loops of the
block features) against the same sources run interpreted: same blocks, simplified HTML, map, main content,
model features and page metadata, byte for byte, on real pages; and the switch that picks between them."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import extract_trt.runtime as runtime
from extract_trt.runtime.compiled_core import COMPILED_MODULES, PURE_PYTHON_ENV

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# Runs in a fresh interpreter (compiled or interpreted per the environment): prints one line per page with
# everything the simplifier and reconstruction produce for it.
_DUMP = r"""
import dataclasses, gzip, json, sys
import numpy as np
import extract_trt.runtime as runtime
from extract_trt.runtime.html.convert import to_markdown
from extract_trt.runtime.html.metadata import complete_from_main, extract_metadata
from extract_trt.runtime.html.reconstruct import reconstruct_main
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.html.simplify_v1 import DRIPPER_V1
from extract_trt.runtime.labelers.features import page_features
from extract_trt.runtime.types import Labels
print(runtime.compiled())
for html in json.load(sys.stdin):
    for profile in (None, DRIPPER_V1):
        page = simplify(html, profile=profile)
        main = np.arange(len(page.blocks)) % 3 != 1
        metadata = extract_metadata(page.page_map.root, html, "https://example.com/2024/01/02/post", page.blocks)
        complete_from_main(metadata, page.blocks, main)
        content = reconstruct_main(page, Labels(main=main, labeler="test"))
        print(json.dumps([page.simplified_html, [dataclasses.astuple(b) for b in page.blocks],
                          content.html, to_markdown(content), page.map_html,
                          [a.tolist() for a in page_features(page).arrays()], metadata.as_dict()]))
"""


def _pages() -> list[str]:
    pages = []
    for name, n in (("wcxb-dev", 10), ("trafilatura-eval", 10), ("webmainbench-sample", 5)):
        path = DATA / f"{name}.jsonl.gz"
        if not path.exists():
            pytest.skip("shared data not available")
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            pages += [json.loads(line)["html"] for _, line in zip(range(n), fh)]
    # hand-made: the copy path, hidden elements, lists, nesting voids, SVG names, templates, NULs
    pages += [
        "<html><body><p>" + "word " * 120 + "<b>bold</b> end</p></body></html>",
        "<body>loose <b>b</b><div style='display:none'>x</div> tail<ul><li>1<li>2<li>3</ul></body>",
        '<svg xlink:href="#a"><use xlink:href="#b"/></svg><p>a<source>b<wbr>c</p><template><p>t</p></template>',
        "<p>a\x00b</>c</p><xmp><b></xmp><table><tr><td>1<td>2</table>",
    ]
    return pages


def _dump(pages: list[str], *, pure: bool, without_cython: bool = False) -> list[str]:
    env = dict(os.environ)
    env.pop(PURE_PYTHON_ENV, None)
    if pure:
        env[PURE_PYTHON_ENV] = "1"
    # without_cython: as where Cython is not installed (a wheel user's machine)
    code = ("import sys; sys.modules['cython'] = None\n" if without_cython else "") + _DUMP
    done = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(pages), env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def test_runtime_switch_picks_the_interpreted_sources() -> None:
    pages = _pages()[-4:]  # the hand-made ones
    pure = _dump(pages, pure=True)
    assert pure[0] == "False" and len(pure) == 1 + 2 * len(pages)
    assert _dump(pages, pure=True, without_cython=True) == pure
    for name in COMPILED_MODULES:
        code = f"import extract_trt.runtime.{name} as m; print(m.__file__)"
        env = {**os.environ, PURE_PYTHON_ENV: "1"}
        path = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert path.stdout.strip().endswith(f"{name.replace('.', '/')}.py")


@pytest.mark.skipif(os.environ.get("EXTRACT_TRT_REQUIRE_COMPILED") != "1", reason="only where a compiler is known")
def test_compiled_core_c_walker_and_feature_loops_were_built() -> None:
    # setup.py lets a failing Cython compile fall back to the sources; CI must notice that (.ci/run)
    from extract_trt.runtime.html import dom
    from extract_trt.runtime.labelers import features

    assert runtime.compiled(), "the compiled core did not build: see the Cython output of pip install -v"
    assert dom.c_walker_in_use(), "the C tree walker did not build or failed its probe"
    assert features._C is not None, "the C loops of the block features (feature_hash.pyx) did not build"


@pytest.mark.skipif(not runtime.compiled(), reason="compiled core not built (no Cython/compiler at install time)")
def test_compiled_core_writes_what_the_sources_write() -> None:
    pages = _pages()
    compiled = _dump(pages, pure=False)
    interpreted = _dump(pages, pure=True)
    assert compiled[0] == "True" and interpreted[0] == "False"
    assert len(compiled) == 1 + 2 * len(pages)
    assert compiled[1:] == interpreted[1:]


@pytest.mark.skipif(not runtime.compiled(), reason="compiled core not built (no Cython/compiler at install time)")
def test_compiled_tree_pickles_and_rejects_bad_input_like_the_sources() -> None:
    import pickle

    from extract_trt.errors import SimplifyError
    from extract_trt.runtime.html import dom
    from extract_trt.runtime.html.simplify import REMOVED_TAGS, simplify

    html = "<html><head><title>t</title></head><body><nav><a href='/x'>x</a></nav><p>p</p></body></html>"
    root = pickle.loads(pickle.dumps(dom.parse(html, lazy_tags=REMOVED_TAGS)))
    assert dom.serialize(root) == dom.serialize(dom.parse(html))
    for bad in (b"<p>bytes</p>", None):
        with pytest.raises(SimplifyError):
            simplify(bad)  # type: ignore[arg-type]
