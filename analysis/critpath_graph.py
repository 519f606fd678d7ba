"""The dependency graph of each step: what had to finish before what (Holistic Trace Analysis'
critical-path graph, built from the unified tables of one trace).

Nodes are the start and the end of events: CPU spans (PyTorch operators, CUDA runtime/driver
calls and data-loading ranges; Nsight runtime/driver calls and NVTX ranges) and GPU operations (kernels, memcpy, memset).
Event i has start node 2i and end node 2i+1. Edges, with a type and a weight in ns:
- 'operator': between consecutive start/end points of nested CPU spans on a thread (weight: the
  time between them); the span of a GPU operation (its duration); the span of a CUDA call that
  takes the runtime lock (cudaLaunchKernel, cudaMemcpyAsync, cudaHostAlloc).
- 'dependency' (weight 0): one top-level CPU span to the next on a thread (idle CPU time between
  them is not on any path), and the runtime-lock order between calls of different threads.
- 'launch': the launching call's start to its GPU operation's start, when the stream was idle at
  the launch (weight: launch overhead).
- 'kernel_kernel': the previous operation on the stream to this one, when this one was queued
  behind it (weight: the gap, below 1.5 ms).
- 'sync': a GPU operation's end to the end of the CPU call that waited for it (stream, device or
  event synchronization; weight: the call's time after both it had started and the GPU had
  finished, i.e. its wake-up latency; HTA gives these edges weight 0).
- 'gpu_sync' (weight 0): cudaStreamWaitEvent: the recorded operation's end to the start of the
  first operation launched on the waiting stream after the wait.
- 'launch_order' (weight 0): each launch to its operation where no 'launch' edge was added; not
  part of the measured path (HTA leaves it out too), used by the what-if re-runs so that no
  operation starts before its launch when other edges shrink (the re-runs add the stream order
  too: critpath_scenarios.stream_order_edges).
Calls that block on the GPU (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize,
cudaEventQuery, cudaMemcpy) have a zero-weight final 'operator' edge: their waiting is the GPU
work the 'sync' edge brings in, not CPU time.

PyTorch's backward thread is merged into the forward thread (HTA does the same), so the path runs
through the backward pass. Steps are the CPU ranges named like ProfilerStep#N / step N (step rule
'profiler_step' of sql/base/step_rule_pattern.sql, as the `step_ranges` view reads it); a trace
without any is one step '(trace)'. A CPU span belongs to the step its start lies in; a GPU
operation to the step of its launching call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from ..lake.catalog import step_rule_pattern

WHOLE_TRACE_STEP = "(trace)"
# Process start-up and teardown (module load/unload, context creation/destruction, the runtime's
# initialisation): left out of a trace without steps, whose one '(trace)' step would otherwise
# spend its path there; so is every API call after the trace's last GPU operation (cudaFree at exit...)
LIFECYCLE_CALLS = (r"^(cu|cuda|hip)(Init|ModuleLoad\w*|ModuleUnload|LibraryLoad\w*|LibraryUnload|CtxCreate\w*|"
                   r"CtxDestroy\w*|DevicePrimaryCtx\w*|DeviceReset|GetExportTable|ProfilerStop)(_v\d+)?$")
LOCK_CALLS = ("cudaLaunchKernel", "cudaMemcpyAsync", "cudaHostAlloc")
BLOCKING_CALLS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery", "cudaEventSynchronize",
                  "cudaMemcpy", "cudaMemcpyAsync")
KERNEL_KERNEL_MAX_GAP_NS = 1_500_000  # HTA: a longer gap is an unseen dependency, not a queueing delay
# Data loading: PyTorch's DataLoader iterator operators and user ranges named for data loading
# (HTA's data_load_events, here with a default); their time is class 'data_loading', not 'cpu'.
DATA_LOADING = r"^enumerate\(Data(Loader|Pipe)\)|(?i:data_?load)"
COMMUNICATION = re.compile(r"^(nccl|rccl|hccl)|ncclKernel|ncclDevKernel", re.IGNORECASE)  # = gpu_op_class.sql

CLASSES = ("cpu", "data_loading", "launch_overhead", "kernel_to_kernel", "gpu_compute", "communication", "memcpy", "sync_wait")


@dataclass
class Graph:
    steps: pl.DataFrame   # step_id, pid, step, step_index, start_ns, end_ns, has_sync_events
    events: pl.DataFrame  # ev, step_id, kind, name, pid, tid, device_id, stream_id, correlation_id, start_ns, end_ns
    edges: pl.DataFrame   # src, dst, edge_type, weight_ns, class, attr_ev
    warnings: list[str]


def api_base(name: pl.Expr) -> pl.Expr:
    """'cudaLaunchKernel_v7000' -> 'cudaLaunchKernel' (nsys keeps the version suffix)."""
    return name.str.replace(r"_v[0-9]+$", "")


def _step_regex() -> str:
    return "(?i)" + step_rule_pattern("profiler_step")


def _frame(t: pa.Table, cols: list[str]) -> pl.DataFrame:
    return pl.from_arrow(t.select(cols)) if t.num_rows else pl.from_arrow(t.select(cols).slice(0, 0))


def _steps(tables: dict[str, pa.Table]) -> pl.DataFrame:
    ann = _frame(tables["annotations"], ["pid", "name", "domain", "kind", "start_ns", "end_ns", "is_gpu"])
    # the step's name as nvtx_ranges spells it (':step 3' for NVTX), so that steps and the critical path join
    nvtx = pl.col("kind").is_in(["push_pop", "start_end"])
    range_name = pl.when(nvtx).then(pl.col("domain").fill_null("") + ":" + pl.col("name").fill_null("")) \
        .otherwise(pl.col("name"))
    steps = (ann.filter(~pl.col("is_gpu").fill_null(False) & pl.col("end_ns").is_not_null()
                        & pl.col("name").str.replace(r"^[^:]*:", "").str.contains(_step_regex()))
             .sort("pid", "start_ns")
             .with_columns(pl.int_range(pl.len()).over("pid").cast(pl.Int64).alias("step_index"))
             .select("pid", range_name.alias("step"), "step_index", "start_ns", "end_ns"))
    if steps.height == 0:
        t = tables["traces"]
        bounds = [(None, None)]
        if t.num_rows:
            bounds = [(t.column("start_ns")[0].as_py(), t.column("end_ns")[0].as_py())]
        steps = pl.DataFrame({"pid": [None], "step": [WHOLE_TRACE_STEP], "step_index": [0],
                              "start_ns": [bounds[0][0]], "end_ns": [bounds[0][1]]},
                             schema={"pid": pl.Int64, "step": pl.String, "step_index": pl.Int64,
                                     "start_ns": pl.Int64, "end_ns": pl.Int64})
    return steps.with_row_index("step_id").with_columns(pl.col("step_id").cast(pl.Int64))


def _without_lifecycle(spans: pl.DataFrame, tables: dict[str, pa.Table]) -> pl.DataFrame:
    """`spans` without process start-up and teardown calls (LIFECYCLE_CALLS, and calls after the
    last GPU operation)."""
    ends = [tables[t].column("end_ns") for t in ("kernels", "memcpy", "memset") if tables[t].num_rows]
    last = max((pc.max(e).as_py() or 0 for e in ends), default=None)
    calls = pl.col("kind") == "call"
    drop = calls & pl.col("name").str.contains(LIFECYCLE_CALLS)
    if last is not None:
        drop = drop | (calls & (pl.col("start_ns") >= last))
    return spans.filter(~drop)


def _assign_steps(frame: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """step_id of the step whose window holds each row's start (same pid when the step has one)."""
    whole = steps["pid"].null_count() == steps.height
    right = steps.select("step_id", "pid", pl.col("start_ns").alias("step_start"), pl.col("end_ns").alias("step_end"))
    left = frame.sort("start_ns")
    if whole:
        joined = left.join_asof(right.drop("pid").sort("step_start"), left_on="start_ns", right_on="step_start")
    else:
        joined = left.join_asof(right.sort("step_start"), left_on="start_ns", right_on="step_start", by="pid",
                                 check_sortedness=False)
    return joined.filter(pl.col("start_ns") <= pl.col("step_end")).drop("step_start", "step_end")


