"""Each simplifier rule on a small hand-written page, checked against expected strings and, when the
reference (pulpie 0.0.2) is installed, against the reference itself."""

from __future__ import annotations

import numpy as np
import pytest

from extract_trt.runtime.html.reconstruct import reconstruct
from extract_trt.runtime.html import dom
from extract_trt.runtime.html.simplify import (
    MAX_NAME_CHARS,
    MAX_PATH_TAGS,
    MINERU_V11,
    MINERU_V11_WITH_HIDDEN,
    PATH_GAP,
    simplify,
    table_region,
)
from extract_trt.runtime.types import Labels

import oracle

REF = oracle.load()


def blocks(html: str) -> list[str]:
    return [b.html for b in simplify(html).blocks]


def page(body: str) -> str:
    return f"<html><head><title>t</title></head><body>{body}</body></html>"


CASES = {
    "toy": page(
        '<div id="main" class="content" data-x="1" style="color:red"><h1>Hello <b>World</b></h1>\n'
        '<p>First paragraph with <a href="http://e.com/?a=1&amp;b=2">a link</a>.</p> Loose tail text<br>more text\n'
        "<ul><li>one</li><li>two</li><li>three</li><li>four</li></ul><table><tr><td>cell1</td><td>cell2</td></tr></table>\n"
        '<img src="data:image/png;base64,AAAA"><img src="/pic.jpg" alt="pic"><div style="display: none">hidden</div></div>'
        '<footer>Copyright</footer><nav>n</nav><div class="nav">x</div>'
    ),
    "removed_tags_and_tails": page("<div><p>a</p><script>s</script>lost tail<style>x</style><iframe></iframe><p>b</p></div>"),
    "hidden_keeps_tail": page('<div><b>x</b><span style="display:none">h</span> kept tail<p>p</p></div>'),
    "hidden_styles": page(
        '<div><p style="opacity: 0">a</p><p style="opacity:0.0">b</p><p style="visibility:hidden">c</p>'
        '<p style="font-size:0px">d</p><p style="color: transparent">e</p><p>f</p></div>'
    ),
    "closed_details": page("<details><summary>S</summary><p>hidden</p></details><details open><p>shown</p></details>"),
    "nav_class_only_under_body": page('<div class="nav">top</div><div><div class="nav">inner</div></div><div id="nav">i</div>'),
    "data_vs_layout_table": page(
        "<table><caption>c</caption><tr><td><div>x</div></td></tr></table>"
        "<table><tr><td><div>layout 1</div></td><td>layout 2</td></tr></table>"
        "<table><tr><td>data <b>1</b></td><td>2<br>3</td></tr></table>"
    ),
    "content_vs_layout_list": page(
        "<ul><li>a</li><li>b</li><li>c</li></ul><ul><li><p>x</p></li><li>y</li></ul>"
        "<dl><dt>t1</dt><dd>d1</dd><dt>t2</dt><dd>d2</dd><dt>t3</dt><dd>d3</dd></dl>"
    ),
    "br_ends_paragraph": page("<div>one<br>two<br><br>three <b>bold</b><br></div>"),
    "duplicate_text_runs": page("<div>Share<p>a</p>Share<p>b</p>Share</div>"),
    "truncation": page("<p>" + "word " * 150 + "<b>bold</b> tail</p><table><tr><td>" + "t" * 600 + "</td></tr></table>"),
    "truncation_skips_math": page("<p><math><mi>" + "x" * 600 + "</mi></math>" + "y" * 30 + "</p>"),
    "whitespace_collapse": page("<pre>a\n\n   b\tc</pre><p>  x\u00a0 y  </p>"),
    "body_level_text_is_lost": "<html><body>loose text<a href='#'>link</a><p>para</p><a href='/only'>only link</a></body></html>",
    "inline_container_with_block": page("<a href='/x'><div>block in link</div>tail text</a>"),
    "images": page('<p><img src="  /a.png "><img src="data:image/gif;base64,R0"><img alt="only alt"></p><div><img src=""> text</div>'),
    "empty_blocks_skipped": page("<div><p> </p><p></p><span></span></div><p>real</p>"),
    "lists_in_layout_cells": page("<table><tr><td><ul><li>1</li><li>2</li><li>3</li><li>4</li></ul></td><td><div>z</div></td></tr></table>"),
    "picture_source": page('<picture><source srcset="a.webp"><img src="a.jpg" alt="pic"></picture><p>x</p>'),
    "svg_xlink": page('<p>text<svg xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="#i"></use></svg></p>'),
    "template": page('<template><div><p>in template</p></div></template><p>after</p>'),
    "entities_and_attrs": page('<p class=" a  b " id="x&amp;y" data-q="1">a &amp; b &lt; c &gt; d "q"</p><img src="/a b.png" alt="x&quot;y">'),
    "cc_select": page('<div><p cc-select="true">kept</p>loose<b>bold</b></div>'),
}


