"""Per-page limits that keep hostile input bounded in time and memory, and how they are enforced.

Every limit is an :class:`~extract_trt.runtime.extractor.Extractor` option (``None`` switches it off) and
every breach becomes that page's ``Result.error`` (a :class:`~extract_trt.errors.LimitExceededError`
subclass); the other pages of the batch are not affected. Checked in this order:

1. **Size** (``max_bytes``, default :data:`~extract_trt.runtime.io.records.DEFAULT_MAX_BYTES` = 20 MiB): a larger
   page is rejected before it is decoded (``InputTooLargeError``), never truncated — a truncated page
   would silently lose its end. Readers (:func:`~extract_trt.runtime.io.records.iter_records`) apply the same rule
   and never read more than ``max_bytes + 1`` bytes of an HTML file.
2. **Nesting** (``max_parser_work``, default :data:`DEFAULT_MAX_PARSER_WORK`): Lexbor's tree builder walks
   the stack of open elements for every block-level start tag and for every end tag that does not close
   the current element, so its time grows with *depth × tags*: 100,000 nested ``<div>`` take ~30 s,
   100,000 nested ``<span>`` 0.06 s. It also goes over a ``<select>``'s options for each option added to
   it: 24,000 options in one ``<select>`` take 4.4 s, 2 million (18 MB) would take hours. That parse is
   one C call that no timer can interrupt, so the cost is estimated *before* parsing by :func:`check_nesting`
   (a regex tag scan that tracks the open elements and adds the depth at each such tag) and a page whose
   estimate exceeds the limit is rejected (``NestingTooDeepError``). The default, 10⁸ steps, is about
   14,000 nested ``<div>`` (~1 s of parsing); the 1,497 WCXB pages estimate at most 6.5·10⁶ (their DOMs are
   at most 55 levels deep). A page with at most ``sqrt(2 · max_parser_work)`` (≈ 14,000) ``<`` characters
   cannot exceed the limit and is not scanned. The scan reads what the tokenizer reads (:func:`markup_only`):
   ``<!-->`` is an empty comment, ``<title>``/``<script>``/``<style>`` inside ``<svg>``/``<math>`` hide
   nothing, all of a page after ``<plaintext>`` is text — so markup cannot hide tags from it that the parser
   then builds.
   Everything after the parse is iterative, so depth itself is never an error (no recursion).
2a. **Attributes** (``max_attributes``, default :data:`DEFAULT_MAX_ATTRIBUTES` = 1,000 on one element):
   Lexbor's cost per tag grows with the square of its distinct attributes (100,000: about a minute in
   one C call); :func:`check_attributes` finds such a tag by one linear regex search
   (``TooManyAttributesError``). It costs about 0.7 µs per ``<``, so it runs where that is cheap — pages
   with over 1,000 characters per ``<`` — and where the nesting scan runs anyway (over 14,000 ``<``);
   :func:`check_parse_cost` applies rules 2 and 2a. A flood split up by many quoted ``<`` in between
   can pass it; the hard stop below still bounds it.
3. **Blocks** (``max_blocks``, default :data:`DEFAULT_MAX_BLOCKS` = 100,000; the largest shared page has
   3,112): more blocks than that → ``TooManyBlocksError`` (labelling cost grows with the block count).
4. **Time** (``time_budget``, default :data:`DEFAULT_TIME_BUDGET` = 30 s per page) covers the page's own
   stages: decode + nesting scan + simplify, then reconstruct + convert with what is left (batched
   labelling is shared by the pages of a batch and not counted). A page that used more than half of its
   budget before labelling is labelled by the heuristic labeler instead of the configured one
   (``Result.labeler`` says ``heuristic (fallback)``), within the remaining budget. Running out of time
   in a stage gives ``TimeBudgetExceededError``.

   Enforcement: on the main thread of a POSIX process (the CLI, the batch workers, most scripts) a stage
   runs under a ``SIGALRM`` timer (:func:`run_within`) that interrupts it as soon as Python code runs again;
   elsewhere (other threads, Windows, a caller that uses ``SIGALRM`` itself) the time is checked when the
   stage returns. A hang inside one C call is caught by the worker pool of
   :mod:`extract_trt.runtime.io.batch`, which kills a worker that holds a page past ``page_timeout``; the
   CLI extracts in such a supervised worker with ``--workers 1`` too, so that stop always holds there.
5. **Output size** (``max_output_ratio``, default :data:`DEFAULT_MAX_OUTPUT_RATIO` = 8): an output
   (main HTML, Markdown or text) longer than 8 × the page's characters and over 1 Mi characters is
   dropped for ``OutputTooLargeError`` (:func:`check_output`) — 20 KB of ``<b>`` left open across
   paragraphs would otherwise give 11 MB of main HTML.
6. **Memory**: a worker process caps its address space at what it holds once its Extractor is built
   plus ``page_memory`` (:data:`DEFAULT_PAGE_MEMORY`, 1.5 GiB; :func:`cap_memory`). A page past it fails
   in its own allocation: ``TreeTooLargeError`` (the parser's formatting-element reconstruction can turn
   29 KB of markup into 2 million elements) or another error record, and the worker goes on.
"""

