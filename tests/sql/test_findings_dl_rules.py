"""sql/analysis/findings_dl_rules.sql: finding_tensor_core_alignment on literal operator shapes."""

from __future__ import annotations

import json

from .conftest import given, load_sql, rows

CPU_OP = ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "duration_ns", "name", "external_id", "args_json"]


def _linear(op_id: int, m: int, k: int, n: int) -> tuple:
    args = {"Input Dims": [[m, k], [n, k], [n]], "Input type": ["c10::BFloat16"] * 3}
    return ("t", op_id, 1, 1, op_id * 100, op_id * 100 + 50, 50, "aten::linear", op_id, json.dumps(args))


def test_only_dimensions_that_can_be_padded_are_flagged(con):
    given(con, "cpu_ops", CPU_OP, [_linear(1, 1, 4096, 4096),    # decode: M=1 is no alignment problem
                                   _linear(2, 4, 4096, 4096),    # M=4 neither (fewer rows than 8)
                                   _linear(3, 12, 4096, 4096),   # M=12 is: pad the batch to 16
                                   _linear(4, 1, 4096, 4100)])   # N=4100 is, whatever M
    given(con, "kernels", ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "external_id"],
          [("t", 1, 0, 7, i * 100 + 10, i * 100 + 40, i) for i in range(1, 5)])
    load_sql(con, "analysis/findings_dl_rules.sql")
    flagged = rows(con, "SELECT start_ns FROM finding_tensor_core_alignment ORDER BY start_ns")
    assert flagged == [(300,), (400,)]