def test_toy_page_matches_spec_example():
    got = simplify(CASES["toy"])
    assert [b.html for b in got.blocks] == [
        '<h1 _item_id="1">Hello <b>World</b></h1>',
        '<p _item_id="2">First paragraph with <a>a link</a>.</p>',
        '<div class="content" id="main" _item_id="3">Loose tail text<br></div>',
        '<div class="content" id="main" _item_id="4">more text</div>',
        '<ul _item_id="5"><li>one</li><span>...</span><li>four</li></ul>',
        '<table _item_id="6"><tbody><tr><td>cell1</td><td>cell2</td></tr></tbody></table>',
        '<div class="content" id="main" _item_id="7"><img><img src="/pic.jpg" alt="pic"></div>',
        '<footer _item_id="8">Copyright</footer>',
    ]
    assert got.simplified_html.startswith('<html><head><meta charset="utf-8"></head><body><h1 _item_id="1">')
    assert '<cc-alg-uc-text _item_id="3">' in got.map_html and "<nav>n</nav>" in got.map_html


def test_rules_on_small_pages():
    assert blocks(CASES["removed_tags_and_tails"]) == ['<p _item_id="1">a</p>', '<p _item_id="2">b</p>']
    assert blocks(CASES["hidden_keeps_tail"])[0] == '<div _item_id="1"><b>x kept tail</b></div>'
    texts = [b.text for b in simplify(CASES["hidden_styles"]).blocks]
    assert texts == ["b", "f"]
    assert [b.text for b in simplify(CASES["closed_details"]).blocks] == ["S", "shown"]
    assert [b.text for b in simplify(CASES["nav_class_only_under_body"]).blocks] == ["inner"]
    tables = blocks(CASES["data_vs_layout_table"])
    assert tables[0].startswith('<table _item_id="1"><caption>c</caption>')
    assert '<div _item_id="2">layout 1</div>' in tables and '<td _item_id="3">layout 2</td>' in tables
    assert tables[-1] == '<table _item_id="4"><tbody><tr><td>data <b>1</b></td><td>2<br>3</td></tr></tbody></table>'
    lists = blocks(CASES["content_vs_layout_list"])
    assert lists[0] == '<ul _item_id="1"><li>a</li><span>...</span><li>c</li></ul>'
    assert lists[1:3] == ['<p _item_id="2">x</p>', '<li _item_id="3">y</li>']
    assert lists[3] == '<dl _item_id="4"><dt>t1</dt><dd>d1</dd><span>...</span><dt>t3</dt><dd>d3</dd></dl>'
    assert blocks(CASES["br_ends_paragraph"]) == [
        '<div _item_id="1">one<br></div>',
        '<div _item_id="2">two<br></div>',
        '<div _item_id="3">three<b>bold</b><br></div>',  # leading run text is stripped
    ]
    assert [b.text for b in simplify(CASES["duplicate_text_runs"]).blocks] == ["Share", "a", "b"]
    trunc = simplify(CASES["truncation"]).blocks
    assert trunc[0].html.endswith('word ...<b></b></p>')  # the overflowing text node is cut, later text cleared
    assert "t" * 600 in trunc[1].html
    assert blocks(CASES["whitespace_collapse"]) == ['<pre _item_id="1">a b c</pre>', '<p _item_id="2"> x y </p>']
    assert [b.text for b in simplify(CASES["body_level_text_is_lost"]).blocks] == ["para", "only link"]
    assert blocks(CASES["empty_blocks_skipped"]) == ['<p _item_id="1">real</p>']


