"""A page's skeleton tables read as divs by the block model (runtime/labelers/layout_tables.py)."""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.simplify import MAX_PATH_TAGS, simplify
from extract_trt.runtime.labelers import block_model
from extract_trt.runtime.labelers.block_model import BlockModelLabeler
from extract_trt.runtime.labelers.features import page_features
from extract_trt.runtime.labelers.layout_tables import SKELETON_ROWS, skeleton_tables_as_divs

MENU = "<a href='/a'>Home</a><br><a href='/b'>World news</a><br><a href='/c'>Sport results</a>"
STORY = "<h1>Council votes on the new bridge</h1><p>" + "The council voted on Tuesday to build it. " * 6 + "</p>"
POLL = "<b>Poll</b><p>Should the bridge have a toll for every car and truck?</p>"


def _divs(menu: str, story: str, poll: str) -> str:
    return (
        f"<html><body><div id='page'><div class='menu'>{menu}</div><div class='story'>{story}</div>"
        f"<div class='poll'>{poll}</div></div></body></html>"
    )


def _tables(menu: str, story: str, poll: str) -> str:
    """The same page with its columns as one layout table's cells (the way bench/era_pages.py writes it)."""
    return (
        f"<html><body><table id='page'><tr><td class='menu'>{menu}</td><td class='story'>{story}</td>"
        f"<td class='poll'>{poll}</td></tr></table></body></html>"
    )


def _partition(blocks, level: int) -> list[frozenset[int]]:
    groups: dict[int, set[int]] = {}
    for i, b in enumerate(blocks):
        if len(b.containers) > level:
            groups.setdefault(b.containers[level], set()).add(i)
    return sorted(map(frozenset, groups.values()), key=min)


def test_a_skeleton_table_reads_as_the_same_page_written_with_divs():
    divs, tables = simplify(_divs(MENU, STORY, POLL)), simplify(_tables(MENU, STORY, POLL))
    assert [b.text for b in divs.blocks] == [b.text for b in tables.blocks]
    assert any(">tr>td" in b.tag_path for b in tables.blocks)
    seen = skeleton_tables_as_divs(tables)
    assert [(b.tag, b.tag_path, b.depth) for b in seen.blocks] == [(b.tag, b.tag_path, b.depth) for b in divs.blocks]
    for level in range(3):
        assert _partition(seen.blocks, level) == _partition(divs.blocks, level)
    # only the model's view changes: the page's own blocks are untouched
    assert any(">tr>td" in b.tag_path for b in tables.blocks)
    assert [b.text for b in seen.blocks] == [b.text for b in tables.blocks]


def test_a_table_of_many_rows_stays_a_table():
    rows = "".join(f"<tr><td><b>user{i}</b></td><td><div>Post number {i} of the thread, with text.</div></td></tr>"
                   for i in range(SKELETON_ROWS + 1))  # fmt: skip
    page = simplify(f"<html><body><div id='thread'><table>{rows}</table></div></body></html>")
    seen = skeleton_tables_as_divs(page)
    assert [b.tag_path for b in seen.blocks] == [b.tag_path for b in page.blocks]
    assert all(">table>tbody>tr>td" in b.tag_path for b in seen.blocks)
    for level in range(6):
        assert _partition(seen.blocks, level) == _partition(page.blocks, level)


def test_a_data_table_inside_a_skeleton_stays_a_table():
    data = "<table><tr><th>Year</th><th>Cars</th></tr><tr><td>2009</td><td>1,204</td></tr></table>"
    page = simplify(_tables(MENU, STORY + data, POLL))
    (table,) = [b for b in page.blocks if b.tag == "table"]
    seen = skeleton_tables_as_divs(page)
    (seen_table,) = [b for b, orig in zip(seen.blocks, page.blocks) if orig is table]
    assert seen_table.tag == "table" and seen_table.tag_path.endswith(">div>table")


def test_a_deep_page_in_a_skeleton_is_read_with_capped_paths():
    # the view caps its paths as the simplifier does, so 2,000 levels under a skeleton cell stay linear
    deep = "".join(f"<blockquote><p>level {i}</p>" for i in range(2000))
    page = simplify(_tables(MENU, deep, POLL))
    seen = skeleton_tables_as_divs(page)
    pairs = [(orig, block) for orig, block in zip(page.blocks, seen.blocks) if orig.text.startswith("level")]
    assert len(pairs) == 2000
    for orig, block in pairs:
        tags = block.tag_path.split(">")
        assert len(tags) <= MAX_PATH_TAGS + 1 and tags[-2:] == ["blockquote", "p"]
        assert tags[:5] == ["html", "body", "div", "div", "blockquote"]  # the table and its cell read as divs
        assert block.depth == orig.depth - 2  # tbody and tr left out


def test_a_page_without_layout_tables_is_returned_as_it_is():
    page = simplify(_divs(MENU, STORY, POLL))
    assert skeleton_tables_as_divs(page) is page


def test_the_labeler_reads_the_skeleton_as_divs_unless_told_not_to(monkeypatch):
    tables = simplify(_tables(MENU, STORY, POLL))
    divs = simplify(_divs(MENU, STORY, POLL))
    read: list = []

    def spy(page):
        read.append(page)
        return page_features(page)

    monkeypatch.setattr(block_model, "page_features", spy)
    on, off = BlockModelLabeler(), BlockModelLabeler(skeleton_tables=False)
    p_on, p_div = on.probabilities(tables), on.probabilities(divs)
    p_off = off.probabilities(tables)
    assert [b.tag_path for b in read[0].blocks] == [b.tag_path for b in divs.blocks]
    assert read[2] is tables
    np.testing.assert_allclose(p_on, p_div, atol=0.005)  # same text, same view (the blocks' own HTML differs by a tag)
    assert not np.allclose(p_on, p_off)


def test_a_2010_news_page_loses_its_menu_column_and_masthead():
    # a page laid out the way news sites were in 2010: masthead row, a row of columns (a menu of links cut at
    # <br>, the story, a headlines column), footer row; the shipped model keeps the menu read as table cells
    sections = ["Home", "World", "Business", "Sport results", "Weather", "Entertainment", "Opinion", "Contact us"]
    links = "<br>".join(f"<a href='/{i}'>{t}</a>" for i, t in enumerate(sections))
    story = "<h1>Council votes on the new bridge</h1>" + "".join(
        f"<p>The council voted on Tuesday to build the bridge across the river, paragraph {i}, with more words.</p>"
        for i in range(6)
    )
    page = simplify(
        "<html><body><table width='770'><tr><td colspan=3>The Daily Town</td></tr>"
        f"<tr><td width='160' valign='top'>{links}</td><td valign='top'>{story}</td><td>Weather: sunny</td></tr>"
        "<tr><td colspan=3>Copyright 2010 The Daily Town</td></tr></table></body></html>"
    )
    texts = [b.text for b in page.blocks]
    menu = [texts.index(t) for t in ("Home", "World", "Business", "Sport results")]
    paragraphs = [i for i, t in enumerate(texts) if t.startswith("The council voted")]
    as_is = BlockModelLabeler(skeleton_tables=False).label([page])[0].main
    seen = BlockModelLabeler().label([page])[0].main
    assert as_is[menu].sum() >= 3 and as_is[texts.index("The Daily Town")]
    assert not seen[menu].any() and not seen[texts.index("The Daily Town")]
    assert seen[paragraphs].all() and as_is[paragraphs].all()
