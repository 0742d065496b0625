"""The model-directory manifest ``extract-trt.json``: what a runtime needs to run an exported model.

A model directory is self-describing: the ONNX file(s), ``tokenizer.json`` and this manifest. The runtime
reads only the manifest to know how to tokenize blocks (special-token ids, chunk size), which ONNX file
to open for a precision (``variants``), what to feed (``inputs``) and what comes back (``outputs``,
``output_layout``). This module is stdlib-only on purpose: the runtime imports it without torch.

Extending it: backends with needs of their own (the Dripper-format decoder) add an optional section —
``decoder`` is reserved for that — or put free-form data under ``extra``. Unknown top-level keys are an
error (a misspelt key must not be silently ignored); bump :data:`FORMAT_VERSION` when a field changes
meaning.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from extract_trt.errors import ExtractError

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST_NAME",
    "ManifestError",
    "ModelManifest",
    "SourceInfo",
    "TensorSpec",
    "VariantSpec",
    "file_sha256",
    "load_manifest",
]

MANIFEST_NAME = "extract-trt.json"
FORMAT_VERSION = 1
VARIANT_NAMES = ("fp32", "fp16", "int8")
TENSOR_DTYPES = ("int64", "int32", "float32", "float16", "bfloat16", "bool")
TASKS = ("token-classification", "text-generation")
# "blocks": the graph ends in the <|sep|> gather (one row per block); "logits": plain [batch, seq, labels].
OUTPUT_LAYOUTS = ("blocks", "logits")


class ManifestError(ExtractError):
    """A model directory's manifest is missing, unreadable, or inconsistent with itself or its files."""


@dataclass(slots=True)
class TensorSpec:
    """One graph input or output: name, element type, and shape (ints or symbolic axis names)."""

    name: str
    dtype: str
    shape: list[int | str] = field(default_factory=list)

    def validate(self, where: str) -> None:
        if not self.name:
            raise ManifestError(f"{where}: tensor without a name")
        if self.dtype not in TENSOR_DTYPES:
            raise ManifestError(f"{where}: tensor {self.name!r} has dtype {self.dtype!r}; expected one of {TENSOR_DTYPES}")


@dataclass(slots=True)
class VariantSpec:
    """One precision of the model: its ONNX file, checksum, and the verification the export ran on it.

    ``max_abs_diff`` is the largest |ONNX Runtime − PyTorch| logit seen at export time (at ``<|sep|>``
    positions); ``labels_identical`` whether argmax labels agreed on every block.
    """

    file: str
    sha256: str = ""
    bytes: int = 0
    max_abs_diff: float | None = None
    labels_identical: bool | None = None
    label_agreement: float | None = None  # share of blocks whose label equals PyTorch's


@dataclass(slots=True)
class SourceInfo:
    """Where the model came from: the checkpoint directory and a hash of its weights and config."""

    checkpoint: str = ""
    checkpoint_sha256: str = ""
    model_type: str = ""
    exporter: str = ""  # "optimum" | "torch.onnx" | …
    transformers_version: str = ""
    created: str = ""  # ISO-8601 UTC


