"""Trace identity: content hash and the trace_id derived from it."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .reading import blocks

_SUFFIXES = (".gz", ".json", ".sqlite", ".trace", ".pt")


def content_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    for block in blocks(str(path)):
        h.update(block)
    return h.hexdigest()


def trace_stem(path: str | Path) -> str:
    """File name without trace suffixes: 'rank0.pt.trace.json.gz' -> 'rank0'."""
    name = Path(path).name
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                name, changed = name[: -len(suffix)], True
    return name


def make_trace_id(path: str | Path, sha256: str) -> str:
    """Readable and content-addressed: '<file stem>-<first 10 hex digits of sha256>'.

    The same bytes always get the same id; a changed file gets a new one. Only [A-Za-z0-9._-]
    are kept so the id is safe as a hive partition value and never parses as a number.
    """
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", trace_stem(path)).strip("._-")[:80] or "trace"
    return f"{stem}-{sha256[:10]}"
