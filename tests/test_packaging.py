"""pyproject.toml's package list: every folder of the installed package is listed (setuptools warns
at each install about a folder of package data that is not: `make demo` opened with ~150 lines of
"Package would be ignored"), and every file in it is either a module or matched by package-data."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch

from conftest import REPO


def test_every_folder_is_a_listed_package_and_every_data_file_is_shipped():
    setup = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    listed, data = set(setup["packages"]), setup["package-data"]
    found = set()
    for package, folder in setup["package-dir"].items():
        root = REPO / folder
        for sub in [root, *(p for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
            name = ".".join([package, *sub.relative_to(root).parts])
            found.add(name)
            for f in sub.iterdir():
                if f.is_file() and f.suffix not in (".py", ".pyc"):
                    assert any(fnmatch(f.name, pattern) for pattern in data.get(name, [])), \
                        f"{f.relative_to(REPO)}: not matched by package-data of {name}"
    assert found == listed, f"folders not listed: {found - listed}; listed, no folder: {listed - found}"
    assert "tracelake.sql.base" in found and "tracelake.reports.templates" in found
