"""The SQL catalog: every view is documented in its file's header and the documentation is not stale.

Columns are checked both ways against DESCRIBE: every column of every view has an `-- @column` line
in its file (a rollup may rely on the lines of the view it rolls up), and every `-- @column` line
names a column of the views its block documents: the views named ('-- name: ...') in the comment
above the block, or, when those are macros only, some view of the file.
"""

from __future__ import annotations

import re

import pytest
from tracelake.lake import catalog

FILES = catalog.load_files()
_HEADER = re.compile(r"^-- ([A-Za-z_]\w*)(?:\([^)]*\))?: ")
_COLUMN = re.compile(r"^-- @column (\w+)")


def column_blocks(sql_file) -> list[tuple[set[str], set[str]]]:
    """(names in the comment above, documented columns) per block of '-- @column' lines."""
    blocks, named, columns = [], set(), set()
    for line in sql_file.text.splitlines():
        if (m := _COLUMN.match(line)):
            columns.add(m.group(1))
            continue
        if columns:
            blocks.append((named, columns))
            named, columns = set(), set()
        if (m := _HEADER.match(line)) and m.group(1) in sql_file.creates:
            named = named | {m.group(1)}
        elif not line.startswith("--") and line.strip():
            named = set()  # a statement ends the comment its block belongs to
    if columns:
        blocks.append((named, columns))
    return blocks


@pytest.fixture(scope="module")
def views(_sample_db) -> dict[str, list[str]]:
    con = _sample_db.cursor()
    names = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    return {n: [r[0] for r in con.execute(f"DESCRIBE {n}").fetchall()] for n in names}


def column_problems(sql_file, views: dict[str, list[str]]) -> list[str]:
    """Undocumented columns of the file's views, and documented columns its blocks' views lack."""
    problems = []
    file_views = [n for n in sql_file.creates if n in views]
    blocks = column_blocks(sql_file)
    documented = set().union(*(cols for _, cols in blocks))
    for name in file_views:
        if missing := [c for c in views[name] if c not in documented]:
            problems.append(f"{name}: undocumented columns {missing}: add '-- @column name meaning (unit)'")
    for named, cols in blocks:
        targets = [n for n in named if n in views] or file_views
        if targets and (stale := sorted(cols - set().union(*(views[n] for n in targets)))):
            problems.append(f"documented but not a column of {', '.join(sorted(targets))}: {stale}")
    return problems


@pytest.mark.parametrize("sql_file", FILES, ids=[f.path for f in FILES])
def test_views_are_documented(sql_file, views):
    assert sql_file.creates, "a .sql file creates at least one view or macro"
    assert re.search(r"^-- depends: ", sql_file.text, re.M), "declare what it reads"
    for name in [n for n in sql_file.creates if not n.startswith("_")]:  # '_name': internal to its file
        assert re.search(rf"^-- .*\b{name}\b.*: \S", sql_file.text, re.M), \
            f"{name} needs a '-- {name}: what it answers' line"
    assert column_problems(sql_file, views) == []


def test_the_column_check_catches_both_kinds_of_drift(views):
    f = next(f for f in FILES if f.path == "analysis/gpu_gaps.sql")
    drifted = f.text.replace("-- @column context_id ", "-- @column gpu_context_id ")
    assert column_problems(catalog.SqlFile(f.path, drifted, f.creates, f.depends), views) == [
        "gpu_gaps: undocumented columns ['context_id']: add '-- @column name meaning (unit)'",
        "documented but not a column of gpu_gaps: ['gpu_context_id']"]


def test_every_view_answers_on_the_sample_lake(sample_con, views):
    for f in FILES:
        for name in set(f.creates) & set(views):
            sample_con.execute(f"SELECT * FROM {name} LIMIT 1").fetchall()


def test_view_reads_is_all_that_a_view_needs_and_not_its_file_mates():
    """`tracelake stats` evaluates once only what its reports read (catalog.view_reads): those
    statements alone, in catalog order over empty base tables, are enough for each view to bind."""
    import duckdb
    from tracelake.lake import base_tables
    from tracelake.lake.schema import TABLES

    for view in ("kernel_summary", "memcpy_time_summary", "memcpy_size_summary", "api_summary_nsys", "nvtx_summary",
                 "gpu_gaps", "gpu_utilization"):
        needed = catalog.view_reads([view])
        con = duckdb.connect()
        base_tables.load(con, None, [])
        for f in catalog.ordered(FILES, set(TABLES)):
            for name, sql in catalog.statements(f).items():
                if name in needed:
                    con.execute(sql)
        con.execute(f"SELECT * FROM {view} LIMIT 0")
        con.close()
    needed = catalog.view_reads(["kernel_summary"])
    assert "duration_stats" in needed and "kernel_summary_by_device" not in needed


def test_shared_reads_are_what_two_readers_read():
    """gpu_gaps and gpu_utilization both read gpu_busy (through their own SQL or a macro of theirs):
    it is evaluated once for both; nvtx_ranges has one reader there, nvtx_summary, and is not;
    under findings every finding rule is."""
    shared = catalog.shared_reads([{"gpu_gaps"}, {"gpu_utilization"}, {"nvtx_summary"}])
    assert {"gpu_busy", "gpu_active_range"} <= shared and not {"nvtx_ranges", "gpu_gaps"} & shared
    assert set(catalog.rule_views(FILES)) <= catalog.shared_reads([{"findings"}])
