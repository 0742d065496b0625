"""Hugging Face ``datasets``: a batched function for ``Dataset.map(batched=True)``.

    from datasets import load_dataset
    from extract_trt.integrations.hf import ExtractBatch

    ds = load_dataset("json", data_files="pages.jsonl.gz", split="train")
    ds = ds.map(ExtractBatch(html_column="html", url_column="url"), batched=True, batch_size=64, num_proc=4)
    ds["text"], ds["extract_error"]

:class:`ExtractBatch` holds only its options (so ``datasets`` can hash it for its cache and pickle it to
``num_proc`` workers); the :class:`~extract_trt.Extractor` is built once in each process that runs it
(:func:`~extract_trt.integrations.process_extractor`). It returns new columns — one per output format
(``text``, ``markdown``, ``main_html``), ``extract_error``, and with ``metadata=True`` a ``metadata``
JSON string — one row per input row; a page that fails keeps its row, with ``extract_error`` set.
The function itself needs no ``datasets`` import; the ``hf`` extra installs the library.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from extract_trt.integrations import extract_columns, process_extractor
from extract_trt.runtime.extractor import OutputFormat

__all__ = ["ExtractBatch"]


@dataclass(frozen=True)
class ExtractBatch:
    """``batch -> new columns`` for ``Dataset.map(batched=True)``.

    Args:
        html_column: the column with the page HTML (str or bytes).
        url_column: an optional column with page URLs.
        output: the formats to write (``"text"``, ``"markdown"``, ``"html"``), each its own column.
        labeler: labeler name or model directory (default: the built-in model).
        metadata: add the ``metadata`` column (the page metadata as a JSON object string).
        extractor_options: further :class:`~extract_trt.Extractor` keyword arguments.
    """

    html_column: str = "html"
    url_column: str | None = None
    output: Sequence[OutputFormat] = ("text",)
    labeler: str = "default"
    metadata: bool = False
    extractor_options: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, batch: Mapping[str, list]) -> dict[str, list]:
        if self.html_column not in batch:
            raise KeyError(f"the batch has no column {self.html_column!r} (columns: {', '.join(batch)})")
        extractor = process_extractor(self.labeler, output=tuple(self.output), **dict(self.extractor_options))
        urls = batch[self.url_column] if self.url_column else None
        return extract_columns(extractor, batch[self.html_column], urls, with_metadata=self.metadata)
