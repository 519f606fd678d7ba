"""Critical path per step (analysis/critpath_*.py, sql/analysis/critical_path.sql): against Holistic
Trace Analysis' critical_path_analysis (golden files in tests/golden/critical_path/, made by
make_goldens.sh there), the recordings' truth, a hand-built trace whose path is known, and the
SYNCHRONIZATION rows of a real Nsight export."""

from __future__ import annotations

import json
from collections import Counter

import polars as pl
import pytest
from conftest import DATA, REPO
from tracelake.analysis import critpath_build, critpath_whatif
from tracelake.cli.main import main
from tracelake.ingest.dispatch import ingest_file
from tracelake.lake.database import connect

GOLDEN = REPO / "tests" / "golden" / "critical_path"
RECORDED = REPO / "tests" / "recorded"

# tracelake class -> HTA bound_by (HTA counts memcpy/memset as GPU compute and has no sync-wait class)
TO_HTA = {"cpu": "cpu_bound", "data_loading": "data_loading", "launch_overhead": "gpu_kernel_launch_overhead",
          "kernel_to_kernel": "gpu_kernel_kernel_overhead", "gpu_compute": "gpu_compute_bound",
          "memcpy": "gpu_compute_bound", "communication": "gpu_communication_bound"}

HTA_CASES = [  # (trace path, golden prefix)
    (RECORDED / "torch-2.11_critpath-host-sync_h100.pt.trace.json.gz", "torch-2.11_critpath-host-sync_h100"),
    (RECORDED / "torch-2.11_critpath-multistream_h100.pt.trace.json.gz", "torch-2.11_critpath-multistream_h100"),
    (RECORDED / "torch-2.11_critpath-data-stall_h100.pt.trace.json.gz",
     "torch-2.11_critpath-data-stall_h100.data_load"),
    (RECORDED / "torch-2.11_gpt-train-bf16-sdpa_h100.pt.trace.json.gz", "torch-2.11_gpt-train-bf16-sdpa_h100"),
    (DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz", "torch-2.11_mnist-cnn-train_h100"),
    (DATA / "torch-2.11_resnet50-train-fp32-pageable_h100.pt.trace.json.gz",
     "torch-2.11_resnet50-train-fp32-pageable_h100"),
    (DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz",
     "torch-2.11_mlp-compiled-inference-fp16_h100"),
]


def _ours(path, hta_compat=False):
    tables, _ = critpath_build.build(ingest_file(str(path)).tables, hta_compat=hta_compat)
    steps = pl.from_arrow(tables["cp_steps"])
    edges = pl.from_arrow(tables["cp_edges"]).filter(pl.col("path_order").is_not_null())
    return steps, edges


def _compare_with_hta(path, prefix):
    gold = pl.read_csv(GOLDEN / f"{prefix}.summary.csv")
    gold_edges = pl.read_csv(GOLDEN / f"{prefix}.edges.csv.gz")
    # HTA rounds each event's start up and end down to whole µs and gives sync edges no weight; built
    # that way, the graphs agree (test_sync_wait_only_lengthens_the_path covers our own weights)
    steps, edges = _ours(path, hta_compat=True)
    assert gold["ok"].all() and steps["step"].to_list() == gold["step"].to_list()
    for g, (step_id, path_ns) in zip(gold.iter_rows(named=True), steps.select("step_id", "path_ns").iter_rows()):
        mine = edges.filter(pl.col("step_id") == step_id)
        by_class = Counter()
        for cls, ns in mine.group_by("class").agg(pl.col("weight_ns").sum()).iter_rows():
            by_class[TO_HTA.get(cls, cls)] += ns
        hta_ns = g["path_us"] * 1000
        assert path_ns == pytest.approx(hta_ns, rel=0.01), g["step"]
        hta_classes = {k.removesuffix("_us"): v * 1000 for k, v in g.items()
                       if k.endswith("_us") and k not in ("path_us", "dependency_us") and v}
        assert max(hta_classes, key=hta_classes.get) == max(
            (c for c in by_class if c != "sync_wait" and c), key=by_class.get), g["step"]
        for cls, ns in hta_classes.items():
            assert by_class[cls] == pytest.approx(ns, abs=0.01 * hta_ns), (g["step"], cls)
        # the same edges: weighted path edges as (type, weight) pairs (equally long routes may differ)
        kinds = {"operator": "operator", "launch": "kernel_launch_delay", "kernel_kernel": "kernel_kernel_delay"}
        ours = Counter((kinds[t], w // 1000) for t, w in mine.filter(pl.col("weight_ns") > 0)
                       .select("edge_type", "weight_ns").iter_rows() if t in kinds)
        theirs = Counter((t, w) for t, w in gold_edges.filter((pl.col("step") == g["step"]) & (pl.col("weight_us") > 0))
                         .select("type", "weight_us").iter_rows())
        assert sum((ours & theirs).values()) >= 0.85 * sum(theirs.values()), g["step"]


@pytest.mark.parametrize("path,prefix", HTA_CASES, ids=[p for _, p in HTA_CASES])
def test_path_matches_hta(path, prefix):
    _compare_with_hta(path, prefix)


CORPUS_CASES = [("torch-2.11_gpt2-small-train-bf16_h100.pt.trace.json.gz", "torch-2.11_gpt2-small-train-bf16_h100"),
                # communication-bound: the NCCL kernels of DDP are the path
                ("torch-2.11_gpt2-ddp-2rank_h200x2/rank0.pt.trace.json.gz", "torch-2.11_gpt2-ddp-2rank_h200x2.rank0")]


@pytest.mark.corpus
@pytest.mark.parametrize("name,prefix", CORPUS_CASES, ids=[p for _, p in CORPUS_CASES])
def test_path_matches_hta_on_corpus(corpus, name, prefix):
    _compare_with_hta(corpus / "traces" / "pytorch" / name, prefix)


def test_sync_wait_only_lengthens_the_path():
    """With the measured wake-up latency on sync edges and ns times, each step's path is at least
    HTA's (rounding shrinks every event by up to 2 µs) and at most 5 % longer on these steps."""
    gold = pl.read_csv(GOLDEN / "torch-2.11_critpath-host-sync_h100.summary.csv")
    steps, edges = _ours(RECORDED / "torch-2.11_critpath-host-sync_h100.pt.trace.json.gz")
    sync = dict(edges.filter(pl.col("class") == "sync_wait").group_by("step_id").agg(pl.col("weight_ns").sum())
                .iter_rows())
    for (step_id, path_ns), hta_us in zip(steps.select("step_id", "path_ns").iter_rows(), gold["path_us"]):
        assert 0 < sync[step_id] < 50_000
        assert hta_us * 1000 <= path_ns <= 1.05 * hta_us * 1000


def test_data_stall_is_the_recorded_sleep():
    truth = json.loads((RECORDED / "torch-2.11_critpath-data-stall_h100_truth.json").read_text())
    steps, edges = _ours(RECORDED / "torch-2.11_critpath-data-stall_h100.pt.trace.json.gz")
    loading = dict(edges.filter(pl.col("class") == "data_loading").group_by("step_id")
                   .agg(pl.col("weight_ns").sum()).iter_rows())
    for step_id, step in steps.select("step_id", "step").iter_rows():
        if int(step.removeprefix("ProfilerStep#")) in truth["stall_profiler_steps"]:
            assert loading[step_id] == pytest.approx(truth["stall_s"] * 1e9, rel=0.05)
        else:
            assert step_id not in loading


# A hand-built step (µs): operator A [10, 60] launches kernel K [30, 90] at 20; the host then waits
# in cudaStreamSynchronize [65, 95] for K, and runs operator B [96, 99]. The critical path is
# A's start -> the launch (10 CPU) -> K starts (10 launch) -> K (60 GPU) -> the sync returns (5) -> B (3).
def _tiny_trace(with_sync: bool) -> dict:
    def cpu(cat, name, ts, dur, **args):
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}

    events = [
        cpu("user_annotation", "ProfilerStep#1", 0, 100),
        cpu("cpu_op", "aten::A", 10, 50, **{"External id": 1}),
        cpu("cuda_runtime", "cudaLaunchKernel", 20, 5, correlation=1, **{"External id": 1}),
        {"ph": "X", "cat": "kernel", "name": "K", "pid": 0, "tid": 7, "ts": 30, "dur": 60,
         "args": {"device": 0, "stream": 7, "correlation": 1, "External id": 1}},
        cpu("cuda_runtime", "cudaStreamSynchronize", 65, 30, correlation=2),
        cpu("cpu_op", "aten::B", 96, 3, **{"External id": 2}),
    ]
    if with_sync:
        events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 65, "dur": 27,
                       "args": {"cuda_sync_kind": "Stream Sync", "stream": 7, "correlation": 2, "device": 0}})
    return {"traceEvents": events}


