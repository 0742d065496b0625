"""The items of one list take one label: a group of list items the model mostly kept is kept whole."""

from __future__ import annotations

import numpy as np

from extract_trt import simplify
from extract_trt.runtime.labelers.list_items import MIN_ITEMS, join_list_items, list_item_groups


def _listing(n: int, tag: str = "ul") -> str:
    return (
        f"<{tag}>"
        + "".join(
            f"<li><h3><a href='/jobs/{i}'>Senior engineer, team {i}</a></h3><p>Remote, full time, posted {i} days ago</p></li>"
            for i in range(n)
        )
        + f"</{tag}>"
    )


def _page(body: str):
    return simplify(f"<html><body><h1>Remote jobs</h1>{body}<footer><p>About us</p></footer></body></html>")


def test_a_listing_the_model_mostly_kept_is_kept_whole():
    page = _page(_listing(8))
    groups = list_item_groups(page)
    assert [len(g) for g in groups] == [8, 8]  # the titles, the lines under them
    titles, lines = groups
    main = np.zeros(len(page.blocks), dtype=bool)
    main[titles[:5]] = True  # five titles of eight, every line under them
    main[lines] = True
    joined = join_list_items(page, main)
    assert joined[titles].all() and joined[lines].all()
    assert not joined[0] and not joined[-1]  # the page's title and footer are no list items: as they were


def test_a_list_the_model_mostly_dropped_and_a_short_list_stay_as_labelled():
    page = _page(_listing(8))
    titles, lines = list_item_groups(page)
    main = np.zeros(len(page.blocks), dtype=bool)
    main[titles[:3]] = True  # three of eight: a menu or related links, nothing is added
    assert (join_list_items(page, main) == main).all()
    short = _page(_listing(MIN_ITEMS - 1))
    assert list_item_groups(short) == []
    kept = np.zeros(len(short.blocks), dtype=bool)
    kept[1:4] = True
    assert (join_list_items(short, kept) == kept).all()


def test_two_lists_are_two_groups_and_a_paragraph_outside_them_is_in_none():
    page = _page(_listing(6) + "<p>Between the lists, a paragraph of its own.</p>" + _listing(6, "ol"))
    groups = list_item_groups(page)
    assert len(groups) == 4 and all(len(g) == 6 for g in groups)
    between = next(i for i, b in enumerate(page.blocks) if b.text.startswith("Between"))
    assert all(between not in g for g in groups)
    main = np.zeros(len(page.blocks), dtype=bool)
    main[groups[0][:4]] = True  # four of six titles of the first list
    joined = join_list_items(page, main)
    assert joined[groups[0]].all() and not joined[groups[2]].any()  # the second list's titles: not joined to it


def test_the_labeler_joins_list_items_unless_told_not_to(monkeypatch):
    from extract_trt.runtime.labelers.block_model import BlockModelLabeler

    page = _page(_listing(8))
    titles, lines = list_item_groups(page)
    p = np.full(len(page.blocks), 0.9, dtype=np.float32)
    p[titles[5:]] = 0.05  # three titles the model scored as boilerplate
    p[-1] = 0.01  # the footer
    for list_items, expected in ((True, True), (False, False)):
        labeler = BlockModelLabeler(list_items=list_items)
        monkeypatch.setattr(labeler, "probabilities", lambda _page: p)
        (labels,) = labeler.label([page])
        assert labels.main[titles].all() == expected
        assert labels.main[lines].all() and not labels.main[-1]