@dataclass(slots=True)
class ModelManifest:
    """The content of ``extract-trt.json`` (see the module docstring)."""

    architecture: str  # eurobert | bert | roberta | modernbert | qwen3 | …
    task: str  # one of TASKS
    label_map: dict[int, str] = field(default_factory=lambda: {0: "other", 1: "main"})
    main_label_id: int = 1
    sep_token: str = "<|sep|>"
    sep_token_id: int | None = None
    bos_token_id: int | None = None
    eos_token_id: int | None = None
    pad_token_id: int = 0
    max_tokens: int = 8192
    simplifier_profile: str = "mineru-v1.1"
    cutoff_length: int = 500
    tokenizer_file: str = "tokenizer.json"
    inputs: list[TensorSpec] = field(default_factory=list)
    outputs: list[TensorSpec] = field(default_factory=list)
    output_layout: str = "blocks"
    opset: int = 17
    variants: dict[str, VariantSpec] = field(default_factory=dict)
    source: SourceInfo = field(default_factory=SourceInfo)
    decoder: dict[str, Any] | None = None  # reserved for the Dripper-format decoder backend
    # TensorRT engines by "<gpu>-<precision>" (artifacts.trt_engine.EngineRecord.to_dict(): file, GPU, compute
    # capability, TensorRT version, profiles, bindings); written by `extract-trt export trt`.
    engines: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    # -- validation ---------------------------------------------------------------------------------

    def validate(self, model_dir: str | Path | None = None) -> None:
        """Check the manifest's internal consistency; with ``model_dir``, also that its files exist."""
        if self.format_version != FORMAT_VERSION:
            raise ManifestError(f"format_version {self.format_version} is not supported (this build reads {FORMAT_VERSION})")
        if not self.architecture:
            raise ManifestError("architecture is empty")
        if self.task not in TASKS:
            raise ManifestError(f"task {self.task!r} is not one of {TASKS}")
        if self.output_layout not in OUTPUT_LAYOUTS:
            raise ManifestError(f"output_layout {self.output_layout!r} is not one of {OUTPUT_LAYOUTS}")
        if self.task == "token-classification":
            if self.sep_token_id is None:
                raise ManifestError("a token-classification model needs sep_token_id (the <|sep|> block marker)")
            if self.sep_token_id in (self.pad_token_id, self.bos_token_id, self.eos_token_id):
                raise ManifestError(f"sep_token_id {self.sep_token_id} is also the pad/BOS/EOS id; blocks could not be told apart")
            if self.main_label_id not in self.label_map:
                raise ManifestError(f"main_label_id {self.main_label_id} is not in label_map {self.label_map}")
            if len(self.label_map) < 2:
                raise ManifestError(f"label_map needs at least two labels, got {self.label_map}")
        reserved = 1 + (self.bos_token_id is not None) + (self.eos_token_id is not None)
        if self.max_tokens <= reserved:
            raise ManifestError(f"max_tokens {self.max_tokens} leaves no room for block tokens")
        if not self.inputs or not self.outputs:
            raise ManifestError("inputs and outputs must list the graph's tensors")
        for spec in self.inputs:
            spec.validate("inputs")
        for spec in self.outputs:
            spec.validate("outputs")
        if not self.variants:
            raise ManifestError("no model variants listed")
        unknown = set(self.variants) - set(VARIANT_NAMES)
        if unknown:
            raise ManifestError(f"unknown variant(s) {sorted(unknown)}; expected a subset of {VARIANT_NAMES}")
        if model_dir is not None:
            root = Path(model_dir)
            for name, variant in self.variants.items():
                if not (root / variant.file).is_file():
                    raise ManifestError(f"variant {name}: {root / variant.file} does not exist")
            for key, engine in self.engines.items():
                if not (root / str(engine.get("file", ""))).is_file():
                    raise ManifestError(f"engine {key}: {root / str(engine.get('file', ''))} does not exist")
            if not (root / self.tokenizer_file).is_file():
                raise ManifestError(f"tokenizer file {root / self.tokenizer_file} does not exist")

    def variant(self, name: str) -> VariantSpec:
        """The variant ``name`` (``fp32``/``fp16``/``int8``), or a ManifestError listing what exists."""
        try:
            return self.variants[name]
        except KeyError:
            raise ManifestError(f"variant {name!r} was not exported; available: {sorted(self.variants)}") from None

    def tensor(self, name: str) -> TensorSpec | None:
        """The input or output tensor called ``name``, if the graph has one."""
        return next((t for t in (*self.inputs, *self.outputs) if t.name == name), None)

    # -- (de)serialisation ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["label_map"] = {str(k): v for k, v in self.label_map.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelManifest:
        if not isinstance(data, dict):
            raise ManifestError(f"manifest must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ManifestError(f"unknown manifest key(s) {sorted(unknown)} (free-form data belongs under 'extra')")
        missing = {"architecture", "task"} - set(data)
        if missing:
            raise ManifestError(f"manifest lacks required key(s) {sorted(missing)}")
        data = dict(data)
        try:
            if "label_map" in data:
                data["label_map"] = {int(k): str(v) for k, v in data["label_map"].items()}
            data["inputs"] = [_build(TensorSpec, t, "inputs") for t in data.get("inputs", [])]
            data["outputs"] = [_build(TensorSpec, t, "outputs") for t in data.get("outputs", [])]
            data["variants"] = {k: _build(VariantSpec, v, f"variants.{k}") for k, v in data.get("variants", {}).items()}
            data["source"] = _build(SourceInfo, data.get("source", {}), "source")
        except (AttributeError, TypeError, ValueError) as exc:
            raise ManifestError(f"malformed manifest: {exc}") from exc
        return cls(**data)

    def save(self, model_dir: str | Path) -> Path:
        """Validate and write ``<model_dir>/extract-trt.json``; returns its path."""
        self.validate(model_dir)
        path = Path(model_dir) / MANIFEST_NAME
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


def load_manifest(model_dir: str | Path, *, check_files: bool = True) -> ModelManifest:
    """Read and validate ``<model_dir>/extract-trt.json`` (ManifestError when absent or inconsistent)."""
    path = Path(model_dir) / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{path} not found: not an extract-trt model directory (run `extract-trt export onnx`)") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from exc
    manifest = ModelManifest.from_dict(data)
    manifest.validate(model_dir if check_files else None)
    return manifest


def file_sha256(*paths: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 over the bytes of ``paths`` in the given order (one file, or a checkpoint's files)."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while block := handle.read(chunk):
                digest.update(block)
    return digest.hexdigest()


def _build(cls: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: expected an object, got {type(value).__name__}")
    unknown = set(value) - {f.name for f in fields(cls)}
    if unknown:
        raise ManifestError(f"{where}: unknown key(s) {sorted(unknown)}")
    return cls(**value)
