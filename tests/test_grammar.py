"""The token-level answer automaton (kernels.grammar) on a real byte-level BPE tokenizer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_trt.kernels.grammar import GrammarError, build_automaton, choose_main, masked_argmax
from extract_trt.runtime.labelers.prompts import COMPACT_ANSWER, JSON_ANSWER

import decoder_fixtures

FORMATS = {"json": JSON_ANSWER, "compact": COMPACT_ANSWER}


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(decoder_fixtures.tokenizer_dir() / "tokenizer.json"))
    tok.encode_special_tokens = True
    return tok


def _walk(auto, main):
    """Step through the automaton choosing ``main``; return the tokens and the kinds of states met."""
    state, tokens, kinds, k = auto.start(), [], [], 0
    while not auto.is_done(state):
        allowed = auto.allowed(state)
        if auto.is_choice(state):
            kinds.append("choice")
            assert len(allowed) == 2
            token = int(allowed[0] if main[k] else allowed[1])
            k += 1
        else:
            kinds.append("forced")
            assert len(allowed) == 1
            token = int(allowed[0])
        tokens.append(token)
        state = auto.advance(state, token)
    assert auto.allowed(state).size == 0
    return tokens, kinds


@settings(max_examples=25, deadline=None)
@given(fmt=st.sampled_from(sorted(FORMATS)), main=st.lists(st.booleans(), max_size=40), first=st.integers(1, 120))
def test_layout_equals_the_tokenization_of_the_whole_answer(tokenizer, fmt, main, first):
    ids = list(range(first, first + len(main)))
    answer_format = FORMATS[fmt]
    auto = build_automaton(tokenizer, answer_format.pieces(ids), eos_id=2)
    tokens, starts = auto.layout(main)
    assert tokens.tolist() == tokenizer.encode(answer_format.render(ids, main), add_special_tokens=False).ids
    assert tokenizer.decode(tokens.tolist()) == answer_format.render(ids, main)
    # Every choice token is one of the two candidates and says the label.
    assert all(tokens[s] == auto.choice_ids[0 if m else 1] for s, m in zip(starts, main))
    walked, kinds = _walk(auto, main)
    assert walked == tokens.tolist() + [2]
    assert kinds.count("choice") == len(main)
    assert auto.max_length() >= len(walked)


def test_empty_page_is_forced_all_the_way(tokenizer):
    auto = build_automaton(tokenizer, JSON_ANSWER.pieces([]), eos_id=2)
    tokens, kinds = _walk(auto, [])
    assert tokenizer.decode(tokens[:-1]) == "{}" and set(kinds) == {"forced"}


def test_tokens_outside_the_grammar_are_rejected(tokenizer):
    auto = build_automaton(tokenizer, COMPACT_ANSWER.pieces([1, 2]), eos_id=2)
    state = auto.start()
    bad = next(t for t in range(100) if t not in auto.allowed(state))
    with pytest.raises(GrammarError):
        auto.advance(state, bad)
    with pytest.raises(GrammarError):
        auto.layout([True])  # one label for two choices


def test_two_logit_choice_equals_masked_full_vocabulary_argmax():
    rng = np.random.default_rng(1)
    ids = np.array([57, 12], dtype=np.int64)
    for _ in range(200):
        logits = rng.normal(size=300).astype(np.float32)
        if rng.random() < 0.2:
            logits[ids[1]] = logits[ids[0]]  # ties go to the lower token id, as np.argmax
        expected = masked_argmax(logits, ids) == ids[0]
        assert bool(choose_main(logits[ids], ids)) == expected
    # The unmasked argmax is elsewhere; the mask confines it to the allowed tokens.
    logits = np.zeros(300, dtype=np.float32)
    logits[5] = 100.0
    assert masked_argmax(logits, ids) in ids.tolist()
