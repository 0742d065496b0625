"""The cascade labeler and its page uncertainty, on real wcxb-dev pages with a tiny real exported encoder
as the big model; the routing evaluation (oracle teacher, curve) on real pages."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pytest

from extract_trt.errors import LabelerError
from extract_trt.eval.datasets import record_from_json
from extract_trt.runtime.extractor import Extractor
from extract_trt.runtime.html.simplify import MINERU_V11_WITH_HIDDEN, simplify
from extract_trt.runtime.labelers import get_labeler
from extract_trt.runtime.labelers.block_model import BlockModelLabeler, default_model_dir
from extract_trt.runtime.labelers.cascade import CascadeLabeler, block_words, main_region_holes, page_uncertainty
from extract_trt.runtime.labelers.heuristic import HeuristicLabeler
from extract_trt.runtime.types import Labels
from extract_trt.train.routing import main as routing_main
from extract_trt.train.routing import oracle_labels, ranking_report, route_pages, routing_curve, spearman

import encoder_fixtures as fx

WCXB = fx.DATA / "wcxb-dev.jsonl.gz"
pytestmark = pytest.mark.skipif(not WCXB.exists(), reason="shared data not mounted")
N_PAGES = 12


@lru_cache(maxsize=None)
def wcxb_records() -> tuple[dict, ...]:
    with gzip.open(WCXB, "rt", encoding="utf-8") as fh:
        return tuple(json.loads(line) for line, _ in zip(fh, range(N_PAGES)))


def inputs() -> list[dict]:
    return [{"id": r["id"], "url": r["url"], "html": r["html"]} for r in wcxb_records()]


@lru_cache(maxsize=None)
def tiny_encoder():
    pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
    return get_labeler(str(fx.exported("bert")))


class FailsOnLongPages:
    """The tiny encoder, failing (as a model out of memory would) on every batch holding a page of more
    than ``max_blocks`` blocks, and answering a wrong label count on pages of exactly ``bad_count`` blocks."""

    def __init__(self, inner, max_blocks: int, bad_count: int = -1) -> None:
        self.inner, self.max_blocks, self.bad_count = inner, max_blocks, bad_count
        self.name = inner.name

    def label(self, pages):
        if any(len(p) > self.max_blocks for p in pages):
            raise LabelerError(f"a page over {self.max_blocks} blocks")
        out = self.inner.label(pages)
        return [Labels(lab.main[:-1], lab.labeler) if len(p) == self.bad_count else lab for p, lab in zip(pages, out)]


def test_uncertainty_is_zero_when_sure_and_grows_with_doubtful_words():
    page = simplify(wcxb_records()[0]["html"], profile=MINERU_V11_WITH_HIDDEN)
    words = block_words(page)
    n = len(page)
    sure = Labels(main=words > 20, labeler="t", probability=(words > 20).astype(np.float32))
    assert page_uncertainty(page, sure) == 0.0
    half = Labels(main=np.ones(n, bool), labeler="t", probability=np.full(n, 0.5, np.float32))
    assert page_uncertainty(page, half) == pytest.approx(1 / 3)  # E[TP]=E[FP]=W/2, E[FN]=0
    # one doubtful block: the longer it is, the more uncertain the page
    longest, shortest = int(np.argmax(words)), int(np.argmin(np.where(words > 0, words, np.inf)))
    scores = []
    for doubtful in (shortest, longest):
        p = np.where(words > 20, 0.99, 0.01).astype(np.float32)
        p[doubtful] = 0.5
        scores.append(page_uncertainty(page, Labels(main=p >= 0.25, labeler="t", probability=p)))
    assert 0 < scores[0] < scores[1]
    with pytest.raises(LabelerError, match="no block probabilities"):
        page_uncertainty(page, Labels(main=sure.main, labeler="heuristic"))


def test_uncertainty_grows_when_the_labels_cut_the_main_region_apart():
    words = np.array([10.0, 0, 30, 20, 40, 5])
    assert main_region_holes(words, np.array([0, 1, 1, 1, 1, 0], bool)) == 0.0  # one piece (a wordless block inside)
    assert main_region_holes(words, np.array([0, 0, 1, 0, 1, 0], bool)) == pytest.approx(20 / 90)
    assert main_region_holes(words, np.zeros(6, bool)) == 0.0
    # the same blocks and probabilities in two orders: the expected loss is the same, the page whose main
    # blocks sit among left-out ones scores higher
    page = simplify(wcxb_records()[0]["html"], profile=MINERU_V11_WITH_HIDDEN)
    words = block_words(page)
    main = np.zeros(len(page), bool)
    main[np.argsort(-words)[:6]] = True
    p = np.where(main, 0.7, 0.1).astype(np.float32)
    rest = np.concatenate([np.flatnonzero(~main & (words > 0)), np.flatnonzero(~main & (words == 0))])  # words first
    together = np.concatenate([np.flatnonzero(main), rest])
    apart = np.concatenate([np.column_stack([np.flatnonzero(main), rest[:6]]).ravel(), rest[6:]])  # main, other, main, …
    scores = []
    for order in (together, apart):
        shuffled = replace(page, blocks=[page.blocks[i] for i in order])
        scores.append(page_uncertainty(shuffled, Labels(main=main[order], labeler="t", probability=p[order])))
    holes = main_region_holes(words[apart], main[apart])
    assert 0 < holes < 1
    assert scores[1] == pytest.approx(min(1.0, scores[0] * (1 + holes)))
    assert scores[0] < scores[1]


def test_cascade_routes_the_budget_share_of_most_uncertain_pages_to_the_encoder():
    small = BlockModelLabeler()
    cascade = CascadeLabeler(small, tiny_encoder(), budget=0.25)
    results = list(Extractor(cascade, output="text").extract_many(inputs()))
    assert [r.id for r in results] == [r["id"] for r in wcxb_records()]
    assert all(r.error is None for r in results)
    by_big = [r for r in results if r.labeler == "encoder-bert"]
    assert len(by_big) == N_PAGES // 4 and cascade.routed == N_PAGES // 4 and cascade.seen == N_PAGES
    assert {r.labeler for r in results} == {"encoder-bert", "block-model"}
    # the routed pages are the most uncertain ones under the small model
    pages = [simplify(r["html"], profile=small.simplify_profile) for r in wcxb_records()]
    scores = cascade.uncertainties(pages, small.label(pages))
    routed = {i for i, r in enumerate(results) if r.labeler == "encoder-bert"}
    assert min(scores[i] for i in routed) >= max(scores[i] for i in range(N_PAGES) if i not in routed)
    # the small-model pages are exactly what the small model alone gives
    alone = list(Extractor(small, output="text").extract_many(inputs()))
    assert all(a.text == r.text for a, r in zip(alone, results) if r.labeler == "block-model")


def test_budget_carries_over_calls_and_threshold_routes_by_score():
    cascade = CascadeLabeler(BlockModelLabeler(), tiny_encoder(), budget=0.1, pages_per_call=3)
    list(Extractor(cascade, output="text").extract_many(inputs()))
    assert cascade.routed == 1  # 12 pages × 0.1 = 1.2: one page over four calls of three, not zero per call
    everything = CascadeLabeler(BlockModelLabeler(), tiny_encoder(), threshold=0.0)
    nothing = CascadeLabeler(BlockModelLabeler(), tiny_encoder(), threshold=2.0)
    for cascade in (everything, nothing):
        list(Extractor(cascade, output="text").extract_many(inputs()))
    assert (everything.routed, nothing.routed) == (N_PAGES, 0)


def test_big_failures_fall_back_to_small_labels_flagged_one_record_per_input():
    small = BlockModelLabeler()
    pages = [simplify(r["html"], profile=small.simplify_profile) for r in wcxb_records()]
    sizes = sorted(len(p) for p in pages)
    big = FailsOnLongPages(tiny_encoder(), max_blocks=sizes[N_PAGES // 2], bad_count=sizes[0])
    cascade = CascadeLabeler(small, big, budget=1.0)
    results = list(Extractor(cascade, output="text").extract_many(inputs()))
    assert [r.id for r in results] == [r["id"] for r in wcxb_records()]
    assert all(r.error is None and r.text for r in results)
    fallen = [r for r in results if r.labeler == "block-model (fallback)"]
    too_long = sum(s > sizes[N_PAGES // 2] for s in sizes)
    assert len(fallen) == cascade.big_failures == too_long + sizes.count(sizes[0])
    assert sum(r.labeler == "encoder-bert" for r in results) == N_PAGES - len(fallen)


def test_cascade_spec_and_errors():
    cascade = get_labeler("cascade@0.3:heuristic")
    assert isinstance(cascade, CascadeLabeler) and cascade.budget == 0.3 and cascade.big.name == "heuristic"
    assert get_labeler("cascade:heuristic").budget == 0.2
    # eval and run-job read the spec as a cascade, not as module:attr
    from extract_trt.eval.labelers import make_labeler
    from extract_trt.job.config import NamedLabeler

    assert make_labeler("cascade@0.4:heuristic").budget == 0.4
    assert NamedLabeler("cascade@0.4:heuristic").build().budget == 0.4
    by_score = get_labeler("cascade@u0.15:heuristic")
    assert (by_score.threshold, by_score.budget) == (0.15, None)
    for bad in ("cascade@x:heuristic", "cascade@0.3"):
        with pytest.raises(LabelerError):
            get_labeler(bad)
    with pytest.raises(LabelerError, match="exactly one"):
        CascadeLabeler(BlockModelLabeler(), HeuristicLabeler(), budget=0.1, threshold=0.2)
    with pytest.raises(LabelerError, match="between 0 and 1"):
        CascadeLabeler(BlockModelLabeler(), HeuristicLabeler(), budget=1.5)


def test_oracle_routing_rows_and_curve_on_real_pages():
    records = [record_from_json(r) for r in wcxb_records()]
    rows = list(route_pages(records))
    assert len(rows) == N_PAGES
    assert np.mean([r.oracle_word_f1 for r in rows]) > np.mean([r.small_word_f1 for r in rows])
    assert np.mean([r.oracle_word_f1 for r in rows]) > 0.9  # labels aligned from the ground truth
    curve = routing_curve(rows, budgets=(0.0, 0.5, 1.0))
    assert curve[0]["word_f1_uncertainty"] == pytest.approx(np.mean([r.small_word_f1 for r in rows]), abs=1e-4)
    assert curve[-1]["word_f1_random"] == pytest.approx(np.mean([r.oracle_word_f1 for r in rows]), abs=1e-4)
    assert curve[-1]["word_f1_gain_uncertainty"] == 1.0
    assert set(ranking_report(rows)["uncertainty"]) == {"spearman", "loss_in_top_10", "loss_in_top_20", "loss_in_top_30"}
    page = simplify(records[0].html, profile=MINERU_V11_WITH_HIDDEN)
    assert oracle_labels(page, records[0].groundtruth).main.any()


def test_routing_cli_measures_the_small_labeler_it_is_given(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("\n".join(r["id"] for r in wcxb_records()[:3]) + "\n")
    common = ["--dataset", str(WCXB), "--ids", str(ids)]
    routing_main([*common, "--out", str(tmp_path / "built-in")])
    routing_main([*common, "--labeler", str(default_model_dir()), "--out", str(tmp_path / "directory")])
    built_in, directory = (json.loads((tmp_path / d / "pages.json").read_text()) for d in ("built-in", "directory"))
    assert len(built_in) == 3
    assert [r["uncertainty"] for r in directory] == [r["uncertainty"] for r in built_in]
    routing_main([*common, "--labeler", "heuristic", "--out", str(tmp_path / "heuristic")])
    heuristic = json.loads((tmp_path / "heuristic" / "pages.json").read_text())
    assert [r["uncertainty"] for r in heuristic] != [r["uncertainty"] for r in built_in]


def test_spearman():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert spearman([1, 1, 2], [5, 5, 5]) == 0.0


def test_decoder_as_big_takes_the_small_labels_as_drafts():
    pytest.importorskip("optimum.exporters.onnx", reason="needs the export extra")
    import decoder_fixtures
    from extract_trt.runtime.labelers.decoder import DecoderLabeler

    model_dir = decoder_fixtures.exported(1, "dripper-v1", 4096)
    big = DecoderLabeler.from_model_dir(model_dir)
    cascade = CascadeLabeler(BlockModelLabeler(), big, budget=1.0)
    assert big.draft_labeler is cascade._drafts and cascade.simplify_profile is big.simplify_profile
    with gzip.open(fx.DATA / "readability-pages.jsonl.gz", "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line, _ in zip(fh, range(3))]
    pages = [simplify(r["html"], profile=cascade.simplify_profile) for r in records]
    got = cascade.label(pages)
    # speculative decoding is exact: the same labels as the decoder drafting with its own block model
    alone = DecoderLabeler.from_model_dir(model_dir, draft_labeler=BlockModelLabeler()).label(pages)
    # (a page over the tiny decoder's context is labelled by its own fallback, the block model, in both)
    assert [g.labeler for g in got] == [a.labeler for a in alone] and big.name in [g.labeler for g in got]
    assert all((g.main == a.main).all() for g, a in zip(got, alone))
    assert cascade._drafts.known == {}  # the drafts of one call are not kept


def test_cascade_costs_add_the_routed_share_of_the_big_model():
    from extract_trt.eval.cost import PUBLISHED_THROUGHPUT, cascade_costs, resolve_throughput

    big = resolve_throughput("pulpie-small-l4")
    assert big is PUBLISHED_THROUGHPUT["pulpie-small-l4"] and big.source.startswith("published")
    rows = cascade_costs(100.0, big, budgets=(0.0, 0.2, 1.0))
    assert rows[0]["total"] == pytest.approx(0.045 / 360 * 1e6 / 1e3)  # $0.125/M: 100 pages per core-second
    assert rows[2]["big"] == pytest.approx(0.39 / (13.7 * 3600) * 1e6)  # ≈ $7.9/M, the published figure
    assert rows[1]["total"] == pytest.approx(rows[0]["total"] + 0.2 * rows[2]["big"])
    given = resolve_throughput("40@a100")
    assert (given.pages_per_s, given.price.per_hour) == (40.0, 1.5)
    for bad in ("40", "fast@l4", "0@l4"):
        with pytest.raises(ValueError):
            resolve_throughput(bad)


def test_extract_cli_budget():
    from typer.testing import CliRunner

    from extract_trt.cli import app

    result = CliRunner().invoke(app, ["extract", "--sample", "-l", "cascade:heuristic", "--budget", "0.34", "-f", "json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(records) == 3 and sorted(r["labeler"] for r in records) == ["block-model", "block-model", "heuristic"]
    refused = CliRunner().invoke(app, ["extract", "--sample", "-l", "heuristic", "--budget", "0.3"])
    assert refused.exit_code == 2 and "a budget is for a cascade labeler" in refused.output
