"""The text protocol of the Dripper-format decoder labelers: prompts, chat templating, answer formats
and answer parsing (spec §2.1–§2.4).

Two profiles (:data:`DECODER_PROFILES`), chosen by a model directory's manifest:

* ``dripper-v1`` — Dripper v1.0 (Qwen3-0.6B): v1.0 simplifier, the ``v0`` prompt with **no** chat
  template, JSON answer ``{"1":"main","2":"other"}`` (no spaces, as the v1.0 state machine forces it);
  an answer without any ``main`` is a parse error (the reference then falls back);
* ``mineru-v1.1`` — MinerU-HTML v1.1: v1.1 simplifier, the ``short_compact`` prompt inside the single
  system + user chat template with the generation prompt (what Pulpie's harness ran), compact answer
  ``<answer>1main2other</answer>``.

The chat template is kept as a rendered ``prefix`` + ``suffix`` around the user message (rendered once at
export from the checkpoint's own Jinja template, see :func:`chat_template_from_tokenizer`), so the runtime
needs no Jinja and no transformers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from extract_trt.errors import LabelerError

__all__ = [
    "ANSWER_FORMATS",
    "DECODER_PROFILES",
    "PROMPTS",
    "QWEN3_CHAT",
    "SYSTEM_PROMPT",
    "AnswerFormat",
    "AnswerParseError",
    "ChatTemplate",
    "DecoderProfile",
    "build_prompt",
    "chat_template_from_tokenizer",
    "decoder_profile",
    "labels_from_answer",
    "parse_answer",
]

HTML_SLOT = "<HTML>"
SYSTEM_PROMPT = "You are a helpful assistant."

# Dripper v1.0 (`dripper/inference/prompt.py`, = mineru_html `v0`): ends with "/no_think" and a newline.
PROMPT_V0 = """As a front-end engineering expert in HTML, your task is to analyze the given HTML structure and accurately classify elements with the _item_id attribute as either "main" (primary content) or "other" (supplementary content). Your goal is to precisely extract the primary content of the page, ensuring that only the most relevant information is labeled as "main" while excluding navigation, metadata, and other non-essential elements.
Guidelines for Classification:
Primary Content ("main")
Elements that constitute the core content of the page should be classified as "main". These typically include:
✅ For Articles, News, and Blogs:
The main text body of the article, blog post, or news content.
Images embedded within the main content that contribute to the article.
✅ For Forums & Discussion Threads:
The original post in the thread.
Replies and discussions that are part of the main conversation.
✅ For Q&A Websites:
The question itself posted by a user.
Answers to the question and replies to answers that contribute to the discussion.
✅ For Other Content-Based Pages:
Any rich text, paragraphs, or media that serve as the primary focus of the page.
Supplementary Content ("other")
Elements that do not contribute to the primary content but serve as navigation, metadata, or supporting information should be classified as "other". These include:
❌ Navigation & UI Elements:
Menus, sidebars, footers, breadcrumbs, and pagination links.
"Skip to content" links and accessibility-related text.
❌ Metadata & User Information:
Article titles, author names, timestamps, and view counts.
Like counts, vote counts, and other engagement metrics.
❌ Advertisements & Promotional Content:
Any section labeled as "Advertisement" or "Sponsored".
Social media sharing buttons, follow prompts, and external links.
❌ Related & Suggested Content:
"Read More", "Next Article", "Trending Topics", and similar sections.
Lists of related articles, tags, and additional recommendations.
Task Instructions:
You will be provided with a simplified HTML structure containing elements with an _item_id attribute. Your job is to analyze each element's function and determine whether it should be classified as "main" or "other".
Response Format:
Return a JSON object where each key is the _item_id value, and the corresponding value is either "main" or "other", as in the following example:
{"1": "other","2": "main","3": "other"}
🚨 Important Notes:
Do not include any explanations in the output—only return the JSON.
Ensure high accuracy by carefully distinguishing between primary content and supplementary content.
Err on the side of caution—if an element seems uncertain, classify it as "other" unless it clearly belongs to the main content.

