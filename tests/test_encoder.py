"""EncoderLabeler on exported tiny encoders: labels equal a plain PyTorch implementation of spec §3.3 on
real pages, literal special-token text, streaming, variants, providers, and the Extractor."""

from __future__ import annotations

import json
import shutil
import threading

import numpy as np
import pytest

from extract_trt.artifacts.manifest import MANIFEST_NAME, ManifestError
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.block_tokens import BlockTokenizer, block_strings
from extract_trt.runtime.labelers.session import ProviderUnavailableError, SessionConfig

import encoder_fixtures as fx
import oracle

pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
pytestmark = pytest.mark.skipif(not (fx.DATA / "pulpie-pages.jsonl.gz").exists(), reason="shared data not mounted")
REF = oracle.load()


def labeler(architecture: str = "eurobert", **kwargs):
    from extract_trt.runtime.labelers.encoder import EncoderLabeler

    return EncoderLabeler(fx.exported(architecture, **kwargs.pop("export", {})), **kwargs)


def pytorch_reference_labels(architecture: str, blocks: list[str]) -> list[int]:
    """Spec §3.2-3.3 in plain PyTorch, as the reference runs it on block strings: the reference's
    packer, one unpadded forward per chunk, argmax at <|sep|>, blocks without a prediction stay 0."""
    import torch
    from pulpie.chunker import pack_chunks

    model, tokenizer = _torch_model(architecture)
    sep = tokenizer.convert_tokens_to_ids("<|sep|>")
    ids = [tokenizer.encode(b, add_special_tokens=False) for b in blocks]
    predictions = [0] * len(blocks)
    with torch.no_grad(), fx.one_torch_thread():
        for chunk_ids, block_indices in pack_chunks(ids, fx.MAX_TOKENS, sep, tokenizer.bos_token_id, tokenizer.eos_token_id):
            x = torch.tensor([chunk_ids])
            logits = model(input_ids=x, attention_mask=torch.ones_like(x)).logits[0]
            preds = logits[(x[0] == sep).nonzero(as_tuple=True)[0]].argmax(-1).tolist()
            for j, block in enumerate(block_indices):
                if j < len(preds):
                    predictions[block] = preds[j]
    return predictions


_MODELS: dict = {}


def _torch_model(architecture: str):
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    if architecture not in _MODELS:
        path = fx.checkpoint(architecture)
        model = AutoModelForTokenClassification.from_pretrained(path, trust_remote_code=True).eval()
        _MODELS[architecture] = (model, AutoTokenizer.from_pretrained(path))
    return _MODELS[architecture]


@pytest.mark.skipif(REF is None, reason="reference (pulpie 0.0.2) not installed")
@pytest.mark.parametrize("architecture", ["eurobert", "bert", "modernbert"])
def test_labels_equal_the_pytorch_reference_on_real_pages(architecture) -> None:
    pages = fx.test_pages()
    enc = labeler(architecture)
    got = enc.label(pages)
    n_main = 0
    for page, labels in zip(pages, got):
        expected = pytorch_reference_labels(architecture, REF.extract_blocks(page.simplified_html))
        assert labels.main.tolist() == [p == 1 for p in expected]
        np.testing.assert_array_equal(labels.probability > 0.5, labels.main)
        n_main += int(labels.main.sum())
    n_blocks = sum(len(p) for p in pages)
    assert 0.05 * n_blocks < n_main < 0.95 * n_blocks  # the comparison is not vacuous
    assert enc.stats.rows > len(pages)  # pages needed several chunks
    assert enc.stats.padded_tokens >= enc.stats.real_tokens > 0


def test_block_strings_are_the_reference_blocks() -> None:
    if REF is None:
        pytest.skip("reference (pulpie 0.0.2) not installed")
    import extract_trt

    assert extract_trt.block_strings is block_strings  # the one public function, the one the encoder uses
    for _, page in fx.all_pages():
        assert block_strings(page) == REF.extract_blocks(page.simplified_html)
        # a block's own html is not the model's string: the last one lacks the shell's tail
        assert block_strings(page)[-1] == page.blocks[-1].html + "</body></html>"


