"""sql/analysis/collective_flow_points.sql: each matched collective's ranks in order of arrival on
the common clock, with the kernel (GPU, stream, start on the rank's own clock) a flow binds to."""

from __future__ import annotations

from .conftest import load_sql, rows
from .test_collective_instances import _rank


def test_the_chain_follows_arrival_on_the_common_clock(con):
    # rank 1's clock runs 5 us behind: in the second collective it starts first on its own clock,
    # last on the common one;
    # wait_ns: duration beyond the shortest (rank 0: 50 us - 9 us)
    _rank(con, "r0", 0, [(1_000, 2_000, 4), (10_000, 60_000, 4), (60_000, 70_000, 4)])
    _rank(con, "r1", 1, [(46_000, 55_000, 4), (55_100, 65_000, 4)], clock_offset_ns=5_000)
    load_sql(con, "analysis/collective_flow_points.sql")
    assert rows(con, """SELECT instance, rank, device_id, stream_id, start_ns, arrival_ns, wait_ns, hop, hops
                        FROM collective_flow_points ORDER BY instance, hop""") == [
        (0, 0, 0, 20, 10_000, 10_000, 41_000, 0, 2), (0, 1, 0, 20, 46_000, 51_000, 0, 1, 2),
        (1, 0, 0, 20, 60_000, 60_000, 100, 0, 2), (1, 1, 0, 20, 55_100, 60_100, 0, 1, 2)]
