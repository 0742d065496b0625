"""Labelers by name for ``extract-trt eval`` and ``extract-trt bench``, optionally on a chosen ORT provider.

A spec is one of

* a name or model directory understood by :func:`extract_trt.runtime.labelers.get_labeler`
  (``default``, ``heuristic``, ``annotation``, a block-model directory, …);
* ``module:attr`` naming a :class:`~extract_trt.runtime.labelers.Labeler` class, factory or instance;
* ``cascade[@BUDGET]:BIG`` (the default labeler, BIG on the pages it is least sure of), BIG on the provider;
* with a provider: a model directory written by ``extract-trt export`` (``extract-trt.json`` inside), whose
  encoder or decoder session is created on that ONNX Runtime execution provider. CPU fallback is allowed
  so that a fallback is *reported* (the bench flags it) rather than aborting the whole bench.
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

from extract_trt.errors import LabelerError
from extract_trt.runtime.labelers import Labeler, get_labeler, is_cascade_spec

__all__ = ["EXPORT_MANIFEST", "ProviderChoiceError", "import_object", "make_labeler", "takes_provider"]

EXPORT_MANIFEST = "extract-trt.json"


class ProviderChoiceError(LabelerError):
    """An execution provider was asked for a labeler that cannot be put on one."""


def import_object(spec: str) -> Any:
    """The object named by ``module:attr`` (``attr`` may be dotted)."""
    module_name, _, attr = spec.partition(":")
    obj: Any = import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _is_import_spec(spec: str) -> bool:
    return ":" in spec and not Path(spec).exists() and not is_cascade_spec(spec)


def takes_provider(spec: str) -> bool:
    """Whether ``spec`` is an exported ONNX model directory (so it can be run on a chosen provider)."""
    return (Path(spec) / EXPORT_MANIFEST).is_file()


def make_labeler(spec: str, provider: str | None = None) -> Labeler:
    """Build the labeler named by ``spec`` (module doc); ``provider`` e.g. ``CUDAExecutionProvider``."""
    if provider is not None:
        if is_cascade_spec(spec):  # the provider is the big model's
            from extract_trt.runtime.labelers.session import SessionConfig

            return get_labeler(spec, SessionConfig(providers=[provider], allow_cpu_fallback=True))
        return _exported_model_labeler(spec, provider)
    if _is_import_spec(spec):
        obj = import_object(spec)
        if not isinstance(obj, Labeler):
            obj = obj()
        if not isinstance(obj, Labeler):
            raise LabelerError(f"{spec} is not a Labeler (needs `name` and `label(pages)`)")
        return obj
    if takes_provider(spec):
        return _exported_model_labeler(spec, None)
    return get_labeler(spec)


def _exported_model_labeler(spec: str, provider: str | None) -> Labeler:
    if not takes_provider(spec):
        raise ProviderChoiceError(
            f"{spec}: only model directories written by `extract-trt export` ({EXPORT_MANIFEST}) run on a chosen provider"
        )
    from extract_trt.artifacts.manifest import load_manifest
    from extract_trt.runtime.labelers.session import SessionConfig

    directory = Path(spec)
    config = SessionConfig(providers=[provider] if provider else "auto", allow_cpu_fallback=True)
    if load_manifest(directory).task == "token-classification":
        from extract_trt.runtime.labelers.encoder import EncoderLabeler

        return EncoderLabeler(directory, session=config)
    from extract_trt.runtime.labelers.decoder import DecoderLabeler

    return DecoderLabeler.from_model_dir(directory, session_config=config)
