"""Memory views over the reference trace vs. its ingest time (issue #20: at most a fifth).

- ingest: ingest_file of the 89 MB reference trace (decode + tables), as pytorch_ingest.
- memory views: each memory view fully evaluated (`SELECT count(*) FROM (SELECT * FROM view)`) on a
  lake holding only that trace, summed. DuckDB re-reads the Parquet each time.
  Ingest and views are measured in turn, ROUNDS times, and the best of each kept: on a loaded machine
  short queries and a long ingest are slowed unequally, and taking them side by side keeps the ratio
  honest.
- memory context: what working out the memory events' calling context and block pairing adds to the
  calling-context build at ingest (the same sweep places launch calls and allocator events).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
from tracelake.analysis import callctx_build
from tracelake.ingest.dispatch import ingest_file
from tracelake.lake.database import build_database, connect
from tracelake.lake.version import __version__
from tracelake.lake.writer import write_trace

from .common import SHARED, best_of
from .kineto_ingest import REFERENCE

ROUNDS = 5
VIEWS = ["memory_timeline", "memory_timeline_bucketed", "memory_allocations", "memory_peaks", "memory_summary",
         "memory_peak_breakdown", "operator_memory", "memory_sources", "finding_memory_growth",
         "finding_memory_fragmentation"]


def run() -> list[tuple[str, str]]:
    path = str(SHARED / REFERENCE)
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-memory-"))
    try:
        result = ingest_file(path)
        tables = dict(result.tables)
        t_build = best_of(lambda: callctx_build.build(tables))
        without = {**tables, "memory_events": pa.table({"event_id": pa.array([], pa.int64())})}
        t_build_without = best_of(lambda: callctx_build.build(without))
        tables.update(callctx_build.build(tables))
        lake = tmp / "lake"
        write_trace(lake, result.trace_id, tables, tracelake_version=__version__)
        build_database(lake)
        con = connect(lake)
        ingests, times = [], {view: [] for view in VIEWS}
        for _ in range(ROUNDS):
            ingests.append(best_of(lambda: ingest_file(path), repeat=1))
            for view in VIEWS:
                times[view].append(best_of(lambda v=view: con.execute(f"SELECT count(*) FROM (SELECT * FROM {v})")
                                           .fetchall(), repeat=1))
        t_ingest, times = min(ingests), {view: min(t) for view, t in times.items()}
        events = con.execute("SELECT count(*) FROM memory_events").fetchone()[0]
        con.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = sum(times.values())
    rows = [
        (f"Memory views, 89 MB reference trace ({events:,} allocator events): all {len(VIEWS)}", f"{total:.3f} s"),
        ("  ingest of the same trace (decode + tables)", f"{t_ingest:.2f} s"),
        ("  memory views / ingest (target <= 0.20)", f"{total / t_ingest:.3f}"),
    ]
    rows += [(f"  {view}", f"{t * 1000:.0f} ms") for view, t in times.items()]
    rows += [("  calling-context build with / without the memory context", f"{t_build:.2f} s / {t_build_without:.2f} s"),
             ("  load average when done (other work on the machine)", f"{os.getloadavg()[0]:.1f}")]
    return rows
