"""Operator views vs. ingest time on the 281k-event PyTorch trace (issue #17: the views together
cost at most a fifth of the trace's ingest).

The trace is ingested (decode + tables, as the callctx case measures it) and written to a lake of
its own; each operator view is then fully evaluated (`SELECT count(*) FROM (SELECT * FROM view)`)
on the lake's database, best of three.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tracelake.analysis import __version__
from tracelake.analysis.database import connect
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.lake_writer import write_trace

from .common import SHARED, best_of
from .kineto_ingest import REFERENCE

VIEWS = ["op_efficiency", "op_efficiency_summary", "mfu", "model_coverage", "operator_summary"]
MORE = ["operator_summary_by_shapes"]


def run() -> list[tuple[str, str]]:
    path = str(SHARED / REFERENCE)
    result = ingest_file(path)
    t_ingest = best_of(lambda: ingest_file(path))
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-ops-"))
    try:
        write_trace(tmp / "lake", result.trace_id, result.tables, tracelake_version=__version__)
        con = connect(tmp / "lake")
        times = {v: best_of(lambda v=v: con.execute(f"SELECT count(*) FROM (SELECT * FROM {v})").fetchone())
                 for v in VIEWS + MORE}
        calls = con.execute("SELECT count(*) FROM op_efficiency").fetchone()[0]
        con.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total = sum(times[v] for v in VIEWS)
    rows = [("Operator views on the 89 MB / 281k-event trace", f"{calls:,} modelled calls"),
            ("  ingest of the trace (decode + tables)", f"{t_ingest:.3f} s")]
    rows += [(f"  {v}", f"{times[v]:.3f} s") for v in VIEWS]
    rows += [("  the five views together; / ingest (target <= 0.20)", f"{total:.3f} s; {total / t_ingest:.2f}")]
    rows += [(f"  {v} (not in the target)", f"{times[v]:.3f} s") for v in MORE]
    return rows
