"""ONNX Runtime sessions with an explicit execution-provider policy (shared by every ONNX backend).

Preference order TensorRT → CUDA → CPU. ``providers="auto"`` takes the available ones in that order;
an explicit list is a demand: asking for a GPU provider this onnxruntime build lacks raises
:class:`ProviderUnavailableError` unless ``allow_cpu_fallback`` is set. After the session is created
the providers it actually uses (``InferenceSession.get_providers()``) are checked the same way — ORT
silently drops a provider whose libraries fail to load (no CUDA driver, missing cuDNN/TensorRT) — and
reported in :attr:`SessionInfo.providers`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from extract_trt.errors import ExtractError

__all__ = [
    "GPU_PROVIDERS",
    "PROVIDER_NAMES",
    "ProviderUnavailableError",
    "SessionConfig",
    "SessionInfo",
    "TensorRTOptions",
    "create_session",
    "default_intra_op_threads",
    "resolve_providers",
]

log = logging.getLogger(__name__)

PROVIDER_NAMES = {
    "tensorrt": "TensorrtExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "cpu": "CPUExecutionProvider",
}
PREFERENCE = ("tensorrt", "cuda", "cpu")
GPU_PROVIDERS = frozenset({"TensorrtExecutionProvider", "CUDAExecutionProvider"})

# A [batch, seq] profile: input name → shape. TensorRT builds one engine valid for min ≤ shape ≤ max.
Shapes = Mapping[str, Sequence[int]]


#: How to allow a CPU fallback, from Python and from the command line (the error is raised in both).
_FALLBACK_HINT = "CPU fallback (SessionConfig(allow_cpu_fallback=True); CLI: --allow-cpu-fallback)"


class ProviderUnavailableError(ExtractError):
    """A requested execution provider is not available (and CPU fallback was not allowed)."""


@dataclass(slots=True)
class TensorRTOptions:
    """ONNX Runtime TensorRT execution-provider options (the ``trt_*`` keys).

    ``profile_min/opt/max`` give the optimization profile for dynamic shapes; for packed encoder
    batches use :meth:`for_packed_inputs` (or ``export.trt_profiles``, which derives them from sample
    pages). Engines and timing caches are written under the cache directories so a second start skips
    the (minutes-long) engine build. ``dump_ep_context_model`` makes ORT write an "EP context" model
    (``ep_context_file_path``): a one-node ONNX file wrapping the built engine, which ORT C/C++ users
    load without rebuilding (``ep_context_embed_mode`` 1 embeds the engine bytes, 0 refers to the file).
    """

    fp16: bool = True
    bf16: bool = False
    int8: bool = False
    dump_ep_context_model: bool = False
    ep_context_file_path: str | None = None
    ep_context_embed_mode: int = 0
    engine_cache_dir: str | None = None
    timing_cache_dir: str | None = None
    max_workspace_bytes: int | None = None
    builder_optimization_level: int | None = None
    profile_min: Shapes | None = None
    profile_opt: Shapes | None = None
    profile_max: Shapes | None = None

    @classmethod
    def for_packed_inputs(
        cls, input_names: Sequence[str], *, max_tokens: int, max_batch: int, opt_tokens: int | None = None, **kw
    ) -> TensorRTOptions:
        """One profile covering every packed batch: batch 1..max_batch, sequence 1..max_tokens."""
        opt = opt_tokens or min(max_tokens, 4096)
        return cls(
            profile_min={n: (1, 1) for n in input_names},
            profile_opt={n: (max(1, max_batch // 2), opt) for n in input_names},
            profile_max={n: (max_batch, max_tokens) for n in input_names},
            **kw,
        )

    def provider_options(self) -> dict[str, str]:
        opts = {"trt_fp16_enable": _flag(self.fp16), "trt_int8_enable": _flag(self.int8)}
        if self.bf16:
            opts["trt_bf16_enable"] = "1"
        if self.dump_ep_context_model:
            if not self.ep_context_file_path:
                raise ValueError("dump_ep_context_model needs ep_context_file_path (the _ctx.onnx to write)")
            opts.update(trt_dump_ep_context_model="1", trt_ep_context_file_path=str(self.ep_context_file_path),
                        trt_ep_context_embed_mode=str(int(self.ep_context_embed_mode)))  # fmt: skip
        if self.engine_cache_dir:
            Path(self.engine_cache_dir).mkdir(parents=True, exist_ok=True)
            opts.update(trt_engine_cache_enable="1", trt_engine_cache_path=str(self.engine_cache_dir))
        if self.timing_cache_dir:
            Path(self.timing_cache_dir).mkdir(parents=True, exist_ok=True)
            opts.update(trt_timing_cache_enable="1", trt_timing_cache_path=str(self.timing_cache_dir))
        if self.max_workspace_bytes:
            opts["trt_max_workspace_size"] = str(self.max_workspace_bytes)
        if self.builder_optimization_level is not None:
            opts["trt_builder_optimization_level"] = str(self.builder_optimization_level)
        profiles = (self.profile_min, self.profile_opt, self.profile_max)
        if any(p is not None for p in profiles):
            if not all(p is not None for p in profiles):
                raise ValueError("TensorRT profiles need all of profile_min, profile_opt and profile_max")
            for key, prof in zip(("min", "opt", "max"), profiles):
                opts[f"trt_profile_{key}_shapes"] = ",".join(
                    f"{name}:{'x'.join(str(d) for d in shape)}" for name, shape in prof.items()
                )
        return opts


@dataclass(slots=True)
class SessionConfig:
    """How to build a session. ``providers``: ``"auto"`` or names from ``tensorrt``/``cuda``/``cpu``
    (or ORT's full names), in order of preference."""

    providers: str | Sequence[str] = "auto"
    allow_cpu_fallback: bool = False
    intra_op_num_threads: int | None = None  # None: default_intra_op_threads()
    inter_op_num_threads: int = 1
    allow_spinning: bool = True  # False on shared machines: idle pool threads then sleep instead of spin
    device_id: int = 0
    tensorrt: TensorRTOptions = field(default_factory=TensorRTOptions)
    enable_profiling: bool = False


@dataclass(slots=True)
class SessionInfo:
    """A created session and what it really runs on."""

    session: object  # onnxruntime.InferenceSession
    providers: list[str]  # as reported by session.get_providers(), in priority order
    requested: list[str]
    fell_back: bool  # a requested GPU provider is missing and CPU fallback was allowed

    @property
    def on_gpu(self) -> bool:
        return any(p in GPU_PROVIDERS for p in self.providers)

    def describe(self) -> str:
        note = " (CPU fallback)" if self.fell_back else ""
        return f"providers {', '.join(self.providers)}{note}"


def default_intra_op_threads() -> int:
    """Threads for one CPU session: the cores this process may run on (cgroup/affinity aware)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def resolve_providers(
    requested: str | Sequence[str], available: Sequence[str], allow_cpu_fallback: bool
) -> tuple[list[str], bool]:
    """Requested names → ORT provider names to try, and whether a GPU provider had to be dropped."""
    auto = requested == "auto"
    if isinstance(requested, str):
        requested = PREFERENCE if auto else [p.strip() for p in requested.split(",") if p.strip()]
    names = [_full_name(p) for p in requested]
    if not names:
        raise ValueError("no execution provider requested")
    missing = [n for n in names if n not in available]
    chosen = [n for n in names if n in available]
    if auto:
        return chosen or ["CPUExecutionProvider"], False
    missing_gpu = [n for n in missing if n in GPU_PROVIDERS]
    if missing_gpu and not allow_cpu_fallback:
        raise ProviderUnavailableError(
            f"execution provider(s) {', '.join(missing_gpu)} not available in this onnxruntime build "
            f"(available: {', '.join(available)}); install onnxruntime-gpu with CUDA/TensorRT, or allow "
            f"{_FALLBACK_HINT} to run on CPU"
        )
    if "CPUExecutionProvider" not in chosen:
        chosen.append("CPUExecutionProvider")  # ORT needs it for nodes a GPU provider cannot take
    return chosen, bool(missing_gpu)


def create_session(model_path: str | Path, config: SessionConfig | None = None) -> SessionInfo:
    """An ``onnxruntime.InferenceSession`` for ``model_path`` under ``config``'s provider policy."""
    import onnxruntime as ort

    config = config or SessionConfig()
    names, fell_back = resolve_providers(config.providers, ort.get_available_providers(), config.allow_cpu_fallback)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = config.intra_op_num_threads or default_intra_op_threads()
    options.inter_op_num_threads = max(1, config.inter_op_num_threads)
    options.enable_profiling = config.enable_profiling
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if config.allow_spinning else "0")
    providers: list[tuple[str, dict[str, str]]] = []
    for name in names:
        if name == "TensorrtExecutionProvider":
            providers.append((name, {"device_id": str(config.device_id), **config.tensorrt.provider_options()}))
        elif name == "CUDAExecutionProvider":
            providers.append((name, {"device_id": str(config.device_id)}))
        else:
            providers.append((name, {}))
    session = ort.InferenceSession(str(model_path), sess_options=options, providers=providers)
    in_use = list(session.get_providers())
    dropped = [n for n in names if n in GPU_PROVIDERS and n not in in_use]
    if dropped:
        if not (config.allow_cpu_fallback or config.providers == "auto"):
            raise ProviderUnavailableError(
                f"onnxruntime could not start {', '.join(dropped)} (session runs on {', '.join(in_use)}); "
                "check the CUDA/cuDNN/TensorRT libraries, or allow "
                f"{_FALLBACK_HINT}"
            )
        log.warning("onnxruntime dropped %s; running on %s", ", ".join(dropped), ", ".join(in_use))
        fell_back = True
    info = SessionInfo(session=session, providers=in_use, requested=names, fell_back=fell_back)
    log.info("%s: %s", Path(model_path).name, info.describe())
    return info


def _full_name(name: str) -> str:
    if name in PROVIDER_NAMES.values():
        return name
    try:
        return PROVIDER_NAMES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown execution provider {name!r}; use one of {', '.join(PREFERENCE)}") from None


def _flag(value: bool) -> str:
    return "1" if value else "0"
