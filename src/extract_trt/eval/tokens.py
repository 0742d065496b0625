"""Token counts per page for the analytic GPU projection (:mod:`extract_trt.eval.roofline`).

What is counted, per page (spec §2.1–§2.3, §3.2):

* **encoder (Pulpie format)**: every block string encoded on its own without special tokens, followed by one
  ``<|sep|>``; blocks packed by the runtime's packer into chunks of at most 8,192 tokens with BOS and EOS
  → the packed chunk lengths (:func:`pack_lengths`).
* **decoder (Dripper v1.1 format)**: prompt = the ``short_compact`` prompt with the whole simplified HTML,
  in the single system + user chat template → prompt tokens; output = the compact answer
  ``<answer>1main2other…</answer>`` → output tokens (:func:`answer_tokens`).

**Where the tokens come from** (:func:`measure_pages`). The real tokenizers (EuroBERT's Llama-3-style BPE,
Hunyuan's, Qwen's) live on a model hub these machines cannot reach. Pass a ``tokenizer.json`` when you have
one; otherwise a byte-level BPE (``tokenizers``; GPT-2/Llama-3-style byte-level pre-tokenisation; vocabulary up
to 32,000) is trained on the simplified HTML of half of the pages and counts the other half, and vice versa
(two-fold, so no page is counted by a tokenizer trained on it); the same tokenizer stands in for every
model. With fewer than :data:`MIN_BPE_PAGES` pages a fixed :data:`FALLBACK_CHARS_PER_TOKEN` is used instead.
The characters per token on simplified HTML are reported so the counts can be rescaled. Answer tokens are counted analytically, not with
that BPE (which was never trained on answers): one token per digit of a block id (Qwen-family tokenizers
split numbers into single digits; assumed for Hunyuan too), one token per ``main``/``other``, three per
``<answer>``/``</answer>`` tag and one end-of-sequence token. The chat template adds
:data:`CHAT_TEMPLATE_SPECIAL_TOKENS` special tokens to the encoded system/user/assistant text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from extract_trt.eval.stats import percentile
from extract_trt.kernels.packing import pack_chunks
from extract_trt.runtime.labelers.block_tokens import block_strings
from extract_trt.runtime.types import PageBlocks

__all__ = [
    "CharsPerToken",
    "PageTokens",
    "TokenStats",
    "answer_tokens",
    "count_page_tokens",
    "load_tokenizer",
    "measure_pages",
    "pack_lengths",
    "token_stats",
    "train_bpe",
]

MAX_CHUNK_TOKENS = 8192
SHORT_COMPACT_PROMPT = (
    'As an HTML expert, classify elements with "_item_id" as "main" or "other", keeping only the main content '
    "and removing nav, metadata, etc.\nGuidelines:\n"
    '"Main": Includes primary content like article text, images in the article, original posts in forums, Q&A '
    "questions, and answers.\n"
    '"Other": Includes navigation, metadata, ads, user info, and related content (e.g., sidebars, timestamps, '
    "suggested articles).\nOutput Format:\nReturn each _item_id and its corresponding category in the following "
    "format:\n{_item_id}{category}{_item_id}{category}...\n"
    'Here, {_item_id} may be 1, 2, 3..., and {category} is either "main" or "other", as shown in the example '
    'below:\n"1main2other3other4main"\nInput HTML:\n'
)
SYSTEM_PROMPT = "You are a helpful assistant."
#: role/turn markers of a system + user + generation-prompt chat template (e.g. ``<|im_start|>system\n``).
CHAT_TEMPLATE_SPECIAL_TOKENS = 8
ANSWER_TAG_TOKENS = 3  # "<answer>" and "</answer>" each
#: Below this many pages the two-fold BPE has too little text to learn a realistic vocabulary; counts then
#: use FALLBACK_CHARS_PER_TOKEN instead.
MIN_BPE_PAGES = 40
#: Simplified-HTML characters per token of the held-out two-fold BPE on 200 wcxb-dev pages (measured, see
#: BENCHMARKS.md); used when there are fewer than MIN_BPE_PAGES pages.
FALLBACK_CHARS_PER_TOKEN = 3.3


def pack_lengths(block_lengths: Sequence[int], max_tokens: int = MAX_CHUNK_TOKENS) -> list[int]:
    """Lengths (BOS and EOS included) of the chunks Pulpie's packer makes from blocks of these token counts
    (:func:`extract_trt.kernels.packing.pack_chunks`, spec §3.2)."""
    blocks = [np.zeros(n, dtype=np.int64) for n in block_lengths]
    return [len(chunk) for chunk in pack_chunks(blocks, max_tokens, sep_id=0, bos_id=0, eos_id=0)]


def answer_tokens(n_blocks: int) -> int:
    """Tokens of the compact answer ``<answer>1main2other…</answer>`` plus end of sequence (module doc)."""
    digits = sum(len(str(i)) for i in range(1, n_blocks + 1))
    return 2 * ANSWER_TAG_TOKENS + digits + n_blocks + 1


@dataclass(slots=True)
class PageTokens:
    """Token counts of one page."""

    blocks: int
    html_chars: int  # simplified HTML characters
    html_tokens: int  # simplified HTML tokens (the whole string, as in the prompt)
    chunks: list[int]  # encoder chunk lengths (packed)
    prompt: int  # decoder prompt tokens (template + prompt + simplified HTML)
    output: int  # decoder answer tokens

    @property
    def encoder_tokens(self) -> int:
        return sum(self.chunks)


def load_tokenizer(path: str):  # noqa: ANN201 - tokenizers.Tokenizer
    """A ``tokenizers`` tokenizer from a ``tokenizer.json`` file."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


