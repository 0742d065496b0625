"""Training examples: pages of the shared labeled sets -> block features + aligned labels, and the split.

* ``wcxb-dev`` (CC-BY-4.0): plain-text ground truth aligned to blocks (:mod:`extract_trt.train.align`).
* ``webmainbench-sample`` (Apache-2.0): ``cc-select`` element annotations read as block labels.
* ``trafilatura-eval`` (Apache-2.0, 990 pages, mostly German): weak labels from its must-have /
  must-not-have snippets (a few blocks per page; the rest carry no loss) — the multilingual signal.
* ``readability-pages`` (Apache-2.0, Mozilla Readability's test pages without the lorem-ipsum ones):
  Readability.js's article-only output aligned to blocks — news and blog articles of 2008-2020 in
  table-and-list layouts, the kind whose toolbars, teaser lists and menus the other sets rarely show.

The model's vocabulary (:class:`~extract_trt.runtime.labelers.features.Vocabulary`) is the hashed ids found on pages
of at least two training domains (:func:`shared_vocabulary`).

The split is by **domain** (a page's host without ``www.``): a CRC32 of the domain puts about one domain
in five into validation and one in five into tune (threshold, hyper-parameters), so no site is seen on
two sides and the split is the same on every machine and in every run. Only validation figures are
reported.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from extract_trt.runtime.html.simplify import MINERU_V11_WITH_HIDDEN, simplify
from extract_trt.runtime.labelers.annotation import annotation_labels
from extract_trt.runtime.labelers.features import HASH_BITS, WORDS, BlockFeatures, Vocabulary, page_features
from extract_trt.train.align import IGNORE, align_labels, snippet_labels

__all__ = [
    "Example", "SIMPLIFIER", "SPLIT_MODULUS", "build_examples", "domain", "in_share", "page_group", "read_jsonl",
    "shared_vocabulary", "split_of", "split_of_name",
]  # fmt: skip

SPLIT_MODULUS = 5
# The block scheme the model learns on, recorded in its manifest so that it runs on the same: the reference's,
# plus the elements the reference drops as invisible (tab panels, accordions, fade-ins — and hidden menus).
SIMPLIFIER = MINERU_V11_WITH_HIDDEN


@dataclass(slots=True)
class Example:
    """One page ready for training: features, labels (1/0/IGNORE per block), loss weights, metadata."""

    id: str
    dataset: str
    domain: str
    split: str
    page_type: str
    features: BlockFeatures
    labels: np.ndarray  # int8 [n_blocks]
    weights: np.ndarray  # float32 [n_blocks]; 0 where the label is IGNORE
    targets: np.ndarray | None = None  # float32 [n_blocks] soft targets (a teacher's p(main)); None: labels == 1

    def target(self) -> np.ndarray:
        """What the loss pulls p(main) towards: the soft targets, else 1.0 for main and 0.0 for other."""
        return self.targets if self.targets is not None else (self.labels == 1).astype(np.float32)


def read_jsonl(path: str | Path) -> Iterator[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def domain(url: str) -> str:
    host = urlsplit(url or "").hostname or ""
    return host[4:] if host.startswith("www.") else host


def page_group(record: dict) -> str:
    """The key a page is split and counted by: its domain, or its id when it has no URL (a test page of a
    project's suite stands for a site of its own)."""
    return domain(record.get("url") or "") or str(record.get("id"))


def split_of(url: str) -> str:
    """``"validation"``, ``"tune"`` or ``"train"`` by a stable CRC32 of the page's domain.

    One domain in :data:`SPLIT_MODULUS` is validation (reported, never trained or tuned on), one is tune
    (threshold and hyper-parameters), the rest train. A page without a URL is split by its id instead
    (``split_of_name(page_group(record))``, as the training examples are).
    """
    return split_of_name(domain(url))


def split_of_name(name: str) -> str:
    """:func:`split_of` for a domain name (or another grouping key, e.g. a page without URL's file name)."""
    bucket = zlib.crc32(name.encode()) % SPLIT_MODULUS
    return "validation" if bucket == 0 else "tune" if bucket == 1 else "train"


def in_share(domain_name: str, share: float) -> bool:
    """Whether a domain is among a stable ``share`` (0–1) of all domains, for learning curves
    (``TrainConfig.train_share``). The CRC32 is salted apart from :func:`split_of`'s, so a share cuts
    across the split evenly, and a smaller share's domains are all in every larger one."""
    return zlib.crc32(f"share:{domain_name}".encode()) % 1000 < round(share * 1000)


def build_examples(path: str | Path) -> Iterator[Example]:
    """Examples from one shared JSONL set; pages that yield no blocks or no usable labels are skipped."""
    for record in read_jsonl(path):
        if str(record.get("likely_synthetic")) == "True":  # lorem-ipsum test pages teach no convention
            continue
        html = record.get("annotated_html") or record["html"]
        page = simplify(html, profile=SIMPLIFIER)
        if not len(page):
            continue
        if record.get("annotated_html"):
            labels = annotation_labels(page).main.astype(np.int8)
        elif record.get("groundtruth_format") in ("text", "markdown") and record.get("groundtruth"):
            labels = align_labels(page, record["groundtruth"])
        elif record.get("groundtruth_format") == "snippets":
            labels = snippet_labels(page, record.get("with") or [], record.get("without") or [])
            if not (labels != IGNORE).any():
                continue
        else:
            continue
        features = page_features(page)
        group = page_group(record)
        # longer blocks weigh more (the metrics count words), without letting one long block dominate
        words = features.text_ids_per_block(WORDS)
        weights = np.where(labels == IGNORE, 0.0, 1.0 + np.log1p(words)).astype(np.float32)
        yield Example(
            id=str(record["id"]),
            dataset=Path(path).name.split(".")[0],
            domain=group,
            split=split_of_name(group),
            page_type=record.get("page_type") or "unknown",
            features=features,
            labels=labels,
            weights=weights,
        )


def shared_vocabulary(examples: Sequence[Example], min_domains: int) -> Vocabulary:
    """The ids found on pages of at least ``min_domains`` distinct domains of ``examples``: what one site
    alone uses (its class names, its product names) stays outside, an unknown id to the model."""
    by_domain: dict[str, list[np.ndarray]] = {}
    for e in examples:
        by_domain.setdefault(e.domain, []).append(e.features.ids)
    domains = np.zeros(1 << HASH_BITS, dtype=np.int32)  # per id, how many domains have it
    for ids in by_domain.values():
        domains[np.unique(np.concatenate(ids))] += 1
    return Vocabulary.of(np.flatnonzero(domains >= min_domains))
