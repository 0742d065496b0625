"""Labels from WebMainBench-style annotations: ``cc-select="true"`` on the main-content elements.

A block is main when the element (or ``cc-alg-uc-text`` wrapper) that carries its id in the original DOM,
or any ancestor of it, is annotated — including the ``cc-select`` value the mapping copies onto a block
element from its first annotated descendant (spec §1.5). Blocks whose id could not be placed in the DOM
are other. This is how training labels and end-to-end tests get real ground truth; as a
:class:`~extract_trt.runtime.labelers.Labeler` it extracts a page exactly as its annotator marked it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from extract_trt.runtime.html.dom import Node
from extract_trt.runtime.types import Labels, PageBlocks

SELECT_ATTR = "cc-select"


def _selected(node: Node | None) -> bool:
    while node is not None:
        value = node.select if node.select is not None else node.attrs.get(SELECT_ATTR)
        if value == "true":
            return True
        node = node.parent
    return False


def annotation_labels(page: PageBlocks) -> Labels:
    """Main/other per block from the page's own ``cc-select`` annotations."""
    id_nodes = page.page_map.id_nodes
    main = np.array([_selected(id_nodes.get(b.item_id)) for b in page.blocks], dtype=bool)
    return Labels(main=main, labeler="annotation")


class AnnotationLabeler:
    """Labeler that reads ``cc-select`` annotations present in the HTML itself."""

    name = "annotation"

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        return [annotation_labels(page) for page in pages]
