"""The critical path speaks of the steps of `steps` (issue #50, item 5): where the graph built at
ingest has other steps than the steps view (a '(trace)' graph, or one ProfilerStep around the
iterations), its path is cut at the steps' boundaries (critical_path_steps, critical_path_cut), on
recordings whose steps come from record_function ranges and from the periods of the GPU work."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REPO, ingested
from tracelake.analysis import critpath_whatif

RECORDED = REPO / "tests" / "recorded"
# file -> (its steps' rule, its graph's step): one ProfilerStep around 20 record_function
# iterations, one around 18 CUDA-graph replays found by their period, and an Nsight export without
# step ranges (a '(trace)' graph) with 20 NVTX iterations
CUT = {
    "torch-2.11_graphs-eager-inference_h100.pt.trace.json.gz": ("record_function", "ProfilerStep#1"),
    "torch-2.11_graphs-compiled-reduce-overhead-inference_h100.pt.trace.json.gz": ("periodicity", "ProfilerStep#0"),
    "nsys-2025.3.1_graphs-manual-replay-graph_h100.sqlite.gz": ("record_function", "(trace)"),
}
CLASSES = ("cpu", "data_loading", "launch_overhead", "kernel_to_kernel", "gpu_compute", "communication", "memcpy",
           "sync_wait")


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    with ingested(tmp_path_factory, "cut", *(RECORDED / f for f in CUT)) as db:
        yield db


def _traces(con) -> dict[str, tuple[str, str]]:
    """trace_id -> (rule, graph step) of each recording."""
    names = dict(con.execute("SELECT file_name, trace_id FROM traces").fetchall())
    return {names[f]: rule_graph for f, rule_graph in CUT.items()}


def test_the_graphs_have_other_steps_than_the_steps_view(con):
    for trace_id, (rule, graph) in _traces(con).items():
        assert con.execute("SELECT DISTINCT step_rule FROM steps WHERE trace_id = ?", [trace_id]).fetchall() == [(rule,)]
        assert con.execute("SELECT step FROM cp_steps WHERE trace_id = ?", [trace_id]).fetchall() == [(graph,)]


def test_one_path_row_per_step_of_steps_and_the_classes_add_up(con):
    """critical_path_summary has the steps of `steps`, with their names and indexes (all of them, so
    every steady step), each step's classes add up to its path_ns, and every step has a path."""
    for trace_id in _traces(con):
        steps = con.execute("SELECT pid, step, step_index, wall_ns FROM steps WHERE trace_id = ? ORDER BY ALL",
                            [trace_id]).fetchall()
        summary = con.execute(f"""SELECT pid, step, step_index, step_ns, path_ns, {' + '.join(f'{c}_ns' for c in CLASSES)}
                                  FROM critical_path_summary WHERE trace_id = ? ORDER BY pid, step, step_index""",
                              [trace_id]).fetchall()
        assert len(steps) >= 18
        assert [r[:4] for r in summary] == steps, trace_id
        assert all(r[4] == r[5] for r in summary), trace_id
        assert all(0 < r[4] <= r[3] for r in summary), trace_id  # a path in each, never longer than the step
        steady = con.execute("""SELECT count(*) FROM step_phases p JOIN critical_path_summary c
                                USING (trace_id, pid, step_index) WHERE trace_id = ? AND phase = 'steady'""",
                             [trace_id]).fetchall()[0][0]
        assert steady == con.execute("SELECT steps FROM steady_summary WHERE trace_id = ?", [trace_id]).fetchall()[0][0]


