"""sql/analysis/gpu_periods.sql and the step rules of steps.sql: iterations without step markers."""

from __future__ import annotations

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name"]
ANNOTATION = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "is_gpu"]


def _loop(con):
    # a slow first iteration (warm-up), then 5 iterations every 1000 ns; 'layer' runs twice per iteration
    starts = [0, 3000, 4000, 5000, 6000, 7000]
    data = []
    for s in starts:
        data += [("t", 1, 0, 7, s, s + 10, "embed"), ("t", 1, 0, 7, s + 20, s + 30, "layer"),
                 ("t", 1, 0, 7, s + 40, s + 50, "layer"), ("t", 1, 0, 7, s + 60, s + 70, "head")]
    given(con, "kernels", KERNEL, data)
    given(con, "traces", ["trace_id", "end_ns"], [("t", 10_000)])


def test_periods(con):
    _loop(con)
    load_sql(con, "analysis/gpu_periods.sql")
    # 'embed' and 'head' run once per period (the anchor is the later name, 'head'); the warm-up interval is left out
    assert rows(con, "SELECT DISTINCT period_ns, runs FROM gpu_periods") == [(1000.0, 5)]
    assert rows(con, "SELECT period_index, start_ns, end_ns FROM gpu_periods ORDER BY 1") == [
        (i, 3060 + 1000 * i, 4060 + 1000 * i) for i in range(4)]


def test_anchor_ties_do_not_depend_on_row_order(con):
    """'embed' and 'head' have the same period: the anchor is chosen by name, not by which row the
    engine met first (a page rendered with other traces loaded showed other steps)."""
    _loop(con)
    load_sql(con, "analysis/gpu_periods.sql")
    first = rows(con, "SELECT DISTINCT anchor FROM gpu_periods")
    con.execute("CREATE TABLE shuffled AS SELECT * FROM kernels ORDER BY name DESC, start_ns DESC")
    con.execute("DELETE FROM kernels")
    con.execute("INSERT INTO kernels SELECT * FROM shuffled")
    assert first == rows(con, "SELECT DISTINCT anchor FROM gpu_periods") == [("head",)]


def test_periodicity_rule_when_no_markers(con):
    _loop(con)
    given(con, "annotations", ANNOTATION, [("t", 1, 1, 11, 0, 8000, "ProfilerStep#0", "user_annotation", False)])
    load_sql(con, "analysis/steady_state.sql")
    # one ProfilerStep around the whole loop is no iteration: the periods are
    assert rows(con, "SELECT DISTINCT step_rule, wall_ns FROM steps") == [("periodicity", 1000)]
    assert rows(con, "SELECT step_rule, steps, warmup_steps FROM steady_state") == [("periodicity", 4, 0)]


def test_inference_rules(con):
    given(con, "traces", ["trace_id", "end_ns"], [("t", 10_000), ("u", 10_000)])
    given(con, "annotations", ANNOTATION, [
        ("t", 1, 1, 11, 0, 9000, "ProfilerStep#0", "user_annotation", False),
        ("t", 2, 1, 11, 0, 1000, "execute_context_1(128)_generation_3(3)", "user_annotation", False),
        ("t", 3, 1, 11, 1000, 2000, "execute_context_0(0)_generation_4(4)", "user_annotation", False),
        ("t", 4, 1, 11, 100, 200, "gpu_model_runner: forward", "user_annotation", False),
        ("u", 1, 1, 11, 0, 500, "iteration", "user_annotation", False),
        ("u", 2, 1, 11, 500, 900, "iteration", "user_annotation", False),
        ("u", 3, 1, 11, 100, 200, "forward", "user_annotation", False),   # bare 'forward': not a step
    ])
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT trace_id, step_rule, count(*) FROM steps GROUP BY ALL ORDER BY 1") == [
        ("t", "vllm", 2), ("u", "record_function", 2)]
    assert rows(con, "SELECT rule FROM step_rules ORDER BY priority") == [
        ("profiler_step",), ("vllm",), ("sglang",), ("record_function",)]
