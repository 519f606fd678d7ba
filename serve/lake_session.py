"""The lake as the MCP server reads it: opened once, read-only, with safe SQL's locks
(lake/safe_sql.py: file access limited to the lake, no extension loaded, the settings locked),
a memory limit and no spilling to disk, so that no query writes a file; each tool call gets a
cursor of its own, interrupted when the call's queries run past the time limit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..jobs.derive_job import ensure_derived
from ..lake import materialize, safe_sql
from ..lake.database import connect
from ..lake.error_line import first_line
from .limits import Limits
from .refusal import Refusal


class LakeSession:
    def __init__(self, lake: str | Path, limits: Limits):
        self.path = Path(lake).resolve()
        self.limits = limits
        # an instance of its own (private): the locks bind no other connection of the process
        ensure_derived(self.path)  # what the lake keeps and lacks (a view whose SQL changed)
        self.con = connect(self.path, private=True)
        self.con.execute("SET temp_directory = ''")  # no spill file: a query over the memory limit stops
        self.con.execute("SET memory_limit = ?", [limits.memory_limit])
        safe_sql.restrict(self.con, self.path)
        self.catalog = self.con.execute("SELECT current_database()").fetchone()[0]
        self.traces_not_derived = len(materialize.missing_partitions(self.path))

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor on the lake for one tool call; its queries are interrupted together after
        limits.time_limit_s. DuckDB's errors come out as one-line Refusals."""
        cur = self.con.cursor()
        cur.execute(f'USE "{self.catalog}"')
        timer = threading.Timer(self.limits.time_limit_s, cur.interrupt)
        timer.daemon = True
        timer.start()
        try:
            yield cur
        except duckdb.InterruptException:
            raise Refusal(f"stopped at the time limit ({self.limits.time_limit_s:g} s): {self._slow_hint()}") from None
        except duckdb.OutOfMemoryException:
            raise Refusal(f"stopped at the memory limit ({self.limits.memory_limit}): aggregate or filter "
                          "more (WHERE trace_id = ...), or select fewer columns") from None
        except duckdb.Error as e:
            raise Refusal(first_line(e)) from None
        finally:
            timer.cancel()
            cur.interrupt()  # a result left unfetched may still be computing: closing would wait for it
            cur.close()

    def _slow_hint(self) -> str:
        if self.traces_not_derived:
            return (f"{self.traces_not_derived} traces of this lake keep no derived views, which every query "
                    f"of them evaluates again: `tracelake relink --lake {self.path}` derives them once")
        return "filter by trace (WHERE trace_id = ...), aggregate, or join fewer rows"

    def close(self) -> None:
        self.con.close()


def fetch(cur, sql: str, params: list | dict | None = None, max_rows: int | None = None) -> tuple[list[str], list[tuple], bool]:
    """(columns, rows, more): the first max_rows rows of the query (all without max_rows), and
    whether it had more."""
    cur.execute(sql, params or [])
    if cur.description is None:
        return [], [], False
    columns = [d[0] for d in cur.description]
    if max_rows is None:
        return columns, cur.fetchall(), False
    rows = cur.fetchmany(max_rows + 1)
    return columns, rows[:max_rows], len(rows) > max_rows


def resolve_trace(cur, wanted: str) -> str:
    """The trace id equal to `wanted`, or the only one starting with it; else a Refusal."""
    ids = [r[0] for r in cur.execute("SELECT trace_id FROM traces ORDER BY trace_id").fetchall()]
    matches = [t for t in ids if t == wanted] or [t for t in ids if t.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    what = f"{len(matches)} traces start with {wanted!r}" if matches else f"no trace id starts with {wanted!r}"
    shown = ", ".join((matches or ids)[:5])
    raise Refusal(f"{what} (of {len(ids)}; e.g. {shown}); list_traces() lists them")
