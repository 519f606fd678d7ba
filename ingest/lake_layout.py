"""The lake's layout on disk: the one module that knows where a trace's files are (docs/lake.md).

    <lake>/<table>/trace_id=<trace_id>/data.parquet    a partition: one table of one trace
    <lake>/.staging/<trace_id>.<random>/<table>/       a trace being written
    <lake>/derived/<view>@<sql fingerprint>/trace_id=<trace_id>/data.parquet
                                                       a materialized view's rows for one trace
    <lake>/.schemas/<table>@<hash>                     the schemas the partitions of a table have
    <lake>/tracelake.duckdb                            the database (analysis/database.py)

Every table is written for every trace (hive partitioning: `trace_id` is the partition value, not
a column inside the files). A trace is complete exactly when its `traces` partition exists: a
writer renames the other tables into place first and `traces` last, and removes `traces` first.
Derived partitions (analysis/derive.py) are computed from a trace's tables and belong to it: they
are removed with it. Their folder is named after the view and a fingerprint of its SQL, so a
changed view is a new folder that no trace has yet, and the old folder is removed once unused.
Everything else (the writer, the database, the batch job) asks this module for paths and lists.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import uuid
from pathlib import Path

STAGING = ".staging"
DERIVED = "derived"
SCHEMAS = ".schemas"
_KEY = "trace_id="
_FILE = "data.parquet"
# How docs spell a partition's path (docs/schema.md is generated with it).
PARTITION_PATTERN = f"<table>/{_KEY}<trace_id>/{_FILE}"


def _tables() -> dict:
    from .schema import TABLES  # imports pyarrow: only for writers, not for opening a lake to query it

    return TABLES


def partition_dir(lake: Path, table: str, trace_id: str) -> Path:
    return Path(lake) / table / f"{_KEY}{trace_id}"


def partition_file(lake: Path, table: str, trace_id: str) -> Path:
    return partition_dir(lake, table, trace_id) / _FILE


def trace_id_of(partition: Path) -> str:
    """The trace id of a partition folder (<table>/trace_id=<id>)."""
    return partition.name.removeprefix(_KEY)


def table_files(lake: Path, table: str, trace_ids: list[str] | None = None) -> list[str]:
    """What DuckDB's read_parquet should read for a table: a glob of all its partitions (none when
    the table has none yet), or the files of these traces that exist."""
    lake = Path(lake)
    if trace_ids is None:
        return [str(lake / table / f"{_KEY}*" / _FILE)] if any((lake / table).glob(f"{_KEY}*/{_FILE}")) else []
    return [str(f) for t in trace_ids if (f := partition_file(lake, table, t)).exists()]


def derived_dir(lake: Path, view: str, fingerprint: str) -> Path:
    return Path(lake) / DERIVED / f"{view}@{fingerprint}"


def derived_file(lake: Path, view: str, fingerprint: str, trace_id: str) -> Path:
    return derived_dir(lake, view, fingerprint) / f"{_KEY}{trace_id}" / _FILE


def derived_glob(lake: Path, view: str, fingerprint: str) -> str:
    return str(derived_dir(lake, view, fingerprint) / f"{_KEY}*" / _FILE)


def derived_trace_ids(lake: Path, view: str, fingerprint: str) -> set[str]:
    """Traces whose partition of this derived table exists (one directory listing)."""
    try:
        with os.scandir(derived_dir(lake, view, fingerprint)) as it:
            return {e.name.removeprefix(_KEY) for e in it if e.name.startswith(_KEY)}
    except FileNotFoundError:
        return set()


def has_derived(lake: Path, view: str, fingerprint: str) -> bool:
    """Whether any trace has a partition of this derived table (stops at the first)."""
    try:
        with os.scandir(derived_dir(lake, view, fingerprint)) as it:
            return any(e.name.startswith(_KEY) for e in it)
    except FileNotFoundError:
        return False


def publish_derived(lake: Path, view: str, fingerprint: str, trace_id: str, staged: Path) -> None:
    """Move a derived partition written at `staged` (a file) into place, replacing the old one."""
    final = derived_file(lake, view, fingerprint, trace_id)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staged, final)


def remove_derived_except(lake: Path, current: set[str]) -> None:
    """Delete the derived folders of views or fingerprints not in `current` (<view>@<fingerprint> names)."""
    root = Path(lake) / DERIVED
    if root.is_dir():
        for d in root.iterdir():
            if d.name not in current:
                shutil.rmtree(d, ignore_errors=True)


def is_lake(lake: Path) -> bool:
    """A folder tracelake wrote to (it has the `traces` table's folder)."""
    return (Path(lake) / "traces").is_dir()


def staging_dir(lake: Path, trace_id: str) -> Path:
    """A fresh folder to write a trace's tables in (<staging>/<table>/data.parquet), then publish."""
    return Path(lake) / STAGING / f"{trace_id}.{uuid.uuid4().hex[:8]}"


def staged_file(staging: Path, table: str) -> Path:
    return staging / table / _FILE


def publish(lake: Path, trace_id: str, staging: Path) -> None:
    """Move a staged trace into place, replacing any trace of that id: event tables first, `traces` last."""
    delete_trace(lake, trace_id)
    for name in [n for n in _tables() if n != "traces"] + ["traces"]:
        final = partition_dir(lake, name, trace_id)
        final.parent.mkdir(parents=True, exist_ok=True)
        _note_schema(lake, name)
        os.replace(staging / name, final)


def _schema_tag(table: str) -> str:
    return hashlib.sha256(_tables()[table].arrow_schema.to_string().encode()).hexdigest()[:12]


def _note_schema(lake: Path, table: str) -> None:
    """Record the schema this writer's partitions of `table` have (.schemas/<table>@<hash>), before
    they are moved in. A table that has partitions but no record is from a version that kept none:
    it gets none, so its schemas stay unknown."""
    records = Path(lake) / SCHEMAS
    marker = records / f"{table}@{_schema_tag(table)}"
    if marker.exists():
        return
    if any(records.glob(f"{table}@*")) or not any((Path(lake) / table).glob(f"{_KEY}*")):
        records.mkdir(exist_ok=True)
        marker.touch()


def uniform_schema(lake: Path, table: str) -> bool:
    """Whether every partition of `table` has this version's schema (then readers need not open
    every file to unify schemas, which would defeat pruning by trace_id)."""
    return {p.name for p in (Path(lake) / SCHEMAS).glob(f"{table}@*")} == {f"{table}@{_schema_tag(table)}"}


def discard_staging(staging: Path) -> None:
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.parent.rmdir()  # only when no other writer is staging
    except OSError:
        pass


def delete_trace(lake: Path, trace_id: str) -> None:
    """Remove a trace: its `traces` row first, so a crash midway leaves it incomplete, not half-valid."""
    for name in ["traces"] + [n for n in _tables() if n != "traces"]:
        shutil.rmtree(partition_dir(lake, name, trace_id), ignore_errors=True)
    _remove_derived(lake, {trace_id})


def _remove_derived(lake: Path, trace_ids: set[str]) -> None:
    root = Path(lake) / DERIVED
    if root.is_dir():
        for d in root.iterdir():
            for t in trace_ids:
                shutil.rmtree(d / f"{_KEY}{t}", ignore_errors=True)


def complete_trace_ids(lake: Path) -> set[str]:
    root = Path(lake) / "traces"
    if not root.is_dir():
        return set()
    return {trace_id_of(p) for p in root.iterdir() if (p / _FILE).is_file()}


def _traces_row(lake: Path, trace_id: str) -> list[dict] | None:
    """The trace's `traces` row(s) (path, content hash), or None when the file cannot be read (a
    damaged disk, a hand-edited lake)."""
    import pyarrow as pa  # here: opening a lake to query it needs no Parquet reader in Python
    import pyarrow.parquet as pq

    try:
        return pq.read_table(partition_file(lake, "traces", trace_id), columns=["path", "content_sha256"]).to_pylist()
    except (OSError, ValueError, pa.ArrowException):
        return None


def remove_incomplete(lake: Path) -> list[str]:
    """Delete partitions of traces without a readable `traces` row, and leftover staging folders
    (an unreadable trace is ingested again by the next run instead of failing every query)."""
    lake = Path(lake)
    complete = {t for t in complete_trace_ids(lake) if _traces_row(lake, t) is not None}
    removed = set()
    for name in _tables():
        root = lake / name
        if not root.is_dir():
            continue
        for part in root.iterdir():
            trace_id = trace_id_of(part)
            if trace_id not in complete:
                shutil.rmtree(part, ignore_errors=True)
                removed.add(trace_id)
    root = lake / DERIVED
    if root.is_dir():
        for d in root.iterdir():
            for part in d.iterdir() if d.is_dir() else ():
                if trace_id_of(part) not in complete:
                    shutil.rmtree(part, ignore_errors=True)
    shutil.rmtree(lake / STAGING, ignore_errors=True)
    return sorted(removed)


def check_path(lake: Path) -> None:
    """DuckDB and Parquet open only UTF-8 paths: a lake path that is not (undecodable bytes in a
    folder name) is refused with an OSError naming it, before anything is written."""
    try:
        str(Path(lake).resolve()).encode("utf-8")
    except UnicodeEncodeError:
        raise OSError(errno.EINVAL, "a lake's path must be valid UTF-8 (DuckDB and Parquet open no other)",
                      str(lake)) from None


def prepare_for_writing(lake: Path) -> Path:
    """Create the lake folder, check it is writable (before any work: an OSError naming the path
    otherwise, which the CLI prints as one line) and clean up what an interrupted writer left;
    every writer calls it first."""
    lake = Path(lake)
    check_path(lake)
    lake.mkdir(parents=True, exist_ok=True)
    probe = lake / f".write-test.{os.getpid()}"
    with open(probe, "x"):
        pass
    probe.unlink()
    remove_incomplete(lake)
    return lake


def lake_index(lake: Path) -> dict[str, tuple[str, str]]:
    """path -> (content_sha256, trace_id) of every complete trace in the lake (from its `traces` rows)."""
    out = {}
    for trace_id in complete_trace_ids(lake):
        row = _traces_row(lake, trace_id)
        if row:
            out[os.path.abspath(row[0]["path"])] = (row[0]["content_sha256"], trace_id)
    return out