def _path_inside(con, trace_id: str, windows: list[tuple[int, int]]) -> float:
    """The graph's measured path (cp_edges, cp_nodes) inside `windows`: each edge's weight times the
    share of its time inside them, in floating point (independent of the SQL's integer parts)."""
    edges = con.sql("""SELECT e.weight_ns, a.ts_ns AS t0, b.ts_ns AS t1 FROM cp_edges e
                       JOIN cp_nodes a ON a.trace_id = e.trace_id AND a.node_id = e.src_node
                       JOIN cp_nodes b ON b.trace_id = e.trace_id AND b.node_id = e.dst_node
                       WHERE e.trace_id = ? AND e.path_order IS NOT NULL AND e.weight_ns > 0""",
                    params=[trace_id]).pl()
    lo = np.minimum(edges["t0"].to_numpy(), edges["t1"].to_numpy()).astype(float)
    hi = np.maximum(edges["t0"].to_numpy(), edges["t1"].to_numpy()).astype(float)
    w = edges["weight_ns"].to_numpy().astype(float)
    inside = sum(np.clip(np.minimum(hi, e) - np.maximum(lo, s), 0, None) for s, e in windows)
    point = hi == lo
    share = np.where(point, [any(s <= x < e for s, e in windows) for x in lo], inside / np.where(point, 1, hi - lo))
    return float((w * share).sum())


def test_the_steps_paths_add_up_to_the_path_inside_them(con):
    """The per-step paths sum to the measured path's time inside the steps' windows, within 1 %; for
    the periodic steps, which follow one another without a gap, that is the path over their span."""
    for trace_id, (rule, _) in _traces(con).items():
        windows = con.execute("SELECT start_ns, end_ns FROM steps WHERE trace_id = ? ORDER BY start_ns",
                              [trace_id]).fetchall()
        [(total,)] = con.execute("SELECT sum(path_ns) FROM critical_path_summary WHERE trace_id = ?",
                                 [trace_id]).fetchall()
        expected = _path_inside(con, trace_id, windows)
        assert expected > 0 and abs(total - expected) <= 0.01 * expected, (trace_id, total, expected)
        if rule == "periodicity":
            span = [(windows[0][0], windows[-1][1])]
            assert abs(total - _path_inside(con, trace_id, span)) <= 0.01 * total
        # the edge rows of each step add up to its path, in order from 0
        bad = con.execute("""SELECT step_index FROM critical_path p JOIN critical_path_summary s
                             USING (trace_id, pid, step_index) WHERE trace_id = ?
                             GROUP BY step_index HAVING sum(p.weight_ns) <> any_value(s.path_ns)
                                 OR max(p.path_order) <> count(*) - 1""", [trace_id]).fetchall()
        assert bad == []


def test_the_headline_and_the_finding_speak_of_the_steady_steps(con):
    rows = con.execute("""SELECT s.trace_id, s.steps, s.bound_by, s.bound_by_basis, f.pid, f.evidence
                          FROM steady_summary s JOIN finding_critical_path f USING (trace_id, pid)""").fetchall()
    assert {r[0] for r in rows} == set(_traces(con))
    for _, steps, bound_by, basis, pid, evidence in rows:
        assert bound_by is not None and basis is not None and pid is not None
        assert evidence.startswith(f"Over {steps} steady steps the critical path averages"), evidence


def test_the_whatif_rows_are_per_step(con):
    """The what-if cuts its re-runs at the same steps: a row per step and scenario, keyed as the
    summary, whose baselines add up to the measured paths (the what-if's own constraints may
    lengthen its baseline a little)."""
    traces = list(_traces(con))
    out = critpath_whatif.whatif(con, list(critpath_whatif.STANDARD_SCENARIOS), traces)
    summary = con.sql("SELECT trace_id, pid, step, step_index, path_ns FROM critical_path_summary "
                      "WHERE list_contains(?, trace_id)", params=[traces]).pl()
    for scenario, rows in out.group_by("scenario"):
        joined = rows.join(summary, on=["trace_id", "pid", "step", "step_index"], how="full", coalesce=True)
        assert joined.height == summary.height and joined["baseline_ns"].null_count() == 0, scenario
        for (trace_id,), one in joined.group_by("trace_id"):
            measured, baseline = one["path_ns"].sum(), one["baseline_ns"].sum()
            assert measured <= baseline <= 1.05 * measured, (trace_id, scenario)
    report = critpath_whatif.report_rows(con, traces[0])
    assert report and all(r["steps"] == 20 for r in report)
