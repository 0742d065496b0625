"""run-job in local mode: every record exactly once, error rows, resume after an interrupted or killed run,
config-change detection, planner rules, CLI. Ray mode: tests/test_job_ray.py."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from job_fixtures import broken_shards, data_pages, html_warc, shard_set
import typer
from typer.testing import CliRunner

from extract_trt.cli import app
from extract_trt.errors import InputFormatError, LabelerError
from extract_trt.job import JobConfig, JobConfigError, JobError, NamedLabeler, RayOptions, resolve_shards, run_job
from extract_trt.job.plan import JobLock
from extract_trt.runtime.extractor import Extractor

PAGES = data_pages(12)


def config(inputs: list[str], out: Path, **kw) -> JobConfig:
    return JobConfig(inputs=inputs, output_dir=str(out), labeler="heuristic", **kw)


def read_out(out: Path, name: str) -> list[dict]:
    return pq.read_table(out / name).to_pylist()


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def assert_exactly_once(out: Path, expected: dict[str, list[str]]) -> None:
    """Each input shard's output holds its records once each, in order, and the manifest agrees."""
    m = manifest(out)
    entries = {e["input"]: e for e in m["shards"]}
    for path, ids in expected.items():
        entry = entries[path]
        rows = read_out(out, entry["output"])
        assert [r["position"] for r in rows] == list(range(len(ids)))
        assert [r["id"] for r in rows] == ids
        assert {r["source"] for r in rows} <= {path}
        assert entry["status"] == "done" and entry["records"] == len(ids)
        assert entry["errors"] == sum(r["error"] is not None for r in rows)
        assert entry["output_bytes"] == (out / entry["output"]).stat().st_size
    assert not [n for n in os.listdir(out) if n.endswith(".tmp")]


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    return shard_set(tmp_path_factory.mktemp("in"), PAGES)


def test_every_record_once_and_same_as_extractor(shards: dict[str, list[str]], tmp_path: Path) -> None:
    summary = run_job(config(list(shards), tmp_path / "out"))
    assert (summary.written, summary.skipped, summary.records) == (5, 0, 12)
    assert_exactly_once(tmp_path / "out", shards)
    rows = read_out(tmp_path / "out", "a.parquet")
    first = Extractor(labeler=NamedLabeler("heuristic")).extract(PAGES[0]["html"].encode(), url=rows[0]["url"])
    assert rows[0]["error"] is None and rows[0]["markdown"] == first.markdown and rows[0]["text"] == first.text
    assert rows[0]["main_html"] == first.main_html and rows[0]["n_blocks"] == first.n_blocks
    assert rows[0]["n_main"] == first.labels.count("main") > 0 and rows[0]["labeler"] == "heuristic"
    assert rows[0]["warc_date"] and rows[0]["http_status"] == 200 and rows[0]["content_type"].startswith("text/html")
    assert rows[0]["timings"]["simplify"] > 0 and rows[0]["seconds"] >= rows[0]["timings"]["simplify"]
    assert read_out(tmp_path / "out", "e-empty.parquet") == []
    assert manifest(tmp_path / "out")["totals"] == {"shards": 5, "done": 5, "records": 12, "errors": 0}


def test_two_workers_write_the_same_rows(shards: dict[str, list[str]], tmp_path: Path) -> None:
    run_job(config(list(shards), tmp_path / "one"))
    run_job(config(list(shards), tmp_path / "two", workers=2, batch_size=2))
    for name in ("a.parquet", "c.parquet", "d.parquet"):
        one = pq.read_table(tmp_path / "one" / name).drop_columns(["seconds", "timings"])
        two = pq.read_table(tmp_path / "two" / name).drop_columns(["seconds", "timings"])
        assert one.equals(two)


def test_error_rows_for_broken_records(tmp_path: Path) -> None:
    expected = broken_shards(tmp_path / "in", PAGES[:3])
    summary = run_job(config([str(tmp_path / "in")], tmp_path / "out"))
    assert_exactly_once(tmp_path / "out", {p: e["ids"] for p, e in expected.items()})
    assert summary.errors == 4
    for path, info in expected.items():
        name = Path(path).name.split(".")[0] + ".parquet"
        for row in read_out(tmp_path / "out", name):
            if row["id"] in info["errors"]:
                assert info["errors"][row["id"]] in row["error"]
                assert row["main_html"] == "" and row["n_blocks"] == 0
            else:
                assert row["error"] is None and row["main_html"], row["id"]


