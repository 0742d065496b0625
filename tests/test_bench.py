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
from extract_trt.eval.cost import PRICES, cost_per_million, resolve_price
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
from extract_trt.runtime.simplify import simplify

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _pages(n: int, name: str = "wcxb-dev") -> list[dict]:
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [{"id": r["id"], "html": r["html"]} for r in map(json.loads, islice(fh, n))]


# ------------------------------------------------------------------------------------------ pipeline bench


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return as_bytes_records(_pages(6))


def test_single_process_run_reports_every_stage(records):
    run = bench_pipeline(records, "heuristic", batch_size=2)
    assert run.skipped is None and run.errors == 0 and run.pages == 6
    assert set(run.stage_seconds) == {"decode", "simplify", "label", "reconstruct", "convert"}
    assert all(v > 0 for v in run.stage_seconds.values())
    assert len(run.latencies) == 6 and run.pages_per_s > 0 and run.cpu_seconds > 0
    assert run.steady_pages == 4  # the first batch of 2 is start-up
    assert run.peak_rss > 50 * 2**20
    assert run.providers_used is None  # the heuristic has no ONNX Runtime session
    assert run.sub_stage_seconds == {}  # nor a prepare/infer split


def test_worker_processes_and_the_default_model_on_ort(records):
    (one, two) = bench_matrix(records[:4], ["default"], worker_counts=(1, 2), batch_size=2)
    for run in (one, two):
        assert run.skipped is None and run.errors == 0 and len(run.latencies) == 4
    assert one.providers_used == ["CPUExecutionProvider"]  # read from the block model's session
    assert two.workers == 2 and two.stage_seconds["label"] > 0  # timings come back from the workers
    assert two.cpu_seconds > 0 and two.pages_per_core_s > 0


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
    assert cost_per_million(13.7, PRICES["l4"].per_hour) * 1000 == pytest.approx(7907, abs=1)  # "$7,900 per 1B"
    assert resolve_price("A100").per_hour == 1.5 and resolve_price("cpu-core").per_hour == 0.045
    assert resolve_price("2.5").per_hour == 2.5 and resolve_price(0.1).per_hour == 0.1
    with pytest.raises(ValueError):
        resolve_price("tpu")
    with pytest.raises(ValueError):
        cost_per_million(0, 1.0)


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
    report = roofline_report(pages)
    assert len(report.projections) == len(ARCHS) * len(GPUS)
    text = report.to_text()
    assert "published" in text and "dripper-v1.1" in text and "characters per token" in text
    assert json.dumps(report.to_json())


# ------------------------------------------------------------------------------------------ CLI


def test_bench_command_prints_stages_and_cost(tmp_path):
    out = tmp_path / "bench.json"
    result = CliRunner().invoke(app, ["bench", "-l", "heuristic", "-w", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "$/M pages" in result.output and "simplify" in result.output and "Roofline check" in result.output
    data = json.loads(out.read_text())
    (run,) = data["runs"]
    assert run["labeler"] == "heuristic" and run["pages"] == 3 and run["dollars_per_million"] > 0
    # a CPU run is priced per core-second used
    assert run["price"] == "cpu-core" and run["dollars_per_million"] == pytest.approx(0.045 / (run["pages_per_core_s"] * 3600) * 1e6)
    bad = CliRunner().invoke(app, ["bench", "--price-per-hour", "tpu", "--no-roofline"])
    assert bad.exit_code == 2
