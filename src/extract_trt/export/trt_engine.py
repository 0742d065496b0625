"""``extract-trt export trt``: an exported model directory → a serialized TensorRT engine for one GPU.

    engine-<gpu>-<precision>.plan   next to the ONNX model (l4 = sm_89, a100 = sm_80)
    engine-<gpu>-<precision>.timing the builder's timing cache (reused by the next build)
    extract-trt.json                gains ``engines["<gpu>-<precision>"]``
                                    (:class:`~extract_trt.artifacts.trt_engine.EngineRecord`)

Steps: static compatibility check (:mod:`~extract_trt.export.trt_compat`) → optimization profiles from
a sample of pages (:mod:`~extract_trt.export.trt_profiles`) → TensorRT 10.x/11.x Python API (ONNX parser →
builder config → profiles → ``build_serialized_network``; the differences between the two releases are in
:mod:`~extract_trt.export.trt_api`) → the engine's I/O tensors are recorded as the
binding contract C++ crawlers read (``docs/cpp.md``).

Precisions: on TensorRT 10.x ``fp16``/``bf16`` build from the fp32 graph with the FP16/BF16 builder flag
(TensorRT picks per layer); TensorRT 11.x has no such flags (strongly typed networks only), so there
``fp16`` builds from the fp16 ONNX variant and ``bf16`` is refused; ``int8`` builds from an explicitly quantized (QDQ)
graph, ``model.qdq.onnx``, written here with ONNX Runtime's static quantization calibrated on the
sample pages — ONNX Runtime's dynamic-int8 file (``model.int8.onnx``) is a CPU graph TensorRT rejects.

An engine runs only on the GPU architecture it was built on and with the TensorRT version that built it;
the build refuses to run on another GPU than ``--gpu`` names, and
:func:`~extract_trt.artifacts.trt_engine.check_engine_compatible` is what the runtime calls before
deserializing. Everything except :func:`build_engine` runs without
TensorRT (tested on CPU); :func:`build_engine` is written against the documented TensorRT 10/11 API and has
not run in this repository's CI (no GPU there) — ``scripts/gpu-check.sh`` runs it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from extract_trt.artifacts.manifest import ModelManifest, file_sha256, load_manifest
from extract_trt.artifacts.trt_engine import (
    EngineBinding,
    EngineMismatchError,
    EngineRecord,
    TensorRTUnavailableError,
    import_tensorrt,
    sm_name,
)
from extract_trt.export.common import ExportError
from extract_trt.export.trt_api import builder_flag_names, engine_source
from extract_trt.export.trt_compat import check_tensorrt_compat
from extract_trt.export.trt_profiles import EngineProfile, decoder_profiles, encoder_profiles
from extract_trt.runtime.labelers.session import TensorRTOptions

__all__ = [
    "GPUS",
    "PRECISIONS",
    "GpuTarget",
    "TrtExportOptions",
    "engine_bindings",
    "export_ort_ep_context",
    "export_tensorrt",
    "ort_tensorrt_options",
    "sample_profiles",
]

log = logging.getLogger(__name__)

PRECISIONS = ("fp16", "bf16", "int8")
QDQ_FILE = "model.qdq.onnx"


@dataclass(frozen=True, slots=True)
class GpuTarget:
    name: str
    compute_capability: tuple[int, int]
    product: str

    @property
    def sm(self) -> str:
        return sm_name(self.compute_capability)


GPUS = {"l4": GpuTarget("l4", (8, 9), "NVIDIA L4"), "a100": GpuTarget("a100", (8, 0), "NVIDIA A100")}


@dataclass(slots=True)
class TrtExportOptions:
    """``gpu``: key of :data:`GPUS`; ``precision``: one of :data:`PRECISIONS`; ``sample_html``: pages the
    profiles are derived from (default: the bundled samples); batch limits as the runtime's."""

    gpu: str
    precision: str = "fp16"
    workspace_gb: float = 4.0
    timing_cache: Path | None = None  # default: engine-<gpu>-<precision>.timing in the model directory
    sample_html: Sequence[str] | None = None
    max_batch_tokens: int = 16384
    max_batch_size: int = 64
    decoder_max_batch: int = 8
    decoder_max_chunk: int = 1024

    def __post_init__(self) -> None:
        if self.gpu not in GPUS:
            raise ExportError(f"unknown GPU {self.gpu!r}; engines are built for {', '.join(GPUS)}")
        if self.precision not in PRECISIONS:
            raise ExportError(f"unknown precision {self.precision!r}; use one of {', '.join(PRECISIONS)}")
        if self.workspace_gb <= 0:
            raise ExportError("workspace_gb must be positive")


