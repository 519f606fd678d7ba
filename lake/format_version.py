"""Which tracelake wrote a lake, and whether this one reads it with the same numbers (docs/lake.md,
"Upgrades").

    <lake>/lake.json   {"format": 1, "tracelake_version": "0.1.0", "schema": "<hash of lake/schema.py>"}

Every writer records it when it is done (`record`, under the writer lock). "schema" is set only
when every trace in the lake has every table and column of this version's schema (otherwise
null), so a reader whose schema file hashes the same knows the lake is current from a few bytes,
without opening a Parquet file or importing pyarrow.

A lake without lake.json (written before it existed) or with another schema is checked trace by
trace (`outdated`): a trace whose partitions lack a table or a column of this schema was written
by an earlier tracelake that did not compute it, and the views that read it would give other
numbers (a NULL `memory_events.event_id` is no event order). Such a trace cannot be mended from
the lake: it needs its trace file again, which readers say in one line (`notice`) and `tracelake
run` does by itself (an outdated trace's file is read again even when unchanged). Materialized
views need nothing of the kind: a changed view has a new fingerprint and is derived again from
the stored Parquet (lake/derive.py).

FORMAT counts changes of the layout itself (where files are, what lake.json means). A lake of a
higher FORMAT was written by a newer tracelake: this one refuses it in one line rather than guess.
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import resources
from pathlib import Path

from . import atomic_write, layout
from .version import __version__

FORMAT = 1
LAKE_JSON = "lake.json"


class LakeFormatWarning(UserWarning):
    """Some traces of the lake lack what this version reads (`notice`'s line)."""


class LakeTooNew(Exception):
    """The lake was written by a newer tracelake (a higher FORMAT); str() is one line."""


def _schema_hash() -> str:
    return hashlib.sha256(resources.files(__package__).joinpath("schema.py").read_bytes()).hexdigest()[:16]


def recorded(lake: Path) -> dict:
    """lake.json's content; {} when there is none (a lake written before it existed) or it is unreadable."""
    try:
        content = json.loads((Path(lake) / LAKE_JSON).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return content if isinstance(content, dict) else {}


def check_not_newer(lake: Path, info: dict | None = None) -> None:
    info = recorded(lake) if info is None else info
    if isinstance(info.get("format"), int) and info["format"] > FORMAT:
        raise LakeTooNew(f"{lake}: written by tracelake {info.get('tracelake_version')} (lake format "
                         f"{info['format']}); this is tracelake {__version__}, which reads format {FORMAT} "
                         "and older: upgrade tracelake to read it")


def outdated(lake: Path) -> dict[str, list[str]]:
    """trace_id -> the tables ('gpu_metrics') and columns ('memory_events.event_id') of this
    schema that its partitions lack; {} for a current lake (read from lake.json when it says so)."""
    lake = Path(lake)
    info = recorded(lake)
    check_not_newer(lake, info)
    if info.get("schema") == _schema_hash() or not layout.is_lake(lake):
        return {}
    import pyarrow.parquet as pq

    from .schema import TABLES

    out: dict[str, list[str]] = {}
    complete = layout.complete_trace_ids(lake)
    for table, spec in TABLES.items():
        if layout.uniform_schema(lake, table):  # every partition written with this schema
            continue
        wanted = [c.name for c in spec.columns if c.name != "trace_id"]
        for trace_id in sorted(complete):
            f = layout.partition_file(lake, table, trace_id)
            if not f.exists():
                in_segment = trace_id in layout.segment_trace_ids(lake, table)
                if not in_segment:
                    out.setdefault(trace_id, []).append(table)
                continue
            names = set(pq.read_schema(f).names)
            out.setdefault(trace_id, []).extend(f"{table}.{c}" for c in wanted if c not in names)
        for segment, _ in layout.segment_sources(lake, table):
            names = set(pq.read_schema(segment).names)
            missing = [f"{table}.{c}" for c in wanted if c not in names]
            if missing:
                for trace_id in layout.segment_trace_ids(lake, table, Path(segment).stem.removeprefix("part-")):
                    out.setdefault(trace_id, []).extend(missing)
    return {t: lacks for t, lacks in out.items() if lacks}


def notice(lake: Path) -> str | None:
    """One line for a reader when some traces were written without what this version reads: which,
    what they lack, and what to run; None for a current lake."""
    lacking = outdated(lake)
    if not lacking:
        return None
    index = {trace_id: path for path, (_, trace_id) in layout.lake_index(lake).items()}
    files = [index.get(t, t) for t in sorted(lacking)]
    columns = sorted({c for lacks in lacking.values() for c in lacks})
    n = len(lacking)
    again = f"`tracelake ingest {' '.join(files[:3])}{' ...' if n > 3 else ''} --lake {lake}`"
    if lake.name == "lake":  # OUT/lake of `tracelake run`, which reads such traces' files again by itself
        folders = sorted({os.path.dirname(f) for f in files if os.path.isabs(f)})
        again += f" or `tracelake run {' '.join(folders[:3]) or '...'} --out {lake.parent}`"
    return (f"{lake}: {n} trace{'s' * (n != 1)} written by an earlier tracelake lack{'s' * (n == 1)} what this one "
            f"reads ({', '.join(columns[:4])}{', ...' if len(columns) > 4 else ''}), so views that read it would "
            f"differ: read {'their files' if n != 1 else 'its file'} again: {again}")


def record(lake: Path) -> None:
    """Write lake.json (a writer, when done): this format and version, and the schema's hash when
    no trace lacks anything of it."""
    lake = Path(lake)
    current = {"format": FORMAT, "tracelake_version": __version__,
               "schema": None if outdated(lake) else _schema_hash()}
    if recorded(lake) == current:
        return
    atomic_write.write_text(lake / LAKE_JSON, json.dumps(current))
