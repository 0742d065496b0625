"""Pulpie-format encoder checkpoints → verified ONNX model directories (``extract-trt export onnx``).

A checkpoint directory (``config.json``, weights, tokenizer; EuroBERT with its remote code) becomes::

    model.onnx          fp32 graph ending in the <|sep|> gather (kernels.sep_gather), or plain logits
    model.fp16.onnx     on request: fp16 weights and compute, fp32 inputs/outputs
    model.int8.onnx     on request: onnxruntime dynamic int8 quantization of the fp32 graph
    tokenizer.json      the checkpoint's tokenizer (with <|sep|> added if it lacked it, as Pulpie does)
    extract-trt.json    the manifest, written last: a directory without it is not a finished export

Architectures in Optimum's ONNX registry (BERT, RoBERTa, ModernBERT, …) go through Optimum's own
config; others (EuroBERT: remote code, not in the registry) through a generic encoder config passed as
``custom_onnx_configs``. EuroBERT's rotary ``inv_freq`` is recomputed before export (spec §3.4).

Every variant is checked before the manifest is written: ONNX Runtime vs PyTorch on packed, padded
chunks of real pages. fp32 must agree to ``FP32_TOLERANCE`` with identical labels (else
:class:`ExportVerificationError`); fp16 and int8 differences and label agreement are recorded in the
manifest and must reach ``min_label_agreement``.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from extract_trt.export.common import (
    VARIANT_FILES,
    ExportError,
    ExportVerificationError,
    checkpoint_sha256,
    sample_pages,
    save_onnx,
    start_export,
    tensor_spec,
    write_int8,
)
from extract_trt.artifacts.manifest import MANIFEST_NAME, ModelManifest, SourceInfo, VariantSpec, file_sha256
from extract_trt.kernels.batching import pad_batch
from extract_trt.kernels.packing import pack_chunks
from extract_trt.kernels.sep_gather import BLOCK_OUTPUTS, append_sep_gather, sep_gather
from extract_trt.runtime.labelers.block_tokens import BlockTokenizer

__all__ = [
    "EncoderExportOptions",
    "ExportError",
    "ExportVerificationError",
    "checkpoint_sha256",
    "export_encoder",
    "restore_rotary_inv_freq",
]

log = logging.getLogger(__name__)

SEP_TOKEN = "<|sep|>"
FP32_TOLERANCE = 1e-4


@dataclass(slots=True)
class EncoderExportOptions:
    """What to export and how to check it.

    ``max_tokens``: chunk size the runtime packs to (default: ``min(8192, max_position_embeddings)``).
    ``verify_html``: pages whose chunks are used for verification (default: the bundled samples),
    packed to ``verify_max_tokens`` so the check stays cheap for large models; at most
    ``verify_chunks`` chunks, run as one padded batch.
    """

    variants: tuple[str, ...] = ("fp32",)
    max_tokens: int | None = None
    opset: int = 18
    trust_remote_code: bool = False
    sep_gather: bool = True
    verify_html: Sequence[str] | None = None
    verify_max_tokens: int = 512
    verify_chunks: int = 8
    min_label_agreement: float = 0.9
    simplifier_profile: str = "mineru-v1.1"
    cutoff_length: int = 500
    extra: dict = field(default_factory=dict)


@dataclass(slots=True)
class _Loaded:
    model: object
    tokenizer: object  # transformers PreTrainedTokenizerFast
    model_type: str
    sep_id: int
    bos_id: int | None
    eos_id: int | None
    pad_id: int
    max_positions: int
    label_map: dict[int, str]


def export_encoder(
    checkpoint: str | Path,
    out_dir: str | Path,
    options: EncoderExportOptions | None = None,
    *,
    report: Callable[[str], None] | None = None,
) -> ModelManifest:
    """Export ``checkpoint`` to ``out_dir``, verify every variant, and write the manifest last."""
    options = options or EncoderExportOptions()
    report = report or log.info
    checkpoint, out = Path(checkpoint), Path(out_dir)
    start_export(checkpoint, out, options.variants)

    loaded = _load_checkpoint(checkpoint, options.trust_remote_code)
    max_tokens = options.max_tokens or min(8192, loaded.max_positions)
    if max_tokens > loaded.max_positions:
        raise ExportError(f"max_tokens {max_tokens} exceeds the model's {loaded.max_positions} positions")
    loaded.tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    block_tokenizer = BlockTokenizer.from_file(out / "tokenizer.json")
    input_ids, attention_mask = _verification_batch(block_tokenizer, loaded, options)
    torch_logits = _torch_logits(loaded.model, input_ids, attention_mask)
    report(f"{loaded.model_type}: verifying on {len(input_ids)} packed chunks of up to {input_ids.shape[1]} tokens")

    with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as tmp:
        plain_path, exporter = _onnx_export(loaded.model, loaded.model_type, Path(tmp), options.opset)
        import onnx

        plain = onnx.load(str(plain_path))
        feeds = _feeds(plain, input_ids, attention_mask)
        plain_logits = _run(plain_path, feeds)[0]
        real = attention_mask.astype(bool)
        diff = float(np.abs(plain_logits[real] - torch_logits[real]).max())
        report(f"plain graph: max |ONNX Runtime - PyTorch| logit = {diff:.2e} over {int(real.sum())} tokens")
        final = plain
        if options.sep_gather:
            final = append_sep_gather(plain, loaded.sep_id, main_label_id=_main_label(loaded.label_map))
        fp32_path = out / VARIANT_FILES["fp32"]
        save_onnx(final, fp32_path)
        variants = {"fp32": _verify("fp32", fp32_path, feeds, input_ids, torch_logits, loaded, options, report)}
        if options.sep_gather:
            _check_against_plain(fp32_path, feeds, input_ids, plain_logits, loaded)
        if "fp16" in options.variants:
            _write_fp16(final, out / VARIANT_FILES["fp16"])
            variants["fp16"] = _verify("fp16", out / VARIANT_FILES["fp16"], feeds, input_ids, torch_logits, loaded, options, report)
        if "int8" in options.variants:
            write_int8(fp32_path, out / VARIANT_FILES["int8"])
            variants["int8"] = _verify("int8", out / VARIANT_FILES["int8"], feeds, input_ids, torch_logits, loaded, options, report)

    import transformers

    manifest = ModelManifest(
        architecture=loaded.model_type,
        task="token-classification",
        label_map=loaded.label_map,
        main_label_id=_main_label(loaded.label_map),
        sep_token=SEP_TOKEN,
        sep_token_id=loaded.sep_id,
        bos_token_id=loaded.bos_id,
        eos_token_id=loaded.eos_id,
        pad_token_id=loaded.pad_id,
        max_tokens=max_tokens,
        simplifier_profile=options.simplifier_profile,
        cutoff_length=options.cutoff_length,
        inputs=[tensor_spec(t) for t in final.graph.input],
        outputs=[tensor_spec(t) for t in final.graph.output],
        output_layout="blocks" if options.sep_gather else "logits",
        opset=max(o.version for o in final.opset_import if o.domain in ("", "ai.onnx")),
        variants=variants,
        source=SourceInfo(
            checkpoint=str(checkpoint.resolve()),
            checkpoint_sha256=checkpoint_sha256(checkpoint),
            model_type=loaded.model_type,
            exporter=exporter,
            transformers_version=transformers.__version__,
            created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        ),
        extra=dict(options.extra),
    )
    manifest.save(out)
    report(f"wrote {out / MANIFEST_NAME} ({', '.join(variants)})")
    return manifest


def restore_rotary_inv_freq(model) -> bool:
    """Recompute EuroBERT's rotary ``inv_freq`` (spec §3.4); returns whether the model has one.

    The buffer is non-persistent (not in the checkpoint), and loaders that build the model on the meta
    device or in another dtype leave it empty or rounded. ``1 / θ^(arange(0, d, 2)/d)`` with
    ``θ = rope_theta`` (default 250000) and ``d = head_dim`` (default hidden / heads), in float32.
    """
    import torch

    rotary = getattr(getattr(model, "model", None), "rotary_emb", None)
    if rotary is None or not hasattr(rotary, "inv_freq"):
        return False
    config = model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    theta = getattr(config, "rope_theta", None) or 250000.0
    device = next(model.parameters()).device
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32, device=device) / head_dim))
    rotary.inv_freq = inv_freq
    rotary.original_inv_freq = inv_freq
    return True


# -- loading ----------------------------------------------------------------------------------------


def _load_checkpoint(checkpoint: Path, trust_remote_code: bool) -> _Loaded:
    import torch
    from transformers import AutoConfig, AutoModelForTokenClassification, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(checkpoint, trust_remote_code=trust_remote_code)
    except ValueError as exc:  # remote code without trust_remote_code, unknown model_type
        raise ExportError(f"cannot load {checkpoint}/config.json: {exc} (EuroBERT needs --trust-remote-code)") from exc
    tokenizer = AutoTokenizer.from_pretrained(checkpoint, trust_remote_code=trust_remote_code)
    if not getattr(tokenizer, "is_fast", False):
        raise ExportError(f"{checkpoint}: the runtime needs a fast tokenizer (tokenizer.json)")
    if SEP_TOKEN not in tokenizer.get_vocab():
        log.warning("%s has no %s token; adding it (as Pulpie does) — labels of such a model are untrained", checkpoint, SEP_TOKEN)
        tokenizer.add_special_tokens({"additional_special_tokens": [SEP_TOKEN]})
    sep_id = tokenizer.convert_tokens_to_ids(SEP_TOKEN)
    model = AutoModelForTokenClassification.from_pretrained(
        checkpoint, trust_remote_code=trust_remote_code, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    if len(tokenizer) > model.config.vocab_size:
        model.resize_token_embeddings(len(tokenizer))
    if restore_rotary_inv_freq(model):
        log.info("restored rotary inv_freq (spec §3.4)")
    label_map = {int(k): str(v).lower() for k, v in model.config.id2label.items()}
    if sorted(label_map.values()) != ["main", "other"]:
        label_map = {0: "other", 1: "main"}  # Pulpie checkpoints: 2 labels, 1 = main (spec §3.3)
    pad_id = config.pad_token_id or 0  # the reference's padding id
    return _Loaded(
        model=model,
        tokenizer=tokenizer,
        model_type=config.model_type,
        sep_id=int(sep_id),
        bos_id=tokenizer.bos_token_id,
        eos_id=tokenizer.eos_token_id,
        pad_id=int(pad_id),
        max_positions=int(getattr(config, "max_position_embeddings", 8192)),
        label_map=label_map,
    )


def _main_label(label_map: dict[int, str]) -> int:
    return next(k for k, v in label_map.items() if v == "main")


# -- export -----------------------------------------------------------------------------------------


def _onnx_export(model, model_type: str, tmp: Path, opset: int) -> tuple[Path, str]:
    from optimum.exporters.onnx import onnx_export_from_model
    from optimum.exporters.tasks import TasksManager

    task = "token-classification"
    custom = None
    try:
        supported = TasksManager.get_supported_tasks_for_model_type(model_type, "onnx", library_name="transformers")
    except KeyError:
        supported = {}
    if task not in supported:
        custom = {"model": _encoder_onnx_config()(model.config, task=task)}
    try:
        with warnings.catch_warnings():  # tracer notes about shape-dependent Python values; verified below
            warnings.simplefilter("ignore")
            onnx_export_from_model(
                model, tmp, task=task, opset=opset, custom_onnx_configs=custom, do_validation=False, no_post_process=True
            )
    except Exception as exc:
        raise ExportError(f"Optimum could not export {model_type}: {type(exc).__name__}: {exc}") from exc
    path = tmp / "model.onnx"
    if not path.is_file():
        raise ExportError(f"Optimum wrote no model.onnx for {model_type}")
    return path, "optimum" + (" (custom encoder config)" if custom else "")


def _encoder_onnx_config():
    """Optimum config for encoders outside its registry: ids + mask in, logits out, dynamic axes."""
    from optimum.exporters.onnx import TextEncoderOnnxConfig
    from optimum.utils import NormalizedTextConfig

    class PackedEncoderOnnxConfig(TextEncoderOnnxConfig):
        NORMALIZED_CONFIG_CLASS = NormalizedTextConfig
        DEFAULT_ONNX_OPSET = 18

        @property
        def inputs(self) -> dict[str, dict[int, str]]:
            axes = {0: "batch_size", 1: "sequence_length"}
            return {"input_ids": axes, "attention_mask": dict(axes)}

    return PackedEncoderOnnxConfig


def _write_fp16(model, path: Path) -> None:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    # Softmax/ArgMax of the gather stay fp32-fed through keep_io_types; LayerNorm-style reductions in
    # fp16 are what TensorRT runs too.
    save_onnx(convert_float_to_float16(model, keep_io_types=True), path)


# -- verification -----------------------------------------------------------------------------------


def _verification_batch(tokenizer: BlockTokenizer, loaded: _Loaded, options: EncoderExportOptions):
    from extract_trt.runtime.html.simplify import simplify

    pages = [simplify(html, cutoff_length=options.cutoff_length) for html in (options.verify_html or sample_pages())]
    max_tokens = min(options.verify_max_tokens, loaded.max_positions)
    chunks = []
    for page_index, ids in enumerate(tokenizer.encode_pages(pages)):
        chunks += pack_chunks(ids, max_tokens, loaded.sep_id, loaded.bos_id, loaded.eos_id, page=page_index)
    if not chunks:
        raise ExportError("verification pages produced no blocks")
    # Spread the picks over the list so lengths (and padding) vary.
    picks = np.unique(np.linspace(0, len(chunks) - 1, min(options.verify_chunks, len(chunks))).astype(int))
    return pad_batch([chunks[i] for i in picks], loaded.pad_id)


def _torch_logits(model, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    import torch

    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(input_ids), attention_mask=torch.from_numpy(attention_mask))
    return out.logits.float().numpy()


def _feeds(model, input_ids: np.ndarray, attention_mask: np.ndarray) -> dict[str, np.ndarray]:
    feeds = {}
    for tensor in model.graph.input:
        if tensor.name == "input_ids":
            feeds[tensor.name] = input_ids
        elif tensor.name == "attention_mask":
            feeds[tensor.name] = attention_mask
        elif tensor.name == "token_type_ids":
            feeds[tensor.name] = np.zeros_like(input_ids)
        else:
            raise ExportError(f"exported graph has an input the runtime cannot feed: {tensor.name!r}")
    return feeds


def _run(path: Path, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _verify(name, path, feeds, input_ids, torch_logits, loaded: _Loaded, options, report) -> VariantSpec:
    main = _main_label(loaded.label_map)
    expected = sep_gather(input_ids, torch_logits, loaded.sep_id, main)
    outputs = _run(path, feeds)
    if options.sep_gather:
        logits, labels = outputs[BLOCK_OUTPUTS.index("block_logits")], outputs[BLOCK_OUTPUTS.index("block_label")]
    else:
        got = sep_gather(input_ids, outputs[0], loaded.sep_id, main)
        logits, labels = got.logits, got.label
    if logits.shape != expected.logits.shape:
        raise ExportVerificationError(f"{name}: {logits.shape[0]} block rows, expected {expected.logits.shape[0]}")
    diff = float(np.abs(logits.astype(np.float32) - expected.logits).max()) if len(logits) else 0.0
    agreement = float((labels == expected.label).mean()) if len(labels) else 1.0
    report(f"{name}: max |ONNX Runtime - PyTorch| at <|sep|> = {diff:.2e}, labels agree on {agreement:.2%} of {len(labels)} blocks")
    if name == "fp32" and (diff > FP32_TOLERANCE or agreement < 1.0):
        raise ExportVerificationError(
            f"fp32 export differs from PyTorch: max abs diff {diff:.2e} (limit {FP32_TOLERANCE:.0e}), labels agree {agreement:.2%}"
        )
    if agreement < options.min_label_agreement:
        raise ExportVerificationError(f"{name}: labels agree with PyTorch on only {agreement:.2%} of blocks")
    return VariantSpec(
        file=path.name,
        sha256=file_sha256(path),
        bytes=path.stat().st_size,
        max_abs_diff=diff,
        labels_identical=agreement == 1.0,
        label_agreement=agreement,
    )


def _check_against_plain(path: Path, feeds, input_ids, plain_logits, loaded: _Loaded) -> None:
    """The appended gather must return exactly the plain graph's logits at <|sep|> (kernels.sep_gather)."""
    outputs = dict(zip(BLOCK_OUTPUTS, _run(path, feeds)))
    expected = sep_gather(input_ids, plain_logits, loaded.sep_id, _main_label(loaded.label_map))
    if not (np.array_equal(outputs["block_index"], expected.index) and np.array_equal(outputs["block_label"], expected.label)):
        raise ExportVerificationError("the <|sep|> gather does not match the plain graph's positions or labels")
    if len(expected.logits) and np.abs(outputs["block_logits"] - expected.logits).max() > 1e-5:
        raise ExportVerificationError("the <|sep|> gather changes the logits of the plain graph")

