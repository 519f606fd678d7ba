"""`make docs`: writes the generated references into docs/ (tests/test_generated_docs.py fails when one
is stale):

- docs/schema.md, the base tables, from lake/schema.py (lake/schema_doc.py);
- docs/cli.md, every command's arguments, from the help texts of the CLI's argparse parser
  (cli/main.py build_parser; rendered here, since only the CLI may import cli/main.py);
- docs/views.md, every view and macro of sql/, from the files' header comments (lake/views_doc.py).

Run it with the project's Python: `.venv/bin/python tools/make_docs.py`. It lives outside docs/, which
ships with the package as the MCP server's resources (docs/__init__.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"

CLI_HEADER = """# Command reference

Generated from the help texts of `tracelake`'s argument parser (cli/main.py) by `make docs`; do not
edit by hand. `tracelake COMMAND --help` prints the same. What the commands do, with examples:
README.md, docs/run.md (`run`, `report`), docs/diff.md, docs/export.md, docs/sql.md (`sql`),
docs/mcp.md (`mcp`).

"""


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        m = action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    elif action.choices is not None:
        m = "{" + ",".join(map(str, action.choices)) + "}"
    else:
        m = action.dest.upper() if action.option_strings else action.dest
    nargs = action.nargs
    if nargs is None:
        return m
    if nargs == "?":
        return f"[{m}]"
    if nargs == "*":
        return f"[{m} ...]"
    if nargs == "+":
        return f"{m} [{m} ...]"
    if isinstance(nargs, int):
        return " ".join([m] * nargs)
    return m


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{_metavar(action)}`"
    value = "" if action.nargs == 0 else f" {_metavar(action)}"
    return ", ".join(f"`{o}{value}`" for o in action.option_strings)


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = parser._get_formatter()._expand_help(action) if action.help else ""  # %(default)s, %%
    extra = []
    if action.choices is not None and action.metavar is not None:
        extra.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.default not in (None, False, argparse.SUPPRESS) and action.nargs != 0 and "default" not in text:
        extra.append(f"default `{action.default}`")
    if action.required and action.option_strings:
        extra.append("required")
    text = " ".join(text.split())
    if extra:
        text = f"{text} ({'; '.join(extra)})" if text else "; ".join(extra).capitalize()
    return _cell(text).replace("<", "&lt;")


def _cell(text: str) -> str:
    """Text for a Markdown table cell: a bar escaped, also inside `code`."""
    return text.replace("|", "\\|")


def _arguments(parser: argparse.ArgumentParser) -> str:
    rows = [a for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]
    if not rows:
        return ""
    out = ["| argument | meaning |\n|---|---|\n"]
    out.extend(f"| {_cell(_invocation(a))} | {_help(parser, a)} |\n" for a in rows)
    return "".join(out) + "\n"


def _block(text: str | None) -> str:
    return f"```text\n{text.strip()}\n```\n\n" if text else ""


def cli_reference(parser: argparse.ArgumentParser) -> str:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    out = [CLI_HEADER, f"`{parser.prog} [--version] COMMAND ...`: {parser.description}\n\n", _arguments(parser),
           "| command | what it does |\n|---|---|\n"]
    out.extend(f"| [`{name}`](#tracelake-{name}) | {helps.get(name, '')} |\n" for name in sub.choices)
    out.append("\n" + _block(parser.epilog))
    for name, command in sub.choices.items():
        out.append(f"## tracelake {name}\n\n")
        if command.description:
            out.append(" ".join(command.description.split()) + "\n\n")
        out.append(_arguments(command))
        out.append(_block(command.epilog))
    return "".join(out).rstrip() + "\n"


def outputs() -> dict[Path, str]:
    """Each generated file -> what it should hold now."""
    from tracelake.cli.main import build_parser
    from tracelake.lake import schema_doc, views_doc

    return {DOCS / "schema.md": schema_doc.render(), DOCS / "cli.md": cli_reference(build_parser()),
            DOCS / "views.md": views_doc.render()}


def main() -> int:
    for path, text in outputs().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"written {path.relative_to(DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
