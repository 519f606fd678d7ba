"""Renders docs/views.md, the reference of every view, macro and table of sql/ (`make docs`), from
each file's header comments as lake/catalog.py reads them (docs/sql.md says how a header is
written); tests/test_generated_docs.py keeps the two in step."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .catalog import SqlFile, load_files

LAYERS = (("lib", "Library macros", "`sql/lib/`: macros with no GPU knowledge."),
          ("base", "Base views", "`sql/base/`: one file per view or macro, named after it, over the base tables "
                                 "(docs/schema.md): the helpers the analysis views share."),
          ("analysis", "Analysis views", "`sql/analysis/`: the answers."),
          ("generated", "Generated", "Written by lake/catalog.py, not a file under `sql/`."))

HEADER = """# View reference

Generated from the header comments of the `.sql` files under `sql/` by `make docs`; do not edit by
hand. How the views fit together, what they are checked against and how to write one:
[docs/sql.md](sql.md). The base tables they read: [docs/schema.md](schema.md).

Every view answers per trace (a `trace_id` column) unless it says otherwise; times are integer
nanoseconds unless a column says otherwise. *Derived per trace*: the view's rows are computed once
per trace and served from the lake (`-- materialize: per trace`, docs/lake.md). Names that start
with `_` are internal to their file and not listed.

"""

_STATEMENT = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(VIEW|MACRO|TABLE)\s+([A-Za-z_]\w*)\s*(\([^)]*\))?\s*(AS\s+TABLE\b)?",
                        re.I)
_COLUMN = re.compile(r"^@column\s+(\w+)\s+(.*)$")
_DIRECTIVE = re.compile(r"^(depends|materialize):")


@dataclass
class Block:
    """The comment lines above one or more statements, and what those statements create."""
    comment: list[str] = field(default_factory=list)  # without the leading '-- '
    objects: list[tuple[str, str]] = field(default_factory=list)  # (name, 'view', 'table', 'macro `f(x)`', ...)


def blocks(f: SqlFile) -> list[Block]:
    """The file's top-level comment blocks, each with the statements that follow it (comments inside a
    statement belong to its SQL, not to the header)."""
    out = [Block()]
    in_statement = False
    for line in f.text.splitlines():
        code = line.split("--", 1)[0].strip()
        if in_statement:
            in_statement = not code.endswith(";")
            continue
        if line.startswith("--"):
            if out[-1].objects:
                out.append(Block())
            out[-1].comment.append(line[2:].removeprefix(" ").rstrip())
        elif (m := _STATEMENT.match(code)):
            kind = m.group(1).lower()
            if kind == "macro":
                kind = f"{'table ' if m.group(4) else ''}macro `{m.group(2)}{m.group(3) or '()'}`"
            out[-1].objects.append((m.group(2), kind))
            in_statement = not code.endswith(";")
    return [b for b in out if b.objects]


def _prose(lines: list[str]) -> str:
    """Comment lines as Markdown paragraphs: a paragraph with indented lines (a formula, a numbered
    rule) is kept as written, the others are joined."""
    paragraphs, current = [], []
    for line in [*lines, ""]:
        if line.strip():
            current.append(line)
        elif current:
            paragraphs.append(current)
            current = []
    out = []
    for p in paragraphs:
        if any(line.startswith(" ") for line in p):
            out.append("```text\n" + "\n".join(p) + "\n```")
        else:
            out.append(_escape(" ".join(line.strip() for line in p)))
    return "\n\n".join(out)


def _escape(text: str) -> str:
    """Text for Markdown outside code: HTML-like `<rule>` and table bars kept as written."""
    return text.replace("<", "&lt;").replace("|", "\\|")


def _split(comment: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(prose lines, (column, meaning) pairs) of a block's comment; `depends:` and `materialize:`
    lines are left out (the file's are shown apart)."""
    prose: list[str] = []
    columns: list[tuple[str, str]] = []
    directive = False
    for line in comment:
        if (m := _COLUMN.match(line)):
            columns.append((m.group(1), m.group(2).strip()))
            directive = False
        elif columns and line.startswith("  ") and line.strip() and not directive:
            columns[-1] = (columns[-1][0], f"{columns[-1][1]} {line.strip()}")  # a continuation line
        elif _DIRECTIVE.match(line):
            directive = True
        elif directive and line.startswith("  ") and line.strip():
            continue  # a depends: continuation line
        else:
            directive = False
            prose.append(line)
    return prose, columns


def _link(name: str, public: set[str], tables: set[str]) -> str:
    if name in public:
        return f"[`{name}`](#{name})"
    if name in tables:
        return f"[`{name}`](schema.md#{name})"
    return f"`{name}`"


def render() -> str:
    from .schema import TABLES

    files = load_files()
    tables = set(TABLES)
    public = {name for f in files for name in f.creates if not name.startswith("_")}
    out = [HEADER]
    for layer, title, _ in LAYERS:
        names = sorted(n for f in files if f.path.startswith(f"{layer}/") for n in f.creates if n in public)
        out.append(f"**{title}**: {', '.join(f'[`{n}`](#{n})' for n in names)}\n\n")
    for layer, title, about in LAYERS:
        out.append(f"## {title}\n\n{about}\n\n")
        for f in (f for f in files if f.path.startswith(f"{layer}/")):
            out.append(_file(f, public, tables))
    return "".join(out).rstrip() + "\n"


def _file(f: SqlFile, public: set[str], tables: set[str]) -> str:
    path = f.path if f.path.startswith("generated/") else f"sql/{f.path}"
    out = [f"### {path}\n\n"]
    reads = [_link(d, public, tables) for d in f.depends]
    facts = [f"Reads: {', '.join(reads)}." if reads else "Reads no other view or table."]
    if f.materialized:
        facts.append(f"Derived per trace: {', '.join(f'`{v}`' for v in f.materialized)}.")
    for i, block in enumerate(blocks(f)):
        shown = [(n, kind) for n, kind in block.objects if not n.startswith("_")]
        if not shown and i:
            continue  # internal helpers only
        prose, columns = _split(block.comment)
        if i and block.objects[0][0].startswith("_"):
            prose = []  # the comment is about the internal helper it stands above
        for name, kind in shown:
            out.append(f'<a id="{name}"></a>**`{name}`** ({kind})  \n')
        if shown:
            out.append("\n")
        if prose:
            out.append(_prose(prose) + "\n\n")
        if i == 0:
            out.append(" ".join(facts) + "\n\n")
        if columns:
            out.append("| column | meaning |\n|---|---|\n")
            out.extend(f"| `{c}` | {_escape(meaning)} |\n" for c, meaning in columns)
            out.append("\n")
    return "".join(out)


if __name__ == "__main__":
    print(render(), end="")
