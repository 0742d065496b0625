"""Block features for the built-in block model: hashed text and markup n-grams plus layout numbers.

One call per page, vectorised over all of its blocks (NumPy over the page's code points, no Python loop
per character; in the compiled build the three per-character passes — word hashes, character trigrams,
character counts — run as C loops instead, ``feature_hash.pyx``, which give the same arrays):

* **bags** — hashed ids of three fields per block, looked up in one embedding table by the model:
  ``WORDS`` (lower-cased runs of letters and digits, which any script's punctuation ends, and their bigrams;
  every CJK/kana/hangul character is a word of its own, so scripts without spaces still get words and
  character bigrams), ``CHARS`` (character
  trigrams of the block's first ``MAX_TRIGRAM_TEXT`` characters: morphology, numbers, scripts — capped
  because a long paragraph's trigrams add little that its words do not, and were most of a page's ids),
  ``MARKUP`` (the block's tag, the tags of its path, its own and its nearest ancestors' ``class``/``id``
  tokens split on non-alphanumerics and camelCase, each kind hashed apart so ``nav`` in a class differs
  from a ``<nav>`` ancestor). The model sums each bag's embeddings into one row: block ``b``'s text field
  ``f`` is row ``b * TEXT_FIELDS + f``. A page's blocks share few markup strings (half of all ids were
  markup, repeated block after block), so each distinct string of each markup kind (own names, ancestors'
  names, path) is hashed and summed once: they are rows ``TEXT_FIELDS * n_blocks + k`` (``k <
  MARKUP_KINDS * n_blocks``), and ``markup[b]`` holds the three ``k`` of block ``b``, whose sums the model
  adds into the block's markup bag (each bag scaled by :meth:`BlockFeatures.norms`). ``bags[i]`` is the row
  of ``ids[i]``. An id is a ``HASH_BITS``-bit hash; the model's table row for it is its low bits
  (``id & (BUCKETS - 1)``).
* **vocabulary** — a model knows only the ids it saw on pages of several training sites
  (:class:`Vocabulary`); every other id becomes its field's *unknown* id (``UNKNOWN + field``, the markup
  kinds together as field ``TEXT_FIELDS``: :meth:`BlockFeatures.in_vocabulary`). Most distinct ids (three
  in four: one site's class names, rare words and bigrams) occur on one site only; trained on, their table
  rows learn that site's labels, and at run time any unseen string hashed onto such a row brings them
  along. As unknown ids they teach the model what a rare word or an unseen class name means instead, and a
  page in a language the model never saw reads as text of unknown words, not as noise (the bags keep
  their sizes).
* **dense** — ``N_DENSE`` layout numbers per block (lengths, link density, punctuation, digits, upper
  case, depth, position on the page, tag kind, content type, repeated structure, the text share and link
  density of the block's nearest containers, …), scaled to roughly unit range.

The hash is a fixed polynomial over code points (not Python's salted ``hash``), so features are the same
in every process and on every machine, which the shipped model depends on.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from extract_trt.runtime.html.dom import (
    CLAUSE_MARKS, LETTERS_PER_UNSPACED_WORD, NON_ASCII_DIGITS, SENTENCE_END, UNSPACED_LETTER_RANGES,
)  # fmt: skip
from extract_trt.runtime.html.simplify import CONTAINER_LEVELS
from extract_trt.runtime.types import PageBlocks

try:
    import cython
except ImportError:  # no Cython: the interpreted package
    from extract_trt.runtime import _cython_shim as cython

__all__ = [
    "BUCKETS", "HASH_BITS", "MARKUP_KINDS", "N_DENSE", "N_FIELDS", "TEXT_FIELDS", "UNKNOWN", "BlockFeatures",
    "Vocabulary", "page_features", "windows",
]  # fmt: skip

BUCKETS = 1 << 15  # rows of the hashed embedding table (a power of two: an id's row is its low bits)
HASH_BITS = 24  # ids are hashes in [0, 2**HASH_BITS): fine enough that a vocabulary tells strings apart
VOCABULARY_BYTES = (1 << HASH_BITS) // 8
UNKNOWN = 1 << HASH_BITS  # UNKNOWN + field: the id of a WORDS, CHARS or markup (TEXT_FIELDS) id outside a vocabulary
WORDS, CHARS, MARKUP = 0, 1, 2
TEXT_FIELDS = 2  # WORDS and CHARS: one bag per block (MARKUP: summed from the page's distinct strings)
MARKUP_KINDS = 3  # own tag/class/id names, ancestors' names, path tags: the parts of a block's MARKUP bag
N_FIELDS = 3
MAX_TEXT = 1500  # characters of a block's text that are hashed (the simplifier truncates most at 500)
MAX_MARKUP = 300  # characters of a block's own class/id strings that are hashed
MAX_TRIGRAM_TEXT = 64  # leading characters of a block's text whose trigrams are hashed (most of a page's ids otherwise)
MAX_ANCESTORS = 120  # characters of the ancestors' class/id names (nearest first) that are hashed
MAX_PATH = 60  # trailing characters of the tag path that are hashed (the nearest ancestors' tags)
_SEP = "\n"  # joins blocks; never a word character, so no n-gram crosses blocks

_TAGS = ("p", "div", "li", "td", "th", "span", "a", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "code",
         "blockquote", "table", "img", "dd", "dt", "figcaption", "section", "article", "form", "button",
         "label", "time", "address")  # fmt: skip
_TAG_INDEX = {t: i for i, t in enumerate(_TAGS)}
_CONTENT_TYPES = ("block_element", "unwrapped_text", "inline_elements", "mixed")
_CONTENT_INDEX = {t: i for i, t in enumerate(_CONTENT_TYPES)}
_PATH_FLAGS = ("article", "main", "header", "footer", "nav", "aside", "form", "table", "ul", "ol", "li",
               "section", "blockquote")  # fmt: skip
N_REPEATS = 3  # repeated-structure numbers, see _dense
N_CONTAINERS = 2 * CONTAINER_LEVELS  # per ancestor level: its share of the page's text, its link density
N_DENSE = 20 + len(_TAGS) + 1 + len(_CONTENT_TYPES) + len(_PATH_FLAGS) + N_REPEATS + N_CONTAINERS

_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads the polynomial hash over all bits
_POLY = np.uint64(1000003)
with np.errstate(over="ignore"):
    _POWERS = np.cumprod(np.concatenate([[np.uint64(1)], np.full(31, _POLY, dtype=np.uint64)]))  # _POLY**k mod 2**64
# salts: text words, text bigrams, char trigrams, own names (+1: bigrams), ancestor
# names (+1), path tags (+1)
_SALT = np.array([0x1F3D5B79, 0x2C4E6A8F, 0x3A5C7E91, 0x4B6D8FA3, 0x5C7E91B5, 0x6D8FA3C7, 0x7E91B5D9,
                  0x8FA3C7EB, 0x91B5D9FD], dtype=np.uint64)  # fmt: skip
_CHAR_MUL = np.array([0x100000001B3, 0x1000193, 0x5BD1E995], dtype=np.uint64)


@dataclass(slots=True)
class BlockFeatures:
    """Model inputs of one page: ``ids``/``bags`` int64 ``[T]``, ``dense`` float32 ``[n_blocks, N_DENSE]``,
    ``markup`` int64 ``[n_blocks, MARKUP_KINDS]`` (the bag layout is in the module docstring)."""

    ids: np.ndarray
    bags: np.ndarray
    dense: np.ndarray
    markup: np.ndarray

    @property
    def n_blocks(self) -> int:
        return len(self.dense)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(ids, bags, dense, markup, norms)``: the model's inputs in order."""
        return self.ids, self.bags, self.dense, self.markup, self.norms()

    def norms(self) -> np.ndarray:
        """The pooling scale of each block's bags, ``1 / sqrt(ids in the bag)`` (at least one), float32
        ``[n_blocks, TEXT_FIELDS + 1]``: its text fields, then its markup bag (the ids of its three markup
        strings together). Counted here from ``bags``, after any window or dropped ids, because in the
        graph it was a second scatter over every id, as costly as the embedding sums themselves."""
        n = self.n_blocks
        text_rows = TEXT_FIELDS * n
        counts = np.bincount(self.bags, minlength=text_rows + MARKUP_KINDS * n)
        per_bag = np.empty((n, TEXT_FIELDS + 1), dtype=np.int64)
        per_bag[:, :TEXT_FIELDS] = counts[:text_rows].reshape(n, TEXT_FIELDS)
        per_bag[:, TEXT_FIELDS] = counts[text_rows + self.markup].sum(1)
        return (1.0 / np.sqrt(np.maximum(per_bag, 1))).astype(np.float32)

    def bag_sums(self, table: np.ndarray) -> np.ndarray:
        """The embedding sum of every bag, float32 ``[(TEXT_FIELDS + MARKUP_KINDS) * n_blocks, table
        width]``: row ``bags[i]`` adds ``table[ids[i] & (len(table) - 1)]`` (text bags, then the distinct
        markup strings; rows of markup strings a page does not have stay zero). The model's first step, done
        here in one C pass because ONNX Runtime's Gather + ScatterND took a quarter of its time, most of it
        waiting on the table's rows."""
        rows = (TEXT_FIELDS + MARKUP_KINDS) * self.n_blocks
        if _C is not None:
            return _C.bag_sums(table, self.ids, self.bags, rows)
        if not len(table) or len(table) & (len(table) - 1) or (len(self.ids) and self.ids.min() < 0):
            raise IndexError(f"a negative id, or a table of {len(table)} rows (not a power of two)")
        sums = np.zeros((rows, table.shape[1]), dtype=np.float32)
        np.add.at(sums, self.bags, table[self.ids & (len(table) - 1)])
        return sums

    def text_ids_per_block(self, field: int) -> np.ndarray:
        """How many ids each block has in the text field ``field`` (``WORDS`` or ``CHARS``)."""
        rows = TEXT_FIELDS * self.n_blocks
        counts = np.bincount(self.bags[self.bags < rows], minlength=rows)
        return counts.reshape(self.n_blocks, TEXT_FIELDS)[:, field]

    def keep_ids(self, keep: np.ndarray) -> BlockFeatures:
        """The same page with only the ids where ``keep`` is true."""
        return BlockFeatures(ids=self.ids[keep], bags=self.bags[keep], dense=self.dense, markup=self.markup)

    def in_vocabulary(self, vocabulary: Vocabulary) -> BlockFeatures:
        """The same page with each id outside ``vocabulary`` replaced by its field's unknown id (see the
        module docstring); the ids must be hashes, as :func:`page_features` gives them."""
        text_rows = TEXT_FIELDS * self.n_blocks
        if _C is not None:
            ids = _C.vocabulary_ids(vocabulary.bits, self.ids, self.bags, text_rows, TEXT_FIELDS, UNKNOWN)
        else:
            field = np.where(self.bags < text_rows, self.bags % TEXT_FIELDS, TEXT_FIELDS)
            ids = np.where(vocabulary.contains(self.ids), self.ids, UNKNOWN + field)
        return BlockFeatures(ids=ids, bags=self.bags, dense=self.dense, markup=self.markup)

    def window(self, start: int, stop: int) -> BlockFeatures:
        """The features of blocks ``start..stop-1`` as a page of their own."""
        n = self.n_blocks
        if start == 0 and stop >= n:
            return self
        size = stop - start
        used, markup = np.unique(self.markup[start:stop], return_inverse=True)
        row = np.full((TEXT_FIELDS + MARKUP_KINDS) * n, -1, dtype=np.int64)  # row in the window, -1: not in it
        row[TEXT_FIELDS * start : TEXT_FIELDS * stop] = np.arange(TEXT_FIELDS * size)
        row[TEXT_FIELDS * n + used] = TEXT_FIELDS * size + np.arange(len(used))
        bags = row[self.bags]
        keep = bags >= 0
        return BlockFeatures(
            ids=self.ids[keep], bags=bags[keep], dense=self.dense[start:stop],
            markup=markup.reshape(size, MARKUP_KINDS).astype(np.int64),
        )  # fmt: skip


