"""Finding trace files under the paths a user gives."""

from __future__ import annotations

import os
from pathlib import Path

from .sources import SOURCES, suffixes

TRACE_SUFFIXES = suffixes()


def is_trace_name(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES)


def _stem(name: str, suffixes: tuple[str, ...]) -> str | None:
    """The name without the first of `suffixes` it ends with (None: it ends with none)."""
    return next((name[: -len(s)] for s in suffixes if name.endswith(s)), None)


def _read_instead(files: list[str]) -> set[str]:
    """The files of one folder that a source recognizes by name alone (an Nsight report) and whose
    content a file of the same stem that the source reads directly holds (its SQLite export)."""
    skipped: set[str] = set()
    for source in SOURCES:
        named = tuple(s for suffixes in source.BY_NAME.values() for s in suffixes)
        if named:
            direct = {_stem(f, source.SUFFIXES) for f in files} - {None}
            skipped.update(f for f in files if _stem(f, named) in direct)
    return skipped


def discover(paths: list[str]) -> list[str]:
    """Files named on the command line, plus trace files found recursively in directories (sorted).

    Nsight reports (.nsys-rep, .qdrep) are listed too (read through `nsys export`: nsys/report.py),
    except in a directory where their SQLite export lies beside them: the export is read instead.
    """
    found: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                instead = _read_instead(files)
                found.extend(str(Path(root) / f) for f in sorted(files) if is_trace_name(f) and f not in instead)
        else:
            found.append(p)
    seen, unique = set(), []
    for f in found:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return unique