@pytest.mark.skipif(REF is None, reason="reference simplifier (pulpie 0.0.2) not installed")
@pytest.mark.parametrize("name", sorted(CASES))
def test_small_pages_match_reference(name):
    html = CASES[name]
    ref_simple, ref_map = REF.simplify(html)
    ours = simplify(html)
    assert oracle.normalize(ours.simplified_html) == oracle.normalize(ref_simple)
    assert oracle.normalize(ours.map_html) == oracle.normalize(ref_map)
    for pattern in (lambda i: True, lambda i: i % 2 == 0, lambda i: i == 1):
        main = np.array([pattern(b.item_id) for b in ours.blocks], dtype=bool)
        ref_labels = {str(b.item_id): "main" if m else "other" for b, m in zip(ours.blocks, main)}
        assert oracle.normalize(reconstruct(ours, Labels(main, "t"))) == oracle.normalize(
            REF.extract_main_html(ref_map, ref_labels)
        )


def test_ids_are_contiguous_and_blocks_carry_features():
    got = simplify(CASES["toy"])
    assert [b.item_id for b in got.blocks] == list(range(1, len(got.blocks) + 1))
    para = got.blocks[1]
    assert para.tag == "p" and para.text == "First paragraph with a link."
    assert para.link_text_length == len("a link")
    assert para.tag_path == "html>body>div>p" and para.depth == 3


def test_blocks_number_their_nearest_containers():
    """Blocks under the same element share its number at that level; numbers are the same on every run
    (first met, first numbered), and a block keeps at most six levels."""
    html = (
        "<html><body><div id=post><p>one</p><p>two</p></div>"
        "<section><div><p>three</p></div><div><p>four</p></div></section></body></html>"
    )
    blocks = {b.text: b.containers for b in simplify(html).blocks}
    assert blocks["one"] == blocks["two"] and len(blocks["one"]) == 3  # div#post, body, html
    assert len(blocks["three"]) == len(blocks["four"]) == 4  # div, section, body, html
    assert blocks["three"][0] != blocks["four"][0] and blocks["three"][1:] == blocks["four"][1:]
    assert blocks["one"][0] not in blocks["three"][:2]
    assert blocks["one"][1:] == blocks["three"][2:]  # body, html
    assert {b.text: b.containers for b in simplify(html).blocks} == blocks
    deep = simplify("<div>" * 20 + "<p>deep</p>" + "</div>" * 20).blocks[0]
    assert len(deep.containers) == 6 and len(set(deep.containers)) == 6


def test_deep_nesting_does_not_recurse():
    # <span> nesting: Lexbor itself needs time quadratic in depth for 100,000 nested <div>s (seconds),
    # while our tree code must just not recurse. The span holding a <p> makes every level a block parent.
    html = "<div>" + "<span>" * 100_000 + "<p>deep text</p>" + "</span>" * 100_000 + "</div>"
    got = simplify(html)
    assert got.blocks and got.blocks[-1].text == "deep text"
    main = Labels(np.ones(len(got.blocks), dtype=bool), "t")
    assert "deep text" in reconstruct(got, main)


def test_nested_tables_are_each_read_once():
    # Each table's data/layout test reads only what it owns, so nested tables cost one pass in all (read
    # whole per table, 5,000 nested tables took the page's 30 s budget); a caption decides its own table only.
    html = "<table><tr><td>" * 300 + "<table><caption>c</caption><tr><td>x</td></tr></table>"
    root = dom.parse(html)
    tables = [node for node in dom.iter_tree(root, processing=True) if node.tag == "table"]
    below_outer = sum(1 for _ in dom.iter_tree(tables[0], processing=True)) - 1
    assert sum(sum(1 for _ in table_region(table)) for table in tables) == below_outer
    data = {id(t): MINERU_V11.is_data_table(t) for t in tables}
    assert [data[id(t)] for t in tables] == [False] * 300 + [True]
    blocks = simplify(html + "<p>after</p>").blocks
    assert [b.text for b in blocks][-1] == "after" and any(b.tag == "table" for b in blocks)


def test_tag_paths_of_deep_pages_keep_head_and_tail():
    """A block's tag path names at most MAX_PATH_TAGS tags (+ the gap): 3,000 nested quotes would otherwise
    carry 3,000 paths of up to 33 KB each. Depth stays exact; shallow paths are whole."""
    html = "<main>" + "".join(f"<blockquote><p>level {i}</p>" for i in range(3000)) + "<pre>code</pre>"
    blocks = simplify(html).blocks
    assert [b.depth for b in blocks[:3]] == [4, 5, 6] and blocks[-1].depth == 3003
    assert blocks[0].tag_path == "html>body>main>blockquote>p"
    tags = [b.tag_path.split(">") for b in blocks]
    assert max(len(t) for t in tags) == MAX_PATH_TAGS + 1
    for path in tags[MAX_PATH_TAGS:]:
        assert path[:4] == ["html", "body", "main", "blockquote"] and path.count(PATH_GAP) == 1
    assert tags[-1][-2:] == ["blockquote", "pre"] and tags[-2][-2:] == ["blockquote", "p"]


