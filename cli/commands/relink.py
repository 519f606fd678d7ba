"""`tracelake relink --lake DIR`: the lake's database built again (its views hold the lake's path)."""

from __future__ import annotations

import os

from ..exit_codes import EXIT_OK, EXIT_USAGE
from ..option_help import NO_WAIT_HELP
from ..terminal import say

NAME = "relink"


def add_parser(sub) -> None:
    s = sub.add_parser(NAME, help="rebuild a lake's tracelake.duckdb (after moving the lake folder)",
                       description="Rebuild the lake's database (its views hold the lake's absolute path).",
                       epilog="Example: tracelake relink --lake /new/place/lake")
    s.add_argument("--lake", required=True, metavar="DIR")
    s.add_argument("--no-wait", action="store_true", help=NO_WAIT_HELP)


def run(args) -> int:
    from ...jobs.derive_job import ensure_derived
    from ...lake.database import build_database
    from ..lake_access import is_lake

    if not is_lake(args.lake):
        return EXIT_USAGE
    warnings = ensure_derived(args.lake, None, jobs=os.cpu_count() or 1)  # every view, what a changed one lacks
    db = build_database(args.lake)
    for warning in warnings:
        say(f"warning  {warning}", err=True)
    say(str(db))
    return EXIT_OK
