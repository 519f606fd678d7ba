"""Renders docs/schema.md from lake/schema.py (`make docs`); tests/test_generated_docs.py keeps the two in step."""

from __future__ import annotations

from .layout import PARTITION_PATTERN
from .schema import TABLES

HEADER = f"""# The unified schema

Generated from `lake/schema.py` by `make docs`; do not edit by hand.

Both ingesters (Nsight Systems SQLite exports and PyTorch profiler Chrome-trace JSON) fill the same
tables. The *sources* column says which source fills a column; a column a source does not fill is
NULL there. Missing values are always NULL, never a fake default.

## Time

- Every time is an integer number of nanoseconds on the trace's own clock: `start_ns`, `end_ns`,
  `ts_ns`; `duration_ns = end_ns - start_ns`.
- `traces.clock_offset_ns` converts to Unix-epoch nanoseconds: `epoch_ns = start_ns + clock_offset_ns`.
- **Nsight Systems**: times are the export's own integer ns (session timeline);
  `clock_offset_ns` = `TARGET_INFO_SESSION_START_TIME.utcEpochNs`.
- **PyTorch (Kineto)**: `ts`/`dur` are microseconds written with a nanosecond fraction. tracelake
  converts the number's *text* exactly (`1719853884123456.789` µs -> `1719853884123456789` ns;
  more than three fraction digits are rounded half-to-even), never through a float, which would
  shift absolute timestamps by tens of ns (a number written as a JSON string is read the same way;
  anything else is NULL). Traces with `baseTimeNanoseconds` (Kineto since 2024)
  have relative timestamps: the trace clock is Kineto's relative one and
  `clock_offset_ns = baseTimeNanoseconds`. Older traces carry absolute epoch µs: then
  `clock_offset_ns = 0`.

## Lake layout

`<lake>/{PARTITION_PATTERN}` (hive partitioning; `trace_id` is the partition
key and is not stored inside the files). See docs/lake.md.

"""


def render() -> str:
    out = [HEADER]
    for table in TABLES.values():
        out.append(f"## `{table.name}`\n\n{table.doc}\n\n| column | type | sources | meaning |\n|---|---|---|---|\n")
        for c in table.columns:
            out.append(f"| `{c.name}` | {c.type} | {c.sources} | {c.doc} |\n")
        out.append("\n")
    return "".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