class Vocabulary:
    """A set of hashed ids, as a bitmap over ``[0, 2**HASH_BITS)`` (2 MB; ``bits``: uint8, little-endian
    bit order, the layout of ``np.packbits(..., bitorder="little")``)."""

    __slots__ = ("bits",)

    def __init__(self, bits: np.ndarray) -> None:
        if bits.dtype != np.uint8 or bits.shape != (VOCABULARY_BYTES,):
            raise ValueError(f"a vocabulary is {VOCABULARY_BYTES} uint8 bytes, got {bits.dtype} {bits.shape}")
        self.bits = bits

    @classmethod
    def of(cls, ids: np.ndarray) -> Vocabulary:
        """The vocabulary of exactly ``ids`` (hashed ids, any order, repeats allowed)."""
        member = np.zeros(1 << HASH_BITS, dtype=bool)
        member[ids] = True
        return cls(np.packbits(member, bitorder="little"))

    def contains(self, ids: np.ndarray) -> np.ndarray:
        """Per id, whether it is in the vocabulary (bool)."""
        return ((self.bits[ids >> 3] >> (ids & 7).astype(np.uint8)) & 1).astype(bool)

    def __len__(self) -> int:
        return int(np.unpackbits(self.bits).sum())


def windows(n_blocks: int, size: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """Cover ``n_blocks`` with windows of at most ``size`` overlapping by ``overlap``.

    Returns ``(start, stop, keep_from, keep_to)``: the window, and the blocks whose prediction is taken
    from it — each block from the window where it sits furthest from an edge it shares with a neighbour.
    """
    if n_blocks <= size:
        return [(0, n_blocks, 0, n_blocks)]
    step = size - overlap
    starts = list(range(0, n_blocks - size, step)) + [n_blocks - size]
    out = []
    for i, start in enumerate(starts):
        keep_from = 0 if i == 0 else (start + starts[i - 1] + size) // 2
        keep_to = n_blocks if i == len(starts) - 1 else (starts[i + 1] + start + size) // 2
        out.append((start, start + size, keep_from, keep_to))
    return out


def page_features(page: PageBlocks) -> BlockFeatures:
    """Features of every block of ``page`` (block order)."""
    blocks = page.blocks
    n = len(blocks)
    texts = [b.text[:MAX_TEXT].lower() for b in blocks]
    joined = _codepoints(texts)
    word_ids, word_owner, n_words = _word_hashes(joined)
    char_ids, char_owner = _char_trigrams(texts, joined, MAX_TRIGRAM_TEXT)
    # markup: the block's own tag/class/id tokens, its ancestors' names and its path's tags, each kind
    # hashed apart, each distinct string once
    kinds = (
        (3, [f"{b.tag} {b.classes} {b.element_id}"[:MAX_MARKUP].lower() for b in blocks]),
        (5, [b.ancestor_names[:MAX_ANCESTORS].lower() for b in blocks]),
        (7, [b.tag_path[-MAX_PATH:] for b in blocks]),
    )
    markup = np.zeros((n, MARKUP_KINDS), dtype=np.int64)
    markup_ids, markup_rows = [], []
    offset = 0
    for kind, (salt, strings) in enumerate(kinds):
        which, distinct = _distinct(strings)
        kind_ids, owner, _ = _word_hashes(_codepoints(distinct), salt)
        markup[:, kind] = which + offset
        markup_ids.append(kind_ids)
        markup_rows.append(owner + (TEXT_FIELDS * n + offset))
        offset += len(distinct)
    ids = np.concatenate([word_ids, char_ids, *markup_ids])
    bags = np.concatenate([word_owner * TEXT_FIELDS + WORDS, char_owner * TEXT_FIELDS + CHARS, *markup_rows])
    dense = _dense(page, texts, n_words)
    return BlockFeatures(ids=ids.astype(np.int64), bags=bags.astype(np.int64), dense=dense, markup=markup)


# The decimal digits of every script read as ASCII digits ("٢٠٢٤", "۲۰۲۴", "２０２４" → "2024"), and full-width Latin
# letters (CJK text's "ｉＰｈｏｎｅ") as ASCII ones, as case is folded: a number or a name is the same word, and a date
# or a price the same share of digits, whichever characters write it.
_ALNUM_FOLD = np.arange(0x10000, dtype=np.uint32)
_ALNUM_FOLD[list(NON_ASCII_DIGITS)] = list(NON_ASCII_DIGITS.values())
_ALNUM_FOLD[0xFF21:0xFF3B] = np.arange(ord("A"), ord("Z") + 1)
_ALNUM_FOLD[0xFF41:0xFF5B] = np.arange(ord("a"), ord("z") + 1)
_FOLDED_BMP = (_ALNUM_FOLD != np.arange(0x10000)).view(np.uint8)


def _codepoints(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points (uint32) of the texts joined with ``_SEP``, digits and full-width letters folded to ASCII
    (``_ALNUM_FOLD``), and each text's length in code points."""
    joined = _SEP.join(texts)
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    if not joined.isascii() and _has_folded(cps):  # most pages have none: one look, no copy
        cps = np.where(cps <= 0xFFFF, _ALNUM_FOLD[np.minimum(cps, 0xFFFF)], cps)
    return cps, np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))


