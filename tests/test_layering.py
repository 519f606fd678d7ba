"""Imports go one way (docs/architecture.md): ingest (file -> tables) and sql know nothing above
them; reports renders HTML from a DuckDB connection and imports neither the jobs nor the CLI;
analysis (the database, the jobs, the CLI) uses them all. Within analysis, the CLI is the top:
only cli.py imports commands.py, and nothing imports cli.py.

Every import statement is read with ast, also those inside functions (lazy imports) and relative
ones, and importlib.import_module calls with a literal name.
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
    "ingest": set(),
    "reports": set(),
    "analysis": {"ingest", "reports", "sql"},
}
# analysis module -> the analysis modules that may import it
ONLY_IMPORTED_BY = {"cli": set(), "commands": {"cli"}}


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


def upward_imports(root: Path) -> list[str]:
    """'file:line imports module (why)' for every import against the layering, under `root`."""
    problems = []
    for package, allowed in ALLOWED.items():
        for path in sorted((root / package).rglob("*.py")):
            rel = path.relative_to(root)
            parents = ["tracelake", *rel.parent.parts]
            for line, module in _imported_modules(ast.parse(path.read_text(encoding="utf-8")), parents):
                parts = module.split(".")
                if parts[0] != "tracelake" or len(parts) < 2 or parts[1] not in ALLOWED:
                    continue
                target = parts[1]
                if target != package and target not in allowed:
                    problems.append(f"{rel}:{line} imports {module} ({package} must not import {target})")
                elif target == package == "analysis" and len(parts) > 2 and parts[2] in ONLY_IMPORTED_BY:
                    if path.stem != parts[2] and path.stem not in ONLY_IMPORTED_BY[parts[2]]:
                        problems.append(f"{rel}:{line} imports {module} (only the CLI's top may)")
    return sorted(set(problems))


def test_imports_go_one_way():
    assert upward_imports(REPO) == []


def test_the_check_catches_upward_imports(tmp_path):
    """The checker itself: an upward import of each kind is reported, a downward one is not."""
    files = {
        "ingest/reader.py": "from tracelake.analysis import __version__\n",
        "reports/page.py": "def f():\n    from tracelake.analysis.report_job import write_reports\n",
        "reports/chart.py": "from ..analysis import database\nimport tracelake.analysis.cli\n",
        "sql/__init__.py": "import importlib\nimportlib.import_module('tracelake.reports.render')\n",
        "analysis/run_job.py": "from . import cli\nfrom tracelake.ingest.dispatch import ingest_file\n",
        "analysis/cli.py": "from .commands import COMMANDS\nfrom tracelake.reports import render\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = upward_imports(tmp_path)
    assert [p.split(" (")[0] for p in found] == [
        "analysis/run_job.py:1 imports tracelake.analysis.cli",
        "ingest/reader.py:1 imports tracelake.analysis",
        "ingest/reader.py:1 imports tracelake.analysis.__version__",
        "reports/chart.py:1 imports tracelake.analysis",
        "reports/chart.py:1 imports tracelake.analysis.database",
        "reports/chart.py:2 imports tracelake.analysis.cli",
        "reports/page.py:2 imports tracelake.analysis.report_job",
        "reports/page.py:2 imports tracelake.analysis.report_job.write_reports",
        "sql/__init__.py:2 imports tracelake.reports.render",
    ]


def test_one_module_spells_the_lake_layout():
    """Partition paths are spelled in ingest/lake_layout.py only; everything else asks it."""
    spelled = [str(p.relative_to(REPO)) for package in ALLOWED for p in sorted((REPO / package).rglob("*.py"))
               if "trace_id=" in p.read_text(encoding="utf-8") or '"data.parquet"' in p.read_text(encoding="utf-8")]
    assert spelled == ["ingest/lake_layout.py"]


def test_process_settings_are_made_at_program_start_not_on_import():
    """Importing tracelake changes nothing process-wide; the CLI's main() picks Arrow's allocator,
    and the CLI module imports nothing heavy before it has (a fresh interpreter)."""
    code = (
        "import os, sys\n"
        "import tracelake.analysis.cli as cli\n"
        "light = not {'pyarrow', 'polars', 'duckdb'} & set(sys.modules)\n"
        "import tracelake.analysis.commands, tracelake.analysis.report_job, tracelake.ingest.dispatch\n"
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
