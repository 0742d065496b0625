"""Pulpie-format encoders on CPU: pages/s and tokens/s of a ~20M and a ~210M-parameter EuroBERT-shaped
encoder (random weights), fp32 vs dynamic int8, token-budget batching vs one page at a time, and the
padding the batcher saves; plus the analytic GPU projection (``extract_trt.eval.roofline``) for the
measured token counts.

Token counts are real pages' counts: a 32k-entry byte-level BPE (EuroBERT's tokenizer is Llama-3's BPE
with 128k entries; no hub access here) trained on trafilatura-eval block strings, applied to wcxb-dev
pages — different pages for training and measuring. Models pack to 8,192 tokens as Pulpie does.

    nice python bench/encoder.py                      # 20M: 10 pages; 210M: 2 pages
    nice python bench/encoder.py --sizes 20m --pages 40 --threads 2

Artifacts (tokenizer, checkpoints, exports) are cached under --work and reused.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from extract_trt.artifacts.manifest import MANIFEST_NAME
from extract_trt.export.encoder import EncoderExportOptions, export_encoder
from extract_trt.export.synthetic import EncoderShape, train_tokenizer, write_checkpoint
from extract_trt.kernels.batching import PaddingStats, plan_batches
from extract_trt.kernels.packing import pack_chunks
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.block_tokens import BlockTokenizer, block_strings
from extract_trt.runtime.labelers.encoder import EncoderLabeler
from extract_trt.runtime.labelers.session import SessionConfig

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SIZES = {
    # ~21.7M parameters: 12.3M embedding (32k vocab) + 4 layers of 2.4M.
    "20m": EncoderShape(hidden=384, layers=4, heads=6, intermediate=1536, vocab_size=32001, initializer_range=0.02),
    # EuroBERT-210m's shape (spec §3.4), its 128,257-entry vocabulary included: 211M parameters.
    "210m": EncoderShape(hidden=768, layers=12, heads=12, intermediate=3072, vocab_size=128257, initializer_range=0.02),
}
MAX_TOKENS = 8192


def read_pages(name: str, limit: int) -> list[tuple[str, str]]:
    out = []
    with gzip.open(DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            out.append((record["id"], record["html"]))
            if len(out) >= limit:
                break
    return out


def bench_tokenizer(work: Path):
    path = work / "tokenizer.json"
    if path.exists():
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(path))
    texts = [s for _, html in read_pages("trafilatura-eval", 300) for s in block_strings(simplify(html))]
    tokenizer = train_tokenizer(texts, vocab_size=32000)
    tokenizer.save(str(path))
    return tokenizer


def model_dir(work: Path, size: str, tokenizer) -> Path:
    out = work / f"model-{size}"
    if (out / MANIFEST_NAME).exists():
        return out
    ckpt = write_checkpoint(work / f"ckpt-{size}", "eurobert", tokenizer, SIZES[size])
    export_encoder(ckpt, out, EncoderExportOptions(variants=("fp32", "int8"), trust_remote_code=True), report=print)
    return out


def chunk_lengths(pages, block_tokenizer: BlockTokenizer, sep: int) -> list[list[int]]:
    return [[len(c) for c in pack_chunks(ids, MAX_TOKENS, sep, 0, 1)] for ids in block_tokenizer.encode_pages(pages)]


def padding_report(per_page: list[list[int]], budget: int) -> dict[str, PaddingStats]:
    """Padding of three ways to batch the same chunks (no model run needed)."""
    flat = [n for page in per_page for n in page]
    plans = {
        "sorted, padding ≤ 10 % (default)": plan_batches(flat, budget, max_padding=0.1),
        "sorted, no padding cap": plan_batches(flat, budget),
        "arrival order": plan_batches(flat, budget, sort=False),
    }
    report = {name: PaddingStats() for name in plans}
    for name, batches in plans.items():
        for batch in batches:
            report[name].add([flat[i] for i in batch])
    report["one page at a time"] = PaddingStats()
    for page in per_page:
        if page:
            report["one page at a time"].add(page)  # a page's chunks as one padded batch
    return report


def run_labeler(directory: Path, variant: str, pages, threads: int, budget: int, one_page: bool) -> dict:
    labeler = EncoderLabeler(
        directory,
        variant=variant,
        session=SessionConfig(providers=["cpu"], intra_op_num_threads=threads, allow_spinning=False),
        max_batch_tokens=budget,
        group_pages=len(pages),
    )
    labeler.label(pages[:1])  # warm-up: first-run allocations
    labeler.stats = PaddingStats()
    t0 = time.perf_counter()
    if one_page:
        for page in pages:
            labeler.label([page])
    else:
        labeler.label(pages)
    seconds = time.perf_counter() - t0
    stats = labeler.stats
    return {
        "variant": variant,
        "mode": "one page at a time" if one_page else "token-budget batches",
        "seconds": seconds,
        "pages_per_s": len(pages) / seconds,
        "tokens_per_s": stats.real_tokens / seconds,
        "padding": stats.waste,
        "batches": stats.batches,
    }


def length_sweep(directory: Path, lengths: list[int], threads: int) -> list[dict]:
    """tokens/s of one chunk of each length (random ids), fp32 vs int8: where attention takes over."""
    from extract_trt.runtime.labelers.session import create_session

    vocab = 32000
    rows = []
    for variant in ("fp32", "int8"):
        info = create_session(directory / ("model.onnx" if variant == "fp32" else "model.int8.onnx"),
                              SessionConfig(providers=["cpu"], intra_op_num_threads=threads, allow_spinning=False))
        for n in lengths:
            ids = np.random.default_rng(0).integers(3, vocab, (1, n), dtype=np.int64)
            ids[0, ::50] = vocab  # a <|sep|> every 50 tokens
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            info.session.run(None, feeds)
            repeats = max(1, 8192 // n)
            t0 = time.perf_counter()
            for _ in range(repeats):
                info.session.run(None, feeds)
            rows.append({"variant": variant, "tokens": n, "tokens_per_s": n * repeats / (time.perf_counter() - t0)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="20m,210m")
    parser.add_argument("--pages", type=int, default=10, help="pages for the 20M model")
    parser.add_argument("--large-pages", type=int, default=2, help="pages for the 210M model (fp32/int8, batched only)")
    parser.add_argument("--padding-pages", type=int, default=500, help="pages for the padding-only report")
    parser.add_argument("--max-page-tokens", type=int, default=MAX_TOKENS,
                        help="skip pages with more tokens (an 8,192-token chunk needs GBs of attention scores on CPU)")
    parser.add_argument("--budget", type=int, default=MAX_TOKENS, help="max_batch_tokens (rows x longest chunk) of the runs")
    parser.add_argument("--padding-budgets", default="8192,16384", help="budgets of the padding-only report")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--sweep", default="512,2048,4096", help="chunk lengths timed alone on the 20M model ('' to skip)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/extract-trt-bench-encoder"))
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    tokenizer = bench_tokenizer(args.work)
    block_tokenizer = BlockTokenizer.from_file(args.work / "tokenizer.json")
    sep = tokenizer.token_to_id("<|sep|>")
    print(f"tokenizer: {tokenizer.get_vocab_size():,} entries ({time.perf_counter() - t0:.1f} s)")

    # Padding: many pages, no model needed.
    padding_pages = [simplify(html) for _, html in read_pages("wcxb-dev", args.padding_pages)]
    lengths = chunk_lengths(padding_pages, block_tokenizer, sep)
    per_chunk = [n for page in lengths for n in page]
    print(f"\npadding, {len(padding_pages)} wcxb-dev pages, {len(per_chunk)} chunks of ≤ {MAX_TOKENS} tokens "
          f"(median {int(np.median(per_chunk)):,}, mean {int(np.mean(per_chunk)):,}, "
          f"chunks/page mean {len(per_chunk) / len(padding_pages):.2f})")
    figures: dict = {"machine": f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", "padding": {}, "runs": []}
    for budget in (int(b) for b in args.padding_budgets.split(",")):
        report = padding_report(lengths, budget)
        for name, stats in report.items():
            print(f"  budget {budget:>6,}  {name:28s} padded tokens {stats.padded_tokens:>11,}  padding {stats.waste:6.1%}")
            figures["padding"][f"{budget} {name}"] = {"waste": stats.waste, "padded_tokens": stats.padded_tokens}

    # The measured pages: wcxb-dev pages under the token cap, the first N of them.
    eligible = [(p, sum(n)) for p, n in zip(padding_pages, lengths) if 0 < sum(n) <= args.max_page_tokens]
    for size in args.sizes.split(","):
        count = args.pages if size == "20m" else args.large_pages
        pages = [p for p, _ in eligible[:count]]
        tokens = sum(n for _, n in eligible[:count])
        directory = model_dir(args.work, size, tokenizer)
        if size == "20m" and args.sweep:
            sweep = length_sweep(directory, [int(n) for n in args.sweep.split(",")], args.threads)
            figures["sweep"] = sweep
            print(f"\n{size}: one chunk alone, tokens/s by length: " + ", ".join(
                f"{r['variant']} {r['tokens']:,}: {r['tokens_per_s']:,.0f}" for r in sweep))
        print(f"\n{size}: {len(pages)} pages, {tokens:,} tokens, {args.threads} threads")
        print(f"  {'variant':8s} {'mode':24s} {'pages/s':>8s} {'tokens/s':>9s} {'padding':>8s} {'batches':>8s}")
        for variant in ("fp32", "int8"):
            for one_page in (False, True) if size == "20m" else (False,):
                row = run_labeler(directory, variant, pages, args.threads, args.budget, one_page)
                row.update(size=size, pages=len(pages))
                figures["runs"].append(row)
                print(f"  {variant:8s} {row['mode']:24s} {row['pages_per_s']:8.2f} {row['tokens_per_s']:9,.0f} "
                      f"{row['padding']:8.1%} {row['batches']:8d}")

    gpu_projection(lengths, figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


def gpu_projection(lengths: list[list[int]], figures: dict) -> None:
    """No GPU here: the roofline projection of Pulpie Small (EuroBERT-210m) for these token counts."""
    from extract_trt.eval.roofline import project
    from extract_trt.eval.tokens import PageTokens

    pages = [PageTokens(blocks=0, html_chars=0, html_tokens=0, chunks=n, prompt=0, output=0) for n in lengths if n]
    print("\nGPU projection (raw analytic roofline, extract_trt.eval.roofline; computed, not measured; an upper bound):")
    figures["gpu_projection"] = []
    for gpu in ("l4", "a100"):
        p = project("pulpie-small", gpu, pages)
        figures["gpu_projection"].append({"gpu": gpu, "pages_per_s": p.pages_per_s, "dollars_per_million": p.dollars_per_million})
        print(f"  pulpie-small (210M) on {gpu}: {p.pages_per_s:,.0f} pages/s, ${p.dollars_per_million:.2f} per million pages")


if __name__ == "__main__":
    main()
