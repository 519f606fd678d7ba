"""Where each allocator event happened and which blocks the events make, as three lake tables:
`memory_context` (one row per memory_events row: its context id), `memory_call_contexts` (one row per
distinct context: a few hundred where a trace has tens of thousands of events, so the views group by
id and join the text last) and `memory_blocks` (each allocation paired with its free).

callctx_build finds the calling context of every allocator event in the same sweep that places the
launch calls (a PyTorch [memory] event sits inside the operators and Python frames of its thread;
an Nsight allocation has the backtrace and NVTX ranges of its cudaMalloc call, by correlation id).
This module turns those paths into columns the memory views group by:

- `operator`, `operator_stack`: the innermost operator and all enclosing ones (PyTorch cpu_ops; nsys
  at::_ops frames of the backtrace, else the NVTX ranges).
- `call_stack`, `nvtx_path`: the paths as text, outermost first, ' > ' between frames.
- `memory_blocks`: paired here, once per trace in polars, rather than in SQL, where a window over
  every event of the lake cost ~10x more and each memory view would pair again.
- `category`: the allocation site, the first rule whose pattern some frame, operator or range of the
  context matches. Tensors of one kind are born at one site: parameters and inputs outside the
  step's forward/backward ('other'), activations in the forward, gradients in the backward,
  optimizer state in the optimizer step. That is the only category a trace can support; PyTorch's own
  categories (export_memory_timeline) come from the operator data-flow graph, which is not in a trace.
"""

from __future__ import annotations

import functools
import re

import polars as pl
import pyarrow as pa

SEPARATOR = " > "

# (category, pattern over frame / operator / range labels). First match wins.
CATEGORY_RULES = (
    ("optimizer", re.compile(r"^Optimizer\.(step|zero_grad)#|torch/optim/|^(optimizer|opt)([\s_.:#(-]|$)", re.I)),
    ("backward", re.compile(r"^autograd::engine::evaluate_function|torch/autograd/|: backward$|"
                            r"^(backward|bwd)([\s_.:#(-]|$)", re.I)),
    ("forward", re.compile(r"^nn\.Module: |: forward$|^(forward|fwd)([\s_.:#(-]|$)", re.I)),
)


CATEGORIES = [category for category, _ in CATEGORY_RULES] + ["other"]


def category_rank(labels: list[str]) -> int:
    """Index into CATEGORIES of the first rule some label matches: the least of the labels' own
    ranks (each label is matched once per process: paths of a trace repeat the same few thousand
    labels, thousands of times)."""
    return min(map(_label_rank, labels), default=len(CATEGORY_RULES))


@functools.lru_cache(maxsize=1 << 16)
def _label_rank(label: str) -> int:
    """Index into CATEGORIES of the first rule the label matches."""
    return next((rank for rank, (_, pattern) in enumerate(CATEGORY_RULES) if pattern.search(label)),
                len(CATEGORY_RULES))


BLOCK_KEYS = ["pid", "device_type", "device_id", "address"]


def blocks(events: pl.DataFrame) -> pl.DataFrame:
    """The memory_blocks rows of `events` (event_id, ts_ns, context_id, mem_kind, BLOCK_KEYS, bytes).

    An allocation pairs with the next event at its address (same process and device) when that is
    a free: 'freed'; 'never_freed' when no event follows, 'free_missing' when it is allocated again
    first. A free whose address saw no allocation before it is a block 'alive_before_trace'. Events
    without an address or size (2021 traces) make no block.
    """
    ordered = events.filter(pl.col("address").is_not_null() & (pl.col("bytes") != 0)).sort("event_id")
    step = {f"{d}_{c}": pl.col(c).shift(n).over(BLOCK_KEYS) for d, n in (("next", -1), ("prev", 1))
            for c in ("event_id", "bytes", "ts_ns", "context_id")}
    ordered = ordered.with_columns(**step)
    freed = pl.col("next_bytes") < 0
    allocated = ordered.filter(pl.col("bytes") > 0).select(
        *BLOCK_KEYS, "mem_kind", "bytes",
        pl.when(freed).then(pl.lit("freed")).when(pl.col("next_bytes") > 0).then(pl.lit("free_missing"))
        .otherwise(pl.lit("never_freed")).alias("status"),
        pl.col("event_id").alias("alloc_event_id"), pl.when(freed).then("next_event_id").alias("free_event_id"),
        pl.col("ts_ns").alias("alloc_ns"), pl.when(freed).then("next_ts_ns").alias("free_ns"),
        pl.col("context_id").alias("alloc_context_id"), pl.when(freed).then("next_context_id").alias("free_context_id"),
    )
    before = ordered.filter((pl.col("bytes") < 0) & ~(pl.col("prev_bytes") > 0).fill_null(False)).select(
        *BLOCK_KEYS, "mem_kind", -pl.col("bytes"), pl.lit("alive_before_trace").alias("status"),
        pl.lit(None, pl.Int64).alias("alloc_event_id"), pl.col("event_id").alias("free_event_id"),
        pl.lit(None, pl.Int64).alias("alloc_ns"), pl.col("ts_ns").alias("free_ns"),
        pl.lit(None, pl.Int64).alias("alloc_context_id"), pl.col("context_id").alias("free_context_id"),
    )
    return pl.concat([allocated, before], how="vertical_relaxed").sort(pl.coalesce("alloc_event_id", "free_event_id"))


