"""sql/analysis/run_first_rank.sql: the lowest rank's trace of each distributed run."""

from __future__ import annotations

from .conftest import given, load_sql, rows

TRACE = ["trace_id", "source", "path", "rank", "world_size", "start_ns", "end_ns", "clock_offset_ns"]
KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "duration_ns", "name"]


def test_empty(con):
    load_sql(con, "analysis/run_first_rank.sql")
    assert rows(con, "SELECT * FROM run_first_rank") == []


def test_first_rank(con):
    given(con, "traces", TRACE, [("r1", "pytorch", "/d/r1.json", 1, 2, 0, 100, 0),
                                 ("r0", "pytorch", "/d/r0.json", 0, 2, 0, 100, 0),
                                 ("solo", "pytorch", "/e/solo.json", 0, 1, 0, 100, 0)])  # one rank: not listed
    given(con, "kernels", KERNEL, [(t, 1, 0, 7, 0, 10, 10, "ncclKernel_AllReduce") for t in ("r0", "r1", "solo")])
    load_sql(con, "analysis/run_first_rank.sql")
    assert rows(con, "SELECT trace_id FROM run_first_rank") == [("r0",)]
