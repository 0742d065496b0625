"""Two saved evaluation runs compared page by page (``extract-trt eval --compare RUN_A RUN_B``).

A run is the ``pages.json`` that ``extract-trt eval --out DIR`` writes (give ``DIR`` or the file). Rows are
matched on (extractor, page id). For each extractor in both runs: the mean of a per-page metric in each run,
the mean per-page difference (B − A) with its 95 % paired bootstrap interval
(:func:`~extract_trt.eval.stats.paired_bootstrap`), how many pages went up, stayed, went down, and the pages
that moved most. With ``--save-text`` in both runs, how many predictions changed and a unified diff of the
text of the pages that moved most.
"""

from __future__ import annotations

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extract_trt.eval.stats import paired_bootstrap

__all__ = ["Comparison", "PageChange", "compare_runs", "load_pages"]

#: The per-page metrics a comparison can use, in the order the default is picked (the first both runs have).
METRICS = ("word_f1", "rouge5_f1", "rouge5_pulpie_f1", "word_p", "word_r", "rouge5_p", "rouge5_r")
_TIE = 1e-9


def load_pages(run: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The rows of a run's ``pages.json`` (``run`` is the ``--out`` directory or the file)."""
    path = Path(run)
    if path.suffix != ".json":
        path = path / "pages.json"
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (give an `extract-trt eval --out` directory)") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "extractor" in r and "id" in r for r in rows):
        raise ValueError(f"{path}: not an `extract-trt eval` pages.json (a list of rows with extractor and id)")
    return rows


@dataclass(slots=True)
class PageChange:
    """One page of one extractor in both runs."""

    extractor: str
    id: str
    url: str | None
    before: float
    after: float
    text_before: str | None = None
    text_after: str | None = None

    @property
    def difference(self) -> float:
        return self.after - self.before

    @property
    def text_changed(self) -> bool | None:
        """Whether the prediction changed (``None``: a run has no saved text)."""
        if self.text_before is None or self.text_after is None:
            return None
        return self.text_before != self.text_after

    def text_diff(self, max_lines: int = 40) -> list[str]:
        """A unified diff (one line of context) of the two predictions, at most ``max_lines`` lines."""
        if self.text_before is None or self.text_after is None:
            return []
        diff = difflib.unified_diff(self.text_before.splitlines(), self.text_after.splitlines(), "A", "B", n=1, lineterm="")
        lines = list(diff)
        return lines[:max_lines] + ([f"… {len(lines) - max_lines} more lines"] if len(lines) > max_lines else [])


@dataclass(slots=True)
class Comparison:
    """Run B against run A on one metric (module doc)."""

    metric: str
    run_a: str
    run_b: str
    changes: dict[str, list[PageChange]]  # extractor → pages both runs scored
    only_a: dict[str, int] = field(default_factory=dict)  # extractor → pages only run A has
    only_b: dict[str, int] = field(default_factory=dict)

    def summary(self, extractor: str) -> dict[str, Any]:
        pages = self.changes[extractor]
        diffs = [p.difference for p in pages]
        mean, low, high = paired_bootstrap(diffs)
        changed = [p.text_changed for p in pages if p.text_changed is not None]
        return {
            "pages": len(pages), "mean_a": sum(p.before for p in pages) / len(pages),
            "mean_b": sum(p.after for p in pages) / len(pages), "difference": mean, "low": low, "high": high,
            "higher": sum(d > _TIE for d in diffs), "equal": sum(abs(d) <= _TIE for d in diffs),
            "lower": sum(d < -_TIE for d in diffs), "text_changed": sum(changed) if changed else None,
            "only_a": self.only_a.get(extractor, 0), "only_b": self.only_b.get(extractor, 0),
        }  # fmt: skip

    def moved(self, extractor: str, n: int = 10) -> list[PageChange]:
        """The ``n`` pages whose score changed most (either way), largest first."""
        moving = [p for p in self.changes[extractor] if abs(p.difference) > _TIE]
        return sorted(moving, key=lambda p: -abs(p.difference))[:n]

    def to_markdown(self, *, top: int = 10, diffs: int = 3) -> str:
        lines = [f"Run B `{self.run_b}` against run A `{self.run_a}`, per-page {self.metric} (B − A)", "",
                 "| extractor | pages | mean A | mean B | difference | 95 % interval | up | same | down | text changed |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for name in self.changes:
            s = self.summary(name)
            changed = "–" if s["text_changed"] is None else str(s["text_changed"])
            lines.append(f"| {name} | {s['pages']} | {s['mean_a']:.4f} | {s['mean_b']:.4f} | {s['difference']:+.4f} | "
                         f"{s['low']:+.4f} … {s['high']:+.4f} | {s['higher']} | {s['equal']} | {s['lower']} | {changed} |")  # fmt: skip
        lines += ["", "(interval: paired bootstrap over the pages both runs scored, 2,000 resamples; text changed: "
                      "predictions that differ, when both runs were made with --save-text)"]  # fmt: skip
        for name in self.changes:
            s = self.summary(name)
            if s["only_a"] or s["only_b"]:
                lines.append(f"{name}: {s['only_a']} pages only in A, {s['only_b']} only in B (not compared)")
            moved = self.moved(name, top)
            if not moved:
                continue
            lines += ["", f"### {name}: the {len(moved)} pages that moved most", "",
                      f"| page | A | B | B − A | url |", "|---|---:|---:|---:|---|"]  # fmt: skip
            lines += [f"| {p.id} | {p.before:.4f} | {p.after:.4f} | {p.difference:+.4f} | {p.url or ''} |" for p in moved]
            for p in moved[:diffs]:
                diff = p.text_diff()
                if diff:
                    lines += ["", f"`{p.id}` ({name}):", "", "```diff", *diff, "```"]
        return "\n".join(lines) + "\n"

    def to_json(self, *, top: int = 10) -> dict[str, Any]:
        return {
            "metric": self.metric, "run_a": self.run_a, "run_b": self.run_b,
            "extractors": {name: {**self.summary(name),
                                  "moved": [{"id": p.id, "a": p.before, "b": p.after, "difference": p.difference,
                                             "text_changed": p.text_changed} for p in self.moved(name, top)]}
                           for name in self.changes},
        }  # fmt: skip


def compare_runs(run_a: str | os.PathLike[str], run_b: str | os.PathLike[str], metric: str | None = None) -> Comparison:
    """Compare two saved runs page by page on ``metric`` (default: the first of :data:`METRICS` both have)."""
    rows_a, rows_b = load_pages(run_a), load_pages(run_b)
    if metric is None:
        metric = next((m for m in METRICS if any(m in r for r in rows_a) and any(m in r for r in rows_b)), None)
        if metric is None:
            raise ValueError("the two runs share no per-page metric to compare")
    by_key_a = {(r["extractor"], r["id"]): r for r in rows_a if metric in r}
    by_key_b = {(r["extractor"], r["id"]): r for r in rows_b if metric in r}
    changes: dict[str, list[PageChange]] = {}
    for key, a in by_key_a.items():
        b = by_key_b.get(key)
        if b is not None:
            changes.setdefault(key[0], []).append(
                PageChange(key[0], key[1], a.get("url"), a[metric], b[metric], a.get("text"), b.get("text"))
            )
    if not changes:
        raise ValueError(f"no page of an extractor is scored on {metric} in both runs")
    only_a: dict[str, int] = {}
    only_b: dict[str, int] = {}
    for mine, other, counts in ((by_key_a, by_key_b, only_a), (by_key_b, by_key_a, only_b)):
        for name, page in mine:
            if (name, page) not in other and name in changes:
                counts[name] = counts.get(name, 0) + 1
    return Comparison(metric, str(run_a), str(run_b), changes, only_a, only_b)
