"""What-if scenarios of the critical path (analysis/critpath_scenarios.py, critpath_whatif.py): the CUDA
graph models on hand-built steps whose answer is known, the graph gap against real graph replays, the
GPU's stream order, and, on the GPT-2 traces, the scenario the finding recommends."""

from __future__ import annotations

import gzip
import json

import polars as pl
import pytest
from conftest import REPO
from tracelake.analysis import critpath_whatif
from tracelake.analysis.critpath_scenarios import GRAPH_GAP_NS, LAUNCHES_AS_GRAPH, STEP_AS_GRAPH, parse_scale
from tracelake.cli.main import main
from tracelake.lake.database import connect

RECORDED = REPO / "tests" / "recorded"


def _cpu(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}


def _kernel(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


# (µs) Operator A [10, 60] launches K [30, 90] at 20 (cudaLaunchKernel [20, 25]); the host waits in
# cudaStreamSynchronize [65, 95] (recorded as a sync event) and runs B [96, 99]. The path is A's start ->
# the launch (10 CPU) -> K starts (10 launch) -> K (60) -> the sync returns (5) -> B (3) = 88 µs.
LAUNCH_AND_SYNC = [
    _cpu("user_annotation", "ProfilerStep#1", 0, 100),
    _cpu("cpu_op", "aten::A", 10, 50),
    _cpu("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=1),
    _kernel("K", 30, 60, 1),
    _cpu("cuda_runtime", "cudaStreamSynchronize", 65, 30, correlation=2),
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 65, "dur": 27,
     "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 2, "device": 0}},
    _cpu("cpu_op", "aten::B", 96, 3),
]

# (µs) A [0, 10] launches K1 [5, 105] at 2; B [110, 200] launches K2 [155, 255] at 150, onto a stream that
# has been idle since 105. The measured path (HTA's graph) does not link K1 to K2: 155 µs (A 10, B up to
# its launch 40, launch 5, K2 100). The stream ran K1 then K2, so no schedule is shorter than 200 µs.
IDLE_STREAM = [
    _cpu("user_annotation", "ProfilerStep#1", 0, 300),
    _cpu("cpu_op", "aten::A", 0, 10),
    _cpu("cuda_runtime", "cudaLaunchKernel", 2, 2, correlation=1),
    _kernel("K1", 5, 100, 1),
    _cpu("cpu_op", "aten::B", 110, 90),
    _cpu("cuda_runtime", "cudaLaunchKernel", 150, 2, correlation=2),
    _kernel("K2", 155, 100, 2),
]


@pytest.fixture(scope="module")
def hand_lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("whatif")
    for name, events in (("launch-and-sync", LAUNCH_AND_SYNC), ("idle-stream", IDLE_STREAM)):
        (root / f"{name}.json").write_text(json.dumps({"traceEvents": events}))
    assert main(["ingest", str(root), "--lake", str(root / "lake"), "-q"]) == 0
    con = connect(root / "lake")
    yield con
    con.close()


def _trace(con, prefix):
    [(trace_id,)] = con.sql(f"SELECT trace_id FROM traces WHERE trace_id LIKE '{prefix}%'").fetchall()
    return trace_id


def _paths(con, trace_id, scenarios):
    out = critpath_whatif.whatif(con, scenarios, [trace_id])
    return {r["scenario"]: (r["baseline_ns"], r["whatif_ns"]) for r in out.iter_rows(named=True)}


def test_cuda_graph_scenarios_remove_what_they_say(hand_lake):
    got = _paths(hand_lake, _trace(hand_lake, "launch-and-sync"), [LAUNCHES_AS_GRAPH, STEP_AS_GRAPH])
    # launches only: the launch latency (10) goes, A's Python before the launch (10) stays: 10 + 60 + 5 + 3
    # whole step: A issued GPU work, so a replay runs none of it; the sync (a host wait) and B (host-only
    # work after the last launch) stay: 60 + 5 + 3
    assert got == {LAUNCHES_AS_GRAPH.label: (88_000, 78_000), STEP_AS_GRAPH.label: (88_000, 68_000)}


def test_no_gpu_operation_starts_before_the_previous_one_on_its_stream(hand_lake):
    trace_id = _trace(hand_lake, "idle-stream")
    [(path_ns,)] = hand_lake.sql(f"SELECT path_ns FROM cp_steps WHERE trace_id = '{trace_id}'").fetchall()
    assert path_ns == 155_000  # HTA's graph: K2 hangs off its launch only
    got = _paths(hand_lake, trace_id, [parse_scale(["cpu=0.5"]), STEP_AS_GRAPH])
    # the what-if keeps the stream's order: K1 (100) then K2 (100) after A's 2 µs to the launch and 3 µs
    # of launch latency; the graph replay drops both and puts K2 0.5 µs after K1
    assert got == {"cpu=0.5": (205_000, 204_000), STEP_AS_GRAPH.label: (205_000, 200_500)}


def test_graph_gap_is_what_graph_replays_show():
    """The gap the CUDA-graph scenarios leave between two operations of a stream is the one measured
    between the kernels of a replay (cudaGraphLaunch correlation) in the recorded H100 replays."""
    with gzip.open(RECORDED / "torch-2.11_graphs-manual-replay_h100.pt.trace.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    replays = {e["args"]["correlation"] for e in events
               if e.get("ph") == "X" and e.get("name") == "cudaGraphLaunch"}
    kernels = pl.DataFrame([{"corr": e["args"]["correlation"], "ts": e["ts"], "end": e["ts"] + e["dur"]}
                            for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"
                            and e["args"].get("correlation") in replays])
    gaps_ns = (kernels.sort("ts").with_columns((pl.col("ts") - pl.col("end").shift(1)).over("corr").alias("gap"))
               ["gap"].drop_nulls() * 1000)
    assert len(gaps_ns) >= 100  # 20 replays of 7 kernels
    assert gaps_ns.median() <= GRAPH_GAP_NS <= gaps_ns.quantile(0.9) * 1.2


def test_report_rows_say_what_each_scenario_removes(hand_lake):
    rows = critpath_whatif.report_rows(hand_lake, _trace(hand_lake, "launch-and-sync"))
    assert [r["scenario"] for r in rows][:2] == [STEP_AS_GRAPH.label, LAUNCHES_AS_GRAPH.label]
    definitions = [r["definition"] for r in rows]
    assert len(set(definitions)) == len(rows) and all(d.strip() for d in definitions)


GPT2 = ["torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz",
        "torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz"]


@pytest.fixture(scope="module")
def gpt2_lake(corpus, tmp_path_factory):
    root = tmp_path_factory.mktemp("gpt2")
    (root / "in").mkdir()
    for name in GPT2:
        (root / "in" / name).symlink_to(corpus / "traces" / "pytorch" / name)
    assert main(["ingest", str(root / "in"), "--lake", str(root / "lake"), "-q"]) == 0
    con = connect(root / "lake")
    yield con
    con.close()


@pytest.mark.corpus
@pytest.mark.parametrize("name", GPT2)
def test_the_scenario_the_finding_recommends_saves_the_most_on_gpt2(gpt2_lake, name):
    trace_id = _trace(gpt2_lake, name.removesuffix(".pt.trace.json.gz"))
    [(advice,)] = gpt2_lake.sql(f"SELECT advice FROM finding_critical_path WHERE trace_id = '{trace_id}'").fetchall()
    assert "replay the step as a CUDA graph" in advice  # the host bounds the step (98 % of the path is cpu)
    saved = {r["scenario"]: r["saved_pct"] for r in critpath_whatif.report_rows(gpt2_lake, trace_id)}
    # measured: whole step 44.1 % (12 steps) / 39.8 % (small), CPU halved 37.0 / 32.2 %, launches only
    # 17.6 / 17.1 %: the host time on the path is mostly operators and Python (cudaLaunchKernel and
    # friends are ~18 % of it), so graphing the launches alone would not save the most; replaying the
    # step does, because it skips the operators too
    assert max(saved, key=saved.get) == STEP_AS_GRAPH.label
    assert 10 < saved[LAUNCHES_AS_GRAPH.label] < saved["CPU time halved"] < saved[STEP_AS_GRAPH.label]


@pytest.mark.corpus
@pytest.mark.parametrize("name", GPT2)
def test_whole_step_graph_leaves_the_gpu_time_on_gpt2(gpt2_lake, name):
    """A replayed step is as long as its GPU work (from the kernels table, independently of the graph):
    never shorter, and here hardly longer, since nearly all host time on the path issues GPU work."""
    trace_id = _trace(gpt2_lake, name.removesuffix(".pt.trace.json.gz"))
    frame = critpath_whatif.whatif(gpt2_lake, [STEP_AS_GRAPH], [trace_id])
    busy = gpt2_lake.sql(f"""
        SELECT s.step_index, sum(g.end_ns - g.start_ns) AS busy_ns
        FROM cp_nodes g JOIN cp_steps s USING (trace_id, step_id)
        WHERE g.trace_id = '{trace_id}' AND g.is_start AND g.kind IN ('kernel', 'memcpy', 'memset')
        GROUP BY ALL""").pl()
    both = frame.join(busy, on="step_index")
    assert both.height == frame.height > 0
    assert (both["whatif_ns"] >= both["busy_ns"]).all()
    assert (both["whatif_ns"] <= 1.05 * both["busy_ns"]).all()



@pytest.mark.corpus
@pytest.mark.parametrize("name", GPT2)
def test_contracted_walk_equals_the_plain_longest_path_on_gpt2(gpt2_lake, name):
    """The what-if runs walk the graph with its chains contracted (RepeatedPaths); on the real
    graphs, under every standard scenario's weights, the lengths are the plain walk's."""
    import numpy as np
    from tracelake.analysis.critpath_longest import longest_paths

    trace_id = _trace(gpt2_lake, name.removesuffix(".pt.trace.json.gz"))
    graph, facts = critpath_whatif.trace_graph(gpt2_lake, trace_id, fused=True)
    assert graph.repeated is not None and len(graph.repeated.src) < len(graph.src) / 2
    runs = 0
    for scenario in critpath_whatif.STANDARD_SCENARIOS:
        weight = facts.weights(scenario)
        full, _, ok = longest_paths(graph.n_nodes, graph.src, graph.dst, weight, graph.node_step,
                                    len(graph.steps), graph.node_ts, graph.rank)
        assert ok.all() and graph.repeated.lengths(weight).tolist() == full.tolist()
        runs += not np.array_equal(weight, facts.weight)
    assert runs >= 5  # most scenarios change this trace's weights


@pytest.mark.corpus
def test_whatif_does_not_depend_on_the_order_of_the_graph_rows(corpus, tmp_path):
    """The weights of the stream-order edges were paired with the graph's edges through a join that
    may reorder rows: the same trace read in another row order (a table left in its files) gave
    other what-if lengths (0.03 % on this SD3.5 trace). Every scenario, per step, is now the same."""
    from tracelake.jobs.report_job import lake_path
    from tracelake.lake.scoped import connect_scoped

    name = "tracelens_mi300x_sd35_xdit_inference_rank0_large.json.gz"
    assert main(["ingest", str(corpus / "traces" / "pytorch" / name), "--lake", str(tmp_path / "lake"), "-q"]) == 0
    con = connect(tmp_path / "lake")
    [(trace_id,)] = con.execute("SELECT trace_id FROM traces").fetchall()
    scoped = connect_scoped(lake_path(con), [trace_id])
    con.close()
    try:
        scenarios = list(critpath_whatif.STANDARD_SCENARIOS)
        before = critpath_whatif.whatif(scoped, scenarios, [trace_id])
        for order in ("node_id DESC", "hash(node_id)"):
            scoped.execute(f"CREATE OR REPLACE TEMP TABLE shuffled AS SELECT * FROM cp_nodes ORDER BY {order}")
            scoped.execute("CREATE OR REPLACE TEMP TABLE cp_nodes AS SELECT * FROM shuffled")
            after = critpath_whatif.whatif(scoped, scenarios, [trace_id])
            assert before.height >= len(scenarios) and before.sort(before.columns).equals(after.sort(after.columns))
    finally:
        scoped.close()