@pytest.fixture(scope="module")
def tiny_lake(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    for name, with_sync in (("sync", True), ("nosync", False)):
        (root / f"tiny-{name}.json").write_text(json.dumps(_tiny_trace(with_sync)))
    assert main(["ingest", str(root), "--lake", str(root / "lake"), "-q"]) == 0
    con = connect(root / "lake")
    yield con
    con.close()


def test_hand_built_trace_has_the_known_path(tiny_lake):
    row = tiny_lake.sql("""SELECT path_ns, cpu_ns, launch_overhead_ns, gpu_compute_ns, sync_wait_ns, kernel_to_kernel_ns,
                                  bound_by, is_lower_bound
                           FROM critical_path_summary WHERE trace_id LIKE 'tiny-sync%'""").fetchall()
    assert row == [(88_000, 13_000, 10_000, 60_000, 5_000, 0, "gpu_compute", False)]
    path = tiny_lake.sql("""SELECT edge_type, class, weight_ns, name FROM critical_path
                            WHERE trace_id LIKE 'tiny-sync%' AND weight_ns > 0 ORDER BY path_order""").fetchall()
    assert path == [("operator", "cpu", 10_000, "aten::A"), ("launch", "launch_overhead", 10_000, "cudaLaunchKernel"),
                    ("operator", "gpu_compute", 60_000, "K"), ("sync", "sync_wait", 5_000, "cudaStreamSynchronize"),
                    ("operator", "cpu", 3_000, "aten::B")]
    top = tiny_lake.sql("""SELECT name, path_ns FROM critical_path_ops WHERE trace_id LIKE 'tiny-sync%'
                           AND rank_in_step = 1""").fetchall()
    assert top == [("K", 60_000)]


def test_without_sync_events_the_path_is_a_flagged_lower_bound(tiny_lake):
    # the wait on K is unseen: the path ends with K (80 µs) and says it may be longer
    row = tiny_lake.sql("""SELECT path_ns, sync_wait_ns, is_lower_bound FROM critical_path_summary
                           WHERE trace_id LIKE 'tiny-nosync%'""").fetchall()
    assert row == [(80_000, 0, True)]


def test_whatif_reruns_the_path(tiny_lake):
    sync_trace = [t for (t,) in tiny_lake.sql("SELECT trace_id FROM traces WHERE trace_id LIKE 'tiny-sync%'").fetchall()]
    scenarios = [critpath_whatif.parse_scale([s]) for s in ("gpu_compute=0.5", "kernel_to_kernel=0", "cpu=0")]
    out = critpath_whatif.whatif(tiny_lake, scenarios, sync_trace)
    got = {r["scenario"]: (r["baseline_ns"], r["whatif_ns"]) for r in out.iter_rows(named=True)}
    # K halved: the GPU route is 10 + 10 + 30 + 5 + 3 = 58 µs, still longer than the host's 53
    assert got == {"gpu_compute=0.5": (88_000, 58_000), "kernel_to_kernel=0": (88_000, 88_000),
                   "cpu=0": (88_000, 75_000)}
    with pytest.raises(ValueError, match="CLASS=FACTOR"):
        critpath_whatif.parse_scale(["gpu=0.5"])


def test_classes_add_up_and_path_is_contiguous(sample_con):
    bad = sample_con.sql("""
        SELECT trace_id, step FROM critical_path_summary
        WHERE path_ns <> cpu_ns + data_loading_ns + launch_overhead_ns + kernel_to_kernel_ns + gpu_compute_ns
                         + communication_ns + memcpy_ns + sync_wait_ns""").fetchall()
    assert bad == []
    steps = sample_con.sql("""SELECT count(*), count(DISTINCT trace_id) FROM critical_path_summary""").fetchall()[0]
    assert steps[0] >= 30 and steps[1] == 4
    gaps = sample_con.sql("""
        SELECT trace_id, step_index, count(*) AS n, max(path_order) AS last, sum(weight_ns) AS ns,
               any_value(s.path_ns) AS path_ns
        FROM critical_path p JOIN critical_path_summary s USING (trace_id, pid, step_index)
        GROUP BY ALL HAVING n <> last + 1 OR ns <> path_ns""").fetchall()
    assert gaps == []
    # consecutive path edges share their node: each edge starts where the previous one ended
    broken = sample_con.sql("""
        SELECT count(*) FROM (
            SELECT trace_id, step_id, src_node,
                   lag(dst_node) OVER (PARTITION BY trace_id, step_id ORDER BY path_order) AS prev_dst
            FROM cp_edges WHERE path_order IS NOT NULL)
        WHERE prev_dst IS NOT NULL AND prev_dst <> src_node""").fetchall()[0][0]
    assert broken == 0


def test_nsys_cpu_wait_edges_match_synchronization_rows(sample_con):
    """The sample Nsight export's 96 cudaStreamSynchronize rows (CUPTI labels them 'stream wait'):
    each one inside a step gives one 'sync' edge from the last operation that started on its stream
    before the wait ended, to the end of the waiting call."""
    rows = sample_con.sql("""
        WITH waits AS (
            SELECT s.trace_id, s.stream_id, s.start_ns, s.end_ns, n.node_id, n.step_id
            FROM synchronizations s
            JOIN cp_nodes n ON n.trace_id = s.trace_id AND n.pid = s.pid AND n.correlation_id = s.correlation_id
                           AND n.kind = 'call' AND NOT n.is_start
            WHERE s.trace_id LIKE 'nsys-2025.3.1_cnn-train%'
        ),
        edges AS (
            SELECT e.trace_id, e.dst_node, src.stream_id, src.start_ns AS op_start, src.end_ns AS op_end
            FROM cp_edges e JOIN cp_nodes src ON src.trace_id = e.trace_id AND src.node_id = e.src_node
            WHERE e.edge_type = 'sync' AND e.trace_id LIKE 'nsys-2025.3.1_cnn-train%'
        ),
        later AS (  -- operations of the stream that started after the edge's source and before the wait ended
            SELECT w.node_id, count(o.node_id) AS n
            FROM waits w JOIN edges e ON e.trace_id = w.trace_id AND e.dst_node = w.node_id
            LEFT JOIN cp_nodes o ON o.trace_id = w.trace_id AND o.step_id = w.step_id AND o.is_start
                               AND o.stream_id = w.stream_id AND o.start_ns > e.op_start AND o.start_ns <= w.end_ns
            GROUP BY ALL
        )
        SELECT (SELECT count(*) FROM waits), (SELECT count(*) FROM edges),
               (SELECT count(*) FROM waits w JOIN edges e ON e.trace_id = w.trace_id AND e.dst_node = w.node_id
                WHERE e.stream_id = w.stream_id AND e.op_end <= w.end_ns),
               (SELECT count(*) FROM later WHERE n > 0)""").fetchall()[0]
    waits, edges, matching, not_last = rows
    assert waits >= 90 and edges == waits and matching == waits and not_last == 0


def test_recorded_host_sync_is_not_a_lower_bound_and_the_corpus_one_is(tmp_path):
    steps, _ = _ours(RECORDED / "torch-2.11_critpath-host-sync_h100.pt.trace.json.gz")
    assert steps["has_sync_events"].all()
    steps, _ = _ours(DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz")
    assert not steps["has_sync_events"].any()


@pytest.mark.corpus
def test_every_corpus_trace_gets_a_path(corpus_con):
    """Traces with CPU spans get steps whose path was computed; none fails (HTA crashes on some)."""
    missing = corpus_con.sql("""
        SELECT t.file_name FROM traces t
        WHERE EXISTS (SELECT 1 FROM api_calls a WHERE a.trace_id = t.trace_id)
          AND NOT EXISTS (SELECT 1 FROM cp_steps s WHERE s.trace_id = t.trace_id AND s.path_ok)""").fetchall()
    assert missing == []


def test_longest_path_walk_on_small_graphs():
    """A diamond whose longer branch ends earlier in time, ties at one timestamp, and a step whose
    edges form a cycle (reported, not fatal, and the other step still gets its path)."""
    import numpy as np
    from tracelake.analysis.critpath_longest import longest_paths

    # step 0: 0 -> 1 -> 3 (5 + 5) and 0 -> 2 -> 3 (1 + 20); node 2 lies later in time than node 3
    # (clock skew), node 1 at the same time as node 0; step 1: 4 -> 5 -> 4
    src, dst = np.array([0, 1, 0, 2, 4, 5]), np.array([1, 3, 2, 3, 5, 4])
    weight = np.array([5, 5, 1, 20, 7, 7])
    node_ts = np.array([0, 0, 50, 40, 0, 10])
    path, order, ok = longest_paths(6, src, dst, weight, np.array([0, 0, 0, 0, 1, 1]), 2, node_ts)
    assert path.tolist() == [21, 0] and ok.tolist() == [True, False]
    assert order.tolist() == [-1, -1, 0, 1, -1, -1]


def test_repeated_path_lengths_equal_the_full_walk():
    """The what-if runs' loop (RepeatedPaths) against longest_paths: random DAGs of several steps,
    edges against the time order included, many weightings (zeros too)."""
    import numpy as np
    from tracelake.analysis.critpath_longest import RepeatedPaths, longest_paths, topological_rank

    rng = np.random.default_rng(7)
    for _ in range(30):
        n, steps = int(rng.integers(2, 60)), int(rng.integers(1, 4))
        node_step = np.sort(rng.integers(0, steps, n))
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if node_step[a] == node_step[b] and rng.random() < 0.2]
        if not pairs:
            continue
        src, dst = np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])
        node_ts = np.arange(n) * 10 - rng.integers(0, 25, n)  # skewed clocks: some edges run back in time
        rank = topological_rank(src, dst, node_ts)
        repeated = RepeatedPaths(n, src, dst, node_step, steps, rank)
        for _ in range(5):
            weight = rng.integers(0, 100, len(src)) * (rng.random(len(src)) < 0.8)
            full, _, ok = longest_paths(n, src, dst, weight, node_step, steps, node_ts, rank)
            assert ok.all() and repeated.lengths(weight).tolist() == full.tolist()


