"""The lake's layout on disk: the one module that knows where a trace's files are (docs/lake.md).

    <lake>/<table>/trace_id=<trace_id>/data.parquet    a partition: one table of one trace
    <lake>/.staging/<trace_id>.<random>/<table>/       a trace being written
    <lake>/.staging/held/<trace_id>/<table>/           a trace written, waiting for its derived tables
    <lake>/.staging/held/<trace_id>/derived/<view>@<fp>/data.parquet    (its derived rows, as derived)
    <lake>/derived/<view>@<sql fingerprint>/trace_id=<trace_id>/data.parquet
                                                       a materialized view's rows for one trace
    <lake>/.schemas/<table>@<hash>                     the schemas the partitions of a table have
    <lake>/<table>/part-<segment>.parquet              compacted: many traces' rows (trace_id a column)
    <lake>/derived/<view>@<fingerprint>/part-<segment>.parquet
    <lake>/.compacted/manifest.json                    which traces each segment holds (the commit point)
    <lake>/.compacted/removed/<segment>/_all/<trace_id>            a trace's rows in a segment no longer count
    <lake>/.compacted/removed/<segment>/derived/<view>@<fp>/<trace_id>  (one derived table's rows)
    <lake>/tracelake.duckdb                            the database (lake/database.py)

Every table is written for every trace (hive partitioning: `trace_id` is the partition value, not
a column inside the files). A trace is complete exactly when its `traces` partition exists: a
writer renames the other tables into place first and `traces` last, and removes `traces` first.
Derived partitions (lake/derive.py) are computed from a trace's tables and belong to it: they
are removed with it. Their folder is named after the view and a fingerprint of its SQL, so a
changed view is a new folder that no trace has yet, and the old folder is removed once unused.
Compaction (lake/compact.py) merges many traces' partitions of each table into one
"segment" file per table, sorted by trace_id; a segment counts once the manifest names it. A trace
that is re-ingested, removed or re-derived while its rows sit in a segment gets a tombstone there
(written before its new partitions are moved in), so its old rows are no longer read; the next
compaction rewrites such segments without them.
Everything else (the writer, the database, the batch job) asks this module for paths and lists.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

from . import atomic_write

STAGING = ".staging"
HELD = "held"
_REPLACES = "replaces"  # in a held trace's folder: the id of the trace it replaces on publishing
DERIVED = "derived"
SCHEMAS = ".schemas"
COMPACTED = ".compacted"
_PART = "part-"
_ALL = "_all"
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


def derived_trace_ids(lake: Path, view: str, fingerprint: str) -> set[str]:
    """Traces that have rows of this derived table, loose or compacted."""
    folder = derived_folder(view, fingerprint)
    return loose_trace_ids(lake, folder) | segment_trace_ids(lake, folder)


# --- compacted segments ------------------------------------------------------------------------

def _manifest_file(lake: Path) -> Path:
    return Path(lake) / COMPACTED / "manifest.json"


_MANIFESTS: dict[str, tuple[tuple, dict]] = {}  # path -> ((mtime, size), content): read once per change


def manifest(lake: Path) -> dict:
    """{"generation": id, "segments": {segment: {"traces": [ids], "dirs": {folder: [ids lacking]}}},
    "cleanup": None or what a compaction still has to remove}; empty when never compacted. A
    folder is a table name or derived/<view>@<fingerprint>; "dirs" names those the segment has a file for."""
    f = _manifest_file(lake)
    try:
        st = f.stat()
    except FileNotFoundError:
        return {"generation": "", "segments": {}, "cleanup": None}
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _MANIFESTS.get(str(f))
    if cached is None or cached[0] != key:
        cached = _MANIFESTS[str(f)] = (key, json.loads(f.read_text(encoding="utf-8")))
    return _copy(cached[1])


def _copy(m: dict) -> dict:
    """A copy its caller may change (the segments' lists are shared, never changed in place)."""
    return {**m, "segments": dict(m["segments"])}


def write_manifest(lake: Path, content: dict) -> None:
    """Replace the manifest atomically (the commit point of a compaction)."""
    final = _manifest_file(lake)
    final.parent.mkdir(exist_ok=True)
    atomic_write.write_text(final, json.dumps(content))


def derived_folder(view: str, fingerprint: str) -> str:
    """The folder name (relative to the lake) of a derived table, as segments name it."""
    return f"{DERIVED}/{view}@{fingerprint}"


def segment_file(lake: Path, folder: str, segment: str) -> Path:
    return Path(lake) / folder / f"{_PART}{segment}.parquet"


def staged_segment_file(staging: Path, folder: str, segment: str) -> Path:
    return staging / folder / f"{_PART}{segment}.parquet"


def _removed(lake: Path, segment: str, folder: str) -> set[str]:
    root = Path(lake) / COMPACTED / "removed" / segment
    out: set[str] = set()
    for sub in (_ALL, folder) if folder.startswith(DERIVED + "/") else (_ALL,):
        try:
            with os.scandir(root / sub) as it:
                out.update(e.name for e in it)
        except FileNotFoundError:
            pass
    return out


def has_tombstones(lake: Path, segment: str) -> bool:
    return (Path(lake) / COMPACTED / "removed" / segment).is_dir()


def removed_everywhere(lake: Path, segment: str) -> set[str]:
    """Traces whose rows in `segment` no longer count in any folder."""
    return _removed(lake, segment, _ALL)


def place_segment_file(lake: Path, staging: Path, folder: str, segment: str) -> None:
    final = segment_file(lake, folder, segment)
    final.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staged_segment_file(staging, folder, segment), final)


