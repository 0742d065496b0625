"""Pages rewritten in a Chinese-like script: how much each extractor loses when a page's words are not its
training pages' words and are not separated by spaces.

    python bench/cjk_pages.py [--set wcxb-dev] [--ids VAL_IDS] [-x default -x trafilatura ...]

Issue 26's held-out Chinese news and portal pages are where the built-in model trails readability most, and the
shared sets hold only nine CJK pages. So this bench writes the set's pages as pseudo-Chinese and runs every
extractor on both forms in one run: each Latin word of the page's text (not its markup, attributes, scripts,
styles, comments or entities) and of its ground truth becomes two CJK characters chosen by a stable hash of
the lower-cased word, the spaces between such characters go, and ``. , ? ! : ;`` after one become the
full-width marks. Class names, ids and addresses stay Latin, as on Chinese sites. The characters are rare ones
(U+4E00 onwards by hash), so to the built-in model every word is an unknown word, as most Chinese words are
(its vocabulary holds the ids seen on several training sites). Both forms are scored with a character-bag F1
(:func:`character_f1`: every CJK character a token, every other run of word characters one), which on the
Latin pages is WCXB's word F1.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import zlib
from collections import Counter
from pathlib import Path

from extract_trt.eval import evaluate
from extract_trt.eval.datasets import read_dataset, read_ids
from extract_trt.eval.metrics import bag_f1

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FIRST, CHARACTERS = 0x4E00, 5000  # the CJK characters words are written with: U+4E00 .. U+4E00 + 4999
CJK = "\u4e00-\u9fff"
WORD = re.compile(r"(?<![&#\w])[A-Za-z\u00c0-\u024f]+(?![\w;])")  # not the letters of an entity (&amp; &#x4e;)
SPACE_BETWEEN = re.compile(rf"(?<=[{CJK}])[ \t]+(?=[{CJK}])")
FULL_WIDTH = {".": "\u3002", ",": "\uff0c", "?": "\uff1f", "!": "\uff01", ":": "\uff1a", ";": "\uff1b"}
MARK_AFTER = re.compile(rf"(?<=[{CJK}])([.,?!:;])(?:[ \t]+|(?=\n)|$)")
NOT_TEXT = re.compile(r"(<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>)", re.S | re.I)
TOKEN = re.compile(rf"[{CJK}]|[^\W{CJK}]+")


def _characters(match: re.Match[str]) -> str:
    h = zlib.crc32(match.group(0).lower().encode())
    return chr(FIRST + h % CHARACTERS) + chr(FIRST + h // CHARACTERS % CHARACTERS)


def cjk_text(text: str) -> str:
    """``text`` with each Latin word as two CJK characters, no spaces between them, full-width marks."""
    text = WORD.sub(_characters, text)
    text = MARK_AFTER.sub(lambda m: FULL_WIDTH[m.group(1)], text)
    return SPACE_BETWEEN.sub("", text)


def cjk_html(html: str) -> str:
    """``html`` with its text (what lies between tags, outside scripts, styles and comments) as :func:`cjk_text`."""
    parts = NOT_TEXT.split(html)
    return "".join(part if i % 2 else cjk_text(part) for i, part in enumerate(parts))


def character_f1(prediction: str, reference: str) -> float:
    """F1 of the two bags of tokens (each CJK character, each other run of word characters; lower-cased);
    both empty = 1, one empty = 0 (:func:`~extract_trt.eval.metrics.bag_f1`, as WCXB's word F1)."""
    return bag_f1(*(Counter(TOKEN.findall(s.lower())) for s in (prediction, reference))).f1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="wcxb-dev", help="a shared set whose ground truth is text")
    parser.add_argument("--ids", type=Path, help="only these page ids (e.g. the validation domains')")
    parser.add_argument("-x", "--extractor", action="append", dest="extractors", help="repeat; default: default")
    args = parser.parse_args()
    ids = read_ids(args.ids) if args.ids else None
    records = [r for r in read_dataset(DATA / f"{args.set}.jsonl.gz", ids=ids) if r.groundtruth_format == "text"]
    references = {r.id: r.groundtruth or "" for r in records}
    rewritten = []
    for record in records:
        page = dataclasses.replace(record, id=f"{record.id}#cjk", html=cjk_html(record.html),
                                   groundtruth=cjk_text(record.groundtruth or ""), annotated_html=None)  # fmt: skip
        references[page.id] = page.groundtruth
        rewritten.append(page)
    report = evaluate([*records, *rewritten], args.extractors or ["default"], dataset=args.set, keep_text=True,
                      comments=False)  # fmt: skip
    scores: dict[tuple[str, bool], list[float]] = {}
    for row in report.rows:
        score = character_f1(row.text or "", references[row.id])
        scores.setdefault((row.extractor, row.id.endswith("#cjk")), []).append(score)
    print(f"{len(records)} pages of {args.set}; character-bag F1 as written and in pseudo-Chinese")
    print("| extractor | as written | pseudo-Chinese | change |")
    print("|---|---:|---:|---:|")
    for candidate in report.candidates:
        latin, cjk = (sum(v) / max(len(v), 1) for v in (scores.get((candidate.name, f), []) for f in (False, True)))
        print(f"| {candidate.description} | {latin:.3f} | {cjk:.3f} | {cjk - latin:+.3f} |")


if __name__ == "__main__":
    main()
