"""Hostile pages: limits with clear error records, block-id injection, malformed and pathological markup.

Every hostile page of ``hostile_pages.py`` goes through the whole pipeline; the properties are the same
as the fuzzer's (``scripts/fuzz.py``): one result, labels = blocks, output text taken from the input,
no active content in the main HTML.
"""

from __future__ import annotations

import json
import re
import signal
import threading

import pytest

from extract_trt import Extractor
from extract_trt.errors import TimeBudgetExceededError
from extract_trt.runtime import limits
from extract_trt.runtime.html.sanitize import active_content
from extract_trt.runtime.html.simplify import simplify
from extract_trt.runtime.labelers.annotation import AnnotationLabeler
from extract_trt.runtime.limits import check_nesting, parser_work, run_within

from hostile_pages import INJECTIONS, MALFORMED, SHAPES, AllMain, hostile_pages, in_page, item_ids, text_is_from_input

EXTRACTOR = Extractor(labeler=AllMain(), output=("html", "markdown", "text"))
# 40,000 paragraphs (0.6 MB): about 0.25 s to decode and simplify, well past the budgets the tests set.
SLOW_PAGE = "<div>" + "<p>word word</p>" * 40_000


def neighbours(page: object) -> list[dict]:
    return [
        {"id": "before", "html": in_page("")},
        {"id": "hostile", "html": page},
        {"id": "after", "html": in_page("")},
    ]


def assert_sound(html: str, result) -> None:
    """The fuzzer's properties for one result."""
    if result.error is not None:
        assert re.match(r"^[A-Za-z]+Error: \S", result.error) and result.main_html == "" and result.labels == []
        return
    assert len(result.labels) == result.n_blocks
    assert text_is_from_input(html, result.text)
    assert active_content(result.main_html) == []


# ── limits ──────────────────────────────────────────────────────────────────────


def test_size_limit_gives_an_error_record_and_the_batch_goes_on() -> None:
    big = in_page("<p>" + "word " * 5000 + "</p>")
    ex = Extractor(labeler=AllMain(), max_bytes=10_000)
    for page in (big, big.encode("utf-8")):
        before, hostile, after = ex.extract_many(neighbours(page))
        assert hostile.error.startswith("InputTooLargeError: page is larger than 10000")
        assert before.error is None and after.error is None and "river restoration" in after.text


def test_nesting_limit_rejects_deep_block_nesting_before_parsing() -> None:
    deep = "<div>" * 100_000 + "<p>deep</p>" + "</div>" * 100_000
    before, hostile, after = EXTRACTOR.extract_many(neighbours(deep))
    assert hostile.error.startswith("NestingTooDeepError: elements nest too deeply")
    assert before.error is None and after.error is None
    # Switched off, a moderately deep page parses (the limit is about cost, not depth).
    r = Extractor(labeler=AllMain(), max_parser_work=None).extract("<div>" * 3_000 + "<p>deep text</p>")
    assert r.error is None and r.text == "deep text"


def test_a_stray_end_tag_is_text_once() -> None:
    # The reference's parser keeps a stray "</>" as text; inside a raw-text element it is text already, and
    # writing it as "&lt;/&gt;" there showed the entity in the output text (found by scripts/fuzz.py).
    html = "<xmp>a</>b</xmp><p>c</>d</p><script>f(<></>)</script><plaintext>e</>f"
    got = EXTRACTOR.extract(html)
    assert got.text == "a</>b\n\nc</>d\n\ne</>f" and text_is_from_input(html, got.text)
    # an <xmp> in MathML holds elements: the text after one is unescaped like the xmp's own text
    html = "<math><xmp>a<td>b</td>c &amp; d &lt;e&gt;</xmp></math>"
    assert EXTRACTOR.extract(html).text == "abc & d <e>"


def test_noncharacter_references_stay_as_html_parsers_read_them() -> None:
    # HTML keeps a noncharacter that a reference names (a parse error, not a replacement); html.unescape drops
    # it, so the fuzzer's check counts such characters as the page's own (found by scripts/fuzz.py)
    html = "<p>&#xDFFFe; &#xFDD0; words of the page</p>"
    got = EXTRACTOR.extract(html)
    assert got.text == "\U000dfffe \ufdd0 words of the page" and text_is_from_input(html, got.text)
    assert not text_is_from_input(html, got.text + "\u0100")