def remove_orphan_segments(lake: Path) -> None:
    """Delete segment files the manifest does not name (a compaction stopped before its commit)."""
    named = set(manifest(lake)["segments"])
    lake = Path(lake)
    folders = [p for p in lake.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != DERIVED]
    if (lake / DERIVED).is_dir():
        folders += [p for p in (lake / DERIVED).iterdir() if p.is_dir()]
    for folder in folders:
        with os.scandir(folder) as it:
            for e in it:
                if e.name.startswith(_PART) and e.name.removeprefix(_PART).removesuffix(".parquet") not in named:
                    os.unlink(e.path)


def segment_sources(lake: Path, folder: str, trace_ids: list[str] | None = None,
                    segment: str | None = None) -> list[tuple[str, list[str]]]:
    """The segment files holding rows of `folder` (of any of `trace_ids`, when given; of one
    segment, when given), each with the trace ids whose rows in it no longer count."""
    wanted = None if trace_ids is None else set(trace_ids)
    out = []
    for seg, info in manifest(lake)["segments"].items():
        if segment is not None and seg != segment:
            continue
        if folder not in info["dirs"] or (wanted is not None and wanted.isdisjoint(info["traces"])):
            continue
        f = segment_file(lake, folder, seg)
        if f.exists():
            out.append((str(f), sorted(_removed(lake, seg, folder))))
    return out


def segment_trace_ids(lake: Path, folder: str, segment: str | None = None) -> set[str]:
    """Traces whose rows of `folder` are read from segments (from one segment, when given)."""
    out: set[str] = set()
    for seg, info in manifest(lake)["segments"].items():
        if segment not in (None, seg):
            continue
        if folder in info["dirs"] and segment_file(lake, folder, seg).exists():
            out.update(set(info["traces"]) - set(info["dirs"][folder]) - _removed(lake, seg, folder))
    return out


def _tombstone(lake: Path, trace_ids: set[str], folder: str = _ALL) -> None:
    """Mark these traces' rows of `folder` (every folder: _ALL) as gone from the segments holding them."""
    for seg, info in manifest(lake)["segments"].items():
        for t in trace_ids & set(info["traces"]):
            marker = Path(lake) / COMPACTED / "removed" / seg / folder / t
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()


def layout_state(lake: Path) -> str:
    """What a database's views depend on besides which folders have partitions: the manifest's
    generation and the tombstones (a few names)."""
    m = manifest(lake)
    root = Path(lake) / COMPACTED / "removed"
    marks = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    return json.dumps([m["generation"], marks])


def loose_trace_ids(lake: Path, folder: str) -> set[str]:
    """Traces with a partition folder of `folder` (one directory listing)."""
    try:
        with os.scandir(Path(lake) / folder) as it:
            return {e.name.removeprefix(_KEY) for e in it if e.name.startswith(_KEY)}
    except FileNotFoundError:
        return set()


