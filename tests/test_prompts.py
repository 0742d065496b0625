"""Prompts, chat templating and answer parsing of the decoder profiles (spec §2.1–§2.4)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from extract_trt.runtime.labelers.prompts import (
    DECODER_PROFILES,
    PROMPTS,
    QWEN3_CHAT,
    AnswerParseError,
    build_prompt,
    chat_template_from_tokenizer,
    labels_from_answer,
    parse_answer,
)
from extract_trt.runtime.labelers.prompts import COMPACT_ANSWER, JSON_ANSWER

SPEC = Path(__file__).resolve().parents[2] / "shared" / "docs" / "reference-spec.md"


def _spec_block(title: str) -> str:
    text = SPEC.read_text(encoding="utf-8")
    start = text.index("```\n", text.index(title)) + 4
    return text[start : text.index("\n```", start)]


def test_prompts_are_the_spec_strings():
    assert PROMPTS["short_compact"] == _spec_block("**`short_compact`**")
    # v0 ends with "/no_think" and a newline (the spec's code block omits the final newline).
    assert PROMPTS["v0"] == _spec_block("**`v0`**") + "\n"
    assert PROMPTS["v0"].endswith("/no_think\n") and not PROMPTS["short_compact"].endswith("\n")


def test_build_prompt_inserts_the_whole_html_once():
    html = '<html><head><meta charset="utf-8"></head><body><p _item_id="1">x <HTML> y</p></body></html>'
    prompt = build_prompt(html, "short_compact")
    assert prompt.endswith("Input HTML:\n" + html)
    assert prompt.count(html) == 1
    with pytest.raises(ValueError):
        build_prompt(html, "v9")


def test_profiles_pick_template_and_answer_format():
    v1, v11 = DECODER_PROFILES["dripper-v1"], DECODER_PROFILES["mineru-v1.1"]
    html = "<html><body></body></html>"
    assert v1.prompt_text(html, None) == ("", build_prompt(html, "v0"), "")
    prefix, prompt, suffix = v11.prompt_text(html, None)
    assert (prefix, suffix) == (QWEN3_CHAT.prefix, QWEN3_CHAT.suffix)
    assert QWEN3_CHAT.render(prompt).startswith("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
    assert QWEN3_CHAT.render(prompt).endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert v1.answer is JSON_ANSWER and v11.answer is COMPACT_ANSWER
    assert v1.require_main and not v11.require_main


def test_chat_template_is_rendered_from_the_tokenizer():
    from transformers import AutoTokenizer

    import decoder_fixtures

    tokenizer = AutoTokenizer.from_pretrained(decoder_fixtures.tokenizer_dir())
    assert chat_template_from_tokenizer(tokenizer) == QWEN3_CHAT


@pytest.mark.parametrize("fmt", [JSON_ANSWER, COMPACT_ANSWER])
def test_rendered_answers_parse_back(fmt):
    rng = np.random.default_rng(0)
    ids = list(range(1, 38))
    main = rng.random(len(ids)) < 0.5
    answer = fmt.render(ids, main)
    assert (labels_from_answer(parse_answer(answer), ids) == main).all()
    assert fmt.render([], []) in ("{}", "<answer></answer>")


def test_answer_strings_are_the_reference_formats():
    assert JSON_ANSWER.render([1, 2], [True, False]) == '{"1":"main","2":"other"}'
    assert COMPACT_ANSWER.render([1, 2, 10], [True, False, True]) == "<answer>1main2other10main</answer>"


def test_json_parsing_rules():
    assert parse_answer('noise {"1": "main", "2": "other"} tail') == {"1": "main", "2": "other"}
    # Truncated output: ever shorter prefixes closed with "}" until one parses.
    assert parse_answer('{"1":"main","2":"other","3":"ma') == {"1": "main", "2": "other"}
    assert parse_answer('{"1":"main","2":"oth') == {"1": "main"}
    with pytest.raises(AnswerParseError):
        parse_answer("{garbage")
    with pytest.raises(AnswerParseError):
        parse_answer('{"1":"other"}', require_main=True)


def test_compact_parsing_rules():
    assert parse_answer("<answer>1main2other</answer>") == {"1": "main", "2": "other"}
    assert parse_answer("1main 2other 1other") == {"1": "other", "2": "other"}  # later duplicates win
    assert parse_answer("1other2other") == {"1": "other", "2": "other"}  # v1.1: no main is fine
    with pytest.raises(AnswerParseError):
        parse_answer("<answer></answer>")


def test_labels_from_answer_keys_are_strings_and_missing_is_other():
    assert labels_from_answer({"1": "main", "3": "main", "x": "main"}, [1, 2, 3]).tolist() == [True, False, True]
    assert re.fullmatch(r"\d+", "12")  # ids are decimal strings in both formats
