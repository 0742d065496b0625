"""Blocks → token ids for encoder labelers (spec §3.2), with literal special-token text kept as text.

The model reads the block strings Pulpie's ``extract_blocks`` cuts from the simplified HTML: each block's
HTML, the last one followed by the shell's ``</body></html>``. Each is encoded on its own without special
tokens. Unlike the reference, a page whose text contains ``<|sep|>`` (or any other special-token string)
does not get a real ``<|sep|>`` id inside a block — that would shift every later label of the chunk —
because the tokenizer is switched to ``encode_special_tokens``: special-token strings in the input are
split like ordinary text. Blocks come from the simplifier's block list, so a literal ``_item_id="N"`` in
page text cannot split a block either (the reference's regex split would).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from extract_trt.runtime.types import PageBlocks

__all__ = ["BlockTokenizer", "block_strings"]

_SHELL_TAIL = "</body></html>"


def block_strings(page: PageBlocks) -> list[str]:
    """The per-block strings a Pulpie-format encoder reads, one per block in order: Pulpie's
    ``extract_blocks`` on the simplified HTML. Each is the block's ``html``, except that the last one ends
    with the page shell's ``</body></html>`` — feed these, not ``[b.html for b in page.blocks]``, to a model
    trained on Pulpie's blocks. The encoder labeler and the roofline's token counts use this function.
    Public as ``extract_trt.block_strings``."""
    texts = [b.html for b in page.blocks]
    if texts:
        texts[-1] += _SHELL_TAIL
    return texts


class BlockTokenizer:
    """A ``tokenizers`` tokenizer that encodes block strings, special-token strings as plain text."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        self.tokenizer.encode_special_tokens = True
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @classmethod
    def from_file(cls, path: str | Path) -> BlockTokenizer:
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_file(str(path)))

    def token_id(self, token: str) -> int | None:
        return self.tokenizer.token_to_id(token)

    def encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One int64 id array per text, no special tokens added (batched in the Rust thread pool)."""
        if not texts:
            return []
        encodings = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [np.asarray(e.ids, dtype=np.int64) for e in encodings]

    def encode_pages(self, pages: Sequence[PageBlocks]) -> list[list[np.ndarray]]:
        """Block token ids of many pages in one batched call, split back per page."""
        counts = [len(p.blocks) for p in pages]
        flat = self.encode([s for p in pages for s in block_strings(p)])
        out, start = [], 0
        for n in counts:
            out.append(flat[start : start + n])
            start += n
        return out
