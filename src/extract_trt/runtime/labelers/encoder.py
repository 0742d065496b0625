"""Pulpie-format encoders (``extract-trt export onnx`` model directories) as a :class:`Labeler`.

Per page: blocks → token ids (:mod:`~extract_trt.runtime.labelers.block_tokens`) → chunks of ≤ ``max_tokens``
(:func:`~extract_trt.kernels.packing.pack_chunks`, spec §3.2). Per group of pages: all chunks sorted by
length and cut into token-budget batches (:func:`~extract_trt.kernels.batching.plan_batches`), run by an
ONNX Runtime session; each block's label is the argmax at its ``<|sep|>`` (spec §3.3), computed in the
graph (``blocks`` layout) or from returned logits (``logits`` layout). Blocks without a prediction stay
``other``, as in the reference.

:meth:`EncoderLabeler.label_iter` streams: a background thread pulls pages (so a lazy generator that
simplifies HTML runs concurrently), tokenizes and packs the next group while the session runs the
current one. :attr:`EncoderLabeler.stats` counts real and padding tokens.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from extract_trt.artifacts.manifest import ManifestError, ModelManifest, load_manifest
from extract_trt.errors import LabelerError
from extract_trt.kernels.batching import PaddingStats, pad_batch, plan_batches
from extract_trt.kernels.packing import Chunk, pack_chunks
from extract_trt.kernels.sep_gather import sep_gather
from extract_trt.runtime.labelers.block_tokens import BlockTokenizer
from extract_trt.runtime.labelers.prefetch import prefetch
from extract_trt.runtime.labelers.session import SessionConfig, SessionInfo, TensorRTOptions, create_session
from extract_trt.runtime.types import Labels, PageBlocks

__all__ = ["EncoderLabeler", "PreparedPages"]

_FEEDABLE = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(slots=True)
class PreparedPages:
    """A group of pages after tokenizing and packing: their chunks (``Chunk.page`` indexes the group)."""

    n_blocks: list[int]
    chunks: list[Chunk]


class EncoderLabeler:
    """Label blocks with an exported encoder.

    Args:
        model_dir: a directory written by ``extract-trt export onnx`` (``extract-trt.json`` inside).
        variant: ``fp32``, ``fp16`` or ``int8`` — one of the manifest's variants.
        session: execution providers, threads, TensorRT options (default: TensorRT → CUDA → CPU, the
            available ones). A TensorRT profile for the packed shapes is filled in when none is given.
        max_batch_tokens: padded tokens per batch (rows × longest chunk).
        max_batch_size: rows per batch at most.
        max_padding: a chunk does not join a batch that would then be more than this share padding
            (``None``: no limit; padded tokens cost compute on every device).
        group_pages: pages whose chunks are sorted and batched together (more: less padding, later
            first result).
    """

    def __init__(
        self,
        model_dir: str | Path,
        *,
        variant: str = "fp32",
        session: SessionConfig | None = None,
        max_batch_tokens: int = 16384,
        max_batch_size: int = 64,
        max_padding: float | None = 0.1,
        group_pages: int = 32,
    ) -> None:
        self.model_dir = Path(model_dir)
        self._arguments = dict(
            variant=variant, session=session, max_batch_tokens=max_batch_tokens, max_batch_size=max_batch_size,
            max_padding=max_padding, group_pages=group_pages,
        )
        self.manifest: ModelManifest = load_manifest(self.model_dir)
        manifest = self.manifest
        if manifest.task != "token-classification":
            raise ManifestError(f"{self.model_dir} holds a {manifest.task} model, not an encoder token classifier")
        self.tokenizer = BlockTokenizer.from_file(self.model_dir / manifest.tokenizer_file)
        if self.tokenizer.token_id(manifest.sep_token) != manifest.sep_token_id:
            raise ManifestError(
                f"tokenizer maps {manifest.sep_token} to {self.tokenizer.token_id(manifest.sep_token)}, "
                f"manifest says {manifest.sep_token_id}"
            )
        unfeedable = [t.name for t in manifest.inputs if t.name not in _FEEDABLE]
        if unfeedable:
            raise ManifestError(f"graph inputs {unfeedable} cannot be fed (supported: {', '.join(_FEEDABLE)})")
        self.max_batch_tokens = max(1, max_batch_tokens)
        self.max_batch_size = max(1, max_batch_size)
        self.max_padding = max_padding
        self.group_pages = max(1, group_pages)
        config = session or SessionConfig()
        if config.tensorrt.profile_max is None:
            profile = TensorRTOptions.for_packed_inputs(
                [t.name for t in manifest.inputs], max_tokens=manifest.max_tokens, max_batch=self.max_batch_size
            )
            trt = dataclasses.replace(
                config.tensorrt,
                profile_min=profile.profile_min,
                profile_opt=profile.profile_opt,
                profile_max=profile.profile_max,
            )
            config = dataclasses.replace(config, tensorrt=trt)
        self.session_info: SessionInfo = self._open_session(variant, config)
        self._session = self.session_info.session
        self._dtypes = {t.name: np.dtype(t.dtype) for t in manifest.inputs}
        self.variant = variant
        self.name = f"encoder-{manifest.architecture}" + ("" if variant == "fp32" else f"-{variant}")
        self.stats = PaddingStats()

    def _open_session(self, variant: str, config: SessionConfig) -> SessionInfo:
        """The model runner (an ONNX Runtime session; TensorRT engine labelers return an engine runner)."""
        return create_session(self.model_dir / self.manifest.variant(variant).file, config)

    def __reduce__(self):
        """Pickled as its arguments (sessions cannot be pickled): a worker process rebuilds it."""
        return (_rebuild, (self.model_dir, self._arguments))

    @property
    def providers(self) -> list[str]:
        """Execution providers the session really uses (checked at creation)."""
        return self.session_info.providers

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        return list(self.label_iter(pages))

    def label_iter(self, pages: Iterable[PageBlocks], prefetch_groups: int = 2) -> Iterator[Labels]:
        """Labels for a stream of pages, in order, preparing the next groups on a background thread."""
        groups = (self.prepare(list(g)) for g in _batched(pages, self.group_pages))
        for prepared in prefetch(groups, depth=prefetch_groups):
            yield from self.infer(prepared)

    def prepare(self, pages: Sequence[PageBlocks]) -> PreparedPages:
        """CPU stage: tokenize every block of ``pages`` and pack each page into chunks."""
        m = self.manifest
        chunks: list[Chunk] = []
        for index, block_ids in enumerate(self.tokenizer.encode_pages(pages)):
            chunks += pack_chunks(block_ids, m.max_tokens, m.sep_token_id, m.bos_token_id, m.eos_token_id, page=index)
        return PreparedPages(n_blocks=[len(p.blocks) for p in pages], chunks=chunks)

    def infer(self, prepared: PreparedPages) -> list[Labels]:
        """Model stage: run the chunks in token-budget batches; one Labels per page."""
        main_id = self.manifest.main_label_id
        labels = [np.full(n, -1, dtype=np.int64) for n in prepared.n_blocks]
        probs = [np.zeros(n, dtype=np.float32) for n in prepared.n_blocks]
        chunks = prepared.chunks
        lengths = [len(c) for c in chunks]
        for batch in plan_batches(lengths, self.max_batch_tokens, self.max_batch_size, max_padding=self.max_padding):
            rows = [chunks[i] for i in batch]
            block_label, block_prob = self._run(rows)
            offset = 0
            for chunk in rows:
                n = len(chunk.blocks)
                labels[chunk.page][chunk.blocks] = block_label[offset : offset + n]
                probs[chunk.page][chunk.blocks] = block_prob[offset : offset + n]
                offset += n
        return [Labels(main=lab == main_id, labeler=self.name, probability=p) for lab, p in zip(labels, probs)]

    def _run(self, rows: list[Chunk]) -> tuple[np.ndarray, np.ndarray]:
        m = self.manifest
        input_ids, attention_mask = pad_batch(rows, m.pad_token_id)
        self.stats.add([len(c) for c in rows])
        available = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": np.zeros_like(input_ids)}
        feeds = {name: available[name].astype(dtype, copy=False) for name, dtype in self._dtypes.items()}
        if m.output_layout == "blocks":
            block_label, block_prob = self._session.run(["block_label", "block_main_prob"], feeds)
        else:
            (logits,) = self._session.run([m.outputs[0].name], feeds)
            gathered = sep_gather(input_ids, logits, m.sep_token_id, m.main_label_id)
            block_label, block_prob = gathered.label, gathered.main_prob
        expected = sum(len(c.blocks) for c in rows)
        if len(block_label) != expected:
            raise LabelerError(f"{self.name}: model returned {len(block_label)} block rows for {expected} blocks")
        return block_label, block_prob.astype(np.float32, copy=False)


def _rebuild(model_dir: Path, arguments: dict) -> EncoderLabeler:
    return EncoderLabeler(model_dir, **arguments)


def _batched(items: Iterable, size: int) -> Iterator[tuple]:
    iterator = iter(items)
    while batch := tuple(itertools.islice(iterator, size)):
        yield batch
