"""Materialized views served from their derived partitions: in a lake's database each one is a
scan of <lake>/derived/<view>@<fingerprint>/ (lake/derive.py writes them) with the view's own
columns and types, instead of the view's SQL."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from . import catalog, layout, scan


def with_partitions(lake: Path) -> list[str]:
    """The materialized views that have partitions in the lake (all of them, once derived)."""
    return [view for view, fp in catalog.materialized().items() if layout.has_derived(lake, view, fp)]


def serve(con, lake: Path, views: list[str], placed: bool = False) -> None:
    """Replace each of `views` (materialized, with partitions: `with_partitions`) on `con`
    (installed over empty base tables) by a scan of its partitions, same columns and types
    (lake/scan.py); the others (an empty lake) stay as they are. placed: `con` already
    has every view's placeholder (`place`)."""
    fingerprints = catalog.materialized()
    if not placed:
        place(con, views)
    for view in views:
        # no union_by_name: the files of one fingerprint have one schema, and unifying schemas
        # opens every file, which defeats the pruning of partitions by trace_id (0.3 s per 1,000 traces)
        scan.point(con, view, lake, layout.derived_folder(view, fingerprints[view]))


def place(con, views: Iterable[str] | None = None) -> None:
    """Make each materialized view (all by default) a scan of no files yet, with the view's columns
    and types: `serve` points it at the partitions. Binding the views for their types takes most
    of a database build's time, so the catalog template caches this step (lake/database.py)."""
    for view in catalog.materialized() if views is None else views:
        cols = [c[:2] for c in con.execute(f"DESCRIBE {view}").fetchall()]
        empty = "SELECT " + ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in cols) + " WHERE false"
        scan.placeholder(con, view, typed_select(cols), empty)


def typed_select(columns: list[tuple[str, str]]) -> str:
    """The select list that reads a derived partition as its view: each (column, type) cast back to
    the view's type (Parquet keeps no HUGEINT, ...), trace_id as the partitions' folders give it."""
    return ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' if c != "trace_id" else "trace_id" for c, t in columns)
