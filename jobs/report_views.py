"""Which views the report job evaluates once per task, derived from what the page's sections read
(reports/sections: each section's VIEWS) through the SQL catalog's `depends:` lines; no hand lists.

- page views: the views the sections read; a task of several pages evaluates each once for all
  its pages (frozen: a temporary table shadows the view).
- shared views: the views under them that two or more readers (views, or sections) read, and the
  finding rules: evaluated once per task even for one page. DuckDB planned the union of ~20 rule
  views twice as slowly at once as rule by rule, so every rule is frozen before `findings`.

Both lists come in catalog order, so that what a view reads is frozen before it.
"""

from __future__ import annotations

from functools import cache

from ..lake import catalog
from ..lake.schema import TABLES
from ..reports.sections import SECTIONS
from ..reports.sections import views as section_views


def _catalog():
    files = catalog.load_files()
    order = [name for f in catalog.ordered(files, set(TABLES)) for name in f.creates]
    views = {v for f in files for v in catalog._VIEW.findall(f.text)}
    creator = {name: f for f in files for name in f.creates}
    return files, order, views, creator


@cache
def page_and_shared() -> tuple[list[str], list[str]]:
    files, order, views, creator = _catalog()
    wanted = section_views()
    unknown = [v for v in wanted if v not in views]
    if unknown:
        raise ValueError(f"report sections read views the catalog does not create: {unknown}")
    closure = catalog.reads(wanted, TABLES, files) & views
    readers: dict[str, int] = {v: sum(v in s.VIEWS for s in SECTIONS) for v in closure}
    for path in {creator[v].path for v in closure}:
        f = next(f for f in files if f.path == path)
        for dep in set(f.depends):
            if dep in readers and dep not in f.creates:
                readers[dep] += len([v for v in f.creates if v in closure]) or 1
    rules = set(catalog.rule_views(files)) & closure
    shared = {v for v, n in readers.items() if n >= 2} | rules
    if "findings" in closure:
        shared |= {"findings"}
    page = [v for v in order if v in wanted and v not in shared]
    shared_list = [v for v in order if v in shared and v != "findings"] + (["findings"] if "findings" in shared else [])
    return page, shared_list


def page_views() -> list[str]:
    """The views the sections read that are not shared views, in catalog order."""
    return page_and_shared()[0]


def shared_views() -> list[str]:
    """Views read by two or more readers under the sections, and the finding rules (then findings)."""
    return page_and_shared()[1]


def reached(served: set[str]) -> set[str]:
    """The views the sections read, and those under them down to the views in `served` (read from
    the lake's derived partitions: what is under them is not evaluated). A superset: a SQL file's
    views and dependencies count together (catalog.reads)."""
    return _reached(frozenset(served))


@cache
def _reached(served: frozenset[str]) -> set[str]:
    return catalog.reads(section_views(), TABLES, stop=served)


@cache
def lazy_tables() -> frozenset[str]:
    """The base tables no view the sections read evaluates, once the materialized views are read
    from the lake's derived partitions (scoped.derived_served): a report task loads them as views
    over their files, read only by the queries that name them (the critical path's what-if, the
    calling context) instead of copying every table into memory."""
    materialized = set(catalog.materialized())
    evaluated = catalog.reads([v for v in section_views() if v not in materialized], TABLES, stop=materialized)
    return frozenset(set(TABLES) - evaluated)