def tables(memory: pl.DataFrame, stack_paths: dict[int, list[tuple[str, str]]],
           nvtx_paths: dict[int, list[tuple[str, str]]], is_nsys: bool) -> dict[str, pa.Table]:
    """memory_context (one row per event of `memory`: event_id, ts_ns, mem_kind, BLOCK_KEYS, bytes),
    memory_call_contexts (one row per distinct context) and memory_blocks. The path dicts are keyed by row of `memory`.
    Each distinct path is described once: equal paths are mostly one list object
    (callctx_build._enclosing_paths), found by identity; contexts are numbered in order of first use."""
    by_id: dict[int, tuple] = {}  # id(path) -> (description, path); holding the path keeps its id taken
    by_value: dict[tuple, tuple] = {}
    empty: list = []

    def describe(path: list) -> tuple:
        """(key, operator labels, all labels, text, category rank) of a path."""
        hit = by_id.get(id(path))
        if hit is None:
            key = tuple(path)
            row = by_value.get(key)
            if row is None:
                labels = [label for label, _ in path]
                row = by_value[key] = (len(by_value), [label for label, kind in path if kind == "op"], labels,
                                       SEPARATOR.join(labels) or None, category_rank(labels))
            hit = by_id[id(path)] = (row, path)
        return hit[0]

    by_paths: dict[tuple[int, int], int] = {}  # (id(stack path), id(nvtx path)) -> context id
    context_ids: dict[tuple[int, int], int] = {}  # (stack key, nvtx key) -> context id
    contexts: dict[str, list] = {"operator": [], "operator_stack": [], "call_stack": [], "nvtx_path": [],
                                 "category": []}

    def context_of(stack_path: list, nvtx_path: list) -> int:
        context = by_paths.get((id(stack_path), id(nvtx_path)))
        if context is None:
            stack, nvtx = describe(stack_path), describe(nvtx_path)
            context = context_ids.get((stack[0], nvtx[0]))
            if context is None:
                context = context_ids[(stack[0], nvtx[0])] = len(context_ids)
                # nsys without at::_ops frames: the NVTX ranges (PyTorch's autograd NVTX ranges are its operators)
                operators = stack[1] or (nvtx[2] if is_nsys else None)
                contexts["operator"].append(operators[-1] if operators else None)
                contexts["operator_stack"].append(operators or None)
                contexts["call_stack"].append(stack[3])
                contexts["nvtx_path"].append(nvtx[3])
                contexts["category"].append(CATEGORIES[min(stack[4], nvtx[4])])
            by_paths[(id(stack_path), id(nvtx_path))] = context
        return context

    ids = [context_of(stack_paths.get(i, empty), nvtx_paths.get(i, empty)) for i in range(memory.height)]
    types = {"operator_stack": pa.list_(pa.string())}
    context = pl.DataFrame({"event_id": memory["event_id"], "context_id": pl.Series(ids, dtype=pl.Int64)})
    return {
        "memory_context": context.to_arrow(),
        "memory_blocks": blocks(memory.with_columns(context["context_id"])).to_arrow(),
        "memory_call_contexts": pa.table({"context_id": pa.array(range(len(context_ids)), pa.int64()),
                                          **{name: pa.array(values, types.get(name, pa.string()))
                                             for name, values in contexts.items()}}),
    }