def test_literal_special_token_strings_are_tokenized_as_text() -> None:
    texts = [
        '<p _item_id="1">blocks end with <|sep|> here</p>',
        '<pre _item_id="2"><|begin_of_text|>x<|end_of_text|><|sep|></pre></body></html>',
    ]
    tok = fx.tokenizer()
    special = {tok.token_to_id(t) for t in ("<|sep|>", "<|begin_of_text|>", "<|end_of_text|>")}
    plain = fx.tokenizer().encode(texts[0], add_special_tokens=False).ids
    assert tok.token_to_id("<|sep|>") in plain  # a plain encode (the reference) would emit a real <|sep|>
    block_tokenizer = BlockTokenizer.from_file(fx.exported("eurobert") / "tokenizer.json")
    for text, ids in zip(texts, block_tokenizer.encode(texts)):
        assert not special & set(ids.tolist())
        assert block_tokenizer.tokenizer.decode(ids.tolist(), skip_special_tokens=False) == text


# The simplifier escapes "<" in text and attributes, so special-token strings reach the tokenizer as
# "&lt;|sep|&gt;"; a literal _item_id="7" in prose stays as is, and the reference's regex splits there.
LITERAL_PAGE = (
    "<html><body><article><h1>Special tokens as text</h1>"
    "<p>Our tokenizer separates blocks with &lt;|sep|&gt; and starts with &lt;|begin_of_text|&gt;.</p>"
    '<p>An attribute may hold it too: <img src="a.png" alt="<|sep|> <|end_of_text|>"> and so may code.</p>'
    '<p>Even the id marker _item_id="7" in prose must not split this block.</p>'
    "<p>A closing paragraph with enough words to be a block of its own.</p></article></body></html>"
)


def test_special_strings_in_page_text_neither_split_nor_shift_blocks() -> None:
    page = simplify(LITERAL_PAGE)
    assert len(page) == 5 and '_item_id="7"' in page.blocks[3].html
    if REF is not None:
        assert len(REF.extract_blocks(page.simplified_html)) == 6  # the reference cuts block 4 in two
    enc = labeler("eurobert")
    (labels,) = enc.label([page])
    assert len(labels.main) == 5 and enc.stats.rows == 1
    if REF is not None:  # one <|sep|> per block reached the model, so each block got its own label
        assert labels.main.tolist() == [p == 1 for p in pytorch_reference_labels("eurobert", block_strings(page))]


def test_empty_page_and_one_huge_block() -> None:
    empty = simplify("<html><body></body></html>")
    cells = "".join(f"<td>cell {i}</td>" for i in range(400))  # tables escape the 500-character cap
    huge = simplify(f"<html><body><table><tr>{cells}</tr></table></body></html>")
    assert len(empty) == 0 and len(huge) == 1
    enc = labeler("eurobert")
    got = enc.label([empty, huge, empty])
    assert [len(g.main) for g in got] == [0, 1, 0]
    assert enc.stats.rows == 1 and enc.stats.real_tokens == fx.MAX_TOKENS  # truncated to one full chunk


def test_streaming_prepares_pages_on_a_background_thread() -> None:
    enc = labeler("bert", group_pages=2)
    records = [fx.test_pages()[i % 4].simplified_html for i in range(6)]
    producers = set()

    def lazily_simplified():
        for html in records:
            producers.add(threading.current_thread().name)
            yield simplify(html)

    streamed = list(enc.label_iter(lazily_simplified()))
    direct = labeler("bert", max_batch_tokens=1024).label([simplify(h) for h in records])
    assert producers == {"extract-trt-prefetch"}
    assert [s.main.tolist() for s in streamed] == [d.main.tolist() for d in direct]


