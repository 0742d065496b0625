"""Script source that a page shows as text: never main content outside a code block.

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
content. A block in a ``noscript`` whose text starts with a tag and holds at least two is such markup (on the
shared pages: 41 blocks on 11 pages, none of them in a ground truth; a ``noscript`` that the parser reads as
elements, as forum software serves its posts to crawlers, has plain text and is left to the model).
"""

from __future__ import annotations

import re

import numpy as np

from extract_trt.runtime.labelers.paragraphs import CODE_TAGS
from extract_trt.runtime.types import Block, PageBlocks

__all__ = ["drop_script_text", "is_noscript_markup", "is_script_text"]

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
    """Whether ``block`` sits in a ``<noscript>`` and its text is HTML markup (it starts with a tag and holds at
    least :data:`MIN_MARKUP_TAGS`)."""
    if block.tag != "noscript" and ">noscript>" not in f"{block.tag_path}>":
        return False
    text = block.text.lstrip()
    return text.startswith("<") and len(_MARKUP_TAG.findall(text, 0, 2000)) >= MIN_MARKUP_TAGS


def drop_script_text(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """``main`` with every main block that :func:`is_script_text` or :func:`is_noscript_markup` made other."""
    kept = main.copy()
    for i in np.flatnonzero(main):
        block = page.blocks[i]
        if is_script_text(block) or is_noscript_markup(block):
            kept[i] = False
    return kept
