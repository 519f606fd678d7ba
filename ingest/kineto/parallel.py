"""Decoding one big Kineto trace on several cores.

The traceEvents array is cut into ranges of about RANGE_BYTES at commas between two events
('}' ',' '{'); a worker process decodes each range and builds its rows (row_parts.RowParts), and
the caller merges the rows in file order, which gives the rows of the serial chunk-by-chunk
decode (the same tables, the same row ids). At most IN_FLIGHT ranges per worker are out at once,
so a worker holds one range's text and objects, and the caller the rows.

- A plain JSON file: the caller reads only the head and a few KB around each cut; each worker
  reads its own range from the file, and the caller hashes the file meanwhile.
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

import gc
import os
import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import BrokenExecutor
from dataclasses import dataclass
from typing import Any

import msgspec

from ...lake import cores, memory_budget
from ..errors import TraceError
from ..identity import content_sha256, file_sha256
from ..process_pool import lender
from ..reading import LimitExceeded, check_text_size, read_head
from .constants import UTF8_BOM
from .decode import (
    ChunkFailed,
    DecodedTrace,
    _decode_events,
    _NotChunkable,
    _skipped_warning,
    chunk_texts,
    events_start,
    tail_text,
)
from .row_parts import RowParts
from .text import GZIP_ERRORS, GZIP_MAGIC, read_file, text_pieces

RANGE_BYTES = 16 << 20  # JSON text per range
MIN_TEXT_BYTES = 128 << 20  # smaller files are decoded in the calling process
IN_FLIGHT = 2  # ranges out per worker
WORKER_PEAK_BYTES = 256 << 20  # a worker's peak RSS with one range (measured: 215 MiB)
_HEAD_LIMIT = 64 << 20  # keys before traceEvents beyond this: decoded serially
_WINDOW = 64 << 10  # bytes read at a time when looking for a cut
_CUT = re.compile(rb"\}[ \t\r\n]*,[ \t\r\n]*\{")
# what a gzip file's chunk texts raise where its text is damaged or opens no traceEvents array
_TEXT_ERRORS: tuple[type[BaseException], ...] = (msgspec.DecodeError, TraceError, UnicodeDecodeError, _NotChunkable,
                                                 *GZIP_ERRORS)


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
    ranges: Iterable[_Range]
    if gzipped:
        raw = read_file(path)
        sha = content_sha256(raw)
        ranges = _gzip_ranges(path, raw, metadata)
        hashing = None
    else:
        check_text_size(path, os.path.getsize(path))
        located = _file_ranges(path, metadata)
        if located is None:
            return None
        ranges, hashing = located, _Hashing(path)
    parts = RowParts(build, pids_only)
    skipped = 0
    try:
        with make_pool(workers) as pool:
            pending: deque = deque()
            for work in ranges:
                pending.append(pool.submit(_rows_of_range, path, work, build, pids_only))
                if len(pending) >= IN_FLIGHT * workers:
                    skipped += _merge(parts, metadata, pending.popleft().result())
            while pending:
                skipped += _merge(parts, metadata, pending.popleft().result())
    except BrokenExecutor:  # a worker died (killed, out of memory): the caller decodes in its own process
        raise ChunkFailed from None
    warnings: list[str] = []
    _skipped_warning(skipped, warnings)
    return DecodedTrace(iter(()), metadata, hashing.result() if hashing else sha, warnings), parts


def _merge(parts: RowParts, metadata: dict[str, Any], result: tuple[RowParts, dict[str, Any], int] | None) -> int:
    if result is None:
        raise ChunkFailed
    later, tail_metadata, skipped = result
    parts.merge(later)
    metadata.update(tail_metadata)
    return skipped


def _rows_of_range(path: str, work: _Range, build: set[str] | None,
                   pids_only: frozenset[str]) -> tuple[RowParts, dict[str, Any], int] | None:
    """In a worker: (the range's rows, the top-level keys after the array if it is the tail,
    events skipped as malformed); None when the range does not decode."""
    was_enabled = gc.isenabled()
    gc.disable()  # millions of short-lived objects and no cycles (dispatch._gc_paused)
    try:
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
    except (msgspec.DecodeError, TraceError, UnicodeDecodeError):
        return None
    finally:
        if was_enabled:
            gc.enable()


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
    try:
        for text in chunk_texts(text_pieces(path, raw, RANGE_BYTES), metadata):
            yield _Range(text=text)
    except LimitExceeded:
        raise
    except _TEXT_ERRORS:
        raise ChunkFailed from None


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


class _Hashing:
    """The file's sha256, computed on a helper thread (hashlib releases the GIL on large blocks)."""

    def __init__(self, path: str):
        self._sha: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(path,), name="tracelake-hash", daemon=True)
        self._thread.start()

    def _run(self, path: str) -> None:
        try:
            self._sha = file_sha256(path)
        except BaseException as e:  # noqa: BLE001 - raised on the caller's thread by result()
            self._error = e

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._sha is not None
        return self._sha
