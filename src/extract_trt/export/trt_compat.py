"""Static TensorRT-compatibility check of an ONNX graph: would TensorRT's ONNX parser (10.x/11.x) take it?

Runs without TensorRT (CI has none): it compares the graph with the data in
``export/data/trt10_onnx_ops.json`` — the parser's operator list, opset range, data types and the
attribute values it rejects, from onnx-tensorrt's ``docs/operators.md`` (TensorRT 10.15; the file's
``source`` says what was checked against what, and the real parser in ``scripts/gpu-check.sh`` has the
last word). Without ``tensorrt_version`` the check is portable (opset ≤ TensorRT 10.0's maximum;
operators newer than 10.0 are warnings); with it, that release's opset maximum and operators apply.

Checks: opset within range; every node in the default domain (custom domains need plugins); operator
supported; attribute rules (e.g. ScatterND ``reduction``); every tensor (inputs, outputs, initializers,
inferred intermediates) of a TensorRT data type (DOUBLE only as an initializer, which the parser
converts); graph inputs of known rank (TensorRT needs the rank to build a profile); int64 initializers
within the int32 range unless they are the ``INT64_MAX``/``INT64_MIN`` "to the end" markers of Slice
(TensorRT 10 has INT64, older parsers clamped — a warning only).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from extract_trt.export.common import ExportError
from extract_trt.export.trt_api import release

__all__ = ["CompatIssue", "CompatReport", "TensorRTCompatError", "check_tensorrt_compat", "max_opset", "supported_ops"]

Severity = Literal["error", "warning"]
_INT32 = (-(2**31), 2**31 - 1)
_SLICE_MARKERS = {2**63 - 1, -(2**63), 2**31 - 1, -(2**31)}
# ONNX TensorProto element types → the names used in the data file.
_DTYPE_NAMES = {
    1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
    10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16",
    17: "float8e4m3fn", 22: "int4",
}  # fmt: skip


class TensorRTCompatError(ExportError):
    """The graph uses something TensorRT's ONNX parser rejects (the message lists every finding)."""


@dataclass(frozen=True, slots=True)
class CompatIssue:
    severity: Severity
    rule: str  # opset | domain | operator | attribute | dtype | rank | int64-range
    where: str  # node or tensor name
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: [{self.rule}] {self.where}: {self.message}"


@dataclass(slots=True)
class CompatReport:
    """Findings for one graph; ``ok`` when there is no error (warnings are allowed)."""

    graph: str
    opset: int
    tensorrt: str  # the release checked against ("10.0+ (portable)" when none was given)
    op_types: list[str] = field(default_factory=list)
    issues: list[CompatIssue] = field(default_factory=list)

    @property
    def errors(self) -> list[CompatIssue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[CompatIssue]:
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_for_errors(self) -> None:
        if self.errors:
            listed = "\n  ".join(str(i) for i in self.errors)
            raise TensorRTCompatError(f"{self.graph} is not TensorRT {self.tensorrt} compatible:\n  {listed}")

    def to_dict(self) -> dict[str, Any]:
        return {"tensorrt": self.tensorrt, "opset": self.opset, "ok": self.ok,
                "issues": [str(i) for i in self.issues]}  # fmt: skip


@lru_cache(maxsize=1)
def rules() -> dict[str, Any]:
    """The parser data (``export/data/trt10_onnx_ops.json``)."""
    text = (resources.files("extract_trt.export") / "data" / "trt10_onnx_ops.json").read_text(encoding="utf-8")
    return json.loads(text)


def supported_ops() -> frozenset[str]:
    return frozenset(rules()["supported_ops"])


def max_opset(tensorrt_version: str | None = None) -> int:
    """The highest ONNX opset the parser of ``tensorrt_version`` takes (``None``: the portable bound)."""
    opset = rules()["opset"]
    if tensorrt_version is None:
        return opset["max"]
    here = release(tensorrt_version)
    known = [(release(r), m) for r, m in opset["max_by_release"].items()]
    return max((item for item in known if item[0] <= here), default=(here, opset["max"]))[1]


def check_tensorrt_compat(model: Any, tensorrt_version: str | None = None) -> CompatReport:
    """Check an ``onnx.ModelProto`` or the path of an ``.onnx`` file (external weights are not loaded)
    against the parser of ``tensorrt_version`` (e.g. ``trt.__version__``), or portably."""
    import onnx

    name = "graph"
    if isinstance(model, (str, Path)):
        name = str(model)
        model = onnx.load(str(model), load_external_data=False)
    data = rules()
    opset = max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)
    target = tensorrt_version or "10.0+ (portable)"
    report = CompatReport(graph=name, opset=opset, tensorrt=target, op_types=sorted({n.op_type for n in _all_nodes(model.graph)}))
    issues = report.issues
    lo, hi = data["opset"]["min"], max_opset(tensorrt_version)
    if not lo <= opset <= hi:
        issues.append(CompatIssue("error", "opset", name, f"opset {opset} is outside TensorRT {target}'s range {lo}-{hi}"))
    _check_nodes(model.graph, data, issues, tensorrt_version)
    _check_tensors(model, data, issues)
    return report