from __future__ import annotations

import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from extract_trt.errors import (
    LimitExceededError,
    NestingTooDeepError,
    OutputTooLargeError,
    TimeBudgetExceededError,
    TooManyAttributesError,
)

__all__ = [
    "DEFAULT_MAX_ATTRIBUTES",
    "DEFAULT_MAX_BLOCKS",
    "DEFAULT_MAX_OUTPUT_RATIO",
    "DEFAULT_MAX_PARSER_WORK",
    "DEFAULT_PAGE_MEMORY",
    "DEFAULT_TIME_BUDGET",
    "cap_memory",
    "memory_capped",
    "check_attributes",
    "check_output",
    "check_parse_cost",
    "check_nesting",
    "markup_only",
    "parser_work",
    "run_within",
]

DEFAULT_MAX_BLOCKS = 100_000
DEFAULT_MAX_ATTRIBUTES = 1_000
DEFAULT_MAX_OUTPUT_RATIO = 8.0
OUTPUT_FLOOR = 1 << 20  # characters any output may have, whatever the input's size
DEFAULT_MAX_PARSER_WORK = 100_000_000
DEFAULT_TIME_BUDGET = 30.0
DEFAULT_PAGE_MEMORY = 3 * 2**29  # 1.5 GiB of address space per worker beyond its loaded state

T = TypeVar("T")

# ── nesting scan ────────────────────────────────────────────────────────────────

_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)")
# The tokens of the data state: comments, bogus comments, and tags read whole — attributes included, with
# quotes only where they start a value (after "=") — so that "<!--" or "<script>" inside an attribute
# value is not taken for markup.
_TOKEN = re.compile(
    r"""<(?:(?P<comment>!--)|(?P<bogus>[!?])|(?P<end>/?)(?P<name>[A-Za-z][^\t\n\f\r />]*+)"""
    r"""(?:[^>"'=]++|=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+')|["'=])*+>?)"""
)
_COMMENT_END = re.compile(r"--!?>")
# Elements whose text the tokenizer reads without tags (outside foreign content), and the foreign roots.
_RAW_TEXT = frozenset({"script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title"})
_FOREIGN = frozenset({"svg", "math"})
_HIDING = _RAW_TEXT | {"plaintext"}
_RAW_END: dict[str, re.Pattern[str]] = {}
_VOID = frozenset(
    {"area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "image", "img", "input",
     "keygen", "link", "meta", "param", "source", "track", "wbr"}
)  # fmt: skip
# Start tags for which the HTML5 tree builder looks for an open <p> (or <li>, <dd>, <dt>) down the stack.
_SCOPE_WALKING = frozenset(
    {"address", "article", "aside", "blockquote", "center", "details", "dialog", "dir", "div", "dl", "fieldset",
     "figcaption", "figure", "footer", "header", "hgroup", "main", "menu", "nav", "ol", "p", "search", "section",
     "summary", "ul", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "listing", "form", "plaintext", "table", "hr",
     "xmp", "li", "dd", "dt"}
)  # fmt: skip
# Elements that an identical start tag closes (so they do not nest).
_SELF_CLOSING = frozenset({"p", "li", "dd", "dt", "option", "tr", "td", "th", "a", "button", "form", "nobr"})
_END_SEARCH = 32  # how far down the stack the scan itself looks for an end tag's element


