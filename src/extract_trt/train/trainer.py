"""Train the built-in block model from the shared labeled pages and write its model directory.

``train_block_model(data_dir, out_dir)`` runs the whole recipe with a fixed seed: build examples
(:mod:`extract_trt.train.data`), make the ids found on fewer than ``min_domains`` training sites unknown
ids (the model's vocabulary is the rest), train :class:`~extract_trt.train.model.BlockModel` on the training
domains with AdamW and a linear warm-up/decay schedule, pick the decision thresholds on the tune pages
(balanced: the best block F1; favoring precision or recall: the best F0.5 / F2), export fp32 and int8
ONNX (:mod:`extract_trt.train.export_onnx`), and write ``block-model.json`` with the configuration and
the validation figures. ``extract-trt train`` is the CLI for it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from extract_trt.runtime.labelers.block_model import FEATURE_VERSION, MANIFEST, OVERLAP, WINDOW
from extract_trt.runtime.labelers.features import BlockFeatures, Vocabulary, windows
from extract_trt.train.align import IGNORE
from extract_trt.train.data import SIMPLIFIER, Example, build_examples, in_share, shared_vocabulary
from extract_trt.train.export_onnx import export_block_model
from extract_trt.train.model import BlockModel, BlockModelEnsemble, ModelConfig
from extract_trt.train.model_card import render_model_card

__all__ = ["TrainConfig", "block_f1", "train_block_model"]

DATASETS = ("wcxb-dev.jsonl.gz", "webmainbench-sample.jsonl.gz", "trafilatura-eval.jsonl.gz", "readability-pages.jsonl.gz")
# Loss weight per dataset (default 1). readability-pages holds 61 training pages against wcxb-dev's 870, yet is
# the one set of the news and blog layouts of 2008-2020 with full ground truth; weighted up, its pages teach
# those layouts without a convention of their own taking over (chosen on the tune domains: docs/models.md).
DATASET_WEIGHTS = {"readability-pages": 2.5}
MODEL_CARD = "MODEL_CARD.md"
CROP = 512  # blocks of a training window: a random crop of a longer page (the labeler reads up to WINDOW)
PRIMARY = "wcxb-dev"  # the set with full ground truth: its validation block F1 is the progress figure
# The threshold of each `favor` (BlockModelLabeler) is the one with the best block F-beta on the tune pages.
FAVOR_BETAS = {"precision": 0.5, "balanced": 1.0, "recall": 2.0}


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 5
    pages_per_step: int = 8
    learning_rate: float = 2e-3
    weight_decay: float = 0.01
    warmup_share: float = 0.05
    seed: int = 13
    threads: int = 1
    model: ModelConfig = field(default_factory=ModelConfig)
    token_dropout: float = 0.1
    min_domains: int = 2  # the vocabulary: ids found on pages of at least this many training domains
    page_normalized: bool = False
    ema_decay: float = 0.995  # > 0: keep an exponential moving average of the weights and ship that
    refit: bool = True  # after picking the threshold on tune, train again on train + tune and ship that
    max_pages: int | None = None  # per dataset; small runs for tests
    train_share: float = 1.0  # < 1: train on this stable share of the training domains (a learning curve)
    primary: str = PRIMARY  # the dataset whose tune pages report progress and choose the thresholds
    dataset_weights: dict[str, float] = field(default_factory=lambda: dict(DATASET_WEIGHTS))
    # > 1: train this many models (seeds seed, seed + 1, ...) and ship the mean of their logits as one graph
    # (BlockModelEnsemble): steadier than one seed, and better on the news pages (docs/models.md)
    members: int = 2


def _tensors(f: BlockFeatures) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(a) for a in f.arrays())


def _crop(example: Example, rng: random.Random, token_dropout: float) -> tuple[BlockFeatures, np.ndarray, np.ndarray]:
    """A random window of ``CROP`` blocks of a long page, with a random ``token_dropout`` share of its
    hashed ids left out (so no single string decides a block): features, targets, weights."""
    features, targets, weights = example.features, example.target(), example.weights
    n = features.n_blocks
    if n > CROP:
        start = rng.randrange(0, n - CROP + 1)
        features = features.window(start, start + CROP)
        targets, weights = targets[start : start + CROP], weights[start : start + CROP]
    if token_dropout > 0:
        keep = np.random.default_rng(rng.getrandbits(32)).random(len(features.ids)) >= token_dropout
        features = features.keep_ids(keep)
    return features, targets, weights


def predict(model: BlockModel, features: BlockFeatures, window: int = WINDOW, overlap: int = OVERLAP) -> np.ndarray:
    """p(main) per block with the same windowing as the runtime labeler."""
    model.eval()
    out = np.zeros(features.n_blocks, dtype=np.float32)
    with torch.no_grad():
        for start, stop, keep_from, keep_to in windows(features.n_blocks, window, overlap):
            logits = model(*_tensors(features.window(start, stop))).numpy()
            out[keep_from:keep_to] = logits[keep_from - start : keep_to - start]
    return 1.0 / (1.0 + np.exp(-out))


def block_f1(
    examples: Sequence[Example], probabilities: Sequence[np.ndarray], threshold: float, beta: float = 1.0
) -> float:
    """Mean over pages of the F1 of main blocks, each block weighted by its loss weight (word-based); with
    ``beta``, the F-beta score (recall counted ``beta`` times as much as precision)."""
    scores = []
    b2 = beta * beta
    for ex, prob in zip(examples, probabilities):
        known = ex.labels != IGNORE
        truth = (ex.labels == 1) & known
        pred = (prob >= threshold) & known
        w = ex.weights
        tp, fp, fn = w[truth & pred].sum(), w[~truth & pred].sum(), w[truth & ~pred].sum()
        scores.append(1.0 if tp + fp + fn == 0 else (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp))
    return float(np.mean(scores)) if scores else 0.0


def _by_dataset(examples: Sequence[Example]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i, e in enumerate(examples):
        groups.setdefault(e.dataset, []).append(i)
    return groups


def _best_threshold(examples: Sequence[Example], probabilities: Sequence[np.ndarray], beta: float = 1.0) -> float:
    grid = np.round(np.arange(0.05, 0.96, 0.05), 2)
    return float(max(grid, key=lambda t: block_f1(examples, probabilities, float(t), beta)))


def load_examples(data_dir: str | Path, max_pages: int | None = None) -> list[Example]:
    """Examples of every set in :data:`DATASETS` (at most ``max_pages`` read per set)."""
    examples: list[Example] = []
    for name in DATASETS:
        for i, ex in enumerate(build_examples(Path(data_dir) / name)):
            if max_pages is not None and i >= max_pages:
                break
            examples.append(ex)
    return examples


def in_vocabulary(examples: Sequence[Example], vocabulary: Vocabulary) -> list[Example]:
    """The examples with the ids outside ``vocabulary`` made unknown, as the labeler sees pages."""
    return [replace(e, features=e.features.in_vocabulary(vocabulary)) for e in examples]


def fit(
    train: Sequence[Example], tune: Sequence[Example], cfg: TrainConfig, log: Callable[[str], None] = print
) -> tuple[BlockModel, list[dict]]:
    """Train a fresh model on ``train``; report the primary set's block F1 on ``tune`` after each epoch."""
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    started = time.perf_counter()
    model = BlockModel(cfg.model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.learning_rate, weight_decay=cfg.weight_decay)
    steps = max(1, cfg.epochs * -(-len(train) // cfg.pages_per_step))
    warmup = max(1, int(steps * cfg.warmup_share))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup)))
    )
    ema = (
        torch.optim.swa_utils.AveragedModel(model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(cfg.ema_decay))
        if cfg.ema_decay > 0
        else None
    )
    shipped = ema.module if ema is not None else model
    rng = random.Random(cfg.seed)
    primary = [e for e in tune if e.dataset == cfg.primary]
    total_weight = max(1.0, sum(float(e.weights.sum()) for e in train))
    history = []
    for epoch in range(cfg.epochs):
        model.train()
        order = list(train)
        rng.shuffle(order)
        total = 0.0
        for i in range(0, len(order), cfg.pages_per_step):
            optimizer.zero_grad()
            batch = order[i : i + cfg.pages_per_step]
            batch_weight = sum(float(e.weights.sum()) for e in batch) or 1.0
            for ex in batch:
                # per page: every page counts the same, as in the page-averaged metrics
                weight_sum = (float(ex.weights.sum()) or 1.0) * len(batch) if cfg.page_normalized else batch_weight
                features, targets, weights = _crop(ex, rng, cfg.token_dropout)
                logits = model(*_tensors(features))
                target = torch.from_numpy(targets)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, target, weight=torch.from_numpy(weights), reduction="sum"
                ) / weight_sum
                loss.backward()
                total += loss.item() * weight_sum
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            if ema is not None:
                ema.update_parameters(model)
        record = {"epoch": epoch + 1, "train_loss": round(total / total_weight, 5)}
        if primary:
            record["tune_block_f1"] = round(block_f1(primary, [predict(shipped, e.features) for e in primary], 0.5), 4)
        history.append(record)
        log(f"epoch {epoch + 1}/{cfg.epochs}: " + ", ".join(f"{k} {v}" for k, v in record.items() if k != "epoch")
            + f" ({time.perf_counter() - started:.0f} s)")  # fmt: skip
    return shipped, history


