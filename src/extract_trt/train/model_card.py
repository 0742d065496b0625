"""``MODEL_CARD.md`` for a trained block-model directory, rendered from its ``block-model.json``.

Written by the trainer next to the weights, so the card always describes the files beside it.
"""

from __future__ import annotations

from typing import Any

from extract_trt.runtime.html.simplify import MINERU_V11, MINERU_V11_WITH_HIDDEN
from extract_trt.runtime.labelers.layout_tables import SKELETON_ROWS

__all__ = ["render_model_card"]

_DATA = {
    "wcxb-dev.jsonl.gz": "WCXB dev split, 1,497 pages of 7 page types, human-reviewed main-content text "
    "(CC-BY-4.0; \"WCXB: A Multi-Type Web Content Extraction Benchmark\", M. Foley, 2026; "
    "github.com/Murrough-Foley/web-content-extraction-benchmark @c039d5e). Labels: ground-truth text "
    "aligned to blocks (extract_trt/train/align.py).",
    "trafilatura-eval.jsonl.gz": "990 pages, mostly German, with must-have/must-not-have snippets "
    "(Apache-2.0; github.com/adbar/trafilatura @e90b0ef tests/evaldata.json). Labels: weak, a block "
    "containing a snippet (extract_trt/train/align.py `snippet_labels`); other blocks carry no loss.",
    "webmainbench-sample.jsonl.gz": "5 WebMainBench pages with `cc-select` element annotations "
    "(Apache-2.0; github.com/opendatalab/WebMainBench @9d991bd). Labels: the annotations.",
    "readability-pages.jsonl.gz": "Mozilla Readability's test pages, news and blog articles of 2008-2020 "
    "(Apache-2.0; github.com/mozilla/readability @ab4027a test/test-pages); the lorem-ipsum ones are left out. "
    "Labels: Readability.js's article-only output aligned to blocks, as WCXB's text.",
}


_WITH_HIDDEN = (" (the reference's blocks, and also those of the elements it drops as invisible: an inline "
                "style such as display:none or opacity:0, a closed <details>)")  # fmt: skip


# The comment convention: applied after the model (extract_trt.runtime.html.comments), the same for every model.
_COMMENTS = """## Reader comments
The model labels main or other; reader comments are a class of their own, decided after it from markup
conventions (`extract_trt/runtime/html/comments.py`), not learned. Blocks inside a comment section (`#comments`,
`.comment-list`/`.commentlist`, `.comments-area`, `#respond`, `#disqus_thread`, `.fb-comments`, schema.org
`Comment`/`UserComments`, `itemprop="comment"`; where no markup names one, a heading that counts the comments
or titles the reply form) are labelled `comment` and left out of the main content;
`Extractor(comments=True)` / `--comments` returns their text separately (`Result.comments`). A forum thread or
Q&A page keeps its posts as main content: a page marked up as schema.org `DiscussionForumPosting`, `QAPage`,
`Question` or `Answer`, posts side by side as separate comment items, or a section without the page's own
content before it or with more of it after. The customer reviews of a page that declares a product (schema.org
`Product`, `og:type` `product`) are comments too; elsewhere a `reviews` container closes any section in it. The
training data follow the same convention: WCXB's ground truth leaves the comments under articles and the
customer reviews of product pages out and keeps the posts of forum threads. No comment label is trained on; the
hand-checked sample (`tests/data/comment_sample.json`: page ids and verdicts only) is drawn from the data sets
above, under their licences.

"""

def _teacher(teacher: dict[str, Any] | None) -> str:
    if not teacher:
        return ""
    soft = (f"soft targets (the teacher's p(main)) on {teacher['soft_label_pages']} of them"
            if teacher.get("soft_label_pages") else "hard labels (its text aligned to blocks)")  # fmt: skip
    mixed = " together with the human-labelled sets above" if teacher.get("mixed_with_human_labels") else ""
    return (
        f"\nDistilled (`extract-trt train --teacher`): teacher `{teacher['name']}` (`{teacher['spec']}`) labelled "
        f"{teacher['labelled_pages']} pages of {', '.join(f'`{p}`' for p in teacher['pages'])} "
        f"({teacher.get('failed_pages', 0)} failed); {soft}; trained{mixed}. Tune and validation figures below are "
        "agreement with the teacher's labels on the tune and validation domains of those pages.\n"
    )