def _cpu_spans(tables: dict[str, pa.Table], is_nsys: bool) -> pl.DataFrame:
    cols = ["pid", "tid", "start_ns", "end_ns", "name"]
    api = _frame(tables["api_calls"], cols + ["correlation_id", "api"]).filter(pl.col("api").is_in(["runtime", "driver"]))
    parts = [api.select(*cols, "correlation_id", pl.lit("call").alias("kind"))]
    if not is_nsys:
        ops = _frame(tables["cpu_ops"], cols)
        parts.append(ops.with_columns(pl.lit(None, pl.Int64).alias("correlation_id"), pl.lit("cpu_op").alias("kind")))
        ann = _frame(tables["annotations"], cols + ["is_gpu"])
        loading = ann.filter(~pl.col("is_gpu").fill_null(False) & pl.col("end_ns").is_not_null()
                             & pl.col("name").str.contains(DATA_LOADING))
        parts.append(loading.select(*cols, pl.lit(None, pl.Int64).alias("correlation_id"),
                                    pl.lit("annotation").alias("kind")))
    else:
        ann = _frame(tables["annotations"], cols + ["is_gpu"])
        nvtx = ann.filter(~pl.col("is_gpu").fill_null(False) & pl.col("end_ns").is_not_null()
                          & ~pl.col("name").str.replace(r"^[^:]*:", "").str.contains(_step_regex()))
        parts.append(nvtx.select(*cols, pl.lit(None, pl.Int64).alias("correlation_id"), pl.lit("nvtx").alias("kind")))
    spans = pl.concat(parts, how="vertical_relaxed")
    return spans.filter(pl.col("end_ns") > pl.col("start_ns")).with_columns(pl.col("name").fill_null("(unnamed)"))


