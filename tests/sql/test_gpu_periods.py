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


def test_one_profiler_step_around_a_loop_gives_way_to_its_periods(con):
    _loop(con)
    given(con, "annotations", ANNOTATION, [("t", 1, 1, 11, 0, 8000, "ProfilerStep#0", "user_annotation", False)])
    load_sql(con, "analysis/steady_state.sql")
    # one ProfilerStep around the whole loop is no iteration: the periods are (their kernels,
    # 3060..7060, hold 16 of the 24 equal kernels)
    assert rows(con, "SELECT DISTINCT step_rule, wall_ns FROM steps") == [("periodicity", 1000)]
    assert rows(con, "SELECT step_rule, steps, warmup_steps FROM steady_state") == [("periodicity", 4, 0)]


def test_periodicity_without_markers(con):
    _loop(con)
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT step_rule, count(*) FROM steps GROUP BY ALL") == [("periodicity", 4)]


def _short_periods(con, trace="t"):
    """DLRM rank 1's shape: one long kernel, then a burst of 16 tiny fills every 20 ns: 15 steady
    periods that hold 150 ns of the 17,160 ns of kernel time."""
    given(con, "kernels", KERNEL, [(trace, 1, 0, 7, 1_000, 18_000, "embedding_bag")]
          + [(trace, 1, 0, 7, 18_100 + 20 * i, 18_110 + 20 * i, "fill") for i in range(16)])


def test_short_periods_inside_one_profiler_step_are_not_steps(con):
    given(con, "traces", ["trace_id", "end_ns"], [("t", 20_000)])
    _short_periods(con)
    given(con, "annotations", ANNOTATION, [("t", 1, 1, 11, 0, 20_000, "ProfilerStep#10", "user_annotation", False)])
    load_sql(con, "analysis/steady_state.sql")
    assert rows(con, "SELECT count(*) FROM gpu_periods") == [(15,)]
    assert rows(con, "SELECT step, step_rule, wall_ns FROM steps") == [("ProfilerStep#10", "profiler_step", 20_000)]
    assert rows(con, "SELECT step_rule, steps, median_step_ns FROM steady_state") == [("profiler_step", 1, 20_000)]


def test_short_periods_without_markers_are_not_steps(con):
    given(con, "traces", ["trace_id", "end_ns"], [("t", 20_000)])
    _short_periods(con)
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT count(*) FROM steps") == [(0,)]


TRACES = ["trace_id", "source", "path", "rank", "world_size", "start_ns", "end_ns", "clock_offset_ns"]


def _rank(con, trace, rank, periodic):
    """A rank file of one 2-rank run (same folder, overlapping spans, a collective; rank None: a
    file of no run): one ProfilerStep around either the loop of _loop or DLRM's short periods."""
    if periodic:
        starts = [0, 3000, 4000, 5000, 6000, 7000]
        given(con, "kernels", KERNEL, [(trace, 1, 0, 7, s + d, s + d + 10, n) for s in starts
                                       for d, n in ((0, "embed"), (20, "layer"), (40, "layer"), (60, "head"))])
    else:
        _short_periods(con, trace)
    given(con, "traces", TRACES, [(trace, "pytorch", f"/run/{trace}.json", rank, 2, 0, 20_000, 0)])
    given(con, "kernels", KERNEL, [(trace, 1, 0, 8, 19_000, 19_010, "ncclDevKernel_AllReduce_Sum_f32_RING_LL")])
    given(con, "annotations", ANNOTATION, [(trace, 1, 1, 11, 0, 20_000, "ProfilerStep#10", "user_annotation", False)])


def test_ranks_of_one_run_take_one_rule(con):
    # rank 0's loop alone would be cut into periods (as 'solo', the same file in no run), but rank
    # 1's periods cover little: both ranks keep their ProfilerStep
    _rank(con, "r0", 0, periodic=True)
    _rank(con, "r1", 1, periodic=False)
    _rank(con, "solo", None, periodic=True)
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT trace_id, run_id FROM rank_runs ORDER BY 1") == [("r0", "/run/|2|0"), ("r1", "/run/|2|0")]
    assert rows(con, "SELECT trace_id, step_rule, count(*) FROM steps GROUP BY ALL ORDER BY 1") == [
        ("r0", "profiler_step", 1), ("r1", "profiler_step", 1), ("solo", "periodicity", 4)]


def test_ranks_that_all_loop_take_their_periods(con):
    _rank(con, "r0", 0, periodic=True)
    _rank(con, "r1", 1, periodic=True)
    load_sql(con, "analysis/steps.sql")
    assert rows(con, "SELECT trace_id, step_rule, count(*) FROM steps GROUP BY ALL ORDER BY 1") == [
        ("r0", "periodicity", 4), ("r1", "periodicity", 4)]
