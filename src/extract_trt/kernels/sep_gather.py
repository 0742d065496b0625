"""Logits at ``<|sep|>`` positions → per-block outputs (spec §3.3), in NumPy and as ONNX graph surgery.

The reference reads ``logits[row][input_ids[row] == sep_id].argmax(-1)``: one prediction per block, in
``<|sep|>`` order. :func:`append_sep_gather` appends the same computation to an exported graph, so a
session returns ``[n_blocks, …]`` rows instead of ``[batch, seq, labels]`` logits (less to copy back from
a GPU, no host-side gather). Rows come in row-major order of ``(batch row, position)`` — ONNX ``NonZero``
order — which is chunk order then block order. :func:`sep_gather` is the NumPy reference of both.

Outputs (names in :data:`BLOCK_OUTPUTS`): ``block_logits`` [N, labels] float, ``block_main_prob`` [N]
(softmax probability of the main label), ``block_label`` [N] int64 (argmax; ties go to the lower label
index, like ``torch.argmax``), ``block_index`` [N, 2] int64 (batch row, position).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BLOCK_OUTPUTS", "BlockOutputs", "append_sep_gather", "sep_gather"]

BLOCK_OUTPUTS = ("block_logits", "block_main_prob", "block_label", "block_index")


@dataclass(slots=True)
class BlockOutputs:
    logits: np.ndarray  # [N, labels]
    main_prob: np.ndarray  # [N] float32
    label: np.ndarray  # [N] int64
    index: np.ndarray  # [N, 2] int64


def sep_gather(input_ids: np.ndarray, logits: np.ndarray, sep_id: int, main_label_id: int = 1) -> BlockOutputs:
    """NumPy reference: the per-block outputs of a ``[batch, seq, labels]`` logits tensor."""
    index = np.argwhere(np.asarray(input_ids) == sep_id).astype(np.int64)  # row-major, like NonZero
    rows = np.asarray(logits)[index[:, 0], index[:, 1]].astype(np.float32)  # [N, labels], N may be 0
    exp = np.exp(rows - rows.max(axis=-1, keepdims=True))
    probs = exp / exp.sum(axis=-1, keepdims=True)
    return BlockOutputs(
        logits=rows,
        main_prob=probs[:, main_label_id],
        label=rows.argmax(axis=-1).astype(np.int64),
        index=index,
    )


def append_sep_gather(model, sep_id: int, main_label_id: int = 1, *, input_name: str = "input_ids", logits_name: str = "logits"):
    """Return a copy of the ONNX ``model`` whose outputs are :data:`BLOCK_OUTPUTS` instead of the logits."""
    import onnx
    from onnx import TensorProto, helper

    graph_inputs = {i.name: i for i in model.graph.input}
    if input_name not in graph_inputs:
        raise ValueError(f"graph has no input {input_name!r} (inputs: {sorted(graph_inputs)})")
    if logits_name not in {o.name for o in model.graph.output}:
        raise ValueError(f"graph has no output {logits_name!r}")
    ids_type = graph_inputs[input_name].type.tensor_type.elem_type
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    p = "sep_gather/"
    graph.initializer.extend(
        [
            helper.make_tensor(p + "sep_id", ids_type, [], [sep_id]),
            helper.make_tensor(p + "main_label", TensorProto.INT64, [], [main_label_id]),
        ]
    )
    graph.node.extend(
        [
            helper.make_node("Equal", [input_name, p + "sep_id"], [p + "is_sep"], name=p + "equal"),
            helper.make_node("NonZero", [p + "is_sep"], [p + "nonzero"], name=p + "nonzero"),
            helper.make_node("Transpose", [p + "nonzero"], ["block_index"], perm=[1, 0], name=p + "transpose"),
            helper.make_node("GatherND", [logits_name, "block_index"], ["block_logits"], name=p + "gather"),
            helper.make_node("Softmax", ["block_logits"], [p + "probs"], axis=-1, name=p + "softmax"),
            helper.make_node("Gather", [p + "probs", p + "main_label"], ["block_main_prob"], axis=1, name=p + "main"),
            helper.make_node("ArgMax", ["block_logits"], ["block_label"], axis=-1, keepdims=0, name=p + "argmax"),
        ]
    )
    logits_type = next(o for o in graph.output if o.name == logits_name).type.tensor_type.elem_type
    del graph.output[:]
    graph.output.extend(
        [
            helper.make_tensor_value_info("block_logits", logits_type, ["n_blocks", "n_labels"]),
            helper.make_tensor_value_info("block_main_prob", logits_type, ["n_blocks"]),
            helper.make_tensor_value_info("block_label", TensorProto.INT64, ["n_blocks"]),
            helper.make_tensor_value_info("block_index", TensorProto.INT64, ["n_blocks", 2]),
        ]
    )
    return out
