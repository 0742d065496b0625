"""A minimal progress line on stderr: pages done, pages/s, errors; redrawn at most 4 times a second."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any


class Progress:
    """Counts results; draws ``\\r<done> pages  <rate> pages/s  <errors> errors`` when ``enabled``, followed
    by what ``detail()`` returns (e.g. shards done)."""

    def __init__(
        self,
        enabled: bool,
        stream: IO[str] | None = None,
        interval: float = 0.25,
        detail: Callable[[], str] | None = None,
    ) -> None:
        self.enabled = enabled
        self.detail = detail
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.done = 0
        self.errors = 0
        self.start = time.monotonic()
        self._last_draw = 0.0
        self._width = 0

    def update(self, result: Any) -> None:
        self.add(1, 1 if getattr(result, "error", None) else 0)

    def add(self, done: int, errors: int) -> None:
        """Count ``done`` more pages, ``errors`` of them failed."""
        self.done += done
        self.errors += errors
        if self.enabled:
            now = time.monotonic()
            if now - self._last_draw >= self.interval:
                self._last_draw = now
                self._draw(now)

    def close(self) -> None:
        """Draw the final line and end it with a newline."""
        if self.enabled:
            self._draw(time.monotonic(), final=True)
            self.stream.write("\n")
            self.stream.flush()

    def _draw(self, now: float, final: bool = False) -> None:
        elapsed = max(now - self.start, 1e-9)
        line = f"{self.done} pages  {self.done / elapsed:.1f} pages/s  {self.errors} errors"
        if self.detail is not None:
            line += "  " + self.detail()
        if final:
            line += f"  {elapsed:.1f} s"
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