def parser_work(html: str, stop_above: int | None = None) -> tuple[int, int]:
    """Estimate Lexbor's tree-building steps for ``html``: ``(steps, deepest nesting seen)``.

    The scan counts, for every block-level start tag and every end tag that does not close the current
    element, the number of elements open at that point, and for every ``<option>`` added to a ``<select>``
    the options already in it. It is approximate (no full HTML5 insertion
    modes) and errs high. With ``stop_above`` it returns as soon as the count exceeds it.
    """
    html = markup_only(html)
    stack: list[str] = []
    push, pop = stack.append, stack.pop
    steps = deepest = options = 0
    for end, name in _tags(html):
        name = name.lower()
        if end:
            if stack and stack[-1] == name:
                pop()
                continue
            steps += len(stack)
            for i in range(len(stack) - 1, max(-1, len(stack) - 1 - _END_SEARCH), -1):
                if stack[i] == name:
                    del stack[i:]
                    break
        elif name not in _VOID:
            if stack and stack[-1] == name and name in _SELF_CLOSING:
                pop()
            if name == "select":
                options = 0
            elif name == "option" and stack and stack[-1] == "select":
                steps += options  # Lexbor goes over the select's options each time it adds one
                options += 1
            if name in _SCOPE_WALKING:
                if stack and stack[-1] == "p":
                    pop()
                steps += len(stack)
            push(name)
            if len(stack) > deepest:
                deepest = len(stack)
        else:
            continue
        if stop_above is not None and steps > stop_above:
            break
    return steps, deepest


def _tags(html: str, chunk: int = 1 << 20) -> Iterator[tuple[str, str]]:
    """``(end mark, name)`` of each tag of ``html``: ``findall`` (no match objects) over about ``chunk``
    characters at a time, each cut just after a ``>`` (no tag name runs across one), so that a page of
    millions of tags is never one list."""
    start, n = 0, len(html)
    while start < n:
        cut = html.find(">", start + chunk)
        stop = n if cut < 0 else cut + 1
        yield from _TAG.findall(html, start, stop)
        start = stop


def markup_only(html: str) -> str:
    """``html`` without the text the HTML tokenizer reads as no tags, so the scan sees what Lexbor sees.

    Follows the tokenizer states that hide markup: comments (``<!-->`` and ``<!--->`` are complete
    empty comments; others end at ``-->`` or ``--!>``, or run to the end), bogus comments (``<!…>``,
    ``<?…>``), raw text and RCDATA elements (``script``, ``style``, ``xmp``, ``iframe``, ``noembed``,
    ``noframes``, ``textarea``, ``title``: up to their end tag, or the end), and ``<plaintext>`` (the rest
    is text). Inside ``<svg>``/``<math>`` those names are ordinary elements, so nothing is hidden there.
    Where it cannot be exact it hides less, never more (the estimate errs high). Linear: one forward pass.
    """
    out: list[str] = []
    kept = pos = foreign = 0  # kept: where the text not copied to ``out`` yet starts
    n = len(html)
    while pos < n:
        # Ordinary tags are only read past: one finditer run until a stretch to hide (few on a page)
        for m in _TOKEN.finditer(html, pos):
            kind = m.lastgroup
            if kind == "name":
                name = m.group("name").lower()
                if name in _FOREIGN:
                    foreign = max(0, foreign - 1) if m.group("end") else foreign + 1
                    continue
                if foreign or name not in _HIDING or m.group("end"):
                    continue
                out.append(html[kept : m.end()])
                if name == "plaintext":
                    return "".join(out)
                if name not in _RAW_END:  # its text runs to its end tag, or to the end
                    _RAW_END[name] = re.compile(rf"</{name}[\s/>]", re.IGNORECASE)
                end = _RAW_END[name].search(html, m.end())
                pos = n if end is None else end.start()
                break
            start = m.start()
            out.append(html[kept:start])
            if kind == "bogus":
                end_mark = html.find(">", start)
                pos = n if end_mark < 0 else end_mark + 1
            elif html.startswith(">", start + 4):
                pos = start + 5
            elif html.startswith("->", start + 4):
                pos = start + 6
            else:
                end = _COMMENT_END.search(html, start + 4)
                pos = n if end is None else end.end()
            break
        else:  # no token left
            break
        kept = pos
    out.append(html[kept:])
    return "".join(out)


