"""The MCP server's resources: the view reference (every table, view and macro in one line each, and
each one described as describe_view describes it) and the documentation, docs/*.md, shipped in the
package (tracelake.docs)."""

from __future__ import annotations

from importlib import resources

from .answer import table_lines
from .views import entries

VIEWS_URI = "tracelake://views"
VIEW_URI = "tracelake://views/{name}"
DOC_URI = "tracelake://docs/{name}"


def view_reference() -> str:
    """Every table, view and macro: name, kind and what it answers."""
    rows = [(e.name, e.kind, e.summary) for e in entries().values()]
    return "\n".join(["# tracelake's tables and views", "", f"Each one in full: {VIEW_URI}.", "",
                      *table_lines(["name", "kind", "what it answers"], rows, cell_chars=400)]) + "\n"


def docs() -> dict[str, str]:
    """docs/ file name -> its text."""
    folder = resources.files("tracelake.docs")
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(folder.iterdir(), key=lambda f: f.name)
            if f.name.endswith(".md")}
