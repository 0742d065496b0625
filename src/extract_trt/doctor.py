"""``extract-trt doctor``: what this machine offers the model backends, and what to install when something
is missing.

It looks at what is really there rather than at what is installed: ONNX Runtime's providers are each
started on the shipped block model (ORT lists a provider its build has even when its CUDA/cuDNN/TensorRT
libraries cannot load, and then silently runs on CPU); GPUs are read through the NVIDIA driver
(``libcuda``: name, compute capability, memory, the CUDA version the driver supports); TensorRT by
importing it. For a model directory it says which TensorRT engines (``extract-trt export trt``) and ORT
TensorRT-EP context models match this GPU and TensorRT. On a machine without a GPU it says so and that
the built-in model needs nothing more. Importing this module needs nothing beyond the base install.
"""

from __future__ import annotations

import ctypes
import platform
import sys
from dataclasses import asdict, dataclass, field
from importlib import metadata, resources
from pathlib import Path
from typing import Any

__all__ = ["Diagnosis", "EngineMatch", "GpuInfo", "diagnose", "render"]

# Distributions worth naming (the same module can come from several of them).
DISTRIBUTIONS = (
    "onnxruntime", "onnxruntime-gpu", "tensorrt", "tensorrt-cu12", "tensorrt-cu12-libs", "tensorrt-cu12-bindings",
    "tensorrt-cu13", "nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12", "nvidia-cuda-runtime", "nvidia-cudnn-cu13", "torch",
)  # fmt: skip
GPU_PROVIDERS = ("TensorrtExecutionProvider", "CUDAExecutionProvider")
# onnxruntime-gpu on PyPI: releases before this are built for CUDA 12, from it on for CUDA 13.
ORT_FIRST_CUDA13 = (1, 27)
GPU_EXTRA = "pip install 'extract-trt[gpu]'"


@dataclass(slots=True)
class GpuInfo:
    index: int
    name: str
    compute_capability: tuple[int, int]
    memory_bytes: int

    @property
    def sm(self) -> str:
        from extract_trt.artifacts.trt_engine import sm_name

        return sm_name(self.compute_capability)


@dataclass(slots=True)
class EngineMatch:
    """One engine (or ORT EP-context model) recorded in a model directory, against this machine."""

    model_dir: str
    kind: str  # "tensorrt" | "ort-ep-context" | "none" (no engine recorded) | "error" (no readable manifest)
    key: str  # "l4-fp16"
    file: str
    compute_capability: str
    built_with: str  # "TensorRT 10.16.1.11" / "onnxruntime 1.26.0"
    matches: bool
    reason: str


@dataclass(slots=True)
class Diagnosis:
    extract_trt: str
    python: str
    platform: str
    distributions: dict[str, str]  # installed distribution → version
    onnxruntime_version: str | None
    build_providers: list[str]  # what the onnxruntime build lists
    working_providers: list[str]  # those that really start a session here
    provider_errors: dict[str, str]
    driver_cuda_version: str | None  # the CUDA version the NVIDIA driver supports ("12.4")
    gpus: list[GpuInfo]
    gpu_error: str | None  # why no GPU was found
    tensorrt_version: str | None
    tensorrt_error: str | None
    engines: list[EngineMatch] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diagnose(model_dirs: list[Path] | tuple[Path, ...] = ()) -> Diagnosis:
    """Everything ``extract-trt doctor`` prints."""
    from extract_trt import __version__

    gpus, driver_cuda, gpu_error = find_gpus()
    ort_version, build, working, errors = onnxruntime_providers()
    trt_version, trt_error = find_tensorrt()
    found = Diagnosis(
        extract_trt=__version__, python=sys.version.split()[0], platform=platform.platform(),
        distributions=installed_distributions(), onnxruntime_version=ort_version, build_providers=build,
        working_providers=working, provider_errors=errors, driver_cuda_version=driver_cuda, gpus=gpus,
        gpu_error=gpu_error, tensorrt_version=trt_version, tensorrt_error=trt_error,
    )  # fmt: skip
    for model_dir in model_dirs:
        found.engines.extend(engine_matches(Path(model_dir), gpus, trt_version, working))
    found.advice = advice(found)
    return found


def installed_distributions() -> dict[str, str]:
    versions = {}
    for name in DISTRIBUTIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


# -- GPUs through the NVIDIA driver -----------------------------------------------------------------

_CU_ATTRIBUTE_CC_MAJOR, _CU_ATTRIBUTE_CC_MINOR = 75, 76


