"""The evaluation harness and report on real shared pages: ours and peers through the same code."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from extract_trt import Extractor
from extract_trt.errors import LabelerError
from extract_trt.eval import evaluate, read_dataset, resolve_candidate
from extract_trt.eval.harness import ExtractorCandidate, PeerCandidate
from extract_trt.eval.metrics import word_f1
from extract_trt.eval.peers import PeerUnavailable, load_peer
from extract_trt.eval.report import CandidateInfo, PageRow, Report
from extract_trt.runtime.html import convert
from extract_trt.runtime.labelers import default_labeler
from extract_trt.runtime.labelers.annotation import AnnotationLabeler
from extract_trt.runtime.types import Labels

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# rs-trafilatura is scored where its wheel installs (CPython 3.12), listed as skipped elsewhere
HAS_RS_TRAFILATURA = importlib.util.find_spec("rs_trafilatura") is not None
SCORED = ["heuristic", "resiliparse", *(["rs-trafilatura"] if HAS_RS_TRAFILATURA else []), "fragile"]


class FailsOnPumpkinSpice:
    """A real Labeler that fails on pages mentioning "pumpkin spice" and marks <p> blocks main elsewhere."""

    name = "fragile"

    def label(self, pages):
        if any("pumpkin spice" in p.simplified_html.lower() for p in pages):
            raise RuntimeError("cannot label this page")
        return [Labels(np.array([b.tag == "p" for b in p.blocks], dtype=bool), self.name) for p in pages]


@pytest.fixture(scope="module")
def wcxb_report() -> Report:
    records = list(read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=4))
    return evaluate(records, ["heuristic", "resiliparse", "rs-trafilatura", FailsOnPumpkinSpice()], dataset="wcxb-dev")


def test_rows_for_every_extractor_and_page(wcxb_report):
    names = [c.name for c in wcxb_report.candidates]
    assert names == SCORED
    assert len(wcxb_report.rows) == 4 * len(SCORED)
    for row in wcxb_report.rows:
        assert row.word is not None and row.rouge5 is not None and row.rouge5_pulpie is not None
        assert row.snippets is not None and row.snippets.with_total > 0
        assert row.seconds > 0
    assert wcxb_report.headline == "word_f1"


def test_unavailable_peer_is_skipped_with_the_reason():
    try:
        import rs_trafilatura  # noqa: F401
    except ImportError:
        report = evaluate([], ["rs-trafilatura"])
        assert "CPython 3.12" in report.skipped["rs-trafilatura"]
        with pytest.raises(PeerUnavailable, match="3.12"):
            load_peer("rs-trafilatura")
    else:  # pragma: no cover - only on CPython 3.12 with the wheel installed
        assert load_peer("rs-trafilatura").name == "rs-trafilatura"


def test_failed_page_scores_as_empty_and_keeps_its_error(wcxb_report):
    fragile = {r.id: r for r in wcxb_report.rows_of("fragile")}
    broken = fragile["wcxb/dev/0001"]  # the pumpkin-spice page
    assert broken.error and "cannot label this page" in broken.error
    assert broken.empty and broken.word.f1 == 0.0 and broken.rouge5.f1 == 0.0
    assert all(r.error is None and not r.empty for i, r in fragile.items() if i != "wcxb/dev/0001")
    assert wcxb_report.summary()["fragile"]["errors"] == 1


def test_summary_is_the_plain_mean_of_page_scores(wcxb_report):
    summary = wcxb_report.summary()
    for name in ("heuristic", "resiliparse"):
        rows = wcxb_report.rows_of(name)
        assert summary[name]["word_f1"] == pytest.approx(sum(r.word.f1 for r in rows) / len(rows))
        assert summary[name]["rouge5_p"] == pytest.approx(sum(r.rouge5.precision for r in rows) / len(rows))
        found = sum(r.snippets.with_found for r in rows) / sum(r.snippets.with_total for r in rows)
        assert summary[name]["snippets_with"] == pytest.approx(found)
        assert summary[name]["pages_per_s_core"] > 0 and summary[name]["latency_p95_ms"] >= summary[name]["latency_p50_ms"]


def test_peer_text_is_what_is_scored():
    record = next(read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=1))
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    expected = extract_plain_text(HTMLTree.parse(record.html), main_content=True, alt_texts=False, links=False, comments=False)
    (pred,) = PeerCandidate("resiliparse").predict([record])
    assert pred.output == expected and pred.error is None
    assert word_f1(pred.output, record.groundtruth).f1 > 0.8


class _NativePanic(BaseException):
    """What pyo3 raises for a Rust panic (``pyo3_runtime.PanicException``): not an ``Exception``."""


def test_a_peer_aborting_in_native_code_fails_one_page_not_the_run(monkeypatch):
    import resiliparse.extract.html2text as html2text

    first, second = list(read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=2))
    plain_text = html2text.extract_plain_text
    calls = []

    def panics_on_the_first_page(tree, **kwargs):
        calls.append(tree)
        if len(calls) == 1:
            raise _NativePanic("byte index 60 is not a char boundary")
        return plain_text(tree, **kwargs)

    monkeypatch.setattr(html2text, "extract_plain_text", panics_on_the_first_page)
    crashed, fine = PeerCandidate("resiliparse").predict([first, second])
    assert crashed.output == "" and crashed.error == "PeerCrash: _NativePanic: byte index 60 is not a char boundary"
    assert fine.error is None and word_f1(fine.output, second.groundtruth).f1 > 0.5

    def interrupted(tree, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(html2text, "extract_plain_text", interrupted)
    with pytest.raises(KeyboardInterrupt):  # still stops the run when asked to
        PeerCandidate("resiliparse").predict([second])


def test_markdown_groundtruth_scores_the_webmainbench_conversion():
    records = list(read_dataset(DATA / "webmainbench-sample.jsonl.gz"))
    candidate = resolve_candidate("annotation")
    assert isinstance(candidate, ExtractorCandidate) and candidate.use_annotated_html
    preds = candidate.predict(records)
    ex = Extractor(AnnotationLabeler(), output="html")
    for record, pred in zip(records, preds):
        main_html = ex.extract(record.annotated_html, url=record.url).main_html
        assert pred.output == convert.benchmark_markdown(main_html, record.url)
    # the annotation labeler reproduces the annotators' selection: near-perfect word F1 on these pages
    report = evaluate(records, [candidate], dataset="webmainbench-sample")
    assert report.headline == "rouge5_f1"
    assert report.summary()["annotation"]["word_f1"] > 0.9
    assert report.breakdown("language")["zh"]["annotation"]["pages"] == 2


def test_text_is_converted_from_the_kept_tree_as_the_extractor_gives_it():
    """A candidate the harness builds asks the Extractor for text (no second parse of main_html); the text
    is the same as converting main_html. An Extractor passed in keeps the outputs it was given, plus the
    main HTML (what Markdown ground truth is scored on), in a copy: the caller's object is unchanged."""
    records = list(read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=3))
    built = resolve_candidate("heuristic")
    preds = built.predict(records)
    assert built.extractor.outputs == ("text",)
    given = Extractor(labeler="heuristic", output="markdown")
    candidate = resolve_candidate(given)
    again = candidate.predict(records)
    assert candidate.extractor.outputs == ("markdown", "html") and given.outputs == ("markdown",)
    given.outputs = ("html",)
    for record, pred, other in zip(records, preds, again):
        main_html = given.extract(record.html).main_html
        assert pred.output == other.output == convert.to_text(main_html) and len(pred.output) > 200