# -- what runs without TensorRT ---------------------------------------------------------------------


def engine_bindings(model, profiles: Sequence[EngineProfile]) -> list[EngineBinding]:
    """The binding contract from an ONNX graph (``onnx.ModelProto``): every input and output with its
    dtype, shape (``-1`` for dynamic axes) and, for inputs, each profile's min/opt/max."""
    from extract_trt.export.common import tensor_spec

    data_dependent = _data_dependent_outputs(model)
    bindings = []
    for mode, values in (("input", model.graph.input), ("output", model.graph.output)):
        for value in values:
            spec = tensor_spec(value)
            shape = [d if isinstance(d, int) and d > 0 else -1 for d in spec.shape]
            ranges = {p.name: p.shapes[spec.name].to_dict() for p in profiles if spec.name in p.shapes}
            if mode == "input" and -1 in shape and len(ranges) != len(profiles):
                raise ExportError(f"dynamic input {spec.name!r} is missing from the profiles {[p.name for p in profiles]}")
            bindings.append(EngineBinding(spec.name, mode, spec.dtype, shape, ranges, spec.name in data_dependent))
    return bindings


def _data_dependent_outputs(model) -> set[str]:
    """Outputs downstream of NonZero (the <|sep|> gather): their row count is known only after running."""
    tainted: set[str] = set()
    for node in model.graph.node:  # ONNX nodes are topologically sorted
        if node.op_type == "NonZero" or any(i in tainted for i in node.input):
            tainted.update(node.output)
    return {o.name for o in model.graph.output if o.name in tainted}


def sample_profiles(model_dir: Path, manifest: ModelManifest, options: TrtExportOptions) -> list[EngineProfile]:
    """Profiles from the runtime's own preparation of the sample pages (ONNX Runtime on CPU loads the
    model once to reuse the labeler's tokenization; nothing is inferred)."""
    from extract_trt.export.common import sample_pages
    from extract_trt.runtime.html.simplify import simplify
    from extract_trt.runtime.labelers.session import SessionConfig

    htmls = list(options.sample_html or sample_pages())
    cpu = SessionConfig(providers="cpu", intra_op_num_threads=1)
    if manifest.task == "token-classification":
        from extract_trt.runtime.labelers.encoder import EncoderLabeler

        labeler = EncoderLabeler(model_dir, session=cpu)
        pages = [simplify(h, cutoff_length=manifest.cutoff_length) for h in htmls]
        lengths = [len(c) for c in labeler.prepare(pages).chunks]
        return encoder_profiles(lengths, [t.name for t in manifest.inputs], max_tokens=manifest.max_tokens,
                                max_batch_tokens=options.max_batch_tokens, max_batch_size=options.max_batch_size)  # fmt: skip
    from extract_trt.runtime.labelers.decoder import DecoderLabeler

    labeler = DecoderLabeler.from_model_dir(model_dir, session_config=cpu)
    prompts, answers = [], []
    for i, html in enumerate(htmls):
        job, _ = labeler._job(i, simplify(html, profile=labeler.simplify_profile))  # the labeler's own prompt
        if job is not None:
            prompts.append(len(job.prompt))
            answers.append(job.automaton.max_length())
    if not prompts:
        raise ExportError("no sample page fits the decoder's context; pass other --sample pages")
    spec = labeler.spec
    return decoder_profiles(prompts, answers, max_context=spec.max_context, num_kv_heads=spec.num_kv_heads,
                            head_dim=spec.head_dim, past_names=spec.past_names, max_batch=options.decoder_max_batch,
                            max_chunk=options.decoder_max_chunk)  # fmt: skip


def write_qdq_int8(model_dir: Path, manifest: ModelManifest, profiles: Sequence[EngineProfile]) -> Path:
    """``model.qdq.onnx``: symmetric int8 QDQ (what TensorRT's explicit quantization reads) of the fp32
    graph, activations calibrated on inputs at the first profile's opt shape (encoders only)."""
    import numpy as np
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    if manifest.task != "token-classification":
        raise ExportError("int8 engines are built for encoders only; build decoders in fp16 or bf16")
    shapes = profiles[0].shapes
    rng = np.random.default_rng(0)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            batch, seq = shapes[manifest.inputs[0].name].opt
            ids = rng.integers(max(manifest.pad_token_id, 1) + 1, 1000, size=(batch, seq))
            ids[:, ::16] = manifest.sep_token_id  # blocks, so the <|sep|> gather has rows
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
            self._items = iter([{t.name: feeds[t.name].astype(t.dtype) for t in manifest.inputs}])

        def get_next(self):
            return next(self._items, None)

    out = model_dir / QDQ_FILE
    quantize_static(str(model_dir / manifest.variant("fp32").file), str(out), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul", "Gemm"],
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})  # fmt: skip
    return out


