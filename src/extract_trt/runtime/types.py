"""Data passed between the pipeline stages: blocks of one page, labels, and their invariants."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from extract_trt.runtime.html.dom import Node


class PageMap(Protocol):
    """The original DOM with block ids placed (the reference's ``map_html``, kept as a tree), as
    reconstruction and the DOM-reading labelers read it.

    The simplifier makes it (:class:`extract_trt.runtime.html.simplify.PageMap`); it is declared here by what its
    readers use so that these types, which the simplifier builds, do not depend on the simplifier.
    """

    root: Node
    id_nodes: dict[int, Node]  # item id → the element or wrapper that carries it
    profile: Any  # the simplifier's SimplifyProfile: reconstruction follows the same reference version

    def map_html(self) -> str: ...


HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})  # a Block.tag that is a heading


@dataclass(slots=True)
class Block:
    """One numbered block of the simplified page (what a labeler classifies).

    ``html`` is the cleaned, truncated fragment carrying ``_item_id`` — byte-identical to the block in
    the reference simplified HTML. The other fields are cheap features computed from the same fragment.
    It is not quite what a Pulpie-format model reads: those strings are
    :func:`extract_trt.block_strings` ``(page)`` (the last block followed by the page shell's
    ``</body></html>``, as the reference's ``extract_blocks`` cuts them).
    """

    item_id: int
    html: str
    text: str
    tag: str
    classes: str  # the element's class value, at most simplify.MAX_NAME_CHARS characters (so is element_id)
    element_id: str
    depth: int
    tag_path: str  # "html>body>…>tag"; a path deeper than simplify.MAX_PATH_TAGS keeps its head and tail
    link_text_length: int
    content_type: str  # block_element | unwrapped_text | inline_elements | mixed
    ancestor_names: str = ""  # class and id values of the nearest eight named ancestors, nearest first
    # the nearest ancestors (parent first, at most 6) as numbers equal between the blocks of one page that
    # share that ancestor, and different otherwise (model features: how much text a container holds)
    containers: tuple[int, ...] = ()


@dataclass(slots=True)
class PageBlocks:
    """The simplifier's output for one page: blocks 1..N plus what reconstruction needs."""

    simplified_html: str
    blocks: list[Block]
    page_map: PageMap = field(repr=False)

    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def map_html(self) -> str:
        """The original DOM with ``_item_id`` marks and ``cc-alg-uc-text`` wrappers (reference map_html).

        After the first reconstruction the tree is as libxml2 re-reads it (an empty ``<li>`` holds what
        followed it), so read this before reconstructing when comparing with the reference's string.
        """
        return self.page_map.map_html()


@dataclass(slots=True)
class Labels:
    """One main/other decision per block, in block order (``main[i]`` belongs to ``blocks[i]``)."""

    main: np.ndarray  # bool, shape [n_blocks]
    labeler: str
    probability: np.ndarray | None = None  # p(main), float32, when the labeler has one
    fallback: bool = False
    threshold: float | None = None  # the p(main) the page was cut at, when one cut made the labels

    def as_dict(self, blocks: PageBlocks) -> dict[str, str]:
        """Reference-style ``{"1": "main", "2": "other", …}`` mapping."""
        return {str(b.item_id): ("main" if m else "other") for b, m in zip(blocks.blocks, self.main)}