def has_loose(lake: Path, folder: str) -> bool:
    try:
        with os.scandir(Path(lake) / folder) as it:
            return any(e.name.startswith(_KEY) for e in it)
    except FileNotFoundError:
        return False


def loose_glob(lake: Path, folder: str) -> str:
    return str(Path(lake) / folder / f"{_KEY}*" / _FILE)


def loose_file(lake: Path, folder: str, trace_id: str) -> Path:
    return Path(lake) / folder / f"{_KEY}{trace_id}" / _FILE


def remove_loose(lake: Path, folder: str, trace_id: str) -> None:
    part = Path(lake) / folder / f"{_KEY}{trace_id}"
    try:  # two system calls; rmtree takes about six per folder (compaction removes 100,000s)
        os.unlink(part / _FILE)
        os.rmdir(part)
    except FileNotFoundError:
        pass
    except OSError:
        shutil.rmtree(part, ignore_errors=True)


def finish_compaction(lake: Path) -> None:
    """Do what a committed compaction had left to do when it was stopped: remove the loose
    partitions of the traces it compacted (unless a tombstone says they are newer) and the files
    of the segments it replaced. Every writer and every database build calls it first."""
    m = manifest(lake)
    todo = m.get("cleanup")
    if not todo:
        return
    for seg in todo["drop"]:
        for folder in todo["dirs"]:
            segment_file(lake, folder, seg).unlink(missing_ok=True)
        shutil.rmtree(Path(lake) / COMPACTED / "removed" / seg, ignore_errors=True)
    with contextlib.suppress(OSError):
        (Path(lake) / COMPACTED / "removed").rmdir()  # when no tombstone is left
    seg = todo["segment"]
    info = m["segments"][seg]
    for folder in info["dirs"]:
        gone = _removed(lake, seg, folder)
        for t in todo["loose"]:
            if t not in gone:
                remove_loose(lake, folder, t)
    m["cleanup"] = None
    write_manifest(lake, m)


def copied_partition_files(root: Path, trace_id: str) -> list[Path]:
    """The files a DuckDB `COPY ... TO root (PARTITION_BY (trace_id))` wrote for this trace."""
    return sorted((Path(root) / f"{_KEY}{trace_id}").glob("*.parquet"))


def has_derived(lake: Path, view: str, fingerprint: str) -> bool:
    """Whether any trace has a partition of this derived table, loose or compacted."""
    folder = derived_folder(view, fingerprint)
    return has_loose(lake, folder) or bool(segment_trace_ids(lake, folder))


def has_any_derived(lake: Path) -> bool:
    """Whether the lake holds derived tables at all (loose partitions or segments, of any view)."""
    root = Path(lake) / DERIVED
    return root.is_dir() and any(root.iterdir())


def publish_derived(lake: Path, view: str, fingerprint: str, trace_id: str, staged: Path) -> None:
    """Move a derived partition written at `staged` (a file) into place, replacing the old one."""
    final = derived_file(lake, view, fingerprint, trace_id)
    _tombstone(lake, {trace_id}, derived_folder(view, fingerprint))  # its compacted rows, if any, are older
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


def publish(lake: Path, trace_id: str, staging: Path,
            derived: Iterable[tuple[str, str, Path]] = ()) -> None:
    """Move a staged (or held) trace into place, replacing any trace of that id and the trace it
    replaces (`hold`): its derived partitions first ((view, fingerprint, written file) each: a
    derivation's, lake/derive.py), then its event tables, `traces` last, so that a reader that sees
    the trace sees its derived rows too."""
    delete_trace(lake, trace_id)
    replaces = staging / _REPLACES
    if replaces.is_file() and (old := replaces.read_text()) != trace_id:
        delete_trace(lake, old)
    for view, fingerprint, written in derived:
        publish_derived(lake, view, fingerprint, trace_id, written)
    for name in [n for n in _tables() if n != "traces"] + ["traces"]:
        final = partition_dir(lake, name, trace_id)
        final.parent.mkdir(parents=True, exist_ok=True)
        _note_schema(lake, name)
        os.replace(staging / name, final)


# --- held traces: written, not yet published (a `run` publishes a trace with its derived tables) ---

def held_dir(lake: Path, trace_id: str) -> Path:
    return Path(lake) / STAGING / HELD / trace_id


