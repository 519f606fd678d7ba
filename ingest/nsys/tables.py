"""Nsight Systems SQLite export -> the unified tables of lake/schema.py.

Tables and columns are found by introspection (reader.py); enum values come from our own
fallback maps (names.py, below), which match the ENUM_* tables of 2022.4+ exports and stand in
for them in 2022.1 exports that have none. pid/tid decode the serialized globalTid/globalPid:
pid = (g >> 24) & 0xFFFFFF, tid = g & 0xFFFFFF. correlationId is unique per process only, so
GPU work is joined to its API call on (pid, correlation_id).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import orjson
import polars as pl
import pyarrow as pa

from ..errors import ErrorKind, TraceError
from ..identity import file_sha256, make_trace_id
from ..ingest_result import IngestResult, event_count, trace_span, traces_row
from ..integrity import drop_reversed_intervals, unique_lookups
from ..names import MEM_KIND_BY_ID, MEMCPY_OPERATION_BY_ID
from ..nesting import parent_and_depth_of
from .constants import NAME
from .reader import Export, open_export

SYNC_TYPE_BY_ID = {0: "unknown", 1: "event_sync", 2: "stream_wait", 3: "stream_sync", 4: "context_sync"}
THREAD_STATE_BY_ID = {
    0: "Unknown", 1: "Running", 2: "Interruptible", 3: "Uninterruptible", 4: "Stopped", 5: "Terminated",
    6: "Unscheduled", 7: "Waiting", 8: "OS runtime", 9: "Initialized", 10: "Transition",
}
API_BY_EVENT_CLASS = {0: "runtime", 1: "driver"}
EVENT_CLASS_CUDA_BACKTRACE = 67  # ENUM_NSYS_EVENT_CLASS TRACE_PROCESS_EVENT_CUDABACKTRACE
NVTX_KIND_BY_EVENT_TYPE = {34: "mark", 59: "push_pop", 60: "start_end", 70: "push_pop", 71: "start_end"}
NVTX_DOMAIN_CREATE = 75


def _pid(col: str) -> pl.Expr:
    return ((pl.col(col).cast(pl.Int64) // (1 << 24)) % (1 << 24)).alias("pid")


def _tid(col: str) -> pl.Expr:
    return (pl.col(col).cast(pl.Int64) % (1 << 24)).alias("tid")


def _interval(start="start", end="end") -> list[pl.Expr]:
    return [
        pl.col(start).cast(pl.Int64).alias("start_ns"),
        pl.col(end).cast(pl.Int64).alias("end_ns"),
        (pl.col(end).cast(pl.Int64) - pl.col(start).cast(pl.Int64)).alias("duration_ns"),
    ]


def _label(col: str, mapping: dict, alias: str) -> pl.Expr:
    return pl.col(col).cast(pl.Int64).replace_strict(mapping, default=None, return_dtype=pl.String).alias(alias)


_GPU_COMMON = ["start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid", "greenContextId"]


def _gpu_place() -> list[pl.Expr]:
    return [
        *_interval(),
        pl.col("deviceId").cast(pl.Int32).alias("device_id"),
        pl.col("contextId").cast(pl.Int64).alias("context_id"),
        pl.col("streamId").cast(pl.Int64).alias("stream_id"),
        _pid("globalPid"),
        pl.col("correlationId").cast(pl.Int64).alias("correlation_id"),
    ]


class _Mapper:
    def __init__(self, export: Export):
        self.x = export
        self.launchers: pl.DataFrame | None = None
        self.warnings: list[str] = []

    def api_calls(self) -> pl.DataFrame | None:
        f = self.x.read("CUPTI_ACTIVITY_KIND_RUNTIME", ["start", "end", "eventClass", "globalTid", "correlationId",
                                                         "nameId", "returnValue", "callchainId"])
        if f is None:
            return None
        f = self.x.resolve(f, "nameId", "name")
        out = f.select(
            *_interval(), _pid("globalTid"), _tid("globalTid"),
            pl.col("correlationId").cast(pl.Int64).alias("correlation_id"),
            pl.col("name"),
            _label("eventClass", API_BY_EVENT_CLASS, "api").fill_null("other"),
            pl.col("returnValue").cast(pl.Int64).alias("return_value"),
            pl.col("callchainId").cast(pl.Int64).alias("callchain_id"),
            pl.col("eventClass").cast(pl.Int64).alias("event_class"),
        )
        # With --cudabacktrace, nsys adds a second, slightly wider row per traced call (eventClass
        # CUDABACKTRACE) that carries the backtrace. Keep it, labelled api = 'backtrace' (NVIDIA's
        # cuda_api_sum counts it), and copy its callchain id onto the real call (same thread and
        # correlation id) so that GPU work joins its backtrace through the call that launched it.
        is_twin = pl.col("event_class") == EVENT_CLASS_CUDA_BACKTRACE
        chains = out.filter(is_twin).select("pid", "tid", "correlation_id", pl.col("callchain_id").alias("bt_chain")) \
            .unique(["pid", "tid", "correlation_id"], keep="first")
        if chains.height:
            out = (
                out.join(chains, on=["pid", "tid", "correlation_id"], how="left", maintain_order="left")
                .with_columns(pl.when(is_twin).then(pl.col("callchain_id"))
                              .otherwise(pl.coalesce("callchain_id", "bt_chain")).alias("callchain_id"),
                              pl.when(is_twin).then(pl.lit("backtrace")).otherwise(pl.col("api")).alias("api"))
                .drop("bt_chain")
            )
        out = out.drop("event_class")
        self.launchers = (
            out.select("pid", "correlation_id", "tid").drop_nulls("correlation_id").unique(["pid", "correlation_id"])
        )
        return out

    def _recover_pid(self, frame: pl.DataFrame, table: str) -> pl.DataFrame:
        """GPU rows of a table exported without globalPid (trimmed exports): the process of the API
        call with the same correlation id where one process has that id, else the export's only
        process; a warning counts the rows that stay without one."""
        if self.x.has(table, "globalPid") or not frame.height:
            return frame
        launchers = self.launchers if self.launchers is not None else pl.DataFrame(
            schema={"pid": pl.Int64, "correlation_id": pl.Int64})
        unique = (launchers.group_by("correlation_id").agg(pl.col("pid").first(), pl.col("pid").n_unique().alias("n"))
                  .filter(pl.col("n") == 1).select("correlation_id", pl.col("pid").alias("launcher_pid")))
        processes = launchers["pid"].unique().to_list()
        if not processes:
            listed = self.x.read("PROCESSES", ["globalPid"])
            processes = [] if listed is None else listed.select(_pid("globalPid"))["pid"].unique().to_list()
        only = processes[0] if len(processes) == 1 else None
        frame = (frame.join(unique, on="correlation_id", how="left", maintain_order="left")
                 .with_columns(pl.coalesce("launcher_pid", pl.lit(only, pl.Int64)).alias("pid")).drop("launcher_pid"))
        lost = frame["pid"].null_count()
        self.warnings.append(f"{table} has no globalPid column: the process of its rows is that of the API call "
                             "with the same correlation id, or the only process"
                             + (f"; {lost:,} rows have none" if lost else ""))
        return frame

    def _with_launcher(self, frame: pl.DataFrame, table: str) -> pl.DataFrame:
        frame = self._recover_pid(frame, table)
        if self.launchers is None:
            return frame.with_columns(pl.lit(None, pl.Int64).alias("tid"))
        return frame.join(self.launchers, on=["pid", "correlation_id"], how="left")

    def kernels(self) -> pl.DataFrame | None:
        cols = _GPU_COMMON + ["demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX",
                              "blockY", "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory",
                              "localMemoryPerThread", "graphId", "graphNodeId"]
        f = self.x.read("CUPTI_ACTIVITY_KIND_KERNEL", cols)
        if f is None:
            return None
        for col, name in (("demangledName", "name"), ("shortName", "short_name"), ("mangledName", "mangled_name")):
            f = self.x.resolve(f, col, name)
        out = f.select(
            *_gpu_place(),
            "name", "short_name", "mangled_name",
            *[pl.col(c).cast(pl.Int32).alias(c[:-1].lower() + "_" + c[-1].lower())
              for c in ("gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ")],
            pl.col("registersPerThread").cast(pl.Int32).alias("registers_per_thread"),
            pl.col("staticSharedMemory").cast(pl.Int64).alias("static_shared_memory_bytes"),
            pl.col("dynamicSharedMemory").cast(pl.Int64).alias("dynamic_shared_memory_bytes"),
            (pl.col("staticSharedMemory").cast(pl.Int64) + pl.col("dynamicSharedMemory").cast(pl.Int64))
            .alias("shared_memory_bytes"),
            pl.col("localMemoryPerThread").cast(pl.Int64).alias("local_memory_per_thread_bytes"),
            pl.col("graphId").cast(pl.Int64).alias("graph_id"),
            pl.col("graphNodeId").cast(pl.Int64).alias("graph_node_id"),
            pl.col("greenContextId").cast(pl.Int64).alias("green_context_id"),
        )
        return self._with_launcher(out, "CUPTI_ACTIVITY_KIND_KERNEL")

    def memcpy(self) -> pl.DataFrame | None:
        f = self.x.read("CUPTI_ACTIVITY_KIND_MEMCPY", _GPU_COMMON + ["bytes", "copyKind", "srcKind", "dstKind",
                                                                      "srcDeviceId", "dstDeviceId"])
        if f is None:
            return None
        labels = {k: v[0] for k, v in MEMCPY_OPERATION_BY_ID.items()}
        codes = {k: v[1] for k, v in MEMCPY_OPERATION_BY_ID.items()}
        out = f.select(
            *_gpu_place(),
            _label("copyKind", labels, "operation"),
            _label("copyKind", codes, "copy_kind"),
            _label("srcKind", MEM_KIND_BY_ID, "src_kind"),
            _label("dstKind", MEM_KIND_BY_ID, "dst_kind"),
            pl.col("bytes").cast(pl.Int64),
            pl.col("srcDeviceId").cast(pl.Int32).alias("src_device_id"),
            pl.col("dstDeviceId").cast(pl.Int32).alias("dst_device_id"),
        ).with_columns(pl.format("[CUDA memcpy {}]", pl.col("operation").fill_null("Unknown")).alias("name"))
        return self._with_launcher(out, "CUPTI_ACTIVITY_KIND_MEMCPY")

    def memset(self) -> pl.DataFrame | None:
        f = self.x.read("CUPTI_ACTIVITY_KIND_MEMSET", _GPU_COMMON + ["bytes", "memKind", "value"])
        if f is None:
            return None
        out = f.select(
            *_gpu_place(),
            _label("memKind", MEM_KIND_BY_ID, "mem_kind"),
            pl.col("bytes").cast(pl.Int64),
            pl.col("value").cast(pl.Int64),
            pl.lit("[CUDA memset]").alias("name"),
        )
        return self._with_launcher(out, "CUPTI_ACTIVITY_KIND_MEMSET")

    def graph_executions(self) -> pl.DataFrame | None:
        f = self.x.read("CUPTI_ACTIVITY_KIND_GRAPH_TRACE", _GPU_COMMON + ["graphId", "graphExecId"])
        if f is None:
            return None
        out = f.select(
            *_gpu_place(),
            pl.col("graphId").cast(pl.Int64).alias("graph_id"),
            pl.col("graphExecId").cast(pl.Int64).alias("graph_exec_id"),
        )
        return self._with_launcher(out, "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")

    def synchronizations(self) -> pl.DataFrame | None:
        f = self.x.read("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", _GPU_COMMON + ["syncType", "deprecatedSyncType",
                                                                               "eventId"])
        if f is None:
            return None
        sync = pl.when((pl.col("syncType").cast(pl.Int64) == 0) & pl.col("deprecatedSyncType").is_not_null()) \
            .then(pl.col("deprecatedSyncType")).otherwise(pl.col("syncType")).cast(pl.Int64)
        return f.with_columns(sync.alias("sync")).select(
            *_gpu_place(), _label("sync", SYNC_TYPE_BY_ID, "sync_type"), pl.col("eventId").cast(pl.Int64).alias("event_id")
        )

    def annotations(self) -> pl.DataFrame | None:
        f = self.x.read("NVTX_EVENTS", ["start", "end", "eventType", "text", "textId", "globalTid", "domainId",
                                        "category", "color"])
        if f is None:
            return None
        f = self.x.resolve(f, "textId", "registered_text").with_columns(
            pl.col("eventType").cast(pl.Int64), pl.col("domainId").cast(pl.Int64), _pid("globalTid"), _tid("globalTid")
        )
        domains = (
            f.filter(pl.col("eventType") == NVTX_DOMAIN_CREATE)
            .select("pid", "domainId", pl.coalesce("registered_text", "text").alias("domain"))
            .unique(["pid", "domainId"], keep="last")
        )
        ranges = f.filter(pl.col("eventType").is_in(list(NVTX_KIND_BY_EVENT_TYPE))).sort("start")
        ranges = ranges.join(domains, on=["pid", "domainId"], how="left")
        out = ranges.select(
            pl.int_range(pl.len(), dtype=pl.Int64).alias("annotation_id"),
            pl.col("start").cast(pl.Int64).alias("start_ns"),
            pl.col("end").cast(pl.Int64).alias("end_ns"),
            (pl.col("end").cast(pl.Int64) - pl.col("start").cast(pl.Int64)).alias("duration_ns"),
            "pid", "tid",
            pl.coalesce(pl.col("registered_text"), pl.col("text").cast(pl.String)).alias("name"),
            "domain",
            _label("eventType", NVTX_KIND_BY_EVENT_TYPE, "kind"),
            pl.lit(False).alias("is_gpu"),
            pl.col("category").cast(pl.Int64),
            pl.col("color").cast(pl.Int64),
        )
        return out.with_columns(*parent_and_depth_of(out, ["pid", "tid"], "annotation_id"))

    def processes(self) -> pl.DataFrame | None:
        f = self.x.read("PROCESSES", ["globalPid", "pid", "name"])
        if f is None:
            return None
        return f.select(pl.col("pid").cast(pl.Int64), pl.col("name").cast(pl.String)).unique("pid", keep="first")

    def threads(self) -> pl.DataFrame | None:
        f = self.x.read("ThreadNames", ["nameId", "globalTid"])
        if f is None:
            return None
        f = self.x.resolve(f, "nameId", "name")
        return f.select(_pid("globalTid"), _tid("globalTid"), "name").unique(["pid", "tid"], keep="last")

    def devices(self) -> pl.DataFrame | None:
        table = "TARGET_INFO_GPU" if self.x.has("TARGET_INFO_GPU") else "TARGET_INFO_CUDA_GPU"
        if not self.x.has(table):
            return None
        cols = self.x.columns(table)
        f = self.x.read(table, cols)
        if f is None:
            return None
        id_col = "id" if "id" in cols else "deviceId"
        props = [orjson.dumps(row, default=str).decode() for row in f.iter_rows(named=True)]
        get = (lambda c: pl.col(c) if c in cols else pl.lit(None))  # noqa: E731
        return f.select(
            get(id_col).cast(pl.Int32).alias("device_id"),
            get("name").cast(pl.String).alias("name"),
            pl.lit("nvidia").alias("vendor"),
            get("computeMajor").cast(pl.Int32).alias("compute_major"),
            get("computeMinor").cast(pl.Int32).alias("compute_minor"),
            pl.coalesce(get("smCount"), get("numMultiprocessors")).cast(pl.Int32).alias("sm_count"),
            get("threadsPerWarp").cast(pl.Int32).alias("warp_size"),
            get("maxWarpsPerSm").cast(pl.Int32).alias("max_warps_per_sm"),
            get("maxBlocksPerSm").cast(pl.Int32).alias("max_blocks_per_sm"),
            get("maxRegistersPerSm").cast(pl.Int32).alias("registers_per_sm"),
            get("maxRegistersPerBlock").cast(pl.Int32).alias("registers_per_block"),
            get("maxShmemPerSm").cast(pl.Int64).alias("shared_memory_per_sm_bytes"),
            get("maxShmemPerBlock").cast(pl.Int64).alias("shared_memory_per_block_bytes"),
            get("maxShmemPerBlockOptin").cast(pl.Int64).alias("shared_memory_per_block_optin_bytes"),
            get("totalMemory").cast(pl.Int64).alias("total_memory_bytes"),
            get("memoryBandwidth").cast(pl.Int64).alias("memory_bandwidth_bytes_per_s"),
            pl.coalesce(get("clockRate"), get("coreClockRate")).cast(pl.Int64).alias("clock_rate_hz"),
            get("uuid").cast(pl.String).alias("uuid"),
        ).with_columns(pl.Series("properties_json", props, pl.String))

    def memory_events(self) -> pl.DataFrame | None:
        f = self.x.read("CUDA_GPU_MEMORY_USAGE_EVENTS", ["start", "globalPid", "deviceId", "address", "bytes", "memKind",
                                                         "memoryOperationType", "correlationId"])
        if f is None:
            return None
        sign = pl.when(pl.col("memoryOperationType").cast(pl.Int64) == 1).then(-1).otherwise(1)
        return f.select(
            pl.col("start").cast(pl.Int64).alias("ts_ns"), _pid("globalPid"),
            pl.lit("cuda").alias("device_type"), pl.col("deviceId").cast(pl.Int32).alias("device_id"),
            pl.col("address").cast(pl.Int64), (pl.col("bytes").cast(pl.Int64) * sign).alias("bytes"),
            _label("memKind", MEM_KIND_BY_ID, "mem_kind"),
            pl.col("correlationId").cast(pl.Int64).alias("correlation_id"),
        ).sort("ts_ns", maintain_order=True, nulls_last=False).with_row_index("event_id").with_columns(
            pl.col("event_id").cast(pl.Int64))

    def callchains(self) -> pl.DataFrame | None:
        parts = []
        for kind, table in (("cuda", "CUDA_CALLCHAINS"), ("sampling", "SAMPLING_CALLCHAINS"), ("osrt", "OSRT_CALLCHAINS")):
            f = self.x.read(table, ["id", "symbol", "module", "stackDepth", "kernelMode", "unresolved"])
            if f is None or f.height == 0:
                continue
            f = self.x.resolve(self.x.resolve(f, "symbol", "symbol"), "module", "module")
            parts.append(f.select(
                pl.lit(kind).alias("kind"), pl.col("id").cast(pl.Int64).alias("callchain_id"),
                pl.col("stackDepth").cast(pl.Int32).alias("depth"), "symbol", "module",
                (pl.col("kernelMode").cast(pl.Int64) != 0).alias("is_kernel_mode"),
                (pl.col("unresolved").cast(pl.Int64) != 0).alias("is_unresolved"),
            ))
        return pl.concat(parts) if parts else None

    def cpu_samples(self) -> pl.DataFrame | None:
        f = self.x.read("COMPOSITE_EVENTS", ["id", "start", "cpu", "threadState", "globalTid"])
        if f is None:
            return None
        return f.select(
            pl.col("id").cast(pl.Int64).alias("sample_id"), pl.col("start").cast(pl.Int64).alias("ts_ns"),
            _pid("globalTid"), _tid("globalTid"), pl.col("cpu").cast(pl.Int32),
            _label("threadState", THREAD_STATE_BY_ID, "thread_state"),
        )

    def os_runtime_calls(self) -> pl.DataFrame | None:
        f = self.x.read("OSRT_API", ["start", "end", "globalTid", "nameId", "returnValue", "nestingLevel", "callchainId"])
        if f is None:
            return None
        f = self.x.resolve(f, "nameId", "name")
        return f.select(
            *_interval(), _pid("globalTid"), _tid("globalTid"), "name",
            pl.col("returnValue").cast(pl.Int64).alias("return_value"),
            pl.col("nestingLevel").cast(pl.Int32).alias("nesting_level"),
            pl.col("callchainId").cast(pl.Int64).alias("callchain_id"),
        )

    def gpu_metrics(self) -> pl.DataFrame | None:
        f = self.x.read("GPU_METRICS", ["timestamp", "typeId", "metricId", "value"])
        names = self.x.read("TARGET_INFO_GPU_METRICS", ["typeId", "metricId", "metricName"])
        if f is None or names is None:
            return None
        # metricId is not stable across exports: resolve it through this export's own names
        # ("DRAM Read Bandwidth [Throughput %]"), per typeId (one per device).
        names = names.select(
            pl.col("typeId").cast(pl.Int64), pl.col("metricId").cast(pl.Int64),
            pl.coalesce(pl.col("metricName").cast(pl.String).str.extract(r"^(.*?)\s*\[[^\]]*\]$", 1),
                        pl.col("metricName").cast(pl.String)).alias("metric"),
            pl.col("metricName").cast(pl.String).str.extract(r"\[([^\]]*)\]$", 1).alias("unit"),
        ).unique(["typeId", "metricId"], keep="first")
        names = names.with_columns(
            pl.when(pl.col("unit") == "MHz").then(pl.lit("Hz")).otherwise(pl.col("unit")).alias("unit"))
        return (
            f.select(pl.col("timestamp").cast(pl.Int64).alias("timestamp_ns"), pl.col("typeId").cast(pl.Int64),
                     pl.col("metricId").cast(pl.Int64), pl.col("value").cast(pl.Float64))
            .join(names, on=["typeId", "metricId"], how="inner")
            .select((pl.col("typeId") % 256).cast(pl.Int32).alias("device_id"), "timestamp_ns", "metric", "unit",
                    "value")
            .sort("device_id", "timestamp_ns", "metric")
        )

    def profiler_overhead(self) -> pl.DataFrame | None:
        f = self.x.read("PROFILER_OVERHEAD", ["start", "end", "globalTid", "nameId"])
        if f is None:
            return None
        f = self.x.resolve(f, "nameId", "name")
        return f.select(*_interval(), _pid("globalTid"), _tid("globalTid"), "name")


# Each unified table's source table, and for those whose intervals make up the trace's span (the
# rows `_Mapper` keeps: NVTX ranges and marks only), the condition on its rows.
SOURCE_TABLES = {
    "api_calls": "CUPTI_ACTIVITY_KIND_RUNTIME", "kernels": "CUPTI_ACTIVITY_KIND_KERNEL",
    "memcpy": "CUPTI_ACTIVITY_KIND_MEMCPY", "memset": "CUPTI_ACTIVITY_KIND_MEMSET",
    "graph_executions": "CUPTI_ACTIVITY_KIND_GRAPH_TRACE", "annotations": "NVTX_EVENTS", "os_runtime_calls": "OSRT_API",
}
_SPAN_ROWS = {"annotations": f"eventType IN ({', '.join(map(str, NVTX_KIND_BY_EVENT_TYPE))})"}
_LAUNCHED = ("kernels", "memcpy", "memset", "graph_executions")  # joined to the API call that launched them
_INDEPENDENT = ("callchains", "os_runtime_calls", "annotations", "synchronizations", "processes", "threads", "devices",
                "memory_events", "cpu_samples", "profiler_overhead", "gpu_metrics")


def _skipped_span(x: Export, skipped: set[str]) -> tuple[int | None, int | None]:
    """The span of the intervals of the tables not read (what `trace_span` would find in them:
    rows that end before they start are dropped at ingest), one aggregate per source table."""
    starts, ends = [], []
    for name in sorted(skipped & set(SOURCE_TABLES)):
        table = SOURCE_TABLES[name]
        if not (x.has(table, "start") and x.has(table, "end")):
            continue
        where = '("end" IS NULL OR start IS NULL OR "end" >= start)' + (f" AND {_SPAN_ROWS[name]}" if name in _SPAN_ROWS else "")
        start, end = x.aggregate(table, 'min(start), max("end")', where)
        starts += [start] if start is not None else []
        ends += [end] if end is not None else []
    return (min(starts) if starts else None), (max(ends) if ends else None)


def ingest_nsys(path: str, tables: set[str] | None = None) -> IngestResult:
    """The export's unified tables. tables: the only ones wanted (`tracelake stats` of a file reads
    just what its reports need); the others are not read, yet the traces row's span covers their
    intervals too (one aggregate each); its event_count counts the tables read. None: all."""
    wanted = {"api_calls", *_LAUNCHED, *_INDEPENDENT} if tables is None else set(tables)
    with open_export(path) as x:
        if not x.has("StringIds"):
            raise TraceError(path, "SQLite database is not an Nsight Systems export (no StringIds table)",
                             ErrorKind.NOT_A_TRACE)
        m = _Mapper(x)
        warnings: list[str] = []
        x.strings()
        # Tables are independent except that GPU work needs the API calls' launchers: read and map
        # them in parallel (ADBC, polars and Arrow release the GIL).
        launched = [name for name in _LAUNCHED if name in wanted]
        read_api = "api_calls" in wanted or bool(launched)
        with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
            sha_future = pool.submit(file_sha256, path)
            independent = {name: pool.submit(getattr(m, name)) for name in _INDEPENDENT if name in wanted}
            span_future = pool.submit(_skipped_span, x, set(SOURCE_TABLES) - wanted - ({"api_calls"} if read_api else set()))
            tables_read: dict[str, pl.DataFrame | None] = {}
            if read_api:
                tables_read["api_calls"] = m.api_calls()
            after = {name: pool.submit(getattr(m, name)) for name in launched}
            tables_read.update({name: f.result() for name, f in {**independent, **after}.items()})
            skipped_span = span_future.result()
        has_gpu_work = any(x.has_rows(SOURCE_TABLES[name]) for name in _LAUNCHED)
        meta = x.key_values("META_DATA_EXPORT") or x.key_values("EXPORT_META_DATA")
        capture = x.key_values("META_DATA_CAPTURE")
        session = x.read("TARGET_INFO_SESSION_START_TIME", ["utcEpochNs"])
        env = x.read("TARGET_INFO_SYSTEM_ENV", ["name", "value"])
        if not any(x.has(SOURCE_TABLES[name]) for name in ("api_calls", "kernels", "annotations", "os_runtime_calls")) \
                and not meta:
            raise TraceError(path, "SQLite database is not an Nsight Systems export (no nsys tables)",
                             ErrorKind.NOT_A_TRACE)
    if not has_gpu_work:
        warnings.append("no GPU activity (kernels, memcpy, memset, graph replays) in this export")
    clock_offset = session["utcEpochNs"][0] if session is not None and session.height else None
    hostname = None
    if env is not None:
        hosts = env.filter(pl.col("name").cast(pl.String).str.to_lowercase() == "hostname")["value"]
        hostname = str(hosts[0]) if len(hosts) else meta.get("EXPORT_HOST")
    out: dict[str, pa.Table] = {k: f.to_arrow() for k, f in tables_read.items() if f is not None}
    warnings += m.warnings + x.warnings
    drop_reversed_intervals(out, warnings)
    unique_lookups(out, warnings)
    starts, ends = zip(trace_span(out), skipped_span)
    start_ns = min((t for t in starts if t is not None), default=None)
    end_ns = max((t for t in ends if t is not None), default=None)
    sha = sha_future.result()
    out["traces"] = traces_row(
        source=NAME, path=path, file_bytes=os.path.getsize(path), content_sha256=sha, tool="Nsight Systems",
        tool_version=meta.get("EXPORT_PRODUCT_VERSION"), schema_version=meta.get("EXPORT_SCHEMA_VERSION"),
        start_ns=start_ns, end_ns=end_ns, clock_offset_ns=int(clock_offset) if clock_offset is not None else None,
        hostname=hostname, is_truncated=False, warnings=warnings,
        metadata={"export": meta, "capture": capture}, event_count=event_count(out),
    )
    return IngestResult(make_trace_id(path, sha), out, warnings)
