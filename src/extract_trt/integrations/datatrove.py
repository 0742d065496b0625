"""A datatrove extractor step: put :class:`ExtractTrt` where datatrove's own ``Trafilatura`` step goes.

    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from extract_trt.integrations.datatrove import ExtractTrt

    pipeline = [WarcReader("crawl/"), ExtractTrt(), JsonlWriter("out/")]

Defaults are what corpus pipelines use: the built-in model's precision threshold
(``block-model-precision``), plain text, no reader comments, the page metadata under
``doc.metadata["extract_trt"]`` (``metadata=True``, the default here).

Unlike datatrove's base step, which sends every document to a sandbox process and back, this step runs
the extractor in the pipeline's own process: ``Extractor`` already stops a page at its time budget
(``timeout``; :mod:`extract_trt.runtime.limits`) and never raises for a bad page, and pages are labelled in
batches (``Extractor.batch_size``: 16 pages per call for the GPU model backends). Statistics are
datatrove's (``total``, ``extracted``, ``forwarded``, ``dropped``, ``timeout``, ``clean_error``).
Needs the ``datatrove`` extra.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any

try:
    from datatrove.data import Document, DocumentsPipeline
    from datatrove.pipeline.extractors.base import BaseExtractor
    from datatrove.utils.typeshelper import StatHints
except ImportError as exc:  # the step is only usable with datatrove installed
    raise ImportError(f"extract_trt.integrations.datatrove needs datatrove ({exc}): pip install 'extract-trt[datatrove]'") from exc

from extract_trt.integrations import metadata_dict, process_extractor
from extract_trt.runtime.extractor import Extractor, Result

__all__ = ["ExtractTrt"]

METADATA_KEY = "extract_trt"


class ExtractTrt(BaseExtractor):
    """extract-trt as a datatrove extractor step.

    Args:
        labeler: labeler name or model directory (default: the built-in model, precision threshold).
        output_format: ``"text"`` or ``"markdown"`` (``"html"``: the main HTML) written to ``doc.text``.
        timeout: seconds per document (the extractor's per-page time budget); a page over it is dropped
            and counted as ``timeout``, as in datatrove's own steps.
        include_comments: add the reader comments after the main content (default: left out).
        metadata: store the page metadata under ``doc.metadata["extract_trt"]``.
        **extractor_options: further :class:`~extract_trt.Extractor` keyword arguments (``links``,
            ``images``, ``max_bytes``, …).
    """

    name = "⛏ extract-trt"

    def __init__(
        self,
        labeler: str = "block-model-precision",
        output_format: str = "text",
        timeout: float = 1.0,
        include_comments: bool = False,
        metadata: bool = True,
        **extractor_options: Any,
    ) -> None:
        super().__init__(timeout)
        if output_format not in ("text", "markdown", "html"):
            raise ValueError(f"output_format {output_format!r}: use text, markdown or html")
        self.labeler = labeler
        self.output_format = output_format
        self.metadata = metadata
        self.include_comments = include_comments
        self.extractor_options = extractor_options

    def _extractor(self) -> Extractor:
        return process_extractor(
            self.labeler, output=(self.output_format,), time_budget=self.timeout, metadata=self.metadata,
            comments=self.include_comments,
            **self.extractor_options,
        )  # fmt: skip

    def extract(self, text: str) -> str:
        """The main content of one HTML page (``""`` when it yields none or fails)."""
        result = self._extractor().extract(text)
        return result.content(self.output_format, comments=self.include_comments) if result.error is None else ""

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        extractor = self._extractor()
        for batch in _batches(data, extractor.batch_size):
            with self.track_time(unit="batch"):
                records = [{"id": doc.id, "url": doc.metadata.get("url"), "html": doc.text} for doc in batch]
                results = list(extractor.extract_many(records))
            for doc, result in zip(batch, results):
                self.stat_update(StatHints.total)
                if self._keep(doc, result):
                    self.stat_update(StatHints.forwarded)
                    self.update_doc_stats(doc)
                    yield doc
                else:
                    self.stat_update(StatHints.dropped)

    def _keep(self, doc: Document, result: Result) -> bool:
        """Write ``result`` into ``doc``; False when the document is to be dropped."""
        if result.error is not None:
            self.stat_update("timeout" if result.error.startswith("TimeBudgetExceededError") else "clean_error")
            return False
        self.stat_update("extracted")
        doc.text = result.content(self.output_format, comments=self.include_comments)
        if self.metadata:
            meta = metadata_dict(result)
            if meta is not None:
                doc.metadata[METADATA_KEY] = meta
        return bool(doc.text.strip())


def _batches(docs: Iterable[Document] | None, size: int) -> Iterator[list[Document]]:
    iterator = iter(docs or ())
    while batch := list(islice(iterator, size)):
        yield batch
