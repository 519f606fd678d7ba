"""Where each allocator event happened: the `memory_context` table (one row per memory_events row)
and the contexts it points to, `memory_call_contexts` (one row per distinct context: a few hundred
where a trace has tens of thousands of events, so the views group by id and join the text last).

callctx_build finds the calling context of every allocator event in the same sweep that places the
launch calls (a PyTorch [memory] event sits inside the operators and Python frames of its thread;
an Nsight allocation has the backtrace and NVTX ranges of its cudaMalloc call, by correlation id).
This module turns those paths into columns the memory views group by:

- `operator`, `operator_stack`: the innermost operator and all enclosing ones (PyTorch cpu_ops; nsys
  at::_ops frames of the backtrace, else the NVTX ranges).
- `call_stack`, `nvtx_path`: the paths as text, outermost first, ' > ' between frames.
- `paired_event_id`, `block_status`: the block each event starts or ends, paired here (per trace, in
  polars) rather than in SQL, where a window over every event of the lake cost ~10x more: an
  allocation pairs with the next event at the same address on the same process and device when that
  is a free. Events without an address (2021 traces) pair with nothing.
- `category`: the allocation site, the first rule whose pattern some frame, operator or range of the
  context matches. Tensors of one kind are born at one site: parameters and inputs outside the
  step's forward/backward ('other'), activations in the forward, gradients in the backward,
  optimizer state in the optimizer step. That is the only category a trace can support; PyTorch's own
  categories (export_memory_timeline) come from the operator data-flow graph, which is not in a trace.
"""

from __future__ import annotations

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
    """Index into CATEGORIES of the first rule some label matches."""
    for rank, (_, pattern) in enumerate(CATEGORY_RULES):
        if any(pattern.search(label) for label in labels):
            return rank
    return len(CATEGORY_RULES)


BLOCK_KEYS = ["pid", "device_type", "device_id", "address"]


def blocks(memory: pl.DataFrame) -> pl.DataFrame:
    """paired_event_id and block_status of each row of `memory` (event_id, BLOCK_KEYS, bytes), in its order.

    Allocation: 'freed' (the next event at its address frees it), 'never_freed' (no later event),
    'free_missing' (allocated again there first). Free: 'freed' (the event before allocated it), or
    'alive_before_trace' (allocated before the trace began). NULL without an address or size.
    """
    ordered = memory.select("event_id", *BLOCK_KEYS, "bytes").with_row_index("row") \
        .filter(pl.col("address").is_not_null() & (pl.col("bytes") != 0)).sort("event_id")
    step = {f"{d}_{c}": pl.col(c).shift(n).over(BLOCK_KEYS) for d, n in (("next", -1), ("prev", 1))
            for c in ("event_id", "bytes")}
    alloc, next_bytes, prev_bytes = pl.col("bytes") > 0, pl.col("next_bytes"), pl.col("prev_bytes")
    paired = ordered.with_columns(**step).select(
        "row",
        pl.when(alloc & (next_bytes < 0)).then("next_event_id")
        .when(~alloc & (prev_bytes > 0)).then("prev_event_id").alias("paired_event_id"),
        pl.when(alloc).then(pl.when(next_bytes < 0).then(pl.lit("freed")).when(next_bytes > 0)
                            .then(pl.lit("free_missing")).otherwise(pl.lit("never_freed")))
        .otherwise(pl.when(prev_bytes > 0).then(pl.lit("freed")).otherwise(pl.lit("alive_before_trace")))
        .alias("block_status"),
    )
    return memory.with_row_index("row").select("row").join(paired, on="row", how="left", maintain_order="left") \
        .drop("row")


def tables(memory: pl.DataFrame, stack_paths: dict[int, list[tuple[str, str]]],
           nvtx_paths: dict[int, list[tuple[str, str]]], is_nsys: bool) -> dict[str, pa.Table]:
    """memory_context (one row per event of `memory`: event_id, BLOCK_KEYS, bytes) and
    memory_call_contexts (one row per distinct context). The path dicts are keyed by row of `memory`.
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
    paired = blocks(memory)
    types = {"operator_stack": pa.list_(pa.string())}
    return {
        "memory_context": pa.table({"event_id": memory["event_id"].to_arrow(),
                                    "paired_event_id": paired["paired_event_id"].cast(pl.Int64).to_arrow(),
                                    "block_status": paired["block_status"].to_arrow(),
                                    "context_id": pa.array(ids, pa.int64())}),
        "memory_call_contexts": pa.table({"context_id": pa.array(range(len(context_ids)), pa.int64()),
                                          **{name: pa.array(values, types.get(name, pa.string()))
                                             for name, values in contexts.items()}}),
    }