def test_resume_after_abort_and_stale_temp_file(shards: dict[str, list[str]], tmp_path: Path) -> None:
    out = tmp_path / "out"
    done: list[str] = []
    seen = {"rows": 0}

    def abort_in_second_shard(rows: int, errors: int) -> None:
        seen["rows"] += rows
        if done:  # the first shard is committed and rows of the next one are in flight
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_job(config(list(shards), out, batch_size=1), on_rows=abort_in_second_shard, on_shard=lambda s, _: done.append(s.output))
    assert done == ["a.parquet"]
    m = manifest(out)
    assert [e["status"] for e in m["shards"]] == ["done", "pending", "pending", "pending", "pending"]
    assert not (out / "b.parquet").exists() and not [n for n in os.listdir(out) if n.endswith(".tmp")]
    # What a killed process leaves behind: a half-written temp shard.
    (out / ".b.parquet.x1y2.tmp").write_bytes(b"PAR1 half a shard")
    before = (out / "a.parquet").stat()
    summary = run_job(config(list(shards), out))
    assert (summary.written, summary.skipped) == (4, 1)
    assert (out / "a.parquet").stat().st_mtime_ns == before.st_mtime_ns  # kept, not rewritten
    assert_exactly_once(out, shards)
    written = (out / "manifest.json").stat()
    again = run_job(config(list(shards), out))
    assert (again.written, again.skipped, again.records) == (0, 5, 0)
    after = (out / "manifest.json").stat()  # a rerun with nothing to do leaves the manifest as it was
    assert (after.st_ino, after.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)


