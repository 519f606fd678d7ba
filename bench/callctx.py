"""Calling-context build time vs. ingest time on the 281k-event PyTorch trace (issue #7: within 2x; #16: half)."""

from __future__ import annotations

from tracelake.analysis import callctx_build
from tracelake.ingest.dispatch import ingest_file

from .common import SHARED, best_of
from .kineto_ingest import REFERENCE


def run() -> list[tuple[str, str]]:
    path = str(SHARED / REFERENCE)
    result = ingest_file(path)
    t_ingest = best_of(lambda: ingest_file(path))
    t_build = best_of(lambda: callctx_build.build(result.tables))
    nodes = callctx_build.build(result.tables)["callctx_nodes"].num_rows
    return [
        ("Calling-context build, 281k-event trace", f"{t_build:.2f} s ({nodes:,} nodes in both trees)"),
        ("  ingest of the same trace (decode + tables)", f"{t_ingest:.2f} s"),
        ("  build / ingest (target <= 0.5)", f"{t_build / t_ingest:.2f}"),
    ]
