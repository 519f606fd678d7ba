"""Critical path per step (issue #19): graph + longest path for every step of the reference trace,
against its ingest time (target: at most 1x), the what-if re-run, and the longest path in SQL (a
DuckDB recursive CTE with USING KEY) against the Python walk on the same step."""

from __future__ import annotations

import time

import duckdb
import polars as pl
from tracelake.analysis import critpath_build
from tracelake.analysis.critpath_graph import build_graph
from tracelake.analysis.critpath_whatif import STANDARD_SCENARIOS, whatif
from tracelake.ingest.dispatch import ingest_file
from tracelake.lake.schema import TABLES
from tracelake.lake.writer import conform

from .common import REPO, SHARED, best_of
from .kineto_ingest import REFERENCE

SQL_CASE = REPO / "tests" / "data" / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"

# Longest path by relaxation: each iteration extends the paths by one edge, keeping per node only
# a longer distance than it had (recurring.dist is the whole keyed table so far).
LONGEST_PATH_SQL = """
WITH RECURSIVE dist(node, d) USING KEY (node) AS (
    SELECT DISTINCT src_node, 0::BIGINT FROM e WHERE src_node NOT IN (SELECT dst_node FROM e)
    UNION
    (SELECT e.dst_node, max(dist.d + e.weight_ns)
     FROM dist JOIN e ON e.src_node = dist.node
     LEFT JOIN recurring.dist r ON r.node = e.dst_node
     GROUP BY e.dst_node
     HAVING max(dist.d + e.weight_ns) > coalesce(any_value(r.d), -1))
)
SELECT max(d) FROM dist"""


def _sql_vs_python() -> list[tuple[str, str]]:
    tables, _ = critpath_build.build(ingest_file(str(SQL_CASE)).tables)
    edges = pl.from_arrow(tables["cp_edges"]).filter((pl.col("step_id") == 0) & (pl.col("edge_type") != "launch_order"))
    expected = pl.from_arrow(tables["cp_steps"])["path_ns"][0]
    con = duckdb.connect()
    con.register("e", edges.select("src_node", "dst_node", "weight_ns").to_arrow())
    t0 = time.perf_counter()
    got = con.sql(LONGEST_PATH_SQL).fetchall()[0][0]
    t_sql = time.perf_counter() - t0
    graph = build_graph({n: conform(n, ingest_file(str(SQL_CASE)).tables.get(n)) for n in TABLES})
    t_py = best_of(lambda: critpath_build.solve(graph))  # every step of the trace, not just one
    return [
        (f"Longest path in SQL (recursive CTE), one step of {SQL_CASE.name} ({edges.height:,} edges)",
         f"{t_sql:.2f} s ({'same length' if got == expected else f'DIFFERENT: {got} vs {expected}'})"),
        ("  in Python (critpath_longest), all 3 steps of the trace", f"{t_py * 1000:.0f} ms"),
    ]


def run() -> list[tuple[str, str]]:
    path = str(SHARED / REFERENCE)
    result = ingest_file(path)
    t_ingest = best_of(lambda: ingest_file(path))
    tables = {n: conform(n, result.tables.get(n)) for n in TABLES}
    t_graph = best_of(lambda: build_graph(tables))
    graph = build_graph(tables)
    t_path = best_of(lambda: critpath_build.solve(graph))
    t_build = best_of(lambda: critpath_build.build(result.tables))
    out, _ = critpath_build.build(result.tables)
    steps = out["cp_steps"].num_rows
    con = duckdb.connect()
    for name, table in out.items():  # as the lake has them, with the trace_id partition column
        con.register(name, pl.from_arrow(table).with_columns(pl.lit("reference").alias("trace_id")).to_arrow())
    t_whatif = best_of(lambda: whatif(con, list(STANDARD_SCENARIOS)), repeat=1)
    return [
        (f"Critical path of every step ({steps}) of the 281k-event trace: graph + path + tables",
         f"{t_build:.2f} s ({graph.events.height:,} events, {graph.edges.height:,} edges)"),
        ("  graph construction", f"{t_graph:.2f} s"),
        ("  longest paths (all steps)", f"{t_path:.2f} s"),
        ("  ingest of the same trace (decode + tables)", f"{t_ingest:.2f} s"),
        ("  critical path / ingest (target <= 1.0)", f"{t_build / t_ingest:.2f}"),
        (f"What-if, {len(STANDARD_SCENARIOS)} standard scenarios x {steps} steps (from the tables)", f"{t_whatif:.2f} s"),
        *_sql_vs_python(),
    ]