def find_gpus() -> tuple[list[GpuInfo], str | None, str | None]:
    """GPUs visible to CUDA, the CUDA version the driver supports, and why there are none (or ``None``).

    Reads the driver API (``libcuda.so.1``) with ctypes: no CUDA toolkit or Python CUDA package needed,
    and it answers for the driver every CUDA library here will run on."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1" if sys.platform != "win32" else "nvcuda.dll")
    except OSError:
        return [], None, "no NVIDIA driver (libcuda not found)"
    version = ctypes.c_int()
    if cuda.cuInit(0) != 0:
        return [], None, "the NVIDIA driver did not initialise (cuInit failed: no usable GPU, or CUDA_VISIBLE_DEVICES hides them)"
    driver = None
    if cuda.cuDriverGetVersion(ctypes.byref(version)) == 0:
        driver = f"{version.value // 1000}.{version.value % 1000 // 10}"
    count = ctypes.c_int()
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return [], driver, "the NVIDIA driver sees no GPU"
    gpus = []
    for index in range(count.value):
        device, name, major, minor, memory = ctypes.c_int(), ctypes.create_string_buffer(256), ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
        cuda.cuDeviceGet(ctypes.byref(device), index)
        cuda.cuDeviceGetName(name, 256, device)
        cuda.cuDeviceGetAttribute(ctypes.byref(major), _CU_ATTRIBUTE_CC_MAJOR, device)
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), _CU_ATTRIBUTE_CC_MINOR, device)
        cuda.cuDeviceTotalMem_v2(ctypes.byref(memory), device)
        gpus.append(GpuInfo(index, name.value.decode(errors="replace"), (major.value, minor.value), memory.value))
    return gpus, driver, None


# -- ONNX Runtime and TensorRT ----------------------------------------------------------------------


def onnxruntime_providers() -> tuple[str | None, list[str], list[str], dict[str, str]]:
    """ORT version, the providers its build lists, those that start a session here, and why others failed."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        return None, [], [], {"onnxruntime": f"not importable: {exc}"}
    build = list(ort.get_available_providers())
    model = resources.files("extract_trt") / "models" / "block-model" / "model.onnx"
    ort.set_default_logger_severity(3)  # a provider that cannot load logs errors; we report them ourselves
    working, errors = [], {}
    for provider in build:
        try:
            fallback = [] if provider == "CPUExecutionProvider" else ["CPUExecutionProvider"]
            session = ort.InferenceSession(str(model), providers=[provider, *fallback])
        except Exception as exc:  # noqa: BLE001 — any failure to start is what we report
            errors[provider] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
            continue
        if session.get_providers()[0] == provider:
            working.append(provider)
        else:
            errors[provider] = "listed by this onnxruntime build, but its libraries did not load (ORT fell back to CPU)"
    return ort.__version__, build, working, errors


def find_tensorrt() -> tuple[str | None, str | None]:
    """TensorRT's version, or why it cannot be imported."""
    try:
        import tensorrt
    except (ImportError, OSError) as exc:
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    return str(tensorrt.__version__), None


# -- model directories ------------------------------------------------------------------------------


def engine_matches(model_dir: Path, gpus: list[GpuInfo], trt_version: str | None, working_providers: list[str]) -> list[EngineMatch]:
    """The engines and EP-context models a model directory records, each against this machine."""
    from extract_trt.artifacts.manifest import ManifestError, load_manifest
    from extract_trt.artifacts.trt_engine import EngineMismatchError, EngineRecord, check_engine_compatible

    try:
        manifest = load_manifest(model_dir, check_files=False)
    except ManifestError as exc:
        return [EngineMatch(str(model_dir), "error", "", "", "", "", False, str(exc))]
    here = {gpu.sm for gpu in gpus}
    found = []
    for key, data in sorted(manifest.engines.items()):
        record = EngineRecord.from_dict(data)
        reason = ""
        if not gpus:
            reason = "no GPU here"
        elif trt_version is None:
            reason = "TensorRT is not importable here"
        else:
            for gpu in gpus:
                try:
                    check_engine_compatible(record, compute_capability=gpu.compute_capability, tensorrt_version=trt_version)
                    reason = ""
                    break
                except EngineMismatchError as exc:
                    reason = str(exc)
        if not (model_dir / record.file).is_file():
            reason = f"{record.file} is missing from the directory"
        found.append(EngineMatch(str(model_dir), "tensorrt", key, record.file, record.compute_capability,
                                 f"TensorRT {record.tensorrt_version}", not reason, reason or "matches this GPU and TensorRT"))  # fmt: skip
    for key, data in sorted(manifest.extra.get("ort_ep_context", {}).items()):
        built = data.get("onnxruntime_version", "?")
        if data.get("compute_capability") not in here:
            reason = f"built for {data.get('compute_capability')}; this machine has {', '.join(sorted(here)) or 'no GPU'}"
        elif "TensorrtExecutionProvider" not in working_providers:
            reason = "ONNX Runtime's TensorRT provider does not start here"
        else:
            reason = ""
        found.append(EngineMatch(str(model_dir), "ort-ep-context", key, data.get("file", ""), data.get("compute_capability", ""),
                                 f"onnxruntime {built}", not reason, reason or "matches this GPU (ORT rebuilds if its TensorRT differs)"))  # fmt: skip
    if not found:
        found.append(EngineMatch(str(model_dir), "none", "", "", "", "", False,
                                 "no TensorRT engine recorded (ONNX variants run through ONNX Runtime's providers)"))  # fmt: skip
    return found


