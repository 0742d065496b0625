"""TensorRT path without TensorRT: compatibility check on every exported graph, profile derivation,
engine records and bindings, ONNX Runtime TensorRT-EP options, mismatch errors. Engine builds and runs
need a GPU with TensorRT (scripts/gpu-check.sh); those tests skip with the reason."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from extract_trt.artifacts.manifest import ManifestError, load_manifest
from extract_trt.artifacts.trt_engine import (
    EngineMismatchError,
    EngineRecord,
    ProfileError,
    ShapeRange,
    TensorRTUnavailableError,
    check_engine_compatible,
)
from extract_trt.export.trt_compat import check_tensorrt_compat, rules
from extract_trt.export.trt_engine import (
    TrtExportOptions,
    engine_bindings,
    ort_tensorrt_options,
    record_engine,
    sample_profiles,
    write_qdq_int8,
)
from extract_trt.export.trt_profiles import decoder_profiles, encoder_profiles, length_stats
from extract_trt.kernels.batching import plan_batches
from extract_trt.runtime.labelers.session import TensorRTOptions

import decoder_fixtures
import encoder_fixtures as fx

pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
pytestmark = pytest.mark.skipif(not (fx.DATA / "pulpie-pages.jsonl.gz").exists(), reason="shared data not mounted")
HAS_TENSORRT = importlib.util.find_spec("tensorrt") is not None
BLOCK_MODEL = Path(__file__).resolve().parents[1] / "src" / "extract_trt" / "models" / "block-model"


# -- static compatibility check ---------------------------------------------------------------------


@pytest.mark.parametrize("architecture", ["eurobert", "bert", "modernbert"])
def test_exported_encoders_pass_the_tensorrt_check(architecture, tmp_path) -> None:
    from extract_trt.export.encoder import _write_fp16

    fp32 = fx.exported(architecture) / "model.onnx"
    _write_fp16(onnx.load(str(fp32)), tmp_path / "model.fp16.onnx")
    for path in (fp32, tmp_path / "model.fp16.onnx", fx.exported(architecture, layout="logits") / "model.onnx"):
        report = check_tensorrt_compat(path)
        assert report.ok, report.errors
        assert {"MatMul", "Softmax"} <= set(report.op_types)
    assert "NonZero" in check_tensorrt_compat(fp32).op_types  # the <|sep|> gather is in the checked graph


def test_exported_decoder_and_block_model_pass_the_check() -> None:
    decoder = check_tensorrt_compat(decoder_fixtures.exported(0, "mineru-v1.1", 4096) / "model.onnx")
    assert decoder.ok, decoder.errors
    # The block model's graph starts from the bag sums: no scatter (TensorRT 10 rejects ScatterND's reduction).
    block = check_tensorrt_compat(BLOCK_MODEL / "model.onnx")
    assert block.ok and not block.issues, block.issues


def test_dynamic_int8_graphs_are_rejected_and_qdq_int8_accepted(tmp_path) -> None:
    dynamic = check_tensorrt_compat(fx.exported("eurobert", ("fp32", "int8")) / "model.int8.onnx")
    assert {"MatMulInteger", "DynamicQuantizeLinear"} <= {i.message.split()[0] for i in dynamic.errors}
    with pytest.raises(Exception, match="MatMulInteger"):
        dynamic.raise_for_errors()

    model_dir = tmp_path / "m"
    shutil.copytree(fx.exported("eurobert"), model_dir)
    manifest = load_manifest(model_dir)
    profiles = sample_profiles(model_dir, manifest, TrtExportOptions(gpu="l4", precision="int8", max_batch_size=4))
    qdq = write_qdq_int8(model_dir, manifest, profiles)
    report = check_tensorrt_compat(qdq)
    assert report.ok, report.errors and {"QuantizeLinear", "DequantizeLinear"} <= set(report.op_types)
    # The QDQ graph computes the same labels as fp32 on real pages (ORT CPU runs QDQ as int8 or simulated).
    from extract_trt.runtime.labelers.encoder import EncoderLabeler
    from extract_trt.runtime.labelers.session import SessionConfig

    fp32 = EncoderLabeler(model_dir, session=SessionConfig(providers="cpu"))
    prepared = fp32.prepare(fx.test_pages()[:2])
    expected = [lab.main for lab in fp32.infer(prepared)]
    fp32._session = __import__("onnxruntime").InferenceSession(str(qdq), providers=["CPUExecutionProvider"])
    got = [lab.main for lab in fp32.infer(prepared)]
    agreement = np.mean(np.concatenate(got) == np.concatenate(expected))
    assert agreement >= 0.8


def _graph(node, inputs, outputs, initializers=(), opset=18):
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_check_names_each_rejected_pattern() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 2])
    idx = helper.make_tensor_value_info("i", TensorProto.INT64, [3, 1])
    upd = helper.make_tensor_value_info("u", TensorProto.FLOAT, [3, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 2])
    scatter = _graph(helper.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add"), [x, idx, upd], [y])
    assert [i.rule for i in check_tensorrt_compat(scatter).errors] == ["attribute"]
    plain = _graph(helper.make_node("ScatterND", ["x", "i", "u"], ["y"]), [x, idx, upd], [y])
    assert check_tensorrt_compat(plain).ok

    d = helper.make_tensor_value_info("d", TensorProto.DOUBLE, [2])
    double = _graph(helper.make_node("Cast", ["x"], ["d"], to=TensorProto.DOUBLE), [x], [d])
    assert {"attribute", "dtype"} <= {i.rule for i in check_tensorrt_compat(double).errors}
    assert [i.rule for i in check_tensorrt_compat(_graph(helper.make_node("Relu", ["x"], ["y"]), [x], [y], opset=23)).errors] == ["opset"]
    unique = _graph(helper.make_node("Unique", ["x"], ["y"]), [x], [y])
    assert "Unique" in check_tensorrt_compat(unique).errors[0].message
    custom = _graph(helper.make_node("FastGelu", ["x"], ["y"], domain="com.microsoft"), [x], [y])
    assert check_tensorrt_compat(custom).errors[0].rule == "domain"
    big = helper.make_tensor("big", TensorProto.INT64, [2], [2**40, 2**63 - 1])
    shape = _graph(helper.make_node("Reshape", ["x", "big"], ["y"]), [x], [y], [big])
    report = check_tensorrt_compat(shape)
    assert [i.rule for i in report.warnings] == ["int64-range"] and "1099511627776" in report.warnings[0].message
    assert "onnx-tensorrt" in rules()["source"] and "10.15" in rules()["source"]


# -- profiles ---------------------------------------------------------------------------------------


def test_encoder_profile_covers_every_batch_the_labeler_makes(tmp_path) -> None:
    model_dir = fx.exported("bert")
    manifest = load_manifest(model_dir)
    options = TrtExportOptions(gpu="a100", max_batch_tokens=4096, max_batch_size=16)
    html = [json.loads(line)["html"] for line in __import__("gzip").open(fx.DATA / "pulpie-pages.jsonl.gz", "rt")][:6]
    (profile,) = sample_profiles(model_dir, manifest, TrtExportOptions(**{**vars_of(options), "sample_html": html}))
    shape = profile.shapes["input_ids"]
    assert shape.min == (1, 1) and shape.max == (16, manifest.max_tokens)
    assert shape.opt[1] % 8 == 0 and shape.opt[0] * shape.opt[1] <= 4096
    assert profile.sample["chunk_tokens"].count > len(html)  # real pages: several chunks each
    # Every batch the encoder labeler plans from these pages lies in the profile.
    from extract_trt.runtime.html.simplify import simplify
    from extract_trt.runtime.labelers.encoder import EncoderLabeler
    from extract_trt.runtime.labelers.session import SessionConfig

    labeler = EncoderLabeler(model_dir, session=SessionConfig(providers="cpu"), max_batch_tokens=4096, max_batch_size=16)
    chunks = labeler.prepare([simplify(h) for h in html]).chunks
    for batch in plan_batches([len(c) for c in chunks], 4096, 16, max_padding=0.1):
        feeds = {n: (len(batch), max(len(chunks[i]) for i in batch)) for n in profile.shapes}
        assert profile.covers(feeds)
    assert not profile.covers({"input_ids": (17, 8)})


def vars_of(options: TrtExportOptions) -> dict:
    return {f: getattr(options, f) for f in TrtExportOptions.__dataclass_fields__}


def test_profile_arithmetic_and_errors() -> None:
    stats = length_stats([10, 10, 10, 500])
    assert (stats.min, stats.p50, stats.max, stats.token_weighted_p50) == (10, 10, 500, 500)
    (p,) = encoder_profiles([100, 200, 300], ["input_ids"], max_tokens=512, max_batch_tokens=1024, max_batch_size=64)
    assert p.shapes["input_ids"] == ShapeRange((1, 1), (5, 200), (64, 512))  # 1024 // 200 rows at the token-weighted median
    with pytest.raises(ProfileError, match="exceeds"):
        encoder_profiles([600], ["input_ids"], max_tokens=512, max_batch_tokens=1024, max_batch_size=8)
    with pytest.raises(ProfileError):
        ShapeRange((1, 8), (1, 4), (1, 16))
    with pytest.raises(ProfileError):
        length_stats([])
    pasts = ["past_key_values.0.key", "past_key_values.0.value"]
    prefill, decode = decoder_profiles([300, 900, 2000], [40, 60], max_context=4096, num_kv_heads=2, head_dim=16,
                                       past_names=pasts, max_batch=8, max_chunk=1024)  # fmt: skip
    assert prefill.shapes["input_ids"].max == (8, 1024) and prefill.shapes[pasts[0]].min == (1, 2, 0, 16)
    assert decode.shapes["input_ids"].max == (8, 60) and decode.shapes[pasts[1]].max == (8, 2, 4095, 16)
    # The mask spans cache + new tokens at every corner of the profile.
    for prof in (prefill, decode):
        for key in ("min", "opt", "max"):
            mask, ids, past = (getattr(prof.shapes[n], key) for n in ("attention_mask", "input_ids", pasts[0]))
            assert mask[1] == past[2] + ids[1]
    assert prefill.covers({"input_ids": (1, 1000), pasts[0]: (1, 2, 0, 16)})
    assert not decode.covers({"input_ids": (1, 1000)})


def test_decoder_profiles_from_sample_pages() -> None:
    model_dir = decoder_fixtures.exported(0, "mineru-v1.1", 4096)
    manifest = load_manifest(model_dir)
    prefill, decode = sample_profiles(model_dir, manifest, TrtExportOptions(gpu="l4", decoder_max_chunk=512))
    spec = manifest.decoder
    assert set(prefill.shapes) == {"input_ids", "attention_mask", "position_ids", *spec["past_names"]}
    assert prefill.shapes["input_ids"].max[1] == 512 and decode.shapes[spec["past_names"][0]].max[2] == 4095
    assert decode.sample["answer_tokens"].max == decode.shapes["input_ids"].max[1]


# -- ONNX Runtime TensorRT EP options ---------------------------------------------------------------


def test_ort_tensorrt_ep_options(tmp_path) -> None:
    pasts = ["past_key_values.0.key"]
    profiles = decoder_profiles([100], [10], max_context=256, num_kv_heads=1, head_dim=4, past_names=pasts, max_chunk=64)
    options = ort_tensorrt_options(tmp_path, TrtExportOptions(gpu="l4", precision="bf16"), profiles)
    assert options["trt_bf16_enable"] == "1" and options["trt_fp16_enable"] == "0" and options["trt_int8_enable"] == "0"
    assert options["trt_engine_cache_path"] == str(tmp_path / "trt-cache") and (tmp_path / "trt-cache").is_dir()
    assert options["trt_dump_ep_context_model"] == "1"
    assert options["trt_ep_context_file_path"] == str(tmp_path / "model.l4-bf16_ctx.onnx")
    # Two profiles: every input listed twice, in profile order (ORT's multi-profile syntax).
    mins = options["trt_profile_min_shapes"].split(",")
    assert [m.split(":")[0] for m in mins].count("input_ids") == 2
    assert "input_ids:1x1" in mins and "past_key_values.0.key:1x1x0x4" in mins
    assert options["trt_max_workspace_size"] == str(4 << 30)
    int8 = ort_tensorrt_options(tmp_path, TrtExportOptions(gpu="a100", precision="int8"), profiles[:1], dump_ep_context=False)
    assert int8["trt_int8_enable"] == "1" and "trt_dump_ep_context_model" not in int8
    with pytest.raises(ValueError, match="ep_context_file_path"):
        TensorRTOptions(dump_ep_context_model=True).provider_options()
    assert profiles[0].trtexec_flags()[0].startswith("--minShapes=input_ids:1x1,")


# -- engine records, bindings, mismatches -----------------------------------------------------------


def _record(model_dir: Path, **changes) -> EngineRecord:
    manifest = load_manifest(model_dir)
    profiles = sample_profiles(model_dir, manifest, TrtExportOptions(gpu="l4", max_batch_size=8))
    bindings = engine_bindings(onnx.load(str(model_dir / "model.onnx")), profiles)
    fields = dict(file="engine-l4-fp16.plan", gpu="l4", compute_capability="sm_89", precision="fp16",
                  tensorrt_version="10.3.0.26", onnx_file="model.onnx", profiles=[p.to_dict() for p in profiles],
                  bindings=bindings, workspace_bytes=1 << 30)  # fmt: skip
    fields.update(changes)
    return EngineRecord(**fields)


def test_engine_record_documents_every_binding_and_round_trips(tmp_path) -> None:
    model_dir = tmp_path / "m"
    shutil.copytree(fx.exported("eurobert"), model_dir)
    record = _record(model_dir)
    by_name = {b.name: b for b in record.bindings}
    manifest = load_manifest(model_dir)
    assert [b.name for b in record.bindings if b.mode == "input"] == [t.name for t in manifest.inputs]
    assert [b.name for b in record.bindings if b.mode == "output"] == [t.name for t in manifest.outputs]
    assert by_name["input_ids"].shape == [-1, -1] and by_name["input_ids"].dtype == "int64"
    assert by_name["input_ids"].profiles["packed"]["max"] == [8, manifest.max_tokens]
    assert all(by_name[n].data_dependent for n in ("block_label", "block_logits", "block_main_prob", "block_index"))
    with pytest.raises(ManifestError, match="engine l4-fp16"):  # the manifest refuses an engine file that is absent
        record_engine(model_dir, manifest, record)
    (model_dir / record.file).write_bytes(b"plan")
    record_engine(model_dir, load_manifest(model_dir), record)
    again = EngineRecord.from_dict(load_manifest(model_dir).engines["l4-fp16"])
    assert again == record
    # The logits layout has no data-dependent output.
    logits = engine_bindings(onnx.load(str(fx.exported("eurobert", layout="logits") / "model.onnx")),
                             sample_profiles(fx.exported("eurobert", layout="logits"), load_manifest(fx.exported("eurobert", layout="logits")),
                                             TrtExportOptions(gpu="l4")))  # fmt: skip
    assert not any(b.data_dependent for b in logits)


def test_engine_mismatch_errors(tmp_path) -> None:
    from extract_trt.runtime.labelers.trt_engine import select_engine

    record = EngineRecord(file="engine-l4-fp16.plan", gpu="l4", compute_capability="sm_89", precision="fp16",
                          tensorrt_version="10.3.0.26", onnx_file="model.onnx", profiles=[], bindings=[], workspace_bytes=1)  # fmt: skip
    check_engine_compatible(record, compute_capability=(8, 9), tensorrt_version="10.3.0.26.post1")
    with pytest.raises(EngineMismatchError, match=r"built for l4 \(sm_89\); this GPU is sm_80"):
        check_engine_compatible(record, compute_capability=(8, 0), tensorrt_version="10.3.0.26")
    with pytest.raises(EngineMismatchError, match="TensorRT 10.3.0.26; this process has TensorRT 10.4.0"):
        check_engine_compatible(record, compute_capability=(8, 9), tensorrt_version="10.4.0")
    manifest = load_manifest(fx.exported("bert"))
    manifest.engines = {"l4-fp16": record.to_dict(), "a100-int8": {**record.to_dict(), "compute_capability": "sm_80", "precision": "int8"}}
    assert select_engine(manifest, (8, 9)) == "l4-fp16" and select_engine(manifest, (8, 0), "int8") == "a100-int8"
    with pytest.raises(EngineMismatchError, match=r"sm_90.*l4-fp16 \(sm_89\)"):
        select_engine(manifest, (9, 0))
    with pytest.raises(Exception, match="unknown GPU 'h100'"):
        TrtExportOptions(gpu="h100")


@pytest.mark.skipif(HAS_TENSORRT, reason="checks the message shown where TensorRT is absent")
def test_without_tensorrt_the_error_says_so(tmp_path) -> None:
    from typer.testing import CliRunner

    from extract_trt.cli import app
    from extract_trt.runtime.labelers.trt_engine import EngineEncoderLabeler

    with pytest.raises(TensorRTUnavailableError, match=r"pip install .extract-trt\[gpu\]."):
        EngineEncoderLabeler(fx.exported("bert"))
    result = CliRunner().invoke(app, ["export", "trt", str(fx.exported("bert")), "--gpu", "l4"])
    assert result.exit_code == 2 and "TensorRT is not importable" in result.output


@pytest.mark.skipif(not HAS_TENSORRT, reason="needs TensorRT 10 or 11 and an NVIDIA GPU (run scripts/gpu-check.sh there)")
def test_engine_labels_equal_onnx_runtime_cpu(tmp_path) -> None:
    import torch

    from extract_trt.export.trt_engine import GPUS, export_tensorrt
    from extract_trt.runtime.labelers.encoder import EncoderLabeler
    from extract_trt.runtime.labelers.session import SessionConfig
    from extract_trt.runtime.labelers.trt_engine import EngineEncoderLabeler

    gpu = next((k for k, g in GPUS.items() if g.compute_capability == torch.cuda.get_device_capability(0)), None)
    if gpu is None:
        pytest.skip(f"GPU sm_{torch.cuda.get_device_capability(0)} is neither an L4 nor an A100")
    model_dir = tmp_path / "m"
    shutil.copytree(fx.exported("eurobert"), model_dir)
    export_tensorrt(model_dir, TrtExportOptions(gpu=gpu, precision="fp16", max_batch_size=16))
    pages = fx.test_pages()
    expected = EncoderLabeler(model_dir, session=SessionConfig(providers="cpu")).label(pages)
    got = EngineEncoderLabeler(model_dir, max_batch_size=16).label(pages)
    agreement = np.mean(np.concatenate([g.main for g in got]) == np.concatenate([e.main for e in expected]))
    assert agreement >= 0.98
