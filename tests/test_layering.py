"""Imports go one way (docs/architecture.md). From the bottom: sql (data files) and the lake
(layout, writer, scan, catalog, derivation, database) import no other part; ingest (file ->
tables) writes into the lake; reports renders HTML from a DuckDB connection; analysis (the Python
analyses) reads and writes the lake; jobs (ingest, run, reports, diff, export) use all of those;
serve (the MCP server) reads the lake and calls jobs; the CLI is the top, and within it only
cli/main.py imports the commands (cli/commands/, a module per command). api/ (the package `tracelake` itself, the Python API) may
import any part.

Every import statement is read with ast, also those inside functions (lazy imports) and relative
ones, and importlib.import_module calls with a literal name. Between the folders every import is
relative, so that it leads to a file in the checkout (docs/packaging.md); api/ alone says
`tracelake.<part>`, the public name, since it is the package's root and has no parent to be
relative to.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO

# package -> the tracelake packages it may import besides itself
ALLOWED = {
    "sql": set(),
    "lake": set(),
    "ingest": {"lake"},
    "reports": set(),
    "analysis": {"lake", "ingest"},
    "jobs": {"lake", "ingest", "analysis", "reports"},
    "serve": {"lake", "jobs"},
    "cli": {"lake", "ingest", "analysis", "reports", "jobs", "serve"},
}
# module or package -> the modules outside it that may import it
ONLY_IMPORTED_BY = {"cli.main": set(), "cli.commands": {"cli.main"}}


def _imported_modules(tree: ast.AST, package: list[str]) -> list[tuple[int, str]]:
    """(line, dotted module) for every import in `tree`; `package`: the importing module's package."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            # `from tracelake import analysis` / `from . import cli`: the names may be modules too
            out.append((node.lineno, module))
            out.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            out.append((node.lineno, node.args[0].value))
    return out


def _package_files(root: Path) -> list[tuple[Path, list[str]]]:
    """(file, its package's dotted parts) for every Python file of the package."""
    files = [(p, ["tracelake"]) for p in sorted((root / "api").glob("*.py"))]
    for package in ALLOWED:
        files += [(p, ["tracelake", *p.relative_to(root).parent.parts]) for p in sorted((root / package).rglob("*.py"))]
    return files


def upward_imports(root: Path) -> list[str]:
    """'file:line imports module (why)' for every import against the layering, under `root`."""
    problems = []
    for path, parents in _package_files(root):
        rel = path.relative_to(root)
        package = parents[1] if len(parents) > 1 else None  # None: the API, which may import any part
        for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8")), parents):
            parts = module.split(".")
            if parts[0] != "tracelake" or len(parts) < 2 or parts[1] not in ALLOWED:
                continue
            target = parts[1]
            if package is not None and target != package and target not in ALLOWED[package]:
                problems.append(f"{rel}:{line} imports {module} ({package} must not import {target})")
            importer = ".".join([*parents[1:], path.stem])
            guarded = ".".join(parts[1:3])
            inside = importer == guarded or importer.startswith(guarded + ".")  # a command module, its package
            if guarded in ONLY_IMPORTED_BY and not inside and importer not in ONLY_IMPORTED_BY[guarded]:
                problems.append(f"{rel}:{line} imports {module} (only the CLI's top may)")
    return sorted(set(problems))


def absolute_imports(root: Path) -> list[str]:
    """'file:line' of every import of tracelake inside the package that is not relative."""
    out = []
    for path, _ in _package_files(root):
        if path.parent.name == "api":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            if any(n == "tracelake" or n.startswith("tracelake.") for n in names):
                out.append(f"{path.relative_to(root)}:{node.lineno}")
    return out


