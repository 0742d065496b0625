"""Specific exception types; every message says what failed and why."""

from __future__ import annotations

from pathlib import Path


def describe(exc: BaseException | None) -> str:
    """``"<ErrorType>: reason"``, the form of every output record's ``error``. An exception without a message
    (a bare ``StopIteration`` or ``KeyError()`` from a bug) is described by where it was raised, so that a
    record still says something to act on."""
    if exc is None:
        return "unknown error"
    reason = str(exc)
    if not reason:
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None:
            reason = "no message"
        else:
            code = tb.tb_frame.f_code
            reason = f"no message, raised in {code.co_name} ({Path(code.co_filename).name}:{tb.tb_lineno})"
    return f"{type(exc).__name__}: {reason}"


class ExtractError(Exception):
    """Base class of all extract-trt errors."""


class DecodeError(ExtractError):
    """Bytes could not be turned into text by the documented charset rules."""


class LimitExceededError(ExtractError):
    """The page exceeds one of the configured limits (see :mod:`extract_trt.runtime.limits`)."""


class InputTooLargeError(LimitExceededError):
    """The page exceeds a configured size limit."""


class NestingTooDeepError(LimitExceededError):
    """The page nests elements so deeply (or puts so many options in one ``<select>``) that parsing it would
    take too long (a pre-parse tag scan)."""


class TooManyBlocksError(LimitExceededError):
    """The page segments into more blocks than the configured maximum."""


class TimeBudgetExceededError(LimitExceededError):
    """The page took longer than its time budget (or its worker process was killed for it)."""


class SimplifyError(ExtractError):
    """The page could not be parsed or segmented into blocks."""


class LabelerError(ExtractError):
    """A labeler failed or returned labels that do not match the blocks."""


class InputFormatError(ExtractError):
    """An input record or file is not in a supported format."""


class WorkerCrashError(ExtractError):
    """A worker process died while it held this page, on the first try and on the retry."""


class OutputEncodingError(ExtractError):
    """A result holds a string that the output cannot store (a lone surrogate, which UTF-8 cannot encode)."""


class OutputTooLargeError(LimitExceededError):
    """The page's output (main HTML, Markdown or text) would exceed the configured size limit."""


class TreeTooLargeError(LimitExceededError):
    """The parser would build more nodes than the configured maximum (a memory bound, checked before parsing)."""


class TooManyAttributesError(LimitExceededError):
    """An element has more attributes than the configured maximum (the parser's cost grows with their square)."""