def test_names_resolve_to_ours_and_peers():
    default = resolve_candidate("default")
    assert default.name == "default" and default_labeler().name in default.description
    assert resolve_candidate("readability-lxml").name == "readability"
    assert resolve_candidate(Extractor(labeler="heuristic")).name == "heuristic"
    with pytest.raises(LabelerError):
        resolve_candidate("no-such-extractor")
    with pytest.raises(ValueError, match="given twice"):
        evaluate([], ["heuristic", "heuristic"])


def test_breakdowns_worst_pages_and_outputs(wcxb_report, tmp_path):
    groups = wcxb_report.breakdown("page_type")
    assert sum(g["heuristic"]["pages"] for g in groups.values()) == 4
    worst = wcxb_report.worst("heuristic", 2)
    assert len(worst) == 2 and worst[0].word.f1 <= worst[1].word.f1
    assert worst[0].word.f1 == min(r.word.f1 for r in wcxb_report.rows_of("heuristic"))
    md = wcxb_report.to_markdown(worst=2)
    assert "| extractor | word F1 |" in md and "### word F1 by page_type" in md and "rs-trafilatura" in md
    paths = wcxb_report.write(tmp_path, worst=2)
    pages = json.loads(paths["pages"].read_text())
    assert len(pages) == 4 * len(SCORED) and {"word_f1", "rouge5_f1", "rouge5_pulpie_f1", "with_found"} <= set(pages[0])
    summary = json.loads(paths["summary"].read_text())
    assert summary["headline"] == "word_f1" and set(summary["summary"]) == set(SCORED)
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _row(extractor: str, f1: float) -> PageRow:
    from extract_trt.eval.metrics import Score

    return PageRow(extractor, "p", None, "text", {}, 0.01, None, False, 10, word=Score(f1, f1, f1))