def _gpu_ops(tables: dict[str, pa.Table]) -> pl.DataFrame:
    cols = ["pid", "device_id", "stream_id", "correlation_id", "start_ns", "end_ns", "name"]
    parts = [_frame(tables[t], cols).with_columns(pl.lit(kind).alias("kind"))
             for t, kind in (("kernels", "kernel"), ("memcpy", "memcpy"), ("memset", "memset"))]
    ops = pl.concat(parts, how="vertical_relaxed").with_columns(pl.col("name").fill_null("(unnamed)"))
    return ops.filter(pl.col("end_ns").is_not_null() & pl.col("start_ns").is_not_null()
                      & pl.col("correlation_id").is_not_null())


def _merged_tids(tables: dict[str, pa.Table], spans: pl.DataFrame) -> pl.DataFrame:
    """HTA's thread merge: the one thread with 'autograd' operators goes onto the one with 'forward' ones."""
    named = pl.concat([
        _frame(tables["cpu_ops"], ["pid", "tid", "name"]),
        _frame(tables["annotations"], ["pid", "tid", "name", "is_gpu"]).filter(~pl.col("is_gpu").fill_null(True))
        .drop("is_gpu"),
    ], how="vertical_relaxed")

    def only_tid(word: str):
        tids = named.filter(pl.col("name").str.contains(word, literal=True)).select("pid", "tid").unique()
        return (tids["pid"][0], tids["tid"][0]) if tids.height == 1 else None

    fwd, bwd = only_tid("forward"), only_tid("autograd")
    lane = pl.col("tid")
    if fwd and bwd and fwd != bwd and fwd[0] == bwd[0]:
        lane = pl.when((pl.col("pid") == bwd[0]) & (pl.col("tid") == bwd[1])).then(pl.lit(fwd[1])).otherwise(lane)
    return spans.with_columns(lane.alias("lane_tid"))


def _edges_frame(src, dst, edge_type: str, weight, attr_ev) -> pl.DataFrame:
    n = len(src)
    return pl.DataFrame({"src": np.asarray(src, dtype=np.int64), "dst": np.asarray(dst, dtype=np.int64),
                         "edge_type": pl.repeat(edge_type, n, dtype=pl.String, eager=True),
                         "weight_ns": np.asarray(weight, dtype=np.int64),
                         "attr_ev": pl.Series(attr_ev, dtype=pl.Int64) if attr_ev is not None
                         else pl.repeat(None, n, dtype=pl.Int64, eager=True)},
                        schema={"src": pl.Int64, "dst": pl.Int64, "edge_type": pl.String, "weight_ns": pl.Int64,
                                "attr_ev": pl.Int64})


