"""Shard planner: which input files are the job's shards, what each one's output file is called, and which
of them still have to be written — reconciled with the manifest a previous run left.

A shard is *done* when the manifest says so, its output file exists with the recorded size, and the input
file still has the recorded size; everything else (never started, interrupted, input changed) is pending
and is written again from the start. Temp files of an interrupted run are deleted. A previous run with
other output settings (:meth:`JobConfig.config_hash`) is a :class:`JobConfigError`, unless
``overwrite`` is set, which deletes that run's shards and starts over.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import os
import re
from dataclasses import dataclass

from extract_trt.errors import InputFormatError
from extract_trt.job.config import JobConfig, JobConfigError, JobError
from extract_trt.job.manifest import MANIFEST_NAME, Manifest, ShardEntry
from extract_trt.job.readers import SHARD_SUFFIXES
from extract_trt.runtime.io.records import resolve_inputs, safe_name

__all__ = ["JobLock", "JobPlan", "Shard", "plan_job", "resolve_shards"]

# Temp files a killed run can leave: shard outputs being written and the manifest's atomic rewrite.
_TEMP_FILE = re.compile(rf"^\.(?:.+\.parquet|{re.escape(MANIFEST_NAME)})\..+\.tmp$")
_NAME_SUFFIXES = sorted({*SHARD_SUFFIXES, ".gz", ".zst"}, key=len, reverse=True)


@dataclass(frozen=True)
class Shard:
    """One input shard: ``index`` in the job's shard list, absolute ``input`` path, ``output`` file name."""

    index: int
    input: str
    output: str
    input_bytes: int


@dataclass
class JobPlan:
    output_dir: str
    manifest_path: str
    manifest: Manifest
    shards: list[Shard]  # every shard of this run's inputs, in input order
    pending: list[Shard]  # those to write, in input order

    @property
    def skipped(self) -> list[Shard]:
        pending = {s.index for s in self.pending}
        return [s for s in self.shards if s.index not in pending]


def resolve_shards(inputs: list[str]) -> list[str]:
    """Absolute paths of the shard files named by ``inputs``, in order, each once.

    Each input is what :func:`~extract_trt.runtime.io.records.resolve_inputs` takes — a file, a directory (its
    files with a shard suffix, recursively, sorted), a glob pattern — or ``@LIST``: a text file, optionally
    gzipped, with one path per line, relative to the list's directory (blank and ``#`` lines skipped).

    Raises:
        InputFormatError: no inputs, ``-``, a missing path, a pattern or directory without shard files.
    """
    if "-" in inputs:
        raise InputFormatError("run-job reads shard files, not standard input")
    expanded: list[str] = []
    for item in inputs:
        expanded.extend(_read_list(item[1:]) if item.startswith("@") else [item])
    found = resolve_inputs(expanded, dir_suffixes=SHARD_SUFFIXES)
    return list(dict.fromkeys(os.path.abspath(p) for p in found))


def _read_list(path: str) -> list[str]:
    try:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
            lines = [line.strip() for line in f]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputFormatError(f"cannot read input list {path!r}: {exc}") from exc
    base = os.path.dirname(os.path.abspath(path))
    paths = [os.path.join(base, line) for line in lines if line and not line.startswith("#")]
    missing = [p for p in paths if not os.path.isfile(p)]
    if missing:
        raise InputFormatError(f"input list {path!r}: {len(missing)} missing file(s), e.g. {missing[0]!r}")
    return paths


def output_name(input_path: str, taken: set[str]) -> str:
    """``<input name without its suffixes>.parquet``, or with ``-<8 hex of the path's SHA-1>`` when taken."""
    base = os.path.basename(input_path)
    for suffix in _NAME_SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    stem = safe_name(base)
    name = stem + ".parquet"
    if name.casefold() in taken:
        name = f"{stem}-{hashlib.sha1(input_path.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}.parquet"
    return name


def plan_job(config: JobConfig) -> JobPlan:
    """Resolve the inputs, reconcile them with the manifest in ``config.output_dir``, write the manifest
    (only when it changes: a rerun with every shard done leaves it as it was).

    Call it while holding :class:`JobLock` on the output directory.

    Raises:
        InputFormatError: from :func:`resolve_shards`.
        JobConfigError: the directory holds a job with other output settings and ``overwrite`` is off.
        JobError: the manifest is unreadable.
    """
    paths = resolve_shards(config.inputs)
    out_dir = os.path.abspath(config.output_dir)
    manifest_path = os.path.join(out_dir, MANIFEST_NAME)
    previous = Manifest.load(manifest_path)
    settings, config_hash = config.output_settings(), config.config_hash()
    if previous is not None and previous.config_hash != config_hash:
        if not config.overwrite:
            changed = sorted(k for k in {*settings, *previous.config} if settings.get(k) != previous.config.get(k))
            raise JobConfigError(
                f"{out_dir} holds a job written with other settings (changed: {', '.join(changed)}); use another "
                "output directory, or pass --overwrite (JobConfig(overwrite=True)) to delete its shards and start over"
            )
        for entry in previous.shards:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(out_dir, entry.output))
        previous = None
    manifest = previous or Manifest(config_hash, settings)
    before = previous.as_dict() if previous is not None else None  # a rerun that changes nothing writes nothing
    _remove_temp_files(out_dir)

    entries = {entry.input: entry for entry in manifest.shards}
    taken = {entry.output.casefold() for entry in manifest.shards}
    shards: list[Shard] = []
    pending: list[Shard] = []
    for index, path in enumerate(paths):
        size = os.path.getsize(path)
        entry = entries.get(path)
        if entry is None:
            entry = ShardEntry(path, output_name(path, taken), size)
            taken.add(entry.output.casefold())
            entries[path] = entry
            manifest.shards.append(entry)
        shard = Shard(index, path, entry.output, size)
        shards.append(shard)
        if not (_is_complete(out_dir, entry) and entry.input_bytes == size):
            entry.reset(size)
            pending.append(shard)
    if manifest.as_dict() != before:
        manifest.save(manifest_path)
    return JobPlan(out_dir, manifest_path, manifest, shards, pending)


def _is_complete(out_dir: str, entry: ShardEntry) -> bool:
    try:
        size = os.path.getsize(os.path.join(out_dir, entry.output))
    except OSError:
        return False
    return entry.status == "done" and size == entry.output_bytes


def _remove_temp_files(out_dir: str) -> None:
    for name in os.listdir(out_dir):
        if _TEMP_FILE.match(name):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(os.path.join(out_dir, name))


class JobLock:
    """An exclusive ``flock`` on ``<output_dir>/.lock`` for one run; the OS drops it when the process dies,
    so a killed run never blocks the next one."""

    def __init__(self, out_dir: str) -> None:
        self.out_dir = out_dir
        self._fd: int | None = None

    def __enter__(self) -> JobLock:
        os.makedirs(self.out_dir, exist_ok=True)
        fd = os.open(os.path.join(self.out_dir, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise JobError(f"another run-job is writing to {self.out_dir!r}") from None
        self._fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
