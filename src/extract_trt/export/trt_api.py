"""The TensorRT 10.x / 11.x API differences the engine code handles, decided from the version string alone
(so they are tested without TensorRT).

From NVIDIA's "Migrating from TensorRT 10.x to 11.x" guide (Python API reference, 11.0-11.4):

* **Weak typing is gone in 11.x.** ``BuilderFlag.FP16``, ``BF16``, ``INT8`` (and ``FP8``, ``INT4``,
  ``FP4``, ``OBEY_/PREFER_PRECISION_CONSTRAINTS``) were removed; every network is strongly typed: each
  tensor has the type the ONNX graph gives it. So on 11.x an ``fp16`` engine is built from the model
  directory's fp16 ONNX variant (``extract-trt export onnx --fp16``), ``int8`` from the QDQ graph
  (explicit quantization, as on 10.x), and ``bf16`` would need a bf16 ONNX graph, which the exporter does
  not write (NVIDIA's route is ModelOpt AutoCast): a :class:`TensorRTVersionError` says so. On 10.x the
  engine is built from the fp32 graph with the precision flag (TensorRT picks per layer), as before.
* **Implicit int8 calibration is gone in 11.x** (``IBuilderConfig.int8_calibrator``, calibration
  profiles, quantization flags): not used here on either version (int8 = Q/DQ nodes).
* Used unchanged on both: ``Builder.create_network(0)`` (explicit batch is the only mode since 10.0; the
  ``STRONGLY_TYPED`` creation flag is accepted and ignored on 11.x), ``OnnxParser.parse_from_file``,
  ``IBuilderConfig.set_memory_pool_limit``, timing caches, optimization profiles,
  ``build_serialized_network``, ``init_libnvinfer_plugins``, ``Runtime.deserialize_cuda_engine``, the
  name-based tensor API (``set_input_shape``, ``set_tensor_address``, ``get_tensor_shape``),
  ``execute_async_v3`` and ``IOutputAllocator`` (whose synchronous ``reallocate_output`` is deprecated in
  11.x; the runtime's allocator implements ``reallocate_output_async`` too).

TensorRT 8.x/9.x (binding-index API) and releases after 11.x are refused with the install command.
Engines never move between releases anyway (:func:`~extract_trt.artifacts.trt_engine.check_engine_compatible`).
"""

from __future__ import annotations

from typing import Literal

from extract_trt.artifacts.trt_engine import SUPPORTED_TENSORRT_MAJORS, tensorrt_release, unsupported_tensorrt
from extract_trt.export.common import ExportError

__all__ = [
    "SUPPORTED_MAJORS",
    "TensorRTVersionError",
    "builder_flag_names",
    "check_supported",
    "engine_source",
    "release",
]

SUPPORTED_MAJORS = SUPPORTED_TENSORRT_MAJORS
EngineSource = Literal["fp32", "fp16", "qdq"]


class TensorRTVersionError(ExportError):
    """The installed TensorRT release is not one this code handles, or cannot build what was asked."""


def release(version: str) -> tuple[int, ...]:
    """``"10.16.1.11"`` → ``(10, 16, 1, 11)``; suffixes such as ``.post1`` or ``rc1`` are ignored."""
    try:
        return tensorrt_release(version)
    except ValueError as exc:
        raise TensorRTVersionError(str(exc)) from None


def check_supported(version: str) -> int:
    """The major release of ``version``, or :class:`TensorRTVersionError` unless it is 10 or 11."""
    problem = unsupported_tensorrt(version)
    if problem is not None:
        raise TensorRTVersionError(problem)
    return release(version)[0]


def builder_flag_names(version: str, precision: str) -> tuple[str, ...]:
    """``trt.BuilderFlag`` members to set for ``precision``: the weak-typing flags on 10.x, none on 11.x
    (strongly typed: the precision is in the graph, see :func:`engine_source`)."""
    if check_supported(version) >= 11:
        return ()
    return {"fp16": ("FP16",), "bf16": ("BF16",), "int8": ("INT8", "FP16")}[precision]


def engine_source(version: str, precision: str) -> EngineSource:
    """Which ONNX graph of the model directory an engine of ``precision`` is built from on this release."""
    if precision == "int8":
        return "qdq"
    if check_supported(version) < 11:
        return "fp32"
    if precision == "fp16":
        return "fp16"
    raise TensorRTVersionError(
        f"TensorRT {version} builds strongly typed networks only, so a {precision} engine needs a {precision} "
        "ONNX graph, which `extract-trt export onnx` does not write: build --precision fp16 (from the fp16 "
        "variant) or int8, or build bf16 with TensorRT 10.x"
    )
