"""`tracelake export --format perfetto`: one trace of the lake as a Chrome trace-event JSON file
(sql/analysis/chrome_trace_events.sql: the original events plus tracelake's steps, critical path,
GPU idle gaps by cause and findings), which Perfetto's UI and chrome://tracing open.

Chrome JSON rather than Perfetto's protobuf: both viewers open it, PyTorch's profiler writes the
same format (so tracelake reads its own export back: tests/test_trace_export.py), and it is
written with DuckDB's to_json alone, no protobuf schema or dependency. The protobuf would be
smaller and load faster in Perfetto; chrome://tracing cannot open it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from ..lake import atomic_write

ANALYSIS_PID = 2147483647  # the process of tracelake's tracks (chrome_trace_events)


def write(con, trace_id: str, out: str | Path) -> int:
    """Write the trace's events to `out` (gzip-compressed when it ends in .gz); returns the number
    of events written."""
    meta = con.execute("SELECT rank, world_size, distributed_backend, file_name FROM traces WHERE trace_id = ?",
                       [trace_id]).fetchall()[0]
    head = {"displayTimeUnit": "ms", "exportedBy": "tracelake", "sourceFile": meta[3]}
    if meta[0] is not None:
        head["distributedInfo"] = {"rank": meta[0], "world_size": meta[1], "backend": meta[2]}
    return write_document(out, head, con.execute(
        "SELECT event FROM chrome_trace_events(?) ORDER BY ts_ns, event", [trace_id]))


def write_document(out: str | Path, head: dict, events) -> int:
    """{head..., "traceEvents": [events]} to `out`, one event a line (gzip when it ends in .gz);
    `events`: a cursor of one JSON text column, written as it is fetched (a 60k-event trace's
    lines, joined and compressed in memory, took ~70 MB). Returns the number of events."""
    written = 0

    def write_to(f) -> None:
        nonlocal written
        f.write((json.dumps(head)[:-1] + ', "traceEvents": [\n').encode())
        while batch := events.fetchmany(BATCH_EVENTS):
            f.write(((",\n" if written else "") + ",\n".join(r[0] for r in batch)).encode())
            written += len(batch)
        f.write(b"\n]}\n")

    _write_atomically(Path(out), write_to)
    return written


# Events fetched and written at a time.
BATCH_EVENTS = 10_000


def page_export_path(page: Path) -> Path:
    """Where `report --export` / `run --export` put a page's export: beside it, <page stem>.trace.json.gz."""
    return page.with_name(page.stem + ".trace.json.gz")


def _write_atomically(out: Path, write_to) -> None:
    """write_to(a binary file) into `out`, gzip-compressed when it ends in .gz; to a temporary file
    renamed into place, so a reader (or a page linking it) never sees half a file. The gzip header
    holds no time (as `gzip -n`): the same trace gives the same bytes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write.replacing(out) as tmp, open(tmp, "wb") as f:
        if out.suffix == ".gz":
            with gzip.GzipFile(filename="", mode="wb", compresslevel=3, fileobj=f, mtime=0) as z:
                write_to(z)
        else:
            write_to(f)
