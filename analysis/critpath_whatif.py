"""What-if: each step's length if some of its critical-path edges were shortened.

HTA's critical-path "simulation": edit the weights of the graph's edges and run the longest path
again; the new path may go elsewhere (a shorter GPU chain exposes the CPU, and so on). The edges
come from the lake (cp_edges, written at ingest); what each scenario changes is defined in
critpath_scenarios (class factors, and the CUDA-graph models). Both runs (baseline and edited)
include two kinds of zero-weight constraints that the measured path leaves out: the
'launch_order' edges (no GPU operation starts before the call that launched it) and the
stream order (no GPU operation starts before the previous one on its stream ended;
critpath_scenarios.stream_order_edges), so the baseline of a what-if can be a little longer than
critical_path_summary.path_ns.

The rows are per step of critical_path_steps (the steps view's). Where those are not the graph's
steps (a '(trace)' graph, or one ProfilerStep holding the periods: is_cut), each run's path is cut
at the steps' boundaries as the measured one is (the SQL macro critical_path_cut): a step's
baseline and what-if are the parts of the two paths inside its window, placed by the edges'
measured times.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from .critpath_longest import RepeatedPaths, longest_paths, topological_rank
from .critpath_scenarios import STANDARD_SCENARIOS, EdgeFacts, Scenario, edge_facts, parse_scale, stream_order_edges

__all__ = ["STANDARD_SCENARIOS", "Scenario", "parse_scale", "report_rows", "whatif"]


class _Graph:
    """One trace's edges with dense node numbers, ready for repeated longest-path runs."""

    def __init__(self, edges: pl.DataFrame, node_ts: pl.DataFrame):
        nodes, inverse = np.unique(np.concatenate([edges["src_node"].to_numpy(), edges["dst_node"].to_numpy()]),
                                   return_inverse=True)
        n = len(edges)
        self.steps, step_index = np.unique(edges["step_id"].to_numpy(), return_inverse=True)
        self.node_step = np.zeros(len(nodes), dtype=np.int64)
        self.node_step[inverse[:n]] = step_index
        self.node_step[inverse[n:]] = step_index
        self.src, self.dst, self.n_nodes = inverse[:n], inverse[n:], len(nodes)
        self.node_ts = (pl.DataFrame({"node_id": nodes}).join(node_ts, on="node_id", how="left", maintain_order="left")
                        ["ts_ns"].fill_null(0).to_numpy())
        self.rank = topological_rank(self.src, self.dst, self.node_ts)  # None on a cycle: longest_paths copes
        self.repeated = (None if self.rank is None or n == 0 else
                         RepeatedPaths(self.n_nodes, self.src, self.dst, self.node_step, len(self.steps), self.rank))

    def paths(self, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(path length, ok) per step of `self.steps`, in that order. Removed edges (negative
        weights, critpath_scenarios.NO_EDGE) need the full graph: a chain broken by one has nodes
        a path may start at (critpath_chains)."""
        if self.repeated is not None and (len(weight) == 0 or weight.min() >= 0):
            return self.repeated.lengths(weight), np.ones(len(self.steps), dtype=bool)
        path, _, ok = longest_paths(self.n_nodes, self.src, self.dst, weight, self.node_step, len(self.steps),
                                    self.node_ts, self.rank)
        return path, ok

    def path_edges(self, weight: np.ndarray) -> np.ndarray:
        """The edges on each step's longest path under `weight` (indices into the edges)."""
        _, on_path, _ = longest_paths(self.n_nodes, self.src, self.dst, weight, self.node_step, len(self.steps),
                                      self.node_ts, self.rank)
        return np.flatnonzero(on_path >= 0)


def whatif(con, scenarios: list[Scenario], trace_ids: list[str] | None = None) -> pl.DataFrame:
    """Per trace, step and scenario: baseline_ns, whatif_ns, saved_ns and saved_pct. The traces are
    read one at a time, and of the graph's nodes only what the scenarios use: every node's time,
    the events' facts, and the names of host calls (a blocking call, a graph launch) alone (the
    3.4M-event trace of bench big_input: 3.4 GB peak when all columns of every node were read)."""
    if trace_ids is None:
        trace_ids = [r[0] for r in con.execute("SELECT DISTINCT trace_id FROM cp_edges ORDER BY 1").fetchall()]
    steps = con.sql("SELECT trace_id, step_id, pid, step, step_index FROM cp_steps "
                    "WHERE trace_id IN (SELECT unnest(?))", params=[trace_ids]).pl()
    cut = {r[0] for r in con.execute("SELECT DISTINCT trace_id FROM critical_path_steps WHERE is_cut "
                                     "AND trace_id IN (SELECT unnest(?))", [trace_ids]).fetchall()}
    cut_rows = []
    chained = _chained_traces(con, trace_ids) if any(s.fused_chains for s in scenarios) else set()
    rows = []
    for trace_id in trace_ids:
        built = trace_graph(con, trace_id, trace_id in chained)
        if built is None:
            continue
        graph, facts = built
        if trace_id in cut:
            if scenarios:
                cut_rows.append(_cut_whatif(con, trace_id, graph, facts, scenarios, steps))
            continue
        base_ns, base_ok = graph.paths(facts.weight)
        columns: dict[str, list] = {"step_id": [], "scenario": [], "baseline_ns": [], "whatif_ns": []}
        for scenario in scenarios:
            scaled = facts.weights(scenario)
            # weights unchanged (the trace has no edge the scenario changes, or none with time):
            # the same graph gives the same paths, no need to run it again
            path_ns, ok = (base_ns, base_ok) if np.array_equal(scaled, facts.weight) else graph.paths(scaled)
            kept = ok & base_ok
            columns["step_id"].append(graph.steps[kept])
            columns["scenario"].append(np.full(int(kept.sum()), scenario.label, dtype=object))
            columns["baseline_ns"].append(base_ns[kept])
            columns["whatif_ns"].append(path_ns[kept])
        if not scenarios:
            continue
        # one frame per trace (numpy per scenario: a polars join per scenario cost more than the runs)
        rows.append(pl.DataFrame({"trace_id": trace_id, "step_id": np.concatenate(columns["step_id"]),
                                  "scenario": pl.Series(np.concatenate(columns["scenario"]), dtype=pl.String),
                                  "baseline_ns": np.concatenate(columns["baseline_ns"]).astype(np.int64),
                                  "whatif_ns": np.concatenate(columns["whatif_ns"]).astype(np.int64)}))
    if not rows and not cut_rows:
        return pl.DataFrame(schema={"trace_id": pl.String, "pid": pl.Int64, "step": pl.String,
                                    "step_index": pl.Int64, "scenario": pl.String, "baseline_ns": pl.Int64,
                                    "whatif_ns": pl.Int64, "saved_ns": pl.Int64, "saved_pct": pl.Float64})
    keys = ["trace_id", "pid", "step", "step_index", "scenario", "baseline_ns", "whatif_ns"]
    parts = [r.select(keys) for r in cut_rows]
    if rows:
        parts.insert(0, pl.concat(rows).join(steps, on=["trace_id", "step_id"]).select(keys))
    out = pl.concat(parts)
    return out.select("trace_id", "pid", "step", "step_index", "scenario", "baseline_ns", "whatif_ns",
                      (pl.col("baseline_ns") - pl.col("whatif_ns")).alias("saved_ns"),
                      pl.when(pl.col("baseline_ns") > 0).then(100.0 * (pl.col("baseline_ns") - pl.col("whatif_ns"))
                              / pl.col("baseline_ns")).alias("saved_pct"),
                      ).sort("trace_id", "pid", "step_index", maintain_order=True)


def _cut_whatif(con, trace_id: str, graph: _Graph, facts: EdgeFacts, scenarios: list[Scenario],
                steps: pl.DataFrame) -> pl.DataFrame:
    """The what-if rows of a trace whose steps cut its graph's path (critical_path_steps.is_cut): per
    cut step and scenario, the parts of the baseline and the scenario's paths in the step's window."""
    mine = steps.filter(pl.col("trace_id") == trace_id)
    pid_of = dict(zip(mine["step_id"].to_list(), mine["pid"].to_list(), strict=True))
    graph_pid = pl.Series([pid_of.get(int(s)) for s in graph.steps], dtype=pl.Int64)
    # run 0 the baseline, run i scenario i; a scenario that changes no weight has the baseline's path
    parts: list[pl.DataFrame] = []
    paths: dict[bytes, np.ndarray] = {}
    for run, weight in enumerate([facts.weight] + [facts.weights(s) for s in scenarios]):
        key = weight.tobytes()
        if key not in paths:
            paths[key] = graph.path_edges(weight)
        on = paths[key]
        lo, hi = graph.node_ts[graph.src[on]], graph.node_ts[graph.dst[on]]
        parts.append(pl.DataFrame({"trace_id": trace_id, "run": run,
                                   "graph_pid": graph_pid.gather(graph.node_step[graph.src[on]]),
                                   "lo_ns": np.minimum(lo, hi), "hi_ns": np.maximum(lo, hi),
                                   "weight_ns": weight[on].astype(np.int64)}))
    con.register("_whatif_path_edges", pl.concat(parts).to_arrow())
    try:
        per_step = con.sql("""
            SELECT s.pid, s.step, s.step_index, r.run, coalesce(c.ns, 0) AS ns
            FROM critical_path_steps s
            CROSS JOIN (SELECT DISTINCT run FROM _whatif_path_edges) r
            LEFT JOIN (SELECT pid, step_index, run, CAST(sum(weight_ns) AS BIGINT) AS ns
                       FROM critical_path_cut(_whatif_path_edges) GROUP BY ALL) c
                   ON c.pid = s.pid AND c.step_index = s.step_index AND c.run = r.run
            WHERE s.trace_id = ? AND s.is_cut""", params=[trace_id]).pl()
    finally:
        con.unregister("_whatif_path_edges")
    base = per_step.filter(pl.col("run") == 0).select("pid", "step_index", pl.col("ns").alias("baseline_ns"))
    labels = pl.DataFrame({"run": range(1, len(scenarios) + 1), "scenario": [s.label for s in scenarios]},
                          schema={"run": pl.Int64, "scenario": pl.String})
    return (per_step.filter(pl.col("run") > 0).join(base, on=["pid", "step_index"]).join(labels, on="run")
            .sort("pid", "step_index", "run")
            .select(pl.lit(trace_id).alias("trace_id"), "pid", "step", "step_index", "scenario", "baseline_ns",
                    pl.col("ns").alias("whatif_ns")))


def trace_graph(con, trace_id: str, fused: bool) -> tuple[_Graph, EdgeFacts] | None:
    """One trace's what-if graph (its edges and the stream-order edges) and the facts its scenarios
    weigh the edges by; None when the trace has no edges. `fused`: read its fused chains."""
    edges = con.sql("SELECT step_id, src_node, dst_node, weight_ns, class, edge_type, event_id FROM cp_edges "
                    "WHERE trace_id = ? ORDER BY edge_id", params=[trace_id]).pl()
    if edges.is_empty():
        return None
    node_ts = con.sql("SELECT node_id, ts_ns FROM cp_nodes WHERE trace_id = ?", params=[trace_id]).pl()
    events = con.sql("""SELECT node_id, ts_ns, event_id, step_id, kind, CASE WHEN kind = 'call' THEN name END AS name,
                               pid, tid, device_id, stream_id, correlation_id, start_ns, end_ns
                        FROM cp_nodes WHERE trace_id = ? AND is_start""", params=[trace_id]).pl()
    extra = stream_order_edges(events)
    chains = _chain_kernels(con, [trace_id]) if fused else None
    copies = con.sql("""SELECT c.pid, c.correlation_id, c.copy_kind, r.pinned_ns, r.duration_ns FROM memcpy c
                        LEFT JOIN memcpy_pinned_rates r USING (trace_id, pid, correlation_id)
                        WHERE c.trace_id = ? AND c.copy_kind IN ('HtoD', 'DtoH')""", params=[trace_id]).pl()
    facts = edge_facts(edges, events, extra, chains, copies)
    step_of = events.select((2 * pl.col("event_id") + 1).alias("src_node"), "step_id").unique("src_node")
    # the graph's edges in the order of facts' weights: the trace's edges, then `extra` (a join
    # that may reorder rows would pair the stream-order edges with other edges' weights)
    graph = _Graph(pl.concat([edges.select("step_id", "src_node", "dst_node"),
                              extra.join(step_of, on="src_node", how="left", maintain_order="left")
                              .select("step_id", "src_node", "dst_node")]), node_ts)
    return graph, facts


def _chained_traces(con, trace_ids: list[str]) -> set[str]:
    """The traces with a fusion chain that saves time: only they need _chain_kernels, whose
    fusion_kernels view is evaluated for every trace of the database (40 ms a call with the 37
    corpus traces loaded; 12 of them have such chains)."""
    return {r[0] for r in con.execute("SELECT DISTINCT trace_id FROM fusion_chains WHERE saved_ns > 0 "
                                      "AND trace_id IN (SELECT unnest(?))", [trace_ids]).fetchall()}


def _chain_kernels(con, trace_ids: list[str] | None) -> pl.DataFrame:
    """The graph's kernel events that are in a fusion chain with a predicted saving: event_id, the
    chain's fused_ns / device_ns, and whether the kernel is the chain's first."""
    where = "" if trace_ids is None else "AND k.trace_id IN (SELECT unnest(?))"
    return con.sql(f"""
        SELECT n.trace_id, n.event_id, c.fused_ns / c.device_ns AS factor, k.start_ns = c.start_ns AS first
        FROM fusion_kernels k
        JOIN fusion_chains c ON c.trace_id = k.trace_id AND c.pid = k.pid AND c.device_id = k.device_id
                            AND c.stream_id = k.stream_id AND c.step IS NOT DISTINCT FROM k.step
                            AND c.chain_no = k.chain_no
        JOIN cp_nodes n ON n.trace_id = k.trace_id AND n.is_start AND n.kind = 'kernel' AND n.pid = k.pid
                       AND n.device_id = k.device_id AND n.stream_id = k.stream_id AND n.start_ns = k.start_ns
        WHERE k.kind = 'memory' AND c.saved_ns > 0 {where}""", params=[] if trace_ids is None else [trace_ids]).pl()


def report_rows(con, trace_id: str) -> list[dict]:
    """The standard scenarios for one trace's report: per scenario, the critical paths of the steps of
    its first process summed, before and after (a stall in some steps only still shows), and its
    one-line `definition` (what it removes); scenarios that save less than 0.5 % are left out."""
    frame = whatif(con, list(STANDARD_SCENARIOS), [trace_id])
    if frame.is_empty():
        return []
    first = frame.filter(pl.col("pid").eq_missing(frame["pid"].min()))
    summary = (first.group_by("scenario", maintain_order=True)
               .agg(pl.col("baseline_ns").sum(), pl.col("whatif_ns").sum(), pl.len().alias("steps"))
               .with_columns((100.0 * (pl.col("baseline_ns") - pl.col("whatif_ns")) / pl.col("baseline_ns"))
                             .alias("saved_pct")))
    definitions = pl.DataFrame({"scenario": [s.label for s in STANDARD_SCENARIOS],
                                "definition": [s.definition for s in STANDARD_SCENARIOS]})
    return (summary.filter(pl.col("saved_pct") >= 0.5).join(definitions, on="scenario", how="left", maintain_order="left")
            .to_dicts())
