"""Token-level automaton of a labeler answer (``{"1":"main",…}`` or ``<answer>1main…</answer>``).

Built per page from the page's **block ids** and the tokenizer, never from the page text, so nothing in
the page can steer it. The answer is a fixed sequence

    F0  C1  F1  C2  F2 … CN  FN  [EOS]

of forced token runs ``Fk`` (braces, quotes, the digits of the next id, separators, the closing tag) and
choices ``Ck`` between the tokens of ``main`` and of ``other``. Only the *first* token of a choice is
decided by the model (the two words start with different bytes, so their first tokens differ); the rest
of the word is forced. Forced runs are tokenized piece by piece: for tokenizers that split letters from
digits and punctuation before BPE (Qwen, GPT-2 style), that is exactly the tokenization of the whole
answer string (the tests check it).

Two views of the same automaton:

* the **stepwise** view (:meth:`AnswerAutomaton.start`, :meth:`allowed`, :meth:`advance`) that a naive
  one-token-per-forward-pass decoder walks with :func:`masked_argmax` over the full vocabulary (the NumPy
  reference);
* the **layout** view (:meth:`AnswerAutomaton.layout`) that jump-forward and speculative decoding use: for a
  given assignment of labels, the answer tokens and the index of each choice token, so that all forced
  tokens up to a choice go into one forward pass and a choice compares just two logits
  (:func:`choose_main`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["AnswerAutomaton", "GrammarError", "State", "build_automaton", "choice_words", "choose_main", "masked_argmax"]

CHOICE_WORDS = ("main", "other")


class GrammarError(ValueError):
    """The tokenizer cannot express the grammar, or a token outside the grammar was fed."""


@dataclass(frozen=True, slots=True)
class State:
    """Position in the stepwise view: inside forced run ``run`` (``word`` None) at ``offset``, or inside
    the word of choice ``run + 1`` (``word`` 0 = main, 1 = other) at ``offset`` ≥ 1."""

    run: int
    offset: int
    word: int | None = None


class AnswerAutomaton:
    """The answer grammar of one page as token ids (see the module docstring)."""

    def __init__(self, runs: Sequence[np.ndarray], words: tuple[np.ndarray, np.ndarray], eos_id: int | None) -> None:
        if len(words[0]) == 0 or len(words[1]) == 0 or words[0][0] == words[1][0]:
            raise GrammarError("the first tokens of 'main' and 'other' must exist and differ")
        if any(len(run) == 0 for run in runs[:-1]) or (len(runs) > 1 and len(runs[0]) == 0):
            raise GrammarError("every forced run before a choice needs at least one token")
        self.runs = [np.asarray(r, dtype=np.int64) for r in runs]
        self.words = (np.asarray(words[0], dtype=np.int64), np.asarray(words[1], dtype=np.int64))
        self.eos_id = eos_id
        self.n_choices = len(runs) - 1
        self.choice_ids = np.array([self.words[0][0], self.words[1][0]], dtype=np.int64)

    # ── layout view ──────────────────────────────────────────────────────────────

    def layout(self, main: Sequence[bool] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Answer tokens (without EOS) for labels ``main`` and ``starts[k]`` = index of choice k's token."""
        if len(main) != self.n_choices:
            raise GrammarError(f"{len(main)} labels for {self.n_choices} choices")
        parts = [self.runs[0]]
        starts = np.empty(self.n_choices, dtype=np.int64)
        length = len(self.runs[0])
        for k, is_main in enumerate(main):
            word = self.words[0] if is_main else self.words[1]
            starts[k] = length
            parts.append(word)
            parts.append(self.runs[k + 1])
            length += len(word) + len(self.runs[k + 1])
        return np.concatenate(parts), starts

    def max_length(self) -> int:
        """Tokens of the longest possible answer, EOS included (for the context-length check)."""
        longest = max(len(self.words[0]), len(self.words[1]))
        return sum(len(r) for r in self.runs) + self.n_choices * longest + (self.eos_id is not None)

    # ── stepwise view ────────────────────────────────────────────────────────────

    def start(self) -> State:
        return State(0, 0)

    def is_done(self, state: State) -> bool:
        return state.word is None and state.run == self.n_choices and state.offset >= self._last_run_length()

    def is_choice(self, state: State) -> bool:
        return state.word is None and state.run < self.n_choices and state.offset == len(self.runs[state.run])

    def allowed(self, state: State) -> np.ndarray:
        """Token ids allowed next: one (forced) or the two choice tokens; empty when done."""
        if state.word is not None:
            return self.words[state.word][state.offset : state.offset + 1]
        if self.is_choice(state):
            return self.choice_ids
        run = self.runs[state.run]
        if state.offset < len(run):
            return run[state.offset : state.offset + 1]
        if state.offset == len(run) and self.eos_id is not None:
            return np.array([self.eos_id], dtype=np.int64)
        return np.empty(0, dtype=np.int64)

    def advance(self, state: State, token: int) -> State:
        if token not in self.allowed(state):
            raise GrammarError(f"token {token} is not allowed in state {state}")
        if self.is_choice(state):
            word = 0 if token == self.choice_ids[0] else 1
            return self._after_word_token(state.run, word, 1)
        if state.word is not None:
            return self._after_word_token(state.run, state.word, state.offset + 1)
        return State(state.run, state.offset + 1)

    def _after_word_token(self, run: int, word: int, offset: int) -> State:
        if offset < len(self.words[word]):
            return State(run, offset, word)
        return State(run + 1, 0)

    def _last_run_length(self) -> int:
        return len(self.runs[-1]) + (self.eos_id is not None)


def build_automaton(
    tokenizer, pieces: Sequence[str], eos_id: int | None = None, words: tuple[np.ndarray, np.ndarray] | None = None
) -> AnswerAutomaton:
    """The automaton for the literal ``pieces`` around the choices (``AnswerFormat.pieces(ids)``), using a
    ``tokenizers.Tokenizer``; ``words``: the tokens of ``main``/``other`` (:func:`choice_words`, computed
    once per tokenizer by callers that build many automata)."""
    runs = [np.asarray(e.ids, dtype=np.int64) for e in tokenizer.encode_batch(list(pieces), add_special_tokens=False)]
    return AnswerAutomaton(runs, words if words is not None else choice_words(tokenizer), eos_id)


def choice_words(tokenizer) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of ``main`` and ``other``."""
    main, other = tokenizer.encode_batch(list(CHOICE_WORDS), add_special_tokens=False)
    return np.asarray(main.ids, dtype=np.int64), np.asarray(other.ids, dtype=np.int64)


def masked_argmax(logits: np.ndarray, allowed: np.ndarray) -> int:
    """NumPy reference of constrained greedy decoding: argmax over the full vocabulary after every
    token outside ``allowed`` is set to −inf (ties: the lowest token id, as ``np.argmax``)."""
    mask = np.full(logits.shape[-1], -np.inf, dtype=np.float64)
    mask[allowed] = 0.0
    return int(np.argmax(logits.astype(np.float64) + mask))


def choose_main(choice_logits: np.ndarray, choice_ids: np.ndarray) -> np.ndarray:
    """Main/other from the two candidate logits ``[..., 2]`` (main, other) only — the same decision as
    :func:`masked_argmax` over the two choice tokens, ties included."""
    lm = choice_logits[..., 0]
    lo = choice_logits[..., 1]
    return (lm > lo) | ((lm == lo) & (choice_ids[0] < choice_ids[1]))
