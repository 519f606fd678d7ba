"""The SQL catalog: every .sql file under sql/, ordered by its `-- depends:` line and loaded into DuckDB.

File header (see docs/sql.md):
    -- <view>: what question it answers.
    -- depends: kernels, memcpy          (views or tables it reads; base tables are always there;
    --          more, names               continuation lines are indented)
    -- @column <name>  <meaning, with units>
    -- materialize: per trace           (optional: the file's views are derived tables; see below)
A file may create several views and macros; each must be named in its header.

`-- materialize: per trace` (all the views the file creates) or `-- materialize: per trace: a, b`
(those named) marks views whose rows for a trace depend only on that trace and its run's other
ranks: lake/derive.py computes them per trace into the lake and the database serves them from
there under the same name.

Finding rules: every view named `finding_<rule>` is a rule of `findings`. The catalog writes the
view `finding_rule_rows`, the union of all of them (a file of its own, `generated/finding_rule_rows.sql`,
that takes part in ordering and fingerprints like the others), so a new rule is one `.sql` file
(and its test): nothing lists the rules by hand.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

_CREATES = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:VIEW|MACRO|TABLE)\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
# '-- depends: a, b' plus continuation lines indented under it ('--          c, d')
_VIEW = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
_MATERIALIZE = re.compile(r"^--\s*materialize:\s*per trace\s*(?::\s*([\w, ]+))?$", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEPENDS = re.compile(r"^--\s*depends:\s*(.*(?:\n--\s{2,}[\w, ]+$)*)", re.M)


@dataclass(frozen=True)
class SqlFile:
    path: str
    text: str
    creates: tuple[str, ...]
    depends: tuple[str, ...]
    materialized: tuple[str, ...] = ()  # views derived per trace (`-- materialize: per trace`)


def _sql_root():
    return resources.files("tracelake.sql")


def load_files() -> list[SqlFile]:
    """Every .sql file of the catalog, and the generated rule union (read once per process)."""
    return list(_files())


@functools.cache
def _files() -> tuple[SqlFile, ...]:
    files = []

    def walk(node, prefix=""):
        for child in sorted(node.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(".sql"):
                text = child.read_text(encoding="utf-8")
                depends = []
                for block in _DEPENDS.findall(text):
                    names = block.replace("--", ",").replace("\n", ",")
                    depends.extend(d.strip() for d in names.split(",") if d.strip() and d.strip() != "(none)")
                files.append(SqlFile(f"{prefix}{child.name}", text, tuple(_CREATES.findall(text)), tuple(depends),
                                     _materialized(text)))

    walk(_sql_root())
    return (*files, _rule_union(files))


RULE_PREFIX = "finding_"
RULE_UNION = "finding_rule_rows"


def rule_views(files: list[SqlFile]) -> list[str]:
    """Every finding rule view (named finding_<rule>), sorted by name."""
    return sorted(v for f in files if RULE_PREFIX in f.text
                  for v in _VIEW.findall(f.text) if v.startswith(RULE_PREFIX) and v != RULE_UNION)


_RULE_COLUMNS = (
    ("trace_id", "Trace."), ("rule", "Rule name."), ("severity", "'warning' or 'info'."), ("pid", "Process."),
    ("tid", "Thread (NULL when not a host-side finding)."), ("device_id", "GPU (NULL for host-side findings)."),
    ("stream_id", "Stream (NULL for host-side findings)."),
    ("start_ns", "Start of the flagged operation or API call (ns)."), ("duration_ns", "Its duration (ns)."),
    ("api_name", "The API call involved, as recorded."), ("evidence", "What was seen, in words."),
    ("advice", "What to do about it."))


def _rule_union(files: list[SqlFile]) -> SqlFile:
    """The view finding_rule_rows: the rows of every finding rule, one UNION ALL BY NAME."""
    rules = rule_views(files)
    text = (f"-- {RULE_UNION}: the rows of every finding rule (each view named {RULE_PREFIX}<rule>), written by\n"
            "-- lake/catalog.py; `findings` reads it. A rule has these columns (those it lacks are NULL).\n--\n"
            f"-- depends: {', '.join(rules)}\n--\n"
            + "".join(f"-- @column {name:<12} {meaning}\n" for name, meaning in _RULE_COLUMNS)
            + f"CREATE OR REPLACE VIEW {RULE_UNION} AS\n"
            + "\nUNION ALL BY NAME ".join(f"SELECT * FROM {r}" for r in rules) + ";\n")
    return SqlFile(f"generated/{RULE_UNION}.sql", text, (RULE_UNION,), tuple(rules))


def _materialized(text: str) -> tuple[str, ...]:
    if "materialize:" not in text:  # most files: the multi-line search costs more than this test
        return ()
    m = _MATERIALIZE.search(text)
    if not m:
        return ()
    views = _VIEW.findall(text)
    if not m.group(1):
        return tuple(views)
    named = tuple(v.strip() for v in m.group(1).split(",") if v.strip())
    unknown = set(named) - set(views)
    if unknown:
        raise ValueError(f"materialize names views the file does not create: {sorted(unknown)}")
    return named


def materialized(files: list[SqlFile] | None = None) -> dict[str, str]:
    """Every materialized view -> the fingerprint of its SQL: its file's text and those of all the
    files it depends on, transitively (a change anywhere below it changes its fingerprint)."""
    files = load_files() if files is None else files
    creator = {name: f for f in files for name in f.creates}
    out = {}
    provided = {d for f in files for d in f.depends} - set(creator)
    for f in ordered(files, provided):
        if not f.materialized:
            continue
        seen: dict[str, str] = {}
        stack = [f]
        while stack:
            g = stack.pop()
            if g.path in seen:
                continue
            seen[g.path] = g.text
            stack.extend(creator[d] for d in g.depends if d in creator)
        h = hashlib.sha256()
        for path in sorted(seen):
            h.update(path.encode() + b"\0" + seen[path].encode() + b"\0")
        for view in f.materialized:
            out[view] = h.hexdigest()[:12]
    return out


def names_in(sql: str, names: set[str]) -> set[str]:
    """The members of `names` that appear as words in `sql`."""
    return names & set(_WORD.findall(sql))


@functools.cache
def _code_words(f: SqlFile) -> frozenset[str]:
    """The words of a file's SQL outside its comments."""
    return frozenset(_WORD.findall("\n".join(line.split("--")[0] for line in f.text.splitlines())))


