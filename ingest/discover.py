"""Finding trace files under the paths a user gives."""

from __future__ import annotations

import os
from pathlib import Path

TRACE_SUFFIXES = (".sqlite", ".sqlite.gz", ".json", ".json.gz")


def is_trace_name(name: str) -> bool:
    return name.endswith(TRACE_SUFFIXES) or name.endswith((".nsys-rep", ".qdrep"))


def discover(paths: list[str]) -> list[str]:
    """Files named on the command line, plus trace files found recursively in directories (sorted).

    Nsight reports (.nsys-rep) are listed too, so the user learns they need exporting.
    """
    found: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(str(Path(root) / f) for f in sorted(files) if is_trace_name(f))
        else:
            found.append(p)
    seen, unique = set(), []
    for f in found:
        if f not in seen:
            seen.add(f)
            unique.append(f)
    return unique
