"""Bench case `scale`: SQL over a 1,000- and a 10,000-trace lake (issue #16, item 1).

How the lake is made (real data, no ingest or derivation per copy):
1. `tracelake run tests/data --no-reports` ingests and derives the 4 demo traces (3 PyTorch, 1 Nsight).
2. 1,000 traces: each further trace is a copy of a demo trace under a new id (`<demo id>-c<n>`),
   made by hard-linking its partitions (base and derived tables), as `tracelake run` would leave
   them: about 84 loose files per trace. Measured as such ("1k loose"), then `tracelake compact`
   (a CLI process) merges them ("1k compacted").
3. 10,000 traces: 8,900 more copies written directly as one compacted segment per table (the
   demo traces' rows with the copies' ids, sorted by trace_id: what `tracelake compact` writes;
   linking 750k files and compacting them again would take most of the 10-minute budget on a
   2-core disk), plus 100 hard-linked loose copies read beside the segments, as after a later run.
Each state is timed in fresh processes as users run them: opening the database (current),
`tracelake relink`, every view with `WHERE trace_id = X` (one process; each query's own time),
whole-lake kernel_summary top-10 and findings counted by rule, and `tracelake sql` of one
trace's findings as a whole CLI process.
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

TRACELAKE = str(Path(sys.executable).with_name("tracelake"))
LOOSE_AT_10K = 100

WHOLE_LAKE = {
    "kernel_summary top-10": "SELECT name, sum(total_ns) AS total_ns FROM kernel_summary GROUP BY name "
                             "ORDER BY total_ns DESC LIMIT 10",
    "findings by rule": "SELECT rule, count(*) FROM findings GROUP BY rule ORDER BY 2 DESC",
}


def _folders(lake: Path) -> list[str]:
    """Every folder with per-trace partitions: base tables and derived tables."""
    from tracelake.lake import layout, materialize
    from tracelake.lake.schema import TABLES

    return list(TABLES) + [layout.derived_folder(v, fp) for v, fp in materialize.view_fingerprints().items()]


def _copy_id(demo: list[str], n: int) -> str:
    return f"{demo[n % len(demo)]}-c{n:05d}"


def link_copies(lake: Path, pristine: Path, demo: list[str], numbers: range) -> None:
    """Copies `numbers` (round robin over the demo traces) as loose partitions, hard-linked from
    the demo traces' partitions kept in `pristine` (a lake folder of just them)."""
    from tracelake.lake import layout

    folders = _folders(lake)
    for n in numbers:
        src_id, new = demo[n % len(demo)], _copy_id(demo, n)
        for folder in folders:
            src = layout.loose_file(pristine, folder, src_id)
            if src.exists():
                dst = layout.loose_file(lake, folder, new)
                dst.parent.mkdir(parents=True)
                os.link(src, dst)