def fit_members(
    train: Sequence[Example], tune: Sequence[Example], cfg: TrainConfig, log: Callable[[str], None] = print
) -> tuple[BlockModel | BlockModelEnsemble, list[dict]]:
    """:func:`fit` once per member (``cfg.members``, seeds ``cfg.seed`` on); one member is a plain model."""
    if cfg.members < 1:
        raise ValueError(f"members must be at least 1, got {cfg.members}")
    models, history = [], []
    for k in range(cfg.members):
        if cfg.members > 1:
            log(f"member {k + 1}/{cfg.members} (seed {cfg.seed + k})")
        model, records = fit(train, tune, replace(cfg, seed=cfg.seed + k), log)
        models.append(model)
        history.extend({"member": k + 1, **r} if cfg.members > 1 else r for r in records)
    return (models[0] if len(models) == 1 else BlockModelEnsemble(models)), history


def train_block_model(
    data_dir: str | Path,
    out_dir: str | Path,
    config: TrainConfig | None = None,
    log: Callable[[str], None] = print,
    examples: Sequence[Example] | None = None,
    describe: dict | None = None,
) -> dict:
    """Train, export and describe the block model; returns the manifest written to ``out_dir``.

    ``examples``: train on these instead of the shared sets of ``data_dir`` (a teacher's labels,
    :mod:`extract_trt.train.distill`); ``describe``: extra manifest entries (``teacher``, ``datasets``).
    """
    cfg = config or TrainConfig()
    started = time.perf_counter()
    examples = list(examples) if examples is not None else load_examples(data_dir, cfg.max_pages)
    examples = [replace(e, weights=e.weights * np.float32(cfg.dataset_weights[e.dataset])) if e.dataset in cfg.dataset_weights
                else e for e in examples]  # fmt: skip
    parts = {split: [e for e in examples if e.split == split] for split in ("train", "tune", "validation")}
    train, tune, val = parts["train"], parts["tune"], parts["validation"]
    if cfg.train_share < 1.0:  # tune and validation stay whole, so the figures compare with the full recipe's
        train = [e for e in train if in_share(e.domain, cfg.train_share)]
    log(f"examples: {len(train)} train / {len(tune)} tune / {len(val)} validation pages "
        f"({time.perf_counter() - started:.0f} s)")  # fmt: skip
    vocabulary = shared_vocabulary(train, cfg.min_domains)
    log(f"vocabulary: {len(vocabulary)} ids on pages of at least {cfg.min_domains} training domains")
    seen_train, seen_tune = in_vocabulary(train, vocabulary), in_vocabulary(tune, vocabulary)
    model, history = fit_members(seen_train, seen_tune, cfg, log)

    primary_tune = [e for e in seen_tune if e.dataset == cfg.primary] or seen_train
    tune_probs = [predict(model, e.features) for e in primary_tune]
    thresholds = {favor: _best_threshold(primary_tune, tune_probs, beta) for favor, beta in FAVOR_BETAS.items()}
    threshold = thresholds["balanced"]
    tune_f1 = block_f1(primary_tune, tune_probs, threshold)
    if cfg.refit and tune:
        # the same recipe on a quarter more domains; the threshold stays the one tuned above
        log(f"threshold {threshold} (tune block F1 {tune_f1:.4f}); refit on train + tune")
        vocabulary = shared_vocabulary([*train, *tune], cfg.min_domains)
        model, _ = fit_members(in_vocabulary([*train, *tune], vocabulary), [], cfg, log)
    val = in_vocabulary(val, vocabulary)
    val_probs = [predict(model, e.features) for e in val]
    per_set = {
        f"block_f1_{name}": round(block_f1([val[i] for i in idx], [val_probs[i] for i in idx], threshold), 4)
        for name, idx in _by_dataset(val).items()
    }
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sample = (val or in_vocabulary(train[:1], vocabulary))[0].features
    files = export_block_model(model, out, sample=sample, vocabulary=vocabulary)
    manifest = {
        "name": "extract-trt-block-model",
        "feature_version": FEATURE_VERSION,
        "threshold": threshold,
        "thresholds": thresholds,
        "window": WINDOW,
        "overlap": OVERLAP,
        "simplifier": SIMPLIFIER.name,
        "files": files,
        "model": {**cfg.model.as_dict(), "members": cfg.members},
        "training": {**{k: v for k, v in asdict(cfg).items() if k != "model"},
                     "datasets": (describe or {}).get("datasets", list(DATASETS)),
                     "train_pages": len(train), "tune_pages": len(tune), "validation_pages": len(val),
                     "vocabulary_ids": len(vocabulary),
                     "history": history, "tune_block_f1": round(tune_f1, 4),
                     "seconds": round(time.perf_counter() - started, 1)},  # fmt: skip
        # the pages that chose the threshold (and, scored by `extract-trt eval --ids`, compare recipes)
        "tune": {"ids": sorted(e.id for e in tune)},
        "validation": {
            "block_f1": per_set.get(f"block_f1_{cfg.primary}"),  # None: no validation pages
            **per_set,
            "ids": sorted(e.id for e in val),
        },
    }
    if describe and "teacher" in describe:
        manifest["teacher"] = describe["teacher"]
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    (out / MODEL_CARD).write_text(render_model_card(manifest), encoding="utf-8")
    log(f"wrote {out} (threshold {threshold}, validation block F1 {manifest['validation']['block_f1']})")
    return manifest
