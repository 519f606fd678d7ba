"""Calling-context trees: which code launched each GPU operation.

Built once per trace from its unified tables, written to the lake as two tables
(`callctx_nodes`, `callctx_gpu_ops`) that the SQL views in sql/analysis/callctx.sql roll up.

Two trees per trace (column `tree`):
- 'stack': PyTorch: Python frames > operators (aten::linear > aten::addmm ...) > kernel. The
  frames and operators of a thread nest by time, and the API call that launched a GPU operation
  sits inside the innermost of them; one sweep over the lane's sorted intervals finds every
  parent. Nsight: the native backtrace of the launching call (CUDA_CALLCHAINS), root first, with
  CPython interpreter frames folded away > kernel.
- 'nvtx': NVTX ranges / PyTorch user annotations enclosing the launching call > kernel.
GPU work whose launching call is not in the trace, or whose call has no stack recorded, goes
under an explicit '(unattributed: ...)' node, so the root always holds all GPU time.

The allocator events (memory_events) are placed in the same sweep as the launch calls, and
memory_context.py turns their paths into the `memory_context`, `memory_call_contexts` and
`memory_blocks` tables.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pyarrow as pa

from ..ingest.nesting import NO_START, nest_parents
from ..lake.schema import CALLCTX_TABLES, TABLES
from ..lake.writer import conform
from . import memory_context

# Native frames folded out of the 'stack' tree: the CPython interpreter, dispatcher plumbing, and
# the profiler's, driver's and C library's own frames; unresolved addresses too.
_FOLDED_SYMBOL = (r"^(_?Py|PyEval|_PyEval|cfunction_|method_vectorcall|slot_tp_|vectorcall|function_code_fastcall|"
                  r"call_function|builtin_|_start$|__libc_start|main$|c10::impl::|c10::Dispatcher::|"
                  r"at::Tensor c10::Dispatcher|0x[0-9a-f]+$)")
_FOLDED_MODULE = r"libpython|/bin/python|libcupti|libToolsInjection|libcuda\.so|/libc\.so|libstdc\+\+|ld-linux"
_PY_FRAME = re.compile(r"^(.*)\((\d+)\): (.*)$")

UNATTRIBUTED_NO_CALL = "(unattributed: launch call not in the trace)"
UNATTRIBUTED_NO_STACK = "(unattributed: no call stack recorded)"
UNATTRIBUTED_NO_RANGE = "(outside any range)"
_GRAPH_LAUNCH = r"^(cuda|cu|hip)GraphLaunch"


class _Trie:
    def __init__(self, tree: str):
        self.tree = tree
        self.children: dict[tuple[int, str, str], int] = {}
        self.rows = {"node_id": [0], "parent_id": [None], "depth": [0], "label": ["(root)"], "kind": ["root"]}

    def add(self, path: list[tuple[str, str]], node: int = 0, depth: int = 0) -> int:
        """The node of `path` below `node` (at `depth`), adding what is missing."""
        for d, (label, kind) in enumerate(path, start=depth + 1):
            key = (node, label, kind)
            child = self.children.get(key)
            if child is None:
                child = self.children[key] = len(self.rows["node_id"])
                for col, value in zip(("node_id", "parent_id", "depth", "label", "kind"),
                                      (child, node, d, label, kind)):
                    self.rows[col].append(value)
            node = child
        return node

    def table(self) -> pl.DataFrame:
        frame = pl.DataFrame(self.rows, schema={"node_id": pl.Int64, "parent_id": pl.Int64, "depth": pl.Int32,
                                                "label": pl.String, "kind": pl.String})
        parsed = frame["label"].str.extract_groups(_PY_FRAME.pattern)
        python = pl.col("kind") == "python"
        return frame.with_columns(
            pl.lit(self.tree).alias("tree"),
            pl.when(python).then(parsed.struct.field("1")).alias("file"),
            pl.when(python).then(parsed.struct.field("2").cast(pl.Int32, strict=False)).alias("line"),
            pl.when(python).then(parsed.struct.field("3")).when(pl.col("kind") == "op").then(pl.col("label"))
            .alias("function"),
        )


def _gpu_ops(tables: dict[str, pa.Table]) -> pl.DataFrame:
    parts = []
    for name, category in (("kernels", "kernel"), ("memcpy", "memcpy"), ("memset", "memset"),
                           ("graph_executions", "graph")):
        t = tables.get(name)
        if t is None or t.num_rows == 0:
            continue
        f = pl.from_arrow(t.select(["start_ns", "duration_ns", "pid", "correlation_id"]))
        f = f.with_columns(pl.from_arrow(t.column("name")) if "name" in t.column_names
                           else pl.format("[CUDA graph {}]", pl.from_arrow(t.column("graph_exec_id"))).alias("name"))
        bytes_col = pl.from_arrow(t.column("bytes")) if "bytes" in t.column_names else pl.Series([None] * t.num_rows,
                                                                                                  dtype=pl.Int64)
        parts.append(f.with_columns(pl.lit(category).alias("category"), bytes_col.cast(pl.Int64).alias("bytes")))
    if not parts:
        return pl.DataFrame()
    return pl.concat(parts).with_row_index("op_index")


def _launch_calls(tables: dict[str, pa.Table]) -> pl.DataFrame:
    api = tables.get("api_calls")
    if api is None or api.num_rows == 0:
        return pl.DataFrame(schema={"pid": pl.Int64, "tid": pl.Int64, "correlation_id": pl.Int64, "start_ns": pl.Int64,
                                    "end_ns": pl.Int64, "callchain_id": pl.Int64, "graph_launch": pl.String})
    f = pl.from_arrow(api.select(["pid", "tid", "correlation_id", "start_ns", "end_ns", "callchain_id", "api", "name"]))
    # A graph replay runs all its operations under one launch call: that call is their innermost context.
    graph_launch = pl.when(pl.col("name").str.contains(_GRAPH_LAUNCH)) \
        .then(pl.col("name").str.replace(r"_v\d{4,5}$", "")).otherwise(None).alias("graph_launch")
    return f.filter(pl.col("api") != "backtrace").with_columns(graph_launch).drop("api", "name") \
        .drop_nulls("correlation_id").unique(["pid", "correlation_id"], keep="first")


def _enclosing_paths(ranges: pl.DataFrame, calls: pl.DataFrame) -> dict[int, list[tuple[str, str]]]:
    """For each call (by row index), the labels of the ranges enclosing it on its thread, outermost first.

    `ranges`: pid, tid, start_ns, end_ns, label, kind. The ranges nest by one sweep over each lane
    (ingest/nesting.py); a call, which contains nothing, then needs no place in the sweep: the
    ranges open at its start are those open after the last range that starts no later than it
    (on a tie, ranges first), less those that ended by then, found for all calls at once.
    """
    ranges = ranges.filter(pl.col("end_ns").is_not_null())  # marks are never open around anything
    n_ranges = ranges.height
    if n_ranges == 0 or calls.height == 0:
        root: list = []
        return {c: root for c in range(calls.height)}
    lanes = (pl.concat([ranges.select("pid", "tid"), calls.select("pid", "tid")])
             .select(pl.struct("pid", "tid").rank("dense").cast(pl.Int64)).to_series().to_numpy())
    lane_of, call_lane = lanes[:n_ranges], lanes[n_ranges:]
    start_of = ranges["start_ns"].fill_null(NO_START).to_numpy().astype(np.int64)
    end_of = ranges["end_ns"].to_numpy().astype(np.int64)
    parent_of, order = nest_parents(lane_of, start_of, end_of, np.ones(n_ranges, bool))
    parents = parent_of.tolist()

    # the last range in sweep order on the call's lane that starts no later than the call
    call_start = calls["start_ns"].fill_null(NO_START).to_numpy().astype(np.int64)
    sorted_lane, sorted_start = lane_of[order], start_of[order]
    candidate = np.full(calls.height, -1, np.int64)
    bounds = np.searchsorted(sorted_lane, np.arange(int(lanes.max()) + 2))
    for ln in np.unique(call_lane).tolist():
        lo, hi = bounds[ln], bounds[ln + 1]
        mine = np.flatnonzero(call_lane == ln)
        pos = lo + np.searchsorted(sorted_start[lo:hi], call_start[mine], side="right") - 1
        candidate[mine] = np.where(pos >= lo, order[np.maximum(pos, 0)], -1)
    # leave the ranges that ended at or before the call (a zero-length range at its start holds it)
    while True:
        idx = np.flatnonzero(candidate >= 0)
        c, s = candidate[idx], call_start[idx]
        ended = (end_of[c] <= s) & ~((end_of[c] == s) & (start_of[c] == s))
        if not ended.any():
            break
        candidate[idx[ended]] = parent_of[c[ended]]

    # (label, kind) of each range as one of its few distinct pairs (a Python string per range,
    # 165k of them on the reference trace, cost more than all the paths below)
    pairs = ranges.select("label", "kind").unique(maintain_order=True).with_row_index("_pair")
    distinct = list(zip(pairs["label"].to_list(), pairs["kind"].to_list(), strict=True))
    pair_of = ranges.select("label", "kind").join(pairs, on=["label", "kind"], how="left", nulls_equal=True,
                                                  maintain_order="left")["_pair"].to_list()
    range_paths: dict[int, list] = {}
    # Equal paths are one list object (interned by parent path and label), so that callers can
    # cache what they derive from a path by its id: thousands of operator calls share a few paths.
    root: list = []
    interned: dict[tuple[int, tuple[str, str]], list] = {}

    def path_of(i: int) -> list:
        if i < 0:
            return root
        cached = range_paths.get(i)
        if cached is None:
            chain, j = [], i
            while j >= 0 and j not in range_paths:
                chain.append(j)
                j = parents[j]
            base = range_paths[j] if j >= 0 else root
            for k in reversed(chain):
                label = distinct[pair_of[k]]
                path = interned.get((id(base), label))
                if path is None:
                    path = interned[(id(base), label)] = base + [label]
                base = range_paths[k] = path
            cached = range_paths[i]
        return cached

    found = candidate.tolist()
    by_range = {i: path_of(i) for i in set(found)}  # many calls share their innermost range
    return dict(enumerate(by_range[i] for i in found))


def _torch_ranges(tables: dict[str, pa.Table], kinds: tuple[str, ...]) -> pl.DataFrame:
    parts = []
    if "python" in kinds and tables.get("python_frames") is not None:
        parts.append(pl.from_arrow(tables["python_frames"].select(["pid", "tid", "start_ns", "end_ns", "name"]))
                     .with_columns(pl.lit("python").alias("kind")))
    if "op" in kinds and tables.get("cpu_ops") is not None:
        parts.append(pl.from_arrow(tables["cpu_ops"].select(["pid", "tid", "start_ns", "end_ns", "name"]))
                     .with_columns(pl.lit("op").alias("kind")))
    if "nvtx" in kinds and tables.get("annotations") is not None:
        ann = pl.from_arrow(tables["annotations"].select(["pid", "tid", "start_ns", "end_ns", "name", "is_gpu", "kind"]))
        parts.append(ann.filter(~pl.col("is_gpu") & pl.col("end_ns").is_not_null())
                     .select("pid", "tid", "start_ns", "end_ns", "name", pl.lit("nvtx").alias("kind")))
    if not parts:
        return pl.DataFrame(schema={"pid": pl.Int64, "tid": pl.Int64, "start_ns": pl.Int64, "end_ns": pl.Int64,
                                    "label": pl.String, "kind": pl.String})
    return pl.concat(parts).rename({"name": "label"}).with_columns(pl.col("label").fill_null("(unnamed)"))


def _without_parameters(symbol: str) -> str:
    """'at::_ops::addmm::call(at::Tensor const&, ...)' -> 'at::_ops::addmm::call' (templates kept)."""
    symbol = symbol.removesuffix(" const")
    if not symbol.endswith(")"):
        return symbol
    depth = 0
    for i in range(len(symbol) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(symbol[i], 0)
        if depth == 0:
            return symbol[:i] or symbol
    return symbol


def _callchain_paths(tables: dict[str, pa.Table], calls: pl.DataFrame) -> dict[int, list[tuple[str, str]]]:
    """Native backtrace of each launch call (nsys --cudabacktrace), outermost frame first, folded."""
    chains = tables.get("callchains")
    if chains is None or chains.num_rows == 0:
        return {}
    frames = (
        pl.from_arrow(chains.select(["kind", "callchain_id", "depth", "symbol", "module", "is_unresolved"]))
        .filter((pl.col("kind") == "cuda") & ~pl.col("is_unresolved").fill_null(False)
                & ~pl.col("symbol").fill_null("").str.contains(_FOLDED_SYMBOL)
                & ~pl.col("module").fill_null("").str.contains(_FOLDED_MODULE))
        .sort(["callchain_id", "depth"], descending=[False, True])
    )
    by_chain: dict[int, list] = {}
    frame_of: dict[str, tuple[str, str]] = {}  # symbols repeat across chains: each is parsed once
    for chain_id, symbol in zip(frames["callchain_id"].to_list(), frames["symbol"].to_list()):
        frame = frame_of.get(symbol)
        if frame is None:
            label = _without_parameters(symbol)
            frame = frame_of[symbol] = (label, "op" if label.startswith("at::_ops::") else "native")
        by_chain.setdefault(chain_id, []).append(frame)
    shared: dict[tuple, list] = {}  # equal backtraces share one list, so build() finds their node once
    by_chain = {c: shared.setdefault(tuple(chain), chain) for c, chain in by_chain.items()}
    return {i: by_chain[c] for i, c in enumerate(calls["callchain_id"].to_list()) if c in by_chain}


def _torch_stack_paths(tables: dict[str, pa.Table], calls: pl.DataFrame) -> dict[int, list[tuple[str, str]]]:
    """Python frames > operators enclosing each launch call on its thread. Calls on threads without
    Python frames (the autograd engine's backward threads) get the Python frames that the process's
    main Python thread was in at that moment (e.g. 'loss.backward()') in front of their operators."""
    paths = _enclosing_paths(_torch_ranges(tables, ("python", "op")), calls)
    frames = tables["python_frames"]
    if frames.num_rows == 0:
        return paths
    main_tid = (pl.from_arrow(frames.select(["pid", "tid"])).group_by("pid", "tid").len()
                .sort("len", descending=True).unique("pid", keep="first").select("pid", pl.col("tid").alias("main_tid")))
    # Equal paths are one object (_enclosing_paths): look at each distinct one once, and share the
    # joined paths too (the allocator events of a trace hit a few hundred of them 20k times).
    empty: list = []
    has_python: dict[int, bool] = {}
    for path in paths.values():
        if id(path) not in has_python:
            has_python[id(path)] = any(kind == "python" for _, kind in path)
    orphans = [i for i in range(calls.height) if not has_python.get(id(paths.get(i, empty)), False)]
    if not orphans:
        return paths
    moved = calls[orphans].join(main_tid, on="pid", how="left", maintain_order="left") \
        .with_columns(pl.coalesce("main_tid", "tid").alias("tid")).drop("main_tid")
    python_paths = _enclosing_paths(_torch_ranges(tables, ("python",)), moved)
    joined: dict[tuple[int, int], list] = {}
    for j, i in enumerate(orphans):
        front = python_paths.get(j)
        if front:
            back = paths.get(i, empty)
            path = joined.get((id(front), id(back)))
            if path is None:
                path = joined[(id(front), id(back))] = front + back
            paths[i] = path
    return paths


def _memory_paths(memory: pl.DataFrame, calls: pl.DataFrame, paths: dict[int, list], is_nsys: bool) -> dict:
    """The paths of the allocator events, by row of `memory`. PyTorch events were placed as points after
    the calls; an nsys event has the path of its allocating call (same pid and correlation id)."""
    if not is_nsys:
        offset = calls.height
        return {i - offset: path for i, path in paths.items() if i >= offset}
    linked = memory.join(calls.select("pid", "correlation_id", "call_index"), on=["pid", "correlation_id"], how="left",
                         maintain_order="left")["call_index"].to_list()
    return {i: paths[c] for i, c in enumerate(linked) if c is not None and c in paths}


# The lake tables build() makes (some of them, or none, for a trace without the events they need).
BUILDS = CALLCTX_TABLES


def build(tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """callctx_nodes and callctx_gpu_ops for one trace's tables (none when it has no GPU work), and
    memory_context, memory_call_contexts and memory_blocks for its allocator events (none when it has none)."""
    tables = {name: conform(name, tables.get(name)) for name in TABLES}  # every table and column present
    ops = _gpu_ops(tables)
    memory = pl.from_arrow(tables["memory_events"].select(["event_id", "ts_ns", "pid", "tid", "correlation_id",
                                                            "device_type", "device_id", "address", "bytes",
                                                            "mem_kind"]))
    if ops.height == 0 and memory.height == 0:
        return {}
    calls = _launch_calls(tables).with_row_index("call_index")
    is_nsys = tables["cpu_ops"].num_rows == 0
    # PyTorch allocator events nest in the operators and frames of their thread like launch calls:
    # one sweep places both.
    points = calls if is_nsys else pl.concat([
        calls.select("pid", "tid", "start_ns"),
        memory.select("pid", "tid", pl.col("ts_ns").alias("start_ns"))])
    stack_paths = _callchain_paths(tables, calls) if is_nsys else _torch_stack_paths(tables, points)
    nvtx_paths = _enclosing_paths(_torch_ranges(tables, ("nvtx",)), points)
    graph_launches = {i: [(name, "graph")] for i, name in enumerate(calls["graph_launch"].to_list()) if name}
    out = {}
    if memory.height:
        out.update(memory_context.tables(memory, _memory_paths(memory, calls, stack_paths, is_nsys),
                                         _memory_paths(memory, calls, nvtx_paths, is_nsys), is_nsys))
    if ops.height == 0:
        return out
    linked = ops.join(calls.select("pid", "correlation_id", "call_index"), on=["pid", "correlation_id"], how="left")

    node_tables, gpu_tables = [], []
    for tree, paths, missing in (("stack", stack_paths, UNATTRIBUTED_NO_STACK), ("nvtx", nvtx_paths,
                                                                                   UNATTRIBUTED_NO_RANGE)):
        trie = _Trie(tree)
        no_call, no_path = [(UNATTRIBUTED_NO_CALL, "unattributed")], [(missing, "unattributed")]
        # Calls under the same innermost range share one path list: its node is found once, and a
        # leaf once per (path, operation). Nodes are numbered in the same order as adding each full path.
        path_node: dict[int, tuple[int, int]] = {}
        leaf_ids = []
        for call_index, op_name, category in zip(linked["call_index"].to_list(), linked["name"].to_list(),
                                                 linked["category"].to_list()):
            extra = None if call_index is None else graph_launches.get(call_index)
            if extra:  # launched through a CUDA graph: its own path, not shared
                leaf_ids.append(trie.add(paths.get(call_index, []) + extra + [(op_name or "(unnamed)", category)]))
                continue
            prefix = no_call if call_index is None else (paths.get(call_index) or no_path)
            found = path_node.get(id(prefix))  # the lists live in `paths` (or above) for the whole loop
            if found is None:
                found = path_node[id(prefix)] = (trie.add(prefix), len(prefix))
            leaf = trie.children.get((found[0], op_name or "(unnamed)", category))  # most leaves exist already
            leaf_ids.append(leaf if leaf is not None else trie.add([(op_name or "(unnamed)", category)], *found))
        node_tables.append(trie.table())
        gpu_tables.append(linked.select(
            pl.lit(tree).alias("tree"), pl.Series("node_id", leaf_ids, pl.Int64), "category", "start_ns",
            "duration_ns", "bytes"))
    return {**out, "callctx_nodes": pl.concat(node_tables).to_arrow(),
            "callctx_gpu_ops": pl.concat(gpu_tables).to_arrow()}
