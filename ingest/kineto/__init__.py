"""PyTorch profiler (Kineto) Chrome-trace JSON (.json, .json.gz). A source unit (ingest/sources.py
says what each attribute means):

- text.py: the file's text in pieces (gzip inflated one piece ahead on a helper thread);
- decode.py: the text -> typed events, a chunk at a time (msgspec);
- args.py: the events' `args`, decoded per table with typed structs;
- rows.py: one chunk's events -> rows of a unified table (a function per table);
- row_parts.py: the chunks' events routed to their tables and turned into rows (RowParts);
- parallel.py: a big file's chunks decoded and turned into rows on worker processes;
- tables.py: all chunks' rows -> the unified tables of lake/schema.py (`ingest_kineto`).

This module stays small: discovery and recognition import it, and only `read` imports the decoder.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .constants import NAME, UTF8_BOM

if TYPE_CHECKING:
    from ..ingest_result import IngestResult

__all__ = ["NAME", "DESCRIPTION", "SUFFIXES", "BY_NAME", "COST_PER_BYTE", "sniff", "read"]

DESCRIPTION = "a PyTorch profiler JSON trace"
SUFFIXES = (".json", ".json.gz")
BY_NAME: dict[str, tuple[str, ...]] = {}
# ../shared/traces on 2 cores: a gzip'd trace ~0.45 s per MB, plain JSON ~1/6 of that
COST_PER_BYTE = {".json.gz": 1.0, ".json": 0.2}


def sniff(head: bytes) -> bool:
    """Whether a file's first bytes (gzip looked through) open JSON: an object or an array, after an
    optional UTF-8 byte order mark."""
    return head.removeprefix(UTF8_BOM).lstrip()[:1] in (b"{", b"[")


def read(path: str, tables: set[str] | None = None) -> IngestResult:
    """The trace's unified tables (IngestResult); tables: the only ones wanted (None: all)."""
    from .tables import ingest_kineto

    return ingest_kineto(path, tables)
