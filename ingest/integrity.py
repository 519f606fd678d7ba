"""Integrity checks at ingest, shared by both sources: what a damaged or hand-edited trace could
otherwise turn into silently wrong numbers.

- Lookup tables must have unique keys. A name table (Nsight's StringIds) or a device, process or
  thread list with a repeated id would multiply every row joined to it: repeated ids are reduced
  to their first row and a warning counts them (how many, and how many had different values).
- Intervals must not end before they start. Such rows (a negative duration) are dropped and
  counted in a warning; rows whose end is unknown (NULL, e.g. NVTX marks) are kept.
"""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

# Unified tables that other tables are joined to, and their keys.
LOOKUP_KEYS = {"devices": ["device_id"], "processes": ["pid"], "threads": ["pid", "tid"]}


def unique_ids(frame: pl.DataFrame, key: str | list[str], table: str, warnings: list[str]) -> pl.DataFrame:
    """`frame` with one row per key (the first); a warning when some key was repeated."""
    keys = [key] if isinstance(key, str) else key
    first = frame.unique(keys, keep="first", maintain_order=True)
    repeated = frame.height - first.height
    if repeated:
        differing = frame.unique().height - first.height
        warnings.append(f"{table}: {repeated} rows repeat an id ({', '.join(keys)}) already used "
                        f"({differing} with different values); kept the first row of each id")
    return first


def drop_reversed_intervals(tables: dict[str, pa.Table | None], warnings: list[str]) -> None:
    """Drop rows with end_ns < start_ns from every interval table, in place, counting them per table."""
    for name, table in tables.items():
        if table is None or "end_ns" not in table.column_names or "start_ns" not in table.column_names:
            continue
        reversed_ = pc.less(table.column("end_ns"), table.column("start_ns"))
        n = pc.sum(reversed_).as_py() or 0
        if n:
            tables[name] = table.filter(pc.invert(reversed_).fill_null(True))
            warnings.append(f"dropped {n} {name} rows with a negative duration (end before start)")


def unique_lookups(tables: dict[str, pa.Table | None], warnings: list[str]) -> None:
    """Reduce the lookup tables (LOOKUP_KEYS) to one row per key, in place."""
    for name, keys in LOOKUP_KEYS.items():
        table = tables.get(name)
        if table is None or table.num_rows < 2:
            continue
        frame = pl.from_arrow(table)
        unique = unique_ids(frame, keys, name, warnings)
        if unique.height != frame.height:
            tables[name] = unique.to_arrow().cast(table.schema)
