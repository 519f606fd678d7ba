"""The SQL catalog: every .sql file under sql/, ordered by its `-- depends:` line and loaded into DuckDB.

File header (see docs/sql.md):
    -- <view>: what question it answers.
    -- depends: kernels, memcpy          (views or tables it reads; base tables are always there;
    --          more, names               continuation lines are indented)
    -- @column <name>  <meaning, with units>
A file may create several views and macros; each must be named in its header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

_CREATES = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:VIEW|MACRO|TABLE)\s+([A-Za-z_][A-Za-z0-9_]*)", re.I)
# '-- depends: a, b' plus continuation lines indented under it ('--          c, d')
_DEPENDS = re.compile(r"^--\s*depends:\s*(.*(?:\n--\s{2,}[\w, ]+$)*)", re.M)


@dataclass(frozen=True)
class SqlFile:
    path: str
    text: str
    creates: tuple[str, ...]
    depends: tuple[str, ...]


def _sql_root():
    return resources.files("tracelake.sql")


def load_files() -> list[SqlFile]:
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
                files.append(SqlFile(f"{prefix}{child.name}", text, tuple(_CREATES.findall(text)), tuple(depends)))

    walk(_sql_root())
    return files


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
    created = []
    for f in ordered(load_files(), provided):
        try:
            con.execute(f.text)
        except Exception as e:
            raise RuntimeError(f"sql/{f.path}: {e}") from e
        created.extend(f.creates)
    return created
