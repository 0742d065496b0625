"""Block features: deterministic hashing, field layout, scripts without spaces, windows."""

import subprocess
import sys

import numpy as np
import pytest

from extract_trt import simplify
from extract_trt.runtime.labelers.features import (
    BUCKETS, CHARS, HASH_BITS, MARKUP_KINDS, MAX_TRIGRAM_TEXT, N_DENSE, TEXT_FIELDS, UNKNOWN, WORDS, BlockFeatures,
    Vocabulary, page_features, windows,
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
    assert f.markup.shape == (n, MARKUP_KINDS) and f.markup.dtype == np.int64
    assert f.ids.min() >= 0 and f.ids.max() < 1 << HASH_BITS
    assert len(np.unique(f.ids & (BUCKETS - 1))) > BUCKETS // 1000  # the table rows use the low bits too
    assert f.bags.min() >= 0 and f.bags.max() < (TEXT_FIELDS + MARKUP_KINDS) * n
    assert f.markup.min() >= 0 and f.markup.max() < MARKUP_KINDS * n
    per_row = np.bincount(f.bags, minlength=(TEXT_FIELDS + MARKUP_KINDS) * n)
    texts = [b.text for b in page.blocks]
    for i, text in enumerate(texts):
        assert (f.text_ids_per_block(WORDS)[i] > 0) == bool(text.strip())
        assert per_row[TEXT_FIELDS * n + f.markup[i]].sum() > 0  # every block has at least its tag
    paragraph = texts.index(next(t for t in texts if t.startswith("Night trains are")))
    assert f.text_ids_per_block(CHARS)[paragraph] == min(len(" ".join(texts[paragraph].split())), MAX_TRIGRAM_TEXT) - 2


def _block_bags(f) -> list[list[list[int]]]:
    """Per block, the sorted ids of its WORDS, CHARS and MARKUP bags (markup: its kinds' strings joined)."""
    n = f.n_blocks
    rows = [[] for _ in range((TEXT_FIELDS + MARKUP_KINDS) * n)]
    for i, row in zip(f.ids.tolist(), f.bags.tolist()):
        rows[row].append(i)
    return [
        [sorted(rows[TEXT_FIELDS * b + WORDS]), sorted(rows[TEXT_FIELDS * b + CHARS]),
         sorted(i for k in f.markup[b] for i in rows[TEXT_FIELDS * n + k])]
        for b in range(n)
    ]  # fmt: skip


def test_markup_hashed_once_per_distinct_string_equals_hashing_each_block():
    """Blocks with equal markup strings share rows, and each block's markup bag holds the ids of its own
    names, its ancestors' names and its path, as if every block were hashed alone."""
    from extract_trt.runtime.labelers.features import MAX_ANCESTORS, MAX_MARKUP, MAX_PATH, _codepoints, _word_hashes

    page = simplify(PAGE)
    f = page_features(page)
    assert len(np.unique(f.markup)) < MARKUP_KINDS * f.n_blocks  # the page repeats some markup
    for block, (_, _, markup) in zip(page.blocks, _block_bags(f)):
        expected = []
        for salt, text in ((3, f"{block.tag} {block.classes} {block.element_id}"[:MAX_MARKUP].lower()),
                           (5, block.ancestor_names[:MAX_ANCESTORS].lower()), (7, block.tag_path[-MAX_PATH:])):  # fmt: skip
            expected += _word_hashes(_codepoints([text]), salt)[0].astype(np.int64).tolist()
        assert markup == sorted(expected)


def test_cjk_characters_are_words():
    page = simplify("<html><body><p>東京から大阪</p><p>Tokyo Osaka</p></body></html>")
    f = page_features(page)
    words = f.text_ids_per_block(WORDS)
    assert words[0] == 6 + 5  # six characters, five bigrams
    assert words[1] == 2 + 1


def test_sentence_marks_of_other_scripts_end_sentences_and_words():
    """A danda (Hindi), an Urdu full stop or an Arabic comma is punctuation like "." and ",": not part of the
    word before it, counted as a sentence end or a mark, and a paragraph ending in one ends a sentence."""
    from extract_trt.runtime.labelers.features import _char_counts

    paragraphs = ("यह एक वाक्य है।", "यह एक वाक्य है", "यह एक वाक्य है.", "اردو ہے۔")
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    f = page_features(simplify(f"<html><body>{body}</body></html>"))
    bags = _block_bags(f)
    assert bags[0][WORDS] == bags[1][WORDS] == bags[2][WORDS]
    ends = [n for n in range(N_DENSE) if f.dense[1, n] == 0 and (f.dense[[0, 2, 3], n] == 1).all()]
    assert ends  # the sentence-end flag: set for "।", "." and "۔", not for the bare clause
    assert _char_counts(["यह वाक्य है। क्या?", "نعم، لا؟", "اردو ہے۔"]).tolist() == [
        [2, 2, 0, 0, 0], [2, 1, 0, 0, 0], [1, 1, 0, 0, 0]]  # punctuation, sentence ends, digits, upper case, Thai …


def test_digits_of_every_script_and_full_width_letters_read_as_ascii():
    """A number is the same word whichever digits write it (Arabic-Indic, Persian, Devanagari, full-width), and a
    name in full-width letters (CJK text's "ｉＰｈｏｎｅ") the same as in ASCII ones."""
    from extract_trt.runtime.labelers.features import _char_counts

    years = ("2024 ١٢", "٢٠٢٤ 12", "۲۰۲۴ १२", "２０２４ ๑๒")
    f = page_features(simplify("<html><body>" + "".join(f"<p>{y}</p>" for y in years) + "</body></html>"))
    words, chars, _ = zip(*_block_bags(f))
    assert len(set(map(tuple, words))) == 1 and len(set(map(tuple, chars))) == 1
    assert _char_counts(list(years))[:, 2].tolist() == [6, 6, 6, 6]  # the layout numbers' digit counts
    names = page_features(simplify("<html><body><p>New iPhone 16</p><p>Ｎｅｗ ｉＰｈｏｎｅ １６</p></body></html>"))
    assert _block_bags(names)[0][:2] == _block_bags(names)[1][:2]
    assert (names.dense[0, 4:9] == names.dense[1, 4:9]).all()  # punctuation, digit and upper-case shares


def test_same_text_same_ids_and_case_folding():
    a = page_features(simplify("<html><body><p>Alpha beta gamma.</p></body></html>"))
    b = page_features(simplify("<html><body><p>ALPHA Beta gamma.</p></body></html>"))
    assert _block_bags(a)[0][WORDS] == _block_bags(b)[0][WORDS]


def test_hashes_do_not_depend_on_the_process():
    """Python's str hash is salted per process; the shipped model needs the same ids everywhere."""
    code = (
        "from extract_trt import simplify; from extract_trt.runtime.labelers.features import page_features;"
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


@pytest.mark.parametrize("start,stop", [(1, 3), (0, 2), (2, 4), (3, 4)])
def test_window_slices_features_like_a_smaller_page(start, stop):
    page = simplify(PAGE)
    f = page_features(page)
    part = f.window(start, stop)
    assert part.n_blocks == stop - start
    assert np.array_equal(part.dense, f.dense[start:stop])
    assert part.bags.max() < (TEXT_FIELDS + MARKUP_KINDS) * part.n_blocks and part.markup.max() < MARKUP_KINDS * part.n_blocks
    assert _block_bags(part) == _block_bags(f)[start:stop]


def test_norms_scale_each_bag_by_its_size_after_windows_and_dropped_ids():
    """norms = 1/sqrt(ids in the bag), the markup bag counting its three strings' ids together; empty bags
    get 1. Counted from what is left, so a window or ids dropped in training rescale like the graph did."""
    f = page_features(simplify(PAGE))
    dropped = f.keep_ids(np.random.default_rng(0).random(len(f.ids)) >= 0.5)
    for features in (f, f.window(1, 3), dropped):
        sizes = np.array([[len(bag) for bag in block] for block in _block_bags(features)])
        expected = 1.0 / np.sqrt(np.maximum(sizes, 1))
        norms = features.norms()
        assert norms.dtype == np.float32 and norms.shape == (features.n_blocks, TEXT_FIELDS + 1)
        assert np.allclose(norms, expected, rtol=1e-6)
        assert (sizes > 1).any()  # a real scale, not all ones
    assert not np.array_equal(dropped.norms(), f.norms())


def test_character_class_table_matches_the_rules():
    from extract_trt.runtime.labelers.features import _classify, _word_mask

    cps = np.concatenate([np.arange(0, 0x3000, 7), np.random.default_rng(0).integers(0, 0x110000, 20000)]).astype(np.uint64)
    for table, rule in zip(_word_mask(cps), _classify(cps)):
        assert np.array_equal(table, rule)


def test_character_counts():
    from extract_trt.runtime.labelers.features import _char_counts

    counts = _char_counts(["Hello, World! 123.", "", "東京。ÉTÉ", "ภาษาไทย ງ"])
    # punctuation, sentence ends, digits, upper case, letters of scripts written without spaces (Thai, Lao …)
    assert counts.tolist() == [[3, 2, 3, 2, 0], [0, 0, 0, 0, 0], [1, 1, 0, 3, 0], [0, 0, 0, 0, 8]]


def test_words_of_scripts_written_without_spaces_are_estimated_from_their_letters():
    """A Thai paragraph is a few space-separated runs of letters; read as that many words it looks like a
    menu entry. Its word count (the layout number and ``dom.word_count``) comes from its letters instead."""
    from extract_trt.runtime.html.dom import LETTERS_PER_UNSPACED_WORD, word_count

    thai = "ประเทศไทยมีประชากรประมาณหกสิบหกล้านคน เมืองหลวงคือกรุงเทพมหานคร และ"  # 65 letters
    assert word_count(thai) == 65 // LETTERS_PER_UNSPACED_WORD > 3 * len(thai.split())
    assert word_count(f"Bangkok {thai} 東京") == word_count(thai) + 2
    assert word_count("Night trains return") == 3
    f = page_features(simplify(f"<html><body><p>{thai}</p><p>{' '.join(['word'] * 13)}</p></body></html>"))
    assert f.dense[0, 1] == f.dense[1, 1]  # log(words): 13 either way


def test_trigrams_only_from_the_start_of_long_blocks():
    long_text = " ".join(f"word{i}" for i in range(400))
    f = page_features(simplify(f"<html><body><p>{long_text}</p><p>ab cd</p></body></html>"))
    chars = f.text_ids_per_block(CHARS)
    assert chars.tolist() == [MAX_TRIGRAM_TEXT - 2, 3]


def test_container_numbers_find_the_text_region_of_the_page():
    """Per ancestor level: the share of the page's text under that ancestor and its link density; the
    article's paragraphs sit in a container holding most of the text, the menu links in a linked one."""
    from extract_trt.runtime.labelers.features import N_CONTAINERS, _container_numbers

    sentence = "Night trains are coming back to Europe, with new routes opening every year. "
    page = simplify(
        "<html><body><div class=menu><p><a href=/>Home</a> <a href=/about>About us</a></p></div>"
        f"<article><p>{sentence * 3}</p><p>{sentence * 2}</p></article><footer><p>(c) 2024</p></footer></body></html>"
    )
    f = page_features(page)
    levels = N_CONTAINERS // 2
    numbers = f.dense[:, -N_CONTAINERS:]
    assert np.array_equal(numbers, _container_numbers(page.blocks, *_chars_links(page)).astype(np.float32))
    assert ((numbers >= 0) & (numbers <= 1)).all()
    texts = [b.text for b in page.blocks]
    paragraph = next(i for i, t in enumerate(texts) if t.startswith("Night trains are"))
    menu = next(i for i, t in enumerate(texts) if "Home" in t)
    assert numbers[paragraph, 0] > 0.8 and numbers[paragraph, levels] == 0  # the article, no links
    assert numbers[menu, 0] < 0.1 and numbers[menu, levels] > 0.9  # the menu: links (and a space)
    assert (numbers[:, levels - 1] == 1).all()  # past the top of the tree: the whole page


def _chars_links(page) -> tuple[np.ndarray, np.ndarray, float]:
    chars = np.array([len(b.text) for b in page.blocks], dtype=np.float32)
    links = np.array([b.link_text_length for b in page.blocks], dtype=np.float32)
    return chars, links, float(chars.sum())


def test_repeated_structure_numbers():
    from extract_trt.runtime.labelers.features import N_CONTAINERS, N_REPEATS

    items = "".join(f'<div class="card"><p class="item">Story number {i} is here</p></div>' for i in range(6))
    html = f"""<html><body>{items}<p>Share</p><article><p>A long article paragraph that says
    something of its own and is not repeated anywhere on this page at all.</p></article><p>Share</p></body></html>"""
    page = simplify(html)
    repeats = page_features(page).dense[:, -N_REPEATS - N_CONTAINERS : -N_CONTAINERS]
    texts = [b.text for b in page.blocks]
    item, lone, share = texts.index("Story number 0 is here"), texts.index(next(t for t in texts if t.startswith("A long"))), texts.index("Share")
    assert repeats[item, 0] > 0 and repeats[lone, 0] == 0  # six alike list items; one article paragraph
    assert repeats[share, 2] > 0 and repeats[item, 2] == 0 and repeats[lone, 2] == 0  # "Share" twice
    items_share = repeats[[i for i, t in enumerate(texts) if t.startswith("Story")], 1]
    assert np.allclose(items_share, items_share[0]) and 0 < items_share[0] < 1


@pytest.mark.parametrize(
    "texts",
    [
        [],
        ["", "a", "ab", "abc"],
        ["東京から大阪", "x" * 50 + " y", "emoji 😀 𝔘nicode\U0001f600 end", "\n\n", "  spaced   out  "],
        ["İstanbul ÉTÉ 123,5!", "a\nb\nc", "한국어 텍스트。", "_under_score_ and-dash"],
        ["\u3000 lead", "a\u00a0b\tc\u2028d  ", "   ", "abcdefg hij", "abcdef  ghij", "x" * 7 + " \U0001f600z"],
        ["٢٠٢٤ ۲۰", "２０２４年", "१२ and \U0001d7da", "plain 12"],
    ],
)
def test_compiled_loops_equal_the_numpy_versions(texts, monkeypatch):
    """feature_hash.pyx (the compiled build) and the NumPy code give the same arrays, edge cases included."""
    from extract_trt.runtime.labelers import features

    if features._C is None:
        pytest.skip("the C loops are not built (interpreted install)")
    steps = (lambda: features._word_hashes(features._codepoints(texts), 0),
             lambda: features._char_trigrams(texts, features._codepoints(texts), 8),
             lambda: (features._char_counts(texts),))  # fmt: skip
    for step in steps:
        compiled = step()
        monkeypatch.setattr(features, "_C", None)
        interpreted = step()
        monkeypatch.undo()
        for c, i in zip(compiled, interpreted):
            assert c.dtype == i.dtype and np.array_equal(c, i)


def test_bag_sums_add_each_ids_row_into_its_bag(monkeypatch):
    """The C loop and the NumPy version sum the same rows, on a real page and after a window."""
    from extract_trt.runtime.labelers import features

    page = simplify(PAGE)
    table = np.random.default_rng(0).standard_normal((BUCKETS, 8)).astype(np.float32)
    for f in (page_features(page), page_features(page).window(1, 3)):
        sums = f.bag_sums(table)
        rows = (TEXT_FIELDS + MARKUP_KINDS) * f.n_blocks
        expected = np.zeros((rows, 8), dtype=np.float64)
        for i, b in zip(f.ids, f.bags):
            expected[b] += table[i % BUCKETS]
        assert sums.shape == (rows, 8) and sums.dtype == np.float32
        assert np.allclose(sums, expected, atol=1e-5)
        monkeypatch.setattr(features, "_C", None)
        assert np.allclose(f.bag_sums(table), sums, atol=1e-5)
        monkeypatch.undo()
    bad = BlockFeatures(ids=f.ids.copy(), bags=f.bags, dense=f.dense, markup=f.markup)
    bad.ids[0] = -1
    for c_loops in (features._C, None):
        monkeypatch.setattr(features, "_C", c_loops)
        with pytest.raises(IndexError, match="negative id"):
            bad.bag_sums(table)
        with pytest.raises(IndexError, match="power of two"):
            f.bag_sums(table[:1000])


def test_ids_outside_the_vocabulary_become_their_fields_unknown_id(monkeypatch):
    """In a vocabulary, a page keeps its known ids and its bags' sizes; every other id becomes the unknown
    id of its field (words, trigrams, markup). The C loop and the NumPy version agree."""
    from extract_trt.runtime.labelers import features

    f = page_features(simplify(PAGE))
    known = np.unique(f.ids)[::3]
    vocabulary = Vocabulary.of(np.concatenate([known, known[:5]]))
    assert len(vocabulary) == len(known)
    inside = vocabulary.contains(f.ids)
    assert inside.dtype == bool and np.array_equal(inside, np.isin(f.ids, known))
    seen = f.in_vocabulary(vocabulary)
    assert np.array_equal(seen.ids[inside], f.ids[inside]) and np.array_equal(seen.bags, f.bags)
    assert np.array_equal(seen.norms(), f.norms())
    field = [[WORDS, CHARS][b % TEXT_FIELDS] if b < TEXT_FIELDS * f.n_blocks else TEXT_FIELDS for b in f.bags[~inside]]
    assert seen.ids[~inside].tolist() == [UNKNOWN + k for k in field] and len(set(field)) == 3
    monkeypatch.setattr(features, "_C", None)
    assert np.array_equal(f.in_vocabulary(vocabulary).ids, seen.ids)
    monkeypatch.undo()
    nothing = f.in_vocabulary(Vocabulary.of(np.zeros(0, dtype=np.int64)))
    assert set(nothing.ids.tolist()) == {UNKNOWN + WORDS, UNKNOWN + CHARS, UNKNOWN + TEXT_FIELDS}
    with pytest.raises(ValueError, match="uint8 bytes"):
        Vocabulary(np.zeros(100, dtype=np.uint8))
