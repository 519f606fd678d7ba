"""One chunk of Kineto events -> rows of a unified table (a function per table).

Each function takes the events of one table from one decoded chunk (decode.py) and returns
an Arrow table of their rows. Row ids, nesting and flow pairing need every chunk and are left to
tables.ingest_kineto.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from ...lake.schema import TABLES
from ..exact_time import duration_us_to_ns, us_to_ns
from ..names import (
    MEMCPY_OPERATION_BY_CODE,
    kernel_short_name,
    parse_memcpy_name,
    parse_memset_kind,
)
from ..raw_text import JoinedTexts
from .args import AnnotationArgs, CpuOpArgs, GpuArgs, MemoryArgs, PythonArgs, decode_all, to_float, to_int
from .decode import Event

SYNC_KIND = {
    "event_sync": "event_sync", "event sync": "event_sync", "stream_wait_event": "stream_wait",
    "stream wait event": "stream_wait", "stream_sync": "stream_sync", "stream sync": "stream_sync",
    "context_sync": "context_sync", "context sync": "context_sync",
}
_int, _float = to_int, to_float


def _ints(values: list) -> pa.Array:
    """pid/tid/id fields of events: ints, or strings like "stream 7" / "3340707648"."""
    try:
        return pa.array(values, type=pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([v if type(v) is int else _int(v) for v in values], type=pa.int64())


def _interval_columns(events: list[Event]) -> dict[str, pa.Array]:
    start = us_to_ns([e.ts for e in events])
    duration = duration_us_to_ns([e.dur for e in events])
    return {"start_ns": start, "end_ns": pc.add(start, duration), "duration_ns": duration}


def _cpu_side_columns(events: list[Event]) -> dict[str, Any]:
    """start/end/duration, pid, tid and name: the columns of every CPU-side table."""
    cols: dict[str, Any] = _interval_columns(events)
    cols["pid"] = _ints([e.pid for e in events])
    cols["tid"] = _ints([e.tid for e in events])
    cols["name"] = _strings([e.name for e in events])
    return cols


def _external_ids(args: list) -> list:
    """`External id` (`external id` in 2021 traces)."""
    return [a.external_id if a.external_id is not None else a.external_id_legacy for a in args]


def str_or_none(x: Any) -> str | None:
    return x if isinstance(x, str) else (None if x is None else str(x))


def _strings(values: list) -> pa.Array:
    """Name-like fields of events: strings (other JSON values are written as text)."""
    try:
        return pa.array(values, pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([str_or_none(v) for v in values], pa.string())


def _table(name: str, cols: dict[str, Any]) -> pa.Table:
    """Rows of the schema table `name`: Python lists become arrays of the schema's column type.

    Typed conversion skips pyarrow's type inference (which also tries to import dateutil each
    time: 350 failed imports, ~25 ms, per reference trace). A list the type does not hold (an
    int past the range) is inferred instead; writer.conform nulls what does not fit.
    """
    schema = TABLES[name].arrow_schema
    arrays = {}
    for column, values in cols.items():
        if isinstance(values, list):
            index = schema.get_field_index(column)
            try:
                values = pa.array(values, schema.field(index).type if index >= 0 else None)
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                values = pa.array(values)
        arrays[column] = values
    return pa.table(arrays)


def gpu_rows(name: str, events: list[Event]) -> pa.Table:
    """Rows of kernels, memcpy, memset or synchronizations."""
    args_text = JoinedTexts([e.args for e in events])
    args = decode_all(GpuArgs, args_text)
    cols: dict[str, Any] = _interval_columns(events)
    cols["device_id"] = [a.device if a.device is not None else _int(e.pid) for a, e in zip(args, events)]
    cols["context_id"] = [a.context for a in args]
    cols["stream_id"] = [a.stream if a.stream is not None else _int(e.tid) for a, e in zip(args, events)]
    cols["correlation_id"] = [a.correlation for a in args]
    cols["external_id"] = _external_ids(args)
    names = [str_or_none(e.name) for e in events]
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
    return _table(name, cols)


def api_call_rows(events: list[Event]) -> pa.Table:
    args_text = JoinedTexts([e.args for e in events])
    args = decode_all(GpuArgs, args_text)
    cols = _cpu_side_columns(events)
    cols["correlation_id"] = [a.correlation for a in args]
    cols["external_id"] = _external_ids(args)
    cols["api"] = ["driver" if str(e.cat).lower().endswith("driver") else "runtime" for e in events]
    cols["cbid"] = [a.cbid for a in args]
    cols["args_json"] = args_text.column()
    return _table("api_calls", cols)


def cpu_op_rows(events: list[Event]) -> pa.Table:
    """cpu_ops rows without op_id (numbered once all chunks are in)."""
    args_text = JoinedTexts([e.args for e in events])
    args = decode_all(CpuOpArgs, args_text)
    cols = _cpu_side_columns(events)
    cols["external_id"] = _external_ids(args)
    cols["sequence_number"] = [a.sequence_number for a in args]
    cols["fwd_thread_id"] = [a.fwd_thread_id for a in args]
    cols["call_stack"] = [a.call_stack or None for a in args]
    cols["flops"] = [a.flops for a in args]
    cols["args_json"] = args_text.column()
    return _table("cpu_ops", cols)


def annotation_rows(events: list[Event]) -> pa.Table:
    """annotations rows without annotation_id and nesting (set once all chunks are in)."""
    args_text = JoinedTexts([e.args for e in events])
    args = decode_all(AnnotationArgs, args_text)
    cols = _cpu_side_columns(events)
    is_gpu = [str(e.cat).lower() == "gpu_user_annotation" for e in events]
    cols["kind"] = ["gpu_user_annotation" if g else "user_annotation" for g in is_gpu]
    cols["is_gpu"] = is_gpu
    cols["external_id"] = _external_ids(args)
    cols["args_json"] = args_text.column()
    return _table("annotations", cols)


def python_frame_rows(events: list[Event]) -> pa.Table:
    """python_frames rows without the labels parsed from the name (added once all chunks are in)."""
    args = decode_all(PythonArgs, JoinedTexts([e.args for e in events]))
    cols = _cpu_side_columns(events)
    cols["frame_id"] = [a.python_id for a in args]
    cols["parent_frame_id"] = [a.python_parent_id for a in args]
    cols["module_id"] = [a.python_module_id for a in args]
    return _table("python_frames", cols)


def pid_rows(events: list[Event]) -> pa.Table:
    """Only the pid column of a table's rows (what kineto needs of a table it does not build)."""
    return pa.table({"pid": _ints([e.pid for e in events])})