def export_tensorrt(
    model_dir: str | Path, options: TrtExportOptions, *, report: Callable[[str], None] | None = None
) -> EngineRecord:
    """Build ``engine-<gpu>-<precision>.plan`` for ``model_dir`` and record it in its manifest."""
    import onnx

    report = report or log.info
    model_dir = Path(model_dir)
    trt = import_tensorrt()  # fail before the (slow) CPU steps when TensorRT is missing
    device = _current_gpu()
    target = GPUS[options.gpu]
    if device[1] != target.compute_capability:
        raise EngineMismatchError(
            f"--gpu {options.gpu} needs a {target.product} ({target.sm}); this machine has {device[0]} "
            f"({sm_name(device[1])}): engines must be built on the GPU they run on"
        )
    manifest = load_manifest(model_dir)
    source = engine_source(trt.__version__, options.precision)  # before the slow steps: 11.x refuses bf16
    profiles = sample_profiles(model_dir, manifest, options)
    onnx_path = write_qdq_int8(model_dir, manifest, profiles) if source == "qdq" else model_dir / _variant_file(manifest, source)
    compat = check_tensorrt_compat(onnx_path, tensorrt_version=trt.__version__)
    for issue in compat.issues:
        report(str(issue))
    compat.raise_for_errors()
    graph = onnx.load(str(onnx_path), load_external_data=False)
    bindings = engine_bindings(graph, profiles)
    stem = f"engine-{options.gpu}-{options.precision}"
    plan, timing = model_dir / f"{stem}.plan", options.timing_cache or model_dir / f"{stem}.timing"
    workspace = int(options.workspace_gb * (1 << 30))
    report(f"building {plan.name} for {device[0]} ({target.sm}), TensorRT {trt.__version__}, profiles "
           + "; ".join(f"{p.name} {p.shape_strings()['opt']}" for p in profiles))  # fmt: skip
    build_engine(onnx_path, plan, precision=options.precision, profiles=profiles, workspace_bytes=workspace, timing_cache=timing)
    record = EngineRecord(
        file=plan.name, gpu=options.gpu, compute_capability=target.sm, precision=options.precision,
        tensorrt_version=trt.__version__, onnx_file=onnx_path.name, profiles=[p.to_dict() for p in profiles],
        bindings=bindings, workspace_bytes=workspace, timing_cache=str(timing),
        plugins=any("ScatterElements" in str(i) for i in compat.warnings), device_name=device[0],
        sha256=file_sha256(plan), bytes=plan.stat().st_size,
        created=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    )  # fmt: skip
    record_engine(model_dir, manifest, record)
    report(f"wrote {plan} ({record.bytes:,} bytes)")
    return record


def _variant_file(manifest: ModelManifest, variant: str) -> str:
    if variant not in manifest.variants:
        raise ExportError(
            f"the model directory has no {variant} ONNX variant (has {', '.join(manifest.variants)}); TensorRT 11 "
            f"builds an {variant} engine from it: re-export with `extract-trt export onnx … --{variant}`"
        )
    return manifest.variant(variant).file


def record_engine(model_dir: Path, manifest: ModelManifest, record: EngineRecord) -> None:
    """Add (or replace) ``record`` in the manifest of ``model_dir``."""
    manifest.engines[record.key] = json.loads(json.dumps(record.to_dict()))
    manifest.save(model_dir)


def ort_tensorrt_options(
    model_dir: Path, options: TrtExportOptions, profiles: Sequence[EngineProfile], *, dump_ep_context: bool = True
) -> dict[str, str]:
    """ONNX Runtime TensorRT-EP provider options for the same build: caches under ``<model_dir>/trt-cache``,
    precision flags, every profile (ORT reads an input named more than once as one shape per profile),
    and the EP-context dump (``model.<gpu>-<precision>_ctx.onnx``)."""
    cache = model_dir / "trt-cache"
    trt_options = TensorRTOptions(
        fp16=options.precision in ("fp16", "int8"), bf16=options.precision == "bf16", int8=options.precision == "int8",
        engine_cache_dir=str(cache), timing_cache_dir=str(cache), max_workspace_bytes=int(options.workspace_gb * (1 << 30)),
        dump_ep_context_model=dump_ep_context, ep_context_file_path=str(model_dir / ort_context_file(options)),
    )  # fmt: skip
    provider = trt_options.provider_options()
    strings = [p.shape_strings() for p in profiles]
    for key in ("min", "opt", "max"):
        provider[f"trt_profile_{key}_shapes"] = ",".join(s[key] for s in strings)
    return provider


