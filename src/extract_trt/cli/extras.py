"""Optional extras a subcommand needs, checked before it starts: a one-line message instead of a traceback."""

from __future__ import annotations

import importlib

__all__ = ["BENCH_EXTRA", "EVAL_EXTRA", "missing_extra"]

#: Modules of the `eval` extra that ``extract-trt eval`` uses: the WebMainBench tokenizer and the chart.
EVAL_EXTRA = ("jieba", "matplotlib")
#: ``extract-trt bench`` samples worker processes' CPU time and memory with psutil (`eval` extra).
BENCH_EXTRA = ("psutil",)


def missing_extra(modules: tuple[str, ...], extra: str) -> str | None:
    """One line naming what to install when a module of ``extra`` cannot be imported, else ``None``."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            return f"this needs the `{extra}` extra ({name} is not installed): pip install 'extract-trt[{extra}]'"
    return None
