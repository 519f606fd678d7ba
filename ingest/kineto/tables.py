"""PyTorch profiler (Kineto) Chrome-trace JSON -> the unified tables of lake/schema.py.

Handles both the current format (cat kernel, cuda_runtime, cuda_driver, cpu_op, gpu_memcpy, ...)
and the 2021 one (Kernel, Runtime, Operator, Memcpy; 'external id'; tid "stream 7"; a bare
array at top level). Times: exact integer ns from the number text (exact_time); with
baseTimeNanoseconds the trace clock is Kineto's relative one and clock_offset_ns = base.
"""

from __future__ import annotations

import os
from collections import Counter

import msgspec
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import ErrorKind, TraceError
from ..identity import make_trace_id
from ..ingest_result import IngestResult, event_count, trace_span, traces_row
from ..integrity import drop_reversed_intervals, unique_lookups
from ..names import parse_python_frames
from ..nesting import nest_table, parent_and_depth
from .args import to_int
from .constants import NAME
from .decode import ChunkFailed, DecodedTrace, decode
from .parallel import read_rows
from .row_parts import ROW_BUILDERS, RowParts
from .rows import str_or_none

UNANALYSED_KEY = "unanalysed_device_events"  # traces.metadata_json: {category: events} of such work


def _pids_only(build: set[str] | None) -> frozenset[str]:
    """The tables of which only the pid column is built (cpu_ops: its pids name the CPU processes)."""
    return frozenset({"cpu_ops"}) if build is not None and "cpu_ops" not in build else frozenset()


def _read_chunks(decoded: DecodedTrace, build: set[str] | None = None) -> RowParts:
    parts = RowParts(build, _pids_only(build))
    for events in decoded.chunks:
        parts.add(events)
    return parts


def _in_time_order(memory: pa.Table | None) -> pa.Table | None:
    """Allocator events sorted by time (file order breaks ties), numbered by event_id. The file
    interleaves threads out of order; only time order replays the allocator's running totals."""
    if memory is None:
        return None
    order = pc.sort_indices(memory, [("ts_ns", "ascending")])  # stable
    return _with_row_ids(memory.take(order), "event_id")


def _with_row_ids(table: pa.Table | None, column: str) -> pa.Table | None:
    if table is None:
        return None
    return table.add_column(0, column, pa.array(range(table.num_rows), pa.int64()))


def _with_frame_labels(table: pa.Table | None) -> pa.Table | None:
    """file, line, function and frame_kind parsed from the frames' names (once per trace: the
    parse is per distinct name, and names repeat across chunks)."""
    if table is None:
        return None
    parsed = parse_python_frames(pl.Series("name", table.column("name")))
    for column in ("file", "line", "function", "frame_kind"):
        table = table.append_column(column, parsed[column].to_arrow())
    return table


def _nest_ops(table: pa.Table | None) -> pa.Table | None:
    """parent_op_id and depth: the innermost operator enclosing each one on its thread."""
    if table is None:
        return None
    nested = nest_table(pl.from_arrow(table.select(["op_id", "pid", "tid", "start_ns", "end_ns"])), "op_id")
    return table.append_column("parent_op_id", nested["parent_op_id"].to_arrow()).append_column(
        "depth", nested["depth"].to_arrow())


def _nest_annotations(table: pa.Table | None) -> pa.Table | None:
    """annotation_id, and parent_id/depth: the innermost enclosing range on the same lane."""
    table = _with_row_ids(table, "annotation_id")
    if table is None:
        return None
    lanes = list(zip(table.column("pid").to_pylist(), table.column("tid").to_pylist(),
                     table.column("is_gpu").to_pylist()))
    parent, depth = parent_and_depth(lanes, table.column("start_ns").to_pylist(),
                                     table.column("end_ns").to_pylist(), table.column("annotation_id").to_pylist())
    return table.append_column("parent_id", pa.array(parent, pa.int64())).append_column(
        "depth", pa.array(depth, pa.int32()))


