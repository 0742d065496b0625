"""The Dripper v1.0 simplifier profile (spec §1.9) on hand-written pages, one rule at a time."""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.reconstruct import reconstruct
from extract_trt.runtime.html.simplify import MINERU_V11, simplify
from extract_trt.runtime.html.simplify_v1 import DRIPPER_V1, simplify_profile, simplify_v1
from extract_trt.runtime.types import Labels

from test_simplify import CASES, page


def blocks(html: str) -> list[str]:
    return [b.html for b in simplify_v1(html).blocks]


def all_main(p) -> str:
    return reconstruct(p, Labels(np.ones(len(p.blocks), dtype=bool), "test"))


def test_spec_toy_page_gives_seven_blocks():
    # Spec §1.9: no footer, "Loose tail text<br>more text" one block, the two layout cells separate.
    assert blocks(CASES["toy"]) == [
        '<h1 _item_id="1">Hello <b>World</b></h1>',
        '<p _item_id="2">First paragraph with <a>a link</a>.</p>',
        '<div class="content" id="main" _item_id="3">Loose tail text<br>more text </div>',
        '<ul _item_id="4"><li>one</li><span>...</span><li>four</li></ul>',
        '<td _item_id="5">cell1</td>',
        '<td _item_id="6">cell2</td>',
        '<div class="content" id="main" _item_id="7"><img><img src="/pic.jpg" alt="pic"></div>',
    ]
    assert len(simplify(CASES["toy"]).blocks) == 8  # v1.1 on the same page


def test_removed_tags():
    html = page(
        "<header><p>head</p></header><div><p>kept</p><aside>side</aside>lost tail<noscript>js</noscript>"
        "<footer>foot</footer><nav>n</nav><p>also kept</p></div>"
    )
    assert [b.text for b in simplify_v1(html).blocks] == ["kept", "also kept"]


def test_navigation_names_and_display_none_are_removed_with_their_tail():
    html = page(
        '<div><p class="top nav">a</p><p id="site-footer-x">b</p><p id="navbar">c</p><p class="navigation">d</p>'
        '<b>x</b><span style="color:red; display: none">h</span> lost<p style="display:none">e</p>'
        '<p style="opacity:0">f</p><details><p>closed but kept</p></details></div>'
    )
    texts = [b.text for b in simplify_v1(html).blocks]
    assert texts == ["c", "d", "x", "f", "closed but kept"]
    # v1.1 keeps the tail of a removed element, only removes "nav" names under <body>, and hides
    # opacity:0 and closed <details> content.
    assert "x lost" in [b.text for b in simplify(html).blocks]


def test_br_li_dt_dd_are_inline():
    html = page("<div>one<br>two<br><br>three</div><ul><li><p>x</p></li><li>y</li></ul><dl><dt>t</dt><dd><p>d</p></dd></dl>")
    assert blocks(html) == [
        '<div _item_id="1">one<br>two<br><br>three</div>',
        '<ul _item_id="2"><li><p>x</p></li><li>y</li></ul>',
        '<dl _item_id="3"><dt>t</dt><dd><p>d</p></dd></dl>',
    ]


def test_block_rule_looks_at_direct_children_only():
    # The section's only child is inline, so the whole section is one block although a <p> is nested.
    html = page("<section><span>a <p>nested</p></span></section><div><p>p1</p><p>p2</p></div>")
    assert [b.tag for b in simplify_v1(html).blocks] == ["section", "p", "p"]
    assert [b.tag for b in simplify(html).blocks][:2] != ["section", "p"]


def test_data_tables_split_into_rows_and_layout_tables_into_cells():
    html = page(
        "<table><thead><tr><th>h1</th><th>h2</th></tr></thead><tr><td>a</td><td>b</td></tr></table>"
        '<table summary="s"><tr><td>c</td></tr></table>'
        "<table><tr><td>l1</td><td>l2</td></tr></table>"
    )
    got = blocks(html)
    assert got == [
        '<tr _item_id="1"><th>h1</th><th>h2</th></tr>',
        '<tr _item_id="2"><td>a</td><td>b</td></tr>',
        '<tr _item_id="3"><td>c</td></tr>',
        '<td _item_id="4">l1</td>',
        '<td _item_id="5">l2</td>',
    ]


def test_truncation_caps_each_text_node_at_200():
    html = page("<p>" + "a" * 250 + "<b>" + "b" * 10 + "</b>" + "c" * 300 + "</p>")
    got = blocks(html)[0]
    assert got == '<p _item_id="1">' + "a" * 200 + "...<b>" + "b" * 10 + "</b>" + "c" * 200 + "...</p>"
    assert simplify_v1(html, cutoff_length=5).blocks[0].text.startswith("aaaaa...")


def test_loose_body_run_reads_back_as_span_or_div():
    # v1.1 drops loose text under <body>; lxml.html.fromstring (v1.0) keeps it under a span/div.
    assert blocks(CASES["body_level_text_is_lost"])[0] == '<span _item_id="1">loose text<a>link</a></span>'
    assert blocks("<html><body>t<table><tr><td>x</td></tr></table>u<b>b</b></body></html>")[-1].startswith("<span")
    assert [b.text for b in simplify(CASES["body_level_text_is_lost"]).blocks] == ["para", "only link"]


def test_reconstruction_unescapes_everything_and_recalls_no_br():
    html = page('<div><p>a &lt;b&gt; &amp; c</p><br><p><a href="/x?a=1&amp;b=2">l</a></p></div>')
    v1 = simplify_v1(html)
    out = all_main(v1)
    assert "a <b> & c" in out and 'href="/x?a=1&b=2"' in out
    assert "<br>" not in out
    v11 = simplify(html)
    out11 = all_main(v11)
    assert "a &lt;b&gt; &amp; c" in out11 and "<br>" in out11 and 'href="/x?a=1&amp;b=2"' in out11


def test_profiles_by_name():
    assert simplify_profile("dripper-v1") is DRIPPER_V1 and simplify_profile("mineru-v1.1") is MINERU_V11
    assert simplify("<p>x</p>").page_map.profile is MINERU_V11
    assert simplify_v1("<p>x</p>").page_map.profile is DRIPPER_V1