def write_copies_segment(lake: Path, pristine: Path, demo: list[str], numbers: range) -> None:
    """Copies `numbers` written as one compacted segment (what `tracelake compact` writes for them:
    one file per folder, rows sorted by trace_id, row groups of 16,384 rows), with pyarrow: each
    copy's rows are its demo trace's rows under the copy's id, so they come out in order without a
    sort, a few copies at a time (a row group's worth), so memory stays small."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tracelake.lake import layout
    from tracelake.lake.compact import ROW_GROUP_ROWS

    seg = f"bench-{numbers.start:05d}-{numbers.stop:05d}"
    staging = lake / layout.STAGING / f"bench.{seg}"
    ids = sorted((_copy_id(demo, n), demo[n % len(demo)]) for n in numbers)
    dirs = {}
    for folder in _folders(lake):
        files = {t: f for t in demo if (f := layout.loose_file(pristine, folder, t)).exists()}
        if not files:
            continue
        tables = {t: pq.read_table(f) for t, f in files.items()}
        tables = {t: (tb.drop_columns(["trace_id"]) if "trace_id" in tb.column_names else tb) for t, tb in tables.items()}
        schema = next(iter(tables.values())).schema.append(pa.field("trace_id", pa.string()))
        staged = layout.staged_segment_file(staging, folder, seg)
        staged.parent.mkdir(parents=True, exist_ok=True)
        with pq.ParquetWriter(staged, schema, compression="zstd") as writer:
            for src in sorted(tables):  # the copies' ids sort by their demo trace's id first, then n
                tb, copies = tables[src], [new for new, s in ids if s == src]
                if tb.num_rows == 0 or not copies:
                    continue
                per_block = max(1, -(-ROW_GROUP_ROWS // tb.num_rows))  # whole row groups, bounded memory
                for i in range(0, len(copies), per_block):
                    some = copies[i : i + per_block]
                    block = pa.concat_tables([tb] * len(some)).append_column(
                        "trace_id", pa.array(np.repeat(np.array(some, dtype=object), tb.num_rows), pa.string()))
                    writer.write_table(block.cast(schema), row_group_size=ROW_GROUP_ROWS)
        dirs[folder] = [new for new, src in ids if src not in files]
        layout.place_segment_file(lake, staging, folder, seg)
    layout.discard_staging(staging)
    m = layout.manifest(lake)
    m["segments"][seg] = {"traces": [new for new, _ in ids], "dirs": dirs}
    m["generation"] = seg
    layout.write_manifest(lake, m)


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
from tracelake.lake.database import connect
con = connect({str(lake)!r})
con.execute("SET enable_progress_bar = false")
open_s = time.perf_counter() - t0
names = [r[0] for r in con.execute(
    "SELECT table_name FROM information_schema.columns WHERE column_name = 'trace_id' "
    "AND NOT starts_with(table_name, '_') GROUP BY 1 ORDER BY 1").fetchall()]
per_trace, rows = {{}}, 0
for v in names:
    t = time.perf_counter()
    rows += con.execute(f"SELECT * FROM {{v}} WHERE trace_id = ?", [{trace_id!r}]).to_arrow_table().num_rows
    per_trace[v] = time.perf_counter() - t
whole = {{}}
for label, q in {WHOLE_LAKE!r}.items():
    t = time.perf_counter()
    con.execute(q).fetchall()
    whole[label] = time.perf_counter() - t
result = {{"open_s": open_s, "per_trace": per_trace, "rows": rows, "whole": whole}}
"""
    return run_measured(code)


