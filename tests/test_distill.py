"""`extract-trt train --teacher`: teacher passes on real pages with tiny real exported models (an encoder,
decoders of both block schemes), a peer and the oracle; the resumable cache; a student trained end to end."""

from __future__ import annotations

import gzip
import json
from functools import lru_cache

import numpy as np
import pytest
from typer.testing import CliRunner

from extract_trt.cli import app
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers import get_labeler
from extract_trt.runtime.labelers.block_model import BlockModelLabeler
from extract_trt.train.align import IGNORE, align_labels
from extract_trt.train.data import SIMPLIFIER
from extract_trt.train.distill import TeacherError, make_teacher, teacher_examples

import decoder_fixtures
import encoder_fixtures as fx

pytest.importorskip("torch", reason="needs the train extra")
WCXB = fx.DATA / "wcxb-dev.jsonl.gz"
pytestmark = pytest.mark.skipif(not WCXB.exists(), reason="shared data not mounted")
N_PAGES = 16
DECODER_CONTEXT = 4096
# real pages whose prompts fit the tiny decoder's context (as in test_decoder.py)
SMALL_PAGES = ("pulpie/07_how2_sh", "readability/base-url", "readability/daringfireball-1", "readability/dev418")


@lru_cache(maxsize=None)
def wcxb_records() -> tuple[dict, ...]:
    with gzip.open(WCXB, "rt", encoding="utf-8") as fh:
        rows = (json.loads(line) for line, _ in zip(fh, range(N_PAGES)))
        return tuple({k: r[k] for k in ("id", "url", "html", "groundtruth")} for r in rows)


def small_records() -> list[dict]:
    out = {}
    for name in ("pulpie-pages", "readability-pages"):
        with gzip.open(fx.DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as fh:
            for rec in map(json.loads, fh):
                out[rec["id"]] = {"id": rec["id"], "url": rec.get("url"), "html": rec["html"]}
    return [out[i] for i in SMALL_PAGES]


def encoder_dir() -> str:
    pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
    return str(fx.exported("bert"))


def test_encoder_teacher_gives_soft_targets_and_the_cache_resumes(tmp_path):
    teacher = make_teacher(encoder_dir())
    records = wcxb_records()[:6]
    first = teacher_examples(teacher, records[:4], tmp_path)  # an interrupted pass: 4 of 6 pages
    assert (first.labelled, first.cached, first.failed) == (4, 0, 0)
    again = teacher_examples(teacher, records, tmp_path)
    assert (again.labelled, again.cached) == (2, 4)
    encoder = get_labeler(encoder_dir())
    for record, example in zip(records, again.examples):
        page = simplify(record["html"], profile=SIMPLIFIER)
        expected = encoder.label([page])[0]
        assert example.targets is not None
        np.testing.assert_allclose(example.targets, expected.probability, atol=1e-4)
        worded = example.labels != IGNORE
        assert (example.labels[worded] == expected.main[worded]).all()
        assert (example.weights[~worded] == 0).all()
    assert (tmp_path / "teacher-labels.jsonl").read_text().count("\n") == 6
    with pytest.raises(TeacherError, match="caches the labels of teacher"):
        teacher_examples(make_teacher("heuristic"), records, tmp_path)


@pytest.mark.parametrize("profile", ["mineru-v1.1", "dripper-v1"])
def test_decoder_teacher(tmp_path, profile):
    pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
    model_dir = decoder_fixtures.exported({"mineru-v1.1": 0, "dripper-v1": 1}[profile], profile, DECODER_CONTEXT)
    teacher = make_teacher(str(model_dir))
    taught = teacher_examples(teacher, small_records(), tmp_path)
    assert taught.failed == 0 and len(taught.examples) == len(SMALL_PAGES)
    if profile == "mineru-v1.1":  # the student's blocks, the decoder's main/other probabilities
        assert all(e.targets is not None for e in taught.examples)
    else:  # v1.0 blocks: the decoder's text aligned to the student's blocks
        assert all(e.targets is None for e in taught.examples)
    assert any((e.labels == 1).any() for e in taught.examples)


def test_peer_and_oracle_teachers_align_text(tmp_path):
    pytest.importorskip("trafilatura")
    import trafilatura

    records = wcxb_records()[:3]
    taught = teacher_examples(make_teacher("trafilatura"), records, tmp_path / "peer")
    for record, example in zip(records, taught.examples):
        page = simplify(record["html"], profile=SIMPLIFIER)
        text = trafilatura.extract(record["html"], url=record["url"]) or ""
        assert (example.labels == align_labels(page, text)).all()
    oracle = teacher_examples(make_teacher(f"oracle:{WCXB}"), records, tmp_path / "oracle")
    for record, example in zip(records, oracle.examples):
        page = simplify(record["html"], profile=SIMPLIFIER)
        assert (example.labels == align_labels(page, record["groundtruth"])).all()


def test_train_with_an_encoder_teacher_end_to_end(tmp_path):
    pages = tmp_path / "pages.jsonl"
    pages.write_text("".join(json.dumps({k: r[k] for k in ("id", "url", "html")}) + "\n" for r in wcxb_records()))
    out = tmp_path / "student"
    args = ["train", "--teacher", encoder_dir(), "--pages", str(pages), "-o", str(out), "--epochs", "1", "--no-refit"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"{N_PAGES} pages labelled, 0 from the cache" in result.output
    manifest = json.loads((out / "block-model.json").read_text())
    assert manifest["teacher"]["spec"] == encoder_dir() and manifest["teacher"]["soft_label_pages"] == N_PAGES
    assert manifest["training"]["train_pages"] > 0
    card = (out / "MODEL_CARD.md").read_text()
    assert "teacher `encoder-bert`" in card and str(pages) in card
    student = BlockModelLabeler(out)
    page = simplify(wcxb_records()[0]["html"], profile=student.simplify_profile)
    assert len(student.label([page])[0].main) == len(page)
    # a second run reads every label from the cache (the default one beside the output)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and f"0 pages labelled, {N_PAGES} from the cache" in result.output
    assert CliRunner().invoke(app, ["train", "--teacher", encoder_dir(), "-o", str(out)]).exit_code != 0


def test_pages_from_a_parquet_shard(tmp_path):
    pytest.importorskip("pyarrow")
    from job_fixtures import parquet_shard

    from extract_trt.train.distill import read_pages

    records = [dict(r) for r in wcxb_records()[:3]]
    parquet_shard(tmp_path / "shard.parquet", records)
    pages = list(read_pages([str(tmp_path)]))
    assert [p["id"] for p in pages] == [r["id"] for r in records] and all(p["html"] for p in pages)
    taught = teacher_examples(make_teacher("heuristic"), pages, tmp_path / "cache")
    assert [e.id for e in taught.examples] == [r["id"] for r in records]
