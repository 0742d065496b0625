"""TensorRT optimization profiles derived from what the runtime really feeds (pure Python, no TensorRT).

A TensorRT engine built for dynamic shapes serves every input shape between a profile's ``min`` and
``max`` and picks its kernels for ``opt``. The shapes come from the runtime's own batching:

* encoders (:func:`encoder_profiles`): packed chunks ``[batch, seq]``. ``min`` is ``(1, 1)`` (any page
  may give a one-block chunk), ``max`` is ``(max_batch, max_tokens)`` (the packer never exceeds the chunk
  size, the batcher never exceeds ``max_batch`` rows), ``opt`` is where the work is: the token-weighted
  median chunk length of a sample of pages (rounded up to a multiple of 8 for tensor cores), with the
  rows the token budget allows at that length.
* decoders (:func:`decoder_profiles`): two profiles, because the two phases have opposite shapes.
  ``prefill`` feeds prompt chunks (``seq`` up to ``max_chunk``, cache from empty); ``decode`` feeds short
  runs (forced tokens up to the next choice, or a drafted answer: ``seq`` up to the longest answer seen,
  cache up to the context). ``opt`` again from the sample: median prompt and answer lengths.

The same :class:`EngineProfile` renders as ONNX Runtime TensorRT-EP options (``trt_profile_*_shapes``,
:meth:`EngineProfile.tensorrt_options`), as ``trtexec`` flags, and is what the engine builder and the
manifest record.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from extract_trt.artifacts.trt_engine import ProfileError, ShapeRange

__all__ = [
    "EngineProfile",
    "LengthStats",
    "decoder_profiles",
    "encoder_profiles",
    "length_stats",
]


@dataclass(frozen=True, slots=True)
class LengthStats:
    """A length distribution in a few numbers (recorded in the manifest next to the profile)."""

    count: int
    min: int
    p50: int
    p90: int
    max: int
    token_weighted_p50: int  # the length at which half of all tokens sit


def length_stats(lengths: Iterable[int]) -> LengthStats:
    values = np.sort(np.asarray(list(lengths), dtype=np.int64))
    if values.size == 0 or values[0] < 1:
        raise ProfileError("need at least one length, all ≥ 1")
    cumulative = np.cumsum(values)
    weighted = int(values[np.searchsorted(cumulative, cumulative[-1] / 2)])
    p50, p90 = (int(np.percentile(values, q, method="higher")) for q in (50, 90))
    return LengthStats(int(values.size), int(values[0]), p50, p90, int(values[-1]), weighted)


@dataclass(slots=True)
class EngineProfile:
    """One TensorRT optimization profile: a shape range per dynamic input, and the sample it came from."""

    name: str
    shapes: dict[str, ShapeRange]
    sample: dict[str, LengthStats] = field(default_factory=dict)

    def covers(self, feeds: Mapping[str, Sequence[int]]) -> bool:
        """Whether every input shape in ``feeds`` (name → shape) lies in this profile."""
        return all(n in self.shapes and self.shapes[n].covers(s) for n, s in feeds.items())

    def shape_strings(self) -> dict[str, str]:
        """``{"min": "input_ids:1x1,attention_mask:1x1", "opt": …, "max": …}`` (ORT TensorRT EP / trtexec)."""
        return {
            key: ",".join(f"{name}:{'x'.join(map(str, getattr(r, key)))}" for name, r in self.shapes.items())
            for key in ("min", "opt", "max")
        }

    def tensorrt_options(self, **kw: Any):
        """:class:`~extract_trt.runtime.labelers.session.TensorRTOptions` with this profile (``kw``: other fields)."""
        from extract_trt.runtime.labelers.session import TensorRTOptions

        return TensorRTOptions(
            profile_min={n: r.min for n, r in self.shapes.items()},
            profile_opt={n: r.opt for n, r in self.shapes.items()},
            profile_max={n: r.max for n, r in self.shapes.items()},
            **kw,
        )

    def trtexec_flags(self) -> list[str]:
        strings = self.shape_strings()
        return [f"--{key}Shapes={strings[key]}" for key in ("min", "opt", "max")]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shapes": {n: r.to_dict() for n, r in self.shapes.items()},
            "sample": {k: _stats_dict(v) for k, v in self.sample.items()},
        }


def _stats_dict(stats: LengthStats) -> dict[str, int]:
    return {f: getattr(stats, f) for f in LengthStats.__slots__}


def _round_up(value: int, multiple: int, cap: int) -> int:
    return min(cap, -(-value // multiple) * multiple)


def encoder_profiles(
    chunk_lengths: Iterable[int],
    input_names: Sequence[str],
    *,
    max_tokens: int,
    max_batch_tokens: int,
    max_batch_size: int,
) -> list[EngineProfile]:
    """The packed-batch profile of an encoder (see the module docstring)."""
    stats = length_stats(chunk_lengths)
    if stats.max > max_tokens:
        raise ProfileError(f"a chunk of {stats.max} tokens exceeds max_tokens {max_tokens}")
    max_batch = max(1, min(max_batch_size, max_batch_tokens))
    opt_seq = _round_up(stats.token_weighted_p50, 8, max_tokens)
    opt_batch = max(1, min(max_batch, max_batch_tokens // opt_seq))
    shape = ShapeRange((1, 1), (opt_batch, opt_seq), (max_batch, max_tokens))
    return [EngineProfile("packed", {name: shape for name in input_names}, {"chunk_tokens": stats})]


def decoder_profiles(
    prompt_lengths: Iterable[int],
    answer_lengths: Iterable[int],
    *,
    max_context: int,
    num_kv_heads: int,
    head_dim: int,
    past_names: Sequence[str],
    max_batch: int = 8,
    max_chunk: int = 1024,
) -> list[EngineProfile]:
    """``prefill`` and ``decode`` profiles of a KV-cache decoder (see the module docstring).

    Inputs: ``input_ids``/``position_ids`` ``[batch, seq]``, ``attention_mask`` ``[batch, past + seq]``,
    each ``past_names`` tensor ``[batch, kv_heads, past, head_dim]``.
    """
    prompts, answers = length_stats(prompt_lengths), length_stats(answer_lengths)
    if max_chunk < 1 or max_context < 2:
        raise ProfileError(f"max_chunk {max_chunk} and max_context {max_context} leave no room for a pass")
    chunk = min(max_chunk, max_context)
    answer_max = min(max_context - 1, max(answers.max, 1))
    opt_batch = max(1, max_batch // 2)

    def profile(name: str, seq: tuple[int, int, int], past: tuple[int, int, int], stats: dict) -> EngineProfile:
        b = (1, opt_batch, max_batch)
        tokens = ShapeRange((b[0], seq[0]), (b[1], seq[1]), (b[2], seq[2]))
        mask = ShapeRange(*((bb, pp + ss) for bb, pp, ss in zip(b, past, seq)))
        cache = ShapeRange(*((bb, num_kv_heads, pp, head_dim) for bb, pp in zip(b, past)))
        shapes = {"input_ids": tokens, "attention_mask": mask, "position_ids": tokens}
        shapes.update({n: cache for n in past_names})
        return EngineProfile(name, shapes, stats)

    # Prefill: chunks of the prompt; the first starts from an empty cache, later ones see earlier chunks.
    prefill_opt = _round_up(min(prompts.p50, chunk), 8, chunk)
    prefill = profile("prefill", (1, prefill_opt, chunk), (0, 0, max_context - 1), {"prompt_tokens": prompts})
    # Decode: short runs on a cache holding the prompt (and the answer so far).
    decode_opt = min(answer_max, max(1, answers.p50))
    past_opt = min(max_context - answer_max, prompts.p50)
    decode = profile("decode", (1, decode_opt, answer_max), (1, past_opt, max_context - 1), {"answer_tokens": answers})
    return [prefill, decode]
