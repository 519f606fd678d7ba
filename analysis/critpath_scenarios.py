"""What-if scenarios for the critical path: what each one removes, as new weights for the edges of a
step's graph (critpath_graph), which critpath_whatif then walks again.

A scenario scales the edges of whole classes (`scale`, as HTA's critical-path simulation does) and
may also model CUDA graphs, which change more than one class:

- `launch_calls`: the CPU time of the runtime/driver calls that launched a kernel, memset or copy
  weighs nothing (a graph replay is one cudaGraphLaunch for all of its nodes). Calls that may
  block the host (BLOCKING_CALLS: cudaMemcpy, cudaMemcpyAsync, synchronizations) keep their time:
  a graph cannot hold a host wait; so do the graph launches already in the trace (cudaGraphLaunch).
- `captured_cpu`: the whole step is captured, so a replay runs none of the host code that issued
  its GPU work: on each thread of the step, every CPU span (operator, call, range) from the first
  top-level span that launches GPU work to the end of the last one weighs nothing, except the calls
  that block on the GPU and the spans that enclose them (a host wait cannot be captured: the
  graph is split there). Data loading (its own class), host synchronizations and the CPU work
  before or after that window stay.
- `gpu_gap_ns`: each GPU operation starts at most this long after the previous one on its stream
  ends (when the graph's other dependencies allow): the kernel-to-kernel gaps shrink to it, and
  operations that waited for their launch on an idle stream follow their predecessor after it.
  GRAPH_GAP_NS is what graph replays show on an H100 (tests/recorded/
  torch-2.11_graphs-manual-replay_h100: median 0.43 µs, 90th percentile 0.55 µs between the
  kernels of one replay; 0.38 / 0.45 µs under torch.compile mode="reduce-overhead").

- `fused_chains`: the chains of memory-bound kernels of fusion_chains (those with a predicted
  saving) run as one kernel each: each chain kernel's time is scaled by fused_ns / device_ns of its
  chain, and every kernel of a chain but the first is no longer launched: its launch call weighs
  nothing, and it follows its predecessor on the stream at once (no launch latency, no gap). The
  operators around the removed launch calls still run (a hand-written fused kernel keeps the
  Python code; torch.compile would remove more).

- `host_syncs`: no host synchronizations: the calls that wait for the GPU (SYNC_CALLS, and
  copies to the host, which PyTorch's `.item()` and `.cpu()` follow with a wait) weigh nothing and
  their 'sync' edges go (the host no longer waits for the GPU there; the GPU work stays).
- `pinned_copies`: every host<->device copy from or to pageable memory is made from pinned memory
  with `non_blocking=True`: the copy takes memcpy_pinned_rates.pinned_ns on the GPU, and the call
  that issued it no longer blocks the host (its time and its 'sync' edges go).

Not modelled: the replay's own cudaGraphLaunch (one call per graph, ~35 µs under the profiler in
those recordings, a few µs without), the copies into the graph's static inputs, and whether the
code can be captured at all (dynamic shapes, CPU-side control flow, allocations).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from .critpath_graph import BLOCKING_CALLS, CLASSES, api_base

GRAPH_GAP_NS = 500
GPU_KINDS = ("kernel", "memcpy", "memset")
# calls that only wait for the GPU (the runtime's and the driver's names)
SYNC_CALLS = ("cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaCtxSynchronize",
              "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize")
NO_EDGE = -(1 << 40)  # the weight of a removed edge: no path through it can be the longest


@dataclass(frozen=True)
class Scenario:
    label: str
    definition: str  # one line: what it removes (the report shows it beside the scenario)
    scale: dict[str, float] = field(default_factory=dict)  # class -> factor on its edges' weights
    launch_calls: bool = False  # launch calls' CPU time -> 0
    captured_cpu: bool = False  # the step's GPU-issuing host code -> 0
    gpu_gap_ns: int | None = None  # gaps between operations of a stream -> at most this
    fused_chains: bool = False  # fusion_chains' kernels -> one kernel per chain
    host_syncs: bool = False  # the host's waits for the GPU -> gone
    pinned_copies: bool = False  # pageable copies -> pinned, non-blocking


STEP_AS_GRAPH = Scenario(
    "CUDA graphs, whole step captured",
    "the step replayed as one CUDA graph: removes the host code that issues its GPU work (Python, operators, "
    f"launch calls) and the launch latency, and cuts gaps between GPU operations to {GRAPH_GAP_NS / 1000:g} µs; "
    "keeps data loading, host syncs and host-only work",
    scale={"launch_overhead": 0.0}, launch_calls=True, captured_cpu=True, gpu_gap_ns=GRAPH_GAP_NS)
LAUNCHES_AS_GRAPH = Scenario(
    "CUDA graphs, launches only",
    "removes the launch calls' CPU time (cudaLaunchKernel, cuLaunchKernelEx, cudaMemsetAsync, ...) and the "
    f"launch latency, and cuts gaps between GPU operations to {GRAPH_GAP_NS / 1000:g} µs; Python and operators "
    "still run",
    scale={"launch_overhead": 0.0}, launch_calls=True, gpu_gap_ns=GRAPH_GAP_NS)

# The scenarios the report shows (and `tracelake whatif` runs without --scale).
STANDARD_SCENARIOS: tuple[Scenario, ...] = (
    STEP_AS_GRAPH,
    LAUNCHES_AS_GRAPH,
    Scenario("launch overhead halved", "halves the launch latency: a launch call's start to its operation's "
             "start, where the stream was idle", {"launch_overhead": 0.5}),
    Scenario("CPU time halved", "halves every host span on the path (Python, operators, CUDA calls), "
             "data loading aside", {"cpu": 0.5}),
    Scenario("no data-loading time", "removes the data-loading ranges (DataLoader iteration, ranges named "
             "data_load*)", {"data_loading": 0.0}),
    Scenario("no host syncs", "removes the host's waits for the GPU (cudaStreamSynchronize, cudaDeviceSynchronize, "
             "cudaEventSynchronize, copies to the host as in .item()); the GPU work stays", host_syncs=True),
    Scenario("pinned copies", "copies from or to pageable host memory made from pinned memory with non_blocking=True: "
             "each takes its direction's pinned rate (memcpy_pinned_rates) and no longer blocks the host",
             pinned_copies=True),
    Scenario("memory-bound chains fused", "each chain of memory-bound kernels (fusion_chains) runs as one "
             "kernel at its predicted fused time; the chain's other launch calls and their launch latency go",
             fused_chains=True),
    Scenario("GPU compute 2x faster", "halves the kernels' time (communication kernels aside)", {"gpu_compute": 0.5}),
    Scenario("communication 2x faster", "halves the communication kernels' time (NCCL, RCCL)",
             {"communication": 0.5}),
    Scenario("memcpy 2x faster", "halves the memory copies' and memsets' time on the GPU", {"memcpy": 0.5}),
)


def parse_scale(items: list[str]) -> Scenario:
    """['kernel_to_kernel=0', 'launch_overhead=0.5'] -> a Scenario; ValueError naming the bad item."""
    scale = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in CLASSES:
            raise ValueError(f"--scale {item!r}: expected CLASS=FACTOR with CLASS one of {', '.join(CLASSES)}")
        try:
            factor = float(value)
        except ValueError:
            raise ValueError(f"--scale {item!r}: {value!r} is not a number") from None
        if factor < 0:
            raise ValueError(f"--scale {item!r}: the factor must be >= 0")
        scale[name] = factor
    label = " ".join(items)
    return Scenario(label, "scales the edges of the named classes: " + label, scale)


@dataclass
class EdgeFacts:
    """What the scenarios select edges on, per edge of one trace's graph (the lake's edges, then the
    stream-order edges that stream_order_edges adds)."""
    cls: np.ndarray  # class (None for zero-weight dependencies)
    edge_type: np.ndarray  # edge type (cp_edges.edge_type, lake/schema.py; None for the stream-order edges)
    weight: np.ndarray  # measured weight (ns)
    launch_call: np.ndarray  # bool: the time of a call that launched GPU work
    captured: np.ndarray  # bool: host time inside a GPU-issuing top-level span of the step
    gpu_gap: np.ndarray  # the gap between two operations of a stream (ns) for kernel_kernel and stream-order edges; -1 else
    fusion_factor: np.ndarray | None = None  # fused_ns / device_ns of its chain for a chain kernel's edge; 1 else
    fusion_drop: np.ndarray | None = None  # bool: launch call, launch latency or gap a fused chain removes
    sync_wait: np.ndarray | None = None  # bool: a host sync call's own time, or a 'sync' edge into one
    pageable_wait: np.ndarray | None = None  # bool: a pageable copy's call's own time, or a 'sync' edge into one
    copy_factor: np.ndarray | None = None  # pinned_ns / duration for a pageable copy's own edge; 1 else
    _of_class: dict = field(default_factory=dict, repr=False, compare=False)  # class -> its edges (bool)

    def of_class(self, name: str) -> np.ndarray:
        """The edges of class `name` (compared once per trace, not once per scenario: `cls` holds
        Python strings, and the scenarios of a report ask for the same few classes)."""
        if name not in self._of_class:
            self._of_class[name] = self.cls == name
        return self._of_class[name]

    def weights(self, s: Scenario) -> np.ndarray:
        """The edges' weights under scenario `s`."""
        factor = np.ones(len(self.weight))
        for name, f in s.scale.items():
            factor[self.of_class(name)] = f
        if s.launch_calls:
            factor[self.launch_call & self.of_class("cpu")] = 0.0
        if s.captured_cpu:
            factor[self.captured & self.of_class("cpu")] = 0.0
        if s.fused_chains and self.fusion_factor is not None:
            factor = factor * self.fusion_factor
        out = np.rint(self.weight * factor).astype(np.int64)
        if s.gpu_gap_ns is not None:
            gap = self.gpu_gap >= 0
            out[gap] = np.minimum(self.gpu_gap[gap], s.gpu_gap_ns)
        if s.fused_chains and self.fusion_drop is not None:
            out[self.fusion_drop] = 0
        if s.pinned_copies and self.copy_factor is not None:
            out = np.where(self.copy_factor < 1, np.rint(out * self.copy_factor), out).astype(np.int64)
        for on, waits in ((s.host_syncs, self.sync_wait), (s.pinned_copies, self.pageable_wait)):
            if on and waits is not None:
                out[waits & (self.edge_type == "sync")] = NO_EDGE
                out[waits & (self.edge_type != "sync")] = 0
        return out


