"""Counting a Kineto trace's events with the standard library only, independently of tracelake."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from decimal import Decimal

CATEGORY = {
    "kernel": "kernels", "gpu_memcpy": "memcpy", "memcpy": "memcpy", "gpu_memset": "memset", "memset": "memset",
    "cuda_runtime": "api_calls", "runtime": "api_calls", "cuda_driver": "api_calls",
    "python_function": "python_frames", "cpu_op": "cpu_ops", "operator": "cpu_ops",
}


def load_json(path) -> object:
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data, parse_float=Decimal)


def events_of(doc) -> list[dict]:
    return doc if isinstance(doc, list) else doc["traceEvents"]


def count_tables(path) -> Counter:
    counts = Counter()
    for e in events_of(load_json(path)):
        if e.get("ph") == "X" and isinstance(e.get("cat"), str):
            table = CATEGORY.get(e["cat"].lower())
            if table:
                counts[table] += 1
    return counts


def exact_kernel_starts_ns(path) -> list[int]:
    """Kernel start times in ns from the JSON number text (Decimal), sorted."""
    out = []
    for e in events_of(load_json(path)):
        if e.get("ph") == "X" and str(e.get("cat")).lower() == "kernel":
            out.append(int((Decimal(e["ts"]) * 1000).to_integral_value()))
    return sorted(out)
