"""What an ingester returns, and the one-row `traces` table every ingester builds."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from ..lake.schema import EVENT_TABLES, TABLES
from .printable import path_text

# Tables whose intervals make up a trace's span.
_SPAN_TABLES = ("kernels", "memcpy", "memset", "graph_executions", "api_calls", "cpu_ops", "annotations",
                "python_frames", "os_runtime_calls")


def trace_span(tables: dict[str, pa.Table]) -> tuple[int | None, int | None]:
    """Earliest start and latest end over the interval tables (None, None when there are none)."""
    starts = [pc.min(tables[n].column("start_ns")).as_py() for n in _SPAN_TABLES if tables.get(n) is not None]
    ends = [pc.max(tables[n].column("end_ns")).as_py() for n in _SPAN_TABLES if tables.get(n) is not None]
    starts, ends = [s for s in starts if s is not None], [e for e in ends if e is not None]
    return (min(starts), max(ends)) if starts else (None, None)


def event_count(tables: dict[str, pa.Table]) -> int:
    return sum(tables[n].num_rows for n in EVENT_TABLES if tables.get(n) is not None)


@dataclass
class IngestResult:
    trace_id: str
    tables: dict[str, pa.Table]
    warnings: list[str] = field(default_factory=list)

    @property
    def event_count(self) -> int:
        return self.tables["traces"].column("event_count")[0].as_py()


def traces_row(*, source, path, file_bytes, content_sha256, tool, tool_version, schema_version, start_ns,
               end_ns, clock_offset_ns, is_truncated, warnings, metadata, event_count, rank=None,
               world_size=None, distributed_backend=None, hostname=None) -> pa.Table:
    row = {
        "source": source,
        "path": path_text(path),
        "file_name": os.path.basename(path_text(path)),
        "file_bytes": file_bytes,
        "content_sha256": content_sha256,
        "tool": tool,
        "tool_version": tool_version,
        "schema_version": schema_version,
        "start_ns": start_ns,
        "end_ns": end_ns,
        "duration_ns": None if start_ns is None or end_ns is None else end_ns - start_ns,
        "clock_offset_ns": clock_offset_ns,
        "rank": rank,
        "world_size": world_size,
        "distributed_backend": distributed_backend,
        "hostname": hostname,
        "is_truncated": bool(is_truncated),
        "warnings": list(warnings),
        "metadata_json": orjson.dumps(metadata, default=str).decode(),
        "event_count": event_count,
        "ingested_at": dt.datetime.now(dt.UTC),
        "tracelake_version": None,  # stamped by the lake writer (writer.write_trace)
    }
    schema = TABLES["traces"].arrow_schema
    return pa.Table.from_pylist([row], schema=schema)
