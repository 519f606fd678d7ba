"""sql/analysis/process_groups.sql (with process_group_calls and parallel_framework): each group's role
from its name, operations, members or the framework, on literal collective calls of a 4-rank run."""

from __future__ import annotations

import itertools

from .conftest import FILES, given, rows

COLUMNS = ["run_id", "trace_id", "pid", "call_index", "rank", "operation", "process_group_name",
           "process_group_desc", "process_group_ranks", "group_size"]


def load(con, calls, framework_op=None):
    # collectives is a view over the kernels; the rules only read these columns of it
    types = {"rank": "INTEGER", "pid": "BIGINT", "call_index": "BIGINT", "group_size": "BIGINT"}
    declared = ", ".join(f"{c} {types.get(c, 'VARCHAR')}" for c in COLUMNS)
    con.execute(f"CREATE TABLE collectives ({declared})")
    con.executemany(f"INSERT INTO collectives VALUES ({', '.join('?' for _ in COLUMNS)})", calls)
    given(con, "traces", ["trace_id", "world_size"], [(f"t{r}", 4) for r in range(4)])
    given(con, "cpu_ops", ["trace_id", "name"], [("t0", framework_op or "aten::mm")])
    given(con, "annotations", ["trace_id", "name"], [("t0", "ProfilerStep#1")])
    for path in ("analysis/process_group_calls.sql", "analysis/parallel_framework.sql", "analysis/process_groups.sql"):
        con.execute(FILES[path].text)


_CALL = itertools.count()  # a call is (trace, pid, call_index): unique across groups


def calls_of(group, ranks, operation="all_reduce", desc=None):
    return [("run", f"t{r}", 1, next(_CALL), r, operation, group, desc, str(ranks), len(ranks)) for r in ranks]


def roles(con):
    return rows(con, "SELECT group_name, layout, role, role_basis FROM process_groups ORDER BY group_name")


def test_membership_name_and_operations(con):
    load(con, calls_of("a", [0, 1]) + calls_of("b", [0, 2], "all_gather") + calls_of("tp0", [1, 3])
         + calls_of("x", [1, 3], "send", desc="mesh_pp") + calls_of("y", [0, 1, 2, 3], "all_to_all")
         + calls_of("z", [0, 1, 2, 3]) + calls_of("odd", [0, 1, 3]))
    assert roles(con) == [("a", "contiguous", "tensor", "membership"), ("b", "strided", "data", "membership"),
                          ("odd", "other", "unknown", None),
                          ("tp0", "strided", "tensor", "name"),  # the name wins over the members
                          ("x", "strided", "pipeline", "name"), ("y", "all", "expert", "operations"),
                          ("z", "all", "unknown", None)]


def test_a_group_of_all_ranks_under_ddp_is_data_parallel(con):
    load(con, calls_of("0", [0, 1, 2, 3]), framework_op="DistributedDataParallel.forward")
    assert roles(con) == [("0", "all", "data", "framework")]
    assert rows(con, "SELECT framework FROM parallel_framework") == [("DDP",)]


def test_unrecorded_calls_take_the_runs_only_group(con):
    calls = calls_of("0", [0, 1, 2, 3]) + [("run", "t1", 1, -1, 1, "all_reduce", None, None, None, None)]
    load(con, calls)
    assert rows(con, "SELECT group_name, is_recorded FROM process_group_calls WHERE call_index = -1") == [("0", False)]
    assert rows(con, "SELECT calls FROM process_groups") == [(5,)]
