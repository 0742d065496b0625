"""Export the trained block model to ONNX (fp32) and an int8 variant, each verified against PyTorch.

The graphs start from the bag sums (``BlockModel.from_sums``); the embedding table they are summed from
is written beside them as ``embeddings.npy`` (float32), and the labeler sums it with
:meth:`BlockFeatures.bag_sums` — one C pass instead of ONNX Runtime's Gather and ScatterND, which took a
quarter of the model's time. The ids the model was trained on (its :class:`Vocabulary`) go to
``vocabulary.npy``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic
from torch import nn

from extract_trt.runtime.labelers.block_model import EMBEDDINGS, INPUTS, MODEL_FILES, VOCABULARY, onnx_inputs
from extract_trt.runtime.labelers.features import BlockFeatures, Vocabulary
from extract_trt.train.model import BlockModel, BlockModelEnsemble

__all__ = ["ExportMismatchError", "export_block_model", "quantize_block_model"]

OPSET = 17
FP32_TOLERANCE = 1e-4  # max |logit| difference ONNX Runtime vs PyTorch
INT8_MIN_AGREEMENT = 0.97  # int8 weights move logits a little; what matters is the labels


class ExportMismatchError(RuntimeError):
    """The exported graph does not compute what the PyTorch model computes."""


def _run(path: Path, f: BlockFeatures, table: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return session.run(None, onnx_inputs(f, table))[0]


class _FromSums(nn.Module):
    """The exported part of :class:`BlockModel`: bag sums and layout numbers in, logits out."""

    def __init__(self, model: BlockModel | BlockModelEnsemble) -> None:
        super().__init__()
        self.model = model

    def forward(
        self, sums: torch.Tensor, dense: torch.Tensor, markup: torch.Tensor, norms: torch.Tensor
    ) -> torch.Tensor:
        return self.model.from_sums(sums, dense, markup, norms)


def _save_array(path: Path, array: np.ndarray) -> None:
    """Write a new file and rename it over the old one: a labeler that mapped the old one keeps its
    mapping intact."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as f:
        np.save(f, array)
    os.replace(partial, path)


def export_block_model(
    model: BlockModel | BlockModelEnsemble, out_dir: Path, sample: BlockFeatures, vocabulary: Vocabulary
) -> dict[str, str]:
    """Write ``embeddings.npy``, ``vocabulary.npy``, ``model.onnx`` and ``model.int8.onnx`` to ``out_dir``;
    returns the file names by role (``fp32``, ``int8``, ``embeddings``, ``vocabulary``) for the manifest.
    ``sample`` is a page's features in ``vocabulary``.

    Raises :class:`ExportMismatchError` when ONNX Runtime's fp32 logits (from the features' bag sums)
    differ from PyTorch's whole forward pass by more than ``FP32_TOLERANCE`` on ``sample``, or int8
    labels agree on fewer than ``INT8_MIN_AGREEMENT``.
    """
    model.eval()
    table = model.embedding_table().detach().numpy().astype(np.float32)
    _save_array(out_dir / EMBEDDINGS, table)
    _save_array(out_dir / VOCABULARY, vocabulary.bits)
    feed = onnx_inputs(sample, table)
    fp32 = out_dir / MODEL_FILES["fp32"]
    int8 = out_dir / MODEL_FILES["int8"]
    torch.onnx.export(
        # eval() here: export puts the module back in the mode it found it in, the model with it
        _FromSums(model).eval(), tuple(torch.from_numpy(feed[name]) for name in INPUTS), str(fp32),
        input_names=list(INPUTS), output_names=["logits"],
        dynamic_axes={"sums": {0: "bags"}, "dense": {0: "blocks"}, "markup": {0: "blocks"}, "norms": {0: "blocks"},
                      "logits": {0: "blocks"}},
        opset_version=OPSET, dynamo=False,
    )  # fmt: skip
    with torch.no_grad():
        expected = model(*(torch.from_numpy(a) for a in sample.arrays())).numpy()
    got = _run(fp32, sample, table)
    diff = float(np.abs(got - expected).max()) if len(expected) else 0.0
    if diff > FP32_TOLERANCE:
        raise ExportMismatchError(f"fp32 ONNX logits differ from PyTorch by {diff:.2e} > {FP32_TOLERANCE}")
    quantize_block_model(fp32, int8, sample, table, expected)
    return {**MODEL_FILES, "embeddings": EMBEDDINGS, "vocabulary": VOCABULARY}


def quantize_block_model(
    fp32: Path, int8: Path, sample: BlockFeatures, table: np.ndarray, expected: np.ndarray | None = None
) -> None:
    """int8 weights for the MatMuls (dynamic quantisation), checked for label agreement on ``sample``."""
    if expected is None:
        expected = _run(fp32, sample, table)
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
    quantized = _run(int8, sample, table)
    agreement = float(np.mean((quantized > 0) == (expected > 0))) if len(expected) else 1.0
    if agreement < INT8_MIN_AGREEMENT:
        raise ExportMismatchError(f"int8 labels agree with fp32 on only {agreement:.1%} of the sample blocks")
