"""Peer extractors, run through the same harness as ours (optional ``peers`` extra).

Each peer turns one page into the string that is scored: ``want="text"`` → its plain text;
``want="markdown"`` → the WebMainBench conversion (:func:`~extract_trt.runtime.html.convert.benchmark_markdown`)
of its main HTML when it produces HTML, else its text (a text-only extractor is scored on its text, as in
the WebMainBench harness, spec §4.3). Settings are the peers' defaults except where noted:

============== ================================================================ ==========================
peer           call                                                             text / markdown source
============== ================================================================ ==========================
trafilatura    ``trafilatura.extract(html, url=url)`` (defaults: txt, tables,   its txt / html2text of
               comments on); Markdown: same with ``output_format="html"``       its ``html`` output
resiliparse    ``extract_plain_text(HTMLTree.parse(html), main_content=True,    text only
               alt_texts=False, links=False, comments=False)`` — the settings of
               WebMainBench's "Resiliparse TEXT" row
readability    ``readability.Document(html, url=url).summary()`` (readability-lxml) html → our ``to_text`` /
                                                                                html2text
justext        ``justext.justext(html, get_stoplist(<page language>))``, non-     text only
               boilerplate paragraphs joined by newlines; English stoplist when
               the page's language has none (jusText needs a stoplist chosen)
rs-trafilatura ``rs_trafilatura.extract(html, url=url)`` → ``main_content`` /      text / html2text of
               ``content_html``. Its PyPI wheel exists for CPython 3.12 only.   ``content_html``
============== ================================================================ ==========================

Metadata (title, author, publication date) is scored for the peers that extract it: trafilatura, with
``trafilatura.extract_metadata(html, default_url=url)`` (what ``bare_extraction(with_metadata=True)``
runs), timed apart from its text extraction.

``load_peer(name, comments=…)``: ``True``/``False`` asks the peers that have a switch for reader
comments (trafilatura's ``include_comments``, resiliparse's ``comments``) to include or leave them out;
``None`` keeps the settings above.

A peer that is not installed raises :class:`PeerUnavailable` with the reason when it is loaded, so the
harness can skip it with a clear message. A peer whose native code aborts on a page raises :class:`PeerCrash`
(an ``Exception``), so the harness scores that page as the peer's error and goes on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module, metadata
from typing import Any

from extract_trt.eval.datasets import EvalRecord
from extract_trt.runtime.html.convert import benchmark_markdown, to_text

__all__ = ["PEER_NAMES", "Peer", "PeerCrash", "PeerUnavailable", "is_peer", "load_peer"]


class PeerUnavailable(ImportError):
    """A peer extractor is not installed (or cannot run on this Python); the message says why."""


class PeerCrash(RuntimeError):
    """A peer's native code aborted on one page (e.g. a Rust panic in rs-trafilatura)."""


@dataclass(frozen=True, slots=True)
class Peer:
    """A loaded peer: ``extract(record, want)`` returns the string scored for that page."""

    name: str
    version: str
    extract: Callable[[EvalRecord, str], str]
    metadata: Callable[[EvalRecord], dict[str, Any]] | None = None  # title, author, date, … of the page


def _contained(extract: Callable[[EvalRecord, str], str]) -> Callable[[EvalRecord, str], str]:
    """``extract``, with an abort of its native code on a page raised as :class:`PeerCrash`: pyo3 raises a Rust
    panic as ``PanicException``, a ``BaseException`` that ``except Exception`` lets through, so one page of
    rs-trafilatura slicing a string inside a CJK character ended a whole evaluation."""

    def call(record: EvalRecord, want: str) -> str:
        try:
            return extract(record, want)
        except BaseException as exc:
            if isinstance(exc, (Exception, KeyboardInterrupt, SystemExit, GeneratorExit)):
                raise
            raise PeerCrash(f"{type(exc).__name__}: {exc}") from exc

    return call


def _html_or_text(main_html: str | None, text: str | None, record: EvalRecord, want: str) -> str:
    if want == "markdown" and main_html:
        return benchmark_markdown(main_html, record.url)
    if text is not None:
        return text
    return to_text(main_html or "")


def _trafilatura(comments: bool | None) -> Callable[[EvalRecord, str], str]:
    import trafilatura

    options = {} if comments is None else {"include_comments": comments}

    def extract(record: EvalRecord, want: str) -> str:
        if want == "markdown":
            main_html = trafilatura.extract(record.html, url=record.url, output_format="html", **options)
            return _html_or_text(main_html, None, record, want)
        return trafilatura.extract(record.html, url=record.url, **options) or ""

    return extract


def _trafilatura_metadata() -> Callable[[EvalRecord], dict[str, Any]]:
    import trafilatura

    def extract_metadata(record: EvalRecord) -> dict[str, Any]:
        document = trafilatura.extract_metadata(record.html, default_url=record.url)
        return document.as_dict() if document is not None else {}

    return extract_metadata


