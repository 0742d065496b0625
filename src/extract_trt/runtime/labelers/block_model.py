"""The built-in block model as a :class:`~extract_trt.runtime.labelers.Labeler` (ONNX Runtime, CPU).

The model ships inside the package (``extract_trt/models/block-model/``: ``model.int8.onnx``,
``model.onnx``, ``embeddings.npy``, ``vocabulary.npy``, ``block-model.json`` and its model card). It
labels all blocks of a page in one forward pass from the features of :mod:`extract_trt.runtime.labelers.features`:
the hashed ids outside the model's vocabulary become unknown ids, and all are
summed per bag from the embedding table (:meth:`BlockFeatures.bag_sums`, a C loop in the compiled build),
and the ONNX graph takes those sums and the layout numbers to the logits. Pages longer than ``WINDOW`` blocks are
cut into overlapping windows and each block takes its prediction from the window where it is furthest
from an edge. A block is main when p(main) reaches the page's threshold, its text is not that of an
earlier main block (:func:`drop_repeats`); script source shown as text and filler
(:mod:`~extract_trt.runtime.labelers.script_text`) get p(main) 0 before the page is cut; the pieces of a paragraph that the block scheme split
take one label (:mod:`~extract_trt.runtime.labelers.paragraphs`), and so do the items of a list the model mostly
kept (:mod:`~extract_trt.runtime.labelers.list_items`). The balanced labeler cuts each page where its own
p(main) falls apart (:func:`page_threshold`, within the model's recall- and precision-favoring
thresholds; half as high on a page with code, :func:`code_page_cut`); the precision- and recall-favoring
ones, and a threshold given, cut every page at one p(main) chosen at training time (one per :data:`FAVORS`).

One CPU thread per session: a page is a few milliseconds of small matrix products, too little to split
across threads; scale out with worker processes instead. Defaults: int8 weights, ORT's full
graph optimisation. (Not ``session.set_denormal_as_zero``: it sets the calling thread's flush-to-zero
mode, which would change every float computation of the host process after the first page.)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import onnxruntime as ort

from extract_trt.errors import LabelerError
from extract_trt.runtime.html.simplify import MINERU_V11, SimplifyProfile
from extract_trt.runtime.html.simplify_v1 import simplify_profile
from extract_trt.runtime.labelers.features import BUCKETS, N_DENSE, BlockFeatures, Vocabulary, page_features, windows
from extract_trt.runtime.labelers.layout_tables import skeleton_tables_as_divs
from extract_trt.runtime.labelers.list_items import join_list_items
from extract_trt.runtime.labelers.paragraphs import join_code_lines, join_paragraph_pieces, pre_elements
from extract_trt.runtime.labelers.script_text import not_content
from extract_trt.runtime.types import HEADING_TAGS, Labels, PageBlocks

__all__ = [
    "FAVORS", "BlockModelLabeler", "ModelLoadError", "code_page_cut", "default_model_dir", "drop_repeats",
    "drop_trailing_headings", "keep_section_headings", "onnx_inputs", "page_threshold",
]  # fmt: skip

# bump when runtime/labelers/features.py changes what a model sees (4: norms input, 5: containers, 6: 24-bit ids
# and a vocabulary). Not bumped for other scripts' punctuation, digits and unspaced words (2026-12-05): Latin and
# CJK text reads as before, so a version-6 model sees its training pages as it was trained on them.
FEATURE_VERSION = 6
MANIFEST = "block-model.json"
MODEL_FILES = {"fp32": "model.onnx", "int8": "model.int8.onnx"}
EMBEDDINGS = "embeddings.npy"  # the hashed embedding table, float32 [BUCKETS, embed_dim]
VOCABULARY = "vocabulary.npy"  # the ids the model knows: Vocabulary.bits
INPUTS = ("sums", "dense", "markup", "norms")
# blocks per forward pass. The model trains on crops of 512 blocks (trainer.CROP), yet labels a longer page
# better seen whole: on the tune pages of 512-1024 blocks, block F1 rose 0.03-0.04 against 512-block windows
# (four seeds), and one window of 1024 costs no more than the two of 512 it replaces (2048 cost 30 % more
# on such pages, for a gain on pages too rare here to measure).
WINDOW = 1024
OVERLAP = 64
# Decision thresholds stored with a model (``thresholds`` in its manifest), each chosen on the tune pages:
# the best block F1, F0.5 (fewer boilerplate words kept, more content lost) and F2 (the other way round).
FAVORS = ("balanced", "precision", "recall")
# A main block whose text (case and spacing aside) is that of an earlier main block, at least this long, is
# dropped as a copy: pages ship content twice for two layouts (a mobile and a desktop variant, one of them
# hidden; the block scheme keeps both), or repeat a teaser or a note in several widgets or tabs. The model
# sees each copy alone and keeps both; ground truths mostly have the text once (not always: gains and losses
# are in BENCHMARKS.md). Shorter texts ("Read more", "$19.99") repeat in content itself; 25-80 gave the same
# tune figures.
REPEAT_MIN_CHARS = 40


class ModelLoadError(LabelerError):
    """A block-model directory is missing, incomplete, or made for other features."""


def onnx_inputs(features: BlockFeatures, table: np.ndarray) -> dict[str, np.ndarray]:
    """The graph's inputs for ``features`` (one window), their bags summed from ``table``."""
    return {"sums": features.bag_sums(table), "dense": features.dense, "markup": features.markup,
            "norms": features.norms()}  # fmt: skip


