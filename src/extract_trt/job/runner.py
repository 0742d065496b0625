"""``run_job``: lock the output directory, plan, run the pending shards in local or Ray mode, keep the
manifest up to date as shards finish, and say what happened."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from extract_trt.job.config import JobConfig
from extract_trt.job.manifest import now_iso
from extract_trt.job.output import ShardSink, ShardStats
from extract_trt.job.plan import JobLock, Shard, plan_job

__all__ = ["JobSummary", "run_job"]


@dataclass
class JobSummary:
    output_dir: str
    manifest_path: str
    mode: str  # "local" or "ray"
    shards: int  # shards of this run's inputs
    written: int  # shards written by this run
    skipped: int  # shards already done by an earlier run
    records: int  # records written by this run
    errors: int  # of which error rows
    seconds: float

    @property
    def pages_per_second(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0


def run_job(
    config: JobConfig,
    *,
    on_rows: Callable[[int, int], None] | None = None,
    on_shard: Callable[[Shard, ShardStats], None] | None = None,
) -> JobSummary:
    """Run ``config``: one Parquet shard per input shard in ``config.output_dir``, plus ``manifest.json``.

    Shards a previous run finished are skipped; interrupted ones are written again from the start, so a
    killed job, run again, loses and duplicates nothing. ``on_rows(rows, errors)`` is called as rows are
    written, ``on_shard(shard, stats)`` when a shard is committed.

    Raises:
        InputFormatError: the inputs name no shard files.
        JobConfigError: the output directory holds a job with other output settings (see ``overwrite``).
        JobError: another run holds the directory, or the manifest is unreadable.
        ImportError: Ray mode without Ray installed (nothing is written then).
        OSError: the output cannot be written.
    """
    start = time.monotonic()
    if config.ray is not None:  # before the output directory and its manifest are made
        import ray.data  # noqa: F401 - ImportError: the `scale` extra is not installed
    with JobLock(config.output_dir):
        plan = plan_job(config)
        entries = {entry.input: entry for entry in plan.manifest.shards}
        totals = {"records": 0, "errors": 0}

        def committed(shard: Shard, stats: ShardStats) -> None:
            entry = entries[shard.input]
            entry.status = "done"
            entry.records, entry.errors, entry.output_bytes = stats.records, stats.errors, stats.output_bytes
            entry.seconds = round(stats.seconds, 3)
            entry.finished = now_iso()
            plan.manifest.save(plan.manifest_path)
            totals["records"] += stats.records
            totals["errors"] += stats.errors
            if on_shard is not None:
                on_shard(shard, stats)

        sink = ShardSink(plan.output_dir, plan.pending, committed, config.row_group_size)
        try:
            if plan.pending and config.ray is None:
                from extract_trt.job.local import run_local

                run_local(config, plan.pending, sink, on_rows)
            elif plan.pending:
                from extract_trt.job.ray_data import run_ray

                run_ray(config, plan.pending, sink, on_rows)
            sink.close()
        except BaseException:
            sink.abort()
            raise
    return JobSummary(
        output_dir=plan.output_dir,
        manifest_path=plan.manifest_path,
        mode="local" if config.ray is None else "ray",
        shards=len(plan.shards),
        written=len(plan.pending),
        skipped=len(plan.shards) - len(plan.pending),
        records=totals["records"],
        errors=totals["errors"],
        seconds=time.monotonic() - start,
    )