def reads(names: Iterable[str], tables: Iterable[str], files: list[SqlFile] | None = None,
          stop: Iterable[str] = ()) -> set[str]:
    """`names` and every view, macro and table of `tables` (the base tables) they read, transitively
    (not looking under the views in `stop`, which are read as they are):
    through the files' `-- depends:` lines (complete: tests/test_catalog.py), and the base tables
    named anywhere in those files' SQL (base tables need no depends line; a name that only appears
    in a string counts too, which errs on the side of reading more)."""
    files = load_files() if files is None else files
    creator = {name: f for f in files for name in f.creates}
    tables, stop = set(tables), set(stop)
    out, stack, seen = set(names), list(names), set()
    while stack:
        f = creator.get(stack.pop())
        if f is None or f.path in seen:
            continue
        seen.add(f.path)
        out.update(f.creates)
        out.update(tables & _code_words(f))
        stack.extend(d for d in f.depends if d in creator and d not in stop)
        out.update(f.depends)
    return out


_STATEMENT = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:VIEW|MACRO|TABLE)\s+([A-Za-z_][A-Za-z0-9_]*).*?"
                        r"(?=CREATE\s+(?:OR\s+REPLACE\s+)?(?:VIEW|MACRO|TABLE)\s|\Z)", re.I | re.S)


def statements(f: SqlFile) -> dict[str, str]:
    """Each view, macro and table the file creates -> its statement, without comments."""
    text = "\n".join(line.split("--")[0] for line in f.text.splitlines())
    return {m.group(1): m.group(0) for m in _STATEMENT.finditer(text)}


