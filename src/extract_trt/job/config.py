"""What a job is: its options, the part of them that decides the output (hashed into the manifest, so a
re-run with other settings is caught), and the labeler it names.

The labeler is given by name (:class:`NamedLabeler`) rather than as an object so that it can travel to
pool workers and Ray actors, each of which builds its own instance (one model session per process).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from extract_trt.errors import ExtractError, LabelerError
from extract_trt.runtime.io.records import DEFAULT_MAX_BYTES
from extract_trt.runtime.labelers import Labeler, get_labeler, is_cascade_spec
from extract_trt.runtime.limits import DEFAULT_TIME_BUDGET
from extract_trt.runtime.types import Labels, PageBlocks

__all__ = ["JobConfig", "JobConfigError", "JobError", "NamedLabeler", "RayOptions", "SCHEMA_VERSION"]

#: Version of the output shard schema and manifest layout; part of the config hash.
SCHEMA_VERSION = 3  # 2: metadata columns, timings.metadata; 3: the comments column

#: Labelers that read the page's DOM (``PageBlocks.page_map``), not only its blocks.
_DOM_LABELERS = frozenset({"annotation"})


class JobError(ExtractError):
    """A job cannot run or continue (locked output directory, unreadable manifest, broken invariant)."""


class JobConfigError(JobError):
    """The job's options are invalid, or differ from those the output directory was written with."""


class NamedLabeler:
    """A :class:`~extract_trt.runtime.labelers.Labeler` named by ``spec``, built on first use in the process
    that uses it. Pickling keeps only ``spec`` and ``args``.

    ``spec``: what :func:`~extract_trt.runtime.labelers.get_labeler` takes (a labeler name or a model
    directory), or ``package.module:factory`` — any callable returning a labeler, called with ``**args``
    (for labelers that need options, e.g. a device).
    """

    def __init__(self, spec: str, args: dict[str, Any] | None = None) -> None:
        if args and not self._is_factory(spec):
            raise JobConfigError(f"labeler arguments need a package.module:factory labeler, not {spec!r}")
        self.spec = spec
        self.args = dict(args or {})
        self._labeler: Labeler | None = None

    @property
    def name(self) -> str:
        return self._labeler.name if self._labeler is not None else self.spec

    @property
    def needs_dom(self) -> bool:
        """Whether the labeler reads the page's DOM (``PageBlocks.page_map``), not only its blocks."""
        return self.spec in _DOM_LABELERS

    @property
    def simplify_profile(self) -> Any:
        """The simplifier profile the labeler asks for (read by the Extractor); builds the labeler."""
        return getattr(self.build(), "simplify_profile", None)

    @staticmethod
    def _is_factory(spec: str) -> bool:
        module, sep, attr = spec.partition(":")
        return bool(sep and module and attr) and not os.path.exists(spec) and not is_cascade_spec(spec)

    def build(self) -> Labeler:
        """The labeler itself (built once per process).

        Raises:
            LabelerError: the factory cannot be imported or fails.
        """
        if self._labeler is None:
            try:
                self._labeler = self._construct()
            except Exception as exc:
                raise LabelerError(f"cannot build labeler {self.spec!r}: {type(exc).__name__}: {exc}") from exc
        return self._labeler

    def _construct(self) -> Labeler:
        if not self._is_factory(self.spec):
            return get_labeler(self.spec)
        module_name, _, attr = self.spec.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
        return factory(**self.args)

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        return self.build().label(pages)

    def __getstate__(self) -> dict[str, Any]:
        return {"spec": self.spec, "args": self.args}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.spec = state["spec"]
        self.args = state["args"]
        self._labeler = None


@dataclass
class RayOptions:
    """Cluster mode on Ray Data (see :mod:`extract_trt.job.ray_data`).

    Args:
        address: an existing cluster (``auto``, ``ray://head:10001``); ``None`` starts a local Ray.
        num_cpus / object_store_mb: for the local Ray only (``None``: Ray's defaults).
        gpus_per_actor / cpus_per_actor: resources of each label actor (``num_gpus`` > 0 → GPU actors).
        pipeline: ``split`` = read and preprocess in CPU tasks, label in the actors, reconstruct in CPU
            tasks (for GPU actors: the GPU never waits for CPU work; the page is simplified again for
            reconstruction, because the DOM tree is too large to ship); ``fused`` = the actors run the whole
            extraction (best on CPU-only clusters: each page is simplified once); ``auto`` = ``split`` when
            ``gpus_per_actor`` > 0, else ``fused``.
        read_batch: records per block read from a shard; label_batch: pages per actor call (and per
            labeler call); cpu_batch: pages per preprocess/reconstruct task call.
        cpu_tasks: at most this many concurrent tasks per CPU stage of the split pipeline (``None``: as
            many as fit). The split pipeline needs CPUs beyond the actors' ``workers × cpus_per_actor``
            (checked when the job starts, against the cluster as it is then).
        max_in_flight_mb: object-store budget of the running job (backpressure; ``None``: Ray's default).
    """

    address: str | None = None
    num_cpus: int | None = None
    object_store_mb: int | None = None
    gpus_per_actor: float = 0.0
    cpus_per_actor: float = 1.0
    pipeline: Literal["auto", "split", "fused"] = "auto"
    read_batch: int = 64
    label_batch: int = 64
    cpu_batch: int = 16
    cpu_tasks: int | None = None
    max_in_flight_mb: int | None = None

    def resolved_pipeline(self) -> Literal["split", "fused"]:
        if self.pipeline == "auto":
            return "split" if self.gpus_per_actor > 0 else "fused"
        return self.pipeline