Input HTML:
<HTML>

Output format should be a JSON-formatted string representing a dictionary where keys are item_id strings and values are either 'main' or 'other'. Make sure to include ALL item_ids from the input HTML./no_think
"""

# MinerU-HTML v1.1 default (`short_compact`), no trailing newline.
PROMPT_SHORT_COMPACT = """As an HTML expert, classify elements with "_item_id" as "main" or "other", keeping only the main content and removing nav, metadata, etc.
Guidelines:
"Main": Includes primary content like article text, images in the article, original posts in forums, Q&A questions, and answers.
"Other": Includes navigation, metadata, ads, user info, and related content (e.g., sidebars, timestamps, suggested articles).
Output Format:
Return each _item_id and its corresponding category in the following format:
{_item_id}{category}{_item_id}{category}...
Here, {_item_id} may be 1, 2, 3..., and {category} is either "main" or "other", as shown in the example below:
"1main2other3other4main"
Input HTML:
<HTML>"""

PROMPTS = {"v0": PROMPT_V0, "short_compact": PROMPT_SHORT_COMPACT}


def build_prompt(simplified_html: str, version: str) -> str:
    """The full prompt of ``version`` (``v0``/``short_compact``) around the whole simplified HTML."""
    try:
        head, tail = PROMPTS[version].split(HTML_SLOT)
    except KeyError:
        raise ValueError(f"unknown prompt version {version!r}; use one of {sorted(PROMPTS)}") from None
    return head + simplified_html + tail


# ── chat template ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class ChatTemplate:
    """A chat template rendered for one system message and one user message, with the generation
    prompt: everything before the user message (``prefix``) and after it (``suffix``)."""

    prefix: str
    suffix: str

    def render(self, user: str) -> str:
        return self.prefix + user + self.suffix

    def to_dict(self) -> dict[str, str]:
        return {"prefix": self.prefix, "suffix": self.suffix}

    @classmethod
    def from_dict(cls, data: dict[str, str]) -> ChatTemplate:
        return cls(prefix=str(data["prefix"]), suffix=str(data["suffix"]))


# Qwen3's template for [system, user] with enable_thinking=False and add_generation_prompt=True.
QWEN3_CHAT = ChatTemplate(
    prefix=f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n",
    suffix="<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
)

_SENTINEL = "\u2063EXTRACT_TRT_USER_MESSAGE\u2063"


def chat_template_from_tokenizer(tokenizer) -> ChatTemplate:
    """Render a Hugging Face tokenizer's own chat template for the single system + user message
    (``enable_thinking=False``, ``add_generation_prompt=True``) and split it around the user message."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": _SENTINEL}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, enable_thinking=False)
    if text.count(_SENTINEL) != 1:
        raise ValueError("the tokenizer's chat template does not place the user message exactly once")
    prefix, suffix = text.split(_SENTINEL)
    return ChatTemplate(prefix, suffix)


# ── answer formats ─────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class AnswerFormat:
    """The label grammar of an answer: literal text around each block's choice of ``main``/``other``.

    ``pieces(ids)`` returns the ``N + 1`` literals: ``pieces[k]`` comes before the choice for ``ids[k]``
    and ``pieces[N]`` closes the answer. Block ids come from the simplifier, never from the page text.
    """

    name: str  # "json" | "compact"
    open: str  # before the first id
    before_id: str  # after a choice, before the next id
    after_id: str  # between an id and its choice
    close: str  # after the last choice
    empty: str  # the whole answer when there are no blocks

    def pieces(self, ids: Sequence[int]) -> list[str]:
        if not ids:
            return [self.empty]
        out = [f"{self.open}{ids[0]}{self.after_id}"]
        out.extend(f"{self.before_id}{i}{self.after_id}" for i in ids[1:])
        out.append(self.close)
        return out

    def render(self, ids: Sequence[int], main: Sequence[bool]) -> str:
        """The answer text for given labels (drafts, tests)."""
        pieces = self.pieces(ids)
        words = ["main" if m else "other" for m in main]
        return "".join(p + w for p, w in zip(pieces, words)) + pieces[-1]


