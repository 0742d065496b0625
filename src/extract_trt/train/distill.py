"""Distillation: a teacher labels a user's own pages once, the built-in model's architecture learns them.

``extract-trt train --teacher T --pages P`` runs :func:`teacher_examples` (the teacher pass) and then the
built-in recipe (:func:`~extract_trt.train.trainer.train_block_model`) on those examples, optionally with
the human-labelled shared sets (``--mix``). The pages are split by domain as the shared sets are
(:func:`~extract_trt.train.data.split_of`; a page without a URL by its id): training domains are learned, tune domains choose the
thresholds (against the teacher's labels), validation domains are left out (kept for an honest check).

Teachers (:func:`make_teacher`):

* a **labeler**: a model directory (exported encoder or decoder, TensorRT engine, another block model), a
  labeler name, ``cascade[@BUDGET]:BIG``, or ``module:attr``. When it reads the student's block scheme
  (the reference's v1.1 scheme or the student's: encoders, engines, block models, v1.1 decoders) it labels
  the student's blocks directly, and its p(main) (an encoder's softmax, a decoder's main/other logits)
  become **soft targets**. A labeler on another block scheme (a Dripper decoder: v1.0 blocks) extracts the
  page and its text is aligned to the student's blocks, as a peer's is;
* a **peer** extractor of ``extract-trt eval`` (trafilatura, rs-trafilatura, …): its text output aligned to
  blocks with :func:`~extract_trt.train.align.align_labels`, exactly as ground truth is (hard labels);
* ``oracle:DATASET``: the ground truth of the pages in an evaluation JSONL (by page id), aligned the same way
  — the human labels, for measuring how close a teacher's labels come to them.

Blocks without words get no label (no loss), as in the human recipe. The teacher's labels are cached per
page in ``teacher-labels.jsonl`` of the cache directory (keyed by a hash of the page's HTML, with the
teacher named in ``teacher.json``): an interrupted pass resumes where it stopped, and a second training run
on the same pages costs no teacher time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from extract_trt.errors import ExtractError
from extract_trt.runtime.extractor import Extractor
from extract_trt.runtime.html.decode import decode_html
from extract_trt.runtime.html.simplify import MINERU_V11, simplify
from extract_trt.runtime.labelers import PAGES_PER_CALL, Labeler
from extract_trt.runtime.labelers.features import WORDS, page_features
from extract_trt.runtime.types import PageBlocks
from extract_trt.train.align import IGNORE, align_labels
from extract_trt.train.data import SIMPLIFIER, Example, page_group, split_of_name

if TYPE_CHECKING:
    from extract_trt.train.trainer import TrainConfig

__all__ = ["CACHE_FILE", "TEACHER_DATASET", "TeacherError", "TeacherLabels", "distil", "make_teacher", "teacher_examples"]

CACHE_FILE = "teacher-labels.jsonl"
TEACHER_FILE = "teacher.json"
# the block schemes a teacher can label the student's blocks in: the student's own, and the reference's (the
# same rules; the student's also keeps the elements the reference drops as invisible)
_STUDENT_SCHEME = (SIMPLIFIER.name, MINERU_V11.name)
TEACHER_DATASET = "teacher"  # Example.dataset of teacher-labelled pages (TrainConfig.primary for a student)


class TeacherError(ExtractError):
    """The teacher cannot be built, or the cache belongs to another teacher."""


@dataclass(slots=True)
class TeacherLabels:
    """A teacher's labels of one page's blocks: 1 / 0 / IGNORE, and p(main) when it gives one."""

    labels: np.ndarray  # int8
    soft: np.ndarray | None = None  # float32


class Teacher(Protocol):
    name: str  # what it is (the model's or the peer's name and version)
    spec: str  # how it was asked for (names the cache's owner)
    batch: int

    def label(self, records: Sequence[dict], pages: Sequence[PageBlocks]) -> list[TeacherLabels]: ...


def _html(record: dict) -> str:
    html = record["html"]
    return decode_html(html, record.get("content_type")) if isinstance(html, (bytes, bytearray)) else html


class LabelerTeacher:
    """A labeler as teacher: on the student's blocks with soft targets, or through its text (module doc)."""

    def __init__(self, labeler: Labeler, spec: str) -> None:
        self.labeler, self.spec = labeler, spec
        self.name = getattr(labeler, "name", spec)
        self.batch = getattr(labeler, "pages_per_call", PAGES_PER_CALL)
        profile = getattr(labeler, "simplify_profile", None)
        self.by_text = profile is not None and profile.name not in _STUDENT_SCHEME
        self._extractor = Extractor(labeler, output="text", time_budget=None) if self.by_text else None

    def label(self, records: Sequence[dict], pages: Sequence[PageBlocks]) -> list[TeacherLabels]:
        if self._extractor is not None:
            results = self._extractor.extract_many([{"id": r.get("id"), "url": r.get("url"), "html": _html(r)} for r in records])
            out = []
            for page, result in zip(pages, results):
                if result.error:
                    raise TeacherError(f"{self.name} failed on {result.id}: {result.error}")
                out.append(TeacherLabels(align_labels(page, result.text)))
            return out
        out = []
        for labels in self.labeler.label(pages):
            soft = None if labels.probability is None else np.asarray(labels.probability, dtype=np.float32)
            out.append(TeacherLabels(np.asarray(labels.main, dtype=np.int8), soft))
        return out


