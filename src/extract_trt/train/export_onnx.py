"""Export the trained block model to ONNX (fp32) and an int8 variant, each verified against PyTorch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

from extract_trt.runtime.features import BlockFeatures
from extract_trt.runtime.labelers.block_model import INPUTS, MODEL_FILES
from extract_trt.train.model import BlockModel

__all__ = ["ExportMismatchError", "export_block_model", "quantize_block_model"]

OPSET = 17
FP32_TOLERANCE = 1e-4  # max |logit| difference ONNX Runtime vs PyTorch
INT8_MIN_AGREEMENT = 0.97  # int8 weights move logits a little; what matters is the labels


class ExportMismatchError(RuntimeError):
    """The exported graph does not compute what the PyTorch model computes."""


def _run(path: Path, f: BlockFeatures) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # ScatterND(reduction="add") races on several threads in ORT's CPU kernel
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip(INPUTS, f.arrays())))[0]


def _accumulate_scatters(path: Path) -> None:
    """Give every ScatterND ``reduction="add"``.

    The TorchScript exporter writes an accumulating ``index_put`` as ``Add(x, ScatterND(zeros, i, v))``
    with a plain ScatterND, where a repeated index keeps only one update; with ``reduction="add"`` the
    graph sums them like PyTorch (a row-wise ScatterND is also ~25x faster in ORT than the element-wise
    ScatterElements that ``scatter_add`` becomes). The fp32 check below proves the result.
    """
    graph = onnx.load(str(path))
    for node in graph.graph.node:
        if node.op_type == "ScatterND" and not any(a.name == "reduction" for a in node.attribute):
            node.attribute.append(onnx.helper.make_attribute("reduction", "add"))
    onnx.save(graph, str(path))


def export_block_model(model: BlockModel, out_dir: Path, sample: BlockFeatures) -> dict[str, str]:
    """Write ``model.onnx`` and ``model.int8.onnx`` to ``out_dir``; returns ``{precision: file name}``.

    Raises :class:`ExportMismatchError` when ONNX Runtime's fp32 logits differ from PyTorch's by more
    than ``FP32_TOLERANCE`` on ``sample``, or int8 labels agree on fewer than ``INT8_MIN_AGREEMENT``.
    """
    model.eval()
    inputs = tuple(torch.from_numpy(a) for a in sample.arrays())
    fp32 = out_dir / MODEL_FILES["fp32"]
    int8 = out_dir / MODEL_FILES["int8"]
    torch.onnx.export(
        model, inputs, str(fp32), input_names=list(INPUTS), output_names=["logits"],
        dynamic_axes={"ids": {0: "tokens"}, "bags": {0: "tokens"}, "dense": {0: "blocks"}, "markup": {0: "blocks"},
                      "norms": {0: "blocks"}, "logits": {0: "blocks"}},
        opset_version=OPSET, dynamo=False,
    )  # fmt: skip
    _accumulate_scatters(fp32)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    got = _run(fp32, sample)
    diff = float(np.abs(got - expected).max()) if len(expected) else 0.0
    if diff > FP32_TOLERANCE:
        raise ExportMismatchError(f"fp32 ONNX logits differ from PyTorch by {diff:.2e} > {FP32_TOLERANCE}")
    quantize_block_model(fp32, int8, sample, expected)
    return dict(MODEL_FILES)


def quantize_block_model(fp32: Path, int8: Path, sample: BlockFeatures, expected: np.ndarray | None = None) -> None:
    """int8 weights for the MatMuls (dynamic quantisation), checked for label agreement on ``sample``.

    The embedding table stays fp32: ORT dequantises an int8 Gather's whole table on every run, which
    costs more than the lookup saves.
    """
    if expected is None:
        expected = _run(fp32, sample)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
    quantized = _run(int8, sample)
    agreement = float(np.mean((quantized > 0) == (expected > 0))) if len(expected) else 1.0
    if agreement < INT8_MIN_AGREEMENT:
        raise ExportMismatchError(f"int8 labels agree with fp32 on only {agreement:.1%} of the sample blocks")
