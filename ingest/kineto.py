"""PyTorch profiler (Kineto) Chrome-trace JSON -> the unified tables of ingest.schema.

Handles both the current format (cat kernel, cuda_runtime, cuda_driver, cpu_op, gpu_memcpy, ...)
and the 2021 one (Kernel, Runtime, Operator, Memcpy; 'external id'; tid "stream 7"; a bare
array at top level). Times: exact integer ns from the number text (exact_time); with
baseTimeNanoseconds the trace clock is Kineto's relative one and clock_offset_ns = base.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

import msgspec
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from . import kineto_args as A
from .errors import TraceError
from .exact_time import us_to_ns
from .identity import content_sha256, make_trace_id
from .ingest_result import IngestResult, event_count, trace_span, traces_row
from .kineto_decode import Event, decode
from .names import (
    MEMCPY_OPERATION_BY_CODE,
    kernel_short_name,
    parse_memcpy_name,
    parse_memset_kind,
    parse_python_frames,
)
from .nesting import parent_and_depth
from .raw_text import JoinedTexts

# Kineto category (lower-cased) -> our table. Legacy 2021 names map onto the same tables.
CATEGORY_TABLE = {
    "kernel": "kernels",
    "gpu_memcpy": "memcpy", "memcpy": "memcpy",
    "gpu_memset": "memset", "memset": "memset",
    "cuda_runtime": "api_calls", "runtime": "api_calls", "cuda_driver": "api_calls",
    "xpu_runtime": "api_calls", "xpu_driver": "api_calls", "mtia_runtime": "api_calls",
    "privateuse1_runtime": "api_calls", "privateuse1_driver": "api_calls",
    "cpu_op": "cpu_ops", "operator": "cpu_ops",
    "user_annotation": "annotations", "gpu_user_annotation": "annotations",
    "python_function": "python_frames",
    "cuda_sync": "synchronizations",
}
SYNC_KIND = {
    "event_sync": "event_sync", "event sync": "event_sync", "stream_wait_event": "stream_wait",
    "stream wait event": "stream_wait", "stream_sync": "stream_sync", "stream sync": "stream_sync",
    "context_sync": "context_sync", "context sync": "context_sync",
}
_int, _float = A.to_int, A.to_float


def _ints(values) -> pa.Array:
    """pid/tid/id fields of events: ints, or strings like "stream 7" / "3340707648"."""
    values = list(values)
    try:
        return pa.array(values, type=pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([v if type(v) is int else _int(v) for v in values], type=pa.int64())


def _interval_columns(events: list[Event]) -> dict[str, pa.Array]:
    start = us_to_ns([e.ts for e in events])
    duration = us_to_ns([e.dur for e in events])
    frame = pl.DataFrame({"start_ns": start, "duration_ns": duration})
    frame = frame.with_columns(end_ns=pl.col("start_ns") + pl.col("duration_ns"))
    return {c: frame[c].to_arrow() for c in ("start_ns", "end_ns", "duration_ns")}


def _str_or_none(x: Any) -> str | None:
    return x if isinstance(x, str) else (None if x is None else str(x))


class _Builder:
    """Accumulates the tables of one Kineto trace."""

    def __init__(self, decoded):
        self.warnings = list(decoded.warnings)
        self.is_truncated = decoded.is_truncated
        self.by_table: dict[str, list[Event]] = defaultdict(list)
        self.flow_events: list[Event] = []
        self.memory_events: list[Event] = []
        self.counter_events: list[Event] = []
        self.meta_events: list[Event] = []

    # -- routing -------------------------------------------------------------------------------
    def route(self, events: list[Event]) -> None:
        """Sort events into per-table lists, with one dict lookup per event on (ph, cat)."""
        sinks: dict = {}
        for e in events:
            key = (e.ph, e.cat)
            sink = sinks.get(key)
            if sink is None:
                try:
                    sink = sinks[key] = self._sink(*key)
                except TypeError:  # unhashable cat (a list or dict): not an event we keep
                    continue
            if sink is not None:
                sink(e)

    def _sink(self, ph, cat):
        if ph == "X":
            table = CATEGORY_TABLE.get(cat.lower()) if isinstance(cat, str) else None
            return self.by_table[table].append if table else None
        if ph in ("s", "f"):
            return self.flow_events.append
        if ph in ("i", "I"):
            return self._instant
        if ph == "M":
            return self.meta_events.append
        if ph == "C":
            return self.counter_events.append
        return None

    def _instant(self, e: Event) -> None:
        if e.name == "[memory]":
            self.memory_events.append(e)

    # -- tables --------------------------------------------------------------------------------
    def gpu_table(self, name: str) -> pa.Table | None:
        events = self.by_table.pop(name, [])  # built once; its events are freed as we go
        if not events:
            return None
        args_text = JoinedTexts([e.args for e in events])
        args = A.decode_all(A.GpuArgs, args_text)
        cols: dict[str, Any] = _interval_columns(events)
        cols["device_id"] = [a.device if a.device is not None else _int(e.pid) for a, e in zip(args, events)]
        cols["context_id"] = [a.context for a in args]
        cols["stream_id"] = [a.stream if a.stream is not None else _int(e.tid) for a, e in zip(args, events)]
        cols["correlation_id"] = [a.correlation for a in args]
        cols["external_id"] = [a.external_id if a.external_id is not None else a.external_id_legacy for a in args]
        names = [_str_or_none(e.name) for e in events]
        cols["name"] = names
        if name == "kernels":
            cols["short_name"] = [kernel_short_name(n) for n in names]
            grids = [a.grid if isinstance(a.grid, list) and len(a.grid) == 3 else (None, None, None) for a in args]
            blocks = [a.block if isinstance(a.block, list) and len(a.block) == 3 else (None, None, None) for a in args]
            for i, axis in enumerate("xyz"):
                cols[f"grid_{axis}"] = [g[i] for g in grids]
                cols[f"block_{axis}"] = [b[i] for b in blocks]
            cols["registers_per_thread"] = [a.registers_per_thread for a in args]
            cols["shared_memory_bytes"] = [a.shared_memory for a in args]
            cols["blocks_per_sm"] = [a.blocks_per_sm for a in args]
            cols["warps_per_sm"] = [a.warps_per_sm for a in args]
            cols["est_achieved_occupancy_pct"] = [a.occupancy for a in args]
            cols["graph_id"] = [a.graph_id for a in args]
            cols["graph_node_id"] = [a.graph_node_id for a in args]
            cols["collective_name"] = [a.collective_name for a in args]
        elif name == "memcpy":
            parsed = [parse_memcpy_name(n) for n in names]
            cols["copy_kind"] = [p[0] for p in parsed]
            cols["operation"] = [MEMCPY_OPERATION_BY_CODE.get(p[0]) for p in parsed]
            cols["src_kind"] = [p[1] for p in parsed]
            cols["dst_kind"] = [p[2] for p in parsed]
            cols["bytes"] = [a.bytes for a in args]
        elif name == "memset":
            cols["mem_kind"] = [parse_memset_kind(n) for n in names]
            cols["bytes"] = [a.bytes for a in args]
        elif name == "synchronizations":
            cols["sync_type"] = [SYNC_KIND.get(str(a.cuda_sync_kind).lower(), "unknown") for a in args]
            cols["event_id"] = [a.event_id for a in args]
            del cols["name"]
        cols["args_json"] = args_text.column()
        return pa.table(cols)

    def api_calls(self) -> pa.Table | None:
        events = self.by_table.pop("api_calls", [])
        if not events:
            return None
        args_text = JoinedTexts([e.args for e in events])
        args = A.decode_all(A.GpuArgs, args_text)
        cols: dict[str, Any] = _interval_columns(events)
        cols["pid"] = _ints(e.pid for e in events)
        cols["tid"] = _ints(e.tid for e in events)
        cols["correlation_id"] = [a.correlation for a in args]
        cols["external_id"] = [a.external_id if a.external_id is not None else a.external_id_legacy for a in args]
        cols["name"] = [_str_or_none(e.name) for e in events]
        cols["api"] = ["driver" if str(e.cat).lower().endswith("driver") else "runtime" for e in events]
        cols["cbid"] = [a.cbid for a in args]
        cols["args_json"] = args_text.column()
        return pa.table(cols)

    def cpu_ops(self) -> pa.Table | None:
        events = self.by_table.pop("cpu_ops", [])
        if not events:
            return None
        args_text = JoinedTexts([e.args for e in events])
        args = A.decode_all(A.CpuOpArgs, args_text)
        cols: dict[str, Any] = {"op_id": list(range(len(events)))}
        cols.update(_interval_columns(events))
        cols["pid"] = _ints(e.pid for e in events)
        cols["tid"] = _ints(e.tid for e in events)
        cols["name"] = [_str_or_none(e.name) for e in events]
        cols["external_id"] = [a.external_id if a.external_id is not None else a.external_id_legacy for a in args]
        cols["sequence_number"] = [a.sequence_number for a in args]
        cols["fwd_thread_id"] = [a.fwd_thread_id for a in args]
        cols["call_stack"] = [a.call_stack or None for a in args]
        cols["flops"] = [a.flops for a in args]
        cols["args_json"] = args_text.column()
        return pa.table(cols)

    def annotations(self) -> pa.Table | None:
        events = self.by_table.pop("annotations", [])
        if not events:
            return None
        args_text = JoinedTexts([e.args for e in events])
        args = A.decode_all(A.AnnotationArgs, args_text)
        cols: dict[str, Any] = {"annotation_id": list(range(len(events)))}
        cols.update(_interval_columns(events))
        is_gpu = [str(e.cat).lower() == "gpu_user_annotation" for e in events]
        cols["pid"] = _ints(e.pid for e in events)
        cols["tid"] = _ints(e.tid for e in events)
        cols["name"] = [_str_or_none(e.name) for e in events]
        cols["kind"] = ["gpu_user_annotation" if g else "user_annotation" for g in is_gpu]
        cols["is_gpu"] = is_gpu
        cols["external_id"] = [a.external_id if a.external_id is not None else a.external_id_legacy for a in args]
        lanes = list(zip(cols["pid"].to_pylist(), cols["tid"].to_pylist(), is_gpu))
        cols["parent_id"], cols["depth"] = parent_and_depth(
            lanes, cols["start_ns"].to_pylist(), cols["end_ns"].to_pylist(), cols["annotation_id"]
        )
        cols["args_json"] = args_text.column()
        return pa.table(cols)

    def python_frames(self) -> pa.Table | None:
        events = self.by_table.pop("python_frames", [])
        if not events:
            return None
        args = A.decode_all(A.PythonArgs, JoinedTexts([e.args for e in events]))
        names = pl.Series("name", [_str_or_none(e.name) for e in events], pl.String)
        parsed = parse_python_frames(names)
        cols: dict[str, Any] = {
            "frame_id": [a.python_id for a in args],
            "parent_frame_id": [a.python_parent_id for a in args],
        }
        cols.update(_interval_columns(events))
        cols["pid"] = _ints(e.pid for e in events)
        cols["tid"] = _ints(e.tid for e in events)
        cols["name"] = names.to_arrow()
        for column in ("file", "line", "function", "frame_kind"):
            cols[column] = parsed[column].to_arrow()
        cols["module_id"] = [a.python_module_id for a in args]
        return pa.table(cols)

    def flows(self) -> pa.Table | None:
        flow_events, self.flow_events = self.flow_events, []
        if not flow_events:
            return None
        ends = {"s": "start", "f": "end"}
        frame = pl.DataFrame(
            {
                "side": [ends[e.ph] for e in flow_events],
                "kind": [_str_or_none(e.cat) for e in flow_events],
                "flow_id": _ints(e.id for e in flow_events),
                "ts_ns": us_to_ns([e.ts for e in flow_events]),
                "pid": _ints(e.pid for e in flow_events),
                "tid": _ints(e.tid for e in flow_events),
            },
            schema_overrides={"flow_id": pl.Int64, "pid": pl.Int64, "tid": pl.Int64},
        )
        side = {
            s: frame.filter(pl.col("side") == s)
            .unique(["kind", "flow_id"], keep="first", maintain_order=True)
            .select("kind", "flow_id", pl.col("ts_ns").alias(f"{s}_ts_ns"), pl.col("pid").alias(f"{s}_pid"),
                    pl.col("tid").alias(f"{s}_tid"))
            for s in ("start", "end")
        }
        joined = side["start"].join(side["end"], on=["kind", "flow_id"], how="full", coalesce=True, nulls_equal=True)
        return joined.to_arrow()

    def memory(self) -> pa.Table | None:
        events, self.memory_events = self.memory_events, []
        if not events:
            return None
        args = A.decode_all(A.MemoryArgs, JoinedTexts([e.args for e in events]))
        device_type = {0: "cpu", 1: "cuda"}
        return pa.table(
            {
                "ts_ns": us_to_ns([e.ts for e in events]),
                "pid": _ints(e.pid for e in events),
                "tid": _ints(e.tid for e in events),
                "device_type": [device_type.get(a.device_type, None if a.device_type is None else str(a.device_type))
                                for a in args],
                "device_id": [a.device_id for a in args],
                "address": [a.addr for a in args],
                "bytes": [a.bytes for a in args],
                "total_allocated_bytes": [a.total_allocated for a in args],
                "total_reserved_bytes": [a.total_reserved for a in args],
            }
        )

    def counters(self) -> pa.Table | None:
        rows = []
        for e in self.counter_events:
            try:
                values = msgspec.json.decode(bytes(e.args)) if bytes(e.args) else {}
            except msgspec.DecodeError:
                continue
            if isinstance(values, dict):
                for series, value in values.items():
                    rows.append((e.ts, _int(e.pid), f"{e.name}.{series}", _float(value)))
        if not rows:
            return None
        return pa.table(
            {
                "ts_ns": us_to_ns([r[0] for r in rows]),
                "pid": [r[1] for r in rows],
                "name": [r[2] for r in rows],
                "value": [r[3] for r in rows],
            }
        )

    def names(self) -> tuple[dict[int, str], dict[tuple[int, int], str]]:
        processes, threads = {}, {}
        for e in self.meta_events:
            try:
                value = msgspec.json.decode(bytes(e.args)).get("name") if bytes(e.args) else None
            except (msgspec.DecodeError, AttributeError):
                value = None
            pid, tid = _int(e.pid), _int(e.tid)
            if not isinstance(value, str) or pid is None:
                continue
            if e.name == "process_name":
                processes[pid] = value
            elif e.name == "thread_name" and tid is not None:
                threads[(pid, tid)] = value
        return processes, threads


def _attach_launcher(table: pa.Table | None, api: pa.Table | None, single_pid: int | None) -> pa.Table | None:
    """pid/tid of the API call that launched each GPU op (same correlation id)."""
    if table is None:
        return None
    frame = pl.from_arrow(table)
    if api is not None:
        launchers = (
            pl.from_arrow(api.select(["correlation_id", "pid", "tid"]))
            .drop_nulls("correlation_id")
            .unique("correlation_id", keep="first")
        )
        frame = frame.join(launchers, on="correlation_id", how="left")
    else:
        frame = frame.with_columns(pid=pl.lit(None, pl.Int64), tid=pl.lit(None, pl.Int64))
    if single_pid is not None:
        frame = frame.with_columns(pl.col("pid").fill_null(single_pid))
    return frame.to_arrow()


def _devices(metadata: dict, vendor: str) -> pa.Table | None:
    props = metadata.get("deviceProperties")
    if not isinstance(props, list) or not props:
        return None
    props = [p for p in props if isinstance(p, dict)]
    return pa.table(
        {
            "device_id": [_int(p.get("id")) for p in props],
            "name": [_str_or_none(p.get("name")) for p in props],
            "vendor": [vendor] * len(props),
            "compute_major": [_int(p.get("computeMajor")) for p in props],
            "compute_minor": [_int(p.get("computeMinor")) for p in props],
            "sm_count": [_int(p.get("numSms")) for p in props],
            "total_memory_bytes": [_int(p.get("totalGlobalMem")) for p in props],
            "properties_json": [msgspec.json.encode(p).decode() for p in props],
        }
    )


def ingest_kineto(path: str) -> IngestResult:
    decoded = decode(path)
    if not decoded.events:
        raise TraceError(path, "no trace events in the file")
    b = _Builder(decoded)
    b.route(decoded.events)
    decoded.events = []  # the per-table lists hold them now, and free them table by table
    md = decoded.metadata

    api = b.api_calls()
    cpu_pids = {p for p in (api.column("pid").to_pylist() if api is not None else []) if p is not None}
    ops = b.cpu_ops()
    if ops is not None:
        cpu_pids.update(p for p in pl.from_arrow(ops.column("pid")).unique().to_list() if p is not None)
    single_pid = next(iter(cpu_pids)) if len(cpu_pids) == 1 else None

    tables: dict[str, pa.Table | None] = {
        "kernels": _attach_launcher(b.gpu_table("kernels"), api, single_pid),
        "memcpy": _attach_launcher(b.gpu_table("memcpy"), api, single_pid),
        "memset": _attach_launcher(b.gpu_table("memset"), api, single_pid),
        "synchronizations": b.gpu_table("synchronizations"),
        "api_calls": api,
        "cpu_ops": ops,
        "annotations": b.annotations(),
        "python_frames": b.python_frames(),
        "flows": b.flows(),
        "memory_events": b.memory(),
        "counters": b.counters(),
    }
    dist = md.get("distributedInfo") if isinstance(md.get("distributedInfo"), dict) else {}
    rank = _int(dist.get("rank"))
    api_names = api.column("name").to_pylist()[:2000] if api is not None else []
    is_amd = "roctracer_version" in md or "hip_runtime_version" in md or any(
        n and n.startswith("hip") for n in api_names
    )
    tables["devices"] = _devices(md, "amd" if is_amd else "nvidia")

    process_names, thread_names = b.names()
    if tables["python_frames"] is not None:
        cpu_pids.update(p for p in pc.unique(tables["python_frames"].column("pid")).to_pylist() if p is not None)
    tables["processes"] = pa.table(
        {
            "pid": sorted(cpu_pids),
            "name": [process_names.get(p) for p in sorted(cpu_pids)],
            "rank": [rank] * len(cpu_pids),
        },
        schema=pa.schema([("pid", pa.int64()), ("name", pa.string()), ("rank", pa.int32())]),
    )
    lanes = set()
    for t in ("api_calls", "cpu_ops", "python_frames"):
        if tables[t] is not None:
            lanes.update(zip(tables[t].column("pid").to_pylist(), tables[t].column("tid").to_pylist()))
    lanes = sorted(x for x in lanes if x[0] is not None and x[1] is not None)
    tables["threads"] = pa.table(
        {"pid": [p for p, _ in lanes], "tid": [t for _, t in lanes], "name": [thread_names.get(x) for x in lanes]},
        schema=pa.schema([("pid", pa.int64()), ("tid", pa.int64()), ("name", pa.string())]),
    )

    # Negative durations are impossible and ts=0, dur=0 events are profiler placeholders
    # (pytorch#188481): keep those rows out and say so.
    placeholders = 0
    for name in ("kernels", "memcpy", "memset", "synchronizations", "api_calls", "cpu_ops", "annotations",
                 "python_frames"):
        t = tables[name]
        if t is None:
            continue
        negative = pc.less(t.column("duration_ns"), 0)
        placeholder = pc.and_(pc.equal(t.column("start_ns"), 0), pc.equal(t.column("duration_ns"), 0))
        n_negative, n_placeholder = pc.sum(negative).as_py() or 0, pc.sum(placeholder).as_py() or 0
        if n_negative or n_placeholder:
            tables[name] = t.filter(pc.invert(pc.or_kleene(negative, placeholder)).fill_null(True))
        if n_negative:
            b.warnings.append(f"dropped {n_negative} {name} rows with a negative duration")
        placeholders += n_placeholder
    if placeholders:
        b.warnings.append(f"dropped {placeholders} events with ts=0 and dur=0 (profiler placeholders)")

    start_ns, end_ns = trace_span(tables)
    base = _int(md.get("baseTimeNanoseconds"))
    if base is not None:
        clock_offset = base
    else:
        clock_offset = 0 if start_ns is not None and start_ns > 10**18 else None

    raw = decoded.raw_bytes
    sha = content_sha256(raw)
    trace_id = make_trace_id(path, sha)
    versions = [f"{k}={md[k]}" for k in ("cupti_version", "cuda_runtime_version", "cuda_driver_version",
                                          "roctracer_version", "hip_runtime_version") if k in md]
    metadata = {k: v for k, v in md.items() if k != "deviceProperties"}
    tables["traces"] = traces_row(
        source="pytorch",
        path=path,
        file_bytes=os.path.getsize(path),
        content_sha256=sha,
        tool="PyTorch Profiler (Kineto)",
        tool_version=", ".join(versions) or None,
        schema_version=_str_or_none(md.get("schemaVersion")),
        start_ns=start_ns,
        end_ns=end_ns,
        clock_offset_ns=clock_offset,
        rank=rank,
        world_size=_int(dist.get("world_size")),
        distributed_backend=_str_or_none(dist.get("backend")),
        is_truncated=b.is_truncated,
        warnings=b.warnings,
        metadata=metadata,
        event_count=event_count(tables),
    )
    return IngestResult(trace_id, {k: v for k, v in tables.items() if v is not None}, b.warnings)
