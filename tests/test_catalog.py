"""The SQL catalog: every view is documented in its file's header and the documentation is not stale."""

from __future__ import annotations

import re

import pytest
from tracelake.analysis import catalog

FILES = catalog.load_files()


@pytest.mark.parametrize("sql_file", FILES, ids=[f.path for f in FILES])
def test_views_are_documented(sql_file, sample_con):
    assert sql_file.creates, "a .sql file creates at least one view or macro"
    assert re.search(r"^-- depends: ", sql_file.text, re.M), "declare what it reads"
    for name in [n for n in sql_file.creates if not n.startswith("_")]:  # '_name': internal to its file
        assert re.search(rf"^-- .*\b{name}\b.*: \S", sql_file.text, re.M), \
            f"{name} needs a '-- {name}: what it answers' line"
    views = {r[0] for r in sample_con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    actual = set()
    for name in set(sql_file.creates) & views:  # macros take arguments: their views document the columns
        actual |= {r[0] for r in sample_con.execute(f"DESCRIBE {name}").fetchall()}
    documented = set(re.findall(r"^-- @column (\w+)", sql_file.text, re.M))
    if not set(sql_file.creates) & views:
        return  # macros only: their header line documents what they return
    assert documented, "document the columns with '-- @column name meaning'"
    assert documented <= actual, f"documented but not in any view: {sorted(documented - actual)}"


def test_every_view_answers_on_the_sample_lake(sample_con):
    views = {r[0] for r in sample_con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    for f in FILES:
        for name in set(f.creates) & views:
            sample_con.execute(f"SELECT * FROM {name} LIMIT 1").fetchall()