def test_pareto_frontier():
    # a: fast and poor, b: slow and good, c: dominated by b (slower and worse), d: as fast as a and better
    infos = [CandidateInfo(n, n, pages=100, cpu_seconds=s) for n, s in (("a", 1), ("b", 10), ("c", 20), ("d", 1))]
    rows = [_row("a", 0.5), _row("b", 0.9), _row("c", 0.8), _row("d", 0.6)]
    front = {name: on for name, _, _, on in Report(rows, infos).pareto_points()}
    assert front == {"a": False, "b": True, "c": False, "d": True}


def _page(extractor: str, page: str, f1: float, page_type: str) -> PageRow:
    from extract_trt.eval.metrics import Score

    return PageRow(extractor, page, None, "text", {"page_type": page_type}, 0.01, None, False, 10,
                   word=Score(f1, f1, f1))  # fmt: skip


def test_paired_differences_pair_pages_and_bound_the_mean():
    rng = np.random.default_rng(3)
    ref = rng.uniform(0.3, 1.0, 200)
    better = np.clip(ref + 0.05 + rng.normal(0, 0.02, 200), 0, 1)  # higher on (almost) every page
    noisy = np.clip(ref + rng.normal(0, 0.2, 200), 0, 1)  # no real difference
    rows = []
    for i in range(200):
        kind = "article" if i % 2 else "forum"
        rows += [_page("ref", f"p{i}", ref[i], kind), _page("better", f"p{i}", better[i], kind)]
        rows += [_page("noisy", f"p{i}", noisy[i], kind)] if i < 150 else []  # 50 pages it did not score
    infos = [CandidateInfo(n, n) for n in ("ref", "better", "noisy")]
    report = Report(rows, infos)
    paired = report.paired()
    b, n = paired["better"], paired["noisy"]
    assert b["pages"] == 200 and n["pages"] == 150  # only the pages both scored
    assert b["difference"] == pytest.approx(float(np.mean(better - ref)))
    assert 0 < b["low"] < b["difference"] < b["high"] and b["higher"] > 180
    assert n["low"] < 0 < n["high"] and n["higher"] + n["equal"] + n["lower"] == 150
    assert report.paired() == paired  # seeded: the same interval every time
    forum = report.paired("page_type", "forum")
    assert forum["better"]["pages"] == 100 and forum["better"]["high"] - forum["better"]["low"] > b["high"] - b["low"]
    md = report.to_markdown(worst=0)
    assert "### word F1: each extractor against ref, page by page" in md
    assert "### word F1 by page_type: difference from ref (95 % interval)" in md
    assert report.to_json()["paired"]["page_type"]["forum"] == forum


def test_paired_bootstrap_interval_covers_a_known_mean():
    from extract_trt.eval.stats import paired_bootstrap

    assert paired_bootstrap([0.1] * 20) == pytest.approx((0.1, 0.1, 0.1))
    diffs = np.random.default_rng(0).normal(0.02, 0.1, 2000)
    mean, low, high = paired_bootstrap(diffs)
    se = diffs.std() / np.sqrt(len(diffs))
    assert low == pytest.approx(mean - 1.96 * se, abs=0.3 * se)
    assert high == pytest.approx(mean + 1.96 * se, abs=0.3 * se)
    with pytest.raises(ValueError):
        paired_bootstrap([])