def _pair_flows(ends: pa.Table | None) -> pa.Table | None:
    """One row per (kind, flow_id): the first start and the first end event of the flow."""
    if ends is None:
        return None
    frame = pl.from_arrow(ends).lazy().cast({"flow_id": pl.Int64, "pid": pl.Int64, "tid": pl.Int64})
    side = {
        s: frame.filter(pl.col("side") == s)
        .unique(["kind", "flow_id"], keep="first", maintain_order=True)
        .select("kind", "flow_id", pl.col("ts_ns").alias(f"{s}_ts_ns"), pl.col("pid").alias(f"{s}_pid"),
                pl.col("tid").alias(f"{s}_tid"))
        for s in ("start", "end")
    }
    joined = side["start"].join(side["end"], on=["kind", "flow_id"], how="full", coalesce=True, nulls_equal=True,
                                maintain_order="left_right").collect()
    return joined.to_arrow()


def _launchers(api: pa.Table | None) -> pl.DataFrame | None:
    """correlation_id -> pid/tid of the API call with that id (the first one, if repeated)."""
    if api is None:
        return None
    return (pl.from_arrow(api.select(["correlation_id", "pid", "tid"])).drop_nulls("correlation_id")
            .unique("correlation_id", keep="first"))


def _attach_launcher(table: pa.Table | None, launchers: pl.DataFrame | None, single_pid: int | None) -> pa.Table | None:
    """pid/tid of the API call that launched each GPU op (same correlation id)."""
    if table is None:
        return None
    frame = pl.from_arrow(table)
    if launchers is not None:
        frame = frame.join(launchers, on="correlation_id", how="left", maintain_order="left")
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

    def ints(*keys: str) -> list[int | None]:  # the first key present (CUDA's name, then ROCm's)
        return [next((v for v in (to_int(p.get(k)) for k in keys) if v is not None), None) for p in props]

    warp_size = ints("warpSize")
    return pa.table(
        {
            "device_id": ints("id"),
            "name": [str_or_none(p.get("name")) for p in props],
            "vendor": [vendor] * len(props),
            "compute_major": ints("computeMajor"),
            "compute_minor": ints("computeMinor"),
            "sm_count": ints("numSms"),
            "warp_size": warp_size,
            "max_warps_per_sm": [t // w if t is not None and w else None
                                 for t, w in zip(ints("maxThreadsPerMultiprocessor"), warp_size)],
            "registers_per_sm": ints("regsPerMultiprocessor"),
            "registers_per_block": ints("regsPerBlock"),
            "shared_memory_per_sm_bytes": ints("sharedMemPerMultiprocessor", "maxSharedMemoryPerMultiProcessor"),
            "shared_memory_per_block_bytes": ints("sharedMemPerBlock"),
            "shared_memory_per_block_optin_bytes": ints("sharedMemPerBlockOptin"),
            "total_memory_bytes": ints("totalGlobalMem"),
            "properties_json": [msgspec.json.encode(p).decode() for p in props],
        }
    )


# The row tables (ROW_BUILDERS) a wanted table is made from besides its own: GPU work takes the pid/tid
# of the API call that launched it (and the pid of the trace's one CPU process, which the cpu_ops'
# pids tell too: _read_chunks keeps just those when the operators are not built); the devices'
# vendor is told by the API names; processes and threads list the CPU-side lanes; flows are paired
# from flow_ends. The traces row's span and event count cover every table: it needs them all.
_MADE_FROM = {
    "kernels": {"kernels", "api_calls"}, "memcpy": {"memcpy", "api_calls"}, "memset": {"memset", "api_calls"},
    "devices": {"api_calls"}, "processes": {"api_calls", "cpu_ops", "python_frames"},
    "threads": {"api_calls", "cpu_ops", "python_frames"}, "flows": {"flow_ends"},
}


def _row_tables(tables: set[str] | None) -> set[str] | None:
    """The row tables to build for the wanted tables (None: all of them)."""
    if tables is None or "traces" in tables:
        return None
    return {made for name in tables for made in _MADE_FROM.get(name, {name})} & set(ROW_BUILDERS)


