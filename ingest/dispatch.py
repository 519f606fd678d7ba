"""Which source reads a file: decided from its content, not its name (ingest/sources.py)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

from ..lake.error_line import error_line
from .errors import ErrorKind, TraceError
from .gc_pause import gc_paused
from .ingest_result import IngestResult
from .reading import Limits, open_input, read_head, using
from .sources import SOURCES

Reader = Callable[[str, "set[str] | None"], IngestResult]


def recognize(path: str) -> tuple[str, Reader]:
    """(the format's name, its reader): the source whose sniff knows the file's first bytes (gzip
    looked through), else one that knows its name (BY_NAME: an Nsight report, 'nsys-rep');
    raises TraceError for anything else."""
    head = read_head(path, 64)
    if not head:
        raise TraceError(path, "empty file")
    if head[:2] == b"\x1f\x8b":
        try:
            with open_input(path) as raw, gzip.GzipFile(fileobj=raw) as f:
                head = f.read(64)
        except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as e:
            raise TraceError(path, f"corrupt gzip data ({e})") from None
        if not head:
            raise TraceError(path, "empty file (gzip of nothing)")
    for source in SOURCES:
        if source.sniff(head):
            return source.NAME, source.read
    for source in SOURCES:
        for fmt, suffixes in source.BY_NAME.items():
            if path.endswith(suffixes):
                return fmt, source.read_by_name
    if head[:4] == b"PK\x03\x04":
        raise TraceError(path, "a zip archive, not a trace (an Nsight Systems report needs the name "
                               "<name>.nsys-rep, or run `nsys export --type sqlite` on it)", ErrorKind.NOT_A_TRACE)
    raise TraceError(path, "unknown format: neither " + " nor ".join(s.DESCRIPTION for s in SOURCES),
                     ErrorKind.NOT_A_TRACE)


def ingest_file(path: str, limits: Limits | None = None, tables: set[str] | None = None) -> IngestResult:
    """Read one trace file into unified tables. Bad input raises TraceError with a one-line reason.
    limits: how far gzip may inflate (reading.Limits; default: from the environment). tables: the
    only tables wanted (None: all); an Nsight export's others are not read (nsys/tables.ingest_nsys),
    a PyTorch trace's events are all decoded but the others' rows are not built
    (kineto/tables.ingest_kineto)."""
    with using(limits):
        return _ingest(path, tables)


def _ingest(path: str, tables: set[str] | None) -> IngestResult:
    fmt, read = recognize(path)
    try:
        with gc_paused():
            # each source's read imports its reader: an Nsight export needs none of the JSON decoder's modules
            return read(path, tables)
    except TraceError:
        raise
    except MemoryError:
        raise TraceError(path, "out of memory while reading the trace") from None
    except Exception as e:  # noqa: BLE001 - any other failure is still a one-line, per-file error
        raise TraceError(path, f"cannot ingest {fmt} trace: {error_line(e, 300)}", ErrorKind.INTERNAL) from None
