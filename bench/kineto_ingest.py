"""PyTorch trace ingest vs. its floor and vs. HTA, plus linear scaling (issue #3).

- ours:  tracelake ingest of one file into a lake (decode, tables, Parquet), best of 3. It inflates
         the next 4 MB of gzip on a helper thread while decoding (ISA-L releases the GIL), so it
         is also measured with that off (all on one thread, like the floor).
- floor: gunzip (ISA-L, the fastest measured) + decoding the JSON into typed records of the
         fields tracelake keeps, in one msgspec pass (the fastest parser measured), best of 3.
- HTA:   TraceAnalysis(trace_dir) parse in HTA's own virtualenv, one run (it takes long).
- memory: peak RSS of a fresh process doing only that work.
- scaling: N copies of the trace's events concatenated (timestamps shifted by the span) -> µs per event.
"""

from __future__ import annotations

import gzip
import shutil
import tempfile
from pathlib import Path

import msgspec
from isal import isal_zlib
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.kineto import args as kineto_args
from tracelake.ingest.kineto import text as kineto_text
from tracelake.lake.version import __version__
from tracelake.lake.writer import write_trace

from .common import HTA_PYTHON, SHARED, best_of, run_measured

REFERENCE = "traces/pytorch/torch-2.11_gpt2-train-12steps-stacks_h200_large.pt.trace.json.gz"


def _floor_decoder() -> msgspec.json.Decoder:
    arg_fields = {}
    for struct in (kineto_args.GpuArgs, kineto_args.CpuOpArgs, kineto_args.PythonArgs, kineto_args.MemoryArgs):
        for f in msgspec.structs.fields(struct):
            arg_fields.setdefault(f.encode_name, (f"a{len(arg_fields)}", f.type,
                                                  msgspec.field(name=f.encode_name, default=f.default)))
    args = msgspec.defstruct("FloorArgs", list(arg_fields.values()))
    raw = msgspec.Raw
    event = msgspec.defstruct("FloorEvent", [
        ("ph", str | None, None), ("cat", str | None, None), ("name", str | None, None),
        ("pid", int | str | None, None), ("tid", int | str | None, None), ("ts", raw, raw(b"")),
        ("dur", raw, raw(b"")), ("id", int | None, None), ("args", args | None, None)], gc=False)
    doc = msgspec.defstruct("FloorDoc", [("traceEvents", list[event])])
    return msgspec.json.Decoder(doc)


def floor(path: Path) -> None:
    _floor_decoder().decode(isal_zlib.decompress(path.read_bytes(), 31))


def ours(path: Path, lake: Path) -> int:
    result = ingest_file(str(path))
    write_trace(lake, result.trace_id, result.tables, tracelake_version=__version__)
    return result.event_count


def ours_one_thread(path: Path, lake: Path) -> int:
    kineto_text.INFLATE_AHEAD = False
    try:
        return ours(path, lake)
    finally:
        kineto_text.INFLATE_AHEAD = True


def scaled_copy(path: Path, copies: int, out: Path) -> int:
    """A trace whose events are `copies` back-to-back copies of the original's (ts shifted)."""
    data = gzip.decompress(path.read_bytes())
    doc = msgspec.json.decode(data)
    events = doc["traceEvents"]
    xs = [e for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(e["ts"] + e.get("dur", 0) for e in xs) - min(e["ts"] for e in xs) + 1000
    out_events = []
    for i in range(copies):
        for e in events:
            if isinstance(e.get("ts"), (int, float)):
                e = dict(e, ts=round(e["ts"] + i * span, 3))
            out_events.append(e)
    doc["traceEvents"] = out_events
    out.write_bytes(msgspec.json.encode(doc))
    return len(out_events)


def run() -> list[tuple[str, str]]:
    path = SHARED / REFERENCE
    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="tracelake-bench-"))
    try:
        t_floor = best_of(lambda: floor(path))
        t_ours = best_of(lambda: ours(path, tmp / "lake"))
        rows.append(("PyTorch ingest, 89 MB / 281k-event trace: tracelake", f"{t_ours:.2f} s"))
        rows.append(("  floor (ISA-L gunzip + typed msgspec decode of kept fields)", f"{t_floor:.2f} s"))
        rows.append(("  tracelake / floor (target <= 2.0)", f"{t_ours / t_floor:.2f}"))
        t_one = best_of(lambda: ours_one_thread(path, tmp / "lake"))
        rows.append(("  tracelake with gunzip on the same thread (no helper thread); / floor",
                     f"{t_one:.2f} s; {t_one / t_floor:.2f}"))
        mem_ours = run_measured(
            "from bench.kineto_ingest import ours\nfrom pathlib import Path\nimport tempfile\n"
            f"result = {{'events': ours(Path({str(path)!r}), Path(tempfile.mkdtemp()))}}")
        rows.append(("  tracelake peak RSS", f"{mem_ours['peak_rss_mib']:.0f} MiB"))
        if HTA_PYTHON.exists():
            hta = run_measured(
                "import os, tempfile, time, logging\nlogging.disable(logging.CRITICAL)\n"
                "from hta.trace_analysis import TraceAnalysis\n"
                f"d = tempfile.mkdtemp(); os.symlink({str(path)!r}, os.path.join(d, 'rank0.json.gz'))\n"
                "t0 = time.perf_counter()\n"
                "try:\n    TraceAnalysis(trace_dir=d); status = 'ok'\n"
                "except Exception as e:\n    status = f'crashed: {type(e).__name__}'\n"
                "result = {'seconds': time.perf_counter() - t0, 'status': status}", python=str(HTA_PYTHON))
            rows.append((f"  HTA TraceAnalysis parse ({hta['status']})", f"{hta['seconds']:.2f} s"))
            rows.append(("  HTA / tracelake (target >= 10)", f"{hta['seconds'] / t_ours:.1f}"))
            rows.append(("  HTA / tracelake with no helper thread", f"{hta['seconds'] / t_one:.1f}"))
            rows.append(("  HTA peak RSS", f"{hta['peak_rss_mib']:.0f} MiB"))
        else:
            rows.append(("  HTA", f"not measured: no {HTA_PYTHON}"))
        per_event = []
        for copies in (1, 2, 5, 10):
            big = tmp / f"x{copies}.json"
            n = scaled_copy(path, copies, big)
            t = best_of(lambda big=big: ours(big, tmp / "lake"), repeat=1 if copies > 2 else 2)
            per_event.append(t / n * 1e6)
            big.unlink()
        rows.append(("  scaling, µs per event at 1x / 2x / 5x / 10x copies",
                     " / ".join(f"{x:.2f}" for x in per_event)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
