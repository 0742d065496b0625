"""The evaluation harness: run extractors (ours and peers) over the same records and score every page.

:func:`evaluate` is the library entry point behind ``extract-trt eval``. An *extractor* is given as

* a name: a peer (:data:`~extract_trt.eval.peers.PEER_NAMES`), ``default`` (``Extractor()``'s labeler,
  whatever the project's default is), ``heuristic``, ``annotation`` (labels from the page's ``cc-select``
  marks, read from ``annotated_html``: a perfect-labels ceiling on WebMainBench pages), any other name or
  model directory of :func:`~extract_trt.runtime.labelers.get_labeler`, or ``module:attr`` naming a
  :class:`~extract_trt.runtime.labelers.Labeler` (see :mod:`extract_trt.eval.labelers`);
* an :class:`~extract_trt.Extractor` instance or a ``Labeler`` instance;
* any object with ``name`` and ``predict(records) -> list[Prediction]`` (a :class:`Candidate`).

Timing: each candidate's ``predict`` call is wrapped in wall-clock and process-CPU clocks; pages/s per core
is pages / CPU seconds (CPU seconds count every thread of this process, so a multi-threaded labeler is
charged for all its cores). Per-page latency is the candidate's own per-page time: for our extractor the
sum of its stage timings plus the conversion to the scored format; for peers the wall time of the call.
Scoring runs outside the timed region. Records are processed in chunks, every candidate on the same
chunk, so memory stays bounded and the reference tokens are computed once per page.
"""

from __future__ import annotations

import copy
import datetime
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Protocol, runtime_checkable

from extract_trt.eval import metrics
from extract_trt.eval.datasets import EvalRecord
from extract_trt.eval.labelers import make_labeler
from extract_trt.eval.peers import PeerUnavailable, is_peer, load_peer
from extract_trt.eval.report import CandidateInfo, PageRow, Report
from extract_trt.runtime.extractor import Extractor
from extract_trt.runtime.html import convert
from extract_trt.runtime.labelers import Labeler
from extract_trt.runtime.labelers.annotation import AnnotationLabeler

__all__ = ["Candidate", "ExtractorCandidate", "PeerCandidate", "Prediction", "evaluate", "resolve_candidate"]

OURS_NAMES = ("default", "heuristic", "annotation")


@dataclass(slots=True)
class Prediction:
    """A candidate's output for one record: the string scored, its per-page seconds, and an error; the
    page's metadata (:meth:`~extract_trt.runtime.html.metadata.PageMetadata.as_dict` keys) when the candidate
    extracts it, with the seconds that took (not in ``seconds``; the CPU-time speed of a candidate
    counts both)."""

    output: str
    seconds: float
    error: str | None = None
    metadata: dict[str, Any] | None = None
    metadata_seconds: float | None = None


@runtime_checkable
class Candidate(Protocol):
    """Something the harness can run: one :class:`Prediction` per record, in order."""

    name: str
    description: str

    def predict(self, records: Sequence[EvalRecord]) -> list[Prediction]: ...


class ExtractorCandidate:
    """Our :class:`Extractor` (any labeler) as a candidate; converts main HTML to the scored format.

    With the annotation labeler, ``record.annotated_html`` (when present) is fed instead of ``record.html``.
    With an extractor asked for reader comments (``Extractor(comments=True)``), they are scored after the
    main content.
    """

    def __init__(self, extractor: Extractor, name: str, choose_outputs: bool = False) -> None:
        # built here from a labeler: produce what the records are scored on; an Extractor given by the
        # caller keeps its own outputs, plus the main HTML that Markdown is scored on — in a shallow copy,
        # so the caller's object is left as it was
        self.choose_outputs = choose_outputs
        if not choose_outputs and "html" not in extractor.outputs:
            extractor = copy.copy(extractor)
            extractor.outputs = (*extractor.outputs, "html")
        self.extractor = extractor
        self.name = name
        self.description = f"extract-trt, labeler {getattr(extractor.labeler, 'name', type(extractor.labeler).__name__)}"
        self.use_annotated_html = isinstance(extractor.labeler, AnnotationLabeler)

    def _html(self, record: EvalRecord) -> str:
        return record.annotated_html if self.use_annotated_html and record.annotated_html else record.html

    def predict(self, records: Sequence[EvalRecord]) -> list[Prediction]:
        if self.choose_outputs:
            # text straight from the kept tree, as `Extractor(output="text")` gives it, rather than by parsing
            # main_html again (0.8 ms of a 10 ms page); Markdown is scored in WebMainBench's own conversion
            # of main_html
            self.extractor.outputs = ("text",) if all(r.wants == "text" for r in records) else ("html",)
            # page metadata read (and timed) only on datasets that score it
            self.extractor.metadata = any(r.metadata for r in records)
        inputs = ({"id": r.id, "url": r.url, "html": self._html(r)} for r in records)
        out = []
        for record, result in zip(records, self.extractor.extract_many(inputs)):
            t0 = time.perf_counter()
            text = self._scored(result.main_html, result.text, record)
            if result.comments is not None and (result.comments.html or result.comments.text):
                thread = self._scored(result.comments.html, result.comments.text, record)
                text = f"{text}\n\n{thread}" if text else thread
            prediction = Prediction(text, result.seconds + time.perf_counter() - t0, result.error)
            if result.metadata is not None:  # timed apart, as for the peers
                prediction.metadata = result.metadata.as_dict()
                prediction.metadata_seconds = result.timings.get("metadata", 0.0)
                prediction.seconds -= prediction.metadata_seconds
            out.append(prediction)
        return out

    def _scored(self, html: str, text: str, record: EvalRecord) -> str:
        if record.wants == "markdown":
            return convert.benchmark_markdown(html, record.url) if html else ""
        if "text" in self.extractor.outputs:
            return text
        return convert.to_text(html)


