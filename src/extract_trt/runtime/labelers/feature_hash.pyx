# cython: language_level=3, boundscheck=False, wraparound=False
"""The per-character loops of :mod:`extract_trt.runtime.labelers.features` in C: word hashes, character trigram
hashes and character counts over a page's joined UTF-32 code points.

The NumPy versions in ``features.py`` compute the same numbers with a few dozen whole-array passes per
page (masks, cumulative sums, segment sums), which cost more than the arithmetic itself on pages of a few
tens of thousands of characters. Here each is one pass. Every table and constant comes from
``features.py`` as an argument, so the two versions cannot drift apart on what a word or a hash is;
``features`` uses this module only in the compiled build, and the tests check that both give the same
arrays on real pages.

Layout of the inputs, as ``features._codepoints`` builds it: the texts joined with one separator code
point between them, and each text's length in code points.
"""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

cdef uint32_t BMP_END = 0x10000
cdef uint32_t SYMBOLS = 0x1F000  # above the BMP, code points from here on are not word characters


def word_tokens(const uint32_t[::1] cps, const int64_t[::1] lengths, const uint8_t[::1] word_bmp,
                const uint8_t[::1] alone_bmp, const uint64_t[::1] powers):
    """(raw polynomial hash of each token, index of its text) — ``features._word_hashes`` before the
    bigrams and the salt: a token is a run of word characters, and every stand-alone character (CJK) a
    token of its own."""
    cdef Py_ssize_t n = lengths.shape[0], last_power = powers.shape[0] - 1
    cdef Py_ssize_t t, i, pos = 0, end, k = -1, in_token = 0
    cdef uint32_t cp
    cdef bint word, alone, prev_word, prev_alone
    cdef uint64_t h = 0
    raw_out = np.empty(cps.shape[0], dtype=np.uint64)
    owner_out = np.empty(cps.shape[0], dtype=np.int64)
    cdef uint64_t[::1] raw = raw_out
    cdef int64_t[::1] owner = owner_out
    for t in range(n):
        end = pos + lengths[t]
        prev_word = prev_alone = False  # the separator before a text is neither
        for i in range(pos, end):
            cp = cps[i]
            if cp < BMP_END:
                word = word_bmp[cp]
                alone = alone_bmp[cp]
            else:
                word = cp < SYMBOLS
                alone = alone_bmp[BMP_END - 1]
            if word:
                if not prev_word or alone or prev_alone:
                    if k >= 0:
                        raw[k] = h
                    k += 1
                    owner[k] = t
                    h = 0
                    in_token = 0
                h += cp * powers[in_token if in_token < last_power else last_power]
                in_token += 1
            prev_word = word
            prev_alone = alone
        pos = end + 1
    if k >= 0:
        raw[k] = h
    return raw_out[: k + 1], owner_out[: k + 1]


def any_marked(const uint32_t[::1] cps, const uint8_t[::1] marked_bmp):
    """Whether any BMP code point of ``cps`` is marked in ``marked_bmp`` (``features._codepoints``: a character
    to fold)."""
    cdef Py_ssize_t i
    cdef uint32_t cp
    for i in range(cps.shape[0]):
        cp = cps[i]
        if cp < BMP_END and marked_bmp[cp]:
            return True
    return False


def char_trigrams(const uint32_t[::1] cps, const int64_t[::1] lengths, const uint8_t[::1] space_bmp,
                  Py_ssize_t max_chars, const uint64_t[::1] mul):
    """(raw hash of each character trigram, index of its text) over the first ``max_chars`` characters of
    each text with its whitespace runs collapsed as ``" ".join(text.split())`` does: ``features._char_trigrams``
    before the salt. ``space_bmp`` marks the BMP code points Python counts as whitespace (none lie above)."""
    cdef Py_ssize_t n = lengths.shape[0], t, i, pos = 0, k = 0, end, emitted
    cdef uint64_t m0 = mul[0], m1 = mul[1], m2 = mul[2], c, before = 0, last = 0
    cdef uint32_t cp
    cdef bint gap
    raw_out = np.empty(max(cps.shape[0], 1), dtype=np.uint64)
    owner_out = np.empty(max(cps.shape[0], 1), dtype=np.int64)
    cdef uint64_t[::1] raw = raw_out
    cdef int64_t[::1] owner = owner_out
    for t in range(n):
        end = pos + lengths[t]
        emitted = 0
        gap = False
        i = pos
        while i < end and emitted < max_chars:
            cp = cps[i]
            if cp < BMP_END and space_bmp[cp]:
                gap = emitted > 0  # leading whitespace is dropped, a run inside is one space
                i += 1
                continue
            if gap:
                c = 0x20
                gap = False
            else:
                c = cp
                i += 1
            if emitted >= 2:
                raw[k] = before * m0 + last * m1 + c * m2
                owner[k] = t
                k += 1
            before = last
            last = c
            emitted += 1
        pos = end + 1
    return raw_out[:k], owner_out[:k]


