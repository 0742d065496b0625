"""Blocks of token ids → model-sized chunks, exactly as Pulpie's ``pack_chunks`` (spec §3.2).

``budget = max_tokens − [BOS] − [EOS]``; each block costs its tokens + one ``<|sep|>``; blocks are added
greedily in order and a block that does not fit closes the chunk; a block longer than the budget on its
own is truncated to ``budget − 1`` tokens + ``<|sep|>`` and fills a chunk alone. Each chunk is
``[BOS] b0 <sep> b1 <sep> … bk <sep> [EOS]``; no context is carried from one chunk to the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Chunk", "pack_chunks"]


@dataclass(slots=True)
class Chunk:
    """One model input row: token ids and the indices (within its page) of the blocks it carries,
    in the order of their ``<|sep|>`` tokens."""

    ids: np.ndarray  # int64 [n_tokens]
    blocks: np.ndarray  # int64 [n_blocks]
    page: int = 0  # index of the owning page in a multi-page batch

    def __len__(self) -> int:
        return len(self.ids)


def pack_chunks(
    block_ids: Sequence[np.ndarray | Sequence[int]],
    max_tokens: int,
    sep_id: int,
    bos_id: int | None = None,
    eos_id: int | None = None,
    *,
    page: int = 0,
) -> list[Chunk]:
    """Pack the token ids of one page's blocks into chunks of at most ``max_tokens`` tokens."""
    budget = max_tokens - (bos_id is not None) - (eos_id is not None)
    if budget < 2:
        raise ValueError(f"max_tokens={max_tokens} leaves {budget} tokens per chunk; need at least 2")
    head = np.array([] if bos_id is None else [bos_id], dtype=np.int64)
    tail = np.array([] if eos_id is None else [eos_id], dtype=np.int64)
    sep = np.array([sep_id], dtype=np.int64)
    chunks: list[Chunk] = []
    parts: list[np.ndarray] = []
    members: list[int] = []
    used = 0

    def close() -> None:
        chunks.append(Chunk(np.concatenate([head, *parts, tail]), np.asarray(members, dtype=np.int64), page))

    for index, ids in enumerate(block_ids):
        ids = np.asarray(ids, dtype=np.int64)
        cost = len(ids) + 1
        if used + cost > budget:
            if members:
                close()
                parts, members, used = [], [], 0
            if cost > budget:  # alone and truncated; the next block starts a new chunk
                parts, members, used = [ids[: budget - 1], sep], [index], budget
                continue
        parts += [ids, sep]
        members.append(index)
        used += cost
    if members:
        close()
    return chunks