def ingest_kineto(path: str, wanted: set[str] | None = None) -> IngestResult:
    """The trace's unified tables. wanted: the only tables wanted (`tracelake stats` of a file reads
    just what its reports need, as ingest_nsys does): every event is still decoded, but the rows
    of the other tables are not built, and the result holds the wanted tables and a traces row,
    whose span, event count and warnings then cover only the tables read (unless `traces` is
    wanted: then every table is read). None: all."""
    build = _row_tables(wanted)
    decoded, parts = _decode(path, build)
    md = decoded.metadata
    tables, cpu_pids = _event_tables(parts, build)
    dist = md.get("distributedInfo") if isinstance(md.get("distributedInfo"), dict) else {}
    rank = to_int(dist.get("rank"))
    tables["devices"] = _devices(md, _vendor(md, tables["api_calls"]))
    tables["processes"], tables["threads"] = _processes_and_threads(tables, cpu_pids, parts, rank)
    _check(tables, parts.unanalysed, decoded.warnings)
    tables["traces"] = _traces_row(path, decoded, tables, parts.unanalysed, rank, dist)
    kept = set(tables) if wanted is None else {*wanted, "traces"}
    return IngestResult(make_trace_id(path, decoded.content_sha256),
                        {k: v for k, v in tables.items() if v is not None and k in kept}, decoded.warnings)


def _decode(path: str, build: set[str] | None) -> tuple[DecodedTrace, RowParts]:
    """The decoded trace and its rows: on several cores (parallel.py) or chunk by chunk here, and
    whole if a chunk fails; raises TraceError for a file of no timed events."""
    try:
        read = read_rows(path, build, _pids_only(build))
    except ChunkFailed:  # a cut was wrong or the JSON is damaged: decode here
        read = None
    if read is not None:
        decoded, parts = read
    else:
        try:
            decoded = decode(path)
            parts = _read_chunks(decoded, build)
        except ChunkFailed:  # a chunk cut was wrong or the JSON is damaged: decode the file whole
            decoded = decode(path, chunked=False)
            parts = _read_chunks(decoded, build)
    if not parts.events_read:
        raise TraceError(path, "no trace events in the file")
    if not parts.timed:  # nothing but process/thread names, or objects that are no trace events
        if parts.process_names or parts.thread_names:
            raise TraceError(path, f"no timed events: the {parts.events_read:,} events only name processes "
                                   "and threads")
        raise TraceError(path, f"none of the {parts.events_read:,} JSON items is a PyTorch profiler event "
                               "(kernel, operator, runtime call...): not a PyTorch trace", ErrorKind.NOT_A_TRACE)
    return decoded, parts


def _event_tables(parts: RowParts, build: set[str] | None) -> tuple[dict[str, pa.Table | None], set[int]]:
    """The tables of the events (all chunks' rows, with row ids, nesting, launchers and flow
    pairs), and the pids of the CPU processes that made API calls or ran operators."""
    api = parts.take("api_calls")
    cpu_pids = {p for p in (pc.unique(api.column("pid")).to_pylist() if api is not None else []) if p is not None}
    ops = parts.take("cpu_ops")
    if ops is not None:
        cpu_pids.update(p for p in pc.unique(ops.column("pid")).to_pylist() if p is not None)
    ops = _nest_ops(_with_row_ids(ops, "op_id")) if build is None or "cpu_ops" in build else None
    single_pid = next(iter(cpu_pids)) if len(cpu_pids) == 1 else None
    launchers = _launchers(api)
    tables = {
        "kernels": _attach_launcher(parts.take("kernels"), launchers, single_pid),
        "memcpy": _attach_launcher(parts.take("memcpy"), launchers, single_pid),
        "memset": _attach_launcher(parts.take("memset"), launchers, single_pid),
        "synchronizations": parts.take("synchronizations"),
        "api_calls": api,
        "cpu_ops": ops,
        "annotations": _nest_annotations(parts.take("annotations")),
        "python_frames": _with_frame_labels(parts.take("python_frames")),
        "flows": _pair_flows(parts.take("flow_ends")),
        "memory_events": _in_time_order(parts.take("memory_events")),
        "counters": parts.take("counters"),
    }
    return tables, cpu_pids


def _vendor(md: dict, api: pa.Table | None) -> str:
    """'amd' when the metadata names ROCm or the first API calls are HIP's, else 'nvidia'."""
    api_names = api.column("name").to_pylist()[:2000] if api is not None else []
    is_amd = "roctracer_version" in md or "hip_runtime_version" in md or any(
        n and n.startswith("hip") for n in api_names
    )
    return "amd" if is_amd else "nvidia"