def _resiliparse(comments: bool | None) -> Callable[[EvalRecord, str], str]:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    def extract(record: EvalRecord, want: str) -> str:
        tree = HTMLTree.parse(record.html)
        return extract_plain_text(tree, main_content=True, alt_texts=False, links=False, comments=bool(comments))

    return extract


def _readability(comments: bool | None) -> Callable[[EvalRecord, str], str]:
    from readability import Document

    def extract(record: EvalRecord, want: str) -> str:
        return _html_or_text(Document(record.html, url=record.url).summary(), None, record, want)

    return extract


# jusText stoplist names for the ISO 639-1 codes of the shared and WebMainBench pages.
_JUSTEXT_LANGUAGES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "pl": "Polish", "ru": "Russian", "cs": "Czech", "sv": "Swedish", "da": "Danish",
    "no": "Norwegian_Bokmal", "nb": "Norwegian_Bokmal", "fi": "Finnish", "hu": "Hungarian", "tr": "Turkish",
    "uk": "Ukrainian", "ro": "Romanian", "el": "Greek", "id": "Indonesian", "vi": "Vietnamese", "ca": "Catalan",
    "hr": "Croatian", "sk": "Slovak", "sl": "Slovenian", "bg": "Bulgarian", "sr": "Serbian", "lt": "Lithuanian",
    "lv": "Latvian", "et": "Estonian", "ar": "Arabic", "fa": "Persian", "he": "Hebrew", "hi": "Hindi",
}  # fmt: skip


def _justext(comments: bool | None) -> Callable[[EvalRecord, str], str]:
    import justext

    available = set(justext.get_stoplists())
    cache: dict[str, frozenset[str]] = {}

    def stoplist(language: str | None) -> frozenset[str]:
        name = _JUSTEXT_LANGUAGES.get((language or "en").split("-")[0].lower(), "English")
        name = name if name in available else "English"
        if name not in cache:
            cache[name] = justext.get_stoplist(name)
        return cache[name]

    def extract(record: EvalRecord, want: str) -> str:
        paragraphs = justext.justext(record.html, stoplist(record.meta.get("language")))
        return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

    return extract


def _rs_trafilatura(comments: bool | None) -> Callable[[EvalRecord, str], str]:
    try:
        import rs_trafilatura
    except ImportError as exc:
        raise PeerUnavailable(
            "rs-trafilatura is not installed: its PyPI wheel exists for CPython 3.12 only "
            f"(this is CPython {sys.version_info.major}.{sys.version_info.minor}); "
            "pip install rs-trafilatura on Python 3.12 to include it"
        ) from exc

    def extract(record: EvalRecord, want: str) -> str:
        result = rs_trafilatura.extract(record.html, url=record.url)
        return _html_or_text(result.content_html, result.main_content or "", record, want)

    return extract


# name → (import name for the version, distribution name, loader)
_PEERS: dict[str, tuple[str, str, Callable[[bool | None], Callable[[EvalRecord, str], str]]]] = {
    "trafilatura": ("trafilatura", "trafilatura", _trafilatura),
    "resiliparse": ("resiliparse", "resiliparse", _resiliparse),
    "readability": ("readability", "readability-lxml", _readability),
    "justext": ("justext", "jusText", _justext),
    "rs-trafilatura": ("rs_trafilatura", "rs-trafilatura", _rs_trafilatura),
}
_METADATA = {"trafilatura": _trafilatura_metadata}
_ALIASES = {"readability-lxml": "readability", "jusText": "justext", "rs_trafilatura": "rs-trafilatura"}
PEER_NAMES = tuple(_PEERS)


def is_peer(name: str) -> bool:
    """Whether ``name`` (or an alias) is a known peer, installed or not."""
    return _ALIASES.get(name, name) in _PEERS


def load_peer(name: str, comments: bool | None = None) -> Peer:
    """Load a peer by name (aliases: ``readability-lxml``, ``jusText``, ``rs_trafilatura``); ``comments``:
    see the module docstring.

    Raises :class:`PeerUnavailable` when it is not installed, ``KeyError`` for an unknown name.
    """
    key = _ALIASES.get(name, name)
    if key not in _PEERS:
        raise KeyError(f"unknown peer {name!r}; known: {', '.join(PEER_NAMES)}")
    module, dist, loader = _PEERS[key]
    try:
        import_module(module)
    except ImportError as exc:
        if key == "rs-trafilatura":
            loader(comments)  # raises PeerUnavailable with the CPython 3.12 explanation
        raise PeerUnavailable(f"{key} is not installed: pip install 'extract-trt[peers]' ({exc})") from exc
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        version = "?"
    extract = _contained(loader(comments))
    return Peer(name=key, version=version, extract=extract, metadata=_METADATA.get(key, lambda: None)())
