"""Export of encoder checkpoints to ONNX model directories: manifest, sessions, graphs, verification, CLI."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from extract_trt.artifacts.manifest import (
    MANIFEST_NAME,
    ManifestError,
    ModelManifest,
    TensorSpec,
    VariantSpec,
    load_manifest,
)
from extract_trt.runtime.labelers.session import (
    ProviderUnavailableError,
    SessionConfig,
    TensorRTOptions,
    create_session,
    resolve_providers,
)

import encoder_fixtures as fx

pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
pytestmark = pytest.mark.skipif(not (fx.DATA / "pulpie-pages.jsonl.gz").exists(), reason="shared data not mounted")

CPU_ONLY = ["CPUExecutionProvider"]


# -- manifest ---------------------------------------------------------------------------------------


def small_manifest(**changes) -> ModelManifest:
    fields = dict(
        architecture="eurobert",
        task="token-classification",
        sep_token_id=9,
        inputs=[TensorSpec("input_ids", "int64", ["batch", "seq"])],
        outputs=[TensorSpec("block_label", "int64", ["n"])],
        variants={"fp32": VariantSpec("model.onnx")},
        decoder={"prompt": "reserved for decoders"},
        extra={"note": 1},
    )
    fields.update(changes)
    return ModelManifest(**fields)


def test_manifest_round_trips_through_json(tmp_path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"x")
    (tmp_path / "tokenizer.json").write_text("{}")
    manifest = small_manifest()
    manifest.save(tmp_path)
    loaded = load_manifest(tmp_path)
    assert loaded == manifest
    assert loaded.label_map == {0: "other", 1: "main"} and loaded.tensor("input_ids").dtype == "int64"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"task": "summarise"}, "task"),
        ({"sep_token_id": None}, "sep_token_id"),
        ({"variants": {"fp8": VariantSpec("m.onnx")}}, "unknown variant"),
        ({"variants": {}}, "no model variants"),
        ({"main_label_id": 5}, "main_label_id"),
        ({"inputs": [TensorSpec("input_ids", "int4")]}, "dtype"),
        ({"max_tokens": 1}, "max_tokens"),
        ({"sep_token_id": 0}, "pad/BOS/EOS"),
        ({"output_layout": "rows"}, "output_layout"),
    ],
)
def test_manifest_validation_names_the_problem(changes, message) -> None:
    with pytest.raises(ManifestError, match=message):
        small_manifest(**changes).validate()


def test_manifest_load_errors(tmp_path) -> None:
    with pytest.raises(ManifestError, match="not found"):
        load_manifest(tmp_path)
    (tmp_path / MANIFEST_NAME).write_text("{not json")
    with pytest.raises(ManifestError, match="cannot read"):
        load_manifest(tmp_path)
    data = small_manifest().to_dict()
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({**data, "sep_id": 3}))
    with pytest.raises(ManifestError, match="unknown manifest key"):
        load_manifest(tmp_path)
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(data))
    with pytest.raises(ManifestError, match="does not exist"):
        load_manifest(tmp_path)
    assert load_manifest(tmp_path, check_files=False).architecture == "eurobert"
    with pytest.raises(ManifestError, match="int8"):
        small_manifest().variant("int8")


# -- sessions ---------------------------------------------------------------------------------------


def test_provider_resolution() -> None:
    assert resolve_providers("auto", CPU_ONLY, False) == (CPU_ONLY, False)
    assert resolve_providers("auto", ["CUDAExecutionProvider", *CPU_ONLY], False)[0] == ["CUDAExecutionProvider", *CPU_ONLY]
    with pytest.raises(ProviderUnavailableError, match="allow-cpu-fallback") as refused:
        resolve_providers(["tensorrt", "cuda"], CPU_ONLY, False)
    assert "SessionConfig(allow_cpu_fallback=True)" in str(refused.value)  # the way from Python, not just the CLI flag
    assert resolve_providers("cuda,cpu", CPU_ONLY, True) == (CPU_ONLY, True)
    assert resolve_providers(["cpu"], CPU_ONLY, False) == (CPU_ONLY, False)
    with pytest.raises(ValueError, match="unknown execution provider"):
        resolve_providers(["npu"], CPU_ONLY, False)


def test_tensorrt_options_cover_the_packed_shapes(tmp_path) -> None:
    options = TensorRTOptions.for_packed_inputs(
        ["input_ids", "attention_mask"], max_tokens=8192, max_batch=8, engine_cache_dir=str(tmp_path / "engines")
    ).provider_options()
    assert options["trt_fp16_enable"] == "1" and options["trt_engine_cache_enable"] == "1"
    assert options["trt_profile_min_shapes"] == "input_ids:1x1,attention_mask:1x1"
    assert options["trt_profile_max_shapes"] == "input_ids:8x8192,attention_mask:8x8192"
    assert (tmp_path / "engines").is_dir()
    with pytest.raises(ValueError, match="profile"):
        TensorRTOptions(profile_min={"input_ids": (1, 1)}).provider_options()


def test_sessions_report_the_providers_in_use() -> None:
    import onnxruntime as ort

    path = fx.exported("bert") / "model.onnx"
    info = create_session(path, SessionConfig(intra_op_num_threads=1))
    assert info.providers[-1] == "CPUExecutionProvider" and info.providers == info.session.get_providers()
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        with pytest.raises(ProviderUnavailableError):
            create_session(path, SessionConfig(providers=["cuda"]))
        fallback = create_session(path, SessionConfig(providers=["cuda"], allow_cpu_fallback=True))
        assert fallback.providers == CPU_ONLY and fallback.fell_back and "fallback" in fallback.describe()


@pytest.mark.skipif(
    "CUDAExecutionProvider" not in __import__("onnxruntime").get_available_providers(),
    reason="no CUDA execution provider in this onnxruntime build (CPU-only CI)",
)
def test_cuda_session_runs_on_the_gpu() -> None:
    info = create_session(fx.exported("bert") / "model.onnx", SessionConfig(providers=["cuda"]))
    assert info.on_gpu and info.providers[0] == "CUDAExecutionProvider"


# -- export -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("architecture", ["eurobert", "bert", "modernbert"])
def test_export_writes_a_verified_self_describing_directory(architecture) -> None:
    from extract_trt.export.encoder import checkpoint_sha256
    from extract_trt.kernels.sep_gather import BLOCK_OUTPUTS

    model_dir = fx.exported(architecture)
    manifest = load_manifest(model_dir)
    tok = fx.tokenizer()
    assert manifest.architecture == architecture and manifest.task == "token-classification"
    assert manifest.sep_token_id == tok.token_to_id("<|sep|>") == fx.VOCAB
    assert (manifest.bos_token_id, manifest.eos_token_id, manifest.pad_token_id) == (0, 1, 1)
    assert manifest.max_tokens == fx.MAX_TOKENS and manifest.opset == 18
    assert [t.name for t in manifest.outputs] == list(BLOCK_OUTPUTS)
    expected_inputs = ["input_ids", "attention_mask"] + (["token_type_ids"] if architecture == "bert" else [])
    assert [t.name for t in manifest.inputs] == expected_inputs
    fp32 = manifest.variant("fp32")
    assert fp32.labels_identical and fp32.max_abs_diff <= 1e-4
    assert manifest.source.checkpoint_sha256 == checkpoint_sha256(fx.checkpoint(architecture))
    assert ("custom" in manifest.source.exporter) == (architecture == "eurobert")


def test_sep_gather_graph_equals_the_plain_graph_and_numpy() -> None:
    import onnxruntime as ort

    from extract_trt.kernels.batching import pad_batch
    from extract_trt.kernels.packing import pack_chunks
    from extract_trt.kernels.sep_gather import sep_gather
    from extract_trt.runtime.labelers.block_tokens import BlockTokenizer

    plain_dir, gathered_dir = fx.exported("eurobert", layout="logits"), fx.exported("eurobert")
    manifest = load_manifest(plain_dir)
    assert manifest.output_layout == "logits" and manifest.outputs[0].name == "logits"
    tokenizer = BlockTokenizer.from_file(plain_dir / "tokenizer.json")
    chunks = []
    for ids in tokenizer.encode_pages(fx.test_pages()):
        chunks += pack_chunks(ids, 200, manifest.sep_token_id, 0, 1)
    chunks = chunks[:: max(1, len(chunks) // 8)]  # spread over the pages, lengths vary
    input_ids, mask = pad_batch(chunks, manifest.pad_token_id)
    feeds = {"input_ids": input_ids, "attention_mask": mask}
    logits = ort.InferenceSession(str(plain_dir / "model.onnx"), providers=CPU_ONLY).run(None, feeds)[0]
    block_logits, main_prob, label, index = ort.InferenceSession(str(gathered_dir / "model.onnx"), providers=CPU_ONLY).run(None, feeds)
    expected = sep_gather(input_ids, logits, manifest.sep_token_id)
    assert len(label) == sum(len(c.blocks) for c in chunks) and len(set(label.tolist())) == 2
    np.testing.assert_array_equal(index, expected.index)
    np.testing.assert_array_equal(label, expected.label)
    np.testing.assert_allclose(block_logits, expected.logits, atol=1e-5)
    np.testing.assert_allclose(main_prob, expected.main_prob, atol=1e-5)


def test_rotary_inv_freq_is_restored_as_spec_3_4() -> None:
    import torch
    from transformers import AutoModelForTokenClassification

    from extract_trt.export.encoder import restore_rotary_inv_freq

    model = AutoModelForTokenClassification.from_pretrained(fx.checkpoint("eurobert"), trust_remote_code=True).eval()
    x = torch.tensor([[0, 5, 17, 300, fx.VOCAB, 1]])
    with torch.no_grad():
        before = model(input_ids=x).logits
        model.model.rotary_emb.inv_freq = torch.zeros_like(model.model.rotary_emb.inv_freq)  # as if lost on load
        broken = model(input_ids=x).logits
        assert restore_rotary_inv_freq(model)
        after = model(input_ids=x).logits
    head_dim = model.config.hidden_size // model.config.num_attention_heads
    expected = 1.0 / (250000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    torch.testing.assert_close(model.model.rotary_emb.inv_freq, expected)
    assert not torch.allclose(before, broken) and torch.allclose(before, after)


def test_export_errors_are_specific(tmp_path) -> None:
    from extract_trt.export.encoder import EncoderExportOptions, ExportError, export_encoder

    with pytest.raises(ExportError, match="config.json"):
        export_encoder(tmp_path, tmp_path / "out")
    with pytest.raises(ExportError, match="fp32"):
        export_encoder(fx.checkpoint("bert"), tmp_path / "out", EncoderExportOptions(variants=("int8",)))
    with pytest.raises(ExportError, match="trust-remote-code"):
        export_encoder(fx.checkpoint("eurobert"), tmp_path / "out", EncoderExportOptions(trust_remote_code=False))


def test_failed_verification_leaves_no_manifest(tmp_path, monkeypatch) -> None:
    from extract_trt.export import encoder

    monkeypatch.setattr(encoder, "FP32_TOLERANCE", -1.0)  # no graph can pass: exercises the failure path
    with pytest.raises(encoder.ExportVerificationError, match="differs from PyTorch"):
        encoder.export_encoder(fx.checkpoint("bert"), tmp_path / "out")
    assert not (tmp_path / "out" / MANIFEST_NAME).exists()
    assert not list((tmp_path / "out").glob(".export-*"))


def test_cli_export_with_int8(tmp_path) -> None:
    from typer.testing import CliRunner

    from extract_trt.cli import app

    ckpt = tmp_path / "ckpt"
    shutil.copytree(fx.checkpoint("eurobert"), ckpt)
    runner = CliRunner()
    result = runner.invoke(app, ["export", "onnx", str(ckpt), str(tmp_path / "m")])
    assert result.exit_code == 2 and "trust-remote-code" in result.output
    result = runner.invoke(app, ["export", "onnx", str(ckpt), str(tmp_path / "m"), "--trust-remote-code", "--int8"])
    assert result.exit_code == 0, result.output
    assert "fp32: max |ONNX Runtime - PyTorch|" in result.output and "model.int8.onnx\tint8" in result.output
    manifest = load_manifest(tmp_path / "m")
    assert set(manifest.variants) == {"fp32", "int8"}
    assert manifest.variants["int8"].label_agreement >= 0.9
    assert manifest.variants["int8"].bytes < manifest.variants["fp32"].bytes
