"""Quality evaluation and cost benchmarking (``extract-trt eval`` / ``extract-trt bench``).

Python API (stable; the CLI is a thin layer over it)::

    from extract_trt.eval import evaluate, read_dataset
    from extract_trt.eval.metrics import word_f1, rouge_n_webmainbench, rouge_n_pulpie, snippet_counts

    records = read_dataset("../shared/data/wcxb-dev.jsonl.gz", ids=val_ids, limit=None)
    report = evaluate(records, ["default", "trafilatura", Extractor(labeler=my_labeler)])
    report.summary()["default"]["word_f1"]        # plain mean over pages
    report.write("out/")                          # report.md, summary.json, pages.json, pareto.png

Modules: :mod:`~extract_trt.eval.metrics` (reference metric definitions), :mod:`~extract_trt.eval.datasets`
(our JSONL and WebMainBench JSONL), :mod:`~extract_trt.eval.peers` (trafilatura, resiliparse, readability,
jusText, rs-trafilatura), :mod:`~extract_trt.eval.harness` (:func:`evaluate`), :mod:`~extract_trt.eval.report`,
:mod:`~extract_trt.eval.bench` (pipeline and per-stage throughput), :mod:`~extract_trt.eval.cost`
(price presets, $/M pages), :mod:`~extract_trt.eval.roofline` (analytic GPU projection),
:mod:`~extract_trt.eval.tokens` (token counts per page for the projection).
"""

from extract_trt.eval.datasets import EvalRecord, read_dataset, read_ids
from extract_trt.eval.harness import Candidate, Prediction, evaluate, resolve_candidate
from extract_trt.eval.report import PageRow, Report

__all__ = [
    "Candidate",
    "EvalRecord",
    "PageRow",
    "Prediction",
    "Report",
    "evaluate",
    "read_dataset",
    "read_ids",
    "resolve_candidate",
]
