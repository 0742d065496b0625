"""Pieces every exporter shares: errors, the model-directory preamble, ONNX saving, int8 quantization,
tensor specs for the manifest, checkpoint hashing and the bundled verification pages."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from extract_trt.artifacts.manifest import MANIFEST_NAME, TensorSpec, file_sha256
from extract_trt.errors import ExtractError

__all__ = [
    "EXTERNAL_DATA_BYTES",
    "VARIANT_FILES",
    "ExportError",
    "ExportVerificationError",
    "checkpoint_sha256",
    "sample_pages",
    "save_onnx",
    "start_export",
    "tensor_spec",
    "write_int8",
]

VARIANT_FILES = {"fp32": "model.onnx", "fp16": "model.fp16.onnx", "int8": "model.int8.onnx"}
EXTERNAL_DATA_BYTES = 1 << 30  # protobuf cannot hold 2 GB; larger graphs keep weights in a side file
_ONNX_DTYPES = {1: "float32", 10: "float16", 16: "bfloat16", 7: "int64", 6: "int32", 9: "bool"}


class ExportError(ExtractError):
    """A checkpoint could not be exported (unsupported, inconsistent, or the exporter failed)."""


class ExportVerificationError(ExportError):
    """The exported graph does not reproduce the PyTorch model closely enough."""


def start_export(
    checkpoint: Path, out: Path, variants: Sequence[str], allowed: Collection[str] = tuple(VARIANT_FILES)
) -> None:
    """Check the request (``variants`` among ``allowed``, fp32 included) and mark ``out`` unfinished (no
    manifest) until the export writes one."""
    unknown = set(variants) - set(allowed)
    if unknown or "fp32" not in variants:
        raise ExportError(f"variants must include fp32 and be among {sorted(allowed)}, got {tuple(variants)}")
    if not (checkpoint / "config.json").is_file():
        raise ExportError(f"{checkpoint} is not a Hugging Face checkpoint directory (no config.json)")
    out.mkdir(parents=True, exist_ok=True)
    (out / MANIFEST_NAME).unlink(missing_ok=True)


def save_onnx(model, path: Path) -> None:
    """Write ``model``; weights go to ``<file>.data`` beside it when they exceed EXTERNAL_DATA_BYTES."""
    import onnx

    size = sum(len(t.raw_data) for t in model.graph.initializer)
    if size > EXTERNAL_DATA_BYTES:
        onnx.save_model(model, str(path), save_as_external_data=True, location=path.name + ".data")
    else:
        onnx.save_model(model, str(path))


def write_int8(fp32_path: Path, path: Path, nodes_to_exclude: Sequence[str] = ()) -> None:
    """ONNX Runtime dynamic quantization: int8 weights, activations quantized per call."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    large = fp32_path.with_name(fp32_path.name + ".data").exists()
    # MatMul/Gemm carry the compute; quantizing the embedding Gather saves memory but not time.
    quantize_dynamic(
        fp32_path, path, op_types_to_quantize=["MatMul", "Gemm"], weight_type=QuantType.QInt8,
        use_external_data_format=large, nodes_to_exclude=list(nodes_to_exclude),
    )


def tensor_spec(value_info) -> TensorSpec:
    """The manifest entry of an ONNX graph input or output."""
    tensor = value_info.type.tensor_type
    shape = [d.dim_param or d.dim_value for d in tensor.shape.dim]
    return TensorSpec(name=value_info.name, dtype=_ONNX_DTYPES.get(tensor.elem_type, str(tensor.elem_type)), shape=shape)


def checkpoint_sha256(checkpoint: str | Path) -> str:
    """SHA-256 over the checkpoint's config and weight files (sorted by name)."""
    root = Path(checkpoint)
    files = sorted(
        p for p in root.iterdir() if p.name == "config.json" or p.suffix in (".safetensors", ".bin", ".pt", ".pth")
    )
    return file_sha256(*files)


def sample_pages() -> list[str]:
    """HTML of the bundled sample pages (default verification input)."""
    from importlib import resources

    folder = resources.files("extract_trt") / "samples"
    return [p.read_text(encoding="utf-8") for p in sorted(folder.iterdir(), key=lambda p: p.name) if p.name.endswith(".html")]
