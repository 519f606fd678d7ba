"""The unified schema: one set of tables that every ingester fills.

This module is the contract between ingest/ and sql/. Each table is a list of columns with an
Arrow type, a one-line meaning (units in the name) and which sources fill it. docs/schema.md is
generated from it (lake/schema_doc.py, `make docs`), and the tests check that every Parquet file written matches it.

Conventions:
- Times are int64 nanoseconds on the trace's own clock (`*_ns`); `traces.clock_offset_ns` turns
  them into Unix-epoch ns. Durations are `end_ns - start_ns`.
- Missing values are NULL, never a fake default such as 0 or -1.
- Every table has `trace_id` first. In the lake it is the hive partition key of the table's
  folders (layout.py), so it is not stored inside the Parquet files.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

I64, I32, F64, STR, BOOL = pa.int64(), pa.int32(), pa.float64(), pa.string(), pa.bool_()
# The sources that fill these tables, by the name `traces.source` gives: what each reads. Each is a
# package of ingest/ (ingest/sources.py lists them; tests/test_sources.py checks that both name the same).
SOURCE_NAMES = {"nsys": "Nsight Systems SQLite export", "pytorch": "Kineto Chrome-trace JSON"}
ALL_SOURCES, NSYS, TORCH = ", ".join(SOURCE_NAMES), "nsys", "pytorch"


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    doc: str
    sources: str = ALL_SOURCES


@dataclass(frozen=True)
class Table:
    name: str
    doc: str
    columns: tuple[Column, ...]

    @property
    def arrow_schema(self) -> pa.Schema:
        """Schema of the Parquet file (without the trace_id partition column)."""
        return pa.schema([pa.field(c.name, c.type) for c in self.columns if c.name != "trace_id"])

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns if c.name != "trace_id"]


def _c(name, type_, doc, sources=ALL_SOURCES) -> Column:
    return Column(name, type_, doc, sources)


TRACE_ID = _c("trace_id", STR, "Trace the row belongs to (traces.trace_id); hive partition key in the lake.")


def _interval(what: str) -> tuple[Column, ...]:
    return (
        _c("start_ns", I64, f"Start of the {what}, ns on the trace clock."),
        _c("end_ns", I64, f"End of the {what}, ns on the trace clock."),
        _c("duration_ns", I64, "end_ns - start_ns."),
    )


_GPU_PLACE = (
    _c("device_id", I32, "GPU index as the source reports it (CUDA/HIP device id)."),
    _c("context_id", I64, "CUDA context id."),
    _c("stream_id", I64, "Stream the operation ran on."),
    _c("pid", I64, "OS process id of the process that launched it (NULL if unknown)."),
    _c("correlation_id", I64, "Id linking it to its launching API call (api_calls.correlation_id, same pid)."),
    _c("external_id", I64, "PyTorch 'External id' linking it to its cpu_op.", TORCH),
)

_ARGS_JSON = _c("args_json", STR, "All source arguments of the event as a JSON object (raw, for ad-hoc queries).")

TABLES: dict[str, Table] = {}


def _table(name: str, doc: str, *columns: Column) -> None:
    TABLES[name] = Table(name, doc, (TRACE_ID, *columns))


_table(
    "traces",
    "One row per ingested trace file.",
    _c("source", STR, " or ".join(f"'{name}' ({what})" for name, what in SOURCE_NAMES.items()) + "."),
    _c("path", STR, "The file path as given on the command line."),
    _c("file_name", STR, "Base name of the file."),
    _c("file_bytes", I64, "Size of the file on disk, bytes."),
    _c("content_sha256", STR, "SHA-256 of the file's bytes (as stored, i.e. of the .gz for gzipped files)."),
    _c("tool", STR, "Tool that wrote the trace: 'Nsight Systems' or 'PyTorch Profiler (Kineto)'."),
    _c("tool_version", STR, "nsys EXPORT_PRODUCT_VERSION; for PyTorch the CUPTI/runtime versions if recorded."),
    _c("schema_version", STR, "nsys EXPORT_SCHEMA_VERSION; Kineto schemaVersion."),
    _c("start_ns", I64, "Earliest event start in the trace, ns on the trace clock."),
    _c("end_ns", I64, "Latest event end in the trace, ns on the trace clock."),
    _c("duration_ns", I64, "end_ns - start_ns."),
    _c("clock_offset_ns", I64, "Add to any *_ns time to get Unix-epoch ns (NULL when the trace has no anchor)."),
    _c("rank", I32, "Distributed rank (PyTorch distributedInfo.rank); NULL when the trace does not say.", TORCH),
    _c("world_size", I32, "Distributed world size (distributedInfo.world_size).", TORCH),
    _c("distributed_backend", STR, "Distributed backend (nccl, gloo, ...).", TORCH),
    _c("hostname", STR, "Host the trace was recorded on, when recorded.", NSYS),
    _c("is_truncated", BOOL, "True when the file was cut short and only the complete events before the cut were kept."),
    _c("warnings", pa.list_(STR), "Problems found while ingesting (salvaged truncation, absurd values, ...)."),
    _c("metadata_json", STR, "Source metadata (Kineto top-level keys; nsys META_DATA_* tables) as JSON."),
    _c("event_count", I64, "Number of rows written to all event tables for this trace."),
    _c("ingested_at", pa.timestamp("us", tz="UTC"), "When tracelake ingested the file."),
    _c("tracelake_version", STR, "tracelake version that wrote the rows."),
)

_table(
    "devices",
    "GPUs described by the trace (nsys TARGET_INFO_GPU lists every GPU in the box; PyTorch deviceProperties).",
    _c("device_id", I32, "GPU index as used by device_id elsewhere."),
    _c("name", STR, "Marketing name, e.g. 'NVIDIA H100 80GB HBM3'."),
    _c("vendor", STR, "'nvidia' or 'amd' (from the name or the launch API names)."),
    _c("compute_major", I32, "Compute capability major."),
    _c("compute_minor", I32, "Compute capability minor."),
    _c("sm_count", I32, "Number of streaming multiprocessors (numSms / smCount)."),
    _c("warp_size", I32, "Threads per warp (warpSize / threadsPerWarp)."),
    _c("max_warps_per_sm", I32, "Most resident warps per SM (maxThreadsPerMultiprocessor / warpSize; maxWarpsPerSm)."),
    _c("max_blocks_per_sm", I32, "Most resident blocks per SM (maxBlocksPerSm).", NSYS),
    _c("registers_per_sm", I32, "32-bit registers per SM (regsPerMultiprocessor / maxRegistersPerSm)."),
    _c("registers_per_block", I32, "Most registers one block may use (regsPerBlock / maxRegistersPerBlock)."),
    _c("shared_memory_per_sm_bytes", I64,
       "Shared memory per SM at the largest carveout, bytes (sharedMemPerMultiprocessor / maxShmemPerSm)."),
    _c("shared_memory_per_block_bytes", I64,
       "Shared memory a block may use without opting in, bytes (sharedMemPerBlock / maxShmemPerBlock)."),
    _c("shared_memory_per_block_optin_bytes", I64,
       "Most shared memory a block may opt in to, bytes (sharedMemPerBlockOptin / maxShmemPerBlockOptin)."),
    _c("total_memory_bytes", I64, "Device memory, bytes."),
    _c("memory_bandwidth_bytes_per_s", I64, "Peak memory bandwidth, bytes/s.", NSYS),
    _c("clock_rate_hz", I64, "SM clock, Hz.", NSYS),
    _c("uuid", STR, "GPU UUID.", NSYS),
    _c("properties_json", STR, "Every property the source gives, as JSON."),
)

_table(
    "processes",
    "Processes seen in the trace.",
    _c("pid", I64, "OS process id (nsys: (globalPid >> 24) & 0xFFFFFF)."),
    _c("name", STR, "Process name."),
    _c("rank", I32, "Distributed rank of the process, when known.", TORCH),
)

_table(
    "threads",
    "Threads seen in the trace.",
    _c("pid", I64, "OS process id."),
    _c("tid", I64, "OS thread id (nsys: globalTid & 0xFFFFFF)."),
    _c("name", STR, "Thread name."),
)

_table(
    "kernels",
    "One row per GPU kernel execution.",
    *_interval("kernel execution"),
    *_GPU_PLACE,
    _c("tid", I64, "Thread that launched it (from the correlated API call; NULL if unknown)."),
    _c("name", STR, "Full (demangled) kernel name, as NVIDIA's reports print it."),
    _c("short_name", STR, "Base function name without templates and parameters."),
    _c("mangled_name", STR, "Mangled C++ name when recorded.", NSYS),
    _c("grid_x", I32, "Grid size x."),
    _c("grid_y", I32, "Grid size y."),
    _c("grid_z", I32, "Grid size z."),
    _c("block_x", I32, "Block size x."),
    _c("block_y", I32, "Block size y."),
    _c("block_z", I32, "Block size z."),
    _c("registers_per_thread", I32, "Registers per thread."),
    _c("static_shared_memory_bytes", I64, "Static shared memory per block, bytes.", NSYS),
    _c("dynamic_shared_memory_bytes", I64, "Dynamic shared memory per block, bytes.", NSYS),
    _c("shared_memory_bytes", I64, "Total shared memory per block (static + dynamic), bytes."),
    _c("local_memory_per_thread_bytes", I64, "Local memory per thread, bytes.", NSYS),
    _c("blocks_per_sm", F64, "Kineto 'blocks per SM' (grid blocks / SM count).", TORCH),
    _c("warps_per_sm", F64, "Kineto 'warps per SM'.", TORCH),
    _c("est_achieved_occupancy_pct", F64, "Kineto 'est. achieved occupancy %'.", TORCH),
    _c("graph_id", I64, "CUDA graph id when launched from a graph."),
    _c("graph_node_id", I64, "CUDA graph node id."),
    _c("green_context_id", I64, "Green context id.", NSYS),
    _c("collective_name", STR, "NCCL collective (e.g. allreduce) when Kineto recorded it.", TORCH),
    _ARGS_JSON,
)

_MEM_KIND_DOC = "'pageable', 'pinned', 'device', 'array', 'managed', 'device_static', 'managed_static' or 'unknown'"

_table(
    "memcpy",
    "One row per GPU memory copy.",
    *_interval("copy"),
    *_GPU_PLACE,
    _c("tid", I64, "Thread that issued it (from the correlated API call)."),
    _c("name", STR, "Source name: Kineto 'Memcpy HtoD (Pageable -> Device)'; nsys '[CUDA memcpy Host-to-Device]'."),
    _c("operation", STR, "NVIDIA's label: 'Host-to-Device', 'Device-to-Host', 'Device-to-Device', ..."),
    _c("copy_kind", STR, "Short direction code: HtoD, DtoH, DtoD, HtoH, PtoP, HtoA, AtoH, AtoA, AtoD, DtoA."),
    _c("src_kind", STR, f"Source memory kind: {_MEM_KIND_DOC}."),
    _c("dst_kind", STR, f"Destination memory kind: {_MEM_KIND_DOC}."),
    _c("bytes", I64, "Bytes copied."),
    _c("src_device_id", I32, "Source device (peer copies).", NSYS),
    _c("dst_device_id", I32, "Destination device (peer copies).", NSYS),
    _ARGS_JSON,
)

_table(
    "memset",
    "One row per GPU memset.",
    *_interval("memset"),
    *_GPU_PLACE,
    _c("tid", I64, "Thread that issued it (from the correlated API call)."),
    _c("name", STR, "Source name: Kineto 'Memset (Device)'; nsys '[CUDA memset]'."),
    _c("mem_kind", STR, f"Memory kind: {_MEM_KIND_DOC}."),
    _c("bytes", I64, "Bytes set."),
    _c("value", I64, "Byte value written.", NSYS),
    _ARGS_JSON,
)

_table(
    "graph_executions",
    "One row per CUDA graph replay recorded as a whole (nsys --cuda-graph-trace=graph, the default: CUPTI "
    "GRAPH_TRACE). With node-level tracing (--cuda-graph-trace=node) and in PyTorch traces the replay's kernels "
    "are rows of kernels/memcpy/memset instead, and this table is empty.",
    *(Column(c.name, c.type, c.doc, NSYS) for c in _interval("graph replay on the GPU (first node start to last node end)")),
    *(Column(c.name, c.type, c.doc, NSYS) for c in _GPU_PLACE[:5]),
    _c("tid", I64, "Thread that launched it (from the correlated cudaGraphLaunch).", NSYS),
    _c("graph_id", I64, "Id of the graph (CUDA_GRAPH_EVENTS 'Graph Creation'; the instantiated copy's id).", NSYS),
    _c("graph_exec_id", I64, "Id of the executable graph (cudaGraphExec_t) that was launched.", NSYS),
)

_table(
    "api_calls",
    "One row per CUDA/HIP runtime or driver API call (and other traced GPU libraries in nsys).",
    *_interval("API call on the CPU"),
    _c("pid", I64, "OS process id."),
    _c("tid", I64, "OS thread id."),
    _c("correlation_id", I64, "Id of the GPU work it launched (kernels/memcpy/memset.correlation_id)."),
    _c("external_id", I64, "PyTorch 'External id' of the cpu_op that made the call.", TORCH),
    _c("name", STR, "API name as recorded (nsys keeps version suffixes such as _v7000)."),
    _c("api", STR, "'runtime' or 'driver' (nsys eventClass; Kineto cuda_runtime/cuda_driver); 'backtrace' for the "
                   "twin row nsys --cudabacktrace adds per traced call (its callchain id is copied onto the call)."),
    _c("return_value", I64, "Return code.", NSYS),
    _c("callchain_id", I64, "callchains.callchain_id (kind 'cuda') of its backtrace (nsys --cudabacktrace).", NSYS),
    _c("cbid", I64, "CUPTI callback id.", TORCH),
    _ARGS_JSON,
)

_table(
    "synchronizations",
    "GPU synchronization activity (CUPTI SYNCHRONIZATION; Kineto cuda_sync).",
    *_interval("synchronization"),
    *_GPU_PLACE,
    _c("sync_type", STR, "'event_sync', 'stream_wait', 'stream_sync', 'context_sync' or 'unknown'."),
    _c("event_id", I64, "CUDA event involved, when any."),
    _ARGS_JSON,
)

_table(
    "annotations",
    "Named ranges: NVTX ranges and marks (nsys), user annotations and ProfilerStep#N (PyTorch).",
    _c("annotation_id", I64, "Row id, unique within the trace."),
    *_interval("range (end_ns is NULL for marks)"),
    _c("pid", I64, "Process id (for GPU-side annotations: the device id, as Kineto writes it)."),
    _c("tid", I64, "Thread id that opened the range (GPU-side: stream id)."),
    _c("name", STR, "Range text."),
    _c("domain", STR, "NVTX domain name (NULL for the default domain).", NSYS),
    _c("kind", STR, "'push_pop', 'start_end', 'mark' (NVTX); 'user_annotation', 'gpu_user_annotation' (PyTorch)."),
    _c("is_gpu", BOOL, "True for ranges drawn on a GPU stream (Kineto gpu_user_annotation)."),
    _c("category", I64, "NVTX category.", NSYS),
    _c("color", I64, "NVTX ARGB color.", NSYS),
    _c("external_id", I64, "Kineto External id.", TORCH),
    _c("parent_id", I64, "annotation_id of the innermost enclosing range on the same (pid, tid); NULL at top."),
    _c("depth", I32, "Nesting depth on (pid, tid): 0 for top-level ranges."),
    _ARGS_JSON,
)

_table(
    "cpu_ops",
    "PyTorch operators (Kineto cpu_op; 2021 'Operator').",
    _c("op_id", I64, "Row id, unique within the trace."),
    *_interval("operator on the CPU"),
    _c("pid", I64, "OS process id.", TORCH),
    _c("tid", I64, "OS thread id.", TORCH),
    _c("name", STR, "Operator name, e.g. aten::addmm.", TORCH),
    _c("external_id", I64, "External id: the key its API calls and kernels carry.", TORCH),
    _c("sequence_number", I64, "Autograd sequence number (links forward and backward ops).", TORCH),
    _c("fwd_thread_id", I64, "Forward thread id for backward ops.", TORCH),
    _c("parent_op_id", I64, "op_id of the innermost operator enclosing it on the same (pid, tid); NULL at top.", TORCH),
    _c("depth", I32, "Nesting depth of the operator on (pid, tid): 0 for top-level operators.", TORCH),
    _c("call_stack", STR, "Legacy 'Call stack' text (2021 traces).", TORCH),
    _c("flops", I64, "Estimated FLOPs (with_flops).", TORCH),
    _c("args_json", STR, "All args as JSON, including 'Input Dims', 'Input type', 'Input Strides' and 'Concrete "
                         "Inputs' (record_shapes); the view cpu_op_inputs exposes those as columns.", TORCH),
)

_table(
    "python_frames",
    "Python call frames (Kineto python_function, with_stack=True).",
    _c("frame_id", I64, "Kineto 'Python id', unique within the trace.", TORCH),
    _c("parent_frame_id", I64, "'Python parent id': the enclosing frame; NULL at the root.", TORCH),
    *_interval("frame"),
    _c("pid", I64, "OS process id.", TORCH),
    _c("tid", I64, "OS thread id.", TORCH),
    _c("name", STR, "Frame label as recorded, e.g. 'train.py(42): step'.", TORCH),
    _c("file", STR, "Source file for 'file(line): function' frames.", TORCH),
    _c("line", I32, "Line number.", TORCH),
    _c("function", STR, "Function name (or module class for 'nn.Module: X' frames).", TORCH),
    _c("frame_kind", STR, "'python' (source frame), 'module' (nn.Module call) or 'c_call' (builtin).", TORCH),
    _c("module_id", I64, "'Python module id' for module frames.", TORCH),
)

_table(
    "flows",
    "Flow arrows between events (Kineto ac2g CPU->GPU launches, fwdbwd autograd links).",
    _c("flow_id", I64, "Flow id (for ac2g: the correlation id).", TORCH),
    _c("kind", STR, "'ac2g' (also legacy 'async_cpu_to_gpu'), 'fwdbwd', ...", TORCH),
    _c("start_ts_ns", I64, "Time of the flow's start ('s' event).", TORCH),
    _c("start_pid", I64, "pid of the start.", TORCH),
    _c("start_tid", I64, "tid of the start.", TORCH),
    _c("end_ts_ns", I64, "Time of the flow's end ('f' event).", TORCH),
    _c("end_pid", I64, "pid of the end (GPU side: device id).", TORCH),
    _c("end_tid", I64, "tid of the end (GPU side: stream id).", TORCH),
)

_table(
    "memory_events",
    "Allocator events: Kineto [memory] instants; nsys CUDA_GPU_MEMORY_USAGE_EVENTS.",
    _c("event_id", I64, "Row id in time order (the source's order breaks ties), unique within the trace."),
    _c("ts_ns", I64, "When it happened."),
    _c("pid", I64, "OS process id."),
    _c("tid", I64, "OS thread id.", TORCH),
    _c("device_type", STR, "'cuda' or 'cpu'."),
    _c("device_id", I32, "Device index."),
    _c("address", I64, "Address of the block."),
    _c("bytes", I64, "Signed size: > 0 allocation, < 0 free."),
    _c("total_allocated_bytes", I64, "Allocated bytes on the device after the event.", TORCH),
    _c("total_reserved_bytes", I64, "Reserved (cached) bytes on the device after the event.", TORCH),
    _c("mem_kind", STR, f"Memory kind: {_MEM_KIND_DOC}.", NSYS),
    _c("correlation_id", I64, "Correlation id of the allocating API call.", NSYS),
)

_table(
    "counters",
    "Counter samples (Kineto 'C' events).",
    _c("ts_ns", I64, "Sample time."),
    _c("pid", I64, "Process (or device) the counter belongs to."),
    _c("name", STR, "Counter name (event name + '.' + series)."),
    _c("value", F64, "Counter value."),
)

_table(
    "callchains",
    "Call stacks: nsys CUDA_CALLCHAINS (backtraces of CUDA API calls), SAMPLING_CALLCHAINS (CPU samples), "
    "OSRT_CALLCHAINS. One row per frame.",
    _c("kind", STR, "'cuda' (api_calls.callchain_id), 'sampling' (cpu_samples.sample_id), 'osrt'.", NSYS),
    _c("callchain_id", I64, "Stack id within its kind.", NSYS),
    _c("depth", I32, "Frame position, 0 = innermost (the leaf).", NSYS),
    _c("symbol", STR, "Function symbol.", NSYS),
    _c("module", STR, "Binary or library the frame is in.", NSYS),
    _c("is_kernel_mode", BOOL, "Frame in the OS kernel.", NSYS),
    _c("is_unresolved", BOOL, "Symbol could not be resolved.", NSYS),
)

_table(
    "cpu_samples",
    "CPU sampling events (nsys COMPOSITE_EVENTS); their stacks are callchains of kind 'sampling'.",
    _c("sample_id", I64, "Sample id = callchains.callchain_id (kind 'sampling').", NSYS),
    _c("ts_ns", I64, "Sample time.", NSYS),
    _c("pid", I64, "OS process id.", NSYS),
    _c("tid", I64, "OS thread id.", NSYS),
    _c("cpu", I32, "CPU core.", NSYS),
    _c("thread_state", STR, "Thread state label (Running, Waiting, ...).", NSYS),
)

_table(
    "gpu_metrics",
    "GPU hardware metric samples (nsys --gpu-metrics-devices: GPU_METRICS with TARGET_INFO_GPU_METRICS), "
    "one row per sample and metric. A sample covers [timestamp_ns, the device's next sample).",
    _c("device_id", I32, "GPU the sample is of (the low byte of the sample's typeId; devices.device_id).", NSYS),
    _c("timestamp_ns", I64, "Start of the sampling period the value describes.", NSYS),
    _c("metric", STR, "Metric name without its unit, e.g. 'SMs Active', 'DRAM Read Bandwidth'.", NSYS),
    _c("unit", STR, "The unit in the metric's name: 'Throughput %' (percent of the peak sustained rate), "
                    "'Avg', 'Avg Warps per Cycle'; 'Hz' for the clocks (named '[MHz]' in the export, whose "
                    "values are the per-second counts before the metric set's 1e-6 multiplier).", NSYS),
    _c("value", F64, "The sample's value in that unit.", NSYS),
)

_table(
    "os_runtime_calls",
    "OS runtime library calls (nsys OSRT_API).",
    *_interval("call"),
    _c("pid", I64, "OS process id.", NSYS),
    _c("tid", I64, "OS thread id.", NSYS),
    _c("name", STR, "Function name (pthread_mutex_lock, read, ...).", NSYS),
    _c("return_value", I64, "Return value.", NSYS),
    _c("nesting_level", I32, "Nesting level.", NSYS),
    _c("callchain_id", I64, "callchains.callchain_id (kind 'osrt').", NSYS),
)

_table(
    "profiler_overhead",
    "Time the profiler itself used (nsys PROFILER_OVERHEAD); NVIDIA's gpu_gaps counts it as busy.",
    *_interval("overhead"),
    _c("pid", I64, "OS process id.", NSYS),
    _c("tid", I64, "OS thread id.", NSYS),
    _c("name", STR, "Overhead kind, e.g. 'CUDA profiling data flush overhead'.", NSYS),
)

DERIVED = "derived"

_table(
    "callctx_nodes",
    "Calling-context tree nodes, built at ingest from the tables above (analysis/callctx_build.py). Two trees "
    "per trace: 'stack' (Python frames > operators, or the native backtrace) and 'nvtx' (named ranges).",
    _c("tree", STR, "'stack' or 'nvtx'.", DERIVED),
    _c("node_id", I64, "Node id within the trace and tree; 0 is the root.", DERIVED),
    _c("parent_id", I64, "Parent node; NULL for the root.", DERIVED),
    _c("depth", I32, "Distance from the root.", DERIVED),
    _c("label", STR, "Frame label: 'file.py(12): fn', 'aten::addmm', a native symbol, a range name, a kernel.",
       DERIVED),
    _c("kind", STR, "'root', 'python', 'op', 'native', 'nvtx', 'graph' (the CUDA graph launch call that replayed "
                    "the operations below it), 'unattributed', or the GPU operation's category ('kernel', 'memcpy', "
                    "'memset', 'graph') for leaves.", DERIVED),
    _c("file", STR, "Source file of a Python frame.", DERIVED),
    _c("line", I32, "Line of a Python frame.", DERIVED),
    _c("function", STR, "Function of a Python frame, or the operator name.", DERIVED),
)

_table(
    "callctx_gpu_ops",
    "Every GPU operation with the calling-context leaf node it is attributed to, per tree.",
    _c("tree", STR, "'stack' or 'nvtx'.", DERIVED),
    _c("node_id", I64, "callctx_nodes.node_id of the leaf (the operation under its context).", DERIVED),
    _c("category", STR, "'kernel', 'memcpy', 'memset', or 'graph' (a graph replay traced as a whole).", DERIVED),
    _c("start_ns", I64, "Start of the operation (ns).", DERIVED),
    _c("duration_ns", I64, "Its duration (ns).", DERIVED),
    _c("bytes", I64, "Bytes moved or set (memcpy/memset).", DERIVED),
)

_table(
    "memory_context",
    "Where each allocator event (memory_events) happened, built at ingest with the calling-context trees "
    "(analysis/memory_context.py).",
    _c("event_id", I64, "memory_events.event_id.", DERIVED),
    _c("context_id", I64, "memory_call_contexts.context_id: where the event happened.", DERIVED),
)

_table(
    "memory_blocks",
    "Allocator blocks: each allocation paired with its free, the next event at the same address on the same "
    "process and device (analysis/memory_context.py). Events without an address make none.",
    _c("pid", I64, "Process.", DERIVED),
    _c("device_type", STR, "'cuda' or 'cpu'.", DERIVED),
    _c("device_id", I32, "Device index.", DERIVED),
    _c("address", I64, "Block address.", DERIVED),
    _c("mem_kind", STR, f"nsys memory kind: {_MEM_KIND_DOC}; NULL for PyTorch.", DERIVED),
    _c("bytes", I64, "Block size, bytes.", DERIVED),
    _c("status", STR, "'freed', 'never_freed' (not freed in the trace), 'free_missing' (allocated again at the "
                      "address first) or 'alive_before_trace' (a free of a block allocated before the trace).",
       DERIVED),
    _c("alloc_event_id", I64, "memory_events.event_id of the allocation (NULL: alive before the trace).", DERIVED),
    _c("free_event_id", I64, "memory_events.event_id of the free (NULL: not freed in the trace).", DERIVED),
    _c("alloc_ns", I64, "When it was allocated.", DERIVED),
    _c("free_ns", I64, "When it was freed.", DERIVED),
    _c("alloc_context_id", I64, "memory_call_contexts.context_id of the allocation.", DERIVED),
    _c("free_context_id", I64, "memory_call_contexts.context_id of the free.", DERIVED),
)

_table(
    "memory_call_contexts",
    "The distinct places allocator events happened (memory_context.context_id), built at ingest.",
    _c("context_id", I64, "Id within the trace.", DERIVED),
    _c("operator", STR, "Innermost operator enclosing the event: the PyTorch cpu_op on the same thread; for nsys "
                        "the innermost at::_ops frame of the allocating call's backtrace, else its innermost NVTX "
                        "range. NULL outside any.", DERIVED),
    _c("operator_stack", pa.list_(STR), "Operators enclosing the event, outermost first (its last is operator).",
       DERIVED),
    _c("call_stack", STR, "Calling context, outermost first, ' > ' between frames: Python frames > operators "
                          "(PyTorch; autograd-thread events get the main thread's Python frames in front), or the "
                          "allocating call's folded native backtrace (nsys). NULL when none was recorded.", DERIVED),
    _c("nvtx_path", STR, "NVTX ranges / user annotations enclosing the event (nsys: the allocating call), "
                         "outermost first, ' > ' between them. NULL outside any.", DERIVED),
    _c("category", STR, "Allocation site: 'optimizer', 'backward', 'forward' or 'other', from the frame, operator "
                        "and range names of the context (analysis/memory_context.py says which).", DERIVED),
)

_table(
    "cp_steps",
    "Critical path of each step (analysis/critpath_build.py, at ingest): its window and the length of the longest "
    "path through its dependency graph (HTA's critical path). The views critical_path* read it.",
    _c("step_id", I64, "Step id within the trace (cp_nodes.step_id, cp_edges.step_id).", DERIVED),
    _c("pid", I64, "Process of the step range (NULL for the whole-trace step).", DERIVED),
    _c("step", STR, "Step range name (ProfilerStep#N, step N); '(trace)' when the trace has no step ranges.", DERIVED),
    _c("step_index", I64, "Order of the step in its process (0 = first), as in the steps view.", DERIVED),
    _c("start_ns", I64, "Step range start (ns).", DERIVED),
    _c("end_ns", I64, "Step range end (ns).", DERIVED),
    _c("has_sync_events", BOOL, "The trace records GPU synchronizations (Kineto cuda_sync, CUPTI "
                                "SYNCHRONIZATION); without them CPU waits on the GPU are unseen.", DERIVED),
    _c("path_ns", I64, "Length of the longest path (sum of its edge weights, ns).", DERIVED),
    _c("path_ok", BOOL, "False when no path could be computed (the graph had a cycle).", DERIVED),
)

_table(
    "cp_nodes",
    "Nodes of the critical-path graphs: the start and the end of each event in a step's graph.",
    _c("node_id", I64, "Node id within the trace: 2 x event_id for the start, 2 x event_id + 1 for the end.", DERIVED),
    _c("event_id", I64, "Event id within the trace.", DERIVED),
    _c("step_id", I64, "cp_steps.step_id.", DERIVED),
    _c("ts_ns", I64, "Time of the node (the event's start or end, ns).", DERIVED),
    _c("is_start", BOOL, "True for the start node of the event.", DERIVED),
    _c("kind", STR, "'cpu_op', 'call' (CUDA runtime/driver API), 'nvtx', 'kernel', 'memcpy' or 'memset'.", DERIVED),
    _c("name", STR, "Event name.", DERIVED),
    _c("pid", I64, "Process.", DERIVED),
    _c("tid", I64, "Thread (CPU events).", DERIVED),
    _c("device_id", I32, "GPU (GPU events).", DERIVED),
    _c("stream_id", I64, "Stream (GPU events).", DERIVED),
    _c("correlation_id", I64, "Correlation id (calls and GPU events).", DERIVED),
    _c("start_ns", I64, "Event start (ns).", DERIVED),
    _c("end_ns", I64, "Event end (ns).", DERIVED),
)

_table(
    "cp_edges",
    "Edges of the critical-path graphs, typed and weighted (see analysis/critpath_graph.py for the types).",
    _c("edge_id", I64, "Edge id within the trace.", DERIVED),
    _c("step_id", I64, "cp_steps.step_id.", DERIVED),
    _c("src_node", I64, "cp_nodes.node_id it leaves.", DERIVED),
    _c("dst_node", I64, "cp_nodes.node_id it enters.", DERIVED),
    _c("edge_type", STR, "'operator', 'dependency', 'launch', 'kernel_kernel', 'sync', 'gpu_sync' or "
                         "'launch_order' (a what-if-only constraint).", DERIVED),
    _c("weight_ns", I64, "Weight (ns).", DERIVED),
    _c("class", STR, "Attribution class: 'cpu', 'launch_overhead', 'kernel_to_kernel', 'gpu_compute', "
                     "'communication', 'memcpy', 'sync_wait'; NULL for zero-weight dependencies.", DERIVED),
    _c("event_id", I64, "Event the edge's time is attributed to (HTA's rule), NULL for dependencies.", DERIVED),
    _c("path_order", I64, "Position on the step's critical path (0 = first edge); NULL when off the path.", DERIVED),
)

# The tables the Python analyses build at ingest from a trace's other tables (analysis/callctx_build.py,
# analysis/critpath_build.py): the calling context (with the memory context) and the critical path.
CALLCTX_TABLES = ("callctx_nodes", "callctx_gpu_ops", "memory_context", "memory_blocks", "memory_call_contexts")
CRITPATH_TABLES = ("cp_steps", "cp_nodes", "cp_edges")

EVENT_TABLES = [name for name in TABLES
                if name not in ("traces", "devices", "processes", "threads", *CALLCTX_TABLES, *CRITPATH_TABLES)]