def check_nesting(html: str, max_work: int | None = DEFAULT_MAX_PARSER_WORK) -> NestingTooDeepError | None:
    """The error for a page whose estimated parse work exceeds ``max_work`` (rule 2), else ``None``."""
    if max_work is None or html.count("<") ** 2 <= 2 * max_work:
        return None
    steps, deepest = parser_work(html, stop_above=max_work)
    if steps <= max_work:
        return None
    return NestingTooDeepError(
        f"elements nest too deeply, or a <select> holds too many options, to parse in bounded time: over "
        f"{max_work:,} tree-building steps estimated (open elements reach {deepest:,} before the scan stops; "
        "limit max_parser_work)"
    )


# ── attributes ──────────────────────────────────────────────────────────────────

_ATTR_SEP = r"(?:[\t\n\f\r /]++|(?<=[\"']))"  # whitespace or /, or nothing after a quoted value
_ATTR = r"""(?:[^\t\n\f\r />=][^\t\n\f\r />=]*+|=[^\t\n\f\r />=]*+)(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+"|'[^']*+'|[^\t\n\f\r >]*+))?+"""
_MANY_ATTRS: dict[int, re.Pattern[str]] = {}


def check_attributes(html: str, max_attributes: int | None = DEFAULT_MAX_ATTRIBUTES) -> LimitExceededError | None:
    """The error for a page with an element of more than ``max_attributes`` attributes, else ``None``.

    Lexbor compares each attribute of a tag with the ones before it (duplicates are dropped), so one
    tag costs attributes²: 10,000 take 0.6 s, 100,000 about a minute, in one C call. The check is one
    regex search for a tag with that many attributes (possessive, so linear), confirmed on
    :func:`markup_only` (an attribute-like run inside a script or comment is no tag).
    """
    if max_attributes is None:
        return None
    pattern = _MANY_ATTRS.get(max_attributes)
    if pattern is None:
        pattern = re.compile(rf"<[A-Za-z][^\t\n\f\r />]*+(?:{_ATTR_SEP}{_ATTR}){{{max_attributes + 1}}}")
        _MANY_ATTRS[max_attributes] = pattern
    if pattern.search(html) is None or pattern.search(markup_only(html)) is None:
        return None
    return TooManyAttributesError(
        f"an element has more than {max_attributes:,} attributes (the parser's cost grows with their square; "
        "limit max_attributes)"
    )


_SPARSE = 1_000  # characters per '<' above which the attribute check runs on every page (it costs per '<')


def check_parse_cost(
    html: str, max_work: int | None = DEFAULT_MAX_PARSER_WORK, max_attributes: int | None = DEFAULT_MAX_ATTRIBUTES
) -> LimitExceededError | None:
    """Rules 2 and 2a before parsing: :func:`check_nesting`, and :func:`check_attributes` where it is cheap
    or where the nesting scan runs anyway (pages with few ``<`` for their size, or many ``<``)."""
    lt = html.count("<")
    scanned = max_work is not None and lt**2 > 2 * max_work
    if max_attributes is not None and (scanned or len(html) > _SPARSE * lt):
        problem = check_attributes(html, max_attributes)
        if problem is not None:
            return problem
    return check_nesting(html, max_work) if scanned else None


# ── output size ─────────────────────────────────────────────────────────────────


def output_limit(input_chars: int, ratio: float | None = DEFAULT_MAX_OUTPUT_RATIO) -> int | None:
    """The most characters an output of a page of ``input_chars`` may have (``None``: no limit)."""
    return None if ratio is None else max(OUTPUT_FLOOR, int(ratio * input_chars))


