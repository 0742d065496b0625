"""Evaluation results: per-page rows, aggregates, breakdowns, worst pages; Markdown, JSON and a Pareto PNG.

Aggregation follows the reference harnesses: every metric is the **plain mean over pages** (a failed or
empty prediction counts with the score the metric's convention gives it, never dropped); precision and
recall are averaged separately from F1 (spec §4.5). Snippet rates come in two named conventions, which give
different figures on the same output: ``trafilatura`` (its evaluation: case-sensitive matches, counts pooled
over pages: ``with`` found / ``with`` total) and ``wcxb`` (case-insensitive matches, the mean of per-page
rates over the pages that have such snippets).

The *headline* metric of a report is WCXB word F1 when any page has a plain-text ground truth, the
WebMainBench ROUGE-5 F1 when all ground truths are Markdown, and the ``with``-snippet rate when pages have
snippets only. Breakdowns, paired differences, worst pages and the Pareto chart use it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extract_trt.eval.datasets import BREAKDOWN_KEYS
from extract_trt.eval.metrics import Score, SnippetCounts
from extract_trt.eval.stats import mean, paired_bootstrap, percentile

__all__ = ["CandidateInfo", "PageRow", "Report"]

#: metric key → (column title, description) in report order.
METRICS: dict[str, tuple[str, str]] = {
    "word_f1": ("word F1", "WCXB word-bag F1 (both empty = 1)"),
    "word_p": ("word P", "WCXB word-bag precision"),
    "word_r": ("word R", "WCXB word-bag recall"),
    "rouge5_f1": ("ROUGE-5", "WebMainBench ROUGE-5 F1, jieba tokens (both empty = 1)"),
    "rouge5_p": ("R-5 P", "WebMainBench ROUGE-5 precision"),
    "rouge5_r": ("R-5 R", "WebMainBench ROUGE-5 recall"),
    "rouge5_pulpie_f1": ("ROUGE-5 ws", "Pulpie ROUGE-5 F1, whitespace tokens (empty side = 0)"),
    "snippets_with": ("with found (trafilatura)", "share of `with` snippets found; case-sensitive, pooled over pages"),
    "snippets_without": ("without kept (trafilatura)",
                         "share of `without` snippets wrongly kept; case-sensitive, pooled (lower is better)"),
    "snippets_with_wcxb": ("with found (wcxb)", "share of `with` snippets found; case-insensitive, mean of page rates"),
    "snippets_without_wcxb": ("without kept (wcxb)",
                              "share of `without` snippets wrongly kept; case-insensitive, mean of page rates"),
}  # fmt: skip
#: the snippet rates pooled over pages (the others are means of per-page values)
POOLED = {"snippets_with": ("with_found", "with_total"), "snippets_without": ("without_kept", "without_total")}


@dataclass(slots=True)
class PageRow:
    """The scores of one extractor on one page."""

    extractor: str
    id: str
    url: str | None
    groundtruth_format: str | None
    meta: dict[str, str]
    seconds: float
    error: str | None
    empty: bool
    chars: int
    word: Score | None = None
    rouge5: Score | None = None
    rouge5_pulpie: Score | None = None
    snippets: SnippetCounts | None = None
    text: str | None = None  # the scored prediction, kept with ``evaluate(keep_text=True)`` (``--save-text``)

    def value(self, metric: str) -> float | None:
        """The page's value of a :data:`METRICS` key (``None`` when the page has no such score)."""
        if metric.startswith("snippets_"):
            if self.snippets is None:
                return None
            s = self.snippets
            return {"snippets_with": s.with_rate, "snippets_without": s.without_rate,
                    "snippets_with_wcxb": s.with_rate_nocase, "snippets_without_wcxb": s.without_rate_nocase}[metric]  # fmt: skip
        name, _, part = metric.rpartition("_")
        score = {"word": self.word, "rouge5": self.rouge5, "rouge5_pulpie": self.rouge5_pulpie}[name]
        if score is None:
            return None
        return {"f1": score.f1, "p": score.precision, "r": score.recall}[part]

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "extractor": self.extractor, "id": self.id, "url": self.url,
            "groundtruth_format": self.groundtruth_format, **self.meta,
            "seconds": round(self.seconds, 6), "error": self.error, "empty": self.empty, "chars": self.chars,
        }  # fmt: skip
        for key in METRICS:
            if key not in POOLED:
                value = self.value(key)
                if value is not None:
                    out[key] = round(value, 6)
        if self.rouge5_pulpie is not None:
            out["rouge5_pulpie_p"] = round(self.rouge5_pulpie.precision, 6)
            out["rouge5_pulpie_r"] = round(self.rouge5_pulpie.recall, 6)
        if self.snippets is not None:
            s = self.snippets
            out.update(with_found=s.with_found, with_total=s.with_total,
                       without_kept=s.without_kept, without_total=s.without_total,
                       with_found_nocase=s.with_found_nocase, without_kept_nocase=s.without_kept_nocase)  # fmt: skip
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass(slots=True)
class CandidateInfo:
    """An extractor in the report: what it is and the time it took."""

    name: str
    description: str
    pages: int = 0
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def pages_per_s(self) -> float | None:
        return self.pages / self.wall_seconds if self.wall_seconds > 0 else None

    @property
    def pages_per_s_core(self) -> float | None:
        """Pages per CPU second of this process = pages/s per core."""
        return self.pages / self.cpu_seconds if self.cpu_seconds > 0 else None