def measure(lake: Path, label: str, n: int, trace_id: str) -> dict:
    relink_s = _time_cli(["relink", "--lake", str(lake)])
    q = _queries(lake, trace_id)
    cli_s = _time_cli(["sql", "--lake", str(lake), f"SELECT * FROM findings WHERE trace_id = '{trace_id}'"])
    return {"label": label, "traces": n, "files": file_count(lake), "relink_s": relink_s, "cli_findings_s": cli_s,
            **q}


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def run(n1: int = 1000, n2: int = 10000, loose: int = LOOSE_AT_10K) -> list[tuple[str, str]]:
    """TRACELAKE_SCALE="n1,n2,loose" sets the sizes (the 10k segment takes 10+ minutes to write on a
    loaded 2-core disk)."""
    from tracelake.lake import layout

    if os.environ.get("TRACELAKE_SCALE"):
        n1, n2, loose = (int(x) for x in os.environ["TRACELAKE_SCALE"].split(","))
    load_before = _load()
    with tempfile.TemporaryDirectory(prefix="tracelake-scale-") as tmp:
        out = Path(tmp) / "out"
        t0 = time.perf_counter()
        subprocess.run([TRACELAKE, "run", str(REPO / "tests" / "data"), "--out", str(out), "--no-reports", "--quiet"],
                       check=True, capture_output=True, cwd=REPO)
        build = {"demo run (ingest + derive, 4 traces)": time.perf_counter() - t0}
        lake = out / "lake"
        pristine = Path(tmp) / "pristine"  # the demo traces' partitions, linked before compaction moves them
        shutil.copytree(lake, pristine, copy_function=os.link, ignore=shutil.ignore_patterns("tracelake.duckdb"))
        demo = sorted(p.name.removeprefix("trace_id=") for p in (lake / "traces").iterdir())
        big = max(demo, key=lambda t: os.path.getsize(layout.loose_file(pristine, "api_calls", t)))
        probe = _copy_id(demo, len(demo) * (n1 // 10) + demo.index(big))  # a copy of the largest demo trace

        results = []
        t0 = time.perf_counter()
        link_copies(lake, pristine, demo, range(len(demo), n1))
        build[f"hard-link {n1 - len(demo):,} copies (loose)"] = time.perf_counter() - t0
        results.append(measure(lake, f"{n1:,} loose", n1, probe))
        t0 = time.perf_counter()
        subprocess.run([TRACELAKE, "compact", "--lake", str(lake)], check=True, capture_output=True, cwd=REPO)
        build[f"`tracelake compact` of {n1:,} loose traces (CLI)"] = time.perf_counter() - t0
        results.append(measure(lake, f"{n1:,} compacted", n1, probe))

        t0 = time.perf_counter()
        write_copies_segment(lake, pristine, demo, range(n1, n2 - loose))
        build[f"{n2 - loose - n1:,} copies written as a segment"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        link_copies(lake, pristine, demo, range(n2 - loose, n2))
        build[f"hard-link {loose} copies (loose)"] = time.perf_counter() - t0
        results.append(measure(lake, f"{n2:,} (2 segments + {loose} loose)", n2, probe))
        loose_probe = _copy_id(demo, n2 - loose + demo.index(big))
        loose_q = _queries(lake, loose_probe)
        shutil.rmtree(out, ignore_errors=True)
    return rows(results, build, loose_q, load_before, _load())


def _slowest(r: dict) -> str:
    worst = max(r["per_trace"], key=r["per_trace"].get)
    under = sum(1 for s in r["per_trace"].values() if s < 1.0)
    return (f"{under} of {len(r['per_trace'])} under 1 s; slowest {worst} {r['per_trace'][worst]:.2f} s; "
            f"sum {sum(r['per_trace'].values()):.1f} s")


def rows(results: list[dict], build: dict, loose_q: dict, load_before: str, load_after: str) -> list[tuple[str, str]]:
    out = [("1-minute load average before / after the case (2 cores)", f"{load_before} / {load_after}")]
    out += [(f"lake build: {k}", f"{v:.1f} s") for k, v in build.items()]
    for r in results:
        n = r["label"]
        out += [
            (f"{n}: files in the lake", f"{r['files']:,}"),
            (f"{n}: open database (fresh process, current)", f"{r['open_s']:.2f} s"),
            (f"{n}: `tracelake relink` (CLI process)", f"{r['relink_s']:.2f} s"),
            (f"{n}: every table and view WHERE trace_id = X", _slowest(r)),
            (f"{n}: `tracelake sql` findings of one trace (CLI process)", f"{r['cli_findings_s']:.2f} s"),
        ]
        out += [(f"{n}: whole lake {label}", f"{s:.2f} s") for label, s in r["whole"].items()]
    small, compacted, big = results
    out.append((f"{big['label']}: every table and view WHERE trace_id = <a loose trace>", _slowest(loose_q)))
    for a, b in ((small, compacted), (compacted, big)):
        name = f"{a['label']} -> {b['label']}"
        ratios = {v: b["per_trace"][v] / max(a["per_trace"][v], 1e-9) for v in b["per_trace"]}
        worst = max(ratios, key=ratios.get)
        out.append((f"per-trace query time {name}", f"median {sorted(ratios.values())[len(ratios) // 2]:.2f}x; "
                                                   f"worst {worst} {ratios[worst]:.2f}x; sum "
                                                   f"{sum(a['per_trace'].values()):.1f} s -> "
                                                   f"{sum(b['per_trace'].values()):.1f} s"))
    out.append((f"whole-lake time {compacted['label']} -> {big['label']} ({big['traces'] // compacted['traces']}x the data)",
                "; ".join(f"{k} {big['whole'][k] / compacted['whole'][k]:.1f}x" for k in big["whole"])))
    out.append((f"slowest per-trace views at {big['label']} (s)", ", ".join(
        f"{v} {s:.3f}" for v, s in sorted(big["per_trace"].items(), key=lambda kv: -kv[1])[:12])))
    return out
