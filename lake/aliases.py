"""Files whose bytes the lake already holds as a trace read from another path: one trace, many
paths (docs/lake.md, "Aliases").

    <lake>/aliases.json   {"<absolute path>": {"trace_id": "...", "content_sha256": "..."}, ...}

A second copy of a trace (the same file under two names or folders) is not ingested again: its
path is recorded here as an alias of the trace, so the lake counts the trace once and keeps the
path the trace was first read from. An alias counts only while its trace is in the lake; its
file, changed or gone, is dealt with as any other (read again, or dropped by --prune).
"""

from __future__ import annotations

import json
from pathlib import Path

from . import atomic_write

ALIASES_JSON = "aliases.json"


def read(lake: Path, complete: set[str]) -> dict[str, tuple[str, str]]:
    """path -> (content_sha256, trace_id) of each alias whose trace is among `complete`."""
    try:
        entries = json.loads((lake / ALIASES_JSON).read_text())
    except FileNotFoundError:
        return {}
    return {path: (e["content_sha256"], e["trace_id"]) for path, e in entries.items() if e["trace_id"] in complete}


def write(lake: Path, aliases: dict[str, tuple[str, str]]) -> None:
    """Replace the lake's aliases (atomic_write: a reader sees the old or the new list)."""
    target = lake / ALIASES_JSON
    if not aliases:
        target.unlink(missing_ok=True)
        return
    atomic_write.write_text(target, json.dumps({p: {"trace_id": t, "content_sha256": s}
                                                for p, (s, t) in sorted(aliases.items())}, indent=1))
