"""Tiny random encoders (EuroBERT through its remote code, BERT and ModernBERT through Optimum's registry)
with a tiny byte-level BPE trained on the shared pages, each exported once per test session.

Models: hidden 32, 2 layers, 512 positions, chunks of 512 tokens (so real pages need several chunks).
Heads are calibrated on page text so that labels at ``<|sep|>`` vary from block to block.
"""

from __future__ import annotations

import atexit
import contextlib
import gzip
import json
import tempfile
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# Real pages of a few thousand tokens each (the 404 page 07 has almost no blocks), kept small for speed.
PAGE_IDS = ("pulpie/02_nodejs_dev", "pulpie/07_how2_sh", "pulpie/09_istio_io", "pulpie/10_immunologyexplained_aai_org")
MAX_TOKENS = 512
VOCAB = 4096

_ROOT = tempfile.TemporaryDirectory(prefix="extract-trt-encoder-")
atexit.register(_ROOT.cleanup)
ROOT = Path(_ROOT.name)


@contextlib.contextmanager
def one_torch_thread():
    """PyTorch on one thread: on this shared 2-core machine its spinning OpenMP pool is 20× slower."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@lru_cache(maxsize=None)
def all_pages() -> tuple:
    """(id, PageBlocks) of every pulpie page."""
    from extract_trt.runtime.html.simplify import simplify

    with gzip.open(DATA / "pulpie-pages.jsonl.gz", "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    return tuple((r["id"], simplify(r["html"])) for r in records)


def test_pages() -> list:
    """The PageBlocks of PAGE_IDS, in that order."""
    by_id = dict(all_pages())
    return [by_id[i] for i in PAGE_IDS]


@lru_cache(maxsize=None)
def tokenizer():
    from extract_trt.export.synthetic import train_tokenizer
    from extract_trt.runtime.labelers.block_tokens import block_strings

    return train_tokenizer([s for _, p in all_pages() for s in block_strings(p)], VOCAB)


@lru_cache(maxsize=None)
def checkpoint(architecture: str) -> Path:
    from extract_trt.export.synthetic import EncoderShape, write_checkpoint
    from extract_trt.runtime.labelers.block_tokens import block_strings

    texts = [s for _, p in all_pages() for s in block_strings(p)][::3]
    with one_torch_thread():
        return write_checkpoint(
            ROOT / f"ckpt-{architecture}", architecture, tokenizer(), EncoderShape(max_positions=MAX_TOKENS),
            calibration_texts=texts,
        )


@lru_cache(maxsize=None)
def exported(architecture: str, variants: tuple[str, ...] = ("fp32",), layout: str = "blocks") -> Path:
    """The model directory of ``architecture`` (exported at most once per arguments and session)."""
    from extract_trt.export.encoder import EncoderExportOptions, export_encoder

    out = ROOT / f"model-{architecture}-{'-'.join(variants)}-{layout}"
    options = EncoderExportOptions(variants=variants, trust_remote_code=True, sep_gather=layout == "blocks")
    with one_torch_thread():
        export_encoder(checkpoint(architecture), out, options)
    return out
