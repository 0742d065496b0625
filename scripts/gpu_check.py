"""GPU check of the TensorRT path (run by scripts/gpu-check.sh on a machine with an NVIDIA L4 or A100 and
TensorRT 10): for the tiny test encoders (EuroBERT/BERT/ModernBERT), the ~20M EuroBERT-shaped encoder of
bench/encoder.py and the tiny decoder, build engines with `export_tensorrt`, compare engine labels and
main-probabilities with ONNX Runtime CPU on real pages, and print pages/s of both. Also parses the block
model with TensorRT's real ONNX parser. Exit status 1 when an engine disagrees or a build fails."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]


def compare(model_dir: Path, gpu: str, precision: str, pages, min_agreement: float) -> bool:
    from extract_trt.export.trt_engine import TrtExportOptions, export_tensorrt
    from extract_trt.runtime.labelers.encoder import EncoderLabeler
    from extract_trt.runtime.labelers.session import SessionConfig
    from extract_trt.runtime.labelers.trt_engine import EngineEncoderLabeler

    record = export_tensorrt(model_dir, TrtExportOptions(gpu=gpu, precision=precision, max_batch_size=32), report=print)
    cpu = EncoderLabeler(model_dir, session=SessionConfig(providers="cpu"), max_batch_size=32)
    engine = EngineEncoderLabeler(model_dir, engine=record.key, max_batch_size=32)
    engine.label(pages[:2])  # warm-up
    t0 = time.perf_counter()
    expected = cpu.label(pages)
    t1 = time.perf_counter()
    got = engine.label(pages)
    t2 = time.perf_counter()
    main_e, main_g = np.concatenate([e.main for e in expected]), np.concatenate([g.main for g in got])
    prob = max(float(np.abs(g.probability - e.probability).max()) for g, e in zip(got, expected) if len(e.main))
    agreement = float((main_e == main_g).mean())
    print(f"{model_dir.name} {record.key}: labels agree {agreement:.2%} on {len(main_e)} blocks, max |Δp(main)| {prob:.2e}; "
          f"pages/s ORT CPU {len(pages) / (t1 - t0):.2f}, TensorRT {len(pages) / (t2 - t1):.2f} "
          f"({(t1 - t0) / (t2 - t1):.1f}x)")  # fmt: skip
    return agreement >= min_agreement


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--gpu", required=True, choices=["l4", "a100"])
    parser.add_argument("--pages", type=int, default=100)
    args = parser.parse_args()
    import encoder as bench_encoder  # bench/encoder.py: the ~20M model and its tokenizer
    import decoder_fixtures
    import encoder_fixtures as fx
    from extract_trt.artifacts.trt_engine import ShapeRange
    from extract_trt.export.trt_engine import TrtExportOptions, build_engine, export_tensorrt
    from extract_trt.export.trt_profiles import EngineProfile
    from extract_trt.runtime.html.simplify import simplify
    from extract_trt.runtime.labelers.features import MARKUP_KINDS, N_DENSE, TEXT_FIELDS

    ok = True
    pages = [simplify(html) for _, html in bench_encoder.read_pages("wcxb-dev", args.pages)]
    for architecture in ("eurobert", "bert", "modernbert"):
        for precision in ("fp16", "bf16"):
            ok &= compare(fx.exported(architecture), args.gpu, precision, pages, 0.98)
    ok &= compare(fx.exported("eurobert"), args.gpu, "int8", pages, 0.9)
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    model_20m = bench_encoder.model_dir(work, "20m", bench_encoder.bench_tokenizer(work))
    ok &= compare(model_20m, args.gpu, "fp16", pages, 0.98)
    decoder_dir = decoder_fixtures.exported(0, "mineru-v1.1", 4096)
    print(export_tensorrt(decoder_dir, TrtExportOptions(gpu=args.gpu, precision="fp16"), report=print).profiles)
    block = ROOT / "src" / "extract_trt" / "models" / "block-model" / "model.onnx"
    dim = json.loads((block.parent / "block-model.json").read_text())["model"]["embed_dim"]
    bags = TEXT_FIELDS + MARKUP_KINDS  # rows of the bag sums per block (the graph's input; see BlockModel)
    profile = EngineProfile("blocks", {  # one window: 1 to 512 blocks
        "sums": ShapeRange((bags, dim), (256 * bags, dim), (512 * bags, dim)),
        "dense": ShapeRange((1, N_DENSE), (256, N_DENSE), (512, N_DENSE)),
        "markup": ShapeRange((1, MARKUP_KINDS), (256, MARKUP_KINDS), (512, MARKUP_KINDS)),
        "norms": ShapeRange((1, TEXT_FIELDS + 1), (256, TEXT_FIELDS + 1), (512, TEXT_FIELDS + 1)),
    })  # fmt: skip
    build_engine(block, work / "block-model.plan", precision="fp16", profiles=[profile], workspace_bytes=1 << 30,
                 timing_cache=work / "block.timing")  # fmt: skip
    print("block model: TensorRT built an engine")
    print("gpu-check:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
