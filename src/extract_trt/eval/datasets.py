"""Evaluation datasets: our shared JSONL format and the WebMainBench JSONL format, as :class:`EvalRecord`.

**Ours** (``../shared/data/*.jsonl.gz``): ``id``, ``url``, ``html``, ``groundtruth``,
``groundtruth_format`` (``text`` | ``markdown`` | ``snippets`` | absent = no ground truth), ``with`` /
``without`` snippet lists, ``lang``, ``page_type``, metadata ground truth ``title``, ``author``,
``publish_date`` (null where the page has none); ``annotated_html`` when the page has WebMainBench
``cc-select`` marks. For ``snippets`` pages the ``groundtruth`` string is only the ``with`` snippets joined,
so no text metric is computed on them, only snippet rates.

**WebMainBench** (``webmainbench.jsonl`` / ``WebMainBench_545.jsonl`` from the HF dataset): ``track_id``,
``url``, ``html`` (with ``cc-select="true"`` marks), ``convert_main_content`` (the official ROUGE reference,
Markdown), ``groundtruth_content``, ``meta{language, style, level, table, code, equation}``. The reference
field is ``convert_main_content`` unless another is asked for.

The format is detected per record (a ``track_id`` or ``convert_main_content`` key means WebMainBench), so
a mixed file works too. Breakdown keys are normalised to ``page_type``, ``level``, ``language``, ``style``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from extract_trt.errors import InputFormatError
from extract_trt.eval.metrics import METADATA_FIELDS

__all__ = ["BREAKDOWN_KEYS", "EvalRecord", "read_dataset", "read_ids", "record_from_json"]

#: Meta keys the report breaks scores down by (in this order), when the records carry them.
BREAKDOWN_KEYS = ("page_type", "level", "language", "style")
WEBMAINBENCH_REFERENCE = "convert_main_content"


@dataclass(slots=True)
class EvalRecord:
    """One page to score.

    ``groundtruth_format`` decides what is scored: ``"markdown"`` → the prediction's WebMainBench
    Markdown; ``"text"`` and ``"snippets"`` → its plain text; ``None`` → nothing (speed only).
    """

    id: str
    html: str
    url: str | None = None
    groundtruth: str | None = None
    groundtruth_format: str | None = None
    with_snippets: list[str] = field(default_factory=list)
    without_snippets: list[str] = field(default_factory=list)
    meta: dict[str, str] = field(default_factory=dict)
    annotated_html: str | None = None  # HTML with cc-select marks (for the annotation labeler)
    # metadata ground truth: title / author / date (ISO day) where the dataset states them
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def wants(self) -> str:
        """The prediction format scored against this record: ``"markdown"`` or ``"text"``."""
        return "markdown" if self.groundtruth_format == "markdown" else "text"

    @property
    def has_text_groundtruth(self) -> bool:
        return self.groundtruth is not None and self.groundtruth_format in ("text", "markdown")


def _str_or_none(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def record_from_json(obj: dict[str, Any], *, line: int = 0, reference_field: str = WEBMAINBENCH_REFERENCE) -> EvalRecord:
    """An :class:`EvalRecord` from one parsed JSON line of either format."""
    html = obj.get("html")
    if not isinstance(html, str):
        raise InputFormatError(f"line {line}: no 'html' string")
    if "track_id" in obj or WEBMAINBENCH_REFERENCE in obj:
        meta_in = obj.get("meta") or {}
        meta = {k: str(meta_in[k]) for k in ("level", "language", "style") if _str_or_none(meta_in.get(k))}
        reference = obj.get(reference_field)
        if reference is not None and not isinstance(reference, str):
            raise InputFormatError(f"line {line}: {reference_field!r} is not a string")
        return EvalRecord(
            id=str(obj.get("track_id") or obj.get("id") or f"line-{line}"),
            html=html,
            url=_str_or_none(obj.get("url")),
            groundtruth=reference,
            groundtruth_format="markdown" if reference is not None else None,
            meta=meta,
            annotated_html=html,  # WebMainBench pages carry their cc-select marks in the html itself
        )
    gt_format = _str_or_none(obj.get("groundtruth_format"))
    if gt_format not in (None, "text", "markdown", "snippets"):
        raise InputFormatError(f"line {line}: unknown groundtruth_format {gt_format!r}")
    meta = {"language": lang} if (lang := _str_or_none(obj.get("lang"))) else {}
    if page_type := _str_or_none(obj.get("page_type")):
        meta["page_type"] = page_type
    groundtruth = obj.get("groundtruth")
    return EvalRecord(
        id=str(obj.get("id") or f"line-{line}"),
        html=html,
        url=_str_or_none(obj.get("url")),
        groundtruth=groundtruth if isinstance(groundtruth, str) and gt_format else None,
        groundtruth_format=gt_format if isinstance(groundtruth, str) else None,
        with_snippets=[str(s) for s in obj.get("with") or []],
        without_snippets=[str(s) for s in obj.get("without") or []],
        meta=meta,
        annotated_html=obj.get("annotated_html") if isinstance(obj.get("annotated_html"), str) else None,
        metadata={name: value for name, key in METADATA_FIELDS.items() if (value := _str_or_none(obj.get(key)))},
    )


def _open_text(path: str | os.PathLike[str]) -> io.TextIOBase:
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_dataset(
    path: str | os.PathLike[str],
    *,
    ids: Iterable[str] | None = None,
    limit: int | None = None,
    reference_field: str = WEBMAINBENCH_REFERENCE,
) -> Iterator[EvalRecord]:
    """Stream the records of a JSONL(.gz) file of either format, in file order.

    ``ids`` keeps only those page ids (the order of the file is kept); ``limit`` stops after that many
    kept records. A line that is not a JSON object with an ``html`` string raises
    :class:`~extract_trt.errors.InputFormatError` (a broken dataset should stop an evaluation,
    not silently shrink it).
    """
    wanted = None if ids is None else set(ids)
    if limit is not None and limit <= 0:
        return
    count = 0
    with _open_text(path) as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputFormatError(f"{path}: line {line_no}: not JSON ({exc})") from exc
            if not isinstance(obj, dict):
                raise InputFormatError(f"{path}: line {line_no}: not a JSON object")
            if wanted is not None and str(obj.get("track_id") or obj.get("id")) not in wanted:
                continue
            yield record_from_json(obj, line=line_no, reference_field=reference_field)
            count += 1
            if limit is not None and count >= limit:
                return


def read_ids(path: str | os.PathLike[str]) -> list[str]:
    """Page ids from a file, one per line (blank lines and ``#`` comments ignored)."""
    with open(path, encoding="utf-8") as fh:
        return [s for line in fh if (s := line.strip()) and not s.startswith("#")]