# -- advice -----------------------------------------------------------------------------------------


def advice(found: Diagnosis) -> list[str]:
    """What to install or change, most important first (empty: nothing to do)."""
    from extract_trt.export.trt_api import SUPPORTED_MAJORS, release

    tips = []
    dists = found.distributions
    both = "onnxruntime" in dists and "onnxruntime-gpu" in dists
    gpu_build = any(p in found.build_providers for p in GPU_PROVIDERS)
    if not found.gpus:
        tips.append(f"no GPU ({found.gpu_error}): ONNX Runtime runs on CPU; the built-in model needs nothing more. "
                    f"GPU model backends need an NVIDIA GPU and `{GPU_EXTRA}`.")  # fmt: skip
        if both:
            tips.append(_swap_tip(dists, "both onnxruntime and onnxruntime-gpu are installed and provide the same module"))
        return tips
    if both:
        tips.append(_swap_tip(dists, "onnxruntime and onnxruntime-gpu are both installed; they provide the same "
                                     f"`onnxruntime` module and this one lists {', '.join(found.build_providers)}"))  # fmt: skip
    elif not gpu_build:
        tips.append(_swap_tip(dists, "this onnxruntime build has no GPU provider (the CPU wheel)"))
    ort = release(found.onnxruntime_version) if found.onnxruntime_version else None
    if "onnxruntime-gpu" in dists and ort and found.driver_cuda_version:
        wants13 = ort[:2] >= ORT_FIRST_CUDA13
        driver = release(found.driver_cuda_version)
        if wants13 and driver[0] < 13:
            tips.append(f"onnxruntime-gpu {found.onnxruntime_version} is built for CUDA 13 but the driver supports CUDA "
                        f"{found.driver_cuda_version}: pip install 'onnxruntime-gpu[cuda,cudnn]<1.27' (CUDA 12 builds) or update the driver")  # fmt: skip
    if "CUDAExecutionProvider" in found.provider_errors:
        tips.append("the CUDA provider does not start (" + found.provider_errors["CUDAExecutionProvider"] + "): install "
                    "the CUDA runtime and cuDNN wheels it links, `pip install 'onnxruntime-gpu[cuda,cudnn]==" +
                    (found.onnxruntime_version or "VERSION") + "'`, or put the CUDA 12 / cuDNN 9 libraries on LD_LIBRARY_PATH")  # fmt: skip
    if found.tensorrt_version is None:
        tips.append("TensorRT is not importable (" + (found.tensorrt_error or "") + "): `pip install 'tensorrt-cu12>=10,<12'` "
                    "(its -libs part downloads from pypi.nvidia.com) for `extract-trt export trt` and engine labelers")  # fmt: skip
    elif release(found.tensorrt_version)[0] not in SUPPORTED_MAJORS:
        tips.append(f"TensorRT {found.tensorrt_version} is not handled (10.x and 11.x are): pip install 'tensorrt-cu12>=10,<12'")
    if "TensorrtExecutionProvider" in found.provider_errors:
        tip = "ONNX Runtime's TensorRT provider does not start (" + found.provider_errors["TensorrtExecutionProvider"] + ")"
        if found.tensorrt_version and ort and ort[:2] < ORT_FIRST_CUDA13 and release(found.tensorrt_version)[0] >= 11:
            tip += (f": onnxruntime-gpu {found.onnxruntime_version} links TensorRT 10 (libnvinfer.so.10) and TensorRT "
                    f"{found.tensorrt_version} is installed; `pip install 'tensorrt-cu12>=10,<11'` for that provider, "
                    "or use engines from `extract-trt export trt` (TensorRT 11 works there)")  # fmt: skip
        else:
            tip += ": it needs the TensorRT libraries onnxruntime-gpu was built with on the library path (`pip install 'tensorrt-cu12>=10,<11'`)"
        tips.append(tip)
    if "torch" in dists:
        tips.extend(_torch_tip())
    for engine in found.engines:
        if engine.kind == "tensorrt" and not engine.matches and found.tensorrt_version:
            tips.append(f"{engine.model_dir}: engine {engine.key} does not run here ({engine.reason})")
    unreadable = {e.model_dir for e in found.engines if e.kind == "error"}
    tips += [f"{e.model_dir}: {e.reason}" for e in found.engines if e.kind == "error"]
    for model_dir in sorted({e.model_dir for e in found.engines} - unreadable):
        if not any(e.matches for e in found.engines if e.model_dir == model_dir) and found.tensorrt_version:
            tips.append(f"{model_dir}: no engine for this machine; build one here: extract-trt export trt {model_dir} "
                        f"--gpu {_gpu_key(found.gpus[0])} --precision fp16")  # fmt: skip
    return tips