def _thread_edges(cpu: pl.DataFrame) -> list[pl.DataFrame]:
    """Nesting edges of each (step, thread): consecutive start/end points in depth-first order."""
    if cpu.height == 0:
        return []
    enter = cpu.select("ev", "step_id", "lane_pid", "lane_tid", pl.col("start_ns").alias("ts"),
                       pl.lit(1, pl.Int8).alias("is_enter"), (-pl.col("end_ns")).alias("tie"))
    leave = cpu.select("ev", "step_id", "lane_pid", "lane_tid", pl.col("end_ns").alias("ts"),
                       pl.lit(0, pl.Int8).alias("is_enter"), (-pl.col("start_ns")).alias("tie"))
    tok = (pl.concat([enter, leave]).sort("step_id", "lane_pid", "lane_tid", "ts", "is_enter", "tie", "ev")
           .with_columns((2 * pl.col("is_enter").cast(pl.Int64) - 1).alias("delta")))
    lane_key = ["step_id", "lane_pid", "lane_tid"]
    tok = tok.with_columns(
        (pl.col("delta").cum_sum().over(lane_key) - pl.col("delta")).alias("open_before"),
        pl.int_range(pl.len()).alias("pos"),
    )
    ev = tok["ev"].to_numpy()
    is_enter = tok["is_enter"].to_numpy().astype(bool)
    ts = tok["ts"].to_numpy()
    open_before = tok["open_before"].to_numpy()
    lock = cpu.sort("ev")["is_lock"].to_numpy()
    blocking = cpu.sort("ev")["is_blocking"].to_numpy()
    ev0 = int(cpu["ev"].min())
    same_lane = np.ones(len(tok), dtype=bool)
    for col in lane_key:
        v = tok[col].to_numpy()
        same_lane[1:] &= v[1:] == v[:-1]
    same_lane[0] = False
    p = np.flatnonzero(same_lane[1:]) if len(tok) > 1 else np.array([], dtype=np.int64)
    c = p + 1
    lock_p, lock_c = lock[ev[p] - ev0], lock[ev[c] - ev0]
    shares_lock = lock_p & lock_c & (is_enter[p] | ~is_enter[c])
    p, c = p[~shares_lock], c[~shares_lock]
    node_p = 2 * ev[p] + (~is_enter[p])
    node_c = 2 * ev[c] + (~is_enter[c])
    top = is_enter[c] & (open_before[c] == 0)
    weight = np.where(top | (~is_enter[c] & blocking[ev[c] - ev0]), 0, ts[c] - ts[p])
    # attribution (HTA): start -> x: the started event; x -> end: the ending event; end -> start: the parent
    parent = _parents(tok)
    attr = np.where(is_enter[p], ev[p], np.where(~is_enter[c], ev[c], parent[c]))
    out = []
    for mask, kind in ((top, "dependency"), (~top, "operator")):
        out.append(_edges_frame(node_p[mask], node_c[mask], kind, weight[mask],
                                None if kind == "dependency" else _null_if_negative(attr[mask])))
    return out


def _null_if_negative(values: np.ndarray) -> pl.Series:
    """An Int64 Series of the values, NULL where negative (no Python object per value)."""
    series = pl.Series(values, dtype=pl.Int64)
    return pl.select(pl.when(series >= 0).then(series)).to_series()


def _parents(tok: pl.DataFrame) -> np.ndarray:
    """For each token, the event of the innermost span open around it (-1 at top level): the last
    start on the lane one level up."""
    starts = tok.filter(pl.col("is_enter") == 1).select("step_id", "lane_pid", "lane_tid", "pos",
                                                       pl.col("open_before").alias("level"), pl.col("ev").alias("parent"))
    want = tok.select("step_id", "lane_pid", "lane_tid", "pos",
                      (pl.col("open_before") - (1 - pl.col("is_enter").cast(pl.Int64)) - 1).alias("level"))
    joined = want.join_asof(starts, on="pos", by=["step_id", "lane_pid", "lane_tid", "level"], strategy="backward",
                            check_sortedness=False)
    return joined.sort("pos")["parent"].fill_null(-1).to_numpy()


