"""Run an iterator ahead on a background thread, so CPU preparation overlaps with model inference.

ONNX Runtime and the ``tokenizers`` library release the GIL while they compute, so one thread preparing
the next pages (simplify, tokenize, pack) while the caller runs the current batch is real overlap.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["prefetch"]

T = TypeVar("T")
_DONE = object()


def prefetch(items: Iterable[T], depth: int = 2) -> Iterator[T]:
    """Yield ``items`` in order while a daemon thread produces up to ``depth`` of them ahead.

    An exception raised while producing is re-raised here, at the position it happened. Closing the
    returned generator early stops the producer after its current item.
    """
    slots: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(entry: tuple[bool, object]) -> bool:
        while not stop.is_set():
            try:
                slots.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((False, _DONE))
        except BaseException as exc:  # handed to the consumer, raised there
            put((False, exc))

    worker = threading.Thread(target=produce, name="extract-trt-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = slots.get()
            if ok:
                yield item
            elif item is _DONE:
                return
            else:
                raise item
    finally:
        stop.set()
