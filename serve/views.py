"""The `list_views` and `describe_view` tools: the lake's tables (lake/schema.py) and the views and
macros of sql/ (lake/catalog.py), each described by its header comment: what it answers, what it
reads, and an `-- @column name  meaning (unit)` line per column (docs/sql.md)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from ..lake import catalog
from ..lake.schema import TABLES
from ..lake.sql_literal import sql_string
from .answer import Answer
from .lake_session import LakeSession, fetch
from .refusal import Refusal

LIST_DESCRIPTION = (
    "List the lake's tables and views (and SQL macros) with what each answers, in one line each. "
    "`contains` keeps the names or descriptions holding that text (e.g. 'idle', 'kernel'); "
    "`offset` skips that many rows (the next page).")
DESCRIBE_DESCRIPTION = (
    "Describe one table or view of the lake: what it answers (its header comment), what it reads, each "
    "column with its type and meaning (units: *_ns columns are integer nanoseconds, *_pct percentages), "
    "and an example query to run with `query`.")
_STATEMENT_KIND = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO|TABLE)\s+(\w+)", re.I)
_NAMED = re.compile(r"^-- (\w+)(?:\([^)]*\))?: ")
_COLUMN = re.compile(r"^-- @column\s+(\w+)\s*(.*)$")
# the columns an example query is best ordered by, largest first: the time something took
_ORDER_BY = ("cost_ns", "total_ns", "idle_ns", "duration_ns", "wall_ns", "device_ns")
EXAMPLE_COLUMNS = 6
SUMMARY_CHARS = 160


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str  # 'table', 'view' or 'macro'
    source: str  # where it is defined
    about: str  # what it answers, in words
    reads: tuple[str, ...]
    columns: dict[str, str]  # documented column -> meaning
    materialized: bool = False

    @property
    def summary(self) -> str:
        """Its first sentence, cut to SUMMARY_CHARS."""
        first = re.split(r"(?<=\.)\s", self.about, maxsplit=1)[0]
        return first if len(first) <= SUMMARY_CHARS else first[: SUMMARY_CHARS - 1] + "…"


def names() -> list[str]:
    return list(entries())


@functools.cache
def entries() -> dict[str, Entry]:
    """Every table, view and macro by name (those named `_name`, internal to their file, left out)."""
    out = {name: Entry(name, "table", "lake/schema.py, docs/schema.md", t.doc, (),
                       {c.name: c.doc for c in t.columns}) for name, t in TABLES.items()}
    for f in catalog.load_files():
        for kind, name in _STATEMENT_KIND.findall("\n".join(catalog.statements(f).values())):
            if not name.startswith("_"):
                about, columns = _header(f, name)
                out[name] = Entry(name, kind.lower(), f"sql/{f.path}", about, f.depends, columns,
                                  name in f.materialized)
    return dict(sorted(out.items()))


def _header(f: catalog.SqlFile, name: str) -> tuple[str, dict[str, str]]:
    """(what the file's header says of `name`, its documented columns): the comment block naming
    it ('-- name: ...'), else the file's first; columns documented elsewhere in the file (a view
    that extends another of the file) are taken from there."""
    blocks: list[list[str]] = [[]]
    for line in f.text.splitlines():
        if line.startswith("--"):
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    named = [b for b in blocks if any((m := _NAMED.match(line)) and m.group(1) == name for line in b)]
    block = named[0] if named else blocks[0]
    about, columns = _read_block(block)
    about = re.sub(rf"^{name}(?:\([^)]*\))?: ", "", about)
    file_columns = _read_block([line for b in blocks for line in b])[1]
    return about, {**file_columns, **columns}


def _read_block(lines: list[str]) -> tuple[str, dict[str, str]]:
    """(prose, columns) of a comment block: its `depends:` and `materialize:` lines left out."""
    prose: list[str] = []
    columns: dict[str, str] = {}
    mode = "prose"
    for line in lines:
        text = line[2:]
        if text.startswith(" depends:") or text.startswith(" materialize:"):
            mode = "depends"
        elif (m := _COLUMN.match(line)):
            mode = m.group(1)
            columns[mode] = m.group(2).strip()
        elif mode != "prose" and text.startswith("  ") and text.strip():  # a continuation line
            if mode != "depends":
                columns[mode] += " " + text.strip()
        else:
            mode = "prose"
            prose.append(text.strip())
    return " ".join(" ".join(prose).split()), columns


def list_views(session: LakeSession, contains: str = "", offset: int = 0) -> str:
    needle = contains.lower()
    rows = [(e.name, e.kind, e.summary) for e in entries().values()
            if needle in e.name.lower() or needle in e.about.lower()]
    shown = rows[offset: offset + session.limits.max_rows]
    answer = Answer(session.limits)
    answer.line(f"{len(rows)} tables, views and macros" + (f" mention {contains!r}" if contains else "")
                + (f"; rows {offset + 1} to {offset + len(shown)}" if offset else ""))
    more = offset + len(shown) < len(rows)
    answer.table(["name", "kind", "what it answers"], shown, more,
                 f"list_views(contains={contains!r}, offset={offset + len(shown)})")
    answer.then(f'describe_view("{shown[0][0]}")' if shown else "list_views()")
    return answer.text()


def describe_view(session: LakeSession, name: str) -> str:
    entry = entries().get(name.strip())
    if entry is None:
        close = [n for n in names() if name.lower() in n] or [n for n in names() if n.startswith(name[:4].lower())]
        raise Refusal(f"no table or view {name!r}" + (f"; similar: {', '.join(close[:8])}" if close else "")
                      + "; list_views() lists them")
    with session.cursor() as cur:
        types = {} if entry.kind == "macro" else {c: t for c, t, *_ in fetch(cur, f"DESCRIBE {entry.name}")[1]}
        example_trace = fetch(cur, "SELECT min(trace_id) FROM traces")[1][0][0] if "trace_id" in types else None
    answer = Answer(session.limits)
    answer.line(f"{entry.kind} {entry.name}, defined in {entry.source}"
                + (" (derived per trace and kept in the lake)" if entry.materialized else ""))
    answer.line(entry.about)
    if entry.reads:
        answer.line(f"reads: {', '.join(entry.reads)}")
    if types:
        rows = [(c, t, entry.columns.get(c, "")) for c, t in types.items()]
        answer.line(f"columns ({len(rows)}):")
        answer.table(["column", "type", "meaning"], rows, False, None)
        example = example_query(entry.name, list(types), example_trace)
        answer.line(f"example: {example}")
        answer.then(f'query("{example}")')
    else:
        answer.then(f'list_views(contains="{entry.name}") for the views that use it')
    return answer.text()


def example_query(name: str, columns: list[str], trace_id: str | None) -> str:
    shown = columns[:EXAMPLE_COLUMNS]
    order = next((c for c in _ORDER_BY if c in columns), None)
    if order and order not in shown:
        shown.append(order)
    where = f" WHERE trace_id = {sql_string(trace_id)}" if trace_id else ""
    return (f"SELECT {', '.join(shown)} FROM {name}{where}" + (f" ORDER BY {order} DESC" if order else "")
            + " LIMIT 10")
