"""sql/analysis/callctx_icicle.sql: the icicle layout, children side by side inside their parent."""

from __future__ import annotations

from .conftest import given, load_sql, rows

NODE = ["trace_id", "tree", "node_id", "parent_id", "depth", "label", "kind"]
OP = ["trace_id", "tree", "node_id", "category", "start_ns", "duration_ns"]


def test_empty(con):
    load_sql(con, "analysis/callctx_icicle.sql")
    assert rows(con, "SELECT * FROM callctx_icicle") == []


def test_layout(con):
    given(con, "callctx_nodes", NODE, [
        ("t", "stack", 0, None, 0, "<root>", "root"),
        ("t", "stack", 1, 0, 1, "train.py(1): main", "python"),
        ("t", "stack", 2, 1, 2, "aten::mm", "op"),
        ("t", "stack", 3, 2, 3, "sm90_gemm", "kernel"),
        ("t", "stack", 4, 1, 2, "aten::add", "op"),
        ("t", "stack", 5, 4, 3, "elementwise", "kernel"),
        ("t", "stack", 6, 0, 1, "tiny.py(1): f", "python"),   # 0.4 %: under min_pct, not shown
        ("t", "stack", 7, 6, 2, "k", "kernel"),
        ("t", "nvtx", 0, None, 0, "<root>", "root"),           # the other tree: not drawn
    ])
    given(con, "callctx_gpu_ops", OP, [("t", "stack", 3, "kernel", 0, 600), ("t", "stack", 5, "kernel", 0, 396),
                                       ("t", "stack", 7, "kernel", 0, 4)])
    load_sql(con, "analysis/callctx_icicle.sql")
    assert rows(con, "SELECT node_id, depth, x0, x1, label, kind FROM callctx_icicle ORDER BY depth, x0") == [
        (1, 1, 0.0, 99.6, "train.py(1): main", "python"),
        (2, 2, 0.0, 60.0, "aten::mm", "op"), (4, 2, 60.0, 99.6, "aten::add", "op"),
        (3, 3, 0.0, 60.0, "sm90_gemm", "compute"), (5, 3, 60.0, 99.6, "elementwise", "compute")]
    assert rows(con, "SELECT count(*) FROM callctx_icicle_over(0.4, 1)") == [(2,)]
