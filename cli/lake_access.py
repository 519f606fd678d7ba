"""What the commands that read a lake share: its connection, derived first where it lacks views,
and a trace named on the command line (an id or a unique prefix of one)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .terminal import say


def open_lake(lake: str, private: bool = False, reads: Iterable[str] | None = ()):
    """The lake's database connection, or None after printing why there is none; first derived
    what the lake lacks of the views it keeps and of `reads` (None: every view), once: the lake
    keeps them from then on (jobs/derive_job.ensure_derived)."""
    from ..jobs.derive_job import ensure_derived
    from ..lake.database import connect

    for warning in ensure_derived(lake, reads, jobs=os.cpu_count() or 1):
        say(f"warning  {warning}", err=True)
    try:
        return connect(lake, private=private)
    except FileNotFoundError as e:
        say(f"error  {e}", err=True)
        return None


def is_lake(lake: str) -> bool:
    """Whether `lake` is a lake; if not, says so (for commands that need one and would not make one)."""
    from ..lake import layout

    if layout.is_lake(Path(lake)):
        return True
    say(f"error  {lake}: not a tracelake lake (no traces/ folder)", err=True)
    return False


def resolve_trace(con, wanted: str) -> str | None:
    """The trace id equal to `wanted`, or the only one starting with it; None after saying why not."""
    ids = [r[0] for r in con.execute("SELECT trace_id FROM traces").fetchall()]
    matches = [t for t in ids if t == wanted] or [t for t in ids if t.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    say(f"error  --trace {wanted!r} matches {len(matches)} traces; trace ids: {', '.join(sorted(ids)[:20])}",
        err=True)
    return None
