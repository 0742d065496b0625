"""Everything on the hot path: decoding, simplification, labelers, reconstruction, conversion, I/O."""

from extract_trt.runtime.compiled_core import compiled, use_sources_when_needed

use_sources_when_needed()  # before any compiled module is imported

__all__ = ["compiled", "describe"]


def describe() -> str:
    """Which build runs, in words (for benchmark reports)."""
    if not compiled():
        return "interpreted (no compiled core)"
    # (here, not in compiled_core: the DOM module asks compiled_core whether its C walker is built)
    from extract_trt.runtime.html import dom

    walk = "C tree walker" if dom.c_walker_in_use() else "selectolax tree walk"
    return f"compiled core (Cython), {walk}"