def _lock_edges(cpu: pl.DataFrame) -> list[pl.DataFrame]:
    """HTA's runtime-lock order: calls that take the CUDA runtime lock complete one at a time."""
    calls = cpu.filter(pl.col("is_lock"))
    if calls.height == 0:
        return []
    tok = pl.concat([
        calls.select("ev", "step_id", pl.col("start_ns").alias("ts"), pl.lit(True).alias("is_enter")),
        calls.select("ev", "step_id", pl.col("end_ns").alias("ts"), pl.lit(False).alias("is_enter")),
    ]).sort("step_id", "ts", "ev")
    ev, ts = tok["ev"].to_numpy(), tok["ts"].to_numpy()
    is_enter, step = tok["is_enter"].to_numpy(), tok["step_id"].to_numpy()
    n = len(tok)
    new_step = np.r_[True, step[1:] != step[:-1]]
    exits = np.flatnonzero(~is_enter)
    # each start is closed by the first end after it in the same step
    closer = np.searchsorted(exits, np.arange(n))
    starts = np.flatnonzero(is_enter & (closer < len(exits)))
    starts = starts[step[exits[closer[starts]]] == step[starts]]
    end_tok = exits[closer[starts]]
    own = ev[starts] == ev[end_tok]
    node_s, node_e = 2 * ev[starts], 2 * ev[end_tok] + 1
    out = [_edges_frame(node_s[own], node_e[own], "operator", ts[end_tok[own]] - ts[starts[own]], ev[starts[own]]),
           _edges_frame(node_s[~own], node_e[~own], "dependency", np.zeros((~own).sum()), None)]
    # consecutive ends
    e2 = np.flatnonzero(~is_enter[1:] & ~is_enter[:-1] & ~new_step[1:]) + 1
    out.append(_edges_frame(2 * ev[e2 - 1] + 1, 2 * ev[e2] + 1, "dependency", np.zeros(len(e2)), None))
    return out


def _queue_lengths(calls: pl.DataFrame, ops: pl.DataFrame) -> pl.DataFrame:
    """HTA's queue length per stream: +1 at each launch call's start, -1 at each operation's start;
    the value just after the call (ql_call) and just after the operation starts (ql_op)."""
    linked = ops.join(calls.select("pid", "correlation_id", pl.col("start_ns").alias("call_start")),
                      on=["pid", "correlation_id"], how="inner")
    q = pl.concat([
        linked.select("gev", "device_id", "stream_id", pl.col("call_start").alias("ts"), pl.lit(1).alias("d"),
                      pl.lit(True).alias("is_call")),
        linked.select("gev", "device_id", "stream_id", pl.col("start_ns").alias("ts"), pl.lit(-1).alias("d"),
                      pl.lit(False).alias("is_call")),
    ]).sort("device_id", "stream_id", "ts", "d", maintain_order=True)  # ties: the operation starts first
    q = q.with_columns(pl.col("d").cum_sum().over("device_id", "stream_id").alias("ql"))
    return (q.filter(pl.col("is_call")).select("gev", pl.col("ql").alias("ql_call"))
            .join(q.filter(~pl.col("is_call")).select("gev", pl.col("ql").alias("ql_op")), on="gev"))


def _sync_rows(tables: dict[str, pa.Table], calls: pl.DataFrame) -> pl.DataFrame:
    """Synchronization rows joined to the CPU call that waited (by correlation id), with what they wait on."""
    s = tables["synchronizations"]
    if s.num_rows == 0:
        return pl.DataFrame()
    f = pl.from_arrow(s.select(["pid", "device_id", "stream_id", "correlation_id", "start_ns", "end_ns", "sync_type",
                                "args_json"]))
    f = f.with_columns(
        pl.col("args_json").str.json_path_match("$.wait_on_stream").cast(pl.Int64, strict=False).alias("wait_stream"),
        pl.col("args_json").str.json_path_match("$.wait_on_cuda_event_record_corr_id").cast(pl.Int64, strict=False)
        .alias("record_corr"),
    ).drop("args_json")
    by_pid = f["pid"].null_count() < f.height
    keys = ["pid", "correlation_id"] if by_pid else ["correlation_id"]
    call_cols = calls.select(*keys, pl.col("ev").alias("call_ev"), pl.col("base").alias("call_name"),
                             pl.col("end_ns").alias("call_end"), pl.col("tid").alias("call_tid"),
                             pl.col("start_ns").alias("call_start"), "step_id")
    if not by_pid:
        f = f.drop("pid").join(calls.select("correlation_id", "pid").unique("correlation_id"), on="correlation_id",
                               how="left")
        call_cols = call_cols.unique("correlation_id")
    return f.join(call_cols, on=keys, how="inner")


