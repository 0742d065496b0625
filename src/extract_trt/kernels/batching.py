"""Token-budget batching of chunks from many pages, and the padding it costs.

Chunks are sorted by length (longest first) and cut greedily into batches whose padded size
``rows × longest`` stays within ``max_batch_tokens`` (and ``max_batch_size`` rows, and optionally a
padding share). Sorting puts chunks of similar length together, so little of each batch is padding;
:class:`PaddingStats` counts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from extract_trt.kernels.packing import Chunk

__all__ = ["PaddingStats", "pad_batch", "plan_batches"]


@dataclass(slots=True)
class PaddingStats:
    """Real vs padded tokens over the batches run so far."""

    batches: int = 0
    rows: int = 0
    real_tokens: int = 0
    padded_tokens: int = 0  # rows × longest, summed over batches

    @property
    def waste(self) -> float:
        """Share of the computed tokens that were padding (0 = none)."""
        return 1.0 - self.real_tokens / self.padded_tokens if self.padded_tokens else 0.0

    def add(self, lengths: Sequence[int]) -> None:
        self.batches += 1
        self.rows += len(lengths)
        self.real_tokens += int(sum(lengths))
        self.padded_tokens += len(lengths) * int(max(lengths, default=0))

    def __str__(self) -> str:
        return (
            f"{self.batches} batches, {self.rows} chunks, {self.real_tokens:,} tokens, "
            f"{self.padded_tokens - self.real_tokens:,} padding ({self.waste:.1%})"
        )


def plan_batches(
    lengths: Sequence[int],
    max_batch_tokens: int,
    max_batch_size: int | None = None,
    *,
    max_padding: float | None = None,
    sort: bool = True,
) -> list[np.ndarray]:
    """Indices into ``lengths`` grouped into batches, longest chunks first (``sort=False``: input order).

    Greedy: a chunk joins the current batch while ``rows × longest`` stays within ``max_batch_tokens``,
    rows within ``max_batch_size``, and padding within ``max_padding`` of the batch's padded tokens (a
    few pages of very different lengths are then not forced together); a chunk longer than the budget
    runs alone.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable") if sort else np.arange(len(lengths))
    batches: list[np.ndarray] = []
    start, longest, real = 0, 0, 0
    for end, index in enumerate(order):
        n = int(lengths[index])
        rows, widest = end - start + 1, max(longest, n)
        padded = rows * widest
        if end > start and (
            padded > max_batch_tokens
            or (max_batch_size and rows > max_batch_size)
            or (max_padding is not None and padded - real - n > max_padding * padded)
        ):
            batches.append(order[start:end])
            start, widest, real = end, n, 0
        longest, real = widest, real + n
    if start < len(order):
        batches.append(order[start:])
    return batches


def pad_batch(chunks: Sequence[Chunk], pad_id: int, dtype: type = np.int64) -> tuple[np.ndarray, np.ndarray]:
    """Right-padded ``input_ids`` and ``attention_mask`` (1 on real tokens) for ``chunks``."""
    width = max(len(c) for c in chunks)
    input_ids = np.full((len(chunks), width), pad_id, dtype=dtype)
    attention_mask = np.zeros((len(chunks), width), dtype=dtype)
    for row, chunk in enumerate(chunks):
        input_ids[row, : len(chunk)] = chunk.ids
        attention_mask[row, : len(chunk)] = 1
    return input_ids, attention_mask
