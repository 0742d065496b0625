"""The toolbars, share rows, polls, headline lists and search boxes of 2005-2015 news sites, written into the
body of article pages: how often each extractor keeps them.

    python bench/article_widgets.py [--set wcxb-dev] [--ids VAL_IDS] [-x default -x trafilatura ...]

Issue 26 found such widgets among what the built-in model keeps on held-out news pages of 2010 ("Font size:
Decrease Increase", "Email article", "Latest headlines", polls, a site search box). The shared sets' pages are
mostly of the 2020s and hold few of them, so this bench puts them there: each widget of :data:`WIDGETS` (made up
here, in English, as sites of that time wrote them) goes into each article page of the set alone, once just
before the first paragraph of the story's body and once just after its last (a ``<p>`` holding 200 or more
characters of text before its first tag: the body's flow), and the page is extracted by every extractor in one
run. A widget counts as kept when its probe phrase is in the output. The same pages without widgets are scored
too, and their word F1 is printed beside the kept shares: what an extractor keeps of a widget it would, by the
ground truth, drop.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

from extract_trt.eval import evaluate
from extract_trt.eval.datasets import EvalRecord, read_dataset, read_ids

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# name: (the widget's HTML, a phrase of it that only it holds)
WIDGETS = {
    "font size": ('<div class="tools"><span>Font size:</span> <a href="#">Decrease</a> <a href="#">Increase</a></div>',
                  "Decrease Increase"),
    "email / print": ('<ul class="article-tools"><li><a href="/email">Email article</a></li>'
                      '<li><a href="/print">Print article</a></li></ul>', "Print article"),
    "bookmark row": ('<div class="bookmark">Bookmark with: <a href="#">Delicious</a> <a href="#">Digg</a> '
                     '<a href="#">reddit</a> <a href="#">StumbleUpon</a></div>', "StumbleUpon"),
    "share list": ('<ul><li><a href="#">Delicious</a></li><li><a href="#">Digg</a></li><li><a href="#">reddit</a></li>'
                   '<li><a href="#">StumbleUpon</a></li></ul>', "StumbleUpon"),
    "tags": ('<div class="tags">Tags: <a href="#">politics</a>, <a href="#">council</a>, <a href="#">budget</a>, '
             '<a href="#">schools</a></div>', "schools"),
    "section menu": ('<div><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a> '
                     '<a href="/weather">Weather</a></div>', "Weather"),
    "poll": ('<div class="poll"><h3>Poll</h3><p>Do you think the council made the right decision?</p><form>'
             '<input type="radio" name="v"> Yes <input type="radio" name="v"> No <input type="submit" value="Vote">'
             '</form></div>', "council made the right decision"),
    "latest headlines": ('<div class="latest"><h3>Latest headlines</h3><ul><li><a href="/a1">Man arrested after '
                         'late-night break-in at city pharmacy</a></li><li><a href="/a2">School board approves new '
                         'budget despite protests</a></li></ul></div>', "late-night break-in"),
    "search box": ('<form class="search" action="/search"><label>Search this site</label> <input type="text" name="q"> '
                   '<input type="submit" value="Go"></form>', "Search this site"),
}  # fmt: skip
PLACES = ("before the body", "after the body")
BODY_PARAGRAPH = re.compile(r"<p[\s>][^<]{200,}", re.IGNORECASE)
PARAGRAPH_END = re.compile("</p>", re.IGNORECASE)


def body_edges(html: str) -> dict[str, int]:
    """Where each of :data:`PLACES` lies in ``html``: the offset of the body's first long paragraph and the one
    after its last paragraph's end tag (left out when it has none); empty for a page whose body holds fewer than
    three long paragraphs (no body flow to put a widget in)."""
    paragraphs = list(BODY_PARAGRAPH.finditer(html))
    if len(paragraphs) < 3:
        return {}
    edges = {PLACES[0]: paragraphs[0].start()}
    if close := PARAGRAPH_END.search(html, paragraphs[-1].start()):
        edges[PLACES[1]] = close.end()
    return edges


def with_widget(html: str, widget: str, at: int) -> str:
    """``html`` with the widget named ``widget`` put in at offset ``at`` (one of :func:`body_edges`)."""
    return html[:at] + WIDGETS[widget][0] + html[at:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="wcxb-dev", help="a shared set (its article pages, where it types them)")
    parser.add_argument("--ids", type=Path, help="only these page ids (e.g. the validation domains')")
    parser.add_argument("-x", "--extractor", action="append", dest="extractors", help="repeat; default: default")
    args = parser.parse_args()
    records = list(read_dataset(DATA / f"{args.set}.jsonl.gz"))
    if args.ids:
        wanted = read_ids(args.ids)
        records = [r for r in records if r.id in wanted]
    records = [r for r in records if (r.meta or {}).get("page_type", "article") == "article"]
    originals, pages, probes = [], [], {}
    for record in records:
        edges = body_edges(record.html)
        if edges:
            originals.append(record)
        for widget in WIDGETS:
            for place, at in edges.items():
                page_id = f"{record.id}#{widget}@{place}"
                pages.append(dataclasses.replace(record, id=page_id, html=with_widget(record.html, widget, at)))
                probes[page_id] = (widget, place)
    report = evaluate([*originals, *pages], args.extractors or ["default"], dataset=args.set, keep_text=True,
                      comments=False)  # fmt: skip
    names = [c.name for c in report.candidates]
    kept: dict[tuple[str, str, str], list[bool]] = {}
    f1: dict[str, list[float]] = {name: [] for name in names}
    for row in report.rows:
        if row.id in probes:
            widget, place = probes[row.id]
            kept.setdefault((row.extractor, widget, place), []).append(WIDGETS[widget][1] in (row.text or ""))
        elif (value := row.value("word_f1")) is not None:
            f1[row.extractor].append(value)
    print(f"{len(originals)} article pages of {args.set}; the share that keep each widget, before / after the body")
    print("| widget | " + " | ".join(names) + " |")
    print("|---" * (1 + len(names)) + "|")
    for widget in WIDGETS:
        shares = ((kept.get((name, widget, place)) or [False] for place in PLACES) for name in names)
        cells = (" / ".join(f"{sum(v) / len(v):.2f}" for v in per_place) for per_place in shares)
        print(f"| {widget} | " + " | ".join(cells) + " |")
    scores = (f"{sum(f1[name]) / max(len(f1[name]), 1):.3f}" for name in names)
    print("| word F1, the pages without widgets | " + " | ".join(scores) + " |")


if __name__ == "__main__":
    main()