def render_model_card(manifest: dict[str, Any]) -> str:
    m, t, v = manifest["model"], manifest["training"], manifest["validation"]
    simplifier = manifest.get("simplifier", MINERU_V11.name)  # as BlockModelLabeler reads it
    members = m.get("members", 1)
    history = "\n".join(
        f"| {h.get('member', 1)} | {h['epoch']} | {h['train_loss']:.4f} | {h['tune_block_f1']:.4f} |" for h in t["history"]
    )
    ensemble = (
        f" {members} such models, trained alike with seeds {', '.join(str(t['seed'] + k) for k in range(members))}, run as one graph "
        f"over one {members * m['embed_dim']}-dim table (theirs side by side): p(main) is the sigmoid of the mean of "
        "their logits (`BlockModelEnsemble`)."
        if members > 1
        else ""
    )
    refit = (
        f"Then the same recipe is run again on train + tune ({t['train_pages'] + t['tune_pages']} pages) and that model "
        "is shipped with the threshold tuned above."
        if t.get("refit")
        else "The model trained on the train pages is shipped."
    )
    share = ""
    if t.get("train_share", 1.0) < 1:
        share = f"; {t['train_share']:.0%} of the training domains, a learning-curve run"
    data = "\n".join(f"- `{name}`: {_DATA.get(name, '')}" for name in t["datasets"])
    extra = "\n".join(f"- {k}: {val}" for k, val in v.items() if k not in ("ids", "block_f1"))
    thresholds = manifest.get("thresholds", {})
    favors = (
        f"; `BlockModelLabeler(favor=...)`: p >= {thresholds['precision']} favoring precision, p >= "
        f"{thresholds['recall']} favoring recall, the best block F0.5 / F2 there"
        if {"precision", "recall"} <= set(thresholds)
        else ""
    )
    cut = (
        "By default each page is cut at its own threshold: Otsu's split of its blocks' p(main), weighted by "
        f"their text length, kept between {thresholds['recall']} and {thresholds['precision']} (`block_model.page_threshold`; "
        f"a heading over a kept section at {manifest['threshold']}). "
        "With one threshold for every page (`BlockModelLabeler(per_page=False)`): "
        if {"precision", "recall"} <= set(thresholds)
        else ""
    )
    rule = f"main when p >= {manifest['threshold']} (chosen on the tune pages{favors})."
    decision = cut + rule if cut else rule[0].upper() + rule[1:]
    teacher = _teacher(manifest.get("teacher"))
    weights = "".join(f", times {w:g} on `{name}`" for name, w in sorted(t.get("dataset_weights", {}).items()) if w != 1)
    return f"""# extract-trt built-in block model

A small block labeler shipped inside the `extract-trt` wheel: it marks each block of the MinerU-HTML v1.1 /
Pulpie block scheme as main content or not. No download, no GPU; int8 ONNX on one CPU core.
Blocks: simplifier profile `{simplifier}`{_WITH_HIDDEN if simplifier == MINERU_V11_WITH_HIDDEN.name else ''}.

## Data and licences
{data}
{teacher}
Split: by domain (a page without a URL: by its id), CRC32(domain) % 5 == 0 -> validation ({t['validation_pages']} pages, reported only),
== 1 -> tune ({t['tune_pages']} pages: threshold and hyper-parameters), the rest train ({t['train_pages']} pages{share}). The validation page ids are listed in `block-model.json`. The licences (CC-BY-4.0,
Apache-2.0) allow shipping weights trained on the data; CC-BY-4.0 requires the attribution above.

## Features (`extract_trt/runtime/labelers/features.py`, feature version {manifest['feature_version']})
Per block, three hashed bags in one {m['buckets']:,}-row embedding table: text words and word bigrams (every CJK
character a word; any script's punctuation ends a word, any script's digits read as ASCII), character
trigrams of the block's first characters, markup (own tag/class/id tokens,
the nearest ancestors' class/id tokens, path tags) — each id a 24-bit hash; the model's vocabulary is the
{t.get('vocabulary_ids', 0):,} ids found on pages of at least {t.get('min_domains')} training domains, and every
other id becomes the unknown id of its field (words, trigrams, markup): what a single site alone uses — its
class names, its product names — is not learned as itself, and an unseen language reads as unknown words;
plus {m['n_dense']} layout numbers (lengths, words — estimated from the letters in Thai and other scripts written
without spaces —, link density, punctuation and sentence ends of every script, digits, upper case, depth,
position, tag, content type, ancestor-tag flags, repeated structure:
blocks sharing the path and classes and their share of the page's text, repeats of the same text; for each of
the six nearest ancestors, the share of the page's text under it and its link density).

## Architecture (`extract_trt/train/model.py`)
Bags pooled (sum/sqrt(count)) from a {m['embed_dim']}-dim table (markup strings summed once per distinct
string of the page, then added up per block), projected with the layout numbers to width
{m['width']}, a 1-D convolution (kernel {m['conv_kernel']}) over neighbouring blocks, {m['layers']} pre-norm
Transformer encoder layers ({m['heads']} heads) over all blocks of a window ({manifest['window']} blocks,
overlap {manifest['overlap']}), one logit per block.{ensemble} {decision}
Trained on pages as they are; at run time a page's skeleton tables (layout tables of at most
{SKELETON_ROWS} rows: the columns of a site of 2000-2012) are read as the `div`s a page of today would use
(`labelers/layout_tables.py`; `BlockModelLabeler(skeleton_tables=False)`: every table as it is).

Files: `embeddings.npy` (the fp32 table; the labeler sums each bag's rows from it in the features),
`vocabulary.npy` (the vocabulary as a bitmap over the 2^24 hashes, 2 MB), and
the graph from the bag sums on: `model.onnx` (fp32) and `model.int8.onnx` (dynamic int8 MatMuls; the
default), both checked against PyTorch's whole forward pass at export (fp32 logits within 1e-4, int8 labels
agree on >= 97 %).

## Training
`extract-trt train --data ../shared/data -o src/extract_trt/models/block-model` (seed {t['seed']},
{t['epochs']} epochs, {t['pages_per_step']} pages per step, AdamW lr {t['learning_rate']}, weight decay
{t['weight_decay']}, token dropout {t['token_dropout']}, exponential moving average of the weights (decay
{t.get('ema_decay', 0)}) shipped, {t['threads']} thread; took {t['seconds']:.0f} s on the build machine). Loss: binary
cross-entropy per block, weighted 1 + log(1 + words){weights}; blocks without words carry no loss. The threshold is
the one with the best block F1 on the tune pages ({t.get('tune_block_f1', '-')} there). {refit}

{_COMMENTS}## Validation (domains never seen in training)
Block F1 (word-weighted, mean over pages): {v['block_f1']}
{extra}

| member | epoch | train loss | tune block F1 (p >= 0.5; the run on train only) |
|---|---|---|---|
{history}

End-to-end figures (WCXB word F1, ROUGE-5, per page type, against peers) are in the repository's
BENCHMARKS.md with the commands that produce them.
"""
