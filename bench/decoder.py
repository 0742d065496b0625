"""Forward passes, tokens processed and wall time per page of the constrained decoders (naive one token
per pass, jump-forward, speculative) on a random model with Qwen3-0.6B's width.

The model: Qwen3 with hidden 1024, FFN 3072, 16 query / 8 KV heads of 128, vocabulary 151,936 (tied), and
only ``--layers`` of the real 28 layers (a full 0.6B export needs ~17 GB of RAM; pass counts do not
depend on depth), random weights, exported once with ``extract-trt``'s exporter (int8 with ``--int8``)
into ``--workdir``. The tokenizer is a 32k byte-level BPE trained on the pages (Qwen's pre-tokenizer),
so prompt lengths are close to, not equal to, Qwen's.

Speculative decoding is run with drafts that agree with the model on 100 % and 90 % of the blocks (the
model's own answer, some labels flipped) and with the default labeler (the built-in block model, ≈ 50 %
agreement with a random model); a drafter that agrees with the real Dripper on 9 blocks of 10 is what the
90 % row stands for. In fp32 every mode must give the naive decoder's labels (checked); column "= naive"
is the share of identical choices (int8 dynamic quantization makes a token's logits depend on the chunk
it is fed in, so near-ties can flip).

Scaling to 28 layers: with ``--layers 2,4`` the per-pass time is fitted as ``a + b·layers`` per mode and
extrapolated. The GPU projection (the roofline of ``extract-trt bench``, Qwen3-0.6B on an L4) counts the
weights and KV cache read once per pass instead of once per generated token.

    python bench/decoder.py --pages 6 --layers 2,4 --int8
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
QWEN_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
CHATML = (
    "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{% endif %}{% endif %}"
)


def records(limit: int) -> list[dict]:
    with gzip.open(DATA / "wcxb-dev.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line) for _, line in zip(range(limit), fh)]


def build_tokenizer(workdir: Path, texts: list[str]) -> Path:
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    out = workdir / "tokenizer"
    if (out / "tokenizer.json").exists():
        return out
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated"), pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=32000, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )  # fmt: skip
    tok.train_from_iterator(texts, trainer)
    tok.add_tokens(["<think>", "</think>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = CHATML
    fast.save_pretrained(out)
    return out


def build_model(workdir: Path, tokenizer_dir: Path, layers: int, profile: str, int8: bool) -> Path:
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    from extract_trt.export.decoder import DecoderExportOptions, export_decoder

    out = workdir / f"onnx-{layers}l-{profile}{'-int8' if int8 else ''}"
    if (out / "extract-trt.json").exists():
        return out
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=layers,
        num_attention_heads=16, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960,
        rope_theta=1_000_000.0, tie_word_embeddings=True, initializer_range=0.1,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, bos_token_id=None,
    )  # fmt: skip
    ckpt = workdir / f"ckpt-{layers}l"
    Qwen3ForCausalLM(config).save_pretrained(ckpt)
    tokenizer.save_pretrained(ckpt)
    variants = ("fp32", "int8") if int8 else ("fp32",)
    export_decoder(ckpt, out, DecoderExportOptions(profile=profile, variants=variants, max_context=32768), report=print)
    return out


class FlippedDrafts:
    """Drafts that agree with given answers except for a share of flipped labels (by page identity)."""

    name = "flipped"

    def __init__(self, truth: dict[int, np.ndarray], share: float, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.drafts = {k: t ^ (rng.random(len(t)) < share) for k, t in truth.items()}

    def label(self, pages):
        from extract_trt.runtime.types import Labels

        return [Labels(self.drafts.get(id(p), np.zeros(len(p), dtype=bool)).copy(), self.name) for p in pages]


def run_mode(model_dir: Path, variant: str, pages, mode: str, **kw):
    from extract_trt.runtime.labelers.decoder import DecoderLabeler
    from extract_trt.runtime.labelers.heuristic import HeuristicLabeler
    from extract_trt.runtime.labelers.session import SessionConfig

    lab = DecoderLabeler.from_model_dir(
        model_dir, variant=variant, session_config=SessionConfig(providers="cpu"), mode=mode, batch_size=1,
        fallback_labeler=HeuristicLabeler(), **kw,
    )  # fmt: skip
    from extract_trt.runtime.html.simplify import simplify

    lab.decode([simplify("<html><body><p>Warm-up paragraph.</p><p>Two.</p></body></html>", profile=pages[0].page_map.profile)])
    t0 = time.perf_counter()
    results = lab.decode(pages)
    return results, time.perf_counter() - t0


def projection(rows: dict[str, list[tuple[int, int, int, int]]]) -> dict[str, float]:
    """Pages/s of Qwen3-0.6B on an L4 per mode from (prompt, answer, passes, tokens) per page."""
    from extract_trt.eval.roofline import ARCHS, GPUS, Assumptions, PageCost, _prefill_bytes, decode_batch, decode_flops, prefill_flops

    arch, gpu, a = ARCHS["dripper-v1.0"], GPUS["l4"], Assumptions()
    out = {}
    for mode, pages in rows.items():
        seconds = 0.0
        for n, m, passes, tokens in pages:
            cost = PageCost()
            cost.add_phase(prefill_flops(arch, n), _prefill_bytes(arch, n, a), gpu, a)
            extra = max(0, tokens - n)  # answer tokens fed, re-verified drafts included
            steps = max(0, passes - 1)
            if extra:
                b = decode_batch(arch, gpu, n + m, a)
                kv = 2 * arch.layers * arch.kv_dim * a.bytes_per_value * steps * (n + m / 2)
                weights = steps * arch.params * a.bytes_per_value / b
                cost.add_phase(decode_flops(arch, n, extra), weights + kv, gpu, a)
            seconds += cost.seconds
        out[mode] = len(pages) / seconds
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=6)
    ap.add_argument("--layers", default="2", help="comma-separated layer counts (e.g. 2,4 to extrapolate)")
    ap.add_argument("--profile", default="mineru-v1.1", choices=["mineru-v1.1", "dripper-v1"])
    ap.add_argument("--int8", action="store_true", help="run the int8 variant (exported next to fp32)")
    ap.add_argument("--max-prompt", type=int, default=3000, help="skip pages with longer prompts (CPU time)")
    ap.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "extract-trt-bench-decoder")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    from extract_trt.runtime.html.simplify import simplify
    from extract_trt.runtime.html.simplify_v1 import simplify_profile
    from extract_trt.runtime.labelers.prompts import PROMPTS, decoder_profile

    profile = decoder_profile(args.profile)
    simplifier = simplify_profile(profile.simplifier)
    recs = records(400)
    simplified = [simplify(r["html"], profile=simplifier) for r in recs]
    tok_dir = build_tokenizer(args.workdir, [p.simplified_html for p in simplified[:300]] + list(PROMPTS.values()))
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tok_dir / "tokenizer.json"))
    pages = []
    for page in simplified:
        n = len(tok.encode("".join(profile.prompt_text(page.simplified_html, None))).ids)
        if 500 < n <= args.max_prompt and 5 <= len(page.blocks):
            pages.append(page)
        if len(pages) == args.pages:
            break
    variant = "int8" if args.int8 else "fp32"
    print(f"# bench/decoder.py  {platform.machine()} {os.cpu_count()} CPUs  profile {args.profile}  {variant}  "
          f"{len(pages)} wcxb-dev pages, {sum(len(p.blocks) for p in pages) / len(pages):.0f} blocks/page")  # fmt: skip
    per_layer: dict[str, list[tuple[int, float]]] = {}
    for layers in [int(x) for x in args.layers.split(",")]:
        model_dir = build_model(args.workdir, tok_dir, layers, args.profile, args.int8)
        naive, t_naive = run_mode(model_dir, variant, pages, "naive")
        jump, t_jump = run_mode(model_dir, variant, pages, "jump")
        truth = {id(p): r.choices for p, r in zip(pages, jump)}
        runs = {"naive": (naive, t_naive), "jump-forward": (jump, t_jump)}
        for name, drafter in (("speculative 100%", FlippedDrafts(truth, 0.0)), ("speculative 90%", FlippedDrafts(truth, 0.1)),
                              ("speculative default labeler", None)):  # fmt: skip
            kw = {"draft_labeler": drafter} if drafter is not None else {}
            runs[name] = run_mode(model_dir, variant, pages, "speculative", **kw)
        runs["speculative 90%, lookahead 8"] = run_mode(
            model_dir, variant, pages, "speculative", draft_labeler=FlippedDrafts(truth, 0.1), lookahead=8
        )
        agree = {}
        for name, (results, _) in runs.items():
            same = sum(int((r.choices == nv.choices).sum()) for r, nv in zip(results, naive))
            agree[name] = same / max(1, sum(len(nv.choices) for nv in naive))
            # fp32: exactly the naive decoder's labels. Dynamic int8 quantizes activations per tensor, so a
            # token's logits depend on the chunk it is fed in and near-ties can flip.
            assert variant != "fp32" or agree[name] == 1.0, f"{name} differs from naive"
        n = len(pages)
        base_passes = sum(r.stats.passes for r in naive) / n
        base_time = t_naive / n
        print(f"\n{layers} layers of 28 (hidden 1024, vocab 151,936), {variant}, one page at a time")
        print(f"{'mode':32} {'passes/page':>12} {'tokens/page':>12} {'s/page':>8} {'passes ×':>9} {'time ×':>7} {'= naive':>8}")
        rows = {}
        for name, (results, seconds) in runs.items():
            passes = sum(r.stats.passes for r in results) / n
            tokens = sum(r.stats.tokens for r in results) / n
            print(f"{name:32} {passes:12.1f} {tokens:12.0f} {seconds / n:8.2f} {base_passes / passes:9.1f} "
                  f"{base_time / (seconds / n):7.1f} {agree[name]:8.1%}")  # fmt: skip
            per_layer.setdefault(name, []).append((layers, seconds / n))
            rows[name] = [(r.stats.prompt_tokens, r.stats.answer_tokens, r.stats.passes, r.stats.tokens) for r in results]
        prompts = [r.stats.prompt_tokens for r in naive]
        answers = [r.stats.answer_tokens for r in naive]
        print(f"prompt tokens/page {np.mean(prompts):.0f}, answer tokens/page {np.mean(answers):.0f}")
        print("\nroofline projection, Qwen3-0.6B (28 layers) bf16 on an L4, same pages and pass counts "
              "(Dripper v1.1 published: 0.68 pages/s with vLLM):")  # fmt: skip
        for name, pps in projection(rows).items():
            print(f"  {name:32} {pps:8.2f} pages/s")
    if all(len(v) >= 2 for v in per_layer.values()):
        print("\nper-page CPU time extrapolated to 28 layers (linear in layers: a + b·layers):")
        for name, points in per_layer.items():
            (l1, t1), (l2, t2) = points[0], points[-1]
            b = (t2 - t1) / (l2 - l1)
            if b <= 0:  # other load on the machine changed between the runs more than depth did
                print(f"  {name:32} not fitted: {l2} layers ran faster than {l1} ({t2:.2f} s vs {t1:.2f} s)")
                continue
            print(f"  {name:32} {t1 + b * (28 - l1):8.1f} s/page  (a = {t1 - b * l1:.2f} s, b = {b:.3f} s/layer)")


if __name__ == "__main__":
    main()
