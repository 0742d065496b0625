"""run-job throughput: local process pool vs Ray Data (fused and split pipelines) on the same job, with 1 and 2
workers, and peak memory per process. Each configuration runs in a fresh subprocess (a fresh Ray when it
uses Ray); its process tree is sampled every 0.1 s for peak RSS / USS per process.

    python bench/job.py [--pages 160] [--shards 4] [--labeler heuristic] [--modes local,fused,split] [--workers 1,2]

Prints per configuration: job seconds (run_job, after ray.init for Ray), Ray start-up seconds, pages/s,
the ratio to the local pool with the same number of workers, CPU milliseconds per page of the whole
process tree (less sensitive than pages/s to other load on a shared machine), and peak memory of the
driver, of the largest worker, and of Ray's own processes (GCS, raylet, idle workers, …) together.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from itertools import islice
from pathlib import Path

DATA = Path(os.environ.get("EXTRACT_TRT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def build_shards(root: Path, pages: int, shards: int) -> None:
    """``shards`` WARC.gz files holding the first ``pages`` wcxb-dev pages (warcio writer)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as f:
        html = [json.loads(line)["html"] for line in islice(f, pages)]
    per = -(-len(html) // shards)
    for s in range(shards):
        with open(root / f"shard-{s:02d}.warc.gz", "wb") as out:
            writer = WARCWriter(out, gzip=True)
            for i, page in enumerate(html[s * per : (s + 1) * per]):
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1")
                writer.write_record(
                    writer.create_warc_record(
                        f"https://example.org/{s}/{i}", "response", payload=io.BytesIO(page.encode()), http_headers=http
                    )
                )


def run_one(args: argparse.Namespace) -> None:
    """Child process: one configuration; prints a JSON line with the timings."""
    from extract_trt.job import JobConfig, RayOptions, run_job

    ray_opts = None
    ray_start = 0.0
    if args.mode != "local":
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=2, object_store_memory=200 * 2**20, include_dashboard=False, log_to_driver=False)
        ray_start = time.perf_counter() - t0
        # split: the actors must leave a CPU to the CPU stages (2 actors take half a CPU each)
        ray_opts = RayOptions(pipeline=args.mode, cpus_per_actor=1.0 if args.mode == "fused" else 1.0 / args.w)
    Path(args.out + ".started").touch()  # tells the sampler that start-up is over
    config = JobConfig(inputs=[args.inputs], output_dir=args.out, labeler=args.labeler, workers=args.w, ray=ray_opts)
    summary = run_job(config)
    print(json.dumps({"records": summary.records, "errors": summary.errors, "job_s": summary.seconds, "ray_start_s": ray_start}))


class TreeSampler:
    """Peak RSS and USS (MB) and CPU seconds per process of a process tree, sampled in a thread."""

    def __init__(self, pid: int, started: Path, interval: float = 0.1) -> None:
        import psutil

        self.root = psutil.Process(pid)
        self.started = started  # exists once the child's start-up (Ray's) is over: CPU is counted from there
        self.interval = interval
        self.peaks: dict[int, dict] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                break
            started = self.started.exists()
            for p in procs:
                try:
                    mem = p.memory_full_info()
                    cpu = p.cpu_times()
                    if p.pid not in self.peaks:  # born after start-up: all its CPU counts
                        self.peaks[p.pid] = {"kind": _kind(p), "rss": 0.0, "uss": 0.0, "cpu0": 0.0 if started else None}
                    peak = self.peaks[p.pid]
                    peak["cpu"] = cpu.user + cpu.system  # last seen: misses at most one interval per process
                    if peak["cpu0"] is None and started:
                        peak["cpu0"] = peak["cpu"]
                    if peak["kind"] == "ray idle worker":
                        peak["kind"] = _kind(p)  # Ray workers get their task's name once they run one
                    peak["rss"] = max(peak["rss"], mem.rss / 2**20)
                    peak["uss"] = max(peak["uss"], mem.uss / 2**20)
                except psutil.Error:
                    pass
            time.sleep(self.interval)

    def stop(self) -> dict[int, dict]:
        self._stop.set()
        self._thread.join()
        return self.peaks


