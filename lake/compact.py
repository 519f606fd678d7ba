"""Compaction: many traces' partitions of each table merged into one Parquet file per table.

A lake of N traces has about 80 files per trace (28 base tables, ~56 materialized views), and
DuckDB lists a table's partition folders on every query that reads it, so per-query time would
grow with the lake. `compact` merges the loose partitions of all complete traces (and the segments
that tombstones have voided rows of, or all segments once there are more than MAX_SEGMENTS) into a
new segment: one file per table and derived table, `<folder>/part-<segment>.parquet`, with
`trace_id` as a column, sorted by it and written in small row groups, so a `trace_id = X` filter
skips the other traces by the row groups' min/max statistics. Traces ingested later are written
as loose partitions again and read beside the segments (lake/layout.py, lake/scan.py).

Crash safety: the segment's files are written under .staging/, moved into place (unread until the
manifest names them), then the manifest is replaced (the commit), then the loose partitions and
the replaced segments are removed. A compaction stopped before the commit leaves files nobody
reads (removed by the next one); one stopped after it is finished by the next command that writes
or builds the database (layout.finish_compaction).
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import layout, materialize
from .lock import writes_lake
from .sql_literal import sql_string

MAX_SEGMENTS = 8
ROW_GROUP_ROWS = 16384  # rows per row group: a trace's rows span few groups, the footer stays small
MEMORY_LIMIT = "2GB"  # DuckDB's, while compacting (its default is 80% of the machine's memory)
AUTO_LOOSE = 1000  # `tracelake run` compacts when the lake has at least this many loose traces


@dataclass
class CompactSummary:
    traces: int = 0  # traces in the new segment
    loose: int = 0  # of which were loose partitions before
    segments_rewritten: int = 0
    files_before: int = 0
    files_after: int = 0
    seconds: float = 0.0


def _folders(lake: Path) -> list[str]:
    from .schema import TABLES

    return list(TABLES) + [layout.derived_folder(v, fp) for v, fp in materialize.view_fingerprints().items()]


def _columns(con, folder: str, source: str) -> str:
    """The base table's columns (NULL for those no file has yet), or every column of a derived table."""
    from .schema import TABLES

    spec = TABLES.get(folder)
    if spec is None:
        return "*"
    from .base_tables import present_or_null

    return present_or_null(con, spec, source)


def _source(lake: Path, folder: str, loose: list[str], rewritten: list[str]) -> tuple[str | None, set[str]]:
    """The rows the new segment takes for `folder` (loose partitions and the rewritten segments'
    live rows) and the traces that have them (a trace may have a partition of no rows)."""
    parts, present = [], set()
    files = []
    for t in loose:
        if (f := layout.loose_file(lake, folder, t)).exists():
            files.append(str(f))
            present.add(t)
    if files:
        # unifying schemas opens every file: only where partitions may differ (older tracelake versions)
        from .schema import TABLES

        union = ", union_by_name = true" if folder in TABLES and not layout.uniform_schema(lake, folder) else ""
        parts.append("SELECT * FROM read_parquet([" + ", ".join(sql_string(f) for f in files) + "], "
                     f"hive_partitioning = true, hive_types = {{'trace_id': VARCHAR}}{union})")
    for seg in rewritten:
        for f, gone in layout.segment_sources(lake, folder, segment=seg):
            keep = f" WHERE trace_id NOT IN ({', '.join(sql_string(t) for t in gone)})" if gone else ""
            parts.append(f"SELECT * FROM read_parquet({sql_string(f)}, hive_partitioning = false){keep}")
            present |= layout.segment_trace_ids(lake, folder, segment=seg) - set(loose)
    return ("(" + " UNION ALL BY NAME ".join(parts) + ")" if parts else None), present


def count_files(lake: Path) -> int:
    import os

    return sum(len(files) for _, _, files in os.walk(lake))


@writes_lake(lambda a: a["lake"])  # one writer at a time
def compact(lake: str | Path, count: bool = True) -> CompactSummary:
    """Merge the lake's loose partitions (and voided or surplus segments) into one new segment."""
    t0 = time.perf_counter()
    lake = layout.prepare_for_writing(Path(lake).resolve())  # also finishes a stopped compaction
    layout.remove_orphan_segments(lake)
    summary = CompactSummary(files_before=count_files(lake) if count else 0)
    m = layout.manifest(lake)
    segments = m["segments"]
    loose = sorted(layout.loose_trace_ids(lake, "traces"))
    rewrite = [s for s in segments if layout.has_tombstones(lake, s)]
    if len(segments) - len(rewrite) + 1 > MAX_SEGMENTS:
        rewrite = list(segments)
    if not loose and not rewrite:
        summary.files_after, summary.seconds = summary.files_before, time.perf_counter() - t0
        return summary
    kept = set()  # traces whose rows the rewritten segments still hold
    for s in rewrite:
        kept |= set(segments[s]["traces"]) - layout.removed_everywhere(lake, s)
    traces = sorted(set(loose) | kept)
    seg = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    staging = lake / layout.STAGING / f"compact.{seg}"
    dirs: dict[str, list[str]] = {}
    con = duckdb.connect()
    try:
        (staging / "spill").mkdir(parents=True)
        # The loose partitions are read in trace_id order (one file per trace), which DuckDB keeps
        # when it preserves insertion order: sorted without a sort (1,000 demo copies: 43.6 s and
        # 1.3 GB peak instead of 54.9 s and 2.2 GB). Rows of rewritten segments join them: sorted.
        # A sort spills to disk instead of taking most of the machine's memory.
        order = " ORDER BY trace_id" if rewrite else ""
        con.execute(f"SET preserve_insertion_order = {'false' if rewrite else 'true'}; "
                    f"SET memory_limit = '{MEMORY_LIMIT}'; SET temp_directory = {sql_string(str(staging / 'spill'))}")
        for folder in _folders(lake):
            source, present = _source(lake, folder, loose, rewrite)
            if source is None:
                continue
            staged = layout.staged_segment_file(staging, folder, seg)
            staged.parent.mkdir(parents=True, exist_ok=True)
            cols = _columns(con, folder, source)
            con.execute(f"COPY (SELECT {cols} FROM {source}{order}) TO {sql_string(str(staged))} "
                        f"(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
            dirs[folder] = sorted(set(traces) - present)
        for folder in dirs:  # in place, but unread until the manifest names them
            layout.place_segment_file(lake, staging, folder, seg)
    finally:
        con.close()
        layout.discard_staging(staging)
    old_dirs = sorted({f for s in rewrite for f in segments[s]["dirs"]})
    new_segments = {s: info for s, info in segments.items() if s not in rewrite}
    new_segments[seg] = {"traces": traces, "dirs": dirs}
    layout.write_manifest(lake, {"generation": seg, "segments": new_segments,
                                      "cleanup": {"segment": seg, "loose": loose, "drop": rewrite, "dirs": old_dirs}})
    layout.finish_compaction(lake)
    from .database import update_database

    update_database(lake)
    summary.traces, summary.loose, summary.segments_rewritten = len(traces), len(loose), len(rewrite)
    summary.files_after = count_files(lake) if count else 0
    summary.seconds = time.perf_counter() - t0
    return summary
