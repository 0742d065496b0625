"""Pulpie-format encoders run by a serialized TensorRT engine (``extract-trt export trt``) as a
:class:`~extract_trt.runtime.labelers.Labeler`.

:class:`EngineEncoderLabeler` is :class:`~extract_trt.runtime.labelers.encoder.EncoderLabeler` (same
tokenization, packing, token-budget batching, ``<|sep|>`` labels) with the ONNX Runtime session replaced
by :class:`TensorRTEngineRunner`, which offers the one call the labeler makes, ``run(output_names,
feeds)``. The runner keeps device buffers (PyTorch CUDA tensors: the export extra already installs
torch, and its caching allocator reuses buffers between calls), copies inputs from pinned host memory on
its own CUDA stream, enqueues with ``execute_async_v3`` and waits on the stream; the wait releases the
GIL, so the labeler's prefetch thread tokenizes and packs the next group of pages while the GPU runs
(host preprocessing overlaps execution). Outputs after the ``<|sep|>`` gather have a data-dependent row
count and are received through an ``IOutputAllocator``.

Before deserializing, the manifest's engine record is checked against this GPU and this TensorRT
(:func:`~extract_trt.artifacts.trt_engine.check_engine_compatible`): a wrong compute capability or
TensorRT release is an :class:`~extract_trt.artifacts.trt_engine.EngineMismatchError`, not a crash.
GPU-only code: written against the TensorRT 10.x/11.x Python API (the runtime calls are the same on both; see
:mod:`~extract_trt.export.trt_api`), not run in CI (no GPU there).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from extract_trt.artifacts.manifest import ModelManifest
from extract_trt.artifacts.trt_engine import (
    EngineMismatchError,
    EngineRecord,
    ShapeRange,
    TensorRTUnavailableError,
    check_engine_compatible,
    import_tensorrt,
    sm_name,
)
from extract_trt.errors import LabelerError
from extract_trt.runtime.labelers.encoder import EncoderLabeler
from extract_trt.runtime.labelers.session import SessionConfig, SessionInfo

__all__ = ["EngineEncoderLabeler", "TensorRTEngineRunner", "select_engine"]


def select_engine(manifest: ModelManifest, compute_capability: tuple[int, int], precision: str | None = None) -> str:
    """The key of the manifest's engine for this GPU (and ``precision``), or EngineMismatchError listing
    what the directory has."""
    sm = sm_name(compute_capability)
    keys = [k for k, e in manifest.engines.items() if e["compute_capability"] == sm and precision in (None, e["precision"])]
    if not keys:
        have = ", ".join(f"{k} ({e['compute_capability']})" for k, e in manifest.engines.items()) or "none"
        raise EngineMismatchError(
            f"no engine for this GPU ({sm}{', ' + precision if precision else ''}); the model directory has: {have}"
        )
    return sorted(keys)[0]


def _profile_ranges(record: EngineRecord) -> list[dict[str, ShapeRange]]:
    return [
        {name: ShapeRange(tuple(r["min"]), tuple(r["opt"]), tuple(r["max"])) for name, r in p["shapes"].items()}
        for p in record.profiles
    ]


def pick_profile(record: EngineRecord, shapes: Mapping[str, Sequence[int]]) -> int:
    """Index of the first optimization profile covering every input shape (LabelerError if none)."""
    for index, ranges in enumerate(_profile_ranges(record)):
        if all(n in ranges and ranges[n].covers(s) for n, s in shapes.items()):
            return index
    raise LabelerError(f"input shapes {dict(shapes)} are outside every profile of {record.file}")


class TensorRTEngineRunner:
    """A deserialized engine with an ONNX-Runtime-like ``run(output_names, feeds)``."""

    def __init__(self, plan: Path, record: EngineRecord, device_id: int = 0) -> None:
        trt = import_tensorrt()
        import torch

        if not torch.cuda.is_available():
            raise TensorRTUnavailableError("no CUDA GPU is visible (torch.cuda.is_available() is False)")
        self._torch = torch
        self._dtypes = _torch_dtypes()
        self.device = torch.device("cuda", device_id)
        check_engine_compatible(
            record, compute_capability=tuple(torch.cuda.get_device_capability(device_id)), tensorrt_version=trt.__version__
        )
        logger = trt.Logger(trt.Logger.WARNING)
        if record.plugins:
            trt.init_libnvinfer_plugins(logger, "")
        self._runtime = trt.Runtime(logger)
        self.engine = self._runtime.deserialize_cuda_engine(plan.read_bytes())
        if self.engine is None:
            raise EngineMismatchError(f"TensorRT could not deserialize {plan} (see its log)")
        self.context = self.engine.create_execution_context()
        self.stream = torch.cuda.Stream(self.device)
        self.record = record
        self._profile = 0
        self._allocators = {b.name: _OutputAllocator(trt, torch, self.device) for b in record.bindings if b.data_dependent}
        for name, allocator in self._allocators.items():
            self.context.set_output_allocator(name, allocator)

    def get_providers(self) -> list[str]:
        return ["TensorRT"]

    def run(self, output_names: Sequence[str] | None, feeds: Mapping[str, np.ndarray]) -> list[np.ndarray]:
        torch = self._torch
        outputs = [b for b in self.record.bindings if b.mode == "output"]
        wanted = list(output_names) if output_names else [b.name for b in outputs]
        profile = pick_profile(self.record, {n: a.shape for n, a in feeds.items()})
        keep = []  # device tensors must live until the stream is done
        with torch.cuda.stream(self.stream):
            if profile != self._profile:
                self.context.set_optimization_profile_async(profile, self.stream.cuda_stream)
                self._profile = profile
            for name, array in feeds.items():
                host = torch.from_numpy(np.ascontiguousarray(array)).pin_memory()
                device = host.to(self.device, non_blocking=True)
                keep += [host, device]
                self.context.set_input_shape(name, tuple(array.shape))
                self.context.set_tensor_address(name, device.data_ptr())
            fixed = {}
            for binding in outputs:
                if binding.data_dependent:
                    continue
                shape = tuple(self.context.get_tensor_shape(binding.name))
                fixed[binding.name] = torch.empty(shape, dtype=self._dtypes[binding.dtype], device=self.device)
                self.context.set_tensor_address(binding.name, fixed[binding.name].data_ptr())
            if not self.context.execute_async_v3(self.stream.cuda_stream):
                raise LabelerError(f"TensorRT could not enqueue {self.record.file}")
            results = []
            for name in wanted:
                binding = next(b for b in outputs if b.name == name)
                tensor = fixed.get(name)
                if tensor is None:
                    tensor = self._allocators[name].result(self._dtypes[binding.dtype])
                results.append(tensor.to("cpu", non_blocking=True))
        self.stream.synchronize()  # releases the GIL: the prefetch thread prepares the next pages meanwhile
        del keep
        return [r.numpy() for r in results]


class _OutputAllocator:
    """IOutputAllocator for data-dependent outputs: grows one device buffer, remembers the final shape."""

    def __new__(cls, trt, torch, device):
        class Allocator(trt.IOutputAllocator):
            def __init__(self) -> None:
                trt.IOutputAllocator.__init__(self)
                self.buffer = torch.empty(0, dtype=torch.uint8, device=device)
                self.shape: tuple[int, ...] = ()

            def reallocate_output(self, tensor_name, memory, size, alignment):
                if size > self.buffer.numel():
                    self.buffer = torch.empty(max(size, 1), dtype=torch.uint8, device=device)
                return self.buffer.data_ptr()

            def reallocate_output_async(self, tensor_name, memory, size, alignment, stream):
                return self.reallocate_output(tensor_name, memory, size, alignment)

            def notify_shape(self, tensor_name, shape):
                self.shape = tuple(shape)

            def result(self, dtype):
                count = int(np.prod(self.shape)) if self.shape else 0
                return self.buffer.view(dtype)[:count].view(self.shape) if count else torch.empty(self.shape, dtype=dtype)

        return Allocator()


def _torch_dtypes() -> dict:
    import torch

    return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16, "int64": torch.int64,
            "int32": torch.int32, "bool": torch.bool}  # fmt: skip


class EngineEncoderLabeler(EncoderLabeler):
    """:class:`EncoderLabeler` on a TensorRT engine of the model directory.

    Args:
        model_dir: a directory with ``extract-trt.json`` listing engines (``extract-trt export trt``).
        engine: the engine key (``"l4-fp16"``); default: the engine built for this GPU.
        device_id: CUDA device.
        **kw: batching arguments of :class:`EncoderLabeler` (must fit the engine's profile).
    """

    def __init__(self, model_dir: str | Path, *, engine: str | None = None, device_id: int = 0, **kw) -> None:
        self._engine_key = engine
        self._device_id = device_id
        self._engine_kw = dict(kw)
        super().__init__(model_dir, **kw)
        self.name = f"encoder-{self.manifest.architecture}-trt-{self.engine.key}"

    def _open_session(self, variant: str, config: SessionConfig) -> SessionInfo:
        import_tensorrt()  # the clear error first, before touching CUDA
        import torch

        key = self._engine_key or select_engine(self.manifest, tuple(torch.cuda.get_device_capability(self._device_id)))
        if key not in self.manifest.engines:
            raise EngineMismatchError(f"{self.model_dir} has no engine {key!r}; it has {sorted(self.manifest.engines)}")
        self.engine = EngineRecord.from_dict(self.manifest.engines[key])
        largest = _profile_ranges(self.engine)[0][self.manifest.inputs[0].name].max
        if self.max_batch_size > largest[0] or self.manifest.max_tokens > largest[1]:
            raise LabelerError(f"engine {key} takes batches up to {largest}; lower max_batch_size to {largest[0]}")
        runner = TensorRTEngineRunner(self.model_dir / self.engine.file, self.engine, self._device_id)
        return SessionInfo(session=runner, providers=["TensorRT"], requested=["TensorRT"], fell_back=False)

    def __reduce__(self):
        return (_rebuild, (self.model_dir, self._engine_key, self._device_id, self._engine_kw))


def _rebuild(model_dir: Path, engine: str | None, device_id: int, kw: dict) -> EngineEncoderLabeler:
    return EngineEncoderLabeler(model_dir, engine=engine, device_id=device_id, **kw)