def test_blocks_keep_a_bounded_part_of_long_class_and_id_values():
    # each block's own and its ancestors' names are searched per block (comment sections, fine print)
    long = "x" * (2 * MAX_NAME_CHARS)
    blocks = simplify(f'<div class="comments {long}" id="{long}">' + "<p>a</p>" * 3 + "</div>").blocks
    assert len(blocks) == 3
    assert all(b.ancestor_names == f"comments {long}"[:MAX_NAME_CHARS] + " " + long[:MAX_NAME_CHARS] for b in blocks)
    (own,) = simplify(f'<p class="{long}" id="{long}">a</p>').blocks
    assert own.classes == own.element_id == long[:MAX_NAME_CHARS]
    # blocks with the same named ancestors share one string, whatever unnamed parents lie between
    blocks = simplify("".join(f'<div class="{i}{long}">' for i in range(8)) + "<div><p>a</p></div>" * 3).blocks
    assert len(blocks) == 3 and blocks[0].ancestor_names == " ".join(f"{i}{long}"[:MAX_NAME_CHARS] + " " for i in range(7, -1, -1))
    assert blocks[0].ancestor_names is blocks[1].ancestor_names is blocks[2].ancestor_names


@pytest.mark.parametrize("html", ["", "   ", "\x00\x01binary\xff", "<html>", "<p>unclosed <b>markup", "<<<>>>", "no tags at all"])
def test_bad_input_gives_blocks_or_nothing(html):
    got = simplify(html)
    assert got.simplified_html.startswith("<html>")
    assert all(b.item_id == i + 1 for i, b in enumerate(got.blocks))


def _texts(html: str, profile) -> list[str]:
    return [b.text for b in simplify(html, profile=profile).blocks]


def test_with_hidden_profile_keeps_what_the_reference_drops_as_invisible():
    """MINERU_V11_WITH_HIDDEN keeps the elements the reference drops for an invisible inline style or a closed
    ``<details>`` (tab panels, accordions, fade-ins; menus too — the model tells them apart) and still drops
    ``nav`` markers under ``<body>``; everything else segments as the reference."""
    article = "".join(f"<p>Paragraph {i} of the article.</p>" for i in range(3))
    html = page(
        '<div class="nav">Skip</div><div class="page-wrapper" style="opacity:0"><div class="menu">Home'
        f'<div style="display:none">Dropdown</div></div><article>{article}</article></div>'
        '<div class="tabs"><div style="display: none">Specs tab</div></div>'
        "<details><summary>Question</summary><p>Answer</p></details><footer>Footer line</footer>"
    )
    assert _texts(html, MINERU_V11) == ["Question", "Footer line"]
    assert _texts(html, MINERU_V11_WITH_HIDDEN) == [
        "Home", "Dropdown", "Paragraph 0 of the article.", "Paragraph 1 of the article.",
        "Paragraph 2 of the article.", "Specs tab", "Question", "Answer", "Footer line",
    ]  # fmt: skip
    assert [b.text for b in simplify(CASES["hidden_styles"], profile=MINERU_V11_WITH_HIDDEN).blocks] == list("abcdef")


def test_with_hidden_profile_reconstructs_the_hidden_blocks():
    html = page('<div style="opacity: 0"><h1>Title</h1><p>Body text of the page.</p></div><p>x</p>')
    got = simplify(html, profile=MINERU_V11_WITH_HIDDEN)
    assert [b.text for b in got.blocks] == ["Title", "Body text of the page.", "x"]
    main = reconstruct(got, Labels(np.array([True, True, False]), "t"))
    assert "Body text of the page." in main and "<h1" in main


@pytest.mark.parametrize("name", sorted(set(CASES) - {"toy", "hidden_keeps_tail", "hidden_styles", "closed_details"}))
def test_with_hidden_profile_is_the_reference_without_invisible_elements(name):
    ours = simplify(CASES[name], profile=MINERU_V11_WITH_HIDDEN)
    ref = simplify(CASES[name])
    assert ours.simplified_html == ref.simplified_html and ours.map_html == ref.map_html