class TextTeacher:
    """A teacher whose output is text (a peer extractor, the ground truth), aligned to the blocks."""

    batch = 1

    def __init__(self, spec: str, name: str, text_of: Callable[[dict, str], str | None]) -> None:
        self.spec, self.name, self.text_of = spec, name, text_of

    def label(self, records: Sequence[dict], pages: Sequence[PageBlocks]) -> list[TeacherLabels]:
        out = []
        for record, page in zip(records, pages):
            text = self.text_of(record, _html(record))
            if text is None:
                raise TeacherError(f"{self.name} has no text for page {record.get('id')}")
            out.append(TeacherLabels(align_labels(page, text)))
        return out


def make_teacher(spec: str) -> Teacher:
    """The teacher named by ``spec`` (module doc). Raises :class:`TeacherError` when it cannot be built."""
    from extract_trt.eval.peers import PeerUnavailable, is_peer, load_peer

    if spec.startswith("oracle:"):
        from extract_trt.eval.datasets import read_dataset

        truth = {r.id: r.groundtruth for r in read_dataset(spec.removeprefix("oracle:")) if r.has_text_groundtruth}
        return TextTeacher(spec, "ground truth", lambda record, html: truth.get(str(record.get("id"))))
    if is_peer(spec):
        from extract_trt.eval.datasets import EvalRecord

        try:
            peer = load_peer(spec)
        except PeerUnavailable as exc:
            raise TeacherError(str(exc)) from exc
        return TextTeacher(
            spec,
            f"{peer.name} {peer.version}",
            lambda record, html: peer.extract(EvalRecord(id=str(record.get("id")), html=html, url=record.get("url")), "text"),
        )
    from extract_trt.eval.labelers import make_labeler

    try:
        return LabelerTeacher(make_labeler(spec), spec)
    except (ExtractError, ImportError, AttributeError) as exc:
        raise TeacherError(f"cannot build teacher {spec!r}: {exc}") from exc


def _page_key(html: str) -> str:
    return hashlib.sha1(html.encode("utf-8", "surrogatepass")).hexdigest()


