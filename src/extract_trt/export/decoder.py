"""Dripper-format decoder checkpoints (Qwen3 causal LMs) → verified ONNX model directories
(``extract-trt export onnx --task text-generation-with-past``).

Optimum exports the model with its KV cache (``input_ids``, ``attention_mask``, ``position_ids``,
``past_key_values.N.key/value`` → ``logits``, ``present.N.key/value``); eager attention (a plain
MatMul/Softmax graph, about twice as fast on CPU as the SDPA export). The lm head is then rewritten
(:func:`rewrite_lm_head`):

* ``choice_logits`` [batch, seq, 2] is added: the final hidden state times just the two lm-head columns of
  the first tokens of ``main`` and ``other`` — the only numbers the constrained decoder reads, so a pass
  over a whole drafted answer returns 2 floats per position instead of a vocabulary row;
* ``logits`` becomes the **last position's** row only ([batch, 1, vocab], what a token-by-token decoder
  reads). ONNX Runtime computes every node whatever outputs are asked for, so a full [batch, seq, vocab]
  lm head would cost 151,936 × 1,024 multiply-adds per token of every pass — more than 28 layers of
  Qwen3-0.6B together for long chunks.

Verification (before the manifest is written): for each sample prompt, the prompt is run as one pass and
a continuation (the start of an answer) as a second pass on the returned cache; ``logits`` (last
position of each pass) and ``choice_logits`` (every position) are compared with PyTorch's logits. fp32
must agree within ``FP32_TOLERANCE`` (relative to the logit scale) with identical argmax; int8
differences and main/other agreement are recorded.

Memory: the export traces the model in fp32 and holds the graph in memory: Qwen3-0.6B needs about
17 GB of RAM (more with int8, which re-reads the fp32 graph). Large graphs keep their weights in a side
file (``model.onnx.data``); protobuf must stay < 7 for such exports.
"""

from __future__ import annotations

