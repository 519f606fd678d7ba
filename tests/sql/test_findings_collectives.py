"""sql/analysis/findings_collectives.sql: the straggler, low bus bandwidth and tiny-collective rules at
their thresholds."""

from __future__ import annotations

import json

import pytest

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name", "correlation_id"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]
OP = ["trace_id", "pid", "tid", "start_ns", "end_ns", "name", "args_json"]
TRACES = ["trace_id", "source", "path", "rank", "world_size", "start_ns", "end_ns", "clock_offset_ns"]
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def _rank(con, trace, rank, calls, world=2):
    """A rank's trace of all-reduces: (start, end, bytes) each, launched under record_param_comms."""
    given(con, "traces", TRACES, [(trace, "pytorch", f"/run/{trace}.json", rank, world, 0, 10**9, 0)])
    for i, (start, end, nbytes) in enumerate(calls):
        given(con, "kernels", KERNEL, [(trace, rank + 10, 0, 20, start, end, ALL_REDUCE, i)])
        given(con, "api_calls", API, [(trace, rank + 10, 1, start - 500, start - 400, i, "cuLaunchKernelEx", "driver")])
        params = {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": nbytes // 4,
                  "Out msg nelems": nbytes // 4, "Group size": world, "Process Group Name": "0"}
        given(con, "cpu_ops", OP, [(trace, rank + 10, 1, start - 600, start - 300, "record_param_comms",
                                    json.dumps(params))])


def _findings(con, rule):
    load_sql(con, "analysis/findings_collectives.sql")
    return rows(con, f"SELECT trace_id, duration_ns, evidence FROM finding_{rule}")


@pytest.mark.parametrize("calls,fires", [(50, True), (49, False)])
def test_tiny_collectives(con, calls, fires):
    _rank(con, "t", 0, [(i * 1000, i * 1000 + 100, 4096) for i in range(calls)]
          + [(10**6 + i * 1000, 10**6 + i * 1000 + 100, 4 << 20) for i in range(calls)])
    found = _findings(con, "tiny_collectives")
    assert bool(found) == fires
    if fires:
        assert found == [("t", 5000, "50 of 100 collectives move under 1 MiB (median 4.0 KiB) and take 0.005 ms")]


@pytest.mark.parametrize("slow_ns,fires", [(20_001, True), (19_999, False)])
def test_low_bandwidth_against_the_same_size_in_the_run(con, slow_ns, fires):
    # four 4 MiB all-reduces on two ranks; all take 10 us but one (median transfer 10 us)
    durations = [10_000, 10_000, slow_ns, 10_000]
    starts = [i * 100_000 for i in range(4)]
    _rank(con, "r0", 0, [(s, s + d, 4 << 20) for s, d in zip(starts, durations)])
    _rank(con, "r1", 1, [(s, s + d, 4 << 20) for s, d in zip(starts, durations)])
    found = _findings(con, "low_collective_bandwidth")
    assert [f[0] for f in found] == (["r0"] if fires else [])
    if fires:
        assert found[0][1] == slow_ns - 10_000  # the time lost against the run's median bandwidth


def test_straggler_needs_most_of_the_waiting(con):
    # rank 1 arrives 2 ms late at three collectives, rank 0 0.5 ms late at one
    _rank(con, "r0", 0, [(0, 2_010_000, 1 << 20), (3_000_000, 5_010_000, 1 << 20), (6_000_000, 8_010_000, 1 << 20),
                         (9_500_000, 9_510_000, 1 << 20)])
    _rank(con, "r1", 1, [(2_000_000, 2_010_000, 1 << 20), (5_000_000, 5_010_000, 1 << 20),
                         (8_000_000, 8_010_000, 1 << 20), (9_000_000, 9_510_000, 1 << 20)])
    found = _findings(con, "collective_straggler")
    assert [(f[0], f[1]) for f in found] == [("r1", 6_000_000)]
    assert found[0][2].startswith("rank 1 arrived last at 3 of 4 collectives; the other ranks waited 6.000 ms")
    assert "at the 3 it held up by more than 1 ms they waited 2.000 ms (median), up to 2.000 ms" in found[0][2]
