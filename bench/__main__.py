"""python -m bench [case ...]: run benchmark cases; each stores bench/results/<case>.json and
bench/RESULTS.md is re-rendered from all stored cases (so one case can be re-run alone) and the
hand-written notes (NOTES); tests/test_generated_docs.py checks that it is."""

from __future__ import annotations

import datetime as dt
import json
import sys

from tracelake.jobs.process_settings import prefer_jemalloc

from .common import REPO, machine

CASES = ["pytorch_ingest", "nsys_ingest", "callctx", "critical_path", "views", "run", "memory_views", "operators",
         "cli", "scale", "report_pages", "section_shares", "big_input", "big_run", "tracelens", "floors", "no_work_twice"]
# Cases measured on the GPU machine, whose results are stored by hand (each script says how): rendered
# with the others, never run by `python -m bench`.
ELSEWHERE = ["nsys_stats_vs_tracelake", "big_input_16_cores"]
# Hand-written Markdown kept after the cases (bench/results/<name>.md): measurements made by hand
# (judgments) and what was measured on the way to the current numbers (history, moved out of docs/).
NOTES = ["judgments", "history"]
RESULTS = REPO / "bench" / "results"


def render() -> str:
    out = ["# Benchmark results\n\nWritten by `make bench` (`python -m bench [case ...]`). Ratios compare "
           "measurements taken in the same run, on the same machine.\n"]
    for name in CASES + ELSEWHERE:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            continue
        data = json.loads(path.read_text())
        out.append(f"\n## {name}\n\n{data['date']}, {data['machine']}\n\n")
        if "text" in data:  # a case stored with its own table and notes (Markdown)
            out.append(data["text"].rstrip("\n") + "\n")
            continue
        out.append("| measurement | value |\n|---|---|\n")
        out.extend(f"| {label} | {value} |\n" for label, value in data["rows"])
    for name in NOTES:
        path = RESULTS / f"{name}.md"
        if path.exists():
            out.append("\n" + path.read_text(encoding="utf-8").rstrip("\n") + "\n")
    return "".join(out)


def main(argv: list[str]) -> int:
    if {"-h", "--help"} & set(argv) or set(argv) - set(CASES):
        print(f"{__doc__}\ncases: {' '.join(CASES)}")
        return 0 if {"-h", "--help"} & set(argv) else 2
    prefer_jemalloc()  # as the CLI does at start-up, before the cases import pyarrow
    from . import (
        big_input,
        big_run,
        callctx,
        cli,
        critical_path,
        floors,
        kineto_ingest,
        memory_views,
        no_work_twice,
        nsys_ingest,
        operators,
        report_pages,
        run,
        scale,
        section_shares,
        tracelens,
        views,
    )

    runners = {"pytorch_ingest": kineto_ingest.run, "nsys_ingest": nsys_ingest.run, "callctx": callctx.run,
               "critical_path": critical_path.run, "views": views.run, "run": run.run,
               "memory_views": memory_views.run, "operators": operators.run, "cli": cli.run, "scale": scale.run,
               "report_pages": report_pages.run, "section_shares": section_shares.run, "big_input": big_input.run,
               "big_run": big_run.run, "tracelens": tracelens.run, "floors": floors.run,
               "no_work_twice": no_work_twice.run}
    RESULTS.mkdir(exist_ok=True)
    for name in argv or CASES:
        print(f"running {name} ...", flush=True)
        rows = runners[name]()
        for label, value in rows:
            print(f"  {label}: {value}", flush=True)
        (RESULTS / f"{name}.json").write_text(json.dumps(
            {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(), "rows": rows},
            indent=1))
    (REPO / "bench" / "RESULTS.md").write_text(render())
    print("written bench/RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