def drop_repeats(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """``main`` with every main block whose text repeats an earlier main block's (at least
    :data:`REPEAT_MIN_CHARS` characters, compared lower-cased with whitespace collapsed) made other."""
    kept = main.copy()
    seen: set[str] = set()
    for i in np.flatnonzero(main):
        text = page.blocks[i].text
        if len(text) < REPEAT_MIN_CHARS:
            continue
        key = " ".join(text.lower().split())
        if key in seen:
            kept[i] = False
        else:
            seen.add(key)
    return kept


def page_threshold(probability: np.ndarray, weights: np.ndarray, low: float, high: float) -> float:
    """A page's own cut of p(main): Otsu's threshold over its blocks' p(main), each block weighted by
    ``weights`` (its text length), clipped to ``[low, high]``.

    Otsu's cut splits the blocks into the two groups of most alike p(main) (the greatest weighted variance
    between the groups). One threshold for every page keeps a page's boilerplate that the model scored
    just above it, though on that page the content sat far higher; the page's own gap between content and
    the rest is the better place to cut. The clip keeps a page that is all content, or all boilerplate,
    from being cut inside its one group. Pages with fewer than two distinct values get ``low``.
    """
    order = np.argsort(probability, kind="stable")
    p = probability[order].astype(np.float64)
    w = weights[order].astype(np.float64)
    below = np.cumsum(w)[:-1]  # weight of the blocks up to each possible cut
    above = float(w.sum()) - below
    sum_below = np.cumsum(w * p)[:-1]
    valid = (below > 0) & (above > 0) & (p[1:] > p[:-1])  # a cut between two distinct values
    if not valid.any():
        return low
    mean_below = sum_below / np.maximum(below, 1e-12)
    mean_above = (float((w * p).sum()) - sum_below) / np.maximum(above, 1e-12)
    between = np.where(valid, below * above * (mean_above - mean_below) ** 2, -1.0)
    k = int(between.argmax())
    return float(min(max((p[k] + p[k + 1]) / 2, low), high))


# A heading's section starts at the next block of at least this many characters (Readability's shortest
# paragraph): the toolbars, dates and "Share" buttons between a title and its text are not the section.
SECTION_TEXT_CHARS = 25
# Headings after a page's last kept paragraph go when the kept text before them is at least this long (about
# 40 English words). Chosen on the tune pages: with no floor, landing pages whose content is headlines over
# cards lost them; a floor of 80 words left more news pages' trailing headings in.
TRAILING_MIN_CHARS = 240
# ... unless those headings hold at least this share of the kept text's characters. Chosen on the tune pages (0.25,
# 0.5 and 1.0: 0.5 and 0.25 alike, 1.0 spared no page there), then checked on the train pages (2 up, none down).
TRAILING_HEADINGS_SHARE = 0.5
MAX_LABEL_CHARS = 100  # a block that ends in a colon and is shorter introduces what follows it ("Tags:", "分享到：")
# A page with at least this many code blocks (``pre`` elements: documentation, a Q&A thread, a tutorial) is cut
# at this share of its own cut, not below the recall threshold: see :func:`code_page_cut`.
CODE_PAGE_CODE_BLOCKS = 2
CODE_PAGE_CUT_SHARE = 0.5


def code_page_cut(page: PageBlocks, threshold: float, low: float) -> float:
    """The page's cut, lowered to :data:`CODE_PAGE_CUT_SHARE` of itself (not below ``low``, the recall
    threshold) when the page holds :data:`CODE_PAGE_CODE_BLOCKS` or more code blocks (``pre`` elements, whether
    a snippet is one block or an editor wrapped each of its lines in an element of its own:
    :func:`~extract_trt.runtime.labelers.paragraphs.pre_elements`). On such pages the model scores the content
    lower than on an article — the training pages' ground truths disagree about code (many articles leave it
    out) and technical prose is rarer in them — so the page's own cut, which sits in the gap between its
    groups, falls inside the content: snippets and the sentences around them go, the navigation stays out
    either way. Chosen on the tune pages (train-only models, seeds 13 / 7): documentation +0.014 / +0.021 word
    F1, forum pages +0.001 / +0.004, articles ±0.0003, trafilatura-eval and readability-pages unchanged (news
    pages rarely hold two ``pre`` blocks); one ``pre`` block or four, and a share of 0.35 or 0.65 did about as
    well. Snippets wrapped line by line count since 2026-12-04 (before, only ``pre`` blocks did): the 18 tune
    pages with two or more ``pre`` blocks score 0.935 as they are, and with each line of each ``pre`` wrapped in
    a ``div`` 0.921 counting ``pre`` blocks, 0.942 counting code blocks."""
    if pre_elements(page, CODE_PAGE_CODE_BLOCKS) >= CODE_PAGE_CODE_BLOCKS:
        return max(low, threshold * CODE_PAGE_CUT_SHARE)
    return threshold


def keep_section_headings(page: PageBlocks, probability: np.ndarray, main: np.ndarray, threshold: float) -> np.ndarray:
    """``main`` plus every heading with p(main) >= ``threshold`` whose next paragraph (the next block of at
    least :data:`SECTION_TEXT_CHARS` characters) is main: a heading belongs to the section under it. A
    page's own cut (:func:`page_threshold`) sits in the gap of its long blocks' p(main), and a short heading
    the model scored between the groups (a title, "Side effects") would fall below it while its section
    stays."""
    kept = main.copy()
    blocks = page.blocks
    following_main = False  # whether the next paragraph (after the block looked at) is main
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].tag in HEADING_TAGS and not main[i] and following_main and probability[i] >= threshold:
            kept[i] = True
        if len(blocks[i].text.strip()) >= SECTION_TEXT_CHARS:
            following_main = bool(kept[i])
    return kept


