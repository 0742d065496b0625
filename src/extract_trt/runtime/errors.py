"""Specific exception types; every message says what failed and why."""


class ExtractError(Exception):
    """Base class of all extract-trt errors."""


class DecodeError(ExtractError):
    """Bytes could not be turned into text by the documented charset rules."""


class InputTooLargeError(ExtractError):
    """The page exceeds a configured size limit."""


class SimplifyError(ExtractError):
    """The page could not be parsed or segmented into blocks."""


class LabelerError(ExtractError):
    """A labeler failed or returned labels that do not match the blocks."""


class InputFormatError(ExtractError):
    """An input record or file is not in a supported format."""
