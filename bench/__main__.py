"""python -m bench [case ...]: run the benchmarks and write bench/RESULTS.md."""

from __future__ import annotations

import datetime as dt
import sys

from . import kineto_ingest, nsys_ingest
from .common import REPO, machine

CASES = {"kineto_ingest": kineto_ingest.run, "nsys_ingest": nsys_ingest.run}


def main(argv: list[str]) -> int:
    names = argv or list(CASES)
    lines = [f"# Benchmark results\n\n{dt.date.today()}: {machine()}\n\n| measurement | value |\n|---|---|\n"]
    for name in names:
        print(f"running {name} ...", flush=True)
        for label, value in CASES[name]():
            print(f"  {label}: {value}", flush=True)
            lines.append(f"| {label} | {value} |\n")
    (REPO / "bench" / "RESULTS.md").write_text("".join(lines))
    print("written bench/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
