"""`tracelake compact --lake DIR`: every table's per-trace files merged into one, sorted by trace."""

from __future__ import annotations

from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..option_help import NO_WAIT_HELP
from ..terminal import say

NAME = "compact"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="merge the lake's per-trace files into a few large ones (sorted by trace)",
                       description="Merge every table's per-trace partitions into one Parquet file per table, "
                                   "sorted by trace_id, so queries stay fast and the file count small at "
                                   "thousands of traces (`tracelake run` does it by itself above 1,000 new traces).",
                       epilog="Example: tracelake compact --lake lake/")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)


def run(args) -> int:
    from ...lake.compact import compact as run_compaction
    from ..lake_access import is_lake

    if not is_lake(args.lake):
        return EXIT_USAGE
    s = run_compaction(args.lake)
    say(f"compacted {s.traces} traces ({s.loose} were loose, {s.segments_rewritten} segments rewritten): "
        f"{s.files_before:,} files -> {s.files_after:,} in {s.seconds:.1f} s")
    return EXIT_OK