def test_resume_after_kill(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    pages = data_pages(20)
    expected = {str(inputs / f"s{i}.warc.gz"): html_warc(inputs / f"s{i}.warc.gz", pages[i * 4 : i * 4 + 4]) for i in range(5)}
    out = tmp_path / "out"
    cmd = [sys.executable, "-c", "from extract_trt.cli import main; main()", "run-job", str(inputs), "-o", str(out),
           "--labeler", "heuristic", "--no-progress"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if manifest(out)["totals"]["done"] >= 1:
                    break
            except (OSError, ValueError, KeyError):
                pass
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    done = manifest(out)["totals"]["done"]
    assert 1 <= done < 5, "the job should have been killed part-way"
    summary = run_job(config([str(inputs)], out))
    assert summary.skipped == done and summary.written == 5 - done
    assert_exactly_once(out, expected)


def test_config_change_is_an_error_unless_overwrite(shards: dict[str, list[str]], tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_job(config(list(shards), out))
    with pytest.raises(JobConfigError, match="changed: links") as refused:
        run_job(config(list(shards), out, links=False))
    assert "--overwrite" in str(refused.value)  # the refusal names the way out
    run_job(config(list(shards), out, workers=2, batch_size=3))  # not output settings: nothing to redo
    summary = run_job(config(list(shards), out, links=False, overwrite=True))
    assert summary.written == 5 and manifest(out)["config"]["links"] is False
    assert_exactly_once(out, shards)


def test_changed_input_is_redone(tmp_path: Path) -> None:
    paths = {str(tmp_path / f"{n}.warc.gz"): html_warc(tmp_path / f"{n}.warc.gz", PAGES[i : i + 2]) for i, n in enumerate("xy")}
    out = tmp_path / "out"
    run_job(config(list(paths), out))
    paths[str(tmp_path / "y.warc.gz")] = html_warc(tmp_path / "y.warc.gz", PAGES[5:8])
    summary = run_job(config(list(paths), out))
    assert (summary.written, summary.skipped) == (1, 1)
    assert_exactly_once(out, paths)


def test_locked_directory_and_unbuildable_labeler(shards: dict[str, list[str]], tmp_path: Path) -> None:
    out = tmp_path / "out"
    with JobLock(str(out)), pytest.raises(JobError, match="another run-job"):
        run_job(config(list(shards), out))
    bad = JobConfig(inputs=list(shards), output_dir=str(out), labeler="extract_trt.no_such_module:make")
    with pytest.raises(LabelerError, match="cannot build labeler"):
        run_job(bad)
    assert not [n for n in os.listdir(out) if n.endswith(".parquet")]


def test_corrupt_manifest_is_an_error(shards: dict[str, list[str]], tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"format": "something else"}')
    with pytest.raises(JobError, match="not an extract-trt job manifest"):
        run_job(config(list(shards), tmp_path))


def test_resolve_shards(shards: dict[str, list[str]], tmp_path: Path) -> None:
    root = Path(next(iter(shards))).parent
    listing = tmp_path / "paths.txt"
    listing.write_text("# shards\n" + "\n".join(os.path.relpath(p, tmp_path) for p in list(shards)[:2]) + "\n\n")
    found = resolve_shards([f"@{listing}", str(root / "*.warc*"), str(root)])
    assert found == list(shards)[:2] + [str(root / "e-empty.warc.gz")] + list(shards)[2:4]
    for bad in (str(tmp_path / "missing.warc.gz"), str(tmp_path / "*.nothing"), str(tmp_path)):
        with pytest.raises(InputFormatError):
            resolve_shards([bad])


def test_same_name_in_two_directories(tmp_path: Path) -> None:
    for d in ("p", "q"):
        (tmp_path / d).mkdir()
        html_warc(tmp_path / d / "crawl.warc.gz", PAGES[:1])
    run_job(config([str(tmp_path / "p"), str(tmp_path / "q")], tmp_path / "out"))
    first, second = (e["output"] for e in manifest(tmp_path / "out")["shards"])
    assert first == "crawl.parquet" and second.startswith("crawl-") and len(second) == len("crawl-12345678.parquet")


def test_named_labeler_and_options() -> None:
    labeler = NamedLabeler("extract_trt.runtime.labelers.heuristic:HeuristicLabeler")
    assert labeler.build().name == "heuristic" and labeler.name == "heuristic"
    assert pickle.loads(pickle.dumps(labeler))._labeler is None  # workers build their own
    with pytest.raises(LabelerError, match="unknown labeler"):
        NamedLabeler("nope").build()
    with pytest.raises(JobConfigError, match="need a package.module:factory"):
        NamedLabeler("heuristic", {"device": "cuda"})
    with pytest.raises(JobConfigError, match="reads the page DOM"):
        JobConfig(inputs=["x"], output_dir="o", labeler="annotation", ray=RayOptions(pipeline="split"))
    assert RayOptions(gpus_per_actor=1).resolved_pipeline() == "split" and RayOptions().resolved_pipeline() == "fused"
    with pytest.raises(JobConfigError, match="unknown output"):
        JobConfig(inputs=["x"], output_dir="o", outputs=("pdf",))


def test_cli_run_job(shards: dict[str, list[str]], tmp_path: Path) -> None:
    runner = CliRunner()
    args = ["run-job", *shards, "-o", str(tmp_path / "out"), "--labeler", "heuristic", "--outputs", "text"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "5 shards written, 0 already done; 12 records, 0 errors" in first.output
    assert "shard a.parquet: 3 records" in first.output
    rows = read_out(tmp_path / "out", "a.parquet")
    assert rows[0]["text"] and rows[0]["markdown"] == ""
    second = runner.invoke(app, args)
    assert second.exit_code == 0 and "0 shards written, 5 already done" in second.output
    changed = runner.invoke(app, [*args[:-1], "markdown"])
    assert changed.exit_code == 2 and "other settings (changed: outputs)" in changed.output
    missing = runner.invoke(app, ["run-job", str(tmp_path / "none.warc.gz"), "-o", str(tmp_path / "o2")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_a_killed_runs_temp_files_are_removed(shards: dict[str, list[str]], tmp_path: Path) -> None:
    # SIGKILL between the temp write and the rename leaves these behind (seen in test_resume_after_kill).
    out = tmp_path / "out"
    run_job(config(list(shards), out))
    stale = [out / ".manifest.json.k1ll3d.tmp", out / f".{Path(next(iter(shards))).stem}.parquet.k1ll3d.tmp"]
    for path in stale:
        path.write_bytes(b"partial")
    run_job(config(list(shards), out))
    assert not [path for path in stale if path.exists()]
    assert_exactly_once(out, shards)


def test_ray_mode_without_ray_writes_nothing(shards: dict[str, list[str]], tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the `scale` extra were not installed
    monkeypatch.setitem(sys.modules, "ray.data", None)
    out = tmp_path / "out"
    with pytest.raises(ImportError):
        run_job(config(list(shards), out, ray=RayOptions()))
    assert not out.exists()  # no directory, no lock file, no manifest left behind
    result = CliRunner().invoke(app, ["run-job", *shards, "-o", str(out), "--labeler", "heuristic", "--ray"])
    assert result.exit_code == 2 and "extract-trt[scale]" in result.output and not out.exists()


def test_workers_auto() -> None:
    from extract_trt.cli.run_job import _workers
    from extract_trt.runtime.io.batch import available_cpus

    assert _workers("auto", False, None, None, 1.0, 0.0) == available_cpus()  # local: every CPU here
    assert _workers("auto", True, None, 8, 2.0, 0.0) == 4  # a local Ray: its CPUs ÷ CPUs per actor
    assert _workers("auto", True, None, 8, 1.0, 1.0) == 1  # GPU actors
    assert _workers("5", True, "ray://head:10001", None, 1.0, 0.0) == 5
    for args in (("auto", True, "ray://head:10001", None, 1.0, 0.0), ("0", False, None, None, 1.0, 0.0)):
        with pytest.raises(typer.Exit):
            _workers(*args)
