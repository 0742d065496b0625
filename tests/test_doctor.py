"""extract-trt doctor: runs on this machine (CI: CPU only, so it must say "no GPU"), engine matching on a
real model directory, and the install advice for the setups users get wrong."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from extract_trt.cli import app
from extract_trt.doctor import Diagnosis, GpuInfo, advice, engine_matches, find_gpus

L4 = GpuInfo(0, "NVIDIA L4", (8, 9), 24 * 2**30)


def test_doctor_runs_here_and_reports_what_is_really_there() -> None:
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "providers that start here:" in result.output and "CPUExecutionProvider" in result.output
    gpus, _, why = find_gpus()
    if not gpus:
        assert f"GPU: no GPU ({why})" in result.output and "the built-in model needs nothing more" in result.output
    else:
        assert all(f"({g.sm})" in result.output for g in gpus)

    data = json.loads(CliRunner().invoke(app, ["doctor", "--json"]).output)
    assert "CPUExecutionProvider" in data["working_providers"]
    assert set(data["working_providers"]) <= set(data["build_providers"])
    assert data["onnxruntime_version"] and data["distributions"]["onnxruntime" if "onnxruntime" in data["distributions"] else "onnxruntime-gpu"]


def test_engines_of_a_model_directory_against_this_machine(tmp_path) -> None:
    pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
    import encoder_fixtures as fx

    from extract_trt.artifacts.manifest import load_manifest
    from extract_trt.artifacts.trt_engine import EngineRecord

    if not (fx.DATA / "pulpie-pages.jsonl.gz").exists():
        pytest.skip("shared data not mounted")
    model_dir = tmp_path / "m"
    shutil.copytree(fx.exported("bert"), model_dir)
    manifest = load_manifest(model_dir)
    record = EngineRecord(file="engine-l4-fp16.plan", gpu="l4", compute_capability="sm_89", precision="fp16",
                          tensorrt_version="10.16.1.11", onnx_file="model.onnx", profiles=[], bindings=[], workspace_bytes=1)  # fmt: skip
    manifest.engines = {"l4-fp16": record.to_dict(), "a100-fp16": {**record.to_dict(), "gpu": "a100", "compute_capability": "sm_80",
                                                                  "file": "engine-a100-fp16.plan"}}  # fmt: skip
    (model_dir / "engine-l4-fp16.plan").write_bytes(b"plan")
    (model_dir / "engine-a100-fp16.plan").write_bytes(b"plan")
    manifest.save(model_dir)

    by_key = {m.key: m for m in engine_matches(model_dir, [L4], "10.16.1.11", [])}
    assert by_key["l4-fp16"].matches and not by_key["a100-fp16"].matches
    assert "this GPU is sm_89" in by_key["a100-fp16"].reason
    other_release = {m.key: m for m in engine_matches(model_dir, [L4], "11.4.0.106", [])}
    assert not other_release["l4-fp16"].matches and "not portable across TensorRT releases" in other_release["l4-fp16"].reason
    assert all(not m.matches and m.reason == "no GPU here" for m in engine_matches(model_dir, [], None, []))
    (model_dir / "engine-l4-fp16.plan").unlink()
    assert "missing" in {m.key: m for m in engine_matches(model_dir, [L4], "10.16.1.11", [])}["l4-fp16"].reason

    result = CliRunner().invoke(app, ["doctor", str(model_dir)])
    assert result.exit_code == 0 and "l4-fp16" in result.output and "a100-fp16" in result.output


def _diagnosis(**changes) -> Diagnosis:
    base = dict(extract_trt="0.1.0", python="3.11", platform="Linux", distributions={"onnxruntime-gpu": "1.26.0"},
                onnxruntime_version="1.26.0", build_providers=["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"],
                working_providers=["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"], provider_errors={},
                driver_cuda_version="12.4", gpus=[L4], gpu_error=None, tensorrt_version="10.16.1.11", tensorrt_error=None)  # fmt: skip
    return Diagnosis(**{**base, **changes})


def test_a_working_gpu_setup_needs_nothing() -> None:
    assert advice(_diagnosis()) == []


def test_the_cpu_wheel_beside_or_instead_of_onnxruntime_gpu_is_named_with_the_fix() -> None:
    both = advice(_diagnosis(distributions={"onnxruntime": "1.26.0", "onnxruntime-gpu": "1.26.0"},
                             build_providers=["CPUExecutionProvider"], working_providers=["CPUExecutionProvider"]))  # fmt: skip
    assert "same `onnxruntime` module" in both[0]
    assert "pip uninstall -y onnxruntime onnxruntime-gpu && pip install 'onnxruntime-gpu[cuda,cudnn]==1.26.0'" in both[0]
    cpu_only = advice(_diagnosis(distributions={"onnxruntime": "1.32.0"}, onnxruntime_version="1.32.0",
                                 build_providers=["CPUExecutionProvider"], working_providers=["CPUExecutionProvider"]))  # fmt: skip
    assert "no GPU provider" in cpu_only[0] and "onnxruntime-gpu[cuda,cudnn]>=1.20,<1.27" in cpu_only[0]


def test_cuda_13_builds_on_a_cuda_12_driver_and_missing_libraries() -> None:
    tips = advice(_diagnosis(distributions={"onnxruntime-gpu": "1.30.0"}, onnxruntime_version="1.30.0",
                             provider_errors={"CUDAExecutionProvider": "listed by this onnxruntime build, but its libraries did not load"},
                             working_providers=["CPUExecutionProvider"]))  # fmt: skip
    assert any("built for CUDA 13" in t and "<1.27" in t for t in tips)
    assert any("the CUDA provider does not start" in t and "onnxruntime-gpu[cuda,cudnn]==1.30.0" in t for t in tips)


def test_tensorrt_11_with_an_ort_build_that_links_tensorrt_10() -> None:
    tips = advice(_diagnosis(tensorrt_version="11.4.0.106",
                             provider_errors={"TensorrtExecutionProvider": "listed by this onnxruntime build, but its libraries did not load"},
                             working_providers=["CUDAExecutionProvider", "CPUExecutionProvider"]))  # fmt: skip
    assert len(tips) == 1 and "links TensorRT 10" in tips[0] and "tensorrt-cu12>=10,<11" in tips[0]
    missing = advice(_diagnosis(tensorrt_version=None, tensorrt_error="ModuleNotFoundError: No module named 'tensorrt'"))
    assert missing and "pip install 'tensorrt-cu12>=10,<12'" in missing[0]
    old = advice(_diagnosis(tensorrt_version="8.6.1"))
    assert old and "not handled (10.x and 11.x are)" in old[0]


def test_no_gpu_says_so_first() -> None:
    tips = advice(_diagnosis(gpus=[], gpu_error="no NVIDIA driver (libcuda not found)", distributions={"onnxruntime": "1.32.0"}))
    assert tips[0].startswith("no GPU (no NVIDIA driver") and len(tips) == 1


def test_a_directory_without_a_manifest_is_named_not_sent_to_export(tmp_path) -> None:
    (matched,) = engine_matches(tmp_path, [L4], "10.16.1.11", [])
    assert matched.kind == "error" and "extract-trt.json" in matched.reason
    tips = advice(_diagnosis(engines=[matched]))
    assert tips == [f"{tmp_path}: {matched.reason}"]


def test_report_of_a_gpu_machine() -> None:
    from extract_trt.doctor import EngineMatch, render

    engine = EngineMatch("m", "tensorrt", "l4-fp16", "engine-l4-fp16.plan", "sm_89", "TensorRT 10.16.1.11", True, "matches this GPU and TensorRT")
    text = render(_diagnosis(engines=[engine]))
    assert "[0] NVIDIA L4 · compute capability 8.9 (sm_89) · 24.0 GiB" in text and "driver supports CUDA 12.4" in text
    assert "providers that start here: TensorrtExecutionProvider, CUDAExecutionProvider, CPUExecutionProvider" in text
    assert "ok m: tensorrt l4-fp16 (engine-l4-fp16.plan, sm_89, TensorRT 10.16.1.11)" in text
    assert text.endswith("nothing to install.")
