"""run-job on Ray Data, on a small local Ray (2 CPUs, 200 MB object store, started once for the module):
both pipelines write exactly the rows local mode writes — every record once, broken records as error rows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from job_fixtures import broken_shards, data_pages, shard_set
from test_job import assert_exactly_once, config, manifest

ray = pytest.importorskip("ray")

from typer.testing import CliRunner  # noqa: E402

from extract_trt.cli import app  # noqa: E402
from extract_trt.job import JobConfigError, RayOptions, run_job  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, object_store_memory=200 * 2**20, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    """Good and broken shards, and their local-mode output (the reference for both pipelines)."""
    root = tmp_path_factory.mktemp("rayjob")
    pages = data_pages(6)
    expected = shard_set(root / "in", pages)
    expected |= {p: e["ids"] for p, e in broken_shards(root / "in" / "broken", pages[:3]).items()}
    run_job(config([str(root / "in")], root / "local"))
    return root, expected


def assert_same_as_local(root: Path, out: Path) -> None:
    for entry in manifest(out)["shards"]:
        ours = pq.read_table(out / entry["output"]).drop_columns(["seconds", "timings"])
        local = pq.read_table(root / "local" / entry["output"]).drop_columns(["seconds", "timings"])
        assert ours.equals(local), entry["output"]


def test_split_pipeline_matches_local(local_ray, job) -> None:
    root, expected = job
    opts = RayOptions(pipeline="split", read_batch=2, label_batch=3, cpu_batch=2, cpu_tasks=1, max_in_flight_mb=64)
    with pytest.raises(JobConfigError, match="leaving none for its CPU stages"):  # 2 actors × 1 CPU of 2
        run_job(config([str(root / "in")], root / "split", workers=2, ray=opts))
    opts.cpus_per_actor = 0.5
    summary = run_job(config([str(root / "in")], root / "split", workers=2, ray=opts))
    assert summary.mode == "ray" and summary.written == len(expected) and summary.errors == 4
    assert_exactly_once(root / "split", expected)
    assert_same_as_local(root, root / "split")


def test_fused_pipeline_from_the_cli_matches_local(local_ray, job) -> None:
    root, expected = job
    args = ["run-job", str(root / "in"), "-o", str(root / "fused"), "--labeler", "heuristic", "--ray", "-w", "2",
            "--pipeline", "fused", "--read-batch", "2", "--label-batch", "3"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{len(expected)} shards written, 0 already done" in result.output and "4 errors" in result.output
    assert_exactly_once(root / "fused", expected)
    assert_same_as_local(root, root / "fused")


def test_gpu_actors(local_ray, job, tmp_path: Path) -> None:
    if not local_ray.cluster_resources().get("GPU"):
        pytest.skip("no GPU in this Ray instance: GPU label actors (num_gpus) cannot be scheduled here")
    root, expected = job
    summary = run_job(config([str(root / "in")], tmp_path, ray=RayOptions(gpus_per_actor=1)))
    assert summary.written == len(expected)
    assert_exactly_once(tmp_path, expected)


def test_split_pipeline_sends_a_cascades_routed_pages_to_the_actors(local_ray, job, tmp_path: Path) -> None:
    root, expected = job
    opts = RayOptions(pipeline="split", read_batch=2, label_batch=3, cpu_batch=4, cpu_tasks=1, max_in_flight_mb=64,
                      cpus_per_actor=0.5)  # fmt: skip
    labelers = {}
    for budget in (0.5, 1.0):
        out = tmp_path / str(budget)
        summary = run_job(replace(config([str(root / "in")], out, ray=opts), labeler=f"cascade@{budget:g}:heuristic"))
        assert summary.written == len(expected) and summary.errors == 4
        assert_exactly_once(out, expected)
        rows = [r for e in manifest(out)["shards"] for r in pq.read_table(out / e["output"]).to_pylist()]
        labelers[budget] = [r["labeler"] for r in rows if r["error"] is None]
    assert set(labelers[1.0]) == {"heuristic"}
    assert set(labelers[0.5]) == {"heuristic", "block-model"}