import datetime as dt
import logging
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from extract_trt.export.common import (
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
from extract_trt.runtime.labelers.decoder import CHOICE_OUTPUT, DecoderSpec

__all__ = ["DecoderExportOptions", "export_decoder", "rewrite_lm_head"]

log = logging.getLogger(__name__)

FP32_TOLERANCE = 1e-4  # × max(1, largest |logit|)
VARIANT_FILES = {"fp32": "model.onnx", "int8": "model.int8.onnx"}


@dataclass(slots=True)
class DecoderExportOptions:
    """What to export and how to check it.

    ``profile``: ``dripper-v1`` (Qwen3-0.6B MinerU-HTML v1.0) or ``mineru-v1.1``. ``max_context``: prompt +
    answer tokens the runtime allows (default: the model's positions, at most 32768 as Dripper v1.0 ran).
    ``verify_tokens``: prompt tokens per verification sample (cut from real prompts).
    """

    profile: str = "mineru-v1.1"
    variants: tuple[str, ...] = ("fp32",)
    max_context: int | None = None
    opset: int = 18
    verify_html: Sequence[str] | None = None
    verify_tokens: int = 192
    verify_samples: int = 2
    extra: dict = field(default_factory=dict)


def export_decoder(
    checkpoint: str | Path,
    out_dir: str | Path,
    options: DecoderExportOptions | None = None,
    *,
    report: Callable[[str], None] | None = None,
) -> ModelManifest:
    """Export ``checkpoint`` to ``out_dir``, verify every variant, and write the manifest last."""
    import onnx
    from tokenizers import Tokenizer
    from transformers import AutoConfig, AutoTokenizer

    from extract_trt.kernels.grammar import choice_words
    from extract_trt.runtime.labelers.prompts import QWEN3_CHAT, chat_template_from_tokenizer, decoder_profile

    options = options or DecoderExportOptions()
    report = report or log.info
    checkpoint, out = Path(checkpoint), Path(out_dir)
    profile = decoder_profile(options.profile)
    start_export(checkpoint, out, options.variants, allowed=tuple(VARIANT_FILES))

    config = AutoConfig.from_pretrained(checkpoint)
    hf_tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    if not getattr(hf_tokenizer, "is_fast", False):
        raise ExportError(f"{checkpoint}: the runtime needs a fast tokenizer (tokenizer.json)")
    hf_tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    tokenizer.encode_special_tokens = True
    words = choice_words(tokenizer)
    choice_ids = [int(words[0][0]), int(words[1][0])]
    template = None
    if profile.chat:
        if getattr(hf_tokenizer, "chat_template", None):
            template = chat_template_from_tokenizer(hf_tokenizer)
        else:
            report(f"{checkpoint} has no chat template; using Qwen3's")
            template = QWEN3_CHAT
    positions = int(getattr(config, "max_position_embeddings", 32768))
    max_context = options.max_context or min(positions, 32768)
    if max_context > positions:
        raise ExportError(f"max_context {max_context} exceeds the model's {positions} positions")
    eos_id = hf_tokenizer.convert_tokens_to_ids("<|im_end|>") if "<|im_end|>" in hf_tokenizer.get_vocab() else hf_tokenizer.eos_token_id
    pad_id = hf_tokenizer.pad_token_id if hf_tokenizer.pad_token_id is not None else 0

    torch_model = _load_model(checkpoint)
    with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as tmp:
        plain_path = _optimum_export(torch_model, checkpoint, Path(tmp), options.opset)
        model = onnx.load(str(plain_path))
        lm_head = rewrite_lm_head(model, choice_ids)
        fp32_path = out / VARIANT_FILES["fp32"]
        save_onnx(model, fp32_path)
        del model
    samples = _verification_samples(checkpoint, hf_tokenizer, profile, options)
    torch_logits = _torch_logits(torch_model, samples)
    del torch_model
    variants = {"fp32": _verify("fp32", fp32_path, samples, torch_logits, choice_ids, report)}
    if "int8" in options.variants:
        # The lm head stays fp32 so that choice_logits (fp32 columns) equal the logits' columns.
        write_int8(fp32_path, out / VARIANT_FILES["int8"], nodes_to_exclude=[lm_head])
        variants["int8"] = _verify("int8", out / VARIANT_FILES["int8"], samples, torch_logits, choice_ids, report)

    import onnxruntime as ort
    import transformers

    session = ort.InferenceSession(str(fp32_path), providers=["CPUExecutionProvider"])
    spec = DecoderSpec.from_session(
        session,
        profile=profile.name,
        max_context=max_context,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        num_attention_heads=int(config.num_attention_heads),
        chat_template=template,
    )
    spec.choice_token_ids = choice_ids
    spec.grammar = profile.answer.name
    graph = onnx.load(str(fp32_path), load_external_data=False).graph
    from extract_trt.runtime.html.simplify_v1 import simplify_profile

    manifest = ModelManifest(
        architecture=config.model_type,
        task="text-generation",
        label_map={0: "other", 1: "main"},
        main_label_id=1,
        sep_token="",
        bos_token_id=None,
        eos_token_id=eos_id,
        pad_token_id=pad_id,
        max_tokens=max_context,
        simplifier_profile=profile.simplifier,
        cutoff_length=simplify_profile(profile.simplifier).cutoff_length,
        inputs=[tensor_spec(t) for t in graph.input],
        outputs=[tensor_spec(t) for t in graph.output],
        output_layout="logits",
        opset=options.opset,
        variants=variants,
        source=SourceInfo(
            checkpoint=str(checkpoint.resolve()),
            checkpoint_sha256=checkpoint_sha256(checkpoint),
            model_type=config.model_type,
            exporter="optimum (text-generation-with-past) + choice_logits",
            transformers_version=transformers.__version__,
            created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        ),
        decoder=spec.to_dict(),
        extra=dict(options.extra),
    )
    manifest.save(out)
    report(f"wrote {out / MANIFEST_NAME} ({', '.join(variants)})")
    return manifest


def rewrite_lm_head(model, choice_ids: Sequence[int]) -> str:
    """In place: add ``choice_logits`` (final hidden state × the lm-head columns ``choice_ids``, every
    position) and cut ``logits`` to the last position. Returns the name of the lm-head node."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    producer = next((n for n in graph.node if "logits" in n.output), None)
    if producer is None or producer.op_type != "MatMul":
        raise ExportError("the graph's logits do not come from a MatMul (lm head); cannot add choice_logits")
    if not producer.name:
        producer.name = "lm_head/MatMul"
    if any(o.name == CHOICE_OUTPUT for o in graph.output):
        return producer.name
    hidden, weight = producer.input
    last = "lm_head/last_hidden"
    graph.initializer.extend(
        [
            numpy_helper.from_array(np.asarray(choice_ids, dtype=np.int64), f"{CHOICE_OUTPUT}/token_ids"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "lm_head/last_start"),
            numpy_helper.from_array(np.array([np.iinfo(np.int64).max], dtype=np.int64), "lm_head/last_end"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "lm_head/seq_axis"),
        ]
    )
    graph.node.extend(
        [
            helper.make_node("Gather", [weight, f"{CHOICE_OUTPUT}/token_ids"], [f"{CHOICE_OUTPUT}/weight"], axis=1,
                             name=f"{CHOICE_OUTPUT}/Gather"),
            helper.make_node("MatMul", [hidden, f"{CHOICE_OUTPUT}/weight"], [CHOICE_OUTPUT], name=f"{CHOICE_OUTPUT}/MatMul"),
            helper.make_node("Slice", [hidden, "lm_head/last_start", "lm_head/last_end", "lm_head/seq_axis"], [last],
                             name="lm_head/Slice"),
        ]
    )  # fmt: skip
    producer.input[0] = last
    out = next(o for o in graph.output if o.name == "logits")
    out.type.tensor_type.shape.dim[1].ClearField("dim_param")
    out.type.tensor_type.shape.dim[1].dim_value = 1
    graph.output.append(
        helper.make_tensor_value_info(CHOICE_OUTPUT, TensorProto.FLOAT, ["batch_size", "sequence_length", 2])
    )
    # Graph inputs must precede their consumers in ONNX's topological order; the Slice feeds an old node.
    nodes = list(graph.node)
    slice_node = nodes.pop()
    nodes.insert(nodes.index(producer), slice_node)
    del graph.node[:]
    graph.node.extend(nodes)
    return producer.name


# -- export and verification ------------------------------------------------------------------------


def _load_model(checkpoint: Path):
    """The checkpoint in fp32 with eager attention: its export is a plain MatMul/Softmax graph, about twice
    as fast on CPU as the SDPA export (which guards the whole score tensor against NaN rows)."""
    import torch
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(checkpoint, dtype=torch.float32, attn_implementation="eager").eval()


def _optimum_export(model, checkpoint: Path, tmp: Path, opset: int) -> Path:
    from optimum.exporters.onnx import onnx_export_from_model

    try:
        onnx_export_from_model(model, tmp, task="text-generation-with-past", opset=opset, do_validation=False, no_post_process=True)
    except Exception as exc:
        raise ExportError(f"Optimum could not export {checkpoint}: {type(exc).__name__}: {exc}") from exc
    path = tmp / "model.onnx"
    if not path.is_file():
        raise ExportError(f"Optimum wrote no model.onnx for {checkpoint}")
    return path


@dataclass(slots=True)
class _Sample:
    ids: np.ndarray  # prompt + continuation
    split: int  # prompt length: pass 1 feeds ids[:split], pass 2 the rest on its cache


def _verification_samples(checkpoint: Path, hf_tokenizer, profile, options: DecoderExportOptions) -> list[_Sample]:
    from extract_trt.runtime.html.simplify import simplify
    from extract_trt.runtime.html.simplify_v1 import simplify_profile

    simplifier = simplify_profile(profile.simplifier)
    samples = []
    for html in list(options.verify_html or sample_pages())[: options.verify_samples]:
        page = simplify(html, profile=simplifier)
        prompt = profile.prompt_text(page.simplified_html, None)
        ids = hf_tokenizer("".join(prompt), add_special_tokens=False)["input_ids"][-options.verify_tokens :]
        answer = profile.answer.render([b.item_id for b in page.blocks[:4]], [True, False, True, False][: len(page.blocks)])
        cont = hf_tokenizer(answer, add_special_tokens=False)["input_ids"][:12]
        samples.append(_Sample(np.asarray(ids + cont, dtype=np.int64), len(ids)))
    if not samples:
        raise ExportError("no verification pages")
    return samples


def _torch_logits(model, samples: list[_Sample]) -> list[np.ndarray]:
    import torch

    with torch.no_grad():
        return [model(input_ids=torch.from_numpy(s.ids[None, :])).logits[0].float().numpy() for s in samples]


def _onnx_logits(path: Path, sample: _Sample) -> tuple[np.ndarray, list[int], np.ndarray]:
    """The sample fed as two passes with the KV cache in between: last-position logits of each pass, those
    positions, and the choice logits of every position."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    pasts = [i for i in session.get_inputs() if i.name.startswith("past_key_values.")]
    cache = {i.name: np.zeros((1, i.shape[1], 0, i.shape[3]), dtype=np.float32) for i in pasts}
    logits, choice, ends = [], [], []
    for lo, hi in ((0, sample.split), (sample.split, len(sample.ids))):
        feeds = {
            "input_ids": sample.ids[None, lo:hi],
            "attention_mask": np.ones((1, hi), dtype=np.int64),
            "position_ids": np.arange(lo, hi, dtype=np.int64)[None, :],
            **cache,
        }
        out = dict(zip(names, session.run(None, feeds)))
        logits.append(out["logits"][0, -1])
        choice.append(out[CHOICE_OUTPUT][0])
        ends.append(hi - 1)
        cache = {name: out[name.replace("past_key_values.", "present.", 1)] for name in cache}
    return np.stack(logits), ends, np.concatenate(choice)


def _verify(name: str, path: Path, samples: list[_Sample], torch_logits: list[np.ndarray], choice_ids, report) -> VariantSpec:
    diffs, scales, same_argmax, same_choice, checked = [], [], True, 0, 0
    for sample, expected in zip(samples, torch_logits):
        last, ends, choice = _onnx_logits(path, sample)
        pairs = expected[:, choice_ids]
        diffs += [float(np.abs(last - expected[ends]).max()), float(np.abs(choice - pairs).max())]
        scales.append(max(1.0, float(np.abs(expected).max())))
        same_argmax &= bool((last.argmax(-1) == expected[ends].argmax(-1)).all())
        same_choice += int(((choice[:, 0] > choice[:, 1]) == (pairs[:, 0] > pairs[:, 1])).sum())
        checked += len(pairs)
    diff = max(diffs)
    agreement = same_choice / max(1, checked)
    report(f"{name}: max |ONNX Runtime - PyTorch| logit = {diff:.2e}; argmax identical: {same_argmax}; "
           f"main/other agreement {agreement:.1%} over {checked} positions")  # fmt: skip
    if name == "fp32" and (diff > FP32_TOLERANCE * max(scales) or not same_argmax):
        raise ExportVerificationError(f"fp32 export differs from PyTorch: max logit diff {diff:.2e}, argmax identical {same_argmax}")
    return VariantSpec(
        file=path.name, sha256=file_sha256(path), bytes=path.stat().st_size, max_abs_diff=diff, labels_identical=agreement == 1.0
    )
