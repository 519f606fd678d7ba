"""One Kineto trace's rows, built a decoded chunk of events at a time: each event routed by its
phase and category to a unified table (CATEGORY_TABLE), and the rows of each table built by
rows.py. Chunks are independent, so RowParts of consecutive chunks built in other processes
merge into the same rows as one built chunk by chunk (parallel.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from functools import partial

import pyarrow as pa

from .decode import Event
from .rows import (
    add_names,
    annotation_rows,
    api_call_rows,
    counter_rows,
    cpu_op_rows,
    flow_end_rows,
    gpu_rows,
    memory_rows,
    pid_rows,
    python_frame_rows,
)

# Kineto category (lower-cased) -> our table. Legacy 2021 names map onto the same tables. Kineto
# aliases MTIA's on-device events to CONCURRENT_KERNEL (libkineto ActivityType), as HTA reads them.
CATEGORY_TABLE = {
    "kernel": "kernels", "mtia_ccp_events": "kernels",
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
UNANALYSED = "unanalysed"  # _route's destination of device work in a category CATEGORY_TABLE lacks
# Row builders of the tables that are built chunk by chunk.
ROW_BUILDERS: dict[str, Callable[[list[Event]], pa.Table | None]] = {
    "kernels": partial(gpu_rows, "kernels"),
    "memcpy": partial(gpu_rows, "memcpy"),
    "memset": partial(gpu_rows, "memset"),
    "synchronizations": partial(gpu_rows, "synchronizations"),
    "api_calls": api_call_rows,
    "cpu_ops": cpu_op_rows,
    "annotations": annotation_rows,
    "python_frames": python_frame_rows,
    "flow_ends": flow_end_rows,
    "memory_events": memory_rows,
    "counters": counter_rows,
}


class RowParts:
    """The rows of one Kineto trace, added a decoded chunk of events at a time. build: the row
    tables (ROW_BUILDERS) to build (None: all); pids_only: those of which only the pid column is kept."""

    def __init__(self, build: set[str] | None = None, pids_only: frozenset[str] = frozenset()):
        self.build, self.pids_only = build, pids_only
        self.parts: dict[str, list[pa.Table]] = defaultdict(list)
        self.events_read = 0
        self.timed = False  # any row of some table, built or not
        self.process_names: dict[int, str] = {}
        self.thread_names: dict[tuple[int, int], str] = {}
        self.unanalysed: Counter[str] = Counter()  # events of device work in a category not mapped, by category

    def add(self, events: list[Event]) -> None:
        self.events_read += len(events)
        routed = _route(events)
        events.clear()  # the routed lists hold them now, and free them table by table
        add_names(routed.pop("meta", []), self.process_names, self.thread_names)
        self.unanalysed.update(e.cat for e in routed.pop(UNANALYSED, []))
        for name in list(routed):
            events_of_table = routed.pop(name)
            if not events_of_table:
                continue
            # counters are always built: few, and only their rows tell whether any event is valid
            built = self.build is None or name in self.build or name == "counters"
            if built:
                part = ROW_BUILDERS[name](events_of_table)
            else:
                part = pid_rows(events_of_table) if name in self.pids_only else None
            self.timed = self.timed or part is not None or not built
            if part is not None:
                self.parts[name].append(part)

    def merge(self, later: RowParts) -> None:
        """Add the rows of the chunks that follow this one's (decoded elsewhere: parallel.py), as
        if `add` had been called with each of them in turn."""
        self.events_read += later.events_read
        self.timed = self.timed or later.timed
        self.process_names.update(later.process_names)
        self.thread_names.update(later.thread_names)
        self.unanalysed.update(later.unanalysed)
        for name, parts in later.parts.items():
            self.parts[name].extend(parts)

    def take(self, name: str) -> pa.Table | None:
        """All chunks' rows of a table (None when it has none)."""
        parts = self.parts.pop(name, [])
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")


def _route(events: list[Event]) -> dict[str, list[Event]]:
    """Events by destination ('meta' for process/thread names), one dict lookup per event on (ph, cat)."""
    routed: dict[str, list[Event]] = defaultdict(list)
    sinks: dict = {}
    for e in events:
        key = (e.ph, e.cat)
        sink = sinks.get(key)
        if sink is None:
            try:
                sinks[key] = sink = _sink(routed, *key)
            except TypeError:  # unhashable cat (a list or dict): not an event we keep
                continue
        if sink is not None:
            sink(e)
    return routed


def _on_device(e: Event) -> bool:
    """Whether an event of an unmapped category is device work: Kineto gives those a stream or device."""
    args = bytes(e.args)
    return b'"stream"' in args or b'"device"' in args


def _sink(routed, ph, cat):
    if ph == "X":
        table = CATEGORY_TABLE.get(cat.lower()) if isinstance(cat, str) else None
        if table:
            return routed[table].append
        unanalysed = routed[UNANALYSED]
        return lambda e: unanalysed.append(e) if isinstance(cat, str) and _on_device(e) else None
    if ph in ("s", "f"):
        return routed["flow_ends"].append
    if ph in ("i", "I"):
        memory = routed["memory_events"]
        return lambda e: memory.append(e) if e.name == "[memory]" else None
    if ph == "M":
        return routed["meta"].append
    if ph == "C":
        return routed["counters"].append
    return None