def _processes_and_threads(tables: dict[str, pa.Table | None], cpu_pids: set[int], parts: RowParts,
                           rank: int | None) -> tuple[pa.Table, pa.Table]:
    """The CPU processes (those of the API calls, operators and Python frames) and the threads of
    those tables, named by the trace's metadata events."""
    process_names, thread_names = parts.process_names, parts.thread_names
    if tables["python_frames"] is not None:
        cpu_pids.update(p for p in pc.unique(tables["python_frames"].column("pid")).to_pylist() if p is not None)
    processes = pa.table(
        {
            "pid": sorted(cpu_pids),
            "name": [process_names.get(p) for p in sorted(cpu_pids)],
            "rank": [rank] * len(cpu_pids),
        },
        schema=pa.schema([("pid", pa.int64()), ("name", pa.string()), ("rank", pa.int32())]),
    )
    lanes = (
        pl.concat([pl.from_arrow(tables[t].select(["pid", "tid"])) for t in ("api_calls", "cpu_ops", "python_frames")
                   if tables[t] is not None] or [pl.DataFrame(schema={"pid": pl.Int64, "tid": pl.Int64})])
        .drop_nulls().unique().sort("pid", "tid").rows()
    )
    threads = pa.table(
        {"pid": [p for p, _ in lanes], "tid": [t for _, t in lanes], "name": [thread_names.get(x) for x in lanes]},
        schema=pa.schema([("pid", pa.int64()), ("tid", pa.int64()), ("name", pa.string())]),
    )
    return processes, threads


def _check(tables: dict[str, pa.Table | None], unanalysed: Counter[str], warnings: list[str]) -> None:
    """The integrity checks, in place, each with its warning: device work of unknown categories,
    negative durations (integrity.drop_reversed_intervals), repeated lookup keys and
    ts=0, dur=0 profiler placeholders (pytorch#188481)."""
    for cat, n in sorted(unanalysed.items()):
        warnings.append(f"{n:,} device events of category {cat!r} are not analysed (a kind of device work "
                        "tracelake does not know): GPU busy and idle times leave them out")
    drop_reversed_intervals(tables, warnings)
    unique_lookups(tables, warnings)
    placeholders = 0
    for name in ("kernels", "memcpy", "memset", "synchronizations", "api_calls", "cpu_ops", "annotations",
                 "python_frames"):
        t = tables[name]
        if t is None:
            continue
        placeholder = pc.and_(pc.equal(t.column("start_ns"), 0), pc.equal(t.column("duration_ns"), 0))
        n_placeholder = pc.sum(placeholder).as_py() or 0
        if n_placeholder:
            tables[name] = t.filter(pc.invert(placeholder).fill_null(True))
        placeholders += n_placeholder
    if placeholders:
        warnings.append(f"dropped {placeholders} events with ts=0 and dur=0 (profiler placeholders)")


def _traces_row(path: str, decoded: DecodedTrace, tables: dict[str, pa.Table | None], unanalysed: Counter[str],
                rank: int | None, dist: dict) -> pa.Table:
    """The trace's row of `traces`: its span and clock, tool versions, rank and metadata."""
    md = decoded.metadata
    start_ns, end_ns = trace_span(tables)
    base = to_int(md.get("baseTimeNanoseconds"))
    if base is not None:
        clock_offset = base
    else:
        clock_offset = 0 if start_ns is not None and start_ns > 10**18 else None
    versions = [f"{k}={md[k]}" for k in ("cupti_version", "cuda_runtime_version", "cuda_driver_version",
                                          "roctracer_version", "hip_runtime_version") if k in md]
    metadata = {k: v for k, v in md.items() if k != "deviceProperties"}
    if unanalysed:
        metadata[UNANALYSED_KEY] = dict(unanalysed)
    return traces_row(
        source=NAME,
        path=path,
        file_bytes=os.path.getsize(path),
        content_sha256=decoded.content_sha256,
        tool="PyTorch Profiler (Kineto)",
        tool_version=", ".join(versions) or None,
        schema_version=str_or_none(md.get("schemaVersion")),
        start_ns=start_ns,
        end_ns=end_ns,
        clock_offset_ns=clock_offset,
        rank=rank,
        world_size=to_int(dist.get("world_size")),
        distributed_backend=str_or_none(dist.get("backend")),
        is_truncated=decoded.is_truncated,
        warnings=decoded.warnings,
        metadata=metadata,
        event_count=event_count(tables),
    )
