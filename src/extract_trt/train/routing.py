"""How well the cascade's page uncertainty routes pages: ranking quality and the routing curve.

Every page with a text ground truth is extracted twice on the same blocks: with the small labeler (the
built-in model) and with the **oracle teacher**, labels aligned from the ground truth by
:func:`~extract_trt.train.align.align_labels` (the labels the model is trained on: the best any teacher
on these blocks can do). Both outputs are scored as ``extract-trt eval`` scores them (word F1, ROUGE-5).
A cascade's output on a page is one of the two, so the quality at any budget follows from these rows:

* **uncertainty routing**: the ``budget`` share of pages with the highest
  :func:`~extract_trt.runtime.labelers.cascade.page_uncertainty` take the oracle's output (ranked over the
  whole set: what a ``threshold`` cascade calibrated to that share does; a ``budget`` cascade ranks within
  windows of 64 pages);
* **random routing**: a random share of pages, averaged over :data:`RANDOM_DRAWS` draws;
* **perfect routing**: the pages where the oracle gains most (a router that knew the real scores; it
  routes no page the oracle would make worse): the ceiling of any uncertainty score;
* **gain captured**: (F1 at the budget − F1 at 0) / (F1 of the oracle everywhere − F1 at 0).

The ranking report: Spearman correlation of each score with the page's real word-F1 loss (1 − word F1
of the small labeler) and the share of the total loss found in the top 10/20/30 % of pages by score.
Alongside the chosen score, simpler ones for comparison: the expected word-F1 loss alone (the score
without its holes factor), the mean block entropy and the number of words in blocks with p(main) between
0.2 and 0.8.

``python -m extract_trt.train.routing --dataset wcxb-dev.jsonl.gz --ids ids.txt --out DIR`` writes
``pages.json`` (one row per page), ``routing.json`` and ``routing.md``, and ``routing.png`` with matplotlib.
``--labeler DIR`` measures another small labeler (a block-model directory): to compare page scores without
reporting on the pages they were chosen on, train with ``--no-refit`` and score that model on its manifest's
``tune.ids``, as the shipped model is refit on the tune pages.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from extract_trt.eval.cost import CASCADE_BUDGETS
from extract_trt.eval.datasets import EvalRecord, read_dataset, read_ids
from extract_trt.eval.harness import Prediction, _reference, score_page
from extract_trt.runtime.extractor import Extractor
from extract_trt.runtime.labelers import Labeler, default_labeler, get_labeler
from extract_trt.runtime.labelers.cascade import block_words, page_expected_loss, page_uncertainty
from extract_trt.runtime.types import Labels, PageBlocks
from extract_trt.train.align import align_labels, fill_ignored

__all__ = ["BUDGETS", "PageRouting", "oracle_labels", "ranking_report", "route_pages", "routing_curve", "spearman"]

BUDGETS = CASCADE_BUDGETS
RANDOM_DRAWS = 200
TOP_SHARES = (0.1, 0.2, 0.3)
DOUBT = (0.2, 0.8)  # p(main) range of a "doubtful" block for the doubtful-words score


def oracle_labels(page: PageBlocks, groundtruth: str) -> Labels:
    """The oracle teacher: main/other per block aligned from the page's ground-truth text."""
    return Labels(main=fill_ignored(align_labels(page, groundtruth)), labeler="oracle")


@dataclass(slots=True)
class PageRouting:
    """One page: the small labeler's and the oracle's scores, and the small labeler's uncertainty scores."""

    id: str
    small_word_f1: float
    small_rouge5: float
    oracle_word_f1: float
    oracle_rouge5: float
    uncertainty: float
    mean_entropy: float
    doubtful_words: float
    small_seconds: float
    expected_loss: float = 0.0  # absent from rows written before it was reported


def _entropy(p: np.ndarray) -> float:
    q = np.clip(p.astype(np.float64), 1e-6, 1 - 1e-6)
    return float(np.mean(-(q * np.log2(q) + (1 - q) * np.log2(1 - q)))) if len(q) else 0.0


def _scored(extractor: Extractor, record: EvalRecord, labels_of) -> tuple[Labels | None, Prediction]:  # noqa: ANN001
    """Extract ``record`` with the labels ``labels_of(blocks)`` gives; the labels and the scored prediction."""
    page = extractor.prepare({"id": record.id, "url": record.url, "html": record.html})
    labels = labels_of(page.blocks) if page.blocks is not None else None
    t0 = time.process_time()
    result = extractor.finish(page, labels)
    seconds = result.seconds + time.process_time() - t0
    page.release()
    return labels, Prediction(result.text, seconds, result.error)


