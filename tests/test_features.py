"""Block features: deterministic hashing, field layout, scripts without spaces, windows."""

import subprocess
import sys

import numpy as np
import pytest

from extract_trt import simplify
from extract_trt.runtime.features import (
    BUCKETS, CHARS, MARKUP, MAX_TRIGRAM_TEXT, N_DENSE, N_FIELDS, WORDS, page_features, windows,
)  # fmt: skip

PAGE = """<html><body><nav class="main-menu"><a href="/">Home</a> <a href="/about">About us</a></nav>
<article id="post"><h1>Night trains return</h1><p>Night trains are coming back to Europe, with new routes
opening every year. Operators say demand is strong.</p><p>東京から大阪まで新幹線で行きました。</p></article>
<footer>© 2024 Example Corp. All rights reserved.</footer></body></html>"""


def test_fields_and_ranges():
    page = simplify(PAGE)
    f = page_features(page)
    n = len(page)
    assert f.dense.shape == (n, N_DENSE) and f.dense.dtype == np.float32
    assert f.ids.dtype == np.int64 and f.bags.dtype == np.int64 and len(f.ids) == len(f.bags)
    assert f.ids.min() >= 1 and f.ids.max() < BUCKETS  # row 0 is never used
    assert f.bags.min() >= 0 and f.bags.max() < n * N_FIELDS
    per_block = np.bincount(f.bags, minlength=n * N_FIELDS).reshape(n, N_FIELDS)
    texts = [b.text for b in page.blocks]
    for i, text in enumerate(texts):
        assert (per_block[i, WORDS] > 0) == bool(text.strip())
        assert per_block[i, MARKUP] > 0  # every block has at least its tag
    paragraph = texts.index(next(t for t in texts if t.startswith("Night trains are")))
    assert per_block[paragraph, CHARS] == min(len(" ".join(texts[paragraph].split())), MAX_TRIGRAM_TEXT) - 2


def test_cjk_characters_are_words():
    page = simplify("<html><body><p>東京から大阪</p><p>Tokyo Osaka</p></body></html>")
    f = page_features(page)
    words = np.bincount(f.bags[f.bags % N_FIELDS == WORDS] // N_FIELDS, minlength=2)
    assert words[0] == 6 + 5  # six characters, five bigrams
    assert words[1] == 2 + 1


def test_same_text_same_ids_and_case_folding():
    a = page_features(simplify("<html><body><p>Alpha beta gamma.</p></body></html>"))
    b = page_features(simplify("<html><body><p>ALPHA Beta gamma.</p></body></html>"))
    word_a = a.ids[a.bags % N_FIELDS == WORDS]
    word_b = b.ids[b.bags % N_FIELDS == WORDS]
    assert np.array_equal(word_a, word_b)


def test_hashes_do_not_depend_on_the_process():
    """Python's str hash is salted per process; the shipped model needs the same ids everywhere."""
    code = (
        "from extract_trt import simplify; from extract_trt.runtime.features import page_features;"
        f"print(page_features(simplify({PAGE!r})).ids.tolist())"
    )
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")}  # fmt: skip
    assert len(runs) == 1
    assert runs.pop().strip() == str(page_features(simplify(PAGE)).ids.tolist())


@pytest.mark.parametrize("n,size,overlap", [(0, 8, 2), (5, 8, 2), (8, 8, 2), (9, 8, 2), (100, 16, 4), (1000, 512, 64)])
def test_windows_cover_every_block_once(n, size, overlap):
    taken = np.zeros(n, dtype=int)
    for start, stop, keep_from, keep_to in windows(n, size, overlap):
        assert 0 <= start <= keep_from <= keep_to <= stop <= n and stop - start <= size
        taken[keep_from:keep_to] += 1
    assert (taken == 1).all()


def test_window_slices_features_like_a_smaller_page():
    page = simplify(PAGE)
    f = page_features(page)
    part = f.window(1, 3)
    assert part.n_blocks == 2
    assert np.array_equal(part.dense, f.dense[1:3])
    keep = (f.bags >= N_FIELDS) & (f.bags < 3 * N_FIELDS)
    assert np.array_equal(part.ids, f.ids[keep]) and np.array_equal(part.bags, f.bags[keep] - N_FIELDS)


def test_character_class_table_matches_the_rules():
    from extract_trt.runtime.features import _classify, _word_mask

    cps = np.concatenate([np.arange(0, 0x3000, 7), np.random.default_rng(0).integers(0, 0x110000, 20000)]).astype(np.uint64)
    for table, rule in zip(_word_mask(cps), _classify(cps)):
        assert np.array_equal(table, rule)


def test_markup_hashed_once_per_distinct_string_equals_hashing_each():
    from extract_trt.runtime.features import _shared_hashes, _word_hashes

    texts = ["nav menu-item", "post body", "nav menu-item", "", "post body", "sidebar", "nav menu-item"]
    ids, owners = _shared_hashes(texts, salt=5)
    ref_ids, ref_owners, _ = _word_hashes(texts, salt=5)
    assert sorted(zip(owners.tolist(), ids.tolist())) == sorted(zip(ref_owners.tolist(), ref_ids.tolist()))


def test_character_counts():
    from extract_trt.runtime.features import _char_counts

    counts = _char_counts(["Hello, World! 123.", "", "東京。ÉTÉ"])
    assert counts.tolist() == [[3, 2, 3, 2], [0, 0, 0, 0], [1, 1, 0, 3]]  # punct, sentence ends, digits, upper


def test_trigrams_only_from_the_start_of_long_blocks():
    long_text = " ".join(f"word{i}" for i in range(400))
    f = page_features(simplify(f"<html><body><p>{long_text}</p><p>ab cd</p></body></html>"))
    chars = np.bincount(f.bags[f.bags % N_FIELDS == CHARS] // N_FIELDS, minlength=2)
    assert chars.tolist() == [MAX_TRIGRAM_TEXT - 2, 3]


def test_repeated_structure_numbers():
    from extract_trt.runtime.features import N_REPEATS

    items = "".join(f'<div class="card"><p class="item">Story number {i} is here</p></div>' for i in range(6))
    html = f"""<html><body>{items}<p>Share</p><article><p>A long article paragraph that says
    something of its own and is not repeated anywhere on this page at all.</p></article><p>Share</p></body></html>"""
    page = simplify(html)
    repeats = page_features(page).dense[:, -N_REPEATS:]
    texts = [b.text for b in page.blocks]
    item, lone, share = texts.index("Story number 0 is here"), texts.index(next(t for t in texts if t.startswith("A long"))), texts.index("Share")
    assert repeats[item, 0] > 0 and repeats[lone, 0] == 0  # six alike list items; one article paragraph
    assert repeats[share, 2] > 0 and repeats[item, 2] == 0 and repeats[lone, 2] == 0  # "Share" twice
    items_share = repeats[[i for i, t in enumerate(texts) if t.startswith("Story")], 1]
    assert np.allclose(items_share, items_share[0]) and 0 < items_share[0] < 1