def _has_folded(cps: np.ndarray) -> bool:
    if _C is not None:
        return _C.any_marked(cps, _FOLDED_BMP)
    return bool(_FOLDED_BMP[np.minimum(cps, 0xFFFF)][cps <= 0xFFFF].any())


def _owners(lengths: np.ndarray, size: int) -> np.ndarray:
    """Per code point of :func:`_codepoints`, the index of its text (-1 on separators)."""
    owner = np.repeat(np.arange(len(lengths)), lengths + 1)[:size]
    ends = np.cumsum(lengths + 1) - 1  # positions of the separators
    owner[ends[ends < size]] = -1
    return owner


def _classify(cps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(word character, stand-alone character) masks of BMP code points: ASCII alnum/_ and the characters
    from U+00C0 up that are not punctuation (the symbol and punctuation blocks, and whatever else Unicode
    calls punctuation or a separator: the danda, Arabic commas, the Urdu full stop are not parts of words);
    CJK alone."""
    ascii_word = ((cps >= 48) & (cps <= 57)) | ((cps >= 97) & (cps <= 122)) | ((cps >= 65) & (cps <= 90)) | (cps == 95)
    high = cps >= 0xC0
    punct = (
        ((cps >= 0x2000) & (cps <= 0x2BFF)) | ((cps >= 0x3000) & (cps <= 0x303F)) | ((cps >= 0xFE30) & (cps <= 0xFE4F))
        | ((cps >= 0xFF00) & (cps <= 0xFF0F)) | ((cps >= 0xFF1A) & (cps <= 0xFF20)) | ((cps >= 0xFF3B) & (cps <= 0xFF40))
        | ((cps >= 0xFF5B) & (cps <= 0xFF65)) | (cps == 0xD7) | (cps == 0xF7) | (cps >= 0x1F000)
        | ((cps <= 0xFFFF) & np.array([unicodedata.category(chr(c))[0] in "PZ" for c in cps.tolist()], bool))
    )  # fmt: skip
    alone = (
        ((cps >= 0x3040) & (cps <= 0x30FF)) | ((cps >= 0x3400) & (cps <= 0x4DBF)) | ((cps >= 0x4E00) & (cps <= 0x9FFF))
        | ((cps >= 0xAC00) & (cps <= 0xD7AF)) | ((cps >= 0xF900) & (cps <= 0xFAFF))
    )  # fmt: skip
    return ascii_word | (high & ~punct), alone


# the classes of the Basic Multilingual Plane as a lookup table (one gather instead of ~30 comparisons);
# above it, 0x10000..0x1EFFF are letters and 0x1F000.. (emoji, symbols) are not
_WORD_BMP, _ALONE_BMP = _classify(np.arange(0x10000, dtype=np.uint64))
_WORD_BMP_U8, _ALONE_BMP_U8 = _WORD_BMP.view(np.uint8), _ALONE_BMP.view(np.uint8)  # for the C loops
_SPACE_BMP = np.array([chr(c).isspace() for c in range(0x10000)], dtype=np.uint8)  # what str.split() splits on


def _word_mask(cps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_classify` by table lookup."""
    bmp = np.minimum(cps, 0xFFFF).astype(np.intp)
    word = _WORD_BMP[bmp]
    astral = cps > 0xFFFF
    if astral.any():
        word[astral] = cps[astral] < 0x1F000
    return word, _ALONE_BMP[bmp]


def _finish(h: np.ndarray, salt: int) -> np.ndarray:
    """Mix a raw uint64 hash with a field salt and keep its top ``HASH_BITS`` bits: the id."""
    with np.errstate(over="ignore"):
        mixed = (h ^ _SALT[salt]) * _MIX
    return mixed >> np.uint64(64 - HASH_BITS)


def _word_hashes(joined: tuple[np.ndarray, np.ndarray], salt: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hashed words and word bigrams of each text: (ids, owning text, words per text). ``joined`` is
    ``_codepoints(texts)``."""
    cps, lengths = joined
    n = len(lengths)
    if _C is not None:
        raw, tok_owner = _C.word_tokens(cps, lengths, _WORD_BMP_U8, _ALONE_BMP_U8, _POWERS)
    else:
        raw, tok_owner = _word_tokens(cps, lengths)
    with np.errstate(over="ignore"):
        same = tok_owner[1:] == tok_owner[:-1]
        bigram = raw[:-1][same] * _CHAR_MUL[0] + raw[1:][same]
    ids = np.concatenate([_finish(raw, salt), _finish(bigram, salt + 1)])
    owners = np.concatenate([tok_owner, tok_owner[1:][same]])
    return ids, owners, np.bincount(tok_owner, minlength=n).astype(np.int64)


def _word_tokens(cps32: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(raw polynomial hash of each word token, index of its text), NumPy version of
    ``feature_hash.word_tokens``: a token is a run of word characters; a stand-alone character (CJK) is a
    token of its own."""
    cps = cps32.astype(np.uint64)
    owner = _owners(lengths, len(cps))
    word, alone = _word_mask(cps)
    word &= owner >= 0
    prev_word = np.concatenate([[False], word[:-1]])
    prev_alone = np.concatenate([[False], alone[:-1]])
    start = word & (~prev_word | alone | prev_alone)
    if not start.any():
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    token = np.cumsum(start) - 1  # token index of each character (valid where word)
    pos_in_token = np.arange(len(cps)) - np.flatnonzero(start)[token]
    idx = np.flatnonzero(word)
    powers = _POWERS[np.minimum(pos_in_token[idx], len(_POWERS) - 1)]
    with np.errstate(over="ignore"):
        # a token's characters are contiguous in ``idx``: one segment sum per token (mod 2**64)
        first = np.flatnonzero(pos_in_token[idx] == 0)
        raw = np.add.reduceat(cps[idx] * powers, first)
    return raw, owner[np.flatnonzero(start)].astype(np.int64)


def _distinct(keys: Iterable[Hashable]) -> tuple[np.ndarray, list]:
    """(index of each key among the distinct keys, the distinct keys in first-seen order)."""
    seen: dict = {}
    index = np.array([seen.setdefault(k, len(seen)) for k in keys], dtype=np.int64)
    return index, list(seen)


def _char_trigrams(
    texts: list[str], joined: tuple[np.ndarray, np.ndarray], max_chars: int
) -> tuple[np.ndarray, np.ndarray]:
    """Hashed character trigrams of the first ``max_chars`` characters of each text (whitespace runs
    count as one space): (ids, owning text). ``joined`` is ``_codepoints(texts)``."""
    if _C is not None:
        raw, owner = _C.char_trigrams(*joined, _SPACE_BMP, max_chars, _CHAR_MUL)
    else:
        raw, owner = _trigrams(*_codepoints([" ".join(t.split())[:max_chars] for t in texts]))
    return _finish(raw, 2), owner


def _trigrams(cps32: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(raw hash of each trigram inside a text, index of its text), NumPy version of
    ``feature_hash.char_trigrams``."""
    if len(cps32) < 3:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    cps = cps32.astype(np.uint64)
    owner = _owners(lengths, len(cps))
    valid = (owner[:-2] >= 0) & (owner[:-2] == owner[2:]) & (owner[1:-1] >= 0)
    with np.errstate(over="ignore"):
        raw = cps[:-2] * _CHAR_MUL[0] + cps[1:-1] * _CHAR_MUL[1] + cps[2:] * _CHAR_MUL[2]
    return raw[valid], owner[:-2][valid].astype(np.int64)


def _dense(page: PageBlocks, lowered: list[str], n_words: np.ndarray) -> np.ndarray:
    """Layout numbers; ``lowered`` are the blocks' lower-cased (capped) texts."""
    blocks = page.blocks
    n = len(blocks)
    out = np.zeros((n, N_DENSE), dtype=np.float32)
    if not n:
        return out
    counts = _char_counts([b.text[:MAX_TEXT] for b in blocks])  # punct, end, digit, upper, unspaced letters
    # a Thai paragraph is a few space-separated runs of letters: its words are estimated from its letters
    words = np.maximum(n_words.astype(np.float32), counts[:, 4] / LETTERS_PER_UNSPACED_WORD)
    table = _block_columns(blocks, lowered, words, counts, out)
    chars, links, html_len, depth = table[:, 0], table[:, 1], table[:, 2], table[:, 3]
    total_chars = float(chars.sum()) or 1.0
    log_chars = np.log1p(chars)
    out[:, 0] = log_chars / 6
    out[:, 1] = np.log1p(words) / 5
    out[:, 3] = np.log1p(links) / 6
    out[:, 9] = np.log1p(html_len / np.maximum(chars, 1.0)) / 3
    out[:, 11] = (depth - depth.mean()) / 10
    out[:, 13] = (np.cumsum(chars) - chars / 2) / total_chars
    out[:, 14] = np.log1p(n) / 7
    out[:, 15] = log_chars / 6 - float(log_chars.mean()) / 6
    col = 20 + len(_TAGS) + 1 + len(_CONTENT_TYPES)
    path, paths = _distinct(b.tag_path for b in blocks)  # a page's blocks share few paths: flags once each
    flags = np.array([[f">{flag}>" in f">{p}>" for flag in _PATH_FLAGS] for p in paths], dtype=np.float32)
    out[:, col : col + len(_PATH_FLAGS)] = flags[path]
    col += len(_PATH_FLAGS)
    # repeated structure: how many blocks share this block's path and classes and how much of the page's
    # text they hold (the items of a listing are alike, so are menu entries), and how often this exact
    # text recurs on the page (boilerplate)
    shape, _ = _distinct((b.tag_path, b.classes) for b in blocks)
    text, _ = _distinct(lowered)
    out[:, col] = np.log1p(np.bincount(shape)[shape] - 1) / 4
    out[:, col + 1] = np.bincount(shape, weights=chars)[shape] / total_chars
    out[:, col + 2] = np.log1p(np.bincount(text)[text] - 1) / 3
    col += N_REPEATS
    out[:, col : col + N_CONTAINERS] = _container_numbers(blocks, chars, links, total_chars)
    return out


_NO_CONTAINERS = [(-1,) * (CONTAINER_LEVELS - k) for k in range(CONTAINER_LEVELS + 1)]  # pads Block.containers


def _container_numbers(blocks: list, chars: np.ndarray, links: np.ndarray, total_chars: float) -> np.ndarray:
    """Per block and per level of its nearest ancestors (parent first): the share of the page's text in
    the blocks under that ancestor, then their link density — the dense-text region of a page, which the
    blocks' own numbers do not show. ``[n, N_CONTAINERS]``; a missing level counts as the whole page."""
    levels = np.array([b.containers + _NO_CONTAINERS[len(b.containers)] for b in blocks], dtype=np.int64)
    index = levels + 1  # the simplifier numbers ancestors from 0; 0 here: no ancestor at that level
    flat = index.ravel()
    missing = index == 0
    under = np.where(missing, total_chars, np.bincount(flat, weights=np.repeat(chars, CONTAINER_LEVELS))[index])
    linked = np.where(missing, links.sum(), np.bincount(flat, weights=np.repeat(links, CONTAINER_LEVELS))[index])
    return np.concatenate([under / total_chars, np.minimum(linked / np.maximum(under, 1.0), 1.0)], axis=1)


def _block_columns(blocks: list, lowered: list, words: np.ndarray, counts: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Writes the layout numbers of :func:`_dense` that need no page totals and no logarithm into ``out``
    (ratios, flags, position, tag and content-type one-hots), one block at a time (typed in the compiled
    build: float32 arithmetic as NumPy's, no array per column). Returns float32 ``[n, 4]``: text length,
    link text length, HTML length, depth — what the other numbers are computed from."""
    n: cython.Py_ssize_t = len(blocks)
    i: cython.Py_ssize_t
    text: str
    html: str
    low: str
    table = np.empty((n, 4), dtype=np.float32)
    t: cython.float[:, ::1] = table
    o: cython.float[:, ::1] = out
    w: cython.float[::1] = words
    c: cython.float[:, ::1] = counts
    chars: cython.float
    links: cython.float
    safe: cython.float
    per_word: cython.float
    last: cython.float = max(n - 1, 1)
    first_content: cython.Py_ssize_t = 20 + len(_TAGS) + 1
    for i in range(n):
        b = blocks[i]
        text = b.text
        html = b.html
        low = lowered[i]
        chars = len(text)
        links = b.link_text_length
        t[i, 0] = chars
        t[i, 1] = links
        t[i, 2] = len(html)
        t[i, 3] = b.depth
        safe = chars if chars > 1 else 1
        per_word = w[i] if w[i] > 1 else 1
        o[i, 2] = min(links / safe, 1)
        o[i, 4] = c[i, 0] / safe * 10
        o[i, 5] = c[i, 0] / per_word
        o[i, 6] = c[i, 1] / per_word * 5
        o[i, 7] = c[i, 2] / safe * 5
        o[i, 8] = c[i, 3] / safe * 5
        o[i, 10] = t[i, 3] / 20
        o[i, 12] = i / last
        o[i, 16] = "<img" in html
        o[i, 17] = "\u00a9" in low or "copyright" in low or "all rights reserved" in low
        o[i, 18] = text != "" and text[-1] in SENTENCE_END
        o[i, 19] = (len(b.classes.split()) + bool(b.element_id)) / 5
        o[i, 20 + _TAG_INDEX.get(b.tag, len(_TAGS))] = 1
        o[i, first_content + _CONTENT_INDEX.get(b.content_type, 0)] = 1
    return table


# per BMP code point: punctuation, sentence end, digit, upper case (ASCII/Latin-1), letter of a script written
# without spaces (Thai …) as bits 0..4
_COUNT_KINDS = 5
_KIND_BMP = np.zeros(0x10000, dtype=np.uint8)
_KIND_BMP[[ord(c) for c in CLAUSE_MARKS + SENTENCE_END]] |= 1
_KIND_BMP[[ord(c) for c in SENTENCE_END]] |= 2
_KIND_BMP[ord("0") : ord("9") + 1] |= 4
_KIND_BMP[[c for c in list(range(65, 91)) + list(range(0xC0, 0xDF)) if c != 0xD7]] |= 8
_KIND_BMP[np.concatenate([np.arange(low, high + 1) for low, high in UNSPACED_LETTER_RANGES])] |= 16
_KIND_BITS = (np.arange(1 << _COUNT_KINDS)[:, None] >> np.arange(_COUNT_KINDS)[None, :]) & 1  # [bits value, kind]


def _char_counts(texts: list[str]) -> np.ndarray:
    """Per text: punctuation marks, sentence ends, digits, upper-case letters (ASCII/Latin-1), letters of the
    scripts written without spaces (``dom.UNSPACED_LETTER_RANGES``). ``[n, 5]``."""
    cps, lengths = _codepoints(texts)
    if _C is not None:
        return _C.kind_counts(cps, lengths, _KIND_BMP, _COUNT_KINDS)
    owner = _owners(lengths, len(cps))
    keep = owner >= 0
    kinds = _KIND_BMP[np.minimum(cps[keep], 0xFFFF).astype(np.intp)]
    # one count per (text, kind bits) pair, then summed per kind
    values = 1 << _COUNT_KINDS
    pairs = np.bincount(owner[keep] * values + kinds, minlength=len(texts) * values).reshape(len(texts), values)
    return (pairs @ _KIND_BITS).astype(np.float32)


def _load_c_loops() -> object:
    """The compiled loops (``feature_hash``) when this is the compiled build and they are built and
    current; otherwise None (the NumPy versions run)."""
    if not cython.compiled:
        return None
    try:
        from extract_trt.runtime import compiled_core
        from extract_trt.runtime.labelers import feature_hash
    except ImportError:
        return None
    return feature_hash if compiled_core.fresh("labelers.feature_hash") else None


_C = _load_c_loops()