_TIE = 1e-9  # page scores closer than this count as equal in :meth:`Report.paired`


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _signed_interval(paired: dict[str, float | int]) -> str:
    return f"{paired['difference']:+.3f} ({paired['low']:+.3f} … {paired['high']:+.3f})"


def _rate(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


@dataclass(slots=True)
class Report:
    """What :func:`extract_trt.eval.evaluate` returns. ``rows``: one :class:`PageRow` per (extractor, page)."""

    rows: list[PageRow]
    candidates: list[CandidateInfo]
    skipped: dict[str, str] = field(default_factory=dict)
    dataset: str = ""
    date: str = ""  # UTC date of the run (YYYY-MM-DD), shown in the chart's title

    # ------------------------------------------------------------------ aggregates

    def rows_of(self, extractor: str) -> list[PageRow]:
        return [r for r in self.rows if r.extractor == extractor]

    @property
    def headline(self) -> str | None:
        """The headline metric key (module doc), ``None`` when no page has a ground truth."""
        formats = {r.groundtruth_format for r in self.rows if r.word is not None}
        if "text" in formats:
            return "word_f1"
        if formats:
            return "rouge5_f1"
        if any(r.snippets is not None for r in self.rows):
            return "snippets_with"
        return None

    @staticmethod
    def aggregate(rows: list[PageRow]) -> dict[str, float | int | None]:
        """Means of every metric over ``rows`` (the trafilatura snippet rates pooled), plus counts."""
        out: dict[str, float | int | None] = {
            "pages": len(rows),
            "errors": sum(r.error is not None for r in rows),
            "empty": sum(r.empty for r in rows),
        }
        snippets = [r.snippets for r in rows if r.snippets is not None]
        for key in METRICS:
            if key in POOLED:
                hits, total = POOLED[key]
                n = sum(getattr(s, total) for s in snippets)
                out[key] = sum(getattr(s, hits) for s in snippets) / n if n else None
            else:
                out[key] = mean([v for r in rows if (v := r.value(key)) is not None])
        return out

    def summary(self) -> dict[str, dict[str, Any]]:
        """extractor → metrics, speed (pages/s wall and per core) and per-page latency p50/p95 (ms)."""
        out = {}
        for info in self.candidates:
            rows = self.rows_of(info.name)
            seconds = [r.seconds for r in rows]
            p50, p95 = percentile(seconds, 50), percentile(seconds, 95)
            out[info.name] = {
                "description": info.description,
                **self.aggregate(rows),
                "pages_per_s": info.pages_per_s,
                "pages_per_s_core": info.pages_per_s_core,
                "latency_p50_ms": None if p50 is None else p50 * 1e3,
                "latency_p95_ms": None if p95 is None else p95 * 1e3,
            }
        return out

    def breakdown(self, key: str) -> dict[str, dict[str, dict[str, float | int | None]]]:
        """group value → extractor → aggregate, for a meta key such as ``page_type`` or ``level``."""
        out: dict[str, dict[str, dict[str, float | int | None]]] = {}
        for value in self.group_values(key):
            out[value] = {
                info.name: self.aggregate([r for r in self.rows_of(info.name) if r.meta.get(key) == value])
                for info in self.candidates
            }
        return out

    def group_values(self, key: str) -> list[str]:
        """The values of meta ``key`` on the pages, most frequent first."""
        return [value for value, _ in Counter(r.meta[key] for r in self.rows if key in r.meta).most_common()]

    def paired(self, key: str | None = None, value: str | None = None) -> dict[str, dict[str, float | int]]:
        """Each extractor against the first one (the reference) on the headline metric, page by page:
        the mean difference (extractor − reference) with its 95 % paired bootstrap interval
        (:func:`~extract_trt.eval.stats.paired_bootstrap`) and how many pages it scores higher, equal,
        lower. With ``key``, only the pages whose meta ``key`` is ``value``. Empty when the headline is a
        pooled snippet rate, which has no per-page score to pair."""
        metric = self.headline
        if metric is None or metric.startswith("snippets_") or len(self.candidates) < 2:
            return {}

        def scores(name: str) -> dict[str, float]:
            return {r.id: v for r in self.rows_of(name)
                    if (key is None or r.meta.get(key) == value) and (v := r.value(metric)) is not None}  # fmt: skip

        reference = scores(self.candidates[0].name)
        out: dict[str, dict[str, float | int]] = {}
        for info in self.candidates[1:]:
            other = scores(info.name)
            diffs = [other[i] - reference[i] for i in reference if i in other]
            if not diffs:
                continue
            difference, low, high = paired_bootstrap(diffs)
            out[info.name] = {
                "pages": len(diffs), "difference": difference, "low": low, "high": high,
                "higher": sum(d > _TIE for d in diffs), "equal": sum(abs(d) <= _TIE for d in diffs),
                "lower": sum(d < -_TIE for d in diffs),
            }  # fmt: skip
        return out

    def breakdown_keys(self) -> list[str]:
        return [k for k in BREAKDOWN_KEYS if any(k in r.meta for r in self.rows)]

    def worst(self, extractor: str, n: int = 10) -> list[PageRow]:
        """The ``n`` pages with the lowest headline score for ``extractor`` (ties: input order)."""
        metric = self.headline
        if metric is None:
            return []
        scored = [r for r in self.rows_of(extractor) if r.value(metric) is not None]
        return sorted(scored, key=lambda r: r.value(metric))[:n]

    # ------------------------------------------------------------------ output

    def _metric_columns(self) -> list[str]:
        return [k for k in METRICS if any(r.value(k) is not None for r in self.rows)]

    def to_markdown(self, *, worst: int = 10) -> str:
        """The report as Markdown: summary table, breakdowns by meta key, worst pages, skipped peers."""
        summary = self.summary()
        columns = self._metric_columns()
        lines = []
        if self.dataset:
            n_pages = max((info.pages for info in self.candidates), default=0)
            lines += [f"Dataset: `{self.dataset}` ({n_pages} pages)", ""]
        header = ["extractor", *(METRICS[k][0] for k in columns), "pages/s/core", "p50 ms", "p95 ms", "errors", "empty"]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
        for name, s in summary.items():
            cells = [name, *(_fmt(s[k]) for k in columns), _rate(s["pages_per_s_core"]),
                     _fmt(s["latency_p50_ms"], 1), _fmt(s["latency_p95_ms"], 1), str(s["errors"]), str(s["empty"])]  # fmt: skip
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines += [f"* {METRICS[k][0]}: {METRICS[k][1]}" for k in columns]
        lines.append("* pages/s/core: pages per CPU-second of the extracting process; p50/p95: per-page latency")
        lines += [f"* {info.name}: {info.description}" for info in self.candidates]
        headline = self.headline
        if headline is not None:
            title = METRICS[headline][0]
            for key in self.breakdown_keys():
                groups = self.breakdown(key)
                names = [info.name for info in self.candidates]
                lines += ["", f"### {title} by {key}", "", "| " + " | ".join([key, "pages", *names]) + " |",
                          "|---|---:|" + "---:|" * len(names)]  # fmt: skip
                for value, per in groups.items():
                    n = next(iter(per.values()))["pages"] if per else 0
                    lines.append("| " + " | ".join([value, str(n), *(_fmt(per[m][headline]) for m in names)]) + " |")
            lines += self._paired_markdown(title)
            if worst > 0:
                for info in self.candidates:
                    rows = self.worst(info.name, worst)
                    if not rows:
                        continue
                    lines += ["", f"### Worst {len(rows)} pages: {info.name} ({title})", "",
                              "| page | " + title + " | chars | error | url |", "|---|---:|---:|---|---|"]  # fmt: skip
                    for r in rows:
                        err = (r.error or "").replace("|", "/")[:60]
                        lines.append(f"| {r.id} | {_fmt(r.value(headline))} | {r.chars} | {err} | {r.url or ''} |")
        if self.skipped:
            lines += ["", "Skipped:"] + [f"* {name}: {reason}" for name, reason in self.skipped.items()]
        return "\n".join(lines) + "\n"

    def _paired_markdown(self, title: str) -> list[str]:
        """The :meth:`paired` tables: overall, then one column per extractor for each breakdown key."""
        paired = self.paired()
        if not paired:
            return []
        reference = self.candidates[0].name
        lines = ["", f"### {title}: each extractor against {reference}, page by page", "",
                 "| extractor | pages | difference | 95 % interval | higher | equal | lower |",
                 "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for name, p in paired.items():
            lines.append(f"| {name} | {p['pages']} | {p['difference']:+.3f} | {p['low']:+.3f} … {p['high']:+.3f} "
                         f"| {p['higher']} | {p['equal']} | {p['lower']} |")  # fmt: skip
        lines += ["", f"(difference = extractor − {reference}, mean over the pages both scored; interval: paired "
                      "bootstrap over pages, 2,000 resamples)"]  # fmt: skip
        names = list(paired)
        for key in self.breakdown_keys():
            lines += ["", f"### {title} by {key}: difference from {reference} (95 % interval)", "",
                      "| " + " | ".join([key, "pages", *names]) + " |",
                      "|---|---:|" + "---:|" * len(names)]  # fmt: skip
            for value in self.group_values(key):
                per = self.paired(key, value)
                n = max((p["pages"] for p in per.values()), default=0)
                cells = [_signed_interval(p) if (p := per.get(m)) else "–" for m in names]
                lines.append("| " + " | ".join([value, str(n), *cells]) + " |")
        return lines

    def to_json(self) -> dict[str, Any]:
        """Summary, breakdowns, paired differences, worst pages and skipped extractors (per-page rows:
        :meth:`pages_json`)."""
        return {
            "dataset": self.dataset,
            "date": self.date,
            "headline": self.headline,
            "summary": self.summary(),
            "breakdowns": {key: self.breakdown(key) for key in self.breakdown_keys()},
            "paired": {
                "all": self.paired(),
                **{key: {v: self.paired(key, v) for v in self.group_values(key)} for key in self.breakdown_keys()},
            },
            "worst": {info.name: [r.id for r in self.worst(info.name)] for info in self.candidates},
            "skipped": self.skipped,
        }

    def pages_json(self) -> list[dict[str, Any]]:
        return [r.as_json() for r in self.rows]

    def write(self, out_dir: str | os.PathLike[str], *, worst: int = 10, chart: bool = True) -> dict[str, Path]:
        """Write ``report.md``, ``summary.json``, ``pages.json`` and (``chart``) ``pareto.png``; returns the paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"report": out / "report.md", "summary": out / "summary.json", "pages": out / "pages.json"}
        paths["report"].write_text(self.to_markdown(worst=worst), encoding="utf-8")
        paths["summary"].write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False), encoding="utf-8")
        paths["pages"].write_text(json.dumps(self.pages_json(), ensure_ascii=False), encoding="utf-8")
        if chart and self.headline is not None:
            paths["chart"] = self.plot_pareto(out / "pareto.png")
        return paths

    def pareto_points(self) -> list[tuple[str, float, float, bool]]:
        """(extractor, pages/s per core, headline score, on the Pareto frontier) per extractor with both."""
        metric = self.headline
        summary = self.summary()
        points = [(name, s["pages_per_s_core"], s[metric]) for name, s in summary.items()
                  if metric and s["pages_per_s_core"] and s[metric] is not None]  # fmt: skip
        out = []
        for name, speed, quality in points:
            dominated = any(sp >= speed and q >= quality and (sp, q) != (speed, quality) for _, sp, q in points)
            out.append((name, speed, quality, not dominated))
        return out

    @property
    def dataset_name(self) -> str:
        """The data set's name: its file name without ``.jsonl``/``.gz`` (``wcxb-dev``)."""
        name = Path(self.dataset).name
        for suffix in (".gz", ".jsonl", ".json"):
            name = name.removesuffix(suffix)
        return name or "eval"

    def pareto_figure(self):  # noqa: ANN201 - a matplotlib Figure (matplotlib is imported lazily)
        """Quality (headline metric) against pages/s per core: log x axis with plain-number ticks, the frontier
        drawn, each label placed toward the inside of the axes (never over an edge), titled with the data set,
        its page count and the date."""
        import matplotlib
        import matplotlib.ticker

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        points = self.pareto_points()
        fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
        for name, speed, quality, front in points:
            ax.scatter([speed], [quality], s=40, color="tab:red" if front else "tab:blue", zorder=3)
        frontier = sorted((p for p in points if p[3]), key=lambda p: p[1])
        if len(frontier) > 1:
            ax.plot([p[1] for p in frontier], [p[2] for p in frontier], "--", color="tab:red", lw=1, zorder=2)
        ax.set_xscale("log")
        if points:
            speeds, scores = [p[1] for p in points], [p[2] for p in points]
            low, high = min(speeds), max(speeds)
            ax.set_xlim(low / 1.6, high * 1.6)  # room for the dots at the edges (a factor, on a log axis)
            spread = max(max(scores) - min(scores), 0.02)
            ax.set_ylim(min(scores) - 0.15 * spread, max(scores) + 0.15 * spread)
            x_mid = (low * high) ** 0.5
            y_mid = (min(scores) + max(scores)) / 2
            for name, speed, quality, _ in points:
                right = speed > x_mid  # labels point toward the middle, so they stay inside the axes
                above = quality <= y_mid
                ax.annotate(
                    name, (speed, quality), textcoords="offset points", xytext=(-6 if right else 6, 5 if above else -5),
                    ha="right" if right else "left", va="bottom" if above else "top", fontsize=8,
                )  # fmt: skip
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("pages/s per CPU core (log scale); red: Pareto frontier")
        title = METRICS[self.headline][0] if self.headline else "quality"
        ax.set_ylabel(f"mean {title}")
        n_pages = max((info.pages for info in self.candidates), default=0)
        when = f", {self.date}" if self.date else ""
        ax.set_title(f"Quality vs speed on {self.dataset_name} ({n_pages} pages{when})", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        return fig

    def plot_pareto(self, path: str | os.PathLike[str]) -> Path:
        """:meth:`pareto_figure` as a PNG."""
        import matplotlib.pyplot as plt

        fig = self.pareto_figure()
        fig.savefig(path)
        plt.close(fig)
        return Path(path)