class PeerCandidate:
    """A peer extractor (:mod:`extract_trt.eval.peers`); an exception on a page becomes that page's error.
    ``comments``: see :func:`~extract_trt.eval.peers.load_peer`."""

    def __init__(self, name: str, comments: bool | None = None) -> None:
        self.peer = load_peer(name, comments)
        self.name = self.peer.name
        self.description = f"{self.peer.name} {self.peer.version}"

    def predict(self, records: Sequence[EvalRecord]) -> list[Prediction]:
        out = []
        for record in records:
            t0 = time.perf_counter()
            try:
                out.append(Prediction(self.peer.extract(record, record.wants) or "", 0.0))
            except Exception as exc:  # a peer crashing on one page must not stop the evaluation
                out.append(Prediction("", 0.0, f"{type(exc).__name__}: {exc}"))
            out[-1].seconds = time.perf_counter() - t0
            if record.metadata and self.peer.metadata is not None:
                t0 = time.perf_counter()
                try:
                    out[-1].metadata = self.peer.metadata(record)
                except Exception:  # scored as saying nothing
                    out[-1].metadata = {}
                out[-1].metadata_seconds = time.perf_counter() - t0
        return out


def _labeler_extractor(labeler: Labeler, comments: bool) -> Extractor:
    # outputs chosen per call by ExtractorCandidate(choose_outputs=True)
    return Extractor(labeler=labeler, output="html", comments=comments)


def resolve_candidate(spec: str | Extractor | Labeler | Candidate, comments: bool | None = None) -> Candidate:
    """A :class:`Candidate` for an extractor given by name, instance or ``module:attr`` (module doc).

    ``comments``: score reader comments after the main content (``True``) or not (``False``), for ours
    (built from a name or labeler) and the peers that have a switch for them; ``None``: each one's default
    (ours leaves them out, trafilatura includes them).

    Raises :class:`~extract_trt.eval.peers.PeerUnavailable` for a peer that is not installed,
    :class:`~extract_trt.errors.LabelerError` for a labeler that cannot be built and ``ValueError``
    for something that is not an extractor.
    """
    if isinstance(spec, Extractor):
        return ExtractorCandidate(spec, getattr(spec.labeler, "name", "extractor"))
    if not isinstance(spec, str):
        if isinstance(spec, Candidate):
            return spec
        if isinstance(spec, Labeler):
            return ExtractorCandidate(_labeler_extractor(spec, bool(comments)), spec.name, choose_outputs=True)
        raise ValueError(f"not an extractor, labeler or candidate: {spec!r}")
    if is_peer(spec):
        return PeerCandidate(spec, comments)
    labeler = make_labeler(spec)
    name = spec if spec in OURS_NAMES else getattr(labeler, "name", spec)
    return ExtractorCandidate(_labeler_extractor(labeler, bool(comments)), name, choose_outputs=True)


@dataclass(slots=True)
class _Reference:
    """Per-record reference data shared by all candidates."""

    bag: Any = None
    tokens: list[str] | None = None


def _reference(record: EvalRecord) -> _Reference:
    if not record.has_text_groundtruth:
        return _Reference()
    gt = record.groundtruth or ""
    return _Reference(bag=metrics.words(gt), tokens=metrics.jieba_tokens(gt))


