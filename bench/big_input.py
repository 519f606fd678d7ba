"""Big inputs within a memory budget (issue #32, class 6): a PyTorch trace of about 1 GB of JSON made
of back-to-back copies of the 89 MB reference trace (timestamps shifted by its span; correlation,
External id, Python ids and flow ids offset per copy, so that no copy links to another's events),
written uncompressed under a temporary folder (never in the repository), then ingested in child
processes: `tracelake ingest` (a new lake: decode, tables, calling context, critical path) on one
core and on all (the decode's worker processes: ingest/kineto/parallel.py), and
`tracelake run --jobs 1` (the same plus every materialized view derived, the trace's page and the
index), without a memory budget and with `--max-memory 3G`. Each is
measured for wall time and the peak RSS of its largest process (ru_maxrss of the waited children:
the CLI process, or a pool worker; the decode's workers come from a fork server and are not
counted: each holds one 16 MB range at a time, about 215 MiB at its peak)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from .common import REPO

REFERENCE = REPO.parent / "shared" / "traces" / "pytorch" / "torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz"
COPIES = 12  # 89 MB x 12: 1.0 GB of JSON
MAX_MEMORY = "3G"  # `--max-memory` of the second run
_ID_ARGS = ("correlation", "External id", "Python id", "Python parent id", "Ev Idx")


def big_trace(out: Path, copies: int = COPIES) -> tuple[int, int]:
    """Write the big trace; returns (bytes, events)."""
    doc = msgspec.json.decode(gzip.decompress(REFERENCE.read_bytes()))
    events = doc["traceEvents"]
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed) + 1000
    step = 1 + max([e["id"] for e in events if isinstance(e.get("id"), int)]
                   + [a[k] for e in events if isinstance(a := e.get("args"), dict) for k in _ID_ARGS
                      if isinstance(a.get(k), int)])
    out_events = []
    for i in range(copies):
        for e in events:
            if i:
                e = dict(e)
                if isinstance(e.get("ts"), (int, float)):
                    e["ts"] = round(e["ts"] + i * span, 3)
                if isinstance(e.get("id"), int):
                    e["id"] += i * step
                if isinstance(e.get("args"), dict):
                    e["args"] = {k: v + i * step if k in _ID_ARGS and isinstance(v, int) and v >= 0 else v
                                 for k, v in e["args"].items()}
            out_events.append(e)
    doc["traceEvents"] = out_events
    data = msgspec.json.encode(doc)
    out.write_bytes(data)
    return len(data), len(out_events)


def measured(cmd: list[str]) -> tuple[float, int, int]:
    """(seconds, peak RSS in MiB of its largest process, exit code), `cmd` run in a fresh child
    that reports its own children's ru_maxrss."""
    probe = ("import resource, subprocess, sys, time; t = time.perf_counter(); rc = subprocess.run(sys.argv[1:], "
             "stdout=subprocess.DEVNULL).returncode; print(time.perf_counter() - t, "
             "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, rc)")
    out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def run() -> list[tuple[str, str]]:
    exe = str(Path(sys.executable).with_name("tracelake"))
    with tempfile.TemporaryDirectory(prefix="tracelake-big-") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        (tmp / "traces").mkdir()
        size, events = big_trace(tmp / "traces" / "big.pt.trace.json")
        made = time.perf_counter() - t0
        rows = [("input", f"{size / 1e9:.2f} GB of JSON, {events:,} events ({COPIES} copies of the 89 MB trace; "
                          f"made in {made:.0f} s)")]
        for cores in (1, os.cpu_count() or 1):
            s, rss, rc = measured(["env", f"TRACELAKE_CORES={cores}", exe, "ingest", str(tmp / "traces"),
                                   "--lake", str(tmp / f"ingest-{cores}" / "lake"), "-q"])
            rows.append((f"tracelake ingest on {cores} core{'s' * (cores > 1)} (new lake, not derived)",
                         f"{s:.1f} s ({size / 1e6 / s:.0f} MB/s), peak RSS {rss:,} MiB, exit {rc}"))
        for budget in (None, MAX_MEMORY):
            out = tmp / f"run-{budget or 'unlimited'}"
            s, rss, rc = measured([exe, "run", str(tmp / "traces"), "--out", str(out), "--jobs", "1", "-q"]
                                  + (["--max-memory", budget] if budget else []))
            page = next((out / "reports" / "traces").glob("*.html"), None)
            rows.append((f"tracelake run --jobs 1{f' --max-memory {budget}' if budget else ''} (ingest, derive, "
                         "the page and the index)",
                         f"{s:.1f} s, peak RSS {rss:,} MiB, exit {rc}; page "
                         f"{f'{page.stat().st_size / 1e6:.1f} MB' if page else 'missing'}"))
    return rows
