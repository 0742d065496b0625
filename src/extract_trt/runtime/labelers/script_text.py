"""Text that is no page content whatever the model reads in it: script source, noscript markup, filler.

The simplifier drops ``<script>`` and ``<style>`` elements, yet broken markup can turn their source into
text that every HTML parser keeps: an attribute quote left open (``<div class="box><script>…``) swallows
the ``<script>`` tag into the attribute, and the source after it becomes the div's text. The model rarely
saw such blocks and may score them like any text of the article around them. A block is script text when
it is long enough, dense in ``{};=()``, and shows several different marks of JavaScript or CSS source;
code shown on purpose sits in (or holds) ``<pre>`` or ``<code>`` and is left alone, and prose that names a function
or two (``document.getElementById()``) has too few marks and too little punctuation.

Markup that a ``<noscript>`` shows as text is source too: pages saved from a browser's DOM (where scripting
was on, so a ``noscript``'s content was text) come back with that content escaped, and the block reads
``<div style="position:absolute;"><img width=1 …`` — tracking pixels and "JavaScript is off" notices, never
content. A block in a ``noscript`` whose text starts with a tag and holds at least two, or is one whole tag (a
tracking pixel), is such markup (on the shared pages: 41 and 15 blocks on 11 and 11 pages, none of them in a
ground truth; a ``noscript`` that the parser reads as
elements, as forum software serves its posts to crawlers, has plain text and is left to the model).

Filler is a block of words that are nearly all one word: font-measuring scripts (fingerprinting, text fitting)
write a ``<div>`` of "word word word …" into the page, and a page saved from a browser's DOM keeps it. The
model has little to read in it, and one model scored such a 1,000-character block 0.98, whereupon the page's
own cut (weighted by text length) rose above the headlines. Prose, lists, tables and lyrics repeat words far
less. Words are what whitespace separates, so a table of dates and figures run together is no filler.

Such blocks get p(main) 0 before the page is cut (:func:`not_content`), so they neither pass the cut nor move it.
"""

from __future__ import annotations

import re

import numpy as np

from extract_trt.runtime.labelers.paragraphs import CODE_TAGS
from extract_trt.runtime.types import Block, PageBlocks

__all__ = ["is_filler_text", "is_noscript_markup", "is_script_text", "not_content"]

MIN_CHARS = 30
MIN_PUNCTUATION_SHARE = 0.05  # of the text's characters among {};=()
MIN_MARK_KINDS = 3  # different kinds of source marks, so that one stray "&&" or "=>" in prose decides nothing
_PUNCTUATION = "{};=()"
_MARK_KINDS = tuple(
    re.compile(p)
    for p in (
        r"\bfunction\s*[\w$]*\s*\(|=>",  # a function
        r"\b(?:var|let|const)\s+[\w$]+\s*=",  # a declaration
        r"\b(?:document|window|console|navigator)\.\w",  # the browser's objects
        r"\)\s*;",  # a call ending a statement
        r"\}\s*\)",  # a closure closed
        r"\bif\s*\(|===|!==|&&|\|\|",  # a condition
        r"\.push\(|\bnew\s+[A-Z][\w$]*\(|\breturn\b[^.]{0,40};",  # calls and returns
        r"[\w-]+\s*:\s*[^;{}\n]{1,40};\s*[\w-]+\s*:",  # CSS declarations
        r"[.#]?[\w-]+\s*\{[^{}]*:[^{}]*\}",  # a CSS rule
        r":\s*(?:#[0-9a-fA-F]{3,6}|-?\d+(?:\.\d+)?(?:px|em|rem|%|vh|vw))(?![\w-])",  # a CSS colour or length
    )
)
_MARKUP_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*[\s/>]")
MIN_MARKUP_TAGS = 2
MIN_FILLER_WORDS = 20
MAX_FILLER_DISTINCT_SHARE = 0.1  # distinct words per word: prose of 20+ words stays far above it
FILLER_SAMPLE_CHARS = 200  # filler shows itself in its first words; bounds the cost on long prose


def is_script_text(block: Block) -> bool:
    """Whether ``block`` reads as JavaScript or CSS source shown as text, with no ``<pre>``/``<code>`` around
    or inside it."""
    text = block.text
    if len(text) < MIN_CHARS or block.tag in CODE_TAGS:
        return False
    if sum(text.count(c) for c in _PUNCTUATION) < MIN_PUNCTUATION_SHARE * len(text):
        return False
    if any(f">{tag}>" in f">{block.tag_path}>" or f"<{tag}" in block.html for tag in CODE_TAGS):
        return False
    kinds = 0
    for mark in _MARK_KINDS:
        if mark.search(text):
            kinds += 1
            if kinds >= MIN_MARK_KINDS:
                return True
    return False


def is_noscript_markup(block: Block) -> bool:
    """Whether ``block`` sits in a ``<noscript>`` and its text is HTML markup: it starts with a tag and holds at
    least :data:`MIN_MARKUP_TAGS`, or it is one whole tag (a tracking pixel's ``<img height="1" …>``)."""
    if block.tag != "noscript" and ">noscript>" not in f"{block.tag_path}>":
        return False
    text = block.text.strip()
    if not text.startswith("<"):
        return False
    tags = len(_MARKUP_TAG.findall(text, 0, 2000))
    return tags >= MIN_MARKUP_TAGS or (tags == 1 and text.endswith(">") and text.count("<") == 1)


def is_filler_text(block: Block) -> bool:
    """Whether the first :data:`FILLER_SAMPLE_CHARS` characters of ``block`` hold at least :data:`MIN_FILLER_WORDS`
    words (whitespace-separated, case aside) of which at most :data:`MAX_FILLER_DISTINCT_SHARE` are distinct:
    "word word word …"."""
    text = block.text
    if len(text) < MIN_FILLER_WORDS * 2:
        return False
    words = text[:FILLER_SAMPLE_CHARS].lower().split()
    return len(words) >= MIN_FILLER_WORDS and len(set(words)) <= MAX_FILLER_DISTINCT_SHARE * len(words)


def not_content(page: PageBlocks, candidates: np.ndarray) -> np.ndarray:
    """Per block of ``page``: whether it is a candidate (a block the model scored high enough to be kept) and
    script text, noscript markup or filler; blocks scored below every cut are not looked at."""
    flags = np.zeros(len(page.blocks), dtype=bool)
    for i in np.flatnonzero(candidates):
        block = page.blocks[i]
        flags[i] = is_script_text(block) or is_noscript_markup(block) or is_filler_text(block)
    return flags
