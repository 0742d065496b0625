"""Glue for the pipelines corpus builders already run: datatrove (:mod:`.datatrove`), Hugging Face
``datasets`` (:mod:`.hf`) and Spark (``examples/spark_extract.py``), plus what they share here.

* :func:`process_extractor` — one :class:`~extract_trt.Extractor` per process and configuration. Pipeline
  steps are pickled to their worker processes (datatrove executors, ``Dataset.map(num_proc=…)``, Spark
  executors); they carry only their options and build the extractor where they run, once.
* :func:`extract_columns` — a batch of pages → one list per output column, one row per page, in order.
* :func:`metadata_dict` — a result's page metadata as a plain dict.

The libraries themselves are optional (extras ``datatrove``, ``hf``, ``spark``); nothing here imports them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Hashable, Sequence
from typing import Any

from extract_trt.runtime.extractor import Extractor, OutputFormat, Result

__all__ = ["COLUMN_NAMES", "extract_columns", "metadata_dict", "process_extractor"]

# Output format → the column (or Document field) its content goes to.
COLUMN_NAMES: dict[str, str] = {"html": "main_html", "markdown": "markdown", "text": "text"}

_EXTRACTORS: dict[tuple, Extractor] = {}
_EXTRACTORS_PID = os.getpid()


def process_extractor(labeler: str = "default", output: Sequence[OutputFormat] = ("text",), **options: Hashable) -> Extractor:
    """The process's :class:`Extractor` for this configuration, built on first use.

    ``labeler`` is a name or model directory (:func:`~extract_trt.runtime.labelers.get_labeler`);
    ``options`` are further ``Extractor`` keyword arguments. A forked child builds its own (ONNX Runtime
    sessions are not safe to share across ``fork``).
    """
    global _EXTRACTORS_PID
    if os.getpid() != _EXTRACTORS_PID:
        _EXTRACTORS.clear()
        _EXTRACTORS_PID = os.getpid()
    key = (labeler, tuple(output), tuple(sorted(options.items())))
    extractor = _EXTRACTORS.get(key)
    if extractor is None:
        extractor = _EXTRACTORS[key] = Extractor(labeler=labeler, output=tuple(output), **options)
    return extractor


def metadata_dict(result: Result) -> dict[str, Any] | None:
    """The page metadata of ``result`` as a dict (``PageMetadata.as_dict()``), or ``None`` when the result
    has none (a failed page, or a build without page metadata)."""
    metadata = getattr(result, "metadata", None)  # Result.metadata arrives with the page-metadata work (issue 29)
    return metadata.as_dict() if metadata is not None else None


def extract_columns(
    extractor: Extractor,
    htmls: Sequence[str | bytes | None],
    urls: Sequence[str | None] | None = None,
    *,
    with_metadata: bool = False,
) -> dict[str, list]:
    """Extract a batch of pages into columns: one per output format of ``extractor``
    (:data:`COLUMN_NAMES`), ``extract_error`` (``None`` or ``"<ErrorType>: reason"``) and, with
    ``with_metadata``, ``metadata`` (the page metadata as a JSON object string, ``None`` where there is
    none: a string keeps the column's type the same in every batch). Every page gives one row, in order."""
    urls = urls if urls is not None else [None] * len(htmls)
    if len(urls) != len(htmls):
        raise ValueError(f"{len(htmls)} pages but {len(urls)} URLs")
    columns: dict[str, list] = {COLUMN_NAMES[fmt]: [] for fmt in extractor.outputs}
    columns["extract_error"] = []
    if with_metadata:
        columns["metadata"] = []
    records = ({"html": html if html is not None else "", "url": url} for html, url in zip(htmls, urls))
    for result in extractor.extract_many(records):
        for fmt in extractor.outputs:
            columns[COLUMN_NAMES[fmt]].append(result.content(fmt))
        columns["extract_error"].append(result.error)
        if with_metadata:
            meta = metadata_dict(result)
            columns["metadata"].append(json.dumps(meta, ensure_ascii=False) if meta is not None else None)
    return columns
