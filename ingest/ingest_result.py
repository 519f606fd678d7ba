"""What an ingester returns, and the one-row `traces` table every ingester builds."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field

import orjson
import pyarrow as pa

from .schema import TABLES


@dataclass
class IngestResult:
    trace_id: str
    tables: dict[str, pa.Table]
    warnings: list[str] = field(default_factory=list)

    @property
    def event_count(self) -> int:
        return self.tables["traces"].column("event_count")[0].as_py()


def _version() -> str:
    from tracelake.analysis import __version__

    return __version__


def traces_row(*, source, path, file_bytes, content_sha256, tool, tool_version, schema_version, start_ns,
               end_ns, clock_offset_ns, is_truncated, warnings, metadata, event_count, rank=None,
               world_size=None, distributed_backend=None, hostname=None) -> pa.Table:
    row = {
        "source": source,
        "path": str(path),
        "file_name": os.path.basename(str(path)),
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
        "tracelake_version": _version(),
    }
    schema = TABLES["traces"].arrow_schema
    return pa.Table.from_pylist([row], schema=schema)
