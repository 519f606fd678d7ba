"""Which ingester reads a file: decided from its content, not its name."""

from __future__ import annotations

import gc
import gzip
import zlib
from contextlib import contextmanager

from ..lake.error_line import error_line
from .discover import REPORT_SUFFIXES
from .errors import ErrorKind, TraceError
from .ingest_result import IngestResult
from .kineto.text import UTF8_BOM
from .nsys.reader import SQLITE_MAGIC
from .nsys.report import ingest_report
from .reading import Limits, open_input, read_head, using


def detect_format(path: str) -> str:
    """'nsys', 'pytorch' or 'nsys-rep' (an Nsight Systems report); raises TraceError for anything else."""
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
    if head.startswith(SQLITE_MAGIC):
        return "nsys"
    if head.removeprefix(UTF8_BOM).lstrip()[:1] in (b"{", b"["):
        return "pytorch"
    if path.endswith(REPORT_SUFFIXES):
        return "nsys-rep"
    if head[:4] == b"PK\x03\x04":
        raise TraceError(path, "a zip archive, not a trace (an Nsight Systems report needs the name "
                               "<name>.nsys-rep, or run `nsys export --type sqlite` on it)", ErrorKind.NOT_A_TRACE)
    raise TraceError(path, "unknown format: neither an Nsight Systems SQLite export nor a PyTorch profiler JSON trace",
                     ErrorKind.NOT_A_TRACE)


@contextmanager
def _gc_paused():
    """Ingest builds millions of short-lived objects and no reference cycles; Python's cyclic GC
    would rescan the growing heap again and again (measured: per-event cost doubling from 1x to
    10x trace size). Reference counting still frees everything."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def ingest_file(path: str, limits: Limits | None = None, tables: set[str] | None = None) -> IngestResult:
    """Read one trace file into unified tables. Bad input raises TraceError with a one-line reason.
    limits: how far gzip may inflate (reading.Limits; default: from the environment). tables: the
    only tables wanted (None: all); an Nsight export's others are not read (nsys.ingest_nsys), a
    PyTorch trace's events are all decoded but the others' rows are not built (kineto.ingest_kineto)."""
    with using(limits):
        return _ingest(path, tables)


def _ingest(path: str, tables: set[str] | None) -> IngestResult:
    fmt = detect_format(path)
    try:
        with _gc_paused():
            # each reader imported when used: an Nsight export needs none of the JSON decoder's modules
            if fmt in ("nsys", "nsys-rep"):
                from .nsys.tables import ingest_nsys

                if fmt == "nsys-rep":
                    return ingest_report(path, lambda export: ingest_nsys(export, tables))
                return ingest_nsys(path, tables)
            from .kineto.tables import ingest_kineto

            return ingest_kineto(path, tables)
    except TraceError:
        raise
    except MemoryError:
        raise TraceError(path, "out of memory while reading the trace") from None
    except Exception as e:  # noqa: BLE001 - any other failure is still a one-line, per-file error
        raise TraceError(path, f"cannot ingest {fmt} trace: {error_line(e, 300)}", ErrorKind.INTERNAL) from None
