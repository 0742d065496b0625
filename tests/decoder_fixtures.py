"""Tiny random Qwen3 checkpoints with a tiny byte-level BPE tokenizer (Qwen's pre-tokenizer and special
tokens, a ChatML template), exported once per test session with the real exporter.

Weights are random with a large init scale, so the model's main/other choices vary from block to block
(a model that always answers the same would make decoder comparisons vacuous).
"""

from __future__ import annotations

import atexit
import gzip
import json
import tempfile
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
QWEN_SPLIT = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}"
)

_ROOT = tempfile.TemporaryDirectory(prefix="extract-trt-decoder-")
atexit.register(_ROOT.cleanup)


def pulpie_pages() -> list[dict]:
    with gzip.open(DATA / "pulpie-pages.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@lru_cache(maxsize=None)
def tokenizer_dir() -> Path:
    """A 2000-token byte-level BPE trained on the shared pages' simplified HTML and the prompts."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from extract_trt.runtime.html.simplify import simplify
    from extract_trt.runtime.labelers.prompts import PROMPTS

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    texts = [simplify(p["html"]).simplified_html[:20000] for p in pulpie_pages()] + list(PROMPTS.values())
    trainer = trainers.BpeTrainer(
        vocab_size=2000, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    tok.add_tokens(["<think>", "</think>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHATML
    out = Path(_ROOT.name) / "tokenizer"
    fast.save_pretrained(out)
    return out


@lru_cache(maxsize=None)
def checkpoint(seed: int, layers: int = 2, hidden: int = 64) -> Path:
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir())
    torch.manual_seed(seed)
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=hidden // 4,
        max_position_embeddings=8192,
        initializer_range=0.3,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen3ForCausalLM(config).eval()
    out = Path(_ROOT.name) / f"ckpt-{seed}-{layers}-{hidden}"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@lru_cache(maxsize=None)
def exported(seed: int, profile: str, max_context: int = 6144) -> Path:
    """An exported model directory (fp32, with extract-trt.json) for a random checkpoint."""
    from extract_trt.export.decoder import DecoderExportOptions, export_decoder

    out = Path(_ROOT.name) / f"onnx-{seed}-{profile}-{max_context}"
    export_decoder(checkpoint(seed), out, DecoderExportOptions(profile=profile, max_context=max_context), report=lambda _: None)
    return out
