"""CUDA graph replays and inference traces (issue #21), against the recordings in tests/recorded/ and
what their script knew (tests/recorded/*graphs*_truth.json: replays, kernel nodes of the captured
graph from cudaGraphGetNodes, iterations, host sleeps), NVIDIA's nsys stats CSVs of the two Nsight
exports, and the shared vLLM graph-capture trace (corpus tier)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import REPO
from nsys_oracle import compare

RECORDED = REPO / "tests" / "recorded"
EAGER = "torch-2.11_graphs-eager-inference_h100"
COMPILED = "torch-2.11_graphs-compiled-reduce-overhead-inference_h100"
MANUAL = "torch-2.11_graphs-manual-replay_h100"
NODE = "nsys-2025.3.1_graphs-manual-replay-node_h100"
GRAPH = "nsys-2025.3.1_graphs-manual-replay-graph_h100"
TRACES = {EAGER: ".pt.trace.json.gz", COMPILED: ".pt.trace.json.gz", MANUAL: ".pt.trace.json.gz",
          NODE: ".sqlite.gz", GRAPH: ".sqlite.gz"}
VLLM = "tracelens_mi300x_vllm_graph_capture_rank0.pt.trace.json.gz"


def truth(stem: str) -> dict:
    return json.loads((RECORDED / f"{stem}_truth.json").read_text())


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    from tracelake.cli.main import main
    from tracelake.lake.database import connect

    lake = tmp_path_factory.mktemp("graphs") / "lake"
    files = [str(RECORDED / (stem + ext)) for stem, ext in TRACES.items()]
    assert main(["ingest", *files, "--lake", str(lake), "--quiet"]) == 0
    db = connect(lake)
    yield db
    db.close()


def tid(con, stem: str) -> str:
    return con.execute("SELECT trace_id FROM traces WHERE file_name LIKE ? || '.%'", [stem]).fetchone()[0]


def one(con, sql: str, stem: str):
    return con.execute(sql, [tid(con, stem)]).fetchone()


@pytest.mark.parametrize("stem,truth_stem", [(MANUAL, MANUAL), (NODE, "nsys-2025.3.1_graphs-manual-replay"),
                                             (GRAPH, "nsys-2025.3.1_graphs-manual-replay")])
def test_replays_and_kernels_per_replay_match_the_script(con, stem, truth_stem):
    t = truth(truth_stem)
    replays, kernels, capture_site, graphs = one(
        con, "SELECT sum(replays), any_value(kernels_per_replay), any_value(capture_site), count(*) "
             "FROM graph_replays WHERE trace_id = ?", stem)
    assert (graphs, replays) == (1, t["replays"])
    # graph-level tracing records each replay as a whole: its kernels are unknown, not zero
    assert kernels == (None if stem == GRAPH else t["graph_nodes"])
    assert capture_site == "graph_capture"  # the annotation / NVTX range the script put around the capture


def test_compiled_replays(con):
    # cudagraph trees: the first call in the trace records the graph and launches it once to produce its
    # outputs; every later call replays it. So each of the calls runs the graph once.
    t = truth(COMPILED)
    replays, graphs = one(con, "SELECT sum(replays), count(*) FROM graph_replays WHERE trace_id = ?", COMPILED)
    assert (graphs, replays) == (1, t["calls_in_trace"])
    # the compiled model's kernels run only in replays, never directly (eager phase: input copies only)
    n = one(con, "SELECT count(*) FROM gpu_op_phases WHERE trace_id = ? AND phase = 'eager' "
                 "AND name LIKE 'triton%'", COMPILED)[0]
    assert n == 0


@pytest.mark.parametrize("stem", [MANUAL, COMPILED, NODE])
def test_every_graph_kernel_has_a_launch_and_a_calling_context(con, stem):
    trace_id = tid(con, stem)
    graph_kernels = con.execute("SELECT count(*) FROM graph_ops WHERE trace_id = ? AND category = 'kernel'",
                                [trace_id]).fetchone()[0]
    assert graph_kernels > 0
    launched = con.execute("SELECT count(*) FROM kernel_launches WHERE trace_id = ? AND is_graph "
                           "AND api_name LIKE 'cudaGraphLaunch%' AND launch_latency_ns > 0",
                           [trace_id]).fetchone()[0]
    assert launched == graph_kernels
    # in both trees, each replayed kernel sits under its graph launch call, not under 'unattributed'
    for tree in ("stack", "nvtx"):
        parents = con.execute("""
            SELECT p.kind, count(*) FROM graph_ops g
            JOIN callctx_gpu_ops c ON c.trace_id = g.trace_id AND c.tree = ? AND c.start_ns = g.start_ns
                                  AND c.duration_ns = g.duration_ns
            JOIN callctx_nodes n ON n.trace_id = c.trace_id AND n.tree = c.tree AND n.node_id = c.node_id
            JOIN callctx_nodes p ON p.trace_id = n.trace_id AND p.tree = n.tree AND p.node_id = n.parent_id
            WHERE g.trace_id = ? AND g.category = 'kernel' GROUP BY ALL""", [tree, trace_id]).fetchall()
        assert parents == [("graph", graph_kernels)], tree


def test_nvtx_projection_counts_replayed_kernels(con):
    # NVIDIA's nvtx_gpu_proj rule: a GPU op belongs to the range containing its launch call; each
    # 'iteration i' holds the input copy_ and one cudaGraphLaunch, whose 7 kernel nodes all count
    t = truth("nsys-2025.3.1_graphs-manual-replay")
    ops = one(con, "SELECT min(gpu_ops), max(gpu_ops), count(*) FROM nvtx_gpu_projection "
                   "WHERE trace_id = ? AND range LIKE ':iteration %'", NODE)
    assert ops == (1 + t["graph_nodes"], 1 + t["graph_nodes"], t["replays"])


def test_eager_and_graphed_runs_give_the_same_kernels(con):
    # the same model, 20 iterations eagerly and 20 graph replays: per kernel name the same count, and
    # totals within noise (20 %; a kernel runs 1-25 us)
    eager = dict((n, (c, t)) for n, c, t in con.execute(
        "SELECT name, count(*), sum(duration_ns) FROM kernels WHERE trace_id = ? GROUP BY name", [tid(con, EAGER)]
    ).fetchall())
    graphed = dict((n, (c, t)) for n, c, t in con.execute(
        "SELECT name, count(*), sum(duration_ns) FROM graph_ops WHERE trace_id = ? GROUP BY name",
        [tid(con, MANUAL)]).fetchall())
    assert set(eager) == set(graphed)
    for name, (count, total) in eager.items():
        assert graphed[name][0] == count == truth(EAGER)["iterations"] * (2 if "nvjet_sm90_hsh_48x64" in name
                                                                           or "Gelu" in name else 1), name
        assert abs(graphed[name][1] - total) <= 0.2 * total, name
    assert abs(sum(t for _, t in graphed.values()) - sum(t for _, t in eager.values())) <= 0.1 * sum(
        t for _, t in eager.values())


def test_node_and_graph_level_nsys_exports_agree(con):
    # the same workload traced per node and per graph: replays, their GPU time and their span agree
    node = one(con, "SELECT sum(replays), sum(total_gpu_ns), avg(span_ns_per_replay) FROM graph_replays "
                    "WHERE trace_id = ?", NODE)
    graph = one(con, "SELECT sum(replays), sum(total_gpu_ns), avg(span_ns_per_replay) FROM graph_replays "
                     "WHERE trace_id = ?", GRAPH)
    assert node[0] == graph[0] == 20
    # graph-level time is each replay's span (its nodes plus the gaps between them)
    assert node[1] <= graph[1] <= 1.15 * node[1]
    assert abs(node[2] - graph[2]) <= 0.1 * node[2]
    # and the replays count as GPU time: the compute time of the two runs agrees
    comp = {s: one(con, "SELECT sum(compute_ns) FROM temporal_breakdown WHERE trace_id = ?", s)[0]
            for s in (NODE, GRAPH)}
    assert abs(comp[NODE] - comp[GRAPH]) <= 0.15 * comp[NODE]


@pytest.mark.parametrize("stem", [NODE, GRAPH])
def test_nsys_kernel_summary_matches_nvidia(con, stem, tmp_path):
    # graph-level replays are kept out of the kernel summary, as in NVIDIA's cuda_gpu_kern_sum
    shutil.copy(RECORDED / f"{stem}_cuda_gpu_kern_sum.csv", tmp_path / "cuda_gpu_kern_sum.csv")
    assert compare(con, tid(con, stem), tmp_path, "cuda_gpu_kern_sum") == []


@pytest.mark.parametrize("stem", [MANUAL, COMPILED, NODE])
def test_gaps_inside_a_replay_are_not_host_waits(con, stem):
    t = truth(MANUAL)
    nodes = t["graph_nodes"] if stem != COMPILED else one(
        con, "SELECT any_value(kernels_per_replay) FROM graph_replays WHERE trace_id = ?", stem)[0]
    in_graph = one(con, "SELECT count(*) FROM idle_breakdown WHERE trace_id = ? AND cause = 'in_graph'", stem)[0]
    # the nodes run one after another on one stream: nodes - 1 gaps per replay, all inside the graph
    assert in_graph == t["replays"] * (nodes - 1)
    # ... and a replay never waits on the host inside: the only host waits are before a replay's first op
    waits_inside = one(con, """
        SELECT count(*) FROM idle_breakdown i
        JOIN graph_replay_runs r ON r.trace_id = i.trace_id AND i.start_ns >= r.first_start_ns
                                AND i.end_ns <= r.last_end_ns
        WHERE i.trace_id = ? AND i.cause <> 'in_graph'""", stem)[0]
    assert waits_inside == 0


def test_launch_bound_suggests_graphs_only_where_work_is_not_graphed(con):
    rows = dict(con.execute("SELECT t.file_name, f.advice FROM findings f JOIN traces t USING (trace_id) "
                            "WHERE f.rule = 'launch_bound'").fetchall())
    eager = next(a for f, a in rows.items() if f.startswith(EAGER))
    assert "CUDA graphs" in eager
    assert not any(f.startswith((MANUAL, NODE, GRAPH)) for f in rows)  # all steady work is graphed
    compiled = [a for f, a in rows.items() if f.startswith(COMPILED)]
    assert all("CUDA graphs (torch.compile" not in a for a in compiled)


def test_inference_steps_from_annotations(con):
    for stem, expected in ((EAGER, truth(EAGER)["iterations"]), (MANUAL, truth(MANUAL)["replays"]),
                           (NODE, 20), (GRAPH, 20)):
        rule, n = one(con, "SELECT any_value(step_rule), count(*) FROM steps WHERE trace_id = ?", stem)
        assert (rule, n) == ("record_function", expected), stem  # 'iteration' / 'iteration i', not ProfilerStep#0


def test_steady_state_without_markers_from_periodicity(con):
    # the compiled run has no per-call annotation, only one ProfilerStep#0 around all 20 calls
    t = truth(COMPILED)
    rule, n, median_ns = one(con, "SELECT any_value(step_rule), count(*), median(wall_ns) FROM steps "
                                  "WHERE trace_id = ?", COMPILED)
    assert rule == "periodicity"
    assert t["calls_in_trace"] - 3 <= n <= t["calls_in_trace"] - 1  # the recording call is left out
    sleep_ns = t["sleep_s_between"] * 1e9
    assert sleep_ns < median_ns < sleep_ns + 1_500_000
    # the steady window starts after the graph capture
    start, capture_end = one(con, "SELECT s.start_ns, (SELECT max(end_ns) FROM graph_captures c "
                                  "WHERE c.trace_id = s.trace_id) FROM steady_state s WHERE s.trace_id = ?",
                             COMPILED)
    assert start > capture_end


def test_periodicity_agrees_with_the_annotated_iterations(con):
    # on the eager run the GPU periodicity and the script's annotations measure the same loop
    period, = one(con, "SELECT any_value(period_ns) FROM gpu_periods WHERE trace_id = ?", EAGER)
    interval, = one(con, "SELECT median(d) FROM (SELECT start_ns - lag(start_ns) OVER (ORDER BY start_ns) AS d "
                         "FROM nvtx_ranges WHERE trace_id = ? AND range = 'iteration')", EAGER)
    assert abs(period - interval) <= 0.05 * interval


def test_capture_and_warmup_told_apart_from_replays(con):
    t = truth(MANUAL)
    phases = dict(con.execute("SELECT phase, kernels FROM gpu_phase_summary WHERE trace_id = ?",
                              [tid(con, MANUAL)]).fetchall())
    assert phases["replay"] == t["replays"] * t["graph_nodes"]
    node = dict(con.execute("SELECT phase, kernels FROM gpu_phase_summary WHERE trace_id = ?",
                            [tid(con, NODE)]).fetchall())
    assert node["replay"] == 20 * 7 and node["warmup"] > 0  # the nsys script warms up before capturing


@pytest.mark.corpus
def test_vllm_capture_trace_gets_steps_and_a_steady_state(corpus, tmp_path):
    from tracelake.cli.main import main
    from tracelake.lake.database import connect

    lake = tmp_path / "lake"
    assert main(["ingest", str(corpus / "traces" / "pytorch" / VLLM), "--lake", str(lake), "--quiet"]) == 0
    con = connect(lake)
    try:
        rule, n, lo, hi = con.execute("SELECT any_value(step_rule), count(*), min(wall_ns), max(wall_ns) "
                                      "FROM steps").fetchone()
        # piecewise capture of a 24-layer model: the eager attention between pieces repeats per layer
        assert rule == "periodicity" and n >= 20 and hi <= 1.25 * lo
        steady = con.execute("SELECT steps, step_rule FROM steady_state").fetchall()
        assert steady == [(n, "periodicity")]
        captures, sites = con.execute("SELECT count(*), list(DISTINCT capture_site) FROM graph_captures").fetchone()
        assert captures == 25 and sites == ["vllm/compilation/cuda_graph.py(208): __call__"]
        assert con.execute("SELECT list(DISTINCT phase) FROM gpu_op_phases").fetchone()[0] == ["capture"]
    finally:
        con.close()
