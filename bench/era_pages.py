"""The same pages written the way sites of 2005-2012 wrote them: how much each extractor's quality moves.

    python bench/era_pages.py [--set trafilatura-eval] [--ids VAL_IDS] [-x default -x trafilatura ...]

Each page is scored in four forms, every extractor on the same pages in one run:

* ``as is``;
* ``reparsed``: parsed with lxml and written back, nothing changed (the control: lxml repairs broken
  markup its own way, and the forms below are written by it);
* ``html4``: HTML5's sectioning elements (``article main section nav header footer aside figure
  figcaption hgroup``) made ``div``s, ``role`` attributes dropped — no landmark left to read, and a
  ``<nav>`` menu is text like any other, as on pages written before 2010;
* ``tables``: ``html4``, and then every ``div`` within six levels of ``<body>`` that holds two or more
  ``div``s made a one-row layout table, its ``div`` children cells (its other children wrapped in cells).

The text, and so the ground truth, stays the same; only the markup around it changes. A page laid out with
tables is what the held-out news sets of 2010 and 2012 are made of (issue 26), and the shared sets hold
few of them (35 of 2,617 pages hold half their text in layout-table cells). The scores of a perfect
labeler hardly move (the ground truth aligned to the blocks, wcxb-dev tune pages: 0.989 as is, 0.985 reparsed,
0.989 html4, 0.989 tables): what an extractor loses here it loses by reading the markup, not because the blocks
no longer allow the content. The control's loss is lxml's own tree building: an element libxml2 leaves open
where an HTML5 parser closes it can take the rest of the page into a menu.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import lxml.html
from lxml import etree

from extract_trt.eval import evaluate
from extract_trt.eval.datasets import EvalRecord, read_dataset, read_ids

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SECTIONING = frozenset(
    {"article", "main", "section", "nav", "header", "footer", "aside", "figure", "figcaption", "hgroup"}
)
LAYOUT_DEPTH = 6  # how far below <body> a div becomes a layout table (page columns, not a story's boxes)
FORMS = ("as is", "reparsed", "html4", "tables")
# An HTML5 parser reads on past a </body> or </html> met before the page's end (pages close them early and go
# on: a theme's header template ending in them), and puts what follows in the body; libxml2 drops what follows
# </html>, and would take the text of such a page out of every rewritten form. Without them lxml reads the
# rest into the body as a browser does.
EARLY_CLOSE = re.compile(r"</(?:body|html)\s*>", re.IGNORECASE)


def _depth_below_body(element: etree._Element) -> int | None:
    depth = 0
    while element is not None and element.tag != "body":
        element, depth = element.getparent(), depth + 1
    return None if element is None else depth


def _as_layout_table(div: etree._Element, layout: set[etree._Element]) -> None:
    """``div`` as a one-row table: its ``div`` children become cells, its other children and text are wrapped
    in cells of their own. A child that becomes a table itself is wrapped too: a table straight inside a row
    is no cell, and a parser moves it out of the table (foster parenting), which would scramble the page."""
    children, text = list(div), div.text
    div.text = None
    for child in children:
        div.remove(child)
    row = etree.SubElement(etree.SubElement(div, "tbody"), "tr")
    if text and text.strip():
        etree.SubElement(row, "td").text = text
    for child in children:
        if not isinstance(child.tag, str):  # a comment or processing instruction
            continue
        if child.tag == "div" and child not in layout:
            tail = child.tail
            child.tag = "td"
            row.append(child)
            if tail and tail.strip():  # text straight in a row is moved out of the table too
                child.tail = None
                etree.SubElement(row, "td").text = tail
        else:
            etree.SubElement(row, "td").append(child)  # its tail text goes along
    div.tag = "table"


def rewrite(html: str, form: str) -> str:
    """``html`` in one of :data:`FORMS` (the page as it is when lxml cannot parse it)."""
    if form == "as is":
        return html
    try:
        root = lxml.html.document_fromstring(EARLY_CLOSE.sub("", html))
    except (etree.ParserError, ValueError):
        return html
    if form in ("html4", "tables"):
        for element in root.iter():
            if isinstance(element.tag, str):
                if element.tag in SECTIONING:
                    element.tag = "div"
                element.attrib.pop("role", None)
    if form == "tables":
        body = root.find(".//body")
        layout = [] if body is None else [
            div for div in body.iter("div")
            if sum(isinstance(c.tag, str) and c.tag == "div" for c in div) >= 2
            and (_depth_below_body(div) or LAYOUT_DEPTH + 1) <= LAYOUT_DEPTH
        ]  # fmt: skip
        tables = set(layout)
        for div in layout:
            _as_layout_table(div, tables)
    return lxml.html.tostring(root, encoding="unicode")


def _headline(summary: dict) -> str:
    if summary.get("word_f1") is not None:
        return f"{summary['word_f1']:.3f}"
    return f"{summary['snippets_with']:.3f} / {summary['snippets_without']:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="trafilatura-eval")
    ap.add_argument("--ids", help="a file of page ids, one per line (e.g. the model's validation ids)")
    ap.add_argument("--pages", type=int, default=None)
    ap.add_argument("-x", "--extractor", action="append", dest="extractors")
    args = ap.parse_args()
    extractors = args.extractors or ["default", "trafilatura", "readability"]
    ids = read_ids(args.ids) if args.ids else None
    records: list[EvalRecord] = list(read_dataset(DATA / f"{args.set}.jsonl.gz", ids=ids, limit=args.pages))
    scores: dict[str, dict[str, str]] = {}
    for form in FORMS:
        pages = [dataclasses.replace(r, html=rewrite(r.html, form)) for r in records]
        for name, summary in evaluate(pages, extractors, dataset=args.set, comments=False).summary().items():
            scores.setdefault(name, {})[form] = _headline(summary)
    measure = "word F1" if records and records[0].groundtruth_format != "snippets" else "`with` found / `without` kept"
    print(f"{len(records)} pages of {args.set}; {measure}; comments left out by every extractor with a switch\n")
    print("| extractor | " + " | ".join(FORMS) + " |")
    print("|---|" + "---:|" * len(FORMS))
    for name, by_form in scores.items():
        print(f"| {name} | " + " | ".join(by_form.get(f, "–") for f in FORMS) + " |")


if __name__ == "__main__":
    main()
