"""Packing (spec §3.2), token-budget batching, the NumPy <|sep|> gather (spec §3.3) and the prefetch thread."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_trt.kernels.batching import PaddingStats, pad_batch, plan_batches
from extract_trt.kernels.packing import Chunk, pack_chunks
from extract_trt.kernels.sep_gather import sep_gather
from extract_trt.runtime.labelers.prefetch import prefetch

import oracle

SEP, BOS, EOS = 99, 1, 2
REF = oracle.load()


def blocks_of(lengths: list[int]) -> list[np.ndarray]:
    """Distinct, recognisable ids per block: block i is filled with 1000 + i."""
    return [np.full(n, 1000 + i, dtype=np.int64) for i, n in enumerate(lengths)]


def test_empty_page_gives_no_chunks() -> None:
    assert pack_chunks([], 16, SEP, BOS, EOS) == []


def test_blocks_fill_chunks_in_order_with_bos_sep_eos() -> None:
    chunks = pack_chunks(blocks_of([3, 4, 2]), 12, SEP, BOS, EOS)  # budget 10: 4 + 5 fit, 3 does not
    assert [c.blocks.tolist() for c in chunks] == [[0, 1], [2]]
    assert chunks[0].ids.tolist() == [BOS, 1000, 1000, 1000, SEP, 1001, 1001, 1001, 1001, SEP, EOS]
    assert chunks[1].ids.tolist() == [BOS, 1002, 1002, SEP, EOS]


def test_block_exactly_filling_the_budget_is_not_truncated() -> None:
    (chunk,) = pack_chunks(blocks_of([9]), 12, SEP, BOS, EOS)  # 9 tokens + sep = budget 10
    assert len(chunk) == 12 and chunk.ids[-2] == SEP and (chunk.ids[1:10] == 1000).all()


def test_one_huge_block_is_truncated_and_alone() -> None:
    chunks = pack_chunks(blocks_of([2, 50, 1]), 12, SEP, BOS, EOS)
    assert [c.blocks.tolist() for c in chunks] == [[0], [1], [2]]
    huge = chunks[1]
    assert len(huge) == 12  # budget - 1 tokens + sep + BOS + EOS
    assert huge.ids.tolist() == [BOS] + [1001] * 9 + [SEP, EOS]


def test_page_needing_several_chunks_keeps_every_block_once() -> None:
    lengths = [5, 7, 1, 0, 12, 3, 30, 2, 2, 9]
    chunks = pack_chunks(blocks_of(lengths), 16, SEP, BOS, EOS)
    assert len(chunks) > 3
    assert np.concatenate([c.blocks for c in chunks]).tolist() == list(range(len(lengths)))
    for chunk in chunks:
        assert len(chunk) <= 16 and (chunk.ids == SEP).sum() == len(chunk.blocks)


def test_without_bos_and_eos_the_budget_is_max_tokens() -> None:
    (chunk,) = pack_chunks(blocks_of([3, 3]), 8, SEP)
    assert chunk.ids.tolist() == [1000] * 3 + [SEP] + [1001] * 3 + [SEP]


def test_max_tokens_too_small_is_an_error() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        pack_chunks(blocks_of([1]), 3, SEP, BOS, EOS)


@pytest.mark.skipif(REF is None, reason="reference (pulpie 0.0.2) not installed")
@settings(max_examples=150, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), max_size=30),
    max_tokens=st.integers(4, 64),
    bos=st.sampled_from([None, BOS]),
    eos=st.sampled_from([None, EOS]),
)
def test_packing_equals_the_reference_packer(lengths, max_tokens, bos, eos) -> None:
    from pulpie.chunker import pack_chunks as reference

    blocks = blocks_of(lengths)
    ours = pack_chunks(blocks, max_tokens, SEP, bos, eos)
    theirs = reference([b.tolist() for b in blocks], max_tokens, SEP, bos, eos)
    assert [(c.ids.tolist(), c.blocks.tolist()) for c in ours] == [(ids, idx) for ids, idx in theirs]


def chunk(n: int, page: int = 0) -> Chunk:
    return Chunk(np.arange(n, dtype=np.int64) + 10, np.zeros(1, dtype=np.int64), page)


def test_batches_respect_the_token_budget_and_cover_every_chunk_once() -> None:
    lengths = [5, 300, 40, 41, 300, 8, 512, 39, 7, 120]
    batches = plan_batches(lengths, max_batch_tokens=600)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    for batch in batches:
        widths = [lengths[i] for i in batch]
        assert len(batch) == 1 or len(batch) * max(widths) <= 600
    firsts = [lengths[b[0]] for b in batches]
    assert firsts == sorted(firsts, reverse=True)  # longest first
    assert plan_batches([], 100) == []
    assert all(len(b) <= 2 for b in plan_batches(lengths, 10_000, max_batch_size=2))


def test_unsorted_batches_keep_input_order_within_the_budget() -> None:
    batches = plan_batches([10, 50, 10, 10, 40], max_batch_tokens=100, sort=False)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]  # 3 × 40 would exceed 100


def test_max_padding_keeps_very_different_lengths_apart() -> None:
    lengths = [4000, 3900, 2500, 2400, 100]
    assert [b.tolist() for b in plan_batches(lengths, 16384)] == [[0, 1, 2, 3], [4]]
    batches = plan_batches(lengths, 16384, max_padding=0.1)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    stats = PaddingStats()
    for batch in batches:
        stats.add([lengths[i] for i in batch])
    assert stats.waste <= 0.1


def test_a_chunk_longer_than_the_budget_runs_alone() -> None:
    batches = plan_batches([1000, 10, 10], max_batch_tokens=100)
    assert [len(b) for b in batches] == [1, 2]


def test_sorted_batches_of_mixed_lengths_waste_less_than_arrival_order() -> None:
    rng = np.random.default_rng(0)
    lengths = rng.integers(20, 512, 200).tolist()
    sorted_stats, arrival_stats = PaddingStats(), PaddingStats()
    for batch in plan_batches(lengths, max_batch_tokens=4096):
        sorted_stats.add([lengths[i] for i in batch])
    for start in range(0, len(lengths), 8):
        arrival_stats.add(lengths[start : start + 8])
    assert sorted_stats.real_tokens == arrival_stats.real_tokens == sum(lengths)
    assert sorted_stats.waste < 0.1 and 3 * sorted_stats.waste < arrival_stats.waste
    assert "padding" in str(sorted_stats)


def test_pad_batch_right_pads_with_pad_id_and_masks() -> None:
    ids, mask = pad_batch([chunk(3), chunk(5)], pad_id=7)
    assert ids.tolist() == [[10, 11, 12, 7, 7], [10, 11, 12, 13, 14]]
    assert mask.tolist() == [[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]


def test_sep_gather_matches_a_loop_over_rows() -> None:
    rng = np.random.default_rng(1)
    input_ids = rng.integers(0, 5, (3, 17))
    input_ids[1, :] = 0  # a row without any <|sep|>
    logits = rng.normal(size=(3, 17, 2)).astype(np.float32)
    logits[0, input_ids[0] == 4] = 0.5  # ties go to label 0 (other), as torch.argmax
    out = sep_gather(input_ids, logits, sep_id=4, main_label_id=1)
    expected_rows, expected_labels = [], []
    for row in range(3):
        for pos in range(17):
            if input_ids[row, pos] == 4:
                expected_rows.append((row, pos))
                expected_labels.append(int(np.argmax(logits[row, pos])))
    assert out.index.tolist() == [list(r) for r in expected_rows]
    assert out.label.tolist() == expected_labels
    assert 0 in out.label.tolist()
    z = np.exp(out.logits)
    np.testing.assert_allclose(out.main_prob, z[:, 1] / z.sum(axis=1), rtol=1e-6)
    empty = sep_gather(np.zeros((2, 4), dtype=np.int64), np.zeros((2, 4, 2)), sep_id=4)
    assert empty.logits.shape == (0, 2) and empty.label.shape == (0,) and empty.main_prob.shape == (0,)


def test_prefetch_keeps_order_and_runs_ahead_on_another_thread() -> None:
    threads = set()

    def produce():
        for i in range(6):
            threads.add(threading.current_thread().name)
            yield i

    assert list(prefetch(produce(), depth=2)) == list(range(6))
    assert threads == {"extract-trt-prefetch"}


def test_prefetch_reraises_the_producer_error_in_place() -> None:
    def produce():
        yield 1
        raise KeyError("broken page")

    seen = []
    with pytest.raises(KeyError, match="broken page"):
        for item in prefetch(produce()):
            seen.append(item)
    assert seen == [1]


def test_prefetch_stops_the_producer_when_closed_early() -> None:
    produced = []

    def produce():
        for i in range(1000):
            produced.append(i)
            yield i

    stream = prefetch(produce(), depth=1)
    assert next(stream) == 0
    stream.close()
    time.sleep(0.3)
    assert len(produced) < 10