@dataclass
class JobConfig:
    """A crawl-scale job: input shards in, one Parquet shard per input shard out (see :func:`run_job`).

    Args:
        inputs: WARC/WARC.gz, JSONL(.gz) or Parquet files, glob patterns, directories (their shard files),
            or ``@list.txt`` (one path per line, relative to the list's directory; ``.gz`` allowed).
        output_dir: where the Parquet shards and ``manifest.json`` go.
        labeler / labeler_args: see :class:`NamedLabeler`.
        outputs: conversions to produce besides ``main_html`` (``markdown``, ``text``).
        comments: also extract reader comments into the ``comments`` column (same conversions).
        links / images / cutoff_length / max_bytes / time_budget / keep_markup / metadata /
        item_ids: as for
            :class:`~extract_trt.runtime.extractor.Extractor`.
        html_field: the JSONL field / Parquet column holding the page.
        workers: local pool processes, or the number of label actors in Ray mode.
        batch_size: pages labelled together (local mode; the unit sent to a pool worker).
        row_group_size: rows per Parquet row group.
        overwrite: start over when the output directory holds a job with another configuration
            (its shards are deleted); without it that is a :class:`JobConfigError`.
        ray: run on Ray Data with these options; ``None`` runs the local process pool.
    """

    inputs: list[str]
    output_dir: str
    labeler: str = "default"
    labeler_args: dict[str, Any] = field(default_factory=dict)
    outputs: tuple[str, ...] = ("markdown", "text")
    comments: bool = False
    links: bool = True
    images: bool = True
    cutoff_length: int | None = None
    max_bytes: int | None = DEFAULT_MAX_BYTES
    time_budget: float | None = DEFAULT_TIME_BUDGET
    keep_markup: bool = False
    metadata: bool = False
    item_ids: bool = False
    html_field: str = "html"
    workers: int = 1
    batch_size: int = 16
    row_group_size: int = 256
    overwrite: bool = False
    ray: RayOptions | None = None

    def __post_init__(self) -> None:
        self.outputs = tuple(self.outputs)
        unknown = set(self.outputs) - {"markdown", "text"}
        if unknown:
            raise JobConfigError(f"unknown output(s) {sorted(unknown)}: main_html is always written; add markdown, text")
        for name in ("workers", "batch_size", "row_group_size"):
            if getattr(self, name) < 1:
                raise JobConfigError(f"{name} must be at least 1")
        labeler = NamedLabeler(self.labeler, self.labeler_args)  # validates the spec
        if self.ray is not None and self.ray.resolved_pipeline() == "split" and labeler.needs_dom:
            raise JobConfigError(
                f"the {self.labeler} labeler reads the page DOM, which the split Ray pipeline does not send "
                "to the label actors; use pipeline 'fused'"
            )

    def output_settings(self) -> dict[str, Any]:
        """The settings that decide what the output shards contain (stored in the manifest)."""
        from extract_trt import __version__

        return {
            "schema_version": SCHEMA_VERSION,
            "extract_trt": __version__,
            "labeler": self.labeler,
            "labeler_args": self.labeler_args,
            "outputs": sorted(self.outputs),
            "comments": self.comments,
            "links": self.links,
            "images": self.images,
            "cutoff_length": self.cutoff_length,
            "max_bytes": self.max_bytes,
            "time_budget": self.time_budget,
            "keep_markup": self.keep_markup,
            "metadata": self.metadata,
            "item_ids": self.item_ids,
            "html_field": self.html_field,
        }

    def config_hash(self) -> str:
        """SHA-256 of :meth:`output_settings` (canonical JSON); workers, batch sizes and mode are not in it."""
        blob = json.dumps(self.output_settings(), sort_keys=True, separators=(",", ":"), default=str)
        return "sha256:" + hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def extractor_kwargs(self, batch_size: int | None = None) -> dict[str, Any]:
        """Keyword arguments for :class:`~extract_trt.runtime.extractor.Extractor` (picklable)."""
        return {
            "labeler": NamedLabeler(self.labeler, self.labeler_args),
            "output": ("html", *self.outputs),  # main_html is always written
            "comments": self.comments,
            "links": self.links,
            "images": self.images,
            "cutoff_length": self.cutoff_length,
            "batch_size": batch_size or self.batch_size,
            "max_bytes": self.max_bytes,
            "time_budget": self.time_budget,
            "keep_markup": self.keep_markup,
            "metadata": self.metadata,
            "item_ids": self.item_ids,
        }