def test_contracted_chains_give_the_full_walk_lengths():
    """RepeatedPaths walks the graph with its chains contracted (critpath_chains): on random graphs
    shaped like the critical-path graph (per step, a few long chains, as threads and streams are,
    with links between them, some against the time order, some into another step, weights of 0
    too), every weighting gives longest_paths' lengths; a negative weight is refused."""
    import numpy as np
    from tracelake.analysis.critpath_longest import RepeatedPaths, longest_paths, topological_rank

    rng = np.random.default_rng(29)
    for _ in range(40):
        n, steps = int(rng.integers(4, 400)), int(rng.integers(1, 4))
        node_step = np.sort(rng.integers(0, steps, n))
        lane = rng.integers(0, int(rng.integers(1, 5)), n)  # each node on one of a few chains
        pairs = {(a, b) for a, b in zip(range(n), range(1, n)) if lane[a] == lane[b] or rng.random() < 0.1}
        for a in rng.integers(0, n, int(rng.integers(0, n // 3 + 1))):  # links forward, a few across steps
            b = int(a + rng.integers(1, 20))
            if b < n and (node_step[a] == node_step[b] or rng.random() < 0.3):
                pairs.add((int(a), b))
        if not pairs:
            continue
        src, dst = np.array(sorted(pairs)).T
        node_ts = np.arange(n) * 10 - rng.integers(0, 25, n)
        rank = topological_rank(src, dst, node_ts)
        repeated = RepeatedPaths(n, src, dst, node_step, steps, rank)
        assert len(repeated.src) <= len(src)
        for _ in range(4):
            weight = rng.integers(0, 1000, len(src)) * (rng.random(len(src)) < 0.7)
            full, _, ok = longest_paths(n, src, dst, weight, node_step, steps, node_ts, rank)
            assert ok.all() and repeated.lengths(weight).tolist() == full.tolist()
    with pytest.raises(ValueError):
        repeated.lengths(-weight - 1)


def test_report_shows_the_path_and_the_whatif(tiny_lake):
    from conftest import rendered_page
    from markupsafe import escape

    [(trace_id,)] = tiny_lake.sql("SELECT trace_id FROM traces WHERE trace_id LIKE 'tiny-sync%'").fetchall()
    rows = critpath_whatif.report_rows(tiny_lake, trace_id)
    # step as a CUDA graph: A and the launch latency go, 88 -> 68 µs; launches only: the launch latency
    # goes, 78 (tests/test_critpath_whatif.py); launch halved: 88 -> 83 µs; CPU halved: its 10 + 3 µs on
    # the path halve, 88 -> 81.5; no host syncs: the host goes on after launching K, the path is
    # A, the launch and K: 80; K halved: 58
    assert [(r["scenario"], r["baseline_ns"], r["whatif_ns"]) for r in rows] == [
        ("CUDA graphs, whole step captured", 88_000, 68_000), ("CUDA graphs, launches only", 88_000, 78_000),
        ("launch overhead halved", 88_000, 83_000), ("CPU time halved", 88_000, 81_500),
        ("no host syncs", 88_000, 80_000), ("GPU compute 2x faster", 88_000, 58_000)]
    assert all(r["definition"] for r in rows)
    html = rendered_page(tiny_lake, trace_id, whatif=rows).html
    assert 'data-section="critical_path"' in html and '<figure data-chart="critical_path">' in html
    assert "GPU compute 2x faster" in html and "bound by" in html
    assert all(str(escape(r["definition"])) in html for r in rows)  # each scenario says what it removes


def test_steps_and_the_critical_path_spell_a_step_alike(sample_con):
    """Each step of the critical path is a step of `steps`, under the same name (NVTX ':step 3')."""
    path = set(sample_con.execute("SELECT trace_id, step FROM critical_path_summary WHERE step <> '(trace)'").fetchall())
    assert any(t.startswith("nsys-") for t, _ in path), "no Nsight step to compare"
    steps = set(sample_con.execute("SELECT trace_id, step FROM steps").fetchall())
    assert path <= steps, sorted(path - steps)[:3]