def train_bpe(texts: Iterable[str], vocab_size: int = 32000):  # noqa: ANN201 - tokenizers.Tokenizer
    """A byte-level BPE trained on ``texts`` (the stand-in tokenizer of the module doc)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


class CharsPerToken:
    """A stand-in tokenizer that counts ``ceil(len(text) / chars_per_token)`` tokens (too few pages for a BPE)."""

    def __init__(self, chars_per_token: float = FALLBACK_CHARS_PER_TOKEN) -> None:
        self.chars_per_token = chars_per_token

    def count(self, texts: Sequence[str]) -> list[int]:
        return [math.ceil(len(t) / self.chars_per_token) for t in texts]


def _n_tokens(tokenizer, texts: Sequence[str]) -> list[int]:  # noqa: ANN001
    if isinstance(tokenizer, CharsPerToken):
        return tokenizer.count(texts)
    return [len(e.ids) for e in tokenizer.encode_batch(list(texts), add_special_tokens=False)] if texts else []


def count_page_tokens(page: PageBlocks, tokenizer, template_tokens: int | None = None) -> PageTokens:  # noqa: ANN001
    """Encoder chunks and decoder prompt/answer tokens of one simplified page (module doc)."""
    block_lengths = _n_tokens(tokenizer, block_strings(page))
    if template_tokens is None:
        template_tokens = _template_tokens(tokenizer)
    html_tokens = _n_tokens(tokenizer, [page.simplified_html])[0]
    return PageTokens(
        blocks=len(page.blocks),
        html_chars=len(page.simplified_html),
        html_tokens=html_tokens,
        chunks=pack_lengths(block_lengths),
        prompt=template_tokens + html_tokens,
        output=answer_tokens(len(page.blocks)),
    )


def _template_tokens(tokenizer) -> int:  # noqa: ANN001
    return CHAT_TEMPLATE_SPECIAL_TOKENS + sum(_n_tokens(tokenizer, [SYSTEM_PROMPT, SHORT_COMPACT_PROMPT]))


@dataclass(slots=True)
class TokenStats:
    """Distribution of token counts over pages (what the projection and the report need)."""

    pages: int
    chars_per_token: float  # simplified HTML characters per prompt token
    chunks_per_page: float
    chunk_mean: float
    chunk_p50: float
    chunk_p95: float
    encoder_tokens_p50: float
    prompt_mean: float
    prompt_p50: float
    output_mean: float
    blocks_mean: float


def token_stats(pages: Sequence[PageTokens]) -> TokenStats:
    """Summary statistics of :class:`PageTokens` over pages."""
    if not pages:
        raise ValueError("no pages to summarise")
    chunks = [c for p in pages for c in p.chunks]
    prompts = [p.prompt for p in pages]
    n = len(pages)
    return TokenStats(
        pages=n,
        chars_per_token=sum(p.html_chars for p in pages) / max(1, sum(p.html_tokens for p in pages)),
        chunks_per_page=len(chunks) / n,
        chunk_mean=sum(chunks) / max(1, len(chunks)),
        chunk_p50=percentile(chunks, 50) or 0.0,
        chunk_p95=percentile(chunks, 95) or 0.0,
        encoder_tokens_p50=percentile([p.encoder_tokens for p in pages], 50) or 0.0,
        prompt_mean=sum(prompts) / n,
        prompt_p50=percentile(prompts, 50) or 0.0,
        output_mean=sum(p.output for p in pages) / n,
        blocks_mean=sum(p.blocks for p in pages) / n,
    )


def measure_pages(
    pages: Sequence[PageBlocks],
    tokenizer_file: str | None = None,
    vocab_size: int = 32000,
    *,
    min_bpe_pages: int = MIN_BPE_PAGES,
) -> tuple[list[PageTokens], str]:
    """Token counts of ``pages`` and a line saying how they were obtained.

    With ``tokenizer_file`` every page is counted with it. Otherwise two-fold cross-fitting keeps every
    count held out: a BPE trained on the even-numbered pages counts the odd ones and vice versa. With fewer
    than ``min_bpe_pages`` pages, :class:`CharsPerToken` counts instead.
    """
    if tokenizer_file:
        tok = load_tokenizer(tokenizer_file)
        template = _template_tokens(tok)
        return [count_page_tokens(p, tok, template) for p in pages], f"tokenizer {tokenizer_file}"
    if len(pages) < max(2, min_bpe_pages):
        tok = CharsPerToken()
        how = (
            f"an assumed {tok.chars_per_token} characters per token of simplified HTML (the stand-in BPE's ratio on "
            f"200 wcxb-dev pages; fewer than {min_bpe_pages} pages here to train one on; --tokenizer "
            "tokenizer.json counts with the model's own)"
        )
        return [count_page_tokens(p, tok) for p in pages], how
    folds = (list(range(0, len(pages), 2)), list(range(1, len(pages), 2)))
    counts: dict[int, PageTokens] = {}
    sizes = []
    for train_idx, test_idx in (folds, folds[::-1]):
        tok = train_bpe((pages[i].simplified_html for i in train_idx), vocab_size)
        sizes.append(tok.get_vocab_size())
        template = _template_tokens(tok)
        counts.update((i, count_page_tokens(pages[i], tok, template)) for i in test_idx)
    how = (
        f"byte-level BPE (vocab {min(sizes):,}-{max(sizes):,}) trained on half of the pages, "
        "counting the other half (two-fold): a stand-in for the models' tokenizers; --tokenizer tokenizer.json "
        "counts with the model's own"
    )
    return [counts[i] for i in range(len(pages))], how
