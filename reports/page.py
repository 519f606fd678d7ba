"""What every section of a trace page shares: the connection, the trace, the page's one time origin
(the trace's start: every time axis and 'at' column counts from it) and the steady state of the
process the page describes (steady_summary), read once per page."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import duckdb


def frame(con, sql: str, params: list | None = None) -> pl.DataFrame:
    return con.sql(sql, params=params or []).pl()


@dataclass
class Page:
    con: duckdb.DuckDBPyConnection
    trace_id: str
    links: dict[str, str] = field(default_factory=dict)  # trace id -> relative link of its page
    whatif: list[dict] = field(default_factory=list)  # critpath_whatif.report_rows, when computed
    trace: dict = field(default_factory=dict)  # the trace's row of `traces`
    steady: dict | None = None  # steady_summary of the page's process (None: no steps found)
    export: str | None = None  # relative link of the trace's Perfetto export (`--export`), else None

    @classmethod
    def open(cls, con, trace_id: str, links: dict[str, str] | None = None, whatif: list[dict] | None = None,
             export: str | None = None) -> Page:
        trace = frame(con, "SELECT * FROM traces WHERE trace_id = ?", [trace_id]).to_dicts()[0]
        steady = frame(con, "SELECT * FROM steady_summary WHERE trace_id = ? ORDER BY pid LIMIT 1",
                       [trace_id]).to_dicts()
        return cls(con, trace_id, links or {}, whatif or [], trace, steady[0] if steady else None, export)

    @cached_property
    def summary(self) -> dict:
        """The trace's row of `trace_summary` (the index row's source too), read when first asked
        for: a single chart (tracelake.charts) does not need it, and on a lake whose views are not
        derived it evaluates every finding rule."""
        return frame(self.con, "SELECT * FROM trace_summary WHERE trace_id = ?", [self.trace_id]).to_dicts()[0]

    @property
    def origin_ns(self) -> int:
        """The time every axis and 'at' column of the page counts from: the trace's start."""
        return self.trace["start_ns"]

    @property
    def steady_label(self) -> str:
        """How the page names the window its steady numbers describe."""
        s = self.steady
        if s is None:
            return "whole trace (no steps found)"
        warm = f" after {s['warmup_steps']:,} warm-up" if s["warmup_steps"] else ""
        return f"steady state ({s['steps']:,} step{'s' if s['steps'] != 1 else ''}{warm})"

    def sql(self, sql: str, params: dict | None = None) -> pl.DataFrame:
        """A query with $trace (the page's trace id) bound, and `params`' names."""
        return self.con.sql(sql, params={"trace": self.trace_id, **(params or {})}).pl()