def _kind(p) -> str:
    cmd = " ".join(p.cmdline())
    if "bench/job.py" in cmd:
        return "driver"
    if "multiprocessing.spawn" in cmd:
        return "pool worker"
    if cmd.startswith("ray::IDLE") or "default_worker.py" in cmd:
        return "ray idle worker"
    if cmd.startswith("ray::"):
        return "ray worker"
    return "ray system"  # GCS, raylet, log monitor, … (and idle workers that never ran a task)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=160)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--labeler", default="heuristic")
    ap.add_argument("--modes", default="local,fused,split")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--run", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    ap.add_argument("-w", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--inputs", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run:
        run_one(args)
        return

    work = Path(tempfile.mkdtemp(prefix="bench-job-"))
    (work / "in").mkdir()
    build_shards(work / "in", args.pages, args.shards)
    print(f"{args.pages} wcxb-dev pages in {args.shards} WARC.gz shards, labeler {args.labeler}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; Ray: num_cpus=2, 200 MB object store; "
          "one fresh process per row")  # fmt: skip
    rows = []
    for mode in args.modes.split(","):
        for w in map(int, args.workers.split(",")):
            out = work / f"out-{mode}-{w}"
            cmd = [sys.executable, __file__, "--run", "--mode", mode, "-w", str(w), "--inputs", str(work / "in"),
                   "--out", str(out), "--labeler", args.labeler]  # fmt: skip
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            sampler = TreeSampler(proc.pid, Path(str(out) + ".started"))
            stdout, _ = proc.communicate()
            peaks = sampler.stop()
            wall = time.perf_counter() - t0
            result = json.loads(stdout.strip().splitlines()[-1])
            workers = [p for p in peaks.values() if p["kind"] in ("pool worker", "ray worker")]
            driver = [p for p in peaks.values() if p["kind"] == "driver"]
            system = [p for p in peaks.values() if p["kind"] in ("ray system", "ray idle worker")]
            rows.append(
                {
                    "mode": mode if mode == "local" else f"ray {mode}",
                    "w": w,
                    **result,
                    "wall_s": wall,
                    "pages_s": result["records"] / result["job_s"],
                    "driver_rss": max((p["rss"] for p in driver), default=0),
                    "worker_rss": max((p["rss"] for p in workers), default=0),
                    "worker_uss": max((p["uss"] for p in workers), default=0),
                    "n_workers": len(workers),
                    "ray_system_rss": sum(p["rss"] for p in system),
                    "cpu_ms_page": 1000 * sum(p["cpu"] - p["cpu0"] for p in peaks.values() if p["cpu0"] is not None) / result["records"],
                }
            )
            shutil.rmtree(out, ignore_errors=True)
    base = {r["w"]: r["pages_s"] for r in rows if r["mode"] == "local"}
    print(f"{'mode':11s} {'w':>2s} {'pages':>5s} {'job s':>6s} {'start s':>7s} {'pages/s':>8s} {'× pool':>6s} "
          f"{'CPU ms/page':>11s} {'driver MB':>9s} {'worker MB rss/uss':>17s} {'procs':>5s} {'ray sys MB':>10s}")  # fmt: skip
    for r in rows:
        ratio = f"{r['pages_s'] / base[r['w']]:6.2f}" if r["w"] in base else "     -"
        print(f"{r['mode']:11s} {r['w']:2d} {r['records']:5d} {r['job_s']:6.1f} {r['ray_start_s']:7.1f} {r['pages_s']:8.1f} "
              f"{ratio} {r['cpu_ms_page']:11.0f} {r['driver_rss']:9.0f} {r['worker_rss']:8.0f}/{r['worker_uss']:<8.0f} {r['n_workers']:5d} "
              f"{r['ray_system_rss']:10.0f}")  # fmt: skip
    print(f"load average at the end: {os.getloadavg()[0]:.1f}; CPU ms/page = CPU time of the whole process tree "
          "(driver, workers, Ray's processes) per page, from the end of ray.init")  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