def check_output(outputs: dict[str, str], input_chars: int, ratio: float | None = DEFAULT_MAX_OUTPUT_RATIO) -> OutputTooLargeError | None:
    """The error when an output is longer than ``ratio`` × the input's characters (and over 1 Mi
    characters), else ``None``. Main content is a part of its page; what grows far past the page is the
    HTML parser re-opening formatting elements (``<b>`` left open across 1,000 paragraphs) or entity
    escaping, and such output is useless to a corpus."""
    limit = output_limit(input_chars, ratio)
    if limit is None:
        return None
    for name, text in outputs.items():
        if len(text) > limit:
            return OutputTooLargeError(
                f"the {name} output has {len(text):,} characters, more than {ratio:g} × the page's {input_chars:,} "
                f"(limit max_output_ratio)"
            )
    return None


# ── memory cap ──────────────────────────────────────────────────────────────────


def cap_memory(extra: int | None) -> bool:
    """Cap this process's address space at its current size plus ``extra`` bytes (``RLIMIT_AS``, soft).

    For worker processes (:mod:`extract_trt.runtime.io.batch`), called once the Extractor is built: an
    allocation past the cap fails inside the page that asked for it (Lexbor's parse fails, Python raises
    ``MemoryError``), which becomes that page's error record. Returns False where it cannot be applied
    (no ``resource`` module, no ``/proc``, or ``extra`` is ``None``).
    """
    return _set_memory_cap(extra) is not None


@contextmanager
def memory_capped(extra: int | None) -> Iterator[None]:
    """:func:`cap_memory` for the duration of the block only (a process that is not a worker: the CLI
    extracting a single page in its own process); the previous limit is restored on exit."""
    previous = _set_memory_cap(extra)
    try:
        yield
    finally:
        if previous is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_AS, previous)


def _set_memory_cap(extra: int | None) -> tuple[int, int] | None:
    """Apply the cap; the limits it replaced, or ``None`` where it was not applied."""
    if extra is None:
        return None
    try:
        import resource

        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        previous = resource.getrlimit(resource.RLIMIT_AS)
        hard = previous[1]
        soft = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    except (ImportError, OSError, StopIteration, ValueError):
        return None
    return previous


# ── time budget ─────────────────────────────────────────────────────────────────


class _Expired(BaseException):
    """Raised by the alarm handler. A BaseException, so no ``except Exception`` in a stage swallows it."""


_armed = False  # only the main thread arms the alarm, so a module flag is enough
_ALARM_REPEAT = 0.05  # seconds between alarms once the budget is spent


def _on_alarm(signum: int, frame: object) -> None:
    if _armed:
        raise _Expired


def _alarm_usable() -> bool:
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None):
        return False  # someone else's handler (or ours, nested): do not take it over
    return signal.getitimer(signal.ITIMER_REAL)[0] == 0


def run_within(seconds: float | None, stage: str, fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)``, stopped with :class:`TimeBudgetExceededError` after ``seconds`` (``None``: no limit).

    Interrupted by ``SIGALRM`` where that is usable (see the module docstring), else checked on return.
    """
    global _armed
    if seconds is None:
        return fn(*args)
    if seconds <= 0:
        raise TimeBudgetExceededError(f"no time left in the page's budget for {stage}")
    start = time.perf_counter()
    if not _alarm_usable():
        out = fn(*args)
    else:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        try:
            _armed = True
            # The alarm repeats: an exception raised while a finalizer or gc callback runs is swallowed
            # by the interpreter ("Exception ignored in …"); the next tick raises it again.
            signal.setitimer(signal.ITIMER_REAL, seconds, _ALARM_REPEAT)
            try:
                out = fn(*args)
            finally:
                _armed = False  # an alarm after this point is ignored by the handler
        except _Expired:
            raise TimeBudgetExceededError(f"{stage} took more than {seconds:.3g} s (stopped)") from None
        finally:
            _armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if time.perf_counter() - start > seconds:
        raise TimeBudgetExceededError(f"{stage} took more than {seconds:.3g} s")
    return out
