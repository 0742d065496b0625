"""What a model directory records about its TensorRT engines, read by the engine builder
(:mod:`extract_trt.export.trt_engine`) and the engine labeler
(:mod:`extract_trt.runtime.labelers.trt_engine`): the manifest's engine records and I/O bindings, the
profiles' shape ranges, the compatibility check made before deserializing, and the errors for a missing
TensorRT or a mismatched engine. Pure Python; TensorRT itself is imported on use (:func:`import_tensorrt`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from extract_trt.errors import ExtractError, LabelerError

__all__ = [
    "EngineBinding",
    "EngineMismatchError",
    "EngineRecord",
    "ProfileError",
    "SUPPORTED_TENSORRT_MAJORS",
    "ShapeRange",
    "TensorRTUnavailableError",
    "check_engine_compatible",
    "import_tensorrt",
    "sm_name",
    "tensorrt_release",
    "unsupported_tensorrt",
]


class TensorRTUnavailableError(ExtractError):
    """The TensorRT Python package (or a CUDA GPU) is not available on this machine."""


class EngineMismatchError(LabelerError):
    """A serialized engine was built for another GPU architecture or TensorRT version than this one."""


@dataclass(slots=True)
class EngineBinding:
    """One engine I/O tensor: what a C++ caller binds (``-1`` in ``shape`` = set per call)."""

    name: str
    mode: str  # "input" | "output"
    dtype: str  # manifest dtype names (int64, float32, …)
    shape: list[int]
    profiles: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # inputs: profile → min/opt/max
    data_dependent: bool = False  # output size known only after execution (needs an IOutputAllocator)


@dataclass(slots=True)
class EngineRecord:
    """The manifest entry of one engine (``engines["<gpu>-<precision>"]``)."""

    file: str
    gpu: str
    compute_capability: str  # "sm_89"
    precision: str
    tensorrt_version: str
    onnx_file: str
    profiles: list[dict[str, Any]]
    bindings: list[EngineBinding]
    workspace_bytes: int
    timing_cache: str = ""
    plugins: bool = False  # the engine uses libnvinfer_plugin layers (initLibNvInferPlugins before deserializing)
    device_name: str = ""
    sha256: str = ""
    bytes: int = 0
    created: str = ""

    @property
    def key(self) -> str:
        return f"{self.gpu}-{self.precision}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineRecord:
        data = dict(data)
        data["bindings"] = [EngineBinding(**b) for b in data.get("bindings", [])]
        return cls(**data)


class ProfileError(ValueError):
    """Lengths or limits from which no valid profile can be built."""


@dataclass(frozen=True, slots=True)
class ShapeRange:
    """``min ≤ opt ≤ max`` shapes of one input (element-wise)."""

    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]

    def __post_init__(self) -> None:
        if not len(self.min) == len(self.opt) == len(self.max):
            raise ProfileError(f"min/opt/max ranks differ: {self.min} {self.opt} {self.max}")
        if any(not 0 <= a <= b <= c for a, b, c in zip(self.min, self.opt, self.max)):
            raise ProfileError(f"shapes must satisfy 0 ≤ min ≤ opt ≤ max: {self.min} {self.opt} {self.max}")

    def covers(self, shape: Sequence[int]) -> bool:
        return len(shape) == len(self.min) and all(a <= s <= c for a, s, c in zip(self.min, shape, self.max))

    def to_dict(self) -> dict[str, list[int]]:
        return {"min": list(self.min), "opt": list(self.opt), "max": list(self.max)}


#: TensorRT releases whose Python API the engine code handles (their differences: extract_trt.export.trt_api).
SUPPORTED_TENSORRT_MAJORS = (10, 11)


def tensorrt_release(version: str) -> tuple[int, ...]:
    """``"10.16.1.11"`` → ``(10, 16, 1, 11)``; suffixes such as ``.post1`` or ``rc1`` are ignored.
    ``ValueError`` when no number can be read."""
    numbers = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
    if not numbers:
        raise ValueError(f"cannot read the TensorRT version {version!r}")
    return tuple(numbers)


def unsupported_tensorrt(version: str) -> str | None:
    """Why TensorRT ``version`` cannot be used here (with the install command), or ``None`` when it can."""
    try:
        major = tensorrt_release(version)[0]
    except ValueError as exc:
        return str(exc)
    if major in SUPPORTED_TENSORRT_MAJORS:
        return None
    return (
        f"TensorRT {version} is installed; extract-trt builds and runs engines with TensorRT "
        f"{' and '.join(f'{m}.x' for m in SUPPORTED_TENSORRT_MAJORS)}: pip install 'tensorrt-cu12>=10,<12'"
    )


def import_tensorrt():
    """The ``tensorrt`` module (10.x or 11.x), or :class:`TensorRTUnavailableError` saying how to get it."""
    try:
        import tensorrt
    except (ImportError, OSError) as exc:  # OSError: the wheel is there but libnvinfer is not loadable
        raise TensorRTUnavailableError(
            f"TensorRT is not importable ({exc}); on a machine with an NVIDIA GPU install it with "
            "`pip install 'extract-trt[gpu]'` (tensorrt-cu12, TensorRT 10.x or 11.x; `extract-trt doctor` "
            "checks the setup) — or use the ONNX Runtime TensorRT execution provider route (--route ort-ep)"
        ) from None
    problem = unsupported_tensorrt(tensorrt.__version__)
    if problem is not None:
        raise TensorRTUnavailableError(problem)
    return tensorrt


def sm_name(compute_capability: tuple[int, int]) -> str:
    """A GPU architecture as the engine records name it: compute capability (8, 9) -> ``"sm_89"``."""
    return f"sm_{compute_capability[0]}{compute_capability[1]}"


def check_engine_compatible(record: EngineRecord, *, compute_capability: tuple[int, int], tensorrt_version: str) -> None:
    """Raise :class:`EngineMismatchError` unless the engine can run here.

    TensorRT engines are specific to the GPU architecture (compute capability) and to the exact
    TensorRT release (major.minor.patch) that built them.
    """
    here = sm_name(compute_capability)
    if record.compute_capability != here:
        raise EngineMismatchError(
            f"engine {record.file} was built for {record.gpu} ({record.compute_capability}); this GPU is {here}: "
            f"build one here with `extract-trt export trt MODEL_DIR --gpu …` (l4 = sm_89, a100 = sm_80)"
        )
    built, running = _release(record.tensorrt_version), _release(tensorrt_version)
    if built != running:
        raise EngineMismatchError(
            f"engine {record.file} was built with TensorRT {record.tensorrt_version}; this process has "
            f"TensorRT {tensorrt_version}: rebuild the engine (engines are not portable across TensorRT releases)"
        )


def _release(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:3])