def view_reads(names: Iterable[str], files: list[SqlFile] | None = None) -> set[str]:
    """`names` and every view and macro they read, transitively, each from its own statement (not
    its file's `depends:` line, as `reads`): what a query of `names` evaluates. A name that only
    appears in a string counts too."""
    bodies = _bodies(load_files() if files is None else files)
    out, stack = set(names), list(names)
    while stack:
        found = names_in(bodies.get(stack.pop(), ""), set(bodies)) - out
        out |= found
        stack.extend(found)
    return out


def materialized_reads(query: str, files: list[SqlFile] | None = None) -> set[str]:
    """The materialized views a query evaluates: those it names and those under the views it names
    (a word of the query that is a view's name counts, wherever it appears)."""
    files = load_files() if files is None else files
    names = {name for f in files for name in f.creates}
    return view_reads(names_in(query, names), files) & set(materialized(files))


def shared_reads(readers: list[set[str]], files: list[SqlFile] | None = None) -> set[str]:
    """The views and macros under `readers` (each the names one query reads) that two or more
    readers read: those queries, and the statements of what they read (view_reads); a view read
    by one reader is evaluated once anyway. And the finding rules under them: DuckDB plans their
    union twice as fast rule by rule (jobs/report_views.py)."""
    files = load_files() if files is None else files
    bodies = _bodies(files)
    under = view_reads(set().union(*readers), files)
    count: dict[str, int] = {}
    for name in [n for r in readers for n in r] + [n for v in under for n in names_in(bodies.get(v, ""), set(bodies)) - {v}]:
        count[name] = count.get(name, 0) + 1
    return {name for name, n in count.items() if n >= 2} | (set(rule_views(files)) & under)


def _bodies(files: list[SqlFile]) -> dict[str, str]:
    return _bodies_of(tuple(files))


@functools.lru_cache(maxsize=4)
def _bodies_of(files: tuple[SqlFile, ...]) -> dict[str, str]:
    """Each name's statement, once per process for a catalog (16 ms for sql/; view_reads and
    shared_reads of one `tracelake stats` each asked for them). Callers do not change the dict."""
    return {name: sql for f in files for name, sql in statements(f).items()}


@functools.cache
def step_rule_pattern(rule: str) -> str:
    """The regular expression of a step rule ('profiler_step', ...), from its one definition in
    sql/base/step_rule_pattern.sql, for Python code that finds steps without DuckDB views."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        con.execute((_sql_root() / "base" / "step_rule_pattern.sql").read_text(encoding="utf-8"))
        pattern = con.execute("SELECT step_rule_pattern(?)", [rule]).fetchone()[0]
    finally:
        con.close()
    if pattern is None:
        raise ValueError(f"no step rule {rule!r}")
    return pattern


def ordered(files: list[SqlFile], provided: set[str]) -> list[SqlFile]:
    """Topological order by depends; a dependency nobody creates is an error."""
    creator = {name: f for f in files for name in f.creates}
    done: set[str] = set()
    out: list[SqlFile] = []
    visiting: set[str] = set()

    def visit(f: SqlFile):
        if f.path in done:
            return
        if f.path in visiting:
            raise ValueError(f"sql/{f.path}: dependency cycle")
        visiting.add(f.path)
        for dep in f.depends:
            if dep in provided or dep in f.creates:  # views of one file are created in file order
                continue
            if dep not in creator:
                raise ValueError(f"sql/{f.path}: depends on {dep!r}, which no .sql file creates")
            visit(creator[dep])
        visiting.discard(f.path)
        done.add(f.path)
        out.append(f)

    for f in files:
        visit(f)
    return out


def install(con, provided: set[str]) -> list[str]:
    """Create every view and macro of sql/ on `con`; returns the names created."""
    created: list[str] = []
    for f in ordered(load_files(), provided):
        try:
            con.execute(f.text)
        except Exception as e:
            raise RuntimeError(f"sql/{f.path}: {e}") from e
        created.extend(f.creates)
    return created