def test_list_markers_after_a_pre_s_spaces_are_the_writer_s() -> None:
    # A list inside a <pre> (an unclosed one takes the rest of the page) keeps the pre's spaces before its
    # items' markers; the check counted those "1." as characters the page lacks (found by scripts/fuzz.py)
    html = "<pre>code<div><ol>\n<li>\n   <a href='/x'>one</a>\n</li>\n<li>two</li></ol></div></pre>"
    got = EXTRACTOR.extract(html)
    assert "   1. one" in got.text and text_is_from_input(html, got.text)
    assert not text_is_from_input(html, got.text + " 3.")


def test_parser_work_estimate() -> None:
    assert parser_work("<div>" * 1000)[0] == sum(range(1000))
    assert parser_work("<span>" * 1000 + "<p>x</p>")[0] == 1000  # inline nesting costs the parser nothing
    assert parser_work("<p>a<p>b<p>c")[1] == 1  # an open <p> is closed by the next one
    assert parser_work("<!--" + "<div>" * 1000 + "--><script>'<div>'</script>")[0] == 0
    assert check_nesting("<div>" * 100_000) is not None and check_nesting("<span>" * 100_000) is None
    assert check_nesting("<div>" * 100_000, max_work=None) is None
    # The options of one <select>: each added one costs the parser the options before it.
    assert parser_work("<select>" + "<option>x" * 1000)[0] == sum(range(1000))
    assert parser_work("<select>" + "<optgroup><option>x" * 1000)[0] == 0  # options in groups do not
    assert parser_work("<div>" + "<option>x" * 1000)[0] == 0  # nor outside a select
    assert parser_work(("<select>" + "<option>x</option>" * 1000 + "</select>") * 2)[0] == 2 * sum(range(1000))
    assert check_nesting("<select>" + "<option>x" * 100_000) is not None
    # read a chunk at a time, cut after a ">": the same tags as one pass (a name may hold "<")
    page = "<a<b href=x>t</a >< p><P>x</>" * 50 + "<li\n>" + "<div/>" * 30
    assert list(limits._tags(page, chunk=7)) == list(limits._tags(page)) == limits._TAG.findall(page)


def test_block_limit() -> None:
    many = in_page("".join(f"<p>paragraph {i}</p>" for i in range(50)))
    ex = Extractor(labeler=AllMain(), max_blocks=20)
    before, hostile, after = ex.extract_many(neighbours(many))
    assert hostile.error == "TooManyBlocksError: page has 52 blocks, more than max_blocks=20"
    assert hostile.n_blocks == 52 and before.error is None and after.error is None


def test_time_budget_stops_a_slow_page() -> None:
    ex = Extractor(labeler=AllMain(), time_budget=0.03)
    before, hostile, after = ex.extract_many(neighbours(SLOW_PAGE))
    assert hostile.error.startswith("TimeBudgetExceededError: decode and simplify took more than 0.03 s (stopped)")
    assert hostile.seconds >= 0.03 and before.error is None and after.error is None  # the record says what it cost
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL and signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_time_budget_off_the_main_thread_is_checked_when_the_stage_returns() -> None:
    out: list = []
    ex = Extractor(labeler=AllMain(), time_budget=0.01)
    thread = threading.Thread(target=lambda: out.append(ex.extract(SLOW_PAGE)))
    thread.start()
    thread.join()
    assert out[0].error.startswith("TimeBudgetExceededError: decode and simplify took more than 0.01 s")
    assert not out[0].error.endswith("(stopped)")


def test_run_within_passes_results_and_errors_through() -> None:
    assert run_within(5, "stage", sum, [1, 2]) == 3 and run_within(None, "stage", len, "ab") == 2
    with pytest.raises(ZeroDivisionError):
        run_within(5, "stage", lambda: 1 / 0)
    with pytest.raises(TimeBudgetExceededError, match="no time left"):
        run_within(0, "stage", len, "")
    assert signal.getsignal(signal.SIGALRM) == signal.SIG_DFL


def test_slow_page_falls_back_to_the_heuristic_labeler() -> None:
    ex = Extractor(labeler=AllMain(), time_budget=100)
    slow, fast = ex.prepare(in_page("<p>A second paragraph of the article.</p>")), ex.prepare(in_page(""))
    slow.result.timings["simplify"] = 60.0  # as if simplifying took 60 of its 100 s
    slow_labels, fast_labels = ex.label_pages([slow, fast])
    assert slow_labels.fallback and slow_labels.labeler == "heuristic" and fast_labels.labeler == "all-main"
    slow_result = ex.finish(slow, slow_labels)
    assert slow_result.error is None and slow_result.labeler == "heuristic (fallback)"
    assert "river restoration" in slow_result.text and ex.finish(fast, fast_labels).labeler == "all-main"