def score_page(
    record: EvalRecord, prediction: Prediction, candidate: str, ref: _Reference | None = None, *, keep_text: bool = False
) -> PageRow:
    """One per-page row: every metric the record's ground truth allows (``keep_text``: and the scored text)."""
    ref = ref if ref is not None else _reference(record)
    out = prediction.output or ""
    row = PageRow(
        extractor=candidate,
        id=record.id,
        url=record.url,
        groundtruth_format=record.groundtruth_format,
        meta=dict(record.meta),
        seconds=prediction.seconds,
        error=prediction.error,
        empty=not out.strip(),
        chars=len(out),
        text=out if keep_text else None,
    )
    if record.has_text_groundtruth:
        gt = record.groundtruth or ""
        row.word = metrics.word_f1(out, gt, reference_bag=ref.bag)
        row.rouge5 = metrics.rouge_n_webmainbench(out, gt, target_tokens=ref.tokens)
        row.rouge5_pulpie = metrics.rouge_n_pulpie(out.strip(), gt)
    if record.with_snippets or record.without_snippets:
        row.snippets = metrics.snippet_counts(out, record.with_snippets, record.without_snippets)
    if record.metadata and prediction.metadata is not None:
        row.metadata = {
            name: metrics.metadata_outcome(_as_text(prediction.metadata.get(name)), truth, name)
            for name, truth in record.metadata.items()
        }
        row.metadata_seconds = prediction.metadata_seconds
    return row


def _as_text(value: Any) -> str | None:
    return None if value is None else str(value)


def _chunks(records: Iterable[EvalRecord], size: int) -> Iterator[list[EvalRecord]]:
    it = iter(records)
    while chunk := list(islice(it, size)):
        yield chunk


def evaluate(
    records: Iterable[EvalRecord],
    extractors: Sequence[str | Extractor | Labeler | Candidate] = ("default",),
    *,
    dataset: str = "",
    chunk_size: int = 32,
    warmup: bool = True,
    keep_text: bool = False,
    on_page: Callable[[EvalRecord, list[PageRow]], None] | None = None,
    comments: bool | None = None,
) -> Report:
    """Run every extractor over ``records`` and score each page; returns a :class:`Report`.

    Extractors that cannot be loaded (a peer not installed) are listed in ``Report.skipped`` with the
    reason instead of failing the run. ``warmup`` runs each extractor once on the first page, untimed,
    before measuring. ``keep_text`` keeps each scored prediction in its row (``PageRow.text``, written to
    ``pages.json``: runs can then be re-scored and compared). ``on_page(record, rows)`` is called once per
    record with the rows of all extractors (for progress display). ``comments``: see
    :func:`resolve_candidate`. Metrics: :mod:`extract_trt.eval.metrics`; a failed
    page scores as an empty prediction and keeps its error.
    """
    candidates: list[Candidate] = []
    skipped: dict[str, str] = {}
    for spec in extractors:
        try:
            candidate = resolve_candidate(spec, comments)
        except PeerUnavailable as exc:
            skipped[str(spec)] = str(exc)
            continue
        if any(c.name == candidate.name for c in candidates):
            raise ValueError(f"extractor {candidate.name!r} given twice")
        candidates.append(candidate)
    infos = {c.name: CandidateInfo(c.name, c.description) for c in candidates}
    rows: list[PageRow] = []
    for index, chunk in enumerate(_chunks(records, max(1, chunk_size))):
        if index == 0 and warmup:
            for candidate in candidates:  # first-call costs (lazy imports, caches) are not page costs
                candidate.predict(chunk[:1])
        chunk_rows: list[list[PageRow]] = [[] for _ in chunk]
        predictions: list[list[Prediction]] = []
        for candidate in candidates:
            info = infos[candidate.name]
            cpu0, wall0 = time.process_time(), time.perf_counter()
            preds = candidate.predict(chunk)
            info.cpu_seconds += time.process_time() - cpu0
            info.wall_seconds += time.perf_counter() - wall0
            info.pages += len(chunk)
            if len(preds) != len(chunk):
                raise RuntimeError(f"{candidate.name} returned {len(preds)} predictions for {len(chunk)} records")
            predictions.append(preds)
        for i, record in enumerate(chunk):
            ref = _reference(record)
            for candidate, preds in zip(candidates, predictions):
                chunk_rows[i].append(score_page(record, preds[i], candidate.name, ref, keep_text=keep_text))
            rows.extend(chunk_rows[i])
            if on_page is not None:
                on_page(record, chunk_rows[i])
    date = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    return Report(rows=rows, candidates=list(infos.values()), skipped=skipped, dataset=dataset, date=date)
