"""The reference simplifier (pulpie 0.0.2 = MinerU-HTML v1.1) as a test-only parity oracle.

pulpie's package ``__init__`` imports torch; its ``simplify``/``reconstruct``/``chunker`` modules do not.
A bare package object pointing at the installed directory lets us import just those modules. Needs
``pip install --no-deps pulpie==0.0.2`` and ``selectolax<1.0`` (the reference imports the Modest backend).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types

_SPACES = re.compile(r"\s+")


def load():
    """Return the pulpie modules (simplify, reconstruct, chunker) or None when not installed."""
    if "pulpie" not in sys.modules or not hasattr(sys.modules["pulpie"], "_oracle"):
        spec = importlib.util.find_spec("pulpie")
        if spec is None or not spec.submodule_search_locations:
            return None
        pkg = types.ModuleType("pulpie")
        pkg.__path__ = list(spec.submodule_search_locations)
        pkg._oracle = True
        sys.modules["pulpie"] = pkg
    try:
        from pulpie import chunker, reconstruct, simplify
    except ImportError:
        return None
    return types.SimpleNamespace(simplify=simplify.simplify, extract_main_html=reconstruct.extract_main_html,
                                 extract_blocks=chunker.extract_blocks)


def normalize(html: str) -> str:
    """The parity comparison's whitespace normalisation (spec §1.8)."""
    return _SPACES.sub(" ", html).strip()