def stream_order_edges(nodes: pl.DataFrame) -> pl.DataFrame:
    """The order of the GPU operations on each stream of a step, as zero-weight edges from an
    operation's end to the next one's start (src_node, dst_node, gap_ns). The lake's graph links two
    operations of a stream only when the second was queued behind the first (kernel_kernel); when the
    stream was idle at the launch the link is the launch, so a what-if that shortens the host could
    otherwise start an operation before its predecessor ended. `nodes`: cp_nodes start rows."""
    ops = (nodes.filter(pl.col("kind").is_in(GPU_KINDS))
           .sort("step_id", "device_id", "stream_id", "start_ns", "event_id"))
    lane = [pl.col(c).shift(1) == pl.col(c) for c in ("step_id", "device_id", "stream_id")]
    same = lane[0].fill_null(False) & lane[1].fill_null(True) & lane[2].fill_null(True)
    return (ops.with_columns(same.alias("same"), pl.col("event_id").shift(1).alias("prev"),
                             pl.col("end_ns").shift(1).alias("prev_end"))
            .filter(pl.col("same"))
            .select((2 * pl.col("prev") + 1).alias("src_node"), (2 * pl.col("event_id")).alias("dst_node"),
                    (pl.col("start_ns") - pl.col("prev_end")).clip(lower_bound=0).alias("gap_ns")))