def import_cycles(root: Path) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (lazy imports too)."""
    graph: dict[str, set[str]] = {}
    for path, parents in _package_files(root):
        name = ".".join([*parents, path.stem]) if path.stem != "__init__" else ".".join(parents)
        graph[name] = {m for _, m in _imported_modules(ast.parse(path.read_text(encoding="utf-8")), parents)}
    graph = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_imports_go_one_way():
    assert upward_imports(REPO) == []


def test_imports_inside_the_package_are_relative():
    assert absolute_imports(REPO) == []


def test_no_module_imports_itself_through_others():
    """The API's package, which its subpackages' imports pass through, is left out."""
    assert [c for c in import_cycles(REPO) if "tracelake" not in c] == []


def test_the_checks_catch_what_they_look_for(tmp_path):
    """The checkers themselves: an upward import of each kind, an absolute import and a cycle are
    reported; a downward relative import is not, nor the commands' package importing its modules."""
    files = {
        "lake/derive.py": "def f():\n    from ..jobs.worker_pool import process_pool\nfrom . import scan\n",
        "lake/scan.py": "from . import derive\n",
        "ingest/reader.py": "from tracelake.analysis import diff_gate\nfrom ..lake import writer\n",
        "reports/chart.py": "from ..lake import database\n",
        "sql/__init__.py": "import importlib\nimportlib.import_module('tracelake.reports.render')\n",
        "jobs/run_job.py": "from ..cli import commands\nfrom ..ingest.dispatch import ingest_file\n",
        "cli/output.py": "from .commands import COMMANDS\nfrom ..reports import render\n",
        "cli/commands/__init__.py": "from . import sql\n",
        "cli/commands/sql.py": "from ..terminal import say\n",
        "api/__init__.py": "from tracelake.cli import main\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert upward_imports(tmp_path) == [
        "api/__init__.py:1 imports tracelake.cli.main (only the CLI's top may)",
        "cli/output.py:1 imports tracelake.cli.commands (only the CLI's top may)",
        "cli/output.py:1 imports tracelake.cli.commands.COMMANDS (only the CLI's top may)",
        "ingest/reader.py:1 imports tracelake.analysis (ingest must not import analysis)",
        "ingest/reader.py:1 imports tracelake.analysis.diff_gate (ingest must not import analysis)",
        "jobs/run_job.py:1 imports tracelake.cli (jobs must not import cli)",
        "jobs/run_job.py:1 imports tracelake.cli.commands (jobs must not import cli)",
        "jobs/run_job.py:1 imports tracelake.cli.commands (only the CLI's top may)",
        "lake/derive.py:2 imports tracelake.jobs.worker_pool (lake must not import jobs)",
        "lake/derive.py:2 imports tracelake.jobs.worker_pool.process_pool (lake must not import jobs)",
        "reports/chart.py:1 imports tracelake.lake (reports must not import lake)",
        "reports/chart.py:1 imports tracelake.lake.database (reports must not import lake)",
        "sql/__init__.py:2 imports tracelake.reports.render (sql must not import reports)",
    ]
    assert absolute_imports(tmp_path) == ["ingest/reader.py:1"]
    assert import_cycles(tmp_path) == [["tracelake.lake.derive", "tracelake.lake.scan"]]


def test_one_module_spells_the_lake_layout():
    """Partition paths are spelled in lake/layout.py only; everything else asks it."""
    spelled = [str(p.relative_to(REPO)) for package in ALLOWED for p in sorted((REPO / package).rglob("*.py"))
               if "trace_id=" in p.read_text(encoding="utf-8") or '"data.parquet"' in p.read_text(encoding="utf-8")]
    assert spelled == ["lake/layout.py"]


def test_process_settings_are_made_at_program_start_not_on_import():
    """Importing tracelake changes nothing process-wide; the CLI's main() picks Arrow's allocator,
    and the CLI module imports nothing heavy before it has (a fresh interpreter)."""
    code = (
        "import os, sys\n"
        "import tracelake.cli.main as cli\n"
        "light = not {'pyarrow', 'polars', 'duckdb'} & set(sys.modules)\n"
        "import tracelake.cli.commands, tracelake.jobs.report_job, tracelake.ingest.dispatch\n"
        "import tracelake.reports.render\n"
        "import pyarrow as pa\n"
        "before = [os.environ.get(v) for v in ('ARROW_DEFAULT_MEMORY_POOL', 'POLARS_MAX_THREADS', 'OMP_NUM_THREADS')]\n"
        "pool = pa.default_memory_pool().backend_name\n"
        "cli.main(['sql', '--lake', '/nonexistent/lake', 'SELECT 1'])\n"
        "print(light, before, pool, pa.default_memory_pool().backend_name)\n"
    )
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARROW_DEFAULT_MEMORY_POOL", "POLARS_MAX_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "[None,", "None,", "None]", "mimalloc", "jemalloc"]
