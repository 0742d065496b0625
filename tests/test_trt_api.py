"""TensorRT 10.x / 11.x: what the engine code does on each release, and the operator data's versions.
Decided from version strings and ONNX graphs, so it runs without TensorRT (the builds: scripts/gpu-check.sh)."""

from __future__ import annotations

import pytest

from extract_trt.export.trt_api import (
    TensorRTVersionError,
    builder_flag_names,
    check_supported,
    engine_source,
    release,
)
from extract_trt.export.trt_compat import max_opset, rules


def test_release_numbers() -> None:
    assert release("10.16.1.11") == (10, 16, 1, 11)
    assert release("10.14.1.48.post1") == (10, 14, 1, 48)
    assert release("11.0.0rc1") == (11, 0, 0)
    with pytest.raises(TensorRTVersionError):
        release("unknown")


@pytest.mark.parametrize("version", ["8.6.1", "9.3.0", "12.0.0"])
def test_releases_outside_10_and_11_are_refused_with_the_install_command(version) -> None:
    with pytest.raises(TensorRTVersionError, match="tensorrt-cu12>=10,<12"):
        check_supported(version)


def test_tensorrt_10_builds_from_fp32_with_precision_flags() -> None:
    assert check_supported("10.0.1") == 10
    assert builder_flag_names("10.16.1.11", "fp16") == ("FP16",)
    assert builder_flag_names("10.16.1.11", "bf16") == ("BF16",)
    assert builder_flag_names("10.16.1.11", "int8") == ("INT8", "FP16")
    assert [engine_source("10.16.1.11", p) for p in ("fp16", "bf16", "int8")] == ["fp32", "fp32", "qdq"]


def test_tensorrt_11_is_strongly_typed_precision_comes_from_the_graph() -> None:
    for precision in ("fp16", "bf16", "int8"):
        assert builder_flag_names("11.4.0.106", precision) == ()  # BuilderFlag.FP16/BF16/INT8 no longer exist
    assert engine_source("11.4.0.106", "fp16") == "fp16"
    assert engine_source("11.4.0.106", "int8") == "qdq"
    with pytest.raises(TensorRTVersionError, match="strongly typed"):
        engine_source("11.0.0.114", "bf16")


def test_opset_bounds_by_release() -> None:
    assert max_opset() == 20  # portable: TensorRT 10.0
    assert max_opset("10.8.0.43") == 20  # no operators.md between 10.0 and 10.15 was checked
    assert max_opset("10.16.1.11") == 24
    assert max_opset("11.4.0.106") == 24
    assert max_opset("11.5.0") == 25
    data = rules()
    assert "operators.md" in data["source"] and data["tensorrt"] == "10.x and 11.x"
    assert {"AffineGrid", "CenterCropPad"} <= set(data["unsupported_ops"])  # memory had them supported
    assert not set(data["supported_ops"]) & set(data["unsupported_ops"])
    assert set(data["supported_since"]) <= set(data["supported_ops"])


def test_operators_newer_than_10_0_depend_on_the_release() -> None:
    pytest.importorskip("onnx", reason="needs onnx (export/train extra)")
    from onnx import TensorProto, helper

    from extract_trt.export.trt_compat import check_tensorrt_compat

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    scale = helper.make_tensor_value_info("s", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    graph = helper.make_graph([helper.make_node("RMSNormalization", ["x", "s"], ["y"])], "g", [x, scale], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    portable = check_tensorrt_compat(model)
    assert [i.rule for i in portable.errors] == ["opset"] and [i.rule for i in portable.warnings] == ["operator"]
    assert check_tensorrt_compat(model, tensorrt_version="10.16.1.11").ok
    old = check_tensorrt_compat(model, tensorrt_version="10.9.0.34")
    assert {i.rule for i in old.errors} == {"opset", "operator"} and "10.15" in str(old.errors)
    with pytest.raises(Exception, match="TensorRT 10.9.0.34"):
        old.raise_for_errors()