def edge_facts(edges: pl.DataFrame, nodes: pl.DataFrame, extra: pl.DataFrame,
               chains: pl.DataFrame | None = None, copies: pl.DataFrame | None = None) -> EdgeFacts:
    """`edges`: one trace's cp_edges (class, weight_ns, event_id, edge_type, src_node, dst_node);
    `nodes`: its cp_nodes start rows; `extra`: stream_order_edges(nodes), appended after the edges;
    `chains`: the kernels of its fused chains (event_id, factor, first), or None; `copies`: its
    copies (pid, correlation_id, copy_kind; pinned_ns and duration_ns for the pageable ones)."""
    launch_ev, captured_ev = _host_events(nodes)
    ev = edges["event_id"].fill_null(-1).to_numpy()
    pad = np.zeros(extra.height, dtype=bool)
    kk = edges["edge_type"].to_numpy() == "kernel_kernel"
    return EdgeFacts(
        edge_type=np.concatenate([edges["edge_type"].to_numpy(), np.full(extra.height, None, dtype=object)]),
        **_waits(edges, nodes, extra, copies),
        cls=np.concatenate([edges["class"].to_numpy(), np.full(extra.height, None, dtype=object)]),
        weight=np.concatenate([edges["weight_ns"].to_numpy(), np.zeros(extra.height, dtype=np.int64)]),
        launch_call=np.concatenate([np.isin(ev, launch_ev), pad]),
        captured=np.concatenate([np.isin(ev, captured_ev), pad]),
        gpu_gap=np.concatenate([np.where(kk, edges["weight_ns"].to_numpy(), -1),
                                extra["gap_ns"].to_numpy().astype(np.int64)]),
        **_fusion(edges, nodes, extra, chains),
    )