def kind_counts(const uint32_t[::1] cps, const int64_t[::1] lengths, const uint8_t[::1] kind_bmp, int kinds):
    """Per text, how many of its code points have each kind bit of ``kind_bmp`` set: ``[n, kinds]``
    float32 (``features._char_counts``)."""
    cdef Py_ssize_t n = lengths.shape[0], t, i, pos = 0, end
    cdef int bit
    cdef uint8_t bits
    cdef uint32_t cp
    out_arr = np.zeros((n, kinds), dtype=np.float32)
    cdef float[:, ::1] out = out_arr
    for t in range(n):
        end = pos + lengths[t]
        for i in range(pos, end):
            cp = cps[i]
            bits = kind_bmp[cp if cp < BMP_END else BMP_END - 1]
            if bits:
                for bit in range(kinds):
                    if bits >> bit & 1:
                        out[t, bit] += 1
        pos = end + 1
    return out_arr


cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define EXTRACT_TRT_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define EXTRACT_TRT_PREFETCH(address) ((void)0)
    #endif
    """
    void prefetch "EXTRACT_TRT_PREFETCH"(const void *address) nogil

# How many ids ahead bag_sums asks for a table row: rows are scattered over a table larger than the
# core's cache, so each is a cache miss, and waiting for them one by one was half the loop's time
# inside the pipeline (0.31 -> 0.19 ms per page measured).
cdef enum:
    PREFETCH_AHEAD = 16


def bag_sums(const float[:, ::1] table, const int64_t[::1] ids, const int64_t[::1] bags, Py_ssize_t rows):
    """Row ``bags[i]`` of the result is the sum of ``table[ids[i] & (len(table) - 1)]`` over all ``i``:
    ``[rows, table width]`` float32 (``BlockFeatures.bag_sums``). One pass over the ids, no ``[ids,
    width]`` gather in between. Raises IndexError for a negative id, a bag out of range or a table whose
    length is not a power of two."""
    cdef Py_ssize_t width = table.shape[1], size = table.shape[0], n = ids.shape[0], t, j
    cdef int64_t id_, bag, mask = size - 1
    if size == 0 or size & mask:
        raise IndexError(f"a table of {size} rows: its length must be a power of two")
    out_arr = np.zeros((rows, width), dtype=np.float32)
    cdef float[:, ::1] out = out_arr
    cdef const float *row
    cdef float *into
    for t in range(n):
        if t + PREFETCH_AHEAD < n:
            for j in range(0, width, 16):  # one 64-byte cache line per 16 floats
                prefetch(&table[ids[t + PREFETCH_AHEAD] & mask, j])
        id_ = ids[t]
        bag = bags[t]
        if id_ < 0:
            raise IndexError(f"negative id {id_}")
        if bag < 0 or bag >= rows:
            raise IndexError(f"bag {bag} out of range ({rows} bags)")
        row = &table[id_ & mask, 0]
        into = &out[bag, 0]
        for j in range(width):
            into[j] += row[j]
    return out_arr


def vocabulary_ids(const uint8_t[::1] bits, const int64_t[::1] ids, const int64_t[::1] bags, int64_t text_rows,
                   int64_t text_fields, int64_t unknown):
    """``BlockFeatures.in_vocabulary`` in one pass: ``ids[i]`` where the bitmap ``bits`` has it, else
    ``unknown`` plus its field (``bags[i] % text_fields`` in a text bag, ``text_fields`` in a markup one).
    Raises IndexError for an id outside the bitmap's range."""
    cdef Py_ssize_t n = ids.shape[0], size = bits.shape[0], t
    cdef int64_t id_, bag
    out_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    for t in range(n):
        id_ = ids[t]
        if id_ < 0 or (id_ >> 3) >= size:
            raise IndexError(f"id {id_} is outside the vocabulary's range")
        if (bits[id_ >> 3] >> (id_ & 7)) & 1:
            out[t] = id_
        else:
            bag = bags[t]
            out[t] = unknown + (bag % text_fields if bag < text_rows else text_fields)
    return out_arr