def drop_trailing_headings(page: PageBlocks, main: np.ndarray) -> np.ndarray:
    """``main`` without the headings after its last main block of text, nor the short labels ending in a
    colon just before them ("Read more:", "Tags:"), when the main text holds at least
    :data:`TRAILING_MIN_CHARS` characters: nothing under such a heading or label was kept, so it introduces a
    section the page's cut left out ("Related articles", "Latest headlines", "Comments", a newsletter box),
    and a reader never wants a document that ends in a title. A page with less main text than that (a
    landing page of headlines over cards, a product tile) keeps them, and so does a page whose trailing headings
    hold at least :data:`TRAILING_HEADINGS_SHARE` of the main text's characters: those are a listing's entries
    (a recipe category's card titles after its intro), where a section's heading or two would be short."""
    blocks = page.blocks
    text_blocks = [i for i in np.flatnonzero(main) if blocks[i].tag not in HEADING_TAGS and blocks[i].text.strip()]
    text_chars = sum(len(blocks[i].text) for i in text_blocks)
    if text_chars < TRAILING_MIN_CHARS:
        return main
    after = text_blocks[-1] + 1
    if sum(len(blocks[i].text) for i in np.flatnonzero(main[after:]) + after) >= TRAILING_HEADINGS_SHARE * text_chars:
        return main  # a listing's titles, not a section's heading or two
    kept = main.copy()
    while len(text_blocks) > 1 and _is_label(blocks[text_blocks[-1]].text):
        kept[text_blocks.pop()] = False
    for i in range(text_blocks[-1] + 1, len(blocks)):
        if blocks[i].tag in HEADING_TAGS:
            kept[i] = False
    return kept