def test_logits_layout_and_int8_variant() -> None:
    pages = fx.test_pages()
    blocks_layout = labeler("eurobert").label(pages)
    logits_layout = labeler("eurobert", export={"layout": "logits"}).label(pages)
    assert [a.main.tolist() for a in blocks_layout] == [b.main.tolist() for b in logits_layout]
    int8 = labeler("eurobert", variant="int8", export={"variants": ("fp32", "int8")})
    assert int8.name == "encoder-eurobert-int8"
    quantized = int8.label(pages)
    agreement = np.mean(np.concatenate([a.main == b.main for a, b in zip(blocks_layout, quantized)]))
    assert agreement >= 0.9
    with pytest.raises(ManifestError, match="fp16"):
        labeler("eurobert", variant="fp16")


def test_gpu_provider_requests_are_checked() -> None:
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("CUDA available: the CPU-only failure path cannot be shown here")
    with pytest.raises(ProviderUnavailableError):
        labeler("bert", session=SessionConfig(providers=["tensorrt", "cuda"]))
    enc = labeler("bert", session=SessionConfig(providers=["cuda"], allow_cpu_fallback=True))
    assert enc.providers == ["CPUExecutionProvider"] and enc.session_info.fell_back


def test_manifest_and_tokenizer_must_agree(tmp_path) -> None:
    broken = tmp_path / "m"
    shutil.copytree(fx.exported("bert"), broken)
    data = json.loads((broken / MANIFEST_NAME).read_text())
    data["sep_token_id"] = 5
    (broken / MANIFEST_NAME).write_text(json.dumps(data))
    from extract_trt.runtime.labelers.encoder import EncoderLabeler

    with pytest.raises(ManifestError, match="tokenizer maps"):
        EncoderLabeler(broken)


def test_extractor_with_an_encoder_model_directory() -> None:
    from extract_trt import Extractor
    from extract_trt.runtime.labelers import get_labeler
    from extract_trt.runtime.labelers.encoder import EncoderLabeler

    model_dir = str(fx.exported("modernbert"))
    assert isinstance(get_labeler(model_dir), EncoderLabeler)
    pages = [{"id": "nodejs", "html": fx.test_pages()[0].simplified_html}, {"id": "bad", "html": b"\x00\x01\x02"}]
    results = list(Extractor(labeler=model_dir).extract_many(pages))
    assert results[0].error is None and results[0].labeler == "encoder-modernbert"
    assert len(results[0].labels) == results[0].n_blocks > 0 and "main" in results[0].labels
    assert results[1].error is not None


def test_cli_extract_checks_the_provider_and_labeler_pickles(tmp_path) -> None:
    import pickle

    import onnxruntime as ort
    from typer.testing import CliRunner

    from extract_trt.cli import app

    model_dir = str(fx.exported("bert"))
    page = tmp_path / "page.html"
    page.write_text(LITERAL_PAGE)
    runner = CliRunner()
    out = ["-o", str(tmp_path / "out.jsonl"), "--format", "json"]
    ok = runner.invoke(app, ["extract", str(page), *out, "-l", model_dir, "--provider", "cpu", "-w", "2"])
    assert ok.exit_code == 0, ok.output
    record = json.loads((tmp_path / "out.jsonl").read_text().splitlines()[0])
    assert record["error"] is None and record["labeler"] == "encoder-bert" and record["n_blocks"] == 5
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        refused = runner.invoke(app, ["extract", str(page), "-l", model_dir, "--provider", "cuda"])
        assert refused.exit_code == 2 and "ProviderUnavailableError" in refused.output
        fallback = runner.invoke(app, ["extract", str(page), "-l", model_dir, "--provider", "cuda", "--allow-cpu-fallback"])
        assert fallback.exit_code == 0, fallback.output
    copy = pickle.loads(pickle.dumps(labeler("bert", max_batch_tokens=999)))
    assert copy.max_batch_tokens == 999 and copy.label(fx.test_pages()[:1])[0].main.shape == (len(fx.test_pages()[0]),)
