"""sql/analysis/collective_instances.sql: one collective matched across the ranks of a run, its transfer
time, waits and bandwidths; per-size bandwidth and per-rank waits."""

from __future__ import annotations

import json

import pytest

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name", "correlation_id"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]
OP = ["trace_id", "pid", "tid", "start_ns", "end_ns", "name", "args_json"]
TRACES = ["trace_id", "source", "path", "rank", "world_size", "start_ns", "end_ns", "clock_offset_ns"]
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
MIB = 1 << 20


def _rank(con, trace, rank, kernels, clock_offset_ns=0):
    """A rank's trace: kernels (start, end, MiB); each but the first launched under record_param_comms."""
    given(con, "traces", TRACES, [(trace, "pytorch", f"/run/{trace}.json", rank, 2, 0, 10_000_000, clock_offset_ns)])
    for i, (start, end, mib) in enumerate(kernels):
        given(con, "kernels", KERNEL, [(trace, rank + 10, 0, 20, start, end, ALL_REDUCE, i)])
        if i == 0:
            continue  # launched before the profiling window: no launch, no args
        given(con, "api_calls", API, [(trace, rank + 10, 1, start - 500, start - 400, i, "cuLaunchKernelEx", "driver")])
        params = {"Collective name": "allreduce", "dtype": "Float", "In msg nelems": mib * MIB // 4,
                  "Out msg nelems": mib * MIB // 4, "Group size": 2, "Process Group Name": "0"}
        given(con, "cpu_ops", OP, [(trace, rank + 10, 1, start - 600, start - 300, "record_param_comms",
                                    json.dumps(params))])


def test_matched_across_ranks_after_aligning_the_windows(con):
    # rank 0's window opens one collective earlier; rank 1 arrives last at the first common one
    _rank(con, "r0", 0, [(1_000, 2_000, 4), (10_000, 60_000, 4), (60_000, 70_000, 4)])
    _rank(con, "r1", 1, [(50_000, 60_000, 4), (60_100, 70_000, 4)], clock_offset_ns=0)
    load_sql(con, "analysis/collective_instances.sql")
    assert rows(con, """SELECT instance, matched_by, operation, bytes, group_size, ranks_matched, skew_ns, transfer_ns,
                               last_rank, max_wait_ns, wait_ns_by_rank, algbw_gb_per_s, busbw_gb_per_s, is_bound
                        FROM collective_instances ORDER BY instance""") == [
        (0, "order", "all_reduce", 4 * MIB, 2, 2, 40_000, 10_000, 1, 40_000, [40_000, 0], 4 * MIB / 10_000,
         4 * MIB / 10_000, False),
        (1, "order", "all_reduce", 4 * MIB, 2, 2, 100, 9_900, 1, 100, [100, 0], 4 * MIB / 9_900, 4 * MIB / 9_900,
         False)]
    assert rows(con, "SELECT rank, collectives, times_last, wait_ns, transfer_ns, max_wait_ns, others_wait_ns "
                     "FROM collective_rank_waits ORDER BY rank") == [
        (0, 2, 0, 40_100, 19_900, 40_000, 0), (1, 2, 2, 0, 19_900, 0, 40_100)]
    assert rows(con, "SELECT operation, bytes, count, median_transfer_ns, p50_wait_ns, p90_wait_ns, total_wait_ns "
                     "FROM collective_bandwidth") == [("all_reduce", 4 * MIB, 2, 9_950, 50, 28_030, 40_100)]


def test_sequence_numbers_match_whatever_the_order(con):
    _rank(con, "r0", 0, [(0, 1, 1), (10_000, 20_000, 1)])
    _rank(con, "r1", 1, [(0, 1, 1), (15_000, 20_000, 1)])
    con.execute("""UPDATE cpu_ops SET args_json = json_merge_patch(args_json, '{"Seq": 3}')""")
    load_sql(con, "analysis/collective_instances.sql")
    assert rows(con, "SELECT matched_by, transfer_ns, last_rank, wait_ns_by_rank FROM collective_instances "
                     "WHERE matched_by = 'seq'") == [("seq", 5_000, 1, [5_000, 0])]


def test_a_lone_rank_gets_bounds(con):
    _rank(con, "r0", 0, [(0, 1, 1), (10_000, 20_000, 1)])
    load_sql(con, "analysis/collective_instances.sql")
    assert rows(con, "SELECT matched_by, bytes, transfer_ns, busbw_gb_per_s, is_bound FROM collective_instances "
                     "ORDER BY instance") == [
        ("single", None, 1, None, True), ("single", MIB, 10_000, pytest.approx(MIB / 10_000), True)]
    assert rows(con, "SELECT count(*) FROM collective_rank_waits") == [(0,)]


def test_some_ranks_of_a_larger_group_give_bounds(con):
    # two rank files of a group of 8: matched across the two, bus factor of 8 ranks, marked as bounds
    _rank(con, "r0", 0, [(0, 1, 1), (10_000, 20_000, 1)])
    _rank(con, "r1", 1, [(0, 1, 1), (12_000, 20_000, 1)])
    con.execute("""UPDATE cpu_ops SET args_json = json_merge_patch(args_json, '{"Group size": 8}')""")
    load_sql(con, "analysis/collective_instances.sql")
    assert rows(con, "SELECT ranks_matched, group_size, transfer_ns, last_rank, busbw_gb_per_s, is_bound "
                     "FROM collective_instances WHERE bytes IS NOT NULL") == [
        (2, 8, 8_000, 1, pytest.approx(MIB / 8_000 * 2 * 7 / 8), True)]