def _all_nodes(graph):
    """Nodes of ``graph`` and of its subgraphs (If/Loop/Scan bodies)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.g.node:
                yield from _all_nodes(attr.g)
            for sub in attr.graphs:
                yield from _all_nodes(sub)


def _check_nodes(graph, data: dict, issues: list[CompatIssue], tensorrt_version: str | None) -> None:
    from onnx import helper

    supported, domains, since = set(data["supported_ops"]), set(data["domains"]), data["supported_since"]
    attribute_rules: dict[str, list[dict]] = {}
    for rule in data["attribute_rules"]:
        attribute_rules.setdefault(rule["op"], []).append(rule)
    for node in _all_nodes(graph):
        where = node.name or f"{node.op_type}({', '.join(node.output)})"
        if node.domain not in domains:
            issues.append(CompatIssue("error", "domain", where, f"{node.domain}::{node.op_type} is a custom-domain op (needs a TensorRT plugin)"))
            continue
        if node.op_type not in supported:
            issues.append(CompatIssue("error", "operator", where, f"{node.op_type} is not supported by TensorRT's ONNX parser"))
            continue
        first = since.get(node.op_type)
        if first is not None and (tensorrt_version is None or release(tensorrt_version) < release(first)):
            severity: Severity = "warning" if tensorrt_version is None else "error"
            issues.append(CompatIssue(severity, "operator", where, f"{node.op_type} needs TensorRT {first} or later"))
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        for rule in attribute_rules.get(node.op_type, ()):
            value = attrs.get(rule["attribute"])
            if isinstance(value, bytes):
                value = value.decode()
            if value is not None and value not in rule["allowed"]:
                issues.append(CompatIssue(rule["severity"], "attribute", where, f"{rule['attribute']}={value!r}: {rule['why']}"))


def _check_tensors(model, data: dict, issues: list[CompatIssue]) -> None:
    import onnx
    from onnx import numpy_helper

    supported = set(data["dtypes"]["supported"])
    initializer_only = set(data["dtypes"]["initializer_only"])
    graph = model.graph
    for tensor in graph.input:
        if not tensor.type.HasField("tensor_type"):
            issues.append(CompatIssue("error", "dtype", tensor.name, "graph input is not a tensor (sequence/map/optional)"))
        elif not tensor.type.tensor_type.HasField("shape"):
            issues.append(CompatIssue("error", "rank", tensor.name, "graph input of unknown rank; TensorRT needs the rank"))
    for init in graph.initializer:
        dtype = _DTYPE_NAMES.get(init.data_type, str(init.data_type))
        if dtype not in supported and dtype not in initializer_only:
            issues.append(CompatIssue("error", "dtype", init.name, f"initializer of type {dtype}"))
        elif dtype == "int64" and not init.external_data:
            values = numpy_helper.to_array(init).ravel()
            outside = [int(v) for v in values if not _INT32[0] <= v <= _INT32[1] and int(v) not in _SLICE_MARKERS]
            if outside:
                issues.append(CompatIssue("warning", "int64-range", init.name,
                                          f"int64 value(s) beyond int32 ({outside[:3]}); fine on TensorRT 10 (native INT64), clamped by older parsers"))  # fmt: skip
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph
    except Exception:  # noqa: BLE001 — inference is best effort; inputs and outputs are still checked
        inferred = graph
    seen = {i.name for i in graph.initializer}
    for value in (*inferred.input, *inferred.value_info, *inferred.output):
        if value.name in seen or not value.type.HasField("tensor_type"):
            if not value.type.HasField("tensor_type") and value.name not in seen:
                issues.append(CompatIssue("error", "dtype", value.name, "a non-tensor value (sequence/map/optional)"))
            continue
        seen.add(value.name)
        elem = value.type.tensor_type.elem_type
        dtype = _DTYPE_NAMES.get(elem, str(elem))
        if elem and dtype not in supported:
            issues.append(CompatIssue("error", "dtype", value.name, f"tensor of type {dtype} (TensorRT has no such data type)"))