def ort_context_file(options: TrtExportOptions) -> str:
    return f"model.{options.gpu}-{options.precision}_ctx.onnx"


def export_ort_ep_context(
    model_dir: str | Path, options: TrtExportOptions, *, report: Callable[[str], None] | None = None
) -> Path:
    """The ONNX Runtime route: build the engine inside ORT's TensorRT EP and dump an EP-context model that
    ORT C/C++ users load without rebuilding (GPU and onnxruntime-gpu with TensorRT needed)."""
    import onnxruntime as ort

    report = report or log.info
    model_dir = Path(model_dir)
    if "TensorrtExecutionProvider" not in ort.get_available_providers():
        raise TensorRTUnavailableError(f"this onnxruntime build has no TensorRT EP (has {ort.get_available_providers()})")
    manifest = load_manifest(model_dir)
    profiles = sample_profiles(model_dir, manifest, options)
    onnx_path = write_qdq_int8(model_dir, manifest, profiles) if options.precision == "int8" else model_dir / manifest.variant("fp32").file
    check_tensorrt_compat(onnx_path).raise_for_errors()  # ORT's TensorRT EP keeps its own precision flags
    provider = ort_tensorrt_options(model_dir, options, profiles)
    session = ort.InferenceSession(str(onnx_path), providers=[("TensorrtExecutionProvider", provider)])
    if session.get_providers()[0] != "TensorrtExecutionProvider":
        raise TensorRTUnavailableError(f"onnxruntime could not start the TensorRT EP (runs on {session.get_providers()})")
    context = model_dir / ort_context_file(options)
    manifest.extra.setdefault("ort_ep_context", {})[f"{options.gpu}-{options.precision}"] = {
        "file": context.name, "onnx_file": onnx_path.name, "compute_capability": GPUS[options.gpu].sm,
        "onnxruntime_version": ort.__version__, "provider_options": provider, "profiles": [p.to_dict() for p in profiles],
    }  # fmt: skip
    manifest.save(model_dir)
    report(f"wrote {context}")
    return context


# -- GPU only ---------------------------------------------------------------------------------------


def _current_gpu() -> tuple[str, tuple[int, int]]:
    """Name and compute capability of CUDA device 0 (through PyTorch, which the export extra installs)."""
    import torch

    if not torch.cuda.is_available():
        raise TensorRTUnavailableError("no CUDA GPU is visible (torch.cuda.is_available() is False)")
    return torch.cuda.get_device_name(0), tuple(torch.cuda.get_device_capability(0))


def build_engine(
    onnx_path: Path,
    plan_path: Path,
    *,
    precision: str,
    profiles: Sequence[EngineProfile],
    workspace_bytes: int,
    timing_cache: Path,
) -> None:
    """TensorRT 10.x/11.x: parse ``onnx_path``, configure precision/workspace/profiles/timing cache, write the
    serialized engine to ``plan_path`` and the updated timing cache back to ``timing_cache``. On 11.x no
    precision flag exists: ``onnx_path`` must already carry the precision (:func:`~.trt_api.engine_source`)."""
    trt = import_tensorrt()
    logger = trt.Logger(trt.Logger.WARNING)
    trt.init_libnvinfer_plugins(logger, "")  # ScatterElements with reduction is a plugin layer
    builder = trt.Builder(logger)
    network = builder.create_network(0)  # explicit batch is the only mode since 10; strongly typed always on 11
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "\n  ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise ExportError(f"TensorRT's ONNX parser rejected {onnx_path.name}:\n  {errors}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_bytes)
    for flag in builder_flag_names(trt.__version__, precision):  # none on 11.x
        config.set_flag(getattr(trt.BuilderFlag, flag))
    cache = config.create_timing_cache(timing_cache.read_bytes() if timing_cache.is_file() else b"")
    config.set_timing_cache(cache, ignore_mismatch=False)
    for profile in profiles:
        trt_profile = builder.create_optimization_profile()
        for name, shape in profile.shapes.items():
            trt_profile.set_shape(name, shape.min, shape.opt, shape.max)
        config.add_optimization_profile(trt_profile)
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise ExportError(f"TensorRT could not build an engine from {onnx_path.name} (see the log above)")
    plan_path.write_bytes(bytes(serialized))
    timing_cache.write_bytes(bytes(config.get_timing_cache().serialize()))
