"""Block labelers: anything that turns pages of blocks into one main/other label per block.

Every backend (the heuristic, the built-in block model, Pulpie-format encoders, Dripper-format decoders,
TensorRT engines) implements :class:`Labeler`; :class:`~extract_trt.runtime.extractor.Extractor` only
talks to this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from extract_trt.runtime.errors import LabelerError
from extract_trt.runtime.types import Labels, PageBlocks

if TYPE_CHECKING:
    from extract_trt.runtime.session import SessionConfig


@runtime_checkable
class Labeler(Protocol):
    """Blocks in, one label per block out, for a batch of pages at once.

    ``label(pages)[i].main`` must have exactly ``len(pages[i])`` entries; the extractor checks it.
    A labeler may also set ``pages_per_call``, how many pages it wants at once (:data:`PAGES_PER_CALL`
    when absent): one for labelers that work page by page, where a larger batch only keeps more page
    trees alive.
    """

    name: str

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]: ...


PAGES_PER_CALL = 16  # pages per label() call for a labeler that does not say (batched model backends)


def default_labeler(favor: str = "balanced") -> Labeler:
    """The labeler used when none is given: the built-in block model shipped in the package, with its
    threshold ``favor``-ing neither, ``"precision"`` or ``"recall"`` (``BlockModelLabeler``)."""
    from extract_trt.runtime.labelers.block_model import BlockModelLabeler

    return BlockModelLabeler(favor=favor)


LABELER_NAMES = ("default", "block-model", "block-model-precision", "block-model-recall", "heuristic", "annotation")


def get_labeler(spec: str, session: SessionConfig | None = None) -> Labeler:
    """A labeler by name (:data:`LABELER_NAMES`) or by the path of a model directory.

    ``session`` (execution providers, CPU fallback, threads) applies to exported encoder directories
    (``extract-trt.json``). Raises :class:`~extract_trt.runtime.errors.LabelerError` for an unknown name.
    """
    from pathlib import Path

    if spec in ("default", "block-model"):
        return default_labeler()
    if spec in ("block-model-precision", "block-model-recall"):  # the shipped model's other thresholds
        return default_labeler(favor=spec.rsplit("-", 1)[1])
    if spec == "heuristic":
        from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

        return HeuristicLabeler()
    if spec == "annotation":
        from extract_trt.runtime.labelers.annotation import AnnotationLabeler

        return AnnotationLabeler()
    if (Path(spec) / "extract-trt.json").is_file():  # an `extract-trt export onnx` directory
        from extract_trt.artifacts.manifest import load_manifest

        task = load_manifest(spec, check_files=False).task
        if task == "token-classification":
            from extract_trt.runtime.labelers.encoder import EncoderLabeler

            return EncoderLabeler(spec, session=session)
        if task == "text-generation":  # a Dripper-format decoder (--task text-generation-with-past)
            from extract_trt.runtime.labelers.decoder import DecoderLabeler

            return DecoderLabeler.from_model_dir(spec, session_config=session)
    if session is not None:
        raise LabelerError(f"execution providers can only be chosen for exported model directories, not {spec!r}")
    if Path(spec).is_dir():
        from extract_trt.runtime.labelers.block_model import BlockModelLabeler

        return BlockModelLabeler(spec)
    raise LabelerError(f"unknown labeler {spec!r}: use one of {', '.join(LABELER_NAMES)} or a model directory")
