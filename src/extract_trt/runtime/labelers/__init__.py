"""Block labelers: anything that turns pages of blocks into one main/other label per block.

Every backend (the heuristic, the built-in block model, Pulpie-format encoders, Dripper-format decoders,
TensorRT engines) implements :class:`Labeler`; :class:`~extract_trt.runtime.extractor.Extractor` only
talks to this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from extract_trt.errors import LabelerError
from extract_trt.runtime.types import Labels, PageBlocks

if TYPE_CHECKING:
    from extract_trt.runtime.labelers.session import SessionConfig


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


def default_labeler(favor: str = "balanced", per_page: bool = True) -> Labeler:
    """The labeler used when none is given: the built-in block model shipped in the package, with its
    threshold ``favor``-ing neither, ``"precision"`` or ``"recall"``; balanced, each page at its own
    threshold unless ``per_page`` is false (``BlockModelLabeler``)."""
    from extract_trt.runtime.labelers.block_model import BlockModelLabeler

    return BlockModelLabeler(favor=favor, per_page=per_page)


LABELER_NAMES = (
    "default", "block-model", "block-model-balanced", "block-model-precision", "block-model-recall", "heuristic",
    "annotation",
)  # fmt: skip
DEFAULT_CASCADE_BUDGET = 0.2  # share of pages a `cascade:BIG` spec sends to BIG when it names no budget


def is_cascade_spec(spec: str) -> bool:
    """Whether ``spec`` names a cascade (``cascade:BIG``, ``cascade@BUDGET:BIG``, ``cascade@uTHRESHOLD:BIG``)."""
    return spec.startswith(("cascade:", "cascade@"))


def with_budget(spec: str, budget: float) -> str:
    """The cascade ``spec`` with its budget set to ``budget`` (``--budget`` of the CLI); a spec, not an
    object, so that worker processes and Ray actors can build it. Raises :class:`LabelerError` for a spec
    that is not a cascade."""
    if not is_cascade_spec(spec):
        raise LabelerError(f"a budget is for a cascade labeler (cascade:BIG), not {spec!r}")
    return f"cascade@{budget:g}:{spec.partition(':')[2]}"


def get_labeler(spec: str, session: SessionConfig | None = None) -> Labeler:
    """A labeler by name (:data:`LABELER_NAMES`), by the path of a model directory, or a cascade
    ``cascade[@BUDGET]:BIG`` (the default labeler on every page, BIG — a name or directory — on the
    ``BUDGET`` share of pages it is least sure of; :class:`~extract_trt.runtime.labelers.cascade.CascadeLabeler`)
    or ``cascade@uTHRESHOLD:BIG`` (BIG on every page whose uncertainty reaches ``THRESHOLD``).

    ``session`` (execution providers, CPU fallback, threads) applies to exported encoder directories
    (``extract-trt.json``). Raises :class:`~extract_trt.errors.LabelerError` for an unknown name.
    """
    from pathlib import Path

    if is_cascade_spec(spec):
        return _cascade(spec, session)
    if spec in ("default", "block-model"):
        return default_labeler()
    if spec in ("block-model-balanced", "block-model-precision", "block-model-recall"):  # one threshold, every page
        return default_labeler(favor=spec.rsplit("-", 1)[1], per_page=False)
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


def _cascade(spec: str, session: SessionConfig | None) -> Labeler:
    from extract_trt.runtime.labelers.cascade import CascadeLabeler

    head, sep, big = spec.partition(":")
    if not sep or not big:
        raise LabelerError(f"a cascade spec is cascade[@BUDGET]:BIG, got {spec!r}")
    if head == "cascade":
        return CascadeLabeler(default_labeler(), get_labeler(big, session), budget=DEFAULT_CASCADE_BUDGET)
    value = head.removeprefix("cascade@")
    try:
        number = float(value.removeprefix("u"))
    except ValueError:
        raise LabelerError(f"{spec!r}: use cascade@BUDGET:BIG (cascade@0.2:BIG) or cascade@uTHRESHOLD:BIG") from None
    if value.startswith("u"):  # a page uncertainty threshold instead of a share of pages
        return CascadeLabeler(default_labeler(), get_labeler(big, session), threshold=number)
    return CascadeLabeler(default_labeler(), get_labeler(big, session), budget=number)