def _fusion(edges: pl.DataFrame, nodes: pl.DataFrame, extra: pl.DataFrame, chains: pl.DataFrame | None) -> dict:
    """fusion_factor and fusion_drop of EdgeFacts: a chain kernel's own time edge is scaled; the
    launch call of every chain kernel but the first, and the edges into its start node (launch
    latency, kernel-to-kernel gap, stream order), are dropped."""
    if chains is None or chains.height == 0:
        return {}
    pad = np.zeros(extra.height, dtype=bool)
    ev = edges["event_id"].fill_null(-1).to_numpy()
    own = (edges["edge_type"] == "operator").to_numpy()
    factor = (pl.DataFrame({"event_id": np.where(own, ev, -1)})
              .join(chains.select("event_id", "factor"), on="event_id", how="left", maintain_order="left")
              ["factor"].fill_null(1.0).to_numpy())
    later = chains.filter(~pl.col("first"))["event_id"].to_numpy()
    ops = nodes.filter(pl.col("event_id").is_in(later)).select("pid", "correlation_id")
    call_ev = (nodes.filter(pl.col("kind") == "call")
               .join(ops, on=["pid", "correlation_id"], nulls_equal=False)["event_id"].to_numpy())
    dst = np.concatenate([edges["dst_node"].to_numpy(), extra["dst_node"].to_numpy()])
    drop = np.isin(dst, 2 * later) | np.concatenate([own & np.isin(ev, call_ev), pad])
    return {"fusion_factor": np.concatenate([factor, np.ones(extra.height)]), "fusion_drop": drop}


def _waits(edges: pl.DataFrame, nodes: pl.DataFrame, extra: pl.DataFrame, copies: pl.DataFrame | None) -> dict:
    """sync_wait, pageable_wait and copy_factor of EdgeFacts. An edge belongs to a call's wait when
    it is the call's own time (an 'operator' edge of the call event) or a 'sync' edge into it (the
    'sync' edges are attributed to the call they end in)."""
    ops = nodes.filter(pl.col("kind") == "memcpy").select("event_id", "pid", "correlation_id")
    calls = nodes.filter(pl.col("kind") == "call").select("event_id", "pid", "correlation_id", "name")
    by_pid = ops["pid"].null_count() < ops.height
    keys = ["pid", "correlation_id"] if by_pid else ["correlation_id"]
    if copies is None:
        copies = pl.DataFrame(schema={"pid": pl.Int64, "correlation_id": pl.Int64, "copy_kind": pl.String,
                                      "pinned_ns": pl.Int64, "duration_ns": pl.Int64})
    copies = copies.select(*keys, "copy_kind", "pinned_ns", "duration_ns").unique(keys)
    copy_calls = calls.join(copies, on=keys, how="inner", nulls_equal=False)
    base = api_base(pl.col("name"))
    sync_ev = pl.concat([calls.filter(base.is_in(SYNC_CALLS))["event_id"],
                         copy_calls.filter(pl.col("copy_kind") == "DtoH")["event_id"]]).to_numpy()
    pageable_ev = copy_calls.filter(pl.col("pinned_ns").is_not_null())["event_id"].to_numpy()
    ev = edges["event_id"].fill_null(-1).to_numpy()
    kind = edges["edge_type"].to_numpy()
    own_or_sync = (kind == "operator") | (kind == "sync")
    pad = np.zeros(extra.height, dtype=bool)
    rated = ops.join(copies.filter(pl.col("pinned_ns").is_not_null()), on=keys, how="inner", nulls_equal=False)
    factor = (pl.DataFrame({"event_id": np.where(kind == "operator", ev, -1)})
              .join(rated.select("event_id", (pl.col("pinned_ns") / pl.col("duration_ns")).alias("f")),
                    on="event_id", how="left", maintain_order="left")["f"].fill_null(1.0).to_numpy())
    return {"sync_wait": np.concatenate([own_or_sync & np.isin(ev, sync_ev), pad]),
            "pageable_wait": np.concatenate([own_or_sync & np.isin(ev, pageable_ev), pad]),
            "copy_factor": np.concatenate([factor, np.ones(extra.height)])}


