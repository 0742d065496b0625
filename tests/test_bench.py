"""Bench, cost and roofline: real pipeline runs on shared pages, providers read from real ORT sessions,
the projection's formulas and its check against the published figures."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from itertools import islice
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper
from typer.testing import CliRunner

from extract_trt.cli import app
from extract_trt.eval.bench import (
    PipelineRun,
    ProcessSampler,
    as_bytes_records,
    bench_matrix,
    bench_pipeline,
    session_providers,
)
from extract_trt.eval.bench import run_cost
from extract_trt.eval.cost import DEFAULT_PRICES, Cost, cost_per_million, gpu_kind, load_prices, machine_price
from extract_trt.eval.roofline import (
    ARCHS,
    GPUS,
    PUBLISHED,
    Assumptions,
    calibration,
    check_published,
    decode_flops,
    page_cost,
    prefill_flops,
    project,
    published_workload,
    roofline_report,
)
from extract_trt.eval.tokens import PageTokens, answer_tokens, measure_pages, pack_lengths, train_bpe
from extract_trt.runtime.html.simplify import simplify

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _pages(n: int, name: str = "wcxb-dev") -> list[dict]:
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [{"id": r["id"], "html": r["html"]} for r in map(json.loads, islice(fh, n))]


# ------------------------------------------------------------------------------------------ pipeline bench


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return as_bytes_records(_pages(6))


def test_single_process_run_reports_every_stage(records):
    run = bench_pipeline(records, "heuristic", batch_size=2, repeats=2)
    assert run.skipped is None and run.errors == 0 and run.pages == 6
    assert set(run.stage_seconds) == {"decode", "simplify", "label", "reconstruct", "convert"}
    assert all(v > 0 for v in run.stage_seconds.values())
    # every input page counts, in each repeat; the warm-up batch (one per worker) does not
    assert run.warmup_pages == 2 and run.pages_per_repeat == 6 and run.measured_pages == 12
    assert len(run.latencies) == 12 and len(run.repeat_rates) == 2 and run.cpu_seconds > 0
    low, high = run.pages_per_s_interval
    assert low <= run.pages_per_s <= high
    assert run.startup_seconds > 0 and run.wall_seconds > run.measured_seconds
    assert run.peak_rss > 50 * 2**20
    assert run.providers_used is None  # the heuristic has no ONNX Runtime session
    assert run.sub_stage_seconds == {}  # nor a prepare/infer split


def test_worker_processes_and_the_default_model_on_ort(records):
    (one, two) = bench_matrix(records[:4], ["default"], worker_counts=(1, 2), batch_size=2, repeats=2)
    for run in (one, two):
        assert run.skipped is None and run.errors == 0 and len(run.latencies) == 8
    assert one.providers_used == ["CPUExecutionProvider"]  # read from the block model's session
    assert two.workers == 2 and two.stage_seconds["label"] > 0  # timings come back from the workers
    assert two.warmup_pages == 4  # a batch per worker: both workers have started before the clock runs
    assert two.cpu_seconds > 0 and two.pages_per_core_s > 0
    # the workers' start-up (interpreter, imports, model load: over a CPU-second each) is not counted
    assert two.cpu_seconds < two.measured_seconds * 2 + 0.5


def test_a_small_sample_warns_and_pages_are_cycled_to_whole_batches(records):
    run = bench_pipeline(records[:3], "heuristic", batch_size=4, repeats=1, warmup_pages=0, sub_stages=False)
    assert run.pages_per_repeat == 4 and run.measured_pages == 4
    text = " | ".join(run.warnings())
    assert "no interval" in text and "small sample" in text and "cycles them to 4" in text
    assert "first repeat includes start-up" in text
    quiet = PipelineRun("x", 1, 200, pages_per_repeat=208, repeats=3, warmup_pages=16, repeat_rates=[50.0, 51.0, 50.5])
    assert quiet.warnings() == []
    noisy = PipelineRun("x", 1, 200, pages_per_repeat=208, repeats=3, warmup_pages=16, repeat_rates=[67.0, 144.0, 90.0])
    assert any("varies" in w for w in noisy.warnings())


def test_process_sampler_counts_child_cpu_and_memory():
    import psutil

    busy = 'import time\nt = time.process_time()\nx = b"x" * (80 * 2**20)\nwhile time.process_time() - t < 0.4: pass'
    own = psutil.Process().memory_info().rss
    with ProcessSampler() as sampler:
        subprocess.run([sys.executable, "-c", busy], check=True)
    assert sampler.children_cpu_seconds >= 0.25  # sampled every 20 ms: the last few ms may be missed
    assert sampler.peak_rss - own > 70 * 2**20  # the child's 80 MB buffer was resident


def test_a_provider_for_a_labeler_that_cannot_take_one_is_reported_not_fatal(records):
    run = bench_pipeline(records[:1], "heuristic", provider="CUDAExecutionProvider")
    assert run.skipped and "extract-trt export" in run.skipped
    assert bench_pipeline(records[:1], "no-such-labeler").skipped


def _identity_session(path: Path) -> ort.InferenceSession:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_session_providers_are_found_inside_a_labeler_and_fallback_is_flagged(tmp_path):
    session = _identity_session(tmp_path / "id.onnx")
    assert session.run(None, {"x": np.ones(1, np.float32)})[0][0] == 1.0

    class Holder:
        def __init__(self):
            self.backend = {"main": session}

    assert session_providers(Holder()) == ["CPUExecutionProvider"]
    run = PipelineRun("x", 1, 1, provider_requested="CUDAExecutionProvider", providers_used=["CPUExecutionProvider"])
    assert run.fallback and not run.on_gpu
    assert not PipelineRun("x", 1, 1, provider_requested="CPUExecutionProvider", providers_used=["CPUExecutionProvider"]).fallback


def test_exported_encoder_on_a_requested_provider(records):
    """An exported model asked for CUDA on a CPU-only build runs on CPU and is flagged as a fallback."""
    pytest.importorskip("optimum")
    import encoder_fixtures

    model = str(encoder_fixtures.exported("bert"))
    pages = as_bytes_records(_pages(2, "pulpie-pages"))
    runs = bench_matrix(pages, [model], providers=["CPUExecutionProvider", "CUDAExecutionProvider"], batch_size=2)
    cpu, cuda = runs
    assert cpu.skipped is None and cpu.providers_used[0] == "CPUExecutionProvider" and not cpu.fallback
    # the encoder's prepare/infer steps are timed apart: tokenize + pack vs the model
    assert set(cpu.sub_stage_seconds) == {"tokenize+pack", "infer"} and all(v > 0 for v in cpu.sub_stage_seconds.values())
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        assert cuda.fallback and cuda.providers_used[0] == "CPUExecutionProvider"


# ------------------------------------------------------------------------------------------ cost


def test_cost_presets_reproduce_pulpies_published_cost():
    assert cost_per_million(13.7, DEFAULT_PRICES.gpu("l4").per_hour) * 1000 == pytest.approx(7907, abs=1)  # "$7,900 per 1B"
    assert DEFAULT_PRICES.gpu("A100").per_hour == 1.5 and DEFAULT_PRICES.vcpu.per_hour == 0.045
    assert all("20" in p.source for p in (DEFAULT_PRICES.vcpu, *DEFAULT_PRICES.gpus.values()))  # source and date
    assert machine_price("2.5").per_hour == 2.5 and machine_price(0.1).per_hour == 0.1
    with pytest.raises(ValueError, match="--prices"):
        machine_price("l4")  # a GPU kind is not a machine price
    with pytest.raises(ValueError):
        cost_per_million(0, 1.0)


def test_cost_rows_name_their_prices_and_units():
    cpu2 = PipelineRun("x", 2, 10, pages_per_repeat=10, repeats=1, repeat_rates=[20.0])
    cost = run_cost(cpu2)
    assert cost.describe() == "2 vcpu × $0.045/h"  # a worker is a vCPU
    assert cost.dollars_per_million == pytest.approx(cost_per_million(20.0, 0.09))
    gpu = PipelineRun("x", 1, 10, pages_per_repeat=10, repeats=1, repeat_rates=[13.7],
                      providers_used=["CUDAExecutionProvider", "CPUExecutionProvider"])  # fmt: skip
    on_l4 = run_cost(gpu, gpu_name="NVIDIA L4")
    assert on_l4.describe() == "1 gpu.l4 × $0.39/h + 1 vcpu × $0.045/h"
    unknown = run_cost(gpu, gpu_name="NVIDIA H200")
    assert unknown.dollars_per_million is None and "[gpu.h200]" in unknown.describe()
    whole = run_cost(gpu, machine=machine_price(3.0))
    assert whole.describe() == "1 machine × $3/h" and whole.dollars_per_million == pytest.approx(cost_per_million(13.7, 3.0))
    assert gpu_kind("NVIDIA A100-SXM4-80GB") == "a100" and gpu_kind("NVIDIA L40S") == "l40s" and gpu_kind("Intel") is None
    assert Cost(((DEFAULT_PRICES.vcpu, 4),), None).dollars_per_million is None


def test_prices_file_replaces_and_adds_parts(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[vcpu]\nper_hour = 0.02\nsource = "our cluster"\n\n[gpu.h200]\nper_hour = 3.5\n')
    prices = load_prices(path)
    assert prices.vcpu.per_hour == 0.02 and prices.vcpu.source == "our cluster"
    assert prices.gpu("h200").per_hour == 3.5 and prices.gpu("l4").per_hour == 0.39  # defaults kept
    for bad in ('[cpu]\nper_hour = 1\n', '[vcpu]\nper_hour = "cheap"\n', '[vcpu]\nprice = 1\n', 'vcpu = ['):
        path.write_text(bad)
        with pytest.raises(ValueError):
            load_prices(path)


# ------------------------------------------------------------------------------------------ tokens


def test_pack_lengths_follow_the_reference_packer():
    assert pack_lengths([]) == []
    assert pack_lengths([10, 20]) == [11 + 21 + 2]
    assert pack_lengths([5000, 4000, 10]) == [5001 + 2, 4001 + 11 + 2]  # the second block does not fit
    assert pack_lengths([5, 20000, 5]) == [6 + 2, 8192, 6 + 2]  # an oversized block is cut and sits alone
    assert pack_lengths([100] * 3, max_tokens=205) == [101 + 101 + 2, 101 + 2]


def test_answer_tokens():
    assert answer_tokens(0) == 7  # <answer></answer> + EOS
    assert answer_tokens(12) == 6 + (9 + 3 * 2) + 12 + 1  # digits of 1..12, one label token each


def test_measure_pages_is_two_fold_or_uses_a_given_tokenizer(tmp_path):
    pages = [simplify(r["html"]) for r in _pages(3, "pulpie-pages") + _pages(3)]
    counts, how = measure_pages(pages, vocab_size=2000, min_bpe_pages=4)
    assert "two-fold" in how and len(counts) == 6
    for page, c in zip(pages, counts):
        assert c.blocks == len(page.blocks) and c.html_chars == len(page.simplified_html)
        assert c.prompt > c.html_tokens > 0 and c.output == answer_tokens(len(page.blocks))
        assert sum(c.chunks) >= len(page.blocks) + 2  # one <sep> per block, BOS/EOS per chunk
    tok = train_bpe((p.simplified_html for p in pages), vocab_size=1000)
    tok.save(str(tmp_path / "tokenizer.json"))
    given, how = measure_pages(pages[:2], str(tmp_path / "tokenizer.json"))
    assert "tokenizer.json" in how
    assert given[0].html_tokens == len(tok.encode(pages[0].simplified_html, add_special_tokens=False).ids)
    few, how = measure_pages(pages[:2])
    assert "characters per token" in how and few[0].html_tokens == -(-len(pages[0].simplified_html) // 3.3)


# ------------------------------------------------------------------------------------------ roofline


def test_dripper_formulas_by_hand():
    small = ARCHS["pulpie-small"]  # L = 12, d = 768
    assert prefill_flops(small, 1000) == 24 * 12 * 768**2 * 1000 + 4 * 12 * 768 * 1000**2
    qwen = ARCHS["dripper-v1.0"]  # L = 28, d = 1024
    assert decode_flops(qwen, 4000, 100) == 24 * 28 * 1024**2 * 100 + 4 * 28 * 1024 * 100 * 4000 + 2 * 28 * 1024 * 100**2


def test_roofline_bounds():
    a = Assumptions()
    page = PageTokens(blocks=10, html_chars=0, html_tokens=0, chunks=[4000], prompt=4000, output=100)
    enc = page_cost(ARCHS["pulpie-small"], GPUS["l4"], page, a)
    assert enc.compute_s > enc.memory_s and enc.seconds == pytest.approx(enc.compute_s)  # encoders: compute-bound
    dec = page_cost(ARCHS["dripper-v1.1"], GPUS["l4"], page, a)
    assert dec.flops > enc.flops * 2 and dec.seconds > enc.seconds
    # twice the efficiency, twice the pages/s
    fast = project("pulpie-small", "a100", [page], Assumptions(compute_efficiency=1.0, bandwidth_efficiency=1.0))
    assert fast.price_per_hour == 1.5  # each GPU at its own kind's price
    slow = project("pulpie-small", "a100", [page], Assumptions(compute_efficiency=0.5, bandwidth_efficiency=0.5))
    assert fast.pages_per_s == pytest.approx(2 * slow.pages_per_s)
    assert fast.dollars_per_million == pytest.approx(cost_per_million(fast.pages_per_s, 1.5))


def test_check_against_published_figures():
    checks = check_published()
    assert {(c.projection.model, c.projection.gpu) for c in checks} == set(PUBLISHED)
    for c in checks:
        assert c.error == pytest.approx(c.projection.pages_per_s / c.published - 1)
        # at the implied efficiency the projection reproduces the published figure
        k = c.implied_efficiency / c.assumptions.compute_efficiency
        a = Assumptions(compute_efficiency=c.implied_efficiency, bandwidth_efficiency=0.8 * k)
        again = project(c.projection.model, c.projection.gpu, published_workload(), a)
        assert again.pages_per_s == pytest.approx(c.published, rel=1e-6)
    factors = calibration(checks)
    for c in checks:
        assert c.projection.pages_per_s * factors[c.projection.model, c.projection.gpu] == pytest.approx(c.published)


def test_roofline_report_on_measured_pages():
    pages = [simplify(r["html"]) for r in _pages(2, "pulpie-pages")]
    report = roofline_report(pages, prices=load_prices(None))
    assert len(report.projections) == len(ARCHS) * len(GPUS)
    text = report.to_text()
    assert "published" in text and "dripper-v1.1" in text and "an assumed 3.3 characters per token" in text
    assert "computed, not measured" in text and "upper bound" in text and "calibrated" in text
    data = report.to_json()
    assert json.dumps(data) and "spec §3.7" in data["calibration_source"]
    by_kind = {p.gpu: p.price_per_hour for p in report.projections}
    assert by_kind == {"l4": 0.39, "a100": 1.5}  # never one price for every GPU
    small_l4 = next(c for c in data["calibrated"] if (c["model"], c["gpu"]) == ("pulpie-small", "l4"))
    raw = next(p for p in report.projections if (p.model, p.gpu) == ("pulpie-small", "l4"))
    assert small_l4["pages_per_s"] == pytest.approx(raw.pages_per_s * small_l4["factor"])
    assert small_l4["dollars_per_million"] == pytest.approx(cost_per_million(small_l4["pages_per_s"], 0.39))


# ------------------------------------------------------------------------------------------ CLI


def test_bench_command_prints_stages_and_cost(tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "-l", "heuristic", "-w", "1", "--repeats", "2", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "$/M pages" in result.output and "simplify" in result.output and "Roofline check" in result.output
    assert "start-up: heuristic" in result.output and "warning: heuristic" in result.output
    data = json.loads(out.read_text())
    (run,) = data["runs"]
    assert run["labeler"] == "heuristic" and run["pages"] == 3 and run["dollars_per_million"] > 0
    # a 1-worker CPU run is priced as one vCPU on its pages/s
    assert run["cost"]["priced_as"] == "1 vcpu × $0.045/h"
    assert run["dollars_per_million"] == pytest.approx(0.045 / (run["pages_per_s"] * 3600) * 1e6)
    # and on the CPU time it used: what a machine busy with this work only would cost
    assert run["dollars_per_million_cpu_time"] == pytest.approx(0.045 / (run["pages_per_core_s"] * 3600) * 1e6)
    assert len(run["repeat_pages_per_s"]) == 2 and run["pages_per_s_low"] <= run["pages_per_s"] <= run["pages_per_s_high"]
    # --price-per-hour prices this machine only: the roofline's GPUs keep their own prices
    machine = CliRunner().invoke(app, ["bench", "-l", "heuristic", "-w", "1", "--repeats", "1", "--price-per-hour", "7",
                                       "--json", str(out)])  # fmt: skip
    assert machine.exit_code == 0, machine.output
    data = json.loads(out.read_text())
    assert data["runs"][0]["cost"]["priced_as"] == "1 machine × $7/h"
    assert {p["gpu"]: p["price_per_hour"] for p in data["roofline"]["projections"]} == {"l4": 0.39, "a100": 1.5}
    for args in (["--price-per-hour", "l4"], ["--prices", str(tmp_path / "missing.toml")]):
        bad = CliRunner().invoke(app, ["bench", *args, "--no-roofline"])
        assert bad.exit_code == 2, args
