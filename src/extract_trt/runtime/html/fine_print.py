"""Disclaimers: fine print that a page marks as such is not its main content.

Affiliate notes ("Purchases made through links on this page may earn us a commission"), legal and tax fine
print, "Data as of post date" notes: pages wrap them in an element named for it (``disclaimer``,
``aawp-disclaimer``, ``disclaimer__text``, ``txt-disclaimer``). The labeler sees a sentence of prose in
the article's column and often keeps it; the ground truths here almost never do (on the training and tune
pages, 6,971 words in such elements are boilerplate, on 88 pages, and 348 content, on 4). A block is fine
print when one of the :data:`LEVELS` nearest elements with a class or id, from the block's own up (at most
:data:`MAX_WALK` elements), has ``disclaimer`` (or ``disclaimers``) as a word of its class or id. Farther up,
the name is more often a WordPress post's taxonomy term on the article element itself, so it is not looked
for there, nor in a post's class list (``hentry``, ``status-publish``) or a ``tag-``/``category-`` class.
Called after the labeler, like the comment sections.
"""

from __future__ import annotations

import re

import numpy as np

from extract_trt.runtime.html.comments import is_taxonomy_class, is_wordpress_post
from extract_trt.runtime.types import Block, PageBlocks

__all__ = ["fine_print_mask"]

LEVELS = 3  # named elements looked at, the block's own first
MAX_WALK = 12  # elements walked up at most, named or not (bounds the cost under deep unnamed nesting)
_WORD = re.compile(r"[a-z]+")
_NAMES = frozenset({"disclaimer", "disclaimers"})


def _names_fine_print(names: str) -> bool:
    names = names.lower()
    if "disclaimer" not in names or is_wordpress_post(names):
        return False
    return any(
        word in _NAMES for name in names.split() if not is_taxonomy_class(name) for word in _WORD.findall(name)
    )


def is_fine_print(page: PageBlocks, block: Block) -> bool:
    """Whether ``block`` lies in an element named as a disclaimer (see the module docstring)."""
    # the names of the block's element and its nearest named ancestors are at hand: most blocks stop here
    if "disclaimer" not in f"{block.classes} {block.element_id} {block.ancestor_names}".lower():
        return False
    node = page.page_map.id_nodes.get(block.item_id)
    named = walked = 0
    while node is not None and named < LEVELS and walked < MAX_WALK:
        walked += 1
        attrs = node.attrs
        if "class" in attrs or "id" in attrs:
            named += 1
            if _names_fine_print(f"{attrs.get('class', '')} {attrs.get('id', '')}"):
                return True
        node = node.parent
    return False


def fine_print_mask(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """Per block, whether it is a main block of fine print."""
    return np.fromiter(
        (bool(keep) and is_fine_print(page, block) for block, keep in zip(page.blocks, main)),
        dtype=bool,
        count=len(main),
    )
