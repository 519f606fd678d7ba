"""Decoding one big Kineto trace on several cores.

The traceEvents array is cut into ranges of about RANGE_BYTES at commas between two events
('}' ',' '{'); a worker process decodes each range and builds its rows (row_parts.RowParts), and
the caller merges the rows in file order, which gives the rows of the serial chunk-by-chunk
decode (the same tables, the same row ids). At most IN_FLIGHT ranges per worker are out at once,
so a worker holds one range's text and objects, and the caller the rows.

- A plain JSON file: the caller reads only the head and a few KB around each cut; each worker
  reads its own range from the file, and the caller hashes the file meanwhile (on a thread).
- A gzip file: the caller inflates it a piece at a time (a helper thread inflates the next) and
  sends each chunk's text (decode.chunk_texts), as the serial decode would decode it.

A cut is a guess: a '}' ',' '{' may sit inside a string. A range that does not decode, or a
worker that dies, raises ChunkFailed, and the caller decodes the file again without this module
(tables._decode). The
workers come from the job that runs the reader (ingest/process_pool.py), one per core of this
process's share, and under a memory budget (`--max-memory`) no more than a quarter of this
process's share holds at WORKER_PEAK_BYTES each. Without two of them, or for a file below
MIN_TEXT_BYTES of text (a pool's start-up would cost more than it saves), `read_rows` returns
None and the caller decodes in its own process.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import BrokenExecutor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ...lake import cores, memory_budget
from ..gc_pause import gc_paused
from ..identity import content_sha256, file_sha256
from ..process_pool import lender
from ..reading import check_text_size, read_head
from .constants import UTF8_BOM
from .decode import (
    ChunkFailed,
    DecodedTrace,
    _decode_events,
    _NotChunkable,
    _skipped_warning,
    chunk_failures,
    chunk_texts,
    events_start,
    tail_text,
)
from .row_parts import RowParts
from .text import GZIP_MAGIC, read_file, text_pieces

RANGE_BYTES = 16 << 20  # JSON text per range
MIN_TEXT_BYTES = 128 << 20  # smaller files are decoded in the calling process
IN_FLIGHT = 2  # ranges out per worker
WORKER_PEAK_BYTES = 256 << 20  # a worker's peak RSS with one range (measured: 215 MiB)
_HEAD_LIMIT = 64 << 20  # keys before traceEvents beyond this: decoded serially
_WINDOW = 64 << 10  # bytes read at a time when looking for a cut
_CUT = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")


@dataclass(frozen=True)
class _Range:
    """Work for one worker: `text` (a gzip file's chunk, sent), or the bytes [start, end) of the
    file (end None: to the end of the file, the tail, parsed as the rest of the top level)."""
    text: bytes | None = None
    start: int = 0
    end: int | None = None
    in_object: bool = False


def read_rows(path: str, build: set[str] | None, pids_only: frozenset[str]) -> tuple[DecodedTrace, RowParts] | None:
    """The trace's decoded metadata and rows, decoded on the lent workers; None where this file is
    not worth it (or no workers were lent). Raises ChunkFailed where a range does not decode."""
    make_pool, workers = lender(), cores.threads()
    budget = memory_budget.process_budget()
    if budget is not None:  # the workers may take a quarter of this process's share of the budget
        workers = min(workers, budget // 4 // WORKER_PEAK_BYTES)
    if make_pool is None or workers < 2:
        return None
    gzipped = read_head(path, 2) == GZIP_MAGIC
    if _text_bytes(path, gzipped) < MIN_TEXT_BYTES:
        return None
    metadata: dict[str, Any] = {}
    hasher = ThreadPoolExecutor(1, thread_name_prefix="tracelake-hash")  # hashlib releases the GIL
    try:
        ranges: Iterable[_Range]
        sha: Future[str]
        if gzipped:
            raw = read_file(path)
            sha = hasher.submit(content_sha256, raw)
            ranges = _gzip_ranges(path, raw, metadata)
        else:
            check_text_size(path, os.path.getsize(path))
            located = _file_ranges(path, metadata)
            if located is None:
                return None
            ranges, sha = located, hasher.submit(file_sha256, path)
        parts, skipped = _rows_on(make_pool, workers, path, ranges, build, pids_only, metadata)
        warnings: list[str] = []
        _skipped_warning(skipped, warnings)
        return DecodedTrace(iter(()), metadata, sha.result(), warnings), parts
    finally:
        hasher.shutdown(wait=False)


def _rows_on(make_pool, workers: int, path: str, ranges: Iterable[_Range], build: set[str] | None,
             pids_only: frozenset[str], metadata: dict[str, Any]) -> tuple[RowParts, int]:
    """(the ranges' rows merged in order, events skipped as malformed), decoded on `workers`
    processes; the tail's top-level keys are added to `metadata`."""
    parts = RowParts(build, pids_only)
    skipped = 0
    pending: deque[Future] = deque()

    def merge_first() -> None:
        nonlocal skipped
        later, tail_metadata, bad = pending.popleft().result()  # a range's ChunkFailed is raised here
        parts.merge(later)
        metadata.update(tail_metadata)
        skipped += bad

    try:
        with make_pool(workers) as pool:
            for work in ranges:
                pending.append(pool.submit(_rows_of_range, path, work, build, pids_only))
                if len(pending) >= IN_FLIGHT * workers:
                    merge_first()
            while pending:
                merge_first()
    except BrokenExecutor:  # a worker died (killed, out of memory): the caller decodes in its own process
        raise ChunkFailed from None
    return parts, skipped


def _rows_of_range(path: str, work: _Range, build: set[str] | None,
                   pids_only: frozenset[str]) -> tuple[RowParts, dict[str, Any], int]:
    """In a worker: (the range's rows, the top-level keys after the array if it is the tail,
    events skipped as malformed); raises ChunkFailed when the range does not decode."""
    with gc_paused(), chunk_failures():
        metadata: dict[str, Any] = {}
        text = work.text
        if text is None:
            with open(path, "rb") as f:
                f.seek(work.start)
                data = f.read(-1 if work.end is None else work.end - work.start)
            text = tail_text(data, work.in_object, metadata) if work.end is None else b"[" + data + b"]"
            del data
        events, skipped = _decode_events(path, text)
        del text
        parts = RowParts(build, pids_only)
        parts.add(events)
        return parts, metadata, skipped


def _text_bytes(path: str, gzipped: bool) -> int:
    """The file's text size: a gzip file's from its trailer (the last member's size, modulo
    4 GiB), at least 4x its compressed size."""
    size = os.path.getsize(path)
    if not gzipped:
        return size
    with open(path, "rb") as f:
        f.seek(max(0, size - 4))
        trailer = f.read(4)
    return max(int.from_bytes(trailer, "little"), 4 * size)


def _gzip_ranges(path: str, raw: bytes, metadata: dict[str, Any]) -> Iterator[_Range]:
    with chunk_failures():
        for text in chunk_texts(text_pieces(path, raw, RANGE_BYTES), metadata):
            yield _Range(text=text)


def _file_ranges(path: str, metadata: dict[str, Any]) -> list[_Range] | None:
    """The ranges of a plain JSON file, the keys before its array added to `metadata`; None when
    its array's start is not found in the first _HEAD_LIMIT bytes."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(1 << 20)
        offset = len(UTF8_BOM) if head.startswith(UTF8_BOM) else 0
        while True:
            try:
                located = events_start(head[offset:])
            except _NotChunkable:
                return None
            if located is not None:
                break
            more = f.read(len(head))
            if not more or len(head) >= _HEAD_LIMIT:
                return None
            head += more
        start, in_object, keys = located
        metadata.update(keys)
        ranges, begin = [], offset + start + 1  # the text after '['
        while (cut := _next_cut(f, begin + RANGE_BYTES, size)) is not None:
            end, begin_next = cut
            ranges.append(_Range(start=begin, end=end))
            begin = begin_next
        ranges.append(_Range(start=begin, in_object=in_object))
        return ranges


def _next_cut(f, pos: int, size: int) -> tuple[int, int] | None:
    """(the end of an event, the start of the next) at the first '}' ',' '{' from `pos` on, or
    None when none is left before the last RANGE_BYTES of the file (the tail takes those)."""
    if pos >= size - RANGE_BYTES:
        return None
    f.seek(pos)
    window = b""
    while block := f.read(_WINDOW):
        window += block
        m = _CUT.search(window)
        if m is not None:
            return pos + m.start() + 1, pos + m.end() - 1
        keep = min(len(window), 64)  # a cut may span two blocks (blanks between its characters)
        pos += len(window) - keep
        window = window[-keep:]
        if pos >= size - RANGE_BYTES:
            return None
    return None