def _host_events(nodes: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(event ids of the calls that launched GPU work, event ids of the host events inside the
    captured top-level spans: see the module docstring)."""
    ops = nodes.filter(pl.col("kind").is_in(GPU_KINDS))
    by_pid = ops["pid"].null_count() < ops.height
    keys = ["pid", "correlation_id"] if by_pid else ["correlation_id"]
    issued = ops.select(*keys).drop_nulls().unique().with_columns(pl.lit(True).alias("issues"))
    base = api_base(pl.col("name"))
    host = (nodes.filter(~pl.col("kind").is_in(GPU_KINDS))
            .join(issued, on=keys, how="left", nulls_equal=False)
            .with_columns(((pl.col("kind") == "call") & base.is_in(BLOCKING_CALLS)).alias("blocks"),
                          ((pl.col("kind") == "call") & base.str.contains("GraphLaunch")).alias("replay"))
            .with_columns((pl.col("issues").fill_null(False) & (pl.col("kind") == "call") & ~pl.col("blocks")
                           & ~pl.col("replay")).alias("issues"))
            .sort("step_id", "pid", "tid", "start_ns", -pl.col("end_ns")))
    thread = ["step_id", "pid", "tid"]
    host = host.with_columns(
        (pl.col("start_ns") >= pl.col("end_ns").cum_max().shift(1).over(thread)).fill_null(True).alias("top"))
    host = host.with_columns(pl.col("top").cast(pl.Int64).cum_sum().over(thread).alias("top_id"))
    tops = (host.group_by(*thread, "top_id").agg(pl.col("issues").any())
            .with_columns(pl.when(pl.col("issues")).then(pl.col("top_id")).alias("issuing_id")))
    window = (tops.group_by(thread).agg(pl.col("issuing_id").min().alias("first"),
                                        pl.col("issuing_id").max().alias("last")))
    inside = host.join(window, on=thread).filter(pl.col("top_id").is_between(pl.col("first"), pl.col("last")))
    # a host wait cannot be captured: the blocking call and the spans around it stay (the graph
    # is split there), their other children do not
    # An event encloses a blocking call of its span when, of the calls that start at or after it,
    # the one that ends first ends within it: the running minimum of the ends from the last call
    # back, read at the first call that starts at or after the event (not every pair: a span of
    # 100k events and thousands of waits took 7 s that way).
    span = [*thread, "top_id"]
    blockers = (inside.filter("blocks").sort(*span, "start_ns")
                .select(*span, pl.col("start_ns").alias("b_start"),
                        pl.col("end_ns").reverse().cum_min().reverse().over(span).alias("first_end"))
                .group_by(*span, "b_start").agg(pl.col("first_end").min()))  # calls that start together
    enclosing = (inside.sort("start_ns").join_asof(blockers.sort("b_start"), left_on="start_ns", right_on="b_start",
                                                   by=span, strategy="forward", check_sortedness=False)
                 .filter(pl.col("first_end") <= pl.col("end_ns")).select("event_id"))
    inside = inside.join(enclosing, on="event_id", how="anti").filter(~pl.col("replay"))
    return (host.filter(pl.col("issues"))["event_id"].to_numpy(), inside["event_id"].to_numpy())
