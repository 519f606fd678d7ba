"""Every view gives the same rows however DuckDB orders the rows it reads.

A choice left to a tie (arg_max over equal keys, mode() of two values as frequent, a
row_number() over equal sort keys, an ASOF join to rows that start in the same ns, a list
without an order) is decided by the order in which rows reach the operator, which follows
DuckDB's hash tables and threads: collective_instances named a send matched with its recv
'send' or 'recv' from one evaluation to the next (128f027), memory_peaks took any of the
events at the peak. Evaluating a view again seldom shows it: small tables are read by one
thread in one order. So the views are evaluated three times over the same rows in three
orders (as stored, and sorted by a hash of each row, up and down), every view in catalog
order over tables holding the rows of the views under it, and must give the same rows
(sorted; doubles equal to 1e-9: parallel sums differ in their last bits).

Reading each view's inputs as tables is what keeps this to one evaluation of each view per
order (5-6 s of the 2-core machine for the lake's ~190 views; the test about a minute under
load). Over the base tables each view evaluates every view under it again: one evaluation of
them all took 11 CPU-minutes on this lake, 530 s of it in the four views that read every
finding rule (finding_rule_rows, findings, findings_by_rule, trace_summary), each evaluating
the ~40 rules and all the views under them.
"""

from __future__ import annotations

import math

import pytest
from conftest import DATA, REPO

RECORDED = REPO / "tests" / "recorded"
FILES = [
    DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz",  # steps, operators, memory, fusion chains
    DATA / "torch-2.11_mlp-compiled-inference-fp16_h100.pt.trace.json.gz",  # several events at a memory peak
    *sorted((RECORDED / "torch-2.11_collectives-skew-2rank_h200x2").glob("rank*.pt.trace.json.gz")),  # send = recv
    RECORDED / "nsys-2025.3.1_diff-base_h100.sqlite.gz",  # an Nsight export: NVTX operator ranges, API calls
    RECORDED / "torch-2.11_graphs-eager-inference_h100.pt.trace.json.gz",  # a path cut at the steps' windows
]
# the rows of each base table and view as stored, and sorted by a hash of the row up and down
ORDERS = ("", "ORDER BY hash(t)", "ORDER BY hash(t) DESC")


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    from tracelake.cli.main import main

    lake = tmp_path_factory.mktemp("deterministic") / "lake"
    assert main(["ingest", *map(str, FILES), "--lake", str(lake), "--quiet"]) == 0
    return lake


def _key(value):
    """A sort key that equal rows share: doubles to 9 significant digits."""
    if isinstance(value, float):
        return f"{value:.9g}"
    if isinstance(value, (list, tuple)):
        return tuple(_key(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _key(v)) for k, v in value.items())
    return repr(value)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # a list's order is part of its value
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _difference(first: list[tuple], other: list[tuple]) -> str | None:
    """None when the two results hold the same rows, else a few rows of each that differ."""
    a, b = sorted(first, key=_key), sorted(other, key=_key)
    if len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True)):
        return None
    only_a = [r for r in a if not any(_same(r, s) for s in b)][:2]
    only_b = [r for r in b if not any(_same(r, s) for s in a)][:2]
    return f"{len(a)} vs {len(b)} rows; {only_a} vs {only_b}"


def _databases(lake):
    """One in-memory catalog per order, holding every trace of the lake, its base tables in that order."""
    from tracelake.lake import layout
    from tracelake.lake.schema import TABLES
    from tracelake.lake.scoped import ScopedDatabase

    ids = sorted(layout.complete_trace_ids(lake))
    out = []
    for order in ORDERS:
        con = ScopedDatabase(lake, writable=True).load(ids)
        con.execute("SET threads = 4")  # more than one: parallel operators finish in varying order
        if order:
            for table in TABLES:
                con.execute(f"CREATE TABLE _sorted AS SELECT * FROM {table} t {order}; DROP TABLE {table}; "
                            f"ALTER TABLE _sorted RENAME TO {table}")
        out.append(con)
    return out


def test_every_view_gives_the_same_rows_whatever_the_order_of_its_input(lake):
    from tracelake.lake import catalog
    from tracelake.lake.schema import TABLES

    dbs = _databases(lake)
    try:
        views = {r[0] for r in dbs[0].execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        order = [v for f in catalog.ordered(catalog.load_files(), set(TABLES)) for v in f.creates if v in views]
        assert set(order) == views and len(order) > 150
        differ, with_rows = {}, 0
        for view in order:
            results = []
            for con, sort in zip(dbs, ORDERS, strict=True):
                # the view's rows become a table (in this database's order) that the views above it read
                con.execute(f"CREATE TABLE _rows_{view} AS SELECT * FROM main.{view} t {sort}")
                results.append(con.execute(f"SELECT * FROM _rows_{view}").fetchall())
                con.execute(f"BEGIN; DROP VIEW {view}; ALTER TABLE _rows_{view} RENAME TO {view}; COMMIT")
            with_rows += bool(results[0])
            for other in results[1:]:
                if (found := _difference(results[0], other)) is not None:
                    differ[view] = found
                    break
        # the traces exercise most views (a view with no rows cannot show a tie), and hold the ties
        # that were found deciding rows: a send matched with its recv (collective_instances.operation),
        # several events at a step's memory peak (memory_peaks.peak_at_ns); and a path cut at steps
        assert with_rows >= 0.7 * len(order), f"{with_rows} of {len(order)} views have rows"
        assert dbs[0].execute("SELECT count(*) FROM critical_path_steps WHERE is_cut").fetchone()[0] > 0
        assert dbs[0].execute("""SELECT count(*) FROM (SELECT instance FROM collective_instance_ranks
                                 GROUP BY run_id, instance HAVING count(DISTINCT operation) > 1)""").fetchone()[0] > 0
        assert dbs[0].execute("""
            SELECT count(*) FROM (
                SELECT p.trace_id, p.pid, p.device_id, p.step_index
                FROM memory_peaks p
                JOIN memory_timeline m ON m.trace_id = p.trace_id AND m.pid = p.pid AND m.device_id = p.device_id
                                      AND m.ts_ns >= p.step_start_ns AND m.ts_ns < p.step_end_ns
                                      AND m.allocated_bytes = p.peak_allocated_bytes
                GROUP BY ALL HAVING count(*) > 1)""").fetchone()[0] > 0
        assert not differ, "views whose rows depend on the order of their input (the first may cause the " \
                           "others, which read it):\n" + "\n".join(f"{v}: {d[:1500]}" for v, d in differ.items())
    finally:
        for con in dbs:
            con.close()

