"""The Markdown conversion extract-trt used before it wrote Markdown from the tree: html2text on the main
HTML (``bodywidth=0``, unicode kept, inline links, fenced code), spacer images removed first. Tests and
``bench/pipeline.py`` compare the tree converter with it by word bags, so no content is lost.

Removed before comparing, because the tree converter differs on purpose: ``<select>`` option lists
(country pickers, archive menus; html2text wrote them as one run-together line), links without a word
in their text (html2text writes icon links as ``[__](url)``: the ``__`` is an empty ``<i>``), and the
``*[ABBR]: title`` lines html2text appends for ``<abbr title>``."""

from __future__ import annotations

import re
from collections import Counter

import html2text

from extract_trt.runtime.html.convert import remove_spacer_images

_WORD = re.compile(r"[^\W_]+")  # emphasis marks are not part of words
_BLANK_RUNS = re.compile(r"\n{3,}")
_SELECT = re.compile(r"<select\b.*?</select>", re.IGNORECASE | re.DOTALL)
_WORDLESS_LINK = re.compile(r"(?<!!)\[(?:[^\w\[\]]|_)*\]\((?:[^()\s]|\([^()\s]*\))*(?: \"[^\"]*\")?\)")
_ABBR_DEFINITION = re.compile(r"^ *\*\[[^\]]*\]: .*$", re.MULTILINE)


def html2text_markdown(main_html: str, *, links: bool = True, images: bool = True) -> str:
    if not main_html or not main_html.strip():
        return ""
    conv = html2text.HTML2Text(baseurl="", bodywidth=0)
    conv.unicode_snob = True
    conv.ignore_links = not links
    conv.ignore_images = not images
    conv.inline_links = True
    conv.wrap_links = conv.wrap_list_items = conv.wrap_tables = False
    conv.backquote_code_style = True
    html = _SELECT.sub("", main_html) if "<select" in main_html else main_html
    md = conv.handle(remove_spacer_images(html) if images else html)
    md = _ABBR_DEFINITION.sub("", _WORDLESS_LINK.sub("", md))
    return _BLANK_RUNS.sub("\n\n", md.replace("\xa0", " ")).strip()


def words(text: str) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(text))


def word_f1(ours: str, reference: str) -> float:
    """F1 of the word bags of two texts (1.0 when both are empty)."""
    a, b = words(ours), words(reference)
    if not a and not b:
        return 1.0
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)
