"""The items of one list take one label: kept when the model kept at least half of them.

A listing page, a category page or a product grid writes its entries as the items of one list (``<li>``), each
item the same few blocks: a title, a line of text, a price or a date. The model scores each block with the
blocks around it, and in a long list some entries fall below the page's cut while the entries around them,
written the same way, are kept: a listing loses every third headline. Blocks of one list that have the same
shape (the same tag path: the same place in their items) are one group, and when the model kept at least half
of a group, the whole group is kept. A group of fewer than :data:`MIN_ITEMS` items is left as the model labelled
it (a short list is as often a menu as content), and so is a group the model mostly dropped (a menu, a list of
related links: nothing is taken out here).

Chosen on the tune pages (train-only models of the shipped recipe): see docs/models.md, "The items of one
list take one label".
"""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.dom import enclosing_element
from extract_trt.runtime.types import PageBlocks

__all__ = ["MIN_ITEMS", "join_list_items", "list_item_groups"]

MIN_ITEMS = 6  # items of one list with blocks of one shape, at least: a group
_ITEM = frozenset({"li"})
KEEP_SHARE = 0.5  # of a group's blocks kept by the model, at least: the group is kept


def list_item_groups(page: PageBlocks) -> list[list[int]]:
    """The block indices of each group: blocks with one tag path in the items of one list, from
    :data:`MIN_ITEMS` or more items, in page order."""
    nodes = page.page_map.id_nodes
    memo: dict = {}
    groups: dict[tuple[int, str], list[int]] = {}
    items: dict[tuple[int, str], set[int]] = {}
    for i, block in enumerate(page.blocks):
        if ">li" not in block.tag_path:  # a substring test first: most blocks of most pages are in no list
            continue
        item = enclosing_element(nodes.get(block.item_id), _ITEM, memo)
        if item is None or item.parent is None:
            continue
        key = (id(item.parent), block.tag_path)
        groups.setdefault(key, []).append(i)
        items.setdefault(key, set()).add(id(item))
    return [members for key, members in groups.items() if len(items[key]) >= MIN_ITEMS]


def join_list_items(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """``main`` with every group of list items kept whose blocks the model kept at least
    :data:`KEEP_SHARE` of."""
    joined = main.copy()
    for members in list_item_groups(page):
        labels = main[members]
        if not labels.all() and labels.mean() >= KEEP_SHARE:
            joined[members] = True
    return joined