def flow_end_rows(events: list[Event]) -> pa.Table:
    """One row per flow start ('s') or end ('f') event; kineto.pair_flows joins the two."""
    ends = {"s": "start", "f": "end"}
    return pa.table(
        {
            "side": _strings([ends[e.ph] for e in events]),
            "kind": _strings([e.cat for e in events]),
            "flow_id": _ints([e.id for e in events]),
            "ts_ns": us_to_ns([e.ts for e in events]),
            "pid": _ints([e.pid for e in events]),
            "tid": _ints([e.tid for e in events]),
        }
    )


def memory_rows(events: list[Event]) -> pa.Table:
    """[memory] instant events: allocator activity."""
    args = decode_all(MemoryArgs, JoinedTexts([e.args for e in events]))
    device_type = {0: "cpu", 1: "cuda"}
    return _table(
        "memory_events",
        {
            "ts_ns": us_to_ns([e.ts for e in events]),
            "pid": _ints([e.pid for e in events]),
            "tid": _ints([e.tid for e in events]),
            "device_type": [device_type.get(a.device_type, None if a.device_type is None else str(a.device_type))
                            for a in args],
            "device_id": [a.device_id for a in args],
            "address": [a.addr for a in args],
            "bytes": [a.bytes for a in args],
            "total_allocated_bytes": [a.total_allocated for a in args],
            "total_reserved_bytes": [a.total_reserved for a in args],
        }
    )


def counter_rows(events: list[Event]) -> pa.Table | None:
    """Counter ('C') events: one row per series of each event's args."""
    rows = []
    for e in events:
        try:
            values = msgspec.json.decode(bytes(e.args)) if bytes(e.args) else {}
        except msgspec.DecodeError:
            continue
        if isinstance(values, dict):
            for series, value in values.items():
                rows.append((e.ts, _int(e.pid), f"{e.name}.{series}", _float(value)))
    if not rows:
        return None
    return _table(
        "counters",
        {
            "ts_ns": us_to_ns([r[0] for r in rows]),
            "pid": [r[1] for r in rows],
            "name": [r[2] for r in rows],
            "value": [r[3] for r in rows],
        }
    )


def add_names(events: list[Event], processes: dict[int, str], threads: dict[tuple[int, int], str]) -> None:
    """Process and thread names from metadata ('M') events."""
    for e in events:
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