def test_snippet_rates_are_reported_in_both_named_conventions():
    """trafilatura pools counts over pages (case-sensitive); wcxb averages page rates (case-insensitive)."""
    from extract_trt.eval.metrics import SnippetCounts

    def row(page: str, kept: int, total: int, kept_nocase: int) -> PageRow:
        counts = SnippetCounts(1, 1, kept, total, 1, kept_nocase)
        return PageRow("x", page, None, None, {}, 0.01, None, False, 10, snippets=counts)

    # page a: 1 of 10 `without` snippets kept (2 ignoring case); page b: 1 of 1
    rows = [row("a", 1, 10, 2), row("b", 1, 1, 1)]
    summary = Report(rows, [CandidateInfo("x", "x")]).summary()["x"]
    assert summary["snippets_without"] == pytest.approx(2 / 11)  # pooled
    assert summary["snippets_without_wcxb"] == pytest.approx((0.2 + 1.0) / 2)  # mean of page rates
    md = Report(rows, [CandidateInfo("x", "x")]).to_markdown()
    assert "without kept (trafilatura)" in md and "without kept (wcxb)" in md and "case-insensitive" in md


class _KeepTag:
    """A real labeler that keeps the blocks of one tag; two of them under one name stand for two versions."""

    def __init__(self, tag: str) -> None:
        self.tag, self.name = tag, "candidate"

    def label(self, pages):
        return [Labels(np.array([b.tag == self.tag for b in p.blocks], dtype=bool), self.name) for p in pages]


def test_saved_text_lets_two_runs_be_compared_page_by_page(tmp_path):
    from extract_trt.eval.compare import compare_runs

    records = list(read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=4))
    for run, tag in (("a", "p"), ("b", "li")):
        evaluate(records, [_KeepTag(tag)], dataset="wcxb-dev", keep_text=True).write(tmp_path / run, chart=False)
    pages = json.loads((tmp_path / "a" / "pages.json").read_text())
    assert all(isinstance(p["text"], str) for p in pages)  # --save-text: the scored prediction
    assert word_f1(pages[0]["text"], records[0].groundtruth).f1 == pytest.approx(pages[0]["word_f1"], abs=1e-6)
    comparison = compare_runs(tmp_path / "a", tmp_path / "b")
    s = comparison.summary("candidate")
    by_id = {p["id"]: p for p in pages}
    b_pages = {p["id"]: p for p in json.loads((tmp_path / "b" / "pages.json").read_text())}
    diffs = [b_pages[i]["word_f1"] - by_id[i]["word_f1"] for i in by_id]
    assert comparison.metric == "word_f1" and s["pages"] == 4
    assert s["difference"] == pytest.approx(sum(diffs) / 4) and s["low"] <= s["difference"] <= s["high"]
    assert s["higher"] + s["equal"] + s["lower"] == 4 and s["text_changed"] >= 1
    moved = comparison.moved("candidate")
    assert abs(moved[0].difference) == pytest.approx(max(abs(d) for d in diffs))
    md = comparison.to_markdown()
    assert "pages that moved most" in md and "```diff" in md
    same = compare_runs(tmp_path / "a", tmp_path / "a").summary("candidate")
    assert same["difference"] == 0 and same["equal"] == 4 and same["text_changed"] == 0
    with pytest.raises(ValueError, match="pages.json"):
        compare_runs(tmp_path / "a", tmp_path / "missing")


def test_pareto_chart_is_readable(wcxb_report):
    """Every label inside the axes, a title with the data set's name and the date, plain log-x tick labels."""
    wcxb_report.date = "2026-12-02"
    fig = wcxb_report.pareto_figure()
    (ax,) = fig.axes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    labels = [t for t in ax.texts]
    assert len(labels) == len(wcxb_report.pareto_points()) >= 2
    for text in labels:
        ext = text.get_window_extent(renderer)
        assert box.x0 <= ext.x0 and ext.x1 <= box.x1 and box.y0 <= ext.y0 and ext.y1 <= box.y1, text.get_text()
    title = ax.get_title()
    assert "wcxb-dev" in title and "2026-12-02" in title and ".jsonl" not in title
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all("^" not in t and "$" not in t for t in ticks)  # 20, 50, 100 — not 10^2