def _hta_rounded(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """Times as HTA 0.6.1 sees them: start rounded up and end down to whole microseconds (its fix for
    overlapping ns-resolution events), so events shorter than that vanish from its graph. Only for
    comparing with HTA's numbers; the lake keeps the recorded ns."""
    out = dict(tables)
    for name in ("cpu_ops", "api_calls", "annotations", "kernels", "memcpy", "memset", "synchronizations"):
        f = pl.from_arrow(tables[name])
        if f.height == 0:
            continue
        f = f.with_columns(((pl.col("start_ns") + 999) // 1000 * 1000).alias("start_ns"),
                           (pl.col("end_ns") // 1000 * 1000).alias("end_ns"))
        out[name] = f.to_arrow().cast(tables[name].schema)
    return out


def build_graph(tables: dict[str, pa.Table], hta_compat: bool = False) -> Graph:
    """The graph of every step of one trace (`tables`: conformed unified tables). `hta_compat`:
    HTA 0.6.1's numbers exactly: its microsecond-rounded times (see _hta_rounded) and zero-weight
    sync edges; only for comparing with it."""
    warnings: list[str] = []
    if hta_compat:
        tables = _hta_rounded(tables)
    is_nsys = tables["cpu_ops"].num_rows == 0 and (tables["traces"].num_rows == 0 or
                                                    tables["traces"].column("source")[0].as_py() == "nsys")
    steps = _steps(tables)
    has_sync = tables["synchronizations"].num_rows > 0
    steps = steps.with_columns(pl.lit(has_sync).alias("has_sync_events"))

    spans = _merged_tids(tables, _cpu_spans(tables, is_nsys))
    if steps["step"][0] == WHOLE_TRACE_STEP:
        spans = _without_lifecycle(spans, tables)
    cpu = _assign_steps(spans, steps)
    cpu = cpu.with_columns(api_base(pl.col("name")).alias("base"))
    cpu = cpu.with_columns(
        ((pl.col("kind") == "call") & pl.col("base").is_in(LOCK_CALLS)).alias("is_lock"),
        ((pl.col("kind") == "call") & pl.col("base").is_in(BLOCKING_CALLS)).alias("is_blocking"),
        pl.col("pid").alias("lane_pid"),
    ).sort("step_id", "start_ns").with_row_index("ev").with_columns(pl.col("ev").cast(pl.Int64))
    calls = cpu.filter(pl.col("kind") == "call")

    # GPU operations: those whose launching call is in a step
    ops_all = _gpu_ops(tables).with_row_index("gev").with_columns(pl.col("gev").cast(pl.Int64))
    by_pid = ops_all["pid"].null_count() < ops_all.height
    launch_keys = ["pid", "correlation_id"] if by_pid else ["correlation_id"]
    ops = ops_all.join(calls.select(*launch_keys, "step_id", pl.col("ev").alias("call_ev"),
                                    pl.col("start_ns").alias("call_start")),
                       on=launch_keys, how="inner")
    # queue lengths count every launch of the trace (HTA: the full trace, not the step's spans)
    launches = _frame(tables["api_calls"], ["pid", "correlation_id", "start_ns", "api"]).filter(
        pl.col("api").is_in(["runtime", "driver"]) & pl.col("correlation_id").is_not_null()).drop("api")
    ql = _queue_lengths(launches if by_pid else launches.with_columns(pl.lit(0, pl.Int64).alias("pid")),
                        ops_all if by_pid else ops_all.with_columns(pl.lit(0, pl.Int64).alias("pid")))
    ops = ops.join(ql, on="gev", how="left")
    ops = (ops.with_columns(pl.when(pl.col("kind") == "kernel").then(pl.col("name").str.contains(COMMUNICATION.pattern)
                                                                     .fill_null(False)).otherwise(False)
                            .alias("is_comm"))
           .sort("step_id", "device_id", "stream_id", "start_ns", "gev")
           .with_row_index("ev", offset=cpu.height).with_columns(pl.col("ev").cast(pl.Int64)))

    edges = _thread_edges(cpu) + _lock_edges(cpu)
    edges += _gpu_edges(tables, calls, ops)
    edge_frame = pl.concat([e for e in edges if e.height], how="vertical_relaxed") if edges else _edges_frame(
        [], [], "operator", [], None)
    # clock skew between CPU and GPU timelines can make a launch or queue edge run backwards: weight 0
    edge_frame = edge_frame.with_columns(pl.col("weight_ns").clip(lower_bound=0))
    if hta_compat:
        edge_frame = edge_frame.with_columns(pl.when(pl.col("edge_type") == "sync").then(0)
                                             .otherwise(pl.col("weight_ns")).alias("weight_ns"))

    events = pl.concat([
        cpu.select("ev", "step_id", "kind", "name", "pid", "tid", pl.lit(None, pl.Int32).alias("device_id"),
                   pl.lit(None, pl.Int64).alias("stream_id"), "correlation_id", "start_ns", "end_ns",
                   pl.lit(False).alias("is_comm")),
        ops.select("ev", "step_id", "kind", "name", "pid", pl.lit(None, pl.Int64).alias("tid"),
                   pl.col("device_id").cast(pl.Int32), "stream_id", "correlation_id", "start_ns", "end_ns", "is_comm"),
    ], how="vertical_relaxed")
    edge_frame = _classify(edge_frame, events)
    return Graph(steps, events.drop("is_comm"), edge_frame, warnings)


def _gpu_edges(tables, calls: pl.DataFrame, ops: pl.DataFrame) -> list[pl.DataFrame]:
    out: list[pl.DataFrame] = []
    if ops.height == 0:
        return out
    ev = ops["ev"].to_numpy()
    start, end = ops["start_ns"].to_numpy(), ops["end_ns"].to_numpy()
    out.append(_edges_frame(2 * ev, 2 * ev + 1, "operator", end - start, ev))
    lane = (ops["step_id"].cast(pl.String) + ":" + ops["device_id"].cast(pl.String).fill_null("")
            + ":" + ops["stream_id"].cast(pl.String).fill_null("")).to_numpy()
    has_prev = np.r_[False, lane[1:] == lane[:-1]]
    prev_end = np.r_[0, end[:-1]]
    prev_ev = np.r_[-1, ev[:-1]]

    # synchronizations: CPU waits (GPU op end -> call end) and stream waits (GPU -> GPU)
    sync_src = np.full(len(ops), -1, dtype=np.int64)  # gev-ordered: event that must finish before this op
    syncs = _sync_rows(tables, calls)
    if syncs.height:
        out += _sync_edges(syncs, calls, ops, sync_src)
    sync_end = np.where(sync_src >= 0, end[np.maximum(sync_src - ev[0], 0)], -1)
    has_sync = sync_src >= 0
    call_start = ops["call_start"].to_numpy()
    ql_call = ops["ql_call"].fill_null(-1).to_numpy()
    ql_op = ops["ql_op"].fill_null(-1).to_numpy()
    launch = ((ql_call == 1) & (ql_op == 0) & (~has_prev | (prev_end < call_start))
              & (~has_sync | (sync_end < call_start)))
    kk = (~launch & has_prev & (start - prev_end < KERNEL_KERNEL_MAX_GAP_NS)
          & (~has_sync | (sync_end < prev_end)))
    call_ev = ops["call_ev"].to_numpy()
    out.append(_edges_frame(2 * call_ev[launch], 2 * ev[launch], "launch", start[launch] - call_start[launch],
                            call_ev[launch]))
    out.append(_edges_frame(2 * prev_ev[kk] + 1, 2 * ev[kk], "kernel_kernel", start[kk] - prev_end[kk], prev_ev[kk]))
    out.append(_edges_frame(2 * call_ev[~launch], 2 * ev[~launch], "launch_order", np.zeros((~launch).sum()), None))
    return out


def _sync_edges(syncs: pl.DataFrame, calls: pl.DataFrame, ops: pl.DataFrame, sync_src: np.ndarray):
    """Edges of the synchronization rows; fills sync_src (per op row) for stream waits."""
    ev0 = int(ops["ev"][0])
    op_ev = ops["ev"].to_numpy()
    op_step, op_start, op_end = ops["step_id"].to_numpy(), ops["start_ns"].to_numpy(), ops["end_ns"].to_numpy()
    op_stream = ops["stream_id"].fill_null(-1).to_numpy()
    op_dev = ops["device_id"].fill_null(-1).to_numpy()
    by_lane: dict[tuple, np.ndarray] = {}
    for i, key in enumerate(zip(op_step.tolist(), op_dev.tolist(), op_stream.tolist())):
        by_lane.setdefault(key, []).append(i)
    by_lane = {k: np.asarray(v) for k, v in by_lane.items()}
    streams_of_step: dict[tuple, list] = {}
    for step, dev, stream in by_lane:
        streams_of_step.setdefault((step, dev), []).append(stream)

    def last_before(step, dev, stream, t):
        rows = by_lane.get((step, dev, stream))
        if rows is None:
            return -1
        k = np.searchsorted(op_start[rows], t, side="right") - 1
        return int(rows[k]) if k >= 0 else -1

    # Kineto event record / wait: the op launched last on the recorded stream before cudaEventRecord
    record = calls.filter(pl.col("base") == "cudaEventRecord").select("correlation_id", "start_ns", "pid")
    launches = ops.select("call_start", "device_id", "stream_id", "ev", "pid").sort("call_start")
    src_rows, dst_rows, weights, cpu_attr = [], [], [], []
    gpu_src, gpu_dst = [], []
    for row in syncs.iter_rows(named=True):
        name = row["call_name"] or ""
        step = row["step_id"]
        if row["record_corr"] is not None and row["record_corr"] >= 0 and row["wait_stream"] is not None:
            rec = record.filter(pl.col("correlation_id") == row["record_corr"])
            if rec.height == 0:
                continue
            before = launches.filter((pl.col("stream_id") == row["wait_stream"]) & (pl.col("call_start") <= rec["start_ns"][0]))
            if before.height == 0:
                continue
            src_ev = int(before["ev"][-1])
            if "StreamWaitEvent" in name:
                nxt = (ops.filter((pl.col("stream_id") == row["stream_id"]) & (pl.col("call_start") >= row["call_start"]))
                       .join(calls.select(pl.col("ev").alias("call_ev"), pl.col("tid").alias("launch_tid")), on="call_ev")
                       .filter(pl.col("launch_tid") == row["call_tid"]).sort("call_start"))
                if nxt.height:
                    sync_src[int(nxt["ev"][0]) - ev0] = src_ev
                    gpu_src.append(src_ev)
                    gpu_dst.append(int(nxt["ev"][0]))
                continue
            srcs = [src_ev - ev0]
        elif "StreamWaitEvent" in name:
            continue  # Nsight: no record of which operation the event marks
        elif "DeviceSynchronize" in name or "CtxSynchronize" in name or row["sync_type"] == "context_sync":
            srcs = [last_before(step, dev, stream, row["end_ns"])
                    for (st, dev), streams in streams_of_step.items() if st == step for stream in streams]
        else:
            dev = row["device_id"] if row["device_id"] is not None else -1
            srcs = [last_before(step, dev, row["stream_id"], row["end_ns"])]
        srcs = [i for i in srcs if i >= 0]
        if not srcs:
            continue
        # the call returns once it has started and the last awaited operation is done; the time
        # after that is the cost of the synchronization itself (wake-up latency, or the whole call
        # when the GPU was already idle)
        latency = max(0, row["call_end"] - max(row["call_start"], max(int(op_end[i]) for i in srcs)))
        for i in srcs:
            src_rows.append(2 * int(op_ev[i]) + 1)
            dst_rows.append(2 * row["call_ev"] + 1)
            weights.append(latency)
            cpu_attr.append(row["call_ev"])
    return [_edges_frame(src_rows, dst_rows, "sync", weights, cpu_attr),
            _edges_frame([2 * e + 1 for e in gpu_src], [2 * e for e in gpu_dst], "gpu_sync", [0] * len(gpu_src), None)]


def _classify(edges: pl.DataFrame, events: pl.DataFrame) -> pl.DataFrame:
    """Attribution class of each weighted edge (NULL for the zero-weight dependencies)."""
    kinds = events.select(pl.col("ev").alias("attr_ev"), pl.col("kind").alias("attr_kind"), "is_comm",
                          pl.col("name").str.contains(DATA_LOADING).alias("is_loading"))
    e = edges.join(kinds, on="attr_ev", how="left", maintain_order="left")
    cls = (pl.when(pl.col("edge_type") == "launch").then(pl.lit("launch_overhead"))
           .when(pl.col("edge_type") == "kernel_kernel").then(pl.lit("kernel_to_kernel"))
           .when(pl.col("edge_type") == "sync").then(pl.lit("sync_wait"))
           .when(pl.col("edge_type") != "operator").then(pl.lit(None, pl.String))
           .when(pl.col("attr_kind").is_in(["memcpy", "memset"])).then(pl.lit("memcpy"))
           .when(pl.col("attr_kind") == "kernel").then(pl.when(pl.col("is_comm")).then(pl.lit("communication"))
                                                       .otherwise(pl.lit("gpu_compute")))
           .when(pl.col("is_loading")).then(pl.lit("data_loading"))
           .otherwise(pl.lit("cpu")))
    return e.with_columns(cls.alias("class")).drop("attr_kind", "is_comm", "is_loading")