class _Cache:
    """``teacher-labels.jsonl``: one line per labelled page, appended and flushed as pages are done."""

    def __init__(self, directory: Path, teacher: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        owner = directory / TEACHER_FILE
        if owner.is_file():
            recorded = json.loads(owner.read_text(encoding="utf-8")).get("teacher")
            if recorded != teacher:
                raise TeacherError(f"{directory} caches the labels of teacher {recorded!r}, not {teacher!r}: use another --cache")
        else:
            owner.write_text(json.dumps({"teacher": teacher}) + "\n", encoding="utf-8")
        self.path = directory / CACHE_FILE
        self.known: dict[str, TeacherLabels] = {}
        if self.path.is_file():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:  # a line cut short by an interruption
                        continue
                    soft = None if row.get("soft") is None else np.asarray(row["soft"], dtype=np.float32)
                    self.known[row["key"]] = TeacherLabels(np.asarray(row["labels"], dtype=np.int8), soft)
        self._fh = self.path.open("a", encoding="utf-8")

    def add(self, key: str, page_id: Any, labels: TeacherLabels) -> None:
        soft = None if labels.soft is None else [round(float(x), 4) for x in labels.soft]
        self._fh.write(json.dumps({"key": key, "id": page_id, "labels": labels.labels.tolist(), "soft": soft}) + "\n")
        self._fh.flush()
        self.known[key] = labels

    def close(self) -> None:
        self._fh.close()


@dataclass(slots=True)
class TeacherPass:
    """What the teacher pass did: the examples and its page counts."""

    examples: list[Example]
    labelled: int = 0  # by the teacher in this run
    cached: int = 0  # read from the cache
    failed: int = 0  # the teacher failed (not cached: retried on the next run)
    skipped: int = 0  # unreadable records, pages without blocks


def _example(record: dict, page: PageBlocks, labels: TeacherLabels) -> Example:
    features = page_features(page)
    words = features.text_ids_per_block(WORDS)
    hard = np.where(words > 0, labels.labels, IGNORE).astype(np.int8)
    weights = np.where(hard == IGNORE, 0.0, 1.0 + np.log1p(words)).astype(np.float32)
    soft = None if labels.soft is None else np.clip(labels.soft, 0.0, 1.0).astype(np.float32)
    # by domain, as the shared sets; a page without a URL (a local file) by its id
    group = page_group(record)
    return Example(id=str(record.get("id")), dataset=TEACHER_DATASET, domain=group, split=split_of_name(group),
                   page_type="unknown", features=features, labels=hard, weights=weights, targets=soft)  # fmt: skip


def teacher_examples(
    teacher: Teacher,
    records: Iterable[dict],
    cache_dir: str | Path,
    on_page: Callable[[bool], None] | None = None,
    max_pages: int | None = None,
) -> TeacherPass:
    """Label ``records`` (as :func:`~extract_trt.runtime.io.records.iter_records` yields them) with ``teacher``,
    through the cache; ``on_page(failed)`` after each page (a progress bar)."""
    cache = _Cache(Path(cache_dir), teacher.spec)
    done = TeacherPass(examples=[])
    batch: list[tuple[dict, PageBlocks, str]] = []

    def flush() -> None:
        todo = [(r, p, k) for r, p, k in batch if k not in cache.known]
        labelled: dict[str, TeacherLabels | None] = {}
        if todo:
            try:
                got = teacher.label([r for r, _, _ in todo], [p for _, p, _ in todo])
            except Exception:  # one page must not stop the pass: label the batch page by page
                got = []
                for r, p, _ in todo:
                    try:
                        got.append(teacher.label([r], [p])[0])
                    except Exception:
                        got.append(None)
            for (r, p, k), labels in zip(todo, got):
                if labels is not None and len(labels.labels) == len(p):
                    cache.add(k, r.get("id"), labels)
                    done.labelled += 1
                labelled[k] = labels
        for r, p, k in batch:
            labels = cache.known.get(k)
            if labels is None:
                done.failed += 1
            else:
                done.cached += k not in labelled
                done.examples.append(_example(r, p, labels))
            if on_page is not None:
                on_page(labels is None)
        batch.clear()

    try:
        for n, record in enumerate(records):
            if max_pages is not None and n >= max_pages:
                break
            if record.get("error") or "html" not in record:
                done.skipped += 1
                continue
            html = _html(record)
            page = simplify(html, profile=SIMPLIFIER)
            if not len(page):
                done.skipped += 1
                continue
            batch.append((record, page, _page_key(html)))
            if len(batch) >= teacher.batch:
                flush()
        flush()
    finally:
        cache.close()
    return done



def read_pages(inputs: list[str]) -> Iterator[dict]:
    """The records of ``inputs``: what ``extract-trt extract`` reads (WARC, JSONL, HTML files, directories,
    globs, ``-``) and Parquet shards as ``run-job`` reads them."""
    from extract_trt.job.readers import PARQUET_SUFFIXES, SHARD_SUFFIXES, iter_shard
    from extract_trt.runtime.io.records import HTML_SUFFIXES, iter_records, resolve_inputs

    for path in resolve_inputs(inputs, dir_suffixes=(*HTML_SUFFIXES, *SHARD_SUFFIXES)):
        yield from iter_shard(path) if path.lower().endswith(PARQUET_SUFFIXES) else iter_records([path])


def distil(
    teacher_spec: str,
    inputs: list[str],
    out_dir: str | Path,
    config: TrainConfig | None = None,
    *,
    cache_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    log: Callable[[str], None] = print,
    on_page: Callable[[bool], None] = lambda failed: None,
    on_teacher_done: Callable[[], None] = lambda: None,
) -> dict:
    """``extract-trt train --teacher``: the teacher pass over ``inputs``, then the built-in recipe on its
    labels (plus the human-labelled sets of ``data_dir`` when given: ``--mix``). Returns the manifest.
    ``on_page(failed)`` is called after each page of the teacher pass (a progress bar), ``on_teacher_done``
    when the pass ends."""
    from dataclasses import replace

    from extract_trt.train.trainer import DATASETS, TrainConfig, load_examples, train_block_model

    cfg = config or TrainConfig()
    cache = Path(cache_dir) if cache_dir is not None else Path(f"{Path(out_dir)}.teacher-cache")
    teacher = make_teacher(teacher_spec)
    log(f"teacher {teacher.name}: labelling {', '.join(inputs)} (cache {cache})")
    try:
        taught = teacher_examples(teacher, read_pages(inputs), cache, on_page=on_page, max_pages=cfg.max_pages)
    finally:
        on_teacher_done()
    log(f"teacher pass: {taught.labelled} pages labelled, {taught.cached} from the cache, {taught.failed} failed, "
        f"{taught.skipped} skipped")  # fmt: skip
    if not taught.examples:
        raise TeacherError(f"the teacher labelled none of the pages of {', '.join(inputs)}")
    examples = list(taught.examples)
    datasets = [f"teacher-labelled pages: {', '.join(inputs)}"]
    if data_dir is not None:
        examples += load_examples(data_dir, cfg.max_pages)
        datasets += list(DATASETS)
    soft = sum(e.targets is not None for e in taught.examples)
    describe = {
        "datasets": datasets,
        "teacher": {"spec": teacher_spec, "name": teacher.name, "pages": list(inputs), "labelled_pages": len(taught.examples),
                    "soft_label_pages": soft, "failed_pages": taught.failed, "mixed_with_human_labels": data_dir is not None},
    }  # fmt: skip
    return train_block_model(data_dir or "", out_dir, replace(cfg, primary=TEACHER_DATASET), log=log,
                             examples=examples, describe=describe)  # fmt: skip
