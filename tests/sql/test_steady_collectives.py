"""sql/analysis/steady_collectives.sql: the steady steps' collectives split into the wait for the
last rank and the transfer, keyed by the rank that arrived last."""

from __future__ import annotations

import json

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name", "correlation_id"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]
OP = ["trace_id", "pid", "tid", "start_ns", "end_ns", "name", "args_json"]
TRACES = ["trace_id", "source", "path", "rank", "world_size", "start_ns", "end_ns", "clock_offset_ns"]
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
STEP = 100_000


def _rank(con, trace, rank, late_ns):
    """Six 100 us steps, each with one 4 MiB all-reduce; this rank arrives late_ns after 50 us, and
    every all-reduce ends at 60 us + the latest arrival's lateness (300 ns)."""
    pid = rank + 10
    given(con, "traces", TRACES, [(trace, "pytorch", f"/run/{trace}.json", rank, 2, 0, 10**9, 0)])
    for i in range(6):
        s = i * STEP
        given(con, "cpu_ops", OP, [(trace, pid, 1, s, s + STEP - 1, f"ProfilerStep#{i}", "{}")])
        start, end = s + 50_000 + late_ns, s + 60_300
        given(con, "kernels", KERNEL, [(trace, pid, 0, 20, start, end, ALL_REDUCE, i)])
        given(con, "api_calls", API, [(trace, pid, 1, start - 500, start - 400, i, "cuLaunchKernelEx", "driver")])
        params = {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": 1 << 20,
                  "Out msg nelems": 1 << 20, "Group size": 2, "Process Group Name": "0"}
        given(con, "cpu_ops", OP, [(trace, pid, 1, start - 600, start - 300, "record_param_comms", json.dumps(params))])


def test_the_early_rank_waits_for_the_late_one(con):
    _rank(con, "r0", 0, 0)
    _rank(con, "r1", 1, 300)
    load_sql(con, "analysis/steady_collectives.sql")
    got = rows(con, "SELECT trace_id, rank, operation, last_rank, calls, duration_ns, wait_ns, transfer_ns, "
                    "skew_ns, bytes FROM steady_collectives ORDER BY trace_id")
    steady = rows(con, "SELECT count(*) FROM steady_steps WHERE trace_id = 'r0'")[0][0]
    assert steady >= 3
    n = steady
    assert got == [("r0", 0, "all_reduce", 1, n, n * 10_300, n * 300, n * 10_000, n * 300, n * (4 << 20)),
                   ("r1", 1, "all_reduce", 1, n, n * 10_000, 0, n * 10_000, n * 300, n * (4 << 20))]


def test_a_rank_alone_has_no_wait(con):
    _rank(con, "r0", 0, 0)
    load_sql(con, "analysis/steady_collectives.sql")
    got = rows(con, "SELECT last_rank, wait_ns, transfer_ns = duration_ns FROM steady_collectives")
    assert len(got) == 1 and got[0] == (None, 0, True)
