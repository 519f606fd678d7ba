"""Finding trace files under the paths a user gives."""

from __future__ import annotations

import os
from pathlib import Path

TRACE_SUFFIXES = (".sqlite", ".sqlite.gz", ".json", ".json.gz")


REPORT_SUFFIXES = (".nsys-rep", ".qdrep")


def is_trace_name(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES) or name.endswith(REPORT_SUFFIXES)


def _report_stem(name: str) -> str:
    return next(name[: -len(s)] for s in REPORT_SUFFIXES if name.endswith(s))


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
                exported = {f.removesuffix(".gz").removesuffix(".sqlite") for f in files if f.endswith((".sqlite", ".sqlite.gz"))}
                found.extend(str(Path(root) / f) for f in sorted(files) if is_trace_name(f) and not (
                    f.endswith(REPORT_SUFFIXES) and _report_stem(f) in exported))
        else:
            found.append(p)
    seen, unique = set(), []
    for f in found:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return unique
