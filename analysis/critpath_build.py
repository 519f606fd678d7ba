"""Critical path of every step of one trace, built at ingest and written to the lake.

Why at ingest, per trace: the graph needs every CPU span, call and GPU operation of a step in
time order, which the ingester already holds in memory as Arrow tables; rebuilding it on demand
would re-read all of them from Parquet for every query, and the longest path is a sequential
walk that SQL cannot express cheaply (a recursive CTE takes one iteration per edge of the path;
see bench/RESULTS.md). The result is small (one row per node and edge of the steps) and the
SQL views in sql/analysis/critical_path.sql only aggregate it. The what-if re-runs
(critpath_whatif) need the same edges, so they read them back from these tables.

Tables (lake/schema.py): cp_steps (one row per step with its path length), cp_nodes (start
and end of each event in a step's graph), cp_edges (typed, weighted edges, with their position on
the path when they are on it).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from ..lake.schema import CRITPATH_TABLES, TABLES
from ..lake.writer import conform
from .critpath_graph import Graph, build_graph
from .critpath_longest import longest_paths


def solve(graph: Graph, edges: pl.DataFrame | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Longest path per step over `edges` (default: the graph's measured edges, without 'launch_order')."""
    if edges is None:
        edges = graph.edges.filter(pl.col("edge_type") != "launch_order")
    events = graph.events.sort("ev")
    n_nodes = 2 * events.height
    node_step = np.repeat(events["step_id"].to_numpy(), 2)
    node_ts = np.column_stack([events["start_ns"].to_numpy(), events["end_ns"].to_numpy()]).reshape(-1)
    return longest_paths(n_nodes, edges["src"].to_numpy(), edges["dst"].to_numpy(), edges["weight_ns"].to_numpy(),
                         node_step, graph.steps.height, node_ts)


# The lake tables build() makes (none for a trace without CPU spans).
BUILDS = CRITPATH_TABLES


def build(tables: dict[str, pa.Table], hta_compat: bool = False) -> tuple[dict[str, pa.Table], list[str]]:
    """cp_steps, cp_nodes and cp_edges for one trace (none when it has no CPU spans), and warnings.
    `hta_compat`: HTA's own numbers, to compare with it (critpath_graph.build_graph)."""
    tables = {name: conform(name, tables.get(name)) for name in TABLES}
    graph = build_graph(tables, hta_compat)
    if graph.events.height == 0:
        return {}, graph.warnings
    measured = graph.edges.filter(pl.col("edge_type") != "launch_order")
    path_ns, order, ok = solve(graph, measured)
    edges = pl.concat([
        measured.with_columns(pl.Series("path_order", order, pl.Int64)),
        graph.edges.filter(pl.col("edge_type") == "launch_order").with_columns(pl.lit(-1, pl.Int64).alias("path_order")),
    ]).with_columns(pl.when(pl.col("path_order") >= 0).then(pl.col("path_order")).alias("path_order"))
    ev = graph.events.sort("ev")
    step_of = ev.select("ev", "step_id")
    edges = (edges.join(step_of, left_on=pl.col("src") // 2, right_on="ev", how="left").drop("ev", strict=False)
             .with_row_index("edge_id").with_columns(pl.col("edge_id").cast(pl.Int64)))
    steps = graph.steps.with_columns(pl.Series("path_ns", path_ns, pl.Int64), pl.Series("path_ok", ok, pl.Boolean))
    if not ok.all():
        graph.warnings.append(f"critical path: the graph of {int((~ok).sum())} steps has a cycle; no path for them")
    starts = ev.select(pl.col("ev").alias("event_id"), "step_id", (2 * pl.col("ev")).alias("node_id"),
                       pl.col("start_ns").alias("ts_ns"), pl.lit(True).alias("is_start"), "kind", "name", "pid", "tid",
                       "device_id", "stream_id", "correlation_id", "start_ns", "end_ns")
    ends = starts.with_columns((pl.col("node_id") + 1).alias("node_id"), pl.col("end_ns").alias("ts_ns"),
                               pl.lit(False).alias("is_start"))
    nodes = pl.concat([starts, ends]).sort("node_id")
    out = {
        "cp_steps": steps.select(*TABLES["cp_steps"].column_names).to_arrow(),
        "cp_nodes": nodes.select(*TABLES["cp_nodes"].column_names).to_arrow(),
        "cp_edges": edges.rename({"src": "src_node", "dst": "dst_node", "attr_ev": "event_id"})
        .select(*TABLES["cp_edges"].column_names).to_arrow(),
    }
    return {name: conform(name, t) for name, t in out.items()}, graph.warnings