JSON_ANSWER = AnswerFormat("json", open='{"', before_id='","', after_id='":"', close='"}', empty="{}")
COMPACT_ANSWER = AnswerFormat("compact", open="<answer>", before_id="", after_id="", close="</answer>", empty="<answer></answer>")
ANSWER_FORMATS = {f.name: f for f in (JSON_ANSWER, COMPACT_ANSWER)}


# ── parsing (spec §2.4) ─────────────────────────────────────────────────────────────

_COMPACT_PAIR = re.compile(r"(\d+)(main|other)")


class AnswerParseError(LabelerError):
    """A model answer that the reference parser would reject (the page then falls back)."""


def parse_answer(response: str, *, require_main: bool = False) -> dict[str, str]:
    """Parse a model answer by the reference rules: JSON (first ``{`` to last ``}``, then ever shorter
    prefixes closed with ``}``) when it contains ``{``, else compact ``(\\d+)(main|other)`` pairs (later
    duplicates win). Keys stay strings. ``require_main``: v1.0 rejects an answer without ``main``."""
    if "{" in response:
        start = response.index("{")
        end = response.rfind("}")
        span = response[start : end + 1] if end > start else response[start:]
        parsed = _json_object(span)
        if parsed is None:
            raise AnswerParseError(f"no JSON object in the answer {response[:80]!r}")
    else:
        parsed = {m.group(1): m.group(2) for m in _COMPACT_PAIR.finditer(response)}
        if not parsed:
            raise AnswerParseError(f"no id/label pairs in the answer {response[:80]!r}")
    if require_main and "main" not in parsed.values():
        raise AnswerParseError("the answer labels no block main")
    return parsed


def _json_object(span: str) -> dict | None:
    try:
        value = json.loads(span)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    for k in range(len(span), 1, -1):
        try:
            value = json.loads(span[:k] + "}")
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


def labels_from_answer(answer: dict[str, str], item_ids: Sequence[int]) -> np.ndarray:
    """One bool per block: ``answer[str(id)] == "main"`` (missing ids are other)."""
    return np.fromiter((answer.get(str(i)) == "main" for i in item_ids), dtype=bool, count=len(item_ids))


# ── profiles ─────────────────────────────────────────────────────────────────────


@dataclass(frozen=True, slots=True)
class DecoderProfile:
    """Which simplifier, prompt, chat templating and answer format a decoder model was trained with."""

    name: str
    simplifier: str  # SimplifyProfile name
    prompt: str  # PROMPTS key
    chat: bool  # wrap the prompt in the single system + user chat template
    answer: AnswerFormat
    require_main: bool  # an answer without "main" is a parse error (→ fallback)

    def prompt_text(self, simplified_html: str, template: ChatTemplate | None) -> tuple[str, str, str]:
        """``(template prefix, prompt, template suffix)``. The page text only ever sits in the prompt, which
        the labeler tokenizes with special-token strings as plain text; the template parts carry the real
        special tokens. Without chat templating both template parts are empty."""
        prompt = build_prompt(simplified_html, self.prompt)
        if not self.chat:
            return "", prompt, ""
        template = template or QWEN3_CHAT
        return template.prefix, prompt, template.suffix


DECODER_PROFILES = {
    p.name: p
    for p in (
        DecoderProfile("dripper-v1", "dripper-v1", "v0", chat=False, answer=JSON_ANSWER, require_main=True),
        DecoderProfile("mineru-v1.1", "mineru-v1.1", "short_compact", chat=True, answer=COMPACT_ANSWER, require_main=False),
    )
}


def decoder_profile(name: str) -> DecoderProfile:
    try:
        return DECODER_PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown decoder profile {name!r}; use one of {sorted(DECODER_PROFILES)}") from None