def _swap_tip(dists: dict[str, str], why: str) -> str:
    version = dists.get("onnxruntime-gpu", dists.get("onnxruntime", ""))
    pin = f"=={version}" if "onnxruntime-gpu" in dists else ">=1.20,<1.27"
    return (f"{why}: `pip uninstall -y onnxruntime onnxruntime-gpu && pip install 'onnxruntime-gpu[cuda,cudnn]{pin}'` "
            "(again after any install that pulls the CPU wheel back, e.g. upgrading extract-trt)")  # fmt: skip


def _torch_tip() -> list[str]:
    try:
        import torch
    except ImportError:
        return []
    if torch.cuda.is_available():
        return []
    return [f"torch {torch.__version__} has no CUDA (torch.version.cuda = {torch.version.cuda}): TensorRT engine labelers "
            "keep their buffers in torch CUDA tensors; install a CUDA build of torch (pip's default Linux wheel)"]  # fmt: skip


def _gpu_key(gpu: GpuInfo) -> str:
    from extract_trt.export.trt_engine import GPUS

    for key, target in GPUS.items():
        if target.compute_capability == gpu.compute_capability:
            return key
    return f"<one of {', '.join(GPUS)}: engines are built for those; this GPU is {gpu.sm}>"


# -- report -----------------------------------------------------------------------------------------


def render(found: Diagnosis) -> str:
    """The human-readable report."""
    lines = [f"extract-trt {found.extract_trt} · Python {found.python} · {found.platform}", ""]
    if found.gpus:
        lines.append(f"GPU: driver supports CUDA {found.driver_cuda_version}")
        lines += [f"  [{g.index}] {g.name} · compute capability {g.compute_capability[0]}.{g.compute_capability[1]} ({g.sm})"
                  f" · {g.memory_bytes / 2**30:.1f} GiB" for g in found.gpus]  # fmt: skip
    else:
        lines.append(f"GPU: no GPU ({found.gpu_error})")
    lines.append(f"ONNX Runtime: {found.onnxruntime_version or 'not installed'}")
    lines.append(f"  providers in this build: {', '.join(found.build_providers) or '-'}")
    lines.append(f"  providers that start here: {', '.join(found.working_providers) or '-'}")
    lines += [f"  {name}: {error}" for name, error in found.provider_errors.items()]
    lines.append(f"TensorRT: {found.tensorrt_version or 'not importable (' + (found.tensorrt_error or '') + ')'}")
    cuda_wheels = {k: v for k, v in found.distributions.items() if k.startswith(("nvidia-", "tensorrt", "onnxruntime", "torch"))}
    lines.append("packages: " + (", ".join(f"{k} {v}" for k, v in cuda_wheels.items()) or "-"))
    if found.engines:
        lines.append("engines:")
        for e in found.engines:
            mark = "ok " if e.matches else "-- "
            what = f"{e.kind} {e.key} ({e.file}, {e.compute_capability}, {e.built_with})" if e.key else e.kind
            lines.append(f"  {mark}{e.model_dir}: {what}: {e.reason}")
    lines.append("")
    lines += ["what to do:", *(f"  - {tip}" for tip in found.advice)] if found.advice else ["nothing to install."]
    return "\n".join(lines)
