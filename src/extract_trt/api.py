"""``extract_trt.extract``: one call shaped like ``trafilatura.extract``, for code moving over from it.

Same first arguments, option names and defaults (``url``, ``output_format``, ``include_comments``,
``favor_precision``, ``favor_recall``, ``with_metadata``, ``include_links``, ``include_images``,
``target_language``) and the same convention: the extracted string, or ``None`` when the page yields nothing.
Underneath it is one :class:`~extract_trt.Extractor` per process and option set
(:func:`~extract_trt.integrations.process_extractor`); use ``Extractor`` itself for batches, the failure reason
(``Result.error``) or several formats at once.
"""

from __future__ import annotations

import html as html_escape
import json
from typing import Any, Literal

from extract_trt.integrations import metadata_dict, process_extractor
from extract_trt.runtime.extractor import Result

__all__ = ["extract"]

TrafilaturaFormat = Literal["txt", "markdown", "json", "html"]
# trafilatura's output_format → the Extractor output it is written from.
_OUTPUTS = {"txt": "text", "markdown": "markdown", "json": "text", "html": "html"}


def extract(
    html: str | bytes,
    url: str | None = None,
    output_format: TrafilaturaFormat = "txt",
    include_comments: bool = False,
    favor_precision: bool = False,
    favor_recall: bool = False,
    with_metadata: bool = False,
    include_links: bool = False,
    include_images: bool = False,
    target_language: str | None = None,
    *,
    labeler: str | None = None,
) -> str | None:
    """The main content of one page as ``output_format`` (``"txt"``, ``"markdown"``, ``"json"``, ``"html"``),
    or ``None`` when the page yields no main content or cannot be read.

    Args:
        html: the page (str, or bytes decoded by the charset rules of :mod:`extract_trt.runtime.html.decode`).
        url: the page's URL (kept in JSON output and metadata).
        include_comments: add the page's reader comments after the main content (trafilatura's default is
            ``True``; ours, like corpus pipelines, ``False``); see :mod:`extract_trt.runtime.html.comments`.
        favor_precision / favor_recall: the built-in model's precision (F0.5) or recall (F2) threshold
            (``block-model-precision`` / ``block-model-recall``); at most one of them.
        with_metadata: add the page metadata — a ``---`` front-matter header for ``txt``/``markdown``,
            ``<title>``/``<meta>`` in a ``<head>`` for ``html``, fields beside ``text`` for ``json``.
        include_links / include_images: keep links / images in Markdown output (off by default, as in
            trafilatura; ``Extractor``'s Markdown keeps both); other formats are not changed by them.
        target_language: an ISO 639-1 code: ``None`` unless the main text is detected to be in that language
            (``PageMetadata.language_detected``, from the main text itself), as trafilatura's option does.
        labeler: a labeler name or model directory instead of the built-in model (not with the favor flags).

    Raises:
        ValueError: an output format trafilatura has but this does not (``xml``, ``xmltei``, ``csv``,
            ``python``), or conflicting options.
    """
    if output_format not in _OUTPUTS:
        raise ValueError(f"output_format {output_format!r} is not supported; use one of {', '.join(_OUTPUTS)}")
    fmt = _OUTPUTS[output_format]
    extractor = process_extractor(
        _labeler_name(labeler, favor_precision, favor_recall), output=(fmt,), comments=include_comments,
        metadata=with_metadata or target_language is not None, links=include_links, images=include_images,
    )  # fmt: skip
    result = extractor.extract(html, url=url)
    if result.error is not None or not result.content(fmt, comments=include_comments).strip():
        return None
    if target_language is not None and result.metadata.language_detected != target_language.lower():
        return None
    metadata = metadata_dict(result) if with_metadata else None
    return _render(result, output_format, metadata, include_comments)


def _labeler_name(labeler: str | None, favor_precision: bool, favor_recall: bool) -> str:
    if favor_precision and favor_recall:
        raise ValueError("favor_precision and favor_recall exclude each other; pass at most one")
    if labeler is not None:
        if favor_precision or favor_recall:
            raise ValueError("favor_precision/favor_recall choose the built-in model's threshold; not with labeler=")
        return labeler
    if favor_precision:
        return "block-model-precision"
    if favor_recall:
        return "block-model-recall"
    return "block-model"


def _render(result: Result, output_format: str, metadata: dict[str, Any] | None, comments: bool = False) -> str:
    content = result.content(_OUTPUTS[output_format], comments=comments)
    if output_format == "json":
        return json.dumps({"url": result.url, "text": content, **(metadata or {})}, ensure_ascii=False)
    if not metadata:
        return content
    if output_format == "html":
        head = "".join(
            f"<title>{html_escape.escape(value)}</title>" if key == "title"
            else f'<meta name="{html_escape.escape(key)}" content="{html_escape.escape(value)}">'
            for key, value in _header_fields(metadata)
        )  # fmt: skip
        return f"<html><head>{head}</head><body>{content}</body></html>"
    header = "".join(f"{key}: {value}\n" for key, value in _header_fields(metadata))
    return f"---\n{header}---\n{content}"


def _header_fields(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """Non-empty metadata fields as one-line strings (lists joined by ``; ``)."""
    fields = []
    for key, value in metadata.items():
        if value in (None, "", [], ()):
            continue
        text = "; ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        fields.append((key, " ".join(text.split())))
    return fields
