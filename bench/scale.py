"""Bench case `scale`: SQL over a 1,000- and a 10,000-trace lake (issue #16, item 1).

How the lake is made: `tracelake run tests/data --no-reports` ingests and derives the 4 demo traces
(3 PyTorch, 1 Nsight) once; each further trace is a copy of one of them under a new trace id, made
by hard-linking its partitions (base tables and derived tables) into trace_id=<demo id>-c<n>
folders: real data, no ingest or derivation per copy (about 60 links and 60 folders per trace).
The lake grows from 1,000 to 10,000 traces, and each size is timed in fresh processes as users
run them: opening the database (current), `tracelake relink`, every view with `WHERE trace_id = X`
(in one process after opening; each query's own time), whole-lake kernel_summary top-10 and
findings counted by rule, and `tracelake sql` of one per-trace query as a whole CLI process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import REPO, run_measured

SIZES = (1000, 10000)
TRACELAKE = str(Path(sys.executable).with_name("tracelake"))

WHOLE_LAKE = {
    "kernel_summary top-10": "SELECT name, sum(total_ns) AS total_ns FROM kernel_summary GROUP BY name "
                             "ORDER BY total_ns DESC LIMIT 10",
    "findings by rule": "SELECT rule, count(*) FROM findings GROUP BY rule ORDER BY 2 DESC",
}


def _partitions(lake: Path, trace_id: str) -> list[Path]:
    """Every partition folder of a trace: base tables and derived tables."""
    key = f"trace_id={trace_id}"
    roots = [p for p in lake.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != "derived"]
    roots += [p for p in (lake / "derived").iterdir() if p.is_dir()]
    return [r / key for r in roots if (r / key).is_dir()]


def grow(lake: Path, demo: list[str], start: int, stop: int) -> None:
    """Copies start..stop-1 (round robin over the demo traces), hard-linked."""
    parts = {t: _partitions(lake, t) for t in demo}
    for n in range(start, stop):
        t = demo[n % len(demo)]
        new = f"{t}-c{n:05d}"
        for part in parts[t]:
            dst = part.with_name(f"trace_id={new}")
            dst.mkdir()
            for f in part.iterdir():
                os.link(f, dst / f.name)


def file_count(lake: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(lake))


def _time_cli(args: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run([TRACELAKE, *args], check=True, capture_output=True, cwd=REPO)
    return time.perf_counter() - t0


def _queries(lake: Path, trace_id: str) -> dict:
    code = f"""
import time
t0 = time.perf_counter()
from tracelake.analysis.database import connect
con = connect({str(lake)!r})
con.execute("SET enable_progress_bar = false")
open_s = time.perf_counter() - t0
views = [r[0] for r in con.execute(
    "SELECT view_name FROM duckdb_views() WHERE NOT internal AND sql ILIKE '%trace_id%' ORDER BY view_name").fetchall()]
per_trace = {{}}
for v in views:
    if 'trace_id' not in [c[0] for c in con.execute(f"DESCRIBE {{v}}").fetchall()]:
        continue
    t = time.perf_counter()
    con.execute(f"SELECT * FROM {{v}} WHERE trace_id = ?", [{trace_id!r}]).to_arrow_table()
    per_trace[v] = time.perf_counter() - t
whole = {{}}
for label, q in {WHOLE_LAKE!r}.items():
    t = time.perf_counter()
    con.execute(q).fetchall()
    whole[label] = time.perf_counter() - t
result = {{"open_s": open_s, "per_trace": per_trace, "whole": whole}}
"""
    return run_measured(code)


def measure(lake: Path, n: int, trace_id: str) -> dict:
    relink_s = _time_cli(["relink", "--lake", str(lake)])
    q = _queries(lake, trace_id)
    cli_s = _time_cli(["sql", "--lake", str(lake), f"SELECT * FROM findings WHERE trace_id = '{trace_id}'"])
    return {"traces": n, "files": file_count(lake), "relink_s": relink_s, "cli_findings_s": cli_s, **q}


def run() -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory(prefix="tracelake-scale-") as tmp:
        out = Path(tmp) / "out"
        t0 = time.perf_counter()
        subprocess.run([TRACELAKE, "run", str(REPO / "tests" / "data"), "--out", str(out), "--no-reports", "--quiet"],
                       check=True, capture_output=True, cwd=REPO)
        ingest_s = time.perf_counter() - t0
        lake = out / "lake"
        demo = sorted(p.name.removeprefix("trace_id=") for p in (lake / "traces").iterdir())
        results, built = [], len(demo)
        grow_s = 0.0
        for size in SIZES:
            t0 = time.perf_counter()
            grow(lake, demo, built, size)
            grow_s += time.perf_counter() - t0
            built = size
            results.append(measure(lake, size, demo[0]))
        shutil.rmtree(out, ignore_errors=True)
    return rows(results, ingest_s, grow_s)


def rows(results: list[dict], ingest_s: float, grow_s: float) -> list[tuple[str, str]]:
    small, big = results[0], results[-1]
    out = [("lake build", f"4 demo traces run (ingest + derive) {ingest_s:.1f} s; hard-linked copies to "
                          f"{big['traces']:,} traces {grow_s:.1f} s")]
    for r in results:
        n = f"{r['traces']:,} traces"
        worst = max(r["per_trace"], key=r["per_trace"].get)
        out += [
            (f"{n}: files in the lake", f"{r['files']:,}"),
            (f"{n}: open database (fresh process, current)", f"{r['open_s']:.2f} s"),
            (f"{n}: `tracelake relink` (CLI process)", f"{r['relink_s']:.2f} s"),
            (f"{n}: every view WHERE trace_id = X ({len(r['per_trace'])} views)",
             f"slowest {worst} {r['per_trace'][worst]:.2f} s; sum {sum(r['per_trace'].values()):.2f} s"),
            (f"{n}: `tracelake sql` findings of one trace (CLI process)", f"{r['cli_findings_s']:.2f} s"),
        ]
        out += [(f"{n}: whole lake {label}", f"{s:.2f} s") for label, s in r["whole"].items()]
    ratios = {v: big["per_trace"][v] / max(small["per_trace"][v], 1e-9) for v in big["per_trace"]}
    worst = max(ratios, key=ratios.get)
    out += [
        ("per-trace query time 10k / 1k", f"median {sorted(ratios.values())[len(ratios) // 2]:.2f}x; "
                                          f"worst {worst} {ratios[worst]:.2f}x"),
        ("whole-lake time 10k / 1k (10x the data)",
         "; ".join(f"{k} {big['whole'][k] / small['whole'][k]:.1f}x" for k in big["whole"])),
        ("per-view times (s) at 10k", ", ".join(f"{v} {s:.3f}" for v, s in sorted(big["per_trace"].items(),
                                                                                    key=lambda kv: -kv[1]))),
    ]
    return out
