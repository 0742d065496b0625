"""What follows a page's content container is not its main content.

A page's main content lies in one element: the article's body, the docs page's column, the listing's grid. A
labeler that scores block by block keeps some of what comes after that element — a "Related posts" list, a
"References" or "Frequently asked questions" box of the site's template, an author's other products, reader
comments with no comment markup — because each such block reads like content on its own. The page's
**content container** is the deepest element that holds at least :data:`CONTAINER_SHARE` of the main text
(after comments, teasers and fine print are taken out); the main blocks after it, outside it, are dropped.
Blocks before it stay: the title, byline and standfirst of an article often sit in a header above its body.

With their ground truth's labels, the wcxb-dev pages outside the validation domains hold 0.1-0.7 % of a page
type's main words after such an element (on 55 of 1,132 pages). Chosen on the tune pages with three train-only
models: word F1 +0.0015 to +0.0020; a share of 0.8 or 0.9 gained less on one seed each (docs/models.md). Not on
a page that declares itself a forum thread or Q&A page (as for the comment sections): a long first post can hold
85 % of a thread's text, and the replies after it are content. Called after the labeler, like the comment
sections, so it applies to every labeler.
"""

from __future__ import annotations

import numpy as np

from extract_trt.runtime.html.dom import Node, up_to_memo
from extract_trt.runtime.types import PageBlocks

__all__ = ["CONTAINER_SHARE", "after_content_mask", "content_container"]

CONTAINER_SHARE = 0.85


def content_container(page: PageBlocks, main: np.ndarray) -> Node | None:
    """The deepest element that holds :data:`CONTAINER_SHARE` of the text of the ``main`` blocks (``None``:
    no main text, or no element holds that share: blocks whose elements share no root). Each element is walked
    once: the blocks' text is added to their own elements, then each element's to its parent's, deepest first."""
    nodes = page.page_map.id_nodes
    blocks = page.blocks
    mass: dict[Node, int] = {}
    depth: dict[Node, int] = {}  # per element above a main block
    total = 0
    for i in np.flatnonzero(main):
        node = nodes.get(blocks[i].item_id)
        if node is None:
            continue
        chars = len(blocks[i].text)
        total += chars
        mass[node] = mass.get(node, 0) + chars
        path, above = up_to_memo(node, depth)
        top = -1 if above is None else above
        for level, element in enumerate(path, top + 1):
            depth[element] = level
    if not total:
        return None
    for element in sorted(depth, key=depth.__getitem__, reverse=True):
        if element.parent is not None:
            mass[element.parent] = mass.get(element.parent, 0) + mass.get(element, 0)
    needed = CONTAINER_SHARE * total
    return max((element for element in depth if mass.get(element, 0) >= needed), key=depth.__getitem__, default=None)


def after_content_mask(page: PageBlocks, main: np.ndarray, thread: bool = False) -> np.ndarray:
    """Per block, whether it is a main block after the page's content container (:func:`content_container`)
    and outside it. None on a page that declares itself a thread (``thread``: a forum topic or Q&A page,
    :func:`~extract_trt.runtime.html.declared.declares_thread`), whose replies after a long first post are
    the page as much as the post is."""
    after = np.zeros(len(main), dtype=bool)
    container = None if thread else content_container(page, main)
    if container is None:
        return after
    nodes = page.page_map.id_nodes
    memo: dict[Node, bool] = {container: True}  # per element walked: whether it is in the container
    inside = np.zeros(len(main), dtype=bool)
    for i in np.flatnonzero(main):
        path, above = up_to_memo(nodes.get(page.blocks[i].item_id), memo)
        for node in path:
            memo[node] = bool(above)
        inside[i] = bool(above)
    last = int(np.flatnonzero(inside)[-1])
    after[last + 1 :] = main[last + 1 :] & ~inside[last + 1 :]
    return after
