"""Block labelers: anything that turns pages of blocks into one main/other label per block.

Every backend (the heuristic, the built-in block model, Pulpie-format encoders, Dripper-format decoders,
TensorRT engines) implements :class:`Labeler`; :class:`~extract_trt.runtime.extractor.Extractor` only
talks to this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from extract_trt.runtime.types import Labels, PageBlocks


@runtime_checkable
class Labeler(Protocol):
    """Blocks in, one label per block out, for a batch of pages at once.

    ``label(pages)[i].main`` must have exactly ``len(pages[i])`` entries; the extractor checks it.
    """

    name: str

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]: ...


def default_labeler() -> Labeler:
    """The labeler used when none is given: the heuristic until a built-in model is shipped."""
    from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

    return HeuristicLabeler()
