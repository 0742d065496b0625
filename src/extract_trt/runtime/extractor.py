"""`Extractor`: wires decode → simplify → label → reconstruct → convert, with per-page errors."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from extract_trt.runtime.html import convert
from extract_trt.runtime.html.comments import comment_mask
from extract_trt.runtime.html.content_container import after_content_mask
from extract_trt.runtime.html.declared import declared_address, declared_kinds, declares_thread
from extract_trt.runtime.html.decode import decode_html, repair_mojibake
from extract_trt.runtime.html.dom import release
from extract_trt.runtime.html.fine_print import fine_print_mask
from extract_trt.errors import (
    ExtractError,
    LabelerError,
    TimeBudgetExceededError,
    TooManyBlocksError,
    TreeTooLargeError,
    describe,
)
from extract_trt.runtime.io.records import DEFAULT_MAX_BYTES, check_page
from extract_trt.runtime.labelers import PAGES_PER_CALL, Labeler, default_labeler, get_labeler
from extract_trt.runtime.limits import (
    DEFAULT_MAX_ATTRIBUTES,
    DEFAULT_MAX_BLOCKS,
    DEFAULT_MAX_OUTPUT_RATIO,
    DEFAULT_MAX_PARSER_WORK,
    DEFAULT_TIME_BUDGET,
    check_output,
    check_parse_cost,
    output_limit,
    run_within,
)
from extract_trt.runtime.html.metadata import PageMetadata, complete_from_main, extract_metadata, load_language_model
from extract_trt.runtime.html.reconstruct import MainContent, reconstruct_main
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.html.teasers import teaser_mask
from extract_trt.runtime.types import Labels, PageBlocks

OutputFormat = Literal["html", "markdown", "text"]


@dataclass(slots=True)
class Comments:
    """The reader comments of a page (:mod:`extract_trt.runtime.html.comments`), in the formats the extractor
    writes; ``""`` where the page has none or the format was not asked for."""

    html: str = ""
    markdown: str = ""
    text: str = ""

    def content(self, fmt: str) -> str:
        """The comments in ``fmt`` (``html``/``markdown``/``text``)."""
        return {"html": self.html, "markdown": self.markdown, "text": self.text}[fmt]


@dataclass(slots=True)
class Result:
    """What one page yields. ``error`` is ``None`` on success, else ``"<ErrorType>: reason"``."""

    id: str | None = None
    url: str | None = None
    main_html: str = ""
    markdown: str = ""
    text: str = ""
    labels: list[str] = field(default_factory=list)  # "main"/"comment"/"other" per block, block order
    n_blocks: int = 0
    labeler: str = ""
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    error: str | None = None
    metadata: PageMetadata | None = None  # None when the Extractor's ``metadata`` is off or the page failed
    comments: Comments | None = None  # the reader comments, when the extractor was asked for them

    @property
    def seconds(self) -> float:
        return sum(self.timings.values())

    def content(self, fmt: str, *, comments: bool = False) -> str:
        """The output in ``fmt`` (``html``/``markdown``/``text``); ``comments``: followed by the page's
        reader comments (when it has some and they were extracted), after a blank line."""
        main = {"html": self.main_html, "markdown": self.markdown, "text": self.text}[fmt]
        extra = self.comments.content(fmt) if comments and self.comments is not None else ""
        return f"{main}\n\n{extra}" if main and extra else main or extra


@dataclass(slots=True)
class PreparedPage:
    """A page between the stages: decoded and simplified (``blocks``), or failed (``result.error`` set)."""

    result: Result
    blocks: PageBlocks | None = None
    input_chars: int = 0  # the decoded page's length, for the output size limit
    product: bool = False  # the page declares a product: its customer reviews are comments
    article: bool = False  # the page declares an article: teaser lists beside its body go
    thread: bool = False  # the page declares a forum topic or Q&A page: no comment section found by its heading
    address: str | None = None  # an article's URL, or the one it declares: which links stay in the site

    def release(self) -> None:
        """Free the page's tree now rather than at the garbage collector's next full pass
        (:func:`~extract_trt.runtime.html.dom.release`); the page cannot be finished again."""
        if self.blocks is not None:
            release(self.blocks.page_map.root)
            self.blocks = None


class Extractor:
    """Main-content extractor.

    Args:
        labeler: any :class:`Labeler`, or a name/model directory for
            :func:`~extract_trt.runtime.labelers.get_labeler` (picklable, so worker processes can build
            their own); default: the built-in block model.
        output: the formats to produce: ``"html"`` (``main_html``), ``"markdown"``, ``"text"``, or a tuple
            of them (default: all three). What is not asked for is not written and stays ``""`` — the main
            HTML included (its serialisation is 0.4 ms of a 10 ms page) — which saves time on large runs.
        comments: also extract the page's reader comments into ``Result.comments`` (same formats). Either
            way, blocks in a reader-comment section (:mod:`extract_trt.runtime.html.comments`; on a page that
            declares a product, its customer reviews) are labelled ``comment`` and left out of the main content.
        links / images: keep links and images in the Markdown output.
        cutoff_length: per-block text cap of the simplifier (default: the labeler's simplifier profile —
            500 for MinerU-HTML v1.1 / Pulpie, 200 for a Dripper v1.0 decoder).
        batch_size: pages handed to the labeler at once by :meth:`extract_many`; default: the labeler's
            ``pages_per_call`` (1 for the block model and the heuristic, which label page by page; 16 for
            the batched model backends).
        max_bytes: larger pages get an ``InputTooLargeError`` record instead of being parsed
            (``None``: no limit). Empty, whitespace-only and binary (NUL/control bytes) input gets an
            ``InputFormatError`` record.
        max_parser_work / max_blocks / max_attributes / max_output_ratio / time_budget: the other per-page
            limits (``None``: off); rules and defaults in :mod:`extract_trt.runtime.limits`.
        keep_markup: keep the page's original markup in ``main_html`` (scripts, event handlers,
            ``javascript:`` URLs …), byte-identical to the reference reconstruction; by default main HTML
            is sanitised (:mod:`extract_trt.runtime.html.sanitize`). Markdown is always safe (its writer
            escapes text and allow-lists link schemes: :mod:`extract_trt.runtime.html.markdown`).
        item_ids: keep the blocks' ``_item_id`` marks in sanitised ``main_html`` (``keep_markup`` always
            keeps them, as the reference does); by default they are left out.
        pause_gc: pause CPython's cyclic garbage collector while :meth:`extract_many` works on a page
            (prepare, label, finish), never across a ``yield``. A finished page's tree is freed by
            reference counting (:meth:`PreparedPage.release`), so collections in the middle of a page
            only re-scan its live objects and promote them, which brings on full collections: 0.3 ms of
            a 10 ms page with the built-in model, more in a process holding many objects. Afterwards the
            collector is on again and runs a young-generation pass when the page left enough garbage to
            call for one, so memory stays bounded. Nothing is changed if the collector was off. Set False
            when other threads of the process switch the collector on and off themselves.
        metadata: read the page's metadata (title, author, dates, site name, language, canonical URL,
            categories/tags, image, licence) into ``Result.metadata`` from the tree already parsed
            (:mod:`extract_trt.runtime.html.metadata`). Off by default (as trafilatura's ``with_metadata``): it adds about 9 % to a page's time.
    """

    def __init__(
        self,
        labeler: Labeler | str | None = None,
        output: OutputFormat | tuple[OutputFormat, ...] = ("html", "markdown", "text"),
        *,
        comments: bool = False,
        links: bool = True,
        images: bool = True,
        cutoff_length: int | None = None,
        batch_size: int | None = None,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        max_parser_work: int | None = DEFAULT_MAX_PARSER_WORK,
        max_blocks: int | None = DEFAULT_MAX_BLOCKS,
        max_attributes: int | None = DEFAULT_MAX_ATTRIBUTES,
        max_output_ratio: float | None = DEFAULT_MAX_OUTPUT_RATIO,
        time_budget: float | None = DEFAULT_TIME_BUDGET,
        keep_markup: bool = False,
        item_ids: bool = False,
        pause_gc: bool = True,
        metadata: bool = False,
    ) -> None:
        if isinstance(labeler, str):
            labeler = get_labeler(labeler)
        self.labeler = labeler if labeler is not None else default_labeler()
        self.outputs = (output,) if isinstance(output, str) else tuple(output)
        unknown = set(self.outputs) - {"html", "markdown", "text"}
        if unknown:
            raise ValueError(f"unknown output format(s) {sorted(unknown)}; use html, markdown or text")
        self.comments = comments
        self.links = links
        self.images = images
        self.cutoff_length = cutoff_length
        if batch_size is None:
            batch_size = getattr(self.labeler, "pages_per_call", PAGES_PER_CALL)
        self.batch_size = max(1, batch_size)
        self.max_bytes = max_bytes
        self.max_parser_work = max_parser_work
        self.max_blocks = max_blocks
        self.max_attributes = max_attributes
        self.max_output_ratio = max_output_ratio
        self.time_budget = time_budget
        self.keep_markup = keep_markup
        self.item_ids = item_ids
        self.pause_gc = pause_gc
        self.metadata = metadata
        if metadata:
            load_language_model()  # a start-up cost (0.4 s), not the first page's
        self._fallback: Labeler | None = None

    def extract(self, html: str | bytes, url: str | None = None, id: str | None = None) -> Result:
        """Extract the main content of one page. Never raises for bad input: see ``Result.error``."""
        return next(self.extract_many([{"id": id, "url": url, "html": html}]))

    def extract_many(self, records: Iterable[dict | str | bytes]) -> Iterator[Result]:
        """Extract many pages, labelling them in batches; yields one Result per record, in order.

        A record is a dict with ``html`` (str or bytes) and optional ``id``/``url``/``content_type``, or
        the HTML itself.
        """
        batch: list[PreparedPage] = []
        for record in records:
            with _collector_paused(self.pause_gc):
                batch.append(self.prepare(record))
                if len(batch) < self.batch_size:
                    continue
                done, batch = list(self._finish(batch)), []
            yield from done
        if batch:
            with _collector_paused(self.pause_gc):
                done = list(self._finish(batch))
            yield from done

    # The three stages of extract_many are public for pipelines that run them in different processes
    # (extract_trt.job on Ray Data: prepare in CPU tasks, label_pages in the actors that hold the model,
    # finish in CPU tasks). None of them raises for bad input.

    def prepare(self, record: dict | str | bytes) -> PreparedPage:
        """Stage 1: check, decode and simplify one record (same record forms as :meth:`extract_many`)."""
        if not isinstance(record, dict):
            record = {"html": record}
        result = Result(id=_as_id(record.get("id")), url=record.get("url"))
        page = PreparedPage(result)
        start = time.perf_counter()
        try:
            page.blocks = run_within(self.time_budget, "decode and simplify", self._parse, record, page)
            result.n_blocks = len(page.blocks)
            if self.max_blocks is not None and result.n_blocks > self.max_blocks:
                page.blocks = None
                raise TooManyBlocksError(f"page has {result.n_blocks:,} blocks, more than max_blocks={self.max_blocks:,}")
        except Exception as exc:  # one bad page must never stop the batch
            if isinstance(exc, MemoryError) or isinstance(exc.__cause__, MemoryError):
                exc = TreeTooLargeError(
                    "the page's tree needs more memory than this process may use (a worker's cap is page_memory)"
                )
            result.error = describe(exc)
            if "simplify" not in result.timings:  # stopped inside a stage: the record still says what it cost
                stage = "simplify" if "decode" in result.timings else "decode"
                result.timings[stage] = time.perf_counter() - start - sum(result.timings.values())
        return page

    def _parse(self, record: dict, page: PreparedPage) -> PageBlocks:
        result = page.result
        t0 = time.perf_counter()
        html = record.get("html")
        if isinstance(html, (str, bytes, bytearray)):
            problem = check_page(html, self.max_bytes)
            if problem is not None:
                raise problem
        if isinstance(html, (bytes, bytearray)):
            html = decode_html(bytes(html), record.get("content_type"))
        elif not isinstance(html, str):
            raise ExtractError(f"record has no 'html' string (got {type(html).__name__})")
        # a str read from a file as "utf-8" (not "utf-8-sig") starts with its BOM, which the parser takes for text
        html = repair_mojibake(html.lstrip("\ufeff"))
        t1 = time.perf_counter()
        result.timings["decode"] = t1 - t0
        page.input_chars = len(html)
        page.product, page.article = declared_kinds(html)
        page.thread = declares_thread(html)
        if page.article:
            page.address = result.url if isinstance(result.url, str) and result.url else declared_address(html)
        problem = check_parse_cost(html, self.max_parser_work, self.max_attributes)
        if problem is not None:
            raise problem
        # A labeler trained on another block scheme (Dripper v1.0) names its simplifier profile.
        profile = getattr(self.labeler, "simplify_profile", None)
        max_chars = output_limit(len(html), self.max_output_ratio)
        blocks = simplify(html, cutoff_length=self.cutoff_length, profile=profile, max_chars=max_chars)
        t2 = time.perf_counter()
        result.timings["simplify"] = t2 - t1
        if self.metadata:  # read before reconstruction rewrites the tree
            result.metadata = extract_metadata(blocks.page_map.root, html, result.url, blocks.blocks)
            result.timings["metadata"] = time.perf_counter() - t2
        return blocks

    def label_pages(self, pages: list[PreparedPage]) -> list[Labels | None]:
        """Stage 2: label the prepared pages with one labeler call; ``None`` where a page has failed
        (its ``result.error`` says why). The label time is recorded in each ``result.timings``."""
        slow = {id(p) for p in pages if p.blocks is not None and self._needs_fallback(p.result)}
        ready = [p for p in pages if p.blocks is not None and id(p) not in slow]
        labels = iter(self._label([p.blocks for p in ready], [p.result for p in ready]))
        return [
            None if p.blocks is None else self._label_fallback(p) if id(p) in slow else next(labels) for p in pages
        ]

    def _own_seconds(self, result: Result) -> float:
        # The page's own stages; batched labelling by the configured labeler is shared, so not counted.
        return sum(v for k, v in result.timings.items() if k != "label" or result.labeler.endswith("(fallback)"))

    def _needs_fallback(self, result: Result) -> bool:
        """A page that used over half its time budget before labelling gets the cheap heuristic labeler."""
        if self.time_budget is None or getattr(self.labeler, "name", "") == "heuristic":
            return False
        return self._own_seconds(result) > self.time_budget / 2

    def _label_fallback(self, page: PreparedPage) -> Labels | None:
        from extract_trt.runtime.labelers.heuristic import HeuristicLabeler

        if self._fallback is None:
            self._fallback = HeuristicLabeler()
        result = page.result
        result.labeler = f"{self._fallback.name} (fallback)"
        remaining = self.time_budget - self._own_seconds(result) if self.time_budget is not None else None
        try:
            [labels] = run_within(remaining, "fallback labelling", self._label, [page.blocks], [result], self._fallback)
        except TimeBudgetExceededError as exc:
            result.error = describe(exc)
            return None
        if labels is not None:
            labels.fallback = True
        return labels

    def finish(self, page: PreparedPage, labels: Labels | None) -> Result:
        """Stage 3: reconstruct and convert ``page`` with ``labels``; without labels the result as is."""
        if labels is not None:
            result = page.result
            remaining = self.time_budget - self._own_seconds(result) if self.time_budget is not None else None
            start = time.perf_counter()
            try:
                run_within(remaining, "reconstruct and convert", self._emit, page, labels)
            except TimeBudgetExceededError as exc:
                result.main_html = result.markdown = result.text = ""
                result.comments = None
                result.labels = []
                result.error = describe(exc)
                result.timings.setdefault("reconstruct", time.perf_counter() - start)
        return page.result

    def _finish(self, batch: list[PreparedPage]) -> Iterator[Result]:
        for page, labels in zip(batch, self.label_pages(batch)):
            result = self.finish(page, labels)
            page.release()
            yield result

    def _label(
        self, pages: list[PageBlocks], results: list[Result], labeler: Labeler | None = None
    ) -> list[Labels | None]:
        if not pages:
            return []
        labeler = labeler or self.labeler
        t0 = time.perf_counter()
        try:
            labels = labeler.label(pages)
            if len(labels) != len(pages):
                raise LabelerError(f"{labeler.name} returned {len(labels)} label sets for {len(pages)} pages")
        except Exception as exc:
            if len(pages) == 1:
                name = getattr(labeler, "name", type(labeler).__name__)
                results[0].error = describe(LabelerError(f"{name} failed: {describe(exc)}"))
                return [None]
            # Isolate the page that broke the batch: label each page on its own.
            return [self._label([p], [r], labeler)[0] for p, r in zip(pages, results)]
        per_page = (time.perf_counter() - t0) / len(pages)
        checked: list[Labels | None] = []
        for page, page_labels, result in zip(pages, labels, results):
            result.timings["label"] = per_page
            if len(page_labels.main) != len(page):
                result.error = describe(
                    LabelerError(f"{page_labels.labeler} gave {len(page_labels.main)} labels for {len(page)} blocks")
                )
                checked.append(None)
            else:
                checked.append(page_labels)
        return checked

    def _emit(self, page: PreparedPage, labels: Labels) -> None:
        result = page.result
        try:
            t0 = time.perf_counter()
            main_mask = np.asarray(labels.main, dtype=bool)
            in_comments, comment_text = comment_mask(page.blocks, main_mask, reviews=page.product, thread=page.thread)
            main_mask = main_mask & ~in_comments
            if page.article:
                main_mask = main_mask & ~teaser_mask(page.blocks, main_mask, page.address)
            main_mask = main_mask & ~fine_print_mask(page.blocks, main_mask)
            main_mask = main_mask & ~after_content_mask(page.blocks, main_mask, thread=page.thread)
            main = self._reconstruct(page.blocks, Labels(main_mask, labels.labeler))
            result.main_html = main.html
            t1 = time.perf_counter()
            result.markdown, result.text = self._convert(main)
            t2 = time.perf_counter()
            reconstruct_s, convert_s = t1 - t0, t2 - t1
            outputs = {"main HTML": result.main_html, "Markdown": result.markdown, "text": result.text}
            if self.comments:
                result.comments = Comments()
                if comment_text.any():
                    thread = self._reconstruct(page.blocks, Labels(comment_text, labels.labeler))
                    t3 = time.perf_counter()
                    result.comments = Comments(thread.html, *self._convert(thread))
                    reconstruct_s += t3 - t2
                    convert_s += time.perf_counter() - t3
                    outputs.update({"comments HTML": result.comments.html, "comments Markdown": result.comments.markdown,
                                    "comments text": result.comments.text})  # fmt: skip
            result.timings.update(reconstruct=reconstruct_s, convert=convert_s)
            problem = check_output(outputs, page.input_chars, self.max_output_ratio)
            if problem is not None:
                result.main_html = result.markdown = result.text = ""
                result.comments = None
                raise problem
            if result.metadata is not None:
                t3 = time.perf_counter()
                complete_from_main(result.metadata, page.blocks.blocks, main_mask)
                result.timings["metadata"] = result.timings.get("metadata", 0.0) + time.perf_counter() - t3
            result.labels = ["comment" if c else "main" if m else "other" for m, c in zip(main_mask, in_comments)]
            result.labeler = labels.labeler + (" (fallback)" if labels.fallback else "")
        except Exception as exc:
            result.error = describe(exc)

    def _reconstruct(self, blocks: PageBlocks, labels: Labels) -> MainContent:
        return reconstruct_main(
            blocks, labels, sanitize=not self.keep_markup, item_ids=self.item_ids, html="html" in self.outputs
        )

    def _convert(self, content: MainContent) -> tuple[str, str]:
        """(Markdown, text) of a reconstructed tree, each ``""`` unless asked for."""
        markdown = text = ""
        if "markdown" in self.outputs:  # converted from the kept tree: the HTML is not parsed again
            markdown = convert.to_markdown(content, links=self.links, images=self.images)
        if "text" in self.outputs:
            text = convert.to_text(content)
        return markdown, text


@contextmanager
def _collector_paused(pause: bool) -> Iterator[None]:
    """The cyclic garbage collector off inside (see ``Extractor.pause_gc``), unless it was off already."""
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        threshold = gc.get_threshold()[0]
        if threshold and gc.get_count()[0] > threshold:
            gc.collect(0)  # the pass the page's allocations would have started


def _as_id(value: object) -> str | None:
    return None if value is None else str(value)