def hold(lake: Path, trace_id: str, staging: Path) -> Path:
    """Keep a staged trace for publishing later, with its derived tables (`publish`); returns its
    folder. A held trace is no part of the lake: readers do not see it, and the next writer
    removes it if this one never publishes it (a killed job: its file is ingested again). A later
    trace of the same id replaces it."""
    final = held_dir(lake, trace_id)
    final.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(final, ignore_errors=True)
    os.rename(staging, final)
    return final


def note_replaces(lake: Path, trace_id: str, old_trace_id: str) -> None:
    """The held trace, once published, replaces `old_trace_id` (the same file's earlier content),
    which stays in the lake until then."""
    (held_dir(lake, trace_id) / _REPLACES).write_text(old_trace_id)


def held_traces(lake: Path) -> dict[str, Path]:
    """trace_id -> folder of each held trace."""
    root = Path(lake) / STAGING / HELD
    return {d.name: d for d in root.iterdir() if (d / "traces" / _FILE).is_file()} if root.is_dir() else {}


def replaced_by_held(lake: Path) -> set[str]:
    """The traces that held traces replace once published."""
    return {(d / _REPLACES).read_text() for d in held_traces(lake).values() if (d / _REPLACES).is_file()}


def held_file(held: Path, table: str) -> Path:
    return held / table / _FILE


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
    """Remove a trace: its `traces` row first, so a crash midway leaves it incomplete, not half-valid
    (rows in compacted segments: a tombstone, written first)."""
    _tombstone(lake, {trace_id})
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
    """Traces with a `traces` partition, or a `traces` row in a segment that counts."""
    root = Path(lake) / "traces"
    if not root.is_dir():
        return set()
    loose = {trace_id_of(p) for p in root.iterdir() if p.name.startswith(_KEY) and (p / _FILE).is_file()}
    return loose | segment_trace_ids(lake, "traces")


def _traces_row(lake: Path, trace_id: str) -> list[dict] | None:
    """The trace's `traces` row(s) (path, content hash), or None when the file cannot be read (a
    damaged disk, a hand-edited lake)."""
    import pyarrow as pa  # here: opening a lake to query it needs no Parquet reader in Python
    import pyarrow.parquet as pq

    try:
        return pq.read_table(partition_file(lake, "traces", trace_id), columns=["path", "content_sha256"]).to_pylist()
    except (OSError, ValueError, pa.ArrowException):
        return None


def _segment_traces_rows(lake: Path) -> dict[str, dict]:
    """trace_id -> its `traces` row (path, content hash) for the traces read from segments."""
    import pyarrow.parquet as pq

    out = {}
    for f, gone in segment_sources(lake, "traces"):
        for row in pq.read_table(f, columns=["trace_id", "path", "content_sha256"]).to_pylist():
            if row["trace_id"] not in gone:
                out[row["trace_id"]] = row
    return out


def remove_incomplete(lake: Path) -> list[str]:
    """Delete partitions of traces without a readable `traces` row, and leftover staging folders
    (an unreadable trace is ingested again by the next run instead of failing every query)."""
    lake = Path(lake)
    finish_compaction(lake)
    compacted = segment_trace_ids(lake, "traces")
    complete = compacted | {t for t in complete_trace_ids(lake) - compacted if _traces_row(lake, t) is not None}
    removed = set()
    for name in _tables():
        root = lake / name
        if not root.is_dir():
            continue
        for part in root.iterdir():
            trace_id = trace_id_of(part)
            if part.name.startswith(_KEY) and trace_id not in complete:
                shutil.rmtree(part, ignore_errors=True)
                removed.add(trace_id)
    root = lake / DERIVED
    if root.is_dir():
        for d in root.iterdir():
            for part in d.iterdir() if d.is_dir() else ():
                if part.name.startswith(_KEY) and trace_id_of(part) not in complete:
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
    compacted = _segment_traces_rows(lake)
    for trace_id in complete_trace_ids(lake):
        row = [compacted[trace_id]] if trace_id in compacted and not partition_file(
            lake, "traces", trace_id).exists() else _traces_row(lake, trace_id)
        if row:
            out[os.path.abspath(row[0]["path"])] = (row[0]["content_sha256"], trace_id)
    return out