def _is_label(text: str) -> bool:
    text = text.strip()
    return text.endswith((":", "\uff1a")) and len(text) < MAX_LABEL_CHARS  # and the CJK full-width colon


def _profile(name: str) -> SimplifyProfile:
    try:
        return simplify_profile(name)
    except ValueError as exc:
        raise ModelLoadError(f"the model was trained on blocks of an unknown simplifier: {exc}") from None


def default_model_dir() -> Path:
    """The model directory shipped in the package."""
    return Path(str(resources.files("extract_trt") / "models" / "block-model"))


class BlockModelLabeler:
    """Labels blocks with the built-in block model (or another directory written by ``extract-trt train``).

    Args:
        model_dir: a directory with ``block-model.json`` and the ONNX files; default: the shipped model.
        precision: ``"int8"`` (default, smaller and faster) or ``"fp32"``.
        favor: which of the model's stored thresholds to use (:data:`FAVORS`): ``"balanced"`` (default),
            ``"precision"`` (less boilerplate, for corpora where noise costs more than a lost paragraph;
            trafilatura's ``favor_precision``) or ``"recall"`` (keeps more, e.g. for RAG indexes).
        threshold: a p(main) threshold of your own instead (overrides ``favor``).
        keep_repeats: keep main blocks that repeat an earlier main block's text (default: dropped,
            :func:`drop_repeats`).
        per_page: with ``favor="balanced"`` and no ``threshold``, cut each page at its own threshold
            (:func:`page_threshold`, between the model's recall- and precision-favoring thresholds; the
            default); ``False``: at the balanced threshold, the same on every page.
        skeleton_tables: read a page's skeleton tables (layout tables of a few rows: the columns of a site of
            2000-2012) as ``div``s (default; :mod:`~extract_trt.runtime.labelers.layout_tables`); ``False``:
            every table as it is, as the model was trained.
        list_items: keep every block of one shape in the items of one list when the model kept at least half of
            them (default; :mod:`~extract_trt.runtime.labelers.list_items`); ``False``: as the model labelled them.
    """

    name = "block-model"
    # One forward pass per page anyway; batching pages would only keep more page trees alive (measured:
    # 16 at a time cost ~0.5 ms per page of extra garbage collection, ~3 % of the pipeline).
    pages_per_call = 1

    def __init__(
        self,
        model_dir: str | Path | None = None,
        precision: str = "int8",
        threshold: float | None = None,
        favor: str = "balanced",
        keep_repeats: bool = False,
        per_page: bool = True,
        skeleton_tables: bool = True,
        list_items: bool = True,
    ) -> None:
        if favor not in FAVORS:
            raise ModelLoadError(f"favor must be one of {', '.join(FAVORS)}, got {favor!r}")
        directory = Path(model_dir) if model_dir is not None else default_model_dir()
        manifest_path = directory / MANIFEST
        if not manifest_path.is_file():
            raise ModelLoadError(f"no {MANIFEST} in {directory}: not a block-model directory")
        self.manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if self.manifest.get("feature_version") != FEATURE_VERSION:
            raise ModelLoadError(
                f"{directory} was trained on feature version {self.manifest.get('feature_version')}, "
                f"this extract-trt computes version {FEATURE_VERSION}: retrain it with `extract-trt train`"
            )
        expected = {"n_dense": N_DENSE, "buckets": BUCKETS}
        found = {k: self.manifest.get("model", {}).get(k) for k in expected}
        if found != expected:
            raise ModelLoadError(
                f"{directory} expects features {found}, this extract-trt computes {expected}: the features "
                "changed without a new FEATURE_VERSION; retrain it with `extract-trt train`"
            )
        if precision not in MODEL_FILES:
            raise ModelLoadError(f"precision must be one of {sorted(MODEL_FILES)}, got {precision!r}")
        files = self.manifest.get("files", {})
        unlisted = [role for role in (precision, "embeddings", "vocabulary") if role not in files]
        if unlisted:
            raise ModelLoadError(
                f"{manifest_path} lists no {', '.join(unlisted)} file: retrain it with `extract-trt train`"
            )
        model_path, table_path = directory / files[precision], directory / files["embeddings"]
        vocabulary_path = directory / files["vocabulary"]
        for path in (model_path, table_path, vocabulary_path):
            if not path.is_file():
                raise ModelLoadError(f"missing model file {path}")
        # mapped, not read: worker processes on one machine share the files' pages instead of a copy each
        self.table = np.ascontiguousarray(np.load(table_path, mmap_mode="r"), dtype=np.float32)
        # an ensemble's members have their tables side by side (models written before the field: one member)
        spec = self.manifest.get("model", {})
        width = spec.get("embed_dim", 0) * spec.get("members", 1)
        if self.table.shape != (BUCKETS, width):
            raise ModelLoadError(
                f"{table_path} holds a {self.table.shape} table, the manifest says ({BUCKETS}, {width})"
            )
        try:
            self.vocabulary = Vocabulary(np.asarray(np.load(vocabulary_path, mmap_mode="r")))  # a plain view
        except ValueError as e:
            raise ModelLoadError(f"{vocabulary_path}: {e}") from None
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # see the module docstring
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        stored = self.manifest.get("thresholds") or {"balanced": self.manifest["threshold"]}
        if threshold is None and favor not in stored:
            raise ModelLoadError(f"{directory} stores no threshold favoring {favor} (retrain it with `extract-trt train`)")
        self.threshold = float(threshold if threshold is not None else stored[favor])
        # (low, high) of the per-page threshold; None: every page at self.threshold (models stored before the
        # favoring thresholds have no range)
        self.page_range: tuple[float, float] | None = None
        if per_page and threshold is None and favor == "balanced" and {"recall", "precision"} <= stored.keys():
            self.page_range = (float(stored["recall"]), float(stored["precision"]))
        if favor != "balanced" or not per_page:  # get_labeler's names: one threshold for every page
            self.name = f"block-model-{favor}"
        self.keep_repeats = keep_repeats
        self.skeleton_tables = skeleton_tables
        self.list_items = list_items
        self.window = int(self.manifest.get("window", WINDOW))
        self.overlap = int(self.manifest.get("overlap", OVERLAP))
        # the block scheme the model was trained on (models written before the field: the reference's)
        self.simplify_profile = _profile(self.manifest.get("simplifier", MINERU_V11.name))

    def probabilities(self, page: PageBlocks) -> np.ndarray:
        """p(main) per block of ``page``, float32."""
        if not len(page):
            return np.zeros(0, dtype=np.float32)
        seen = skeleton_tables_as_divs(page) if self.skeleton_tables else page
        features = page_features(seen).in_vocabulary(self.vocabulary)
        logits = np.zeros(features.n_blocks, dtype=np.float32)
        for start, stop, keep_from, keep_to in windows(features.n_blocks, self.window, self.overlap):
            out = self.session.run(None, onnx_inputs(features.window(start, stop), self.table))[0]
            logits[keep_from:keep_to] = out[keep_from - start : keep_to - start]
        return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)

    def label(self, pages: Sequence[PageBlocks]) -> list[Labels]:
        out = []
        # no cut of any page is lower: blocks scored below it are not looked at for not_content
        lowest = self.threshold if self.page_range is None else min(self.threshold, self.page_range[0])
        for page in pages:
            prob = self.probabilities(page)
            never = not_content(page, prob >= lowest)
            if never.any():
                prob = np.where(never, np.float32(0.0), prob)
            threshold = self.threshold
            if self.page_range is not None and len(prob):
                lengths = np.fromiter((len(b.text) for b in page.blocks), dtype=np.float64, count=len(prob))
                threshold = page_threshold(prob, 1.0 + lengths, *self.page_range)
                threshold = code_page_cut(page, threshold, self.page_range[0])
            main = (prob >= threshold) & ~never
            if threshold > self.threshold:
                main = keep_section_headings(page, prob, main, self.threshold)
            main = join_paragraph_pieces(page, main)
            if self.list_items:
                main = join_list_items(page, main)
            if not self.keep_repeats:
                main = drop_repeats(page, main)
            # last: a code block split at <br> is one paragraph and took its majority above; lines wrapped in
            # elements of their own are not pieces, and a repeated line is no reason to cut one out of a snippet
            main = join_code_lines(page, main)
            main = drop_trailing_headings(page, main)
            out.append(Labels(main=main, labeler=self.name, probability=prob, threshold=threshold))
        return out