def test_page_out_of_budget_before_finishing_gets_an_error_record() -> None:
    ex = Extractor(labeler=AllMain(), time_budget=100)
    page = ex.prepare(in_page(""))
    labels = ex.label_pages([page])[0]
    page.result.timings["simplify"] = 100.0
    result = ex.finish(page, labels)
    assert result.error == "TimeBudgetExceededError: no time left in the page's budget for reconstruct and convert"
    assert result.main_html == result.text == "" and result.labels == []


# ── block-id injection ──────────────────────────────────────────────────────────

_INJECTED_TEXT = re.compile(r'_item_id="\d+"|<\|sep\|>|</?answer>|1main2other(?:3main)?|</?think>')


def _without_markers(text: str) -> str:
    return " ".join(_INJECTED_TEXT.sub(" ", text).split())


def _block_texts(page) -> list[str]:
    return [_without_markers(b.text) for b in page.blocks]


@pytest.mark.parametrize("name, injected, clean", INJECTIONS, ids=[i[0] for i in INJECTIONS])
def test_injected_markers_do_not_move_block_boundaries(name: str, injected: str, clean: str) -> None:
    dirty, plain = simplify(in_page(injected)), simplify(in_page(clean))
    assert _block_texts(dirty) == _block_texts(plain)
    assert [b.item_id for b in dirty.blocks] == list(range(1, len(dirty) + 1))
    assert all("<|sep|>" not in b.html and "<answer>" not in b.html for b in dirty.blocks)
    r_dirty, r_plain = EXTRACTOR.extract(in_page(injected)), EXTRACTOR.extract(in_page(clean))
    assert _without_markers(r_dirty.text) == _without_markers(r_plain.text)
    ids = item_ids(r_dirty.main_html)  # real block ids only (wrappers are unwrapped, so some are absent)
    assert len(set(ids)) == len(ids) and set(ids) <= set(range(1, r_dirty.n_blocks + 1))


def test_forged_cc_select_only_matters_to_the_annotation_labeler() -> None:
    html = in_page('<p cc-select="true">Marked paragraph.</p>')
    assert Extractor(labeler=AnnotationLabeler(), output="text").extract(html).text == "Marked paragraph."
    r = Extractor(labeler=AllMain(), output="text").extract(html)
    assert "river restoration" in r.text and "Marked paragraph." in r.text


# ── malformed and pathological pages ────────────────────────────────────────────


@pytest.mark.parametrize("name, html", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_pages(name: str, html: str) -> None:
    for page in (html, html.encode("utf-8", "surrogatepass")):
        assert_sound(html, EXTRACTOR.extract(page))


@pytest.mark.parametrize("name, html, error", SHAPES, ids=[s[0] for s in SHAPES])
def test_pathological_shapes(name: str, html: str, error: str | None) -> None:
    r = Extractor(labeler=AllMain(), output="text").extract(html)
    assert (r.error or "").split(":")[0] == (error or "")
    assert_sound(html, r)


def test_every_hostile_page_through_the_default_labeler() -> None:
    pages = hostile_pages()
    results = list(Extractor(output="text").extract_many({"id": name, "html": html} for name, html in pages))
    assert [r.id for r in results] == [name for name, _ in pages]
    for (_, html), r in zip(pages, results):
        assert_sound(html, r)
    # The only pages refused: control characters (read as binary), block nesting beyond the parse limit and
    # attribute floods.
    refused = {r.error.split(":")[0] for r in results if r.error}
    assert refused == {"InputFormatError", "NestingTooDeepError", "TooManyAttributesError"}


def test_cli_limits_and_markup_flags(tmp_path) -> None:
    from typer.testing import CliRunner

    from extract_trt.cli import app

    page = tmp_path / "page.jsonl"
    html = in_page('<p cc-select="true">Hello <img src=x onerror="alert(1)"> world</p>')
    page.write_text(json.dumps({"id": "a", "html": html}) + "\n" + json.dumps({"id": "b", "html": html * 40}) + "\n")
    run = lambda *flags: [json.loads(line) for line in CliRunner().invoke(  # noqa: E731
        app, ["extract", str(page), "-f", "html", "-l", "annotation", *flags], catch_exceptions=False
    ).stdout.splitlines()]
    default, kept, small = run(), run("--keep-markup"), run("--max-mb", "0.01")
    assert "onerror" not in default[0]["main_html"] and "onerror" in kept[0]["main_html"]
    assert [r["error"] for r in small][0] is None and small[1]["error"].startswith("InputTooLargeError")
    assert run("--time-budget", "0")[0]["error"] is None
