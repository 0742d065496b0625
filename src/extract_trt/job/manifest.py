"""The job manifest, ``<output_dir>/manifest.json``: which shards the job has, which are done, with what
counts, under which configuration. Only the driver writes it, atomically (temp file + rename), once when
the job starts and again after every finished shard, so it always describes complete shard files.

Layout (``format`` ``extract-trt-job/1``)::

    {"format": ..., "config_hash": "sha256:…", "config": {output settings},
     "created": ISO time, "updated": ISO time,
     "totals": {"shards", "done", "records", "errors"},
     "shards": [{"input": abs path, "output": file name, "status": "pending" | "done",
                 "input_bytes": int, "records": int, "errors": int, "output_bytes": int,
                 "seconds": float, "finished": ISO time}, ...]}

``records``/``errors``/``output_bytes``/``seconds``/``finished`` are set when a shard is done.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from extract_trt.job.config import JobError
from extract_trt.runtime.io.records import write_atomic

__all__ = ["MANIFEST_FORMAT", "MANIFEST_NAME", "Manifest", "ShardEntry"]

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "extract-trt-job/1"


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def make_readable(path: str) -> None:
    """Give a file written through a temp file (mode 0600) the mode a plain ``open`` would have given it."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


@dataclass
class ShardEntry:
    """One input shard of the job and the state of its output."""

    input: str
    output: str
    input_bytes: int
    status: str = "pending"
    records: int | None = None
    errors: int | None = None
    output_bytes: int | None = None
    seconds: float | None = None
    finished: str | None = None

    def reset(self, input_bytes: int) -> None:
        """Back to pending (the shard will be written again)."""
        self.input_bytes = input_bytes
        self.status = "pending"
        self.records = self.errors = self.output_bytes = None
        self.seconds = None
        self.finished = None


@dataclass
class Manifest:
    config_hash: str
    config: dict[str, Any]
    shards: list[ShardEntry] = field(default_factory=list)
    created: str = field(default_factory=now_iso)
    updated: str = field(default_factory=now_iso)

    @classmethod
    def load(cls, path: str) -> Manifest | None:
        """The manifest at ``path``, or ``None`` when there is none.

        Raises:
            JobError: the file is not a manifest of this format.
        """
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise JobError(f"cannot read job manifest {path!r}: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            raise JobError(f"{path!r} is not an extract-trt job manifest ({MANIFEST_FORMAT})")
        try:
            shards = [ShardEntry(**entry) for entry in data["shards"]]
            return cls(data["config_hash"], data["config"], shards, data["created"], data["updated"])
        except (KeyError, TypeError) as exc:
            raise JobError(f"job manifest {path!r} is incomplete: {exc}") from exc

    def save(self, path: str) -> None:
        self.updated = now_iso()
        write_atomic(path, json.dumps(self.as_dict(), ensure_ascii=False, indent=1) + "\n")
        make_readable(path)

    def as_dict(self) -> dict[str, Any]:
        done = [s for s in self.shards if s.status == "done"]
        return {
            "format": MANIFEST_FORMAT,
            "config_hash": self.config_hash,
            "config": self.config,
            "created": self.created,
            "updated": self.updated,
            "totals": {
                "shards": len(self.shards),
                "done": len(done),
                "records": sum(s.records or 0 for s in done),
                "errors": sum(s.errors or 0 for s in done),
            },
            "shards": [asdict(s) for s in self.shards],
        }
