"""Crawl-scale runs: WARC / JSONL / Parquet shards in, one Parquet shard per input shard out, with a
manifest that makes a job resumable; on a local process pool or on Ray Data.

```python
from extract_trt.job import JobConfig, RayOptions, run_job

run_job(JobConfig(inputs=["crawl/*.warc.gz"], output_dir="out/", workers=2))            # local pool
run_job(JobConfig(inputs=["@warc.paths"], output_dir="/shared/out", workers=8,
                  ray=RayOptions(address="auto", gpus_per_actor=1)))                   # Ray cluster
```

Modules: :mod:`~extract_trt.job.config` (options, config hash, labeler by name),
:mod:`~extract_trt.job.plan` (shard planner, lock), :mod:`~extract_trt.job.manifest`,
:mod:`~extract_trt.job.readers` (records of a shard), :mod:`~extract_trt.job.output` (schema, atomic
shard writer), :mod:`~extract_trt.job.local`, :mod:`~extract_trt.job.ray_data`,
:mod:`~extract_trt.job.runner`.
"""

from extract_trt.job.config import JobConfig, JobConfigError, JobError, NamedLabeler, RayOptions
from extract_trt.job.output import SHARD_SCHEMA
from extract_trt.job.plan import resolve_shards
from extract_trt.job.runner import JobSummary, run_job

__all__ = [
    "SHARD_SCHEMA",
    "JobConfig",
    "JobConfigError",
    "JobError",
    "JobSummary",
    "NamedLabeler",
    "RayOptions",
    "resolve_shards",
    "run_job",
]