def route_pages(records: Iterable[EvalRecord], small: Labeler | None = None) -> Iterator[PageRouting]:
    """A :class:`PageRouting` row per record with a text ground truth."""
    small = small or default_labeler()
    extractor = Extractor(small, output="text", time_budget=None)
    threshold = getattr(small, "threshold", None)
    for record in records:
        if record.groundtruth_format != "text" or not record.groundtruth:
            continue
        blocks_seen: list[PageBlocks] = []

        def small_labels(blocks: PageBlocks) -> Labels:
            blocks_seen.append(blocks)
            return small.label([blocks])[0]

        t0 = time.process_time()
        labels, small_pred = _scored(extractor, record, small_labels)
        small_seconds = time.process_time() - t0
        _, oracle_pred = _scored(extractor, record, lambda blocks: oracle_labels(blocks, record.groundtruth))
        ref = _reference(record)
        s, o = score_page(record, small_pred, "small", ref), score_page(record, oracle_pred, "oracle", ref)
        if labels is not None and blocks_seen:
            page = blocks_seen[0]
            p = np.asarray(labels.probability, dtype=np.float64)
            uncertainty = page_uncertainty(page, labels, threshold)
            expected_loss = page_expected_loss(page, labels, threshold)
            doubtful = float(block_words(page)[(p > DOUBT[0]) & (p < DOUBT[1])].sum())
            entropy = _entropy(p)
        else:  # a page that failed before labelling: nothing to score it by
            uncertainty = expected_loss = entropy = doubtful = 0.0
        yield PageRouting(
            id=record.id,
            small_word_f1=s.word.f1 if s.word else 0.0,
            small_rouge5=s.rouge5.f1 if s.rouge5 else 0.0,
            oracle_word_f1=o.word.f1 if o.word else 0.0,
            oracle_rouge5=o.rouge5.f1 if o.rouge5 else 0.0,
            uncertainty=uncertainty,
            mean_entropy=entropy,
            doubtful_words=doubtful,
            small_seconds=small_seconds,
            expected_loss=expected_loss,
        )


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their mean rank."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.arange(1, len(x) + 1)
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    sums = np.bincount(inverse, weights=ranks)
    return sums[inverse] / counts[inverse]


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson on mean-tied ranks)."""
    ra, rb = _ranks(np.asarray(a, dtype=np.float64)), _ranks(np.asarray(b, dtype=np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = float(np.sqrt((ra * ra).sum() * (rb * rb).sum()))
    return float((ra * rb).sum() / denominator) if denominator else 0.0


def _top(scores: np.ndarray, share: float) -> np.ndarray:
    return np.argsort(-scores, kind="stable")[: round(share * len(scores))]


def ranking_report(rows: Sequence[PageRouting]) -> dict[str, dict[str, float]]:
    """Per score: Spearman with the word-F1 loss and the share of the total loss in its top pages."""
    loss = np.array([1.0 - r.small_word_f1 for r in rows])
    total = float(loss.sum()) or 1.0
    out = {}
    for name in ("uncertainty", "expected_loss", "mean_entropy", "doubtful_words"):
        scores = np.array([getattr(r, name) for r in rows])
        out[name] = {"spearman": round(spearman(scores, loss), 4)}
        for share in TOP_SHARES:
            out[name][f"loss_in_top_{round(share * 100)}"] = round(float(loss[_top(scores, share)].sum()) / total, 4)
    return out


def routing_curve(rows: Sequence[PageRouting], budgets: Sequence[float] = BUDGETS, seed: int = 0) -> list[dict[str, float]]:
    """Mean word F1 and ROUGE-5 per budget for uncertainty and random routing, and the oracle gain captured."""
    small = {m: np.array([getattr(r, f"small_{m}") for r in rows]) for m in ("word_f1", "rouge5")}
    oracle = {m: np.array([getattr(r, f"oracle_{m}") for r in rows]) for m in ("word_f1", "rouge5")}
    scores = np.array([r.uncertainty for r in rows])
    rng = np.random.default_rng(seed)
    draws = [rng.permutation(len(rows)) for _ in range(RANDOM_DRAWS)]
    curve = []
    for budget in budgets:
        k = round(budget * len(rows))
        point: dict[str, float] = {"budget": budget, "pages_routed": k,
                                   # the score of the last page routed: a threshold for this share on such pages
                                   "uncertainty_threshold": round(float(np.sort(scores)[::-1][k - 1]), 4) if k else 1.0}
        for metric in ("word_f1", "rouge5"):
            gain = oracle[metric] - small[metric]
            base, full = float(small[metric].mean()), float(oracle[metric].mean())
            routed = base + float(gain[_top(scores, budget)].sum()) / len(rows)
            random = base + float(np.mean([gain[d[:k]].sum() for d in draws])) / len(rows)
            best = base + float(np.sort(gain)[::-1][:k].clip(min=0).sum()) / len(rows)  # a router that knows
            point[f"{metric}_uncertainty"] = round(routed, 4)
            point[f"{metric}_random"] = round(random, 4)
            point[f"{metric}_perfect"] = round(best, 4)
            point[f"{metric}_gain_uncertainty"] = round((routed - base) / (full - base), 4) if full != base else 0.0
            point[f"{metric}_gain_random"] = round((random - base) / (full - base), 4) if full != base else 0.0
        curve.append(point)
    return curve


def _markdown(ranking: dict, curve: list[dict], n_pages: int) -> str:
    lines = [f"Pages: {n_pages}", "", "| score | Spearman vs word-F1 loss | loss in top 10 % | top 20 % | top 30 % |",
             "|---|---:|---:|---:|---:|"]  # fmt: skip
    for name, r in ranking.items():
        lines.append(f"| {name} | {r['spearman']:.3f} | {r['loss_in_top_10']:.1%} | {r['loss_in_top_20']:.1%} | "
                     f"{r['loss_in_top_30']:.1%} |")  # fmt: skip
    lines += ["", "| pages routed | uncertainty ≥ | word F1 (uncertainty) | word F1 (random) | word F1 (perfect) | gain captured "
              "(uncertainty / random) | ROUGE-5 (uncertainty) | ROUGE-5 (random) | ROUGE-5 gain (uncertainty / random) |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for p in curve:
        lines.append(
            f"| {p['budget']:.0%} | {p['uncertainty_threshold']:.3f} | {p['word_f1_uncertainty']:.4f} | {p['word_f1_random']:.4f} | {p['word_f1_perfect']:.4f} | "
            f"{p['word_f1_gain_uncertainty']:.0%} / {p['word_f1_gain_random']:.0%} | {p['rouge5_uncertainty']:.4f} | "
            f"{p['rouge5_random']:.4f} | {p['rouge5_gain_uncertainty']:.0%} / {p['rouge5_gain_random']:.0%} |"
        )
    return "\n".join(lines) + "\n"


def _chart(curve: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = [100 * p["budget"] for p in curve]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(x, [p["word_f1_uncertainty"] for p in curve], "o-", label="routed by page uncertainty")
    ax.plot(x, [p["word_f1_random"] for p in curve], "s--", label="routed at random")
    ax.plot(x, [p["word_f1_perfect"] for p in curve], ":", color="grey", label="perfect routing (knows the scores)")
    ax.set_xlabel("pages routed to the teacher (%)")
    ax.set_ylabel("word F1 (wcxb-dev validation)")
    ax.set_title("Cascade: built-in model + oracle teacher")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--ids", type=Path, help="page ids to score (e.g. the shipped model's validation ids)")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--labeler", help="the small labeler: a block-model directory or labeler name (default: the built-in model)")
    parser.add_argument("--rows", type=Path, help="recompute the report from a pages.json of an earlier run")
    args = parser.parse_args(argv)
    if args.rows is not None:
        rows = [PageRouting(**r) for r in json.loads(args.rows.read_text())]
    else:
        records = read_dataset(args.dataset, ids=read_ids(args.ids) if args.ids else None, limit=args.limit)
        rows = list(route_pages(records, get_labeler(args.labeler) if args.labeler else None))
    args.out.mkdir(parents=True, exist_ok=True)
    ranking, curve = ranking_report(rows), routing_curve(rows)
    (args.out / "pages.json").write_text(json.dumps([asdict(r) for r in rows], indent=0) + "\n")
    (args.out / "routing.json").write_text(json.dumps({"pages": len(rows), "ranking": ranking, "curve": curve}, indent=1) + "\n")
    (args.out / "routing.md").write_text(_markdown(ranking, curve, len(rows)))
    try:
        _chart(curve, args.out / "routing.png")
    except ImportError:
        pass
    print(_markdown(ranking, curve, len(rows)), end="")


if __name__ == "__main__":
    main()
