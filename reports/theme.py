"""Colors, labels and number formats shared by every report section and chart."""

from __future__ import annotations

# One color per category, the same in every chart.
CATEGORY_COLORS = {
    "compute": "#2f6db5",
    "communication": "#8e44ad",
    "memcpy": "#e07b24",
    "memset": "#f2c14e",
    "idle": "#c8ccd2",
    "non_compute": "#d35454",
}


# Calling-context frames (the code) in quiet tones, so the GPU work under them stands out in
# the category colors above.
CODE_COLORS = {
    "python": "#7d8fa3",
    "op": "#5d7186",
    "native": "#9aa5b1",
    "nvtx": "#4f8f8b",
    "unattributed": "#c8ccd2",
}

# Why the GPU sat idle (gpu_gap_causes.cause).
CAUSE_COLORS = {
    "host_late": "#d35454",
    "gpu_dependency": "#8e44ad",
    "unknown": "#9aa5b1",
}


def ms(ns) -> str:
    if ns is None:
        return "–"
    ns = float(ns)
    return f"{ns / 1e6:,.3f} ms" if abs(ns) < 1e8 else f"{ns / 1e9:,.3f} s"


def pct(value) -> str:
    return "–" if value is None else f"{float(value):.1f} %"


def count(value) -> str:
    return "–" if value is None else f"{int(value):,}"


def gbps(bytes_per_s) -> str:
    return "–" if bytes_per_s is None else f"{float(bytes_per_s) / 1e9:,.1f} GB/s"


def mb(value) -> str:
    return "–" if value is None else f"{float(value) / 1e6:,.1f} MB"


def gib(value) -> str:
    return "–" if value is None else f"{float(value) / 2**30:,.2f} GiB"


def short(label: str | None, limit: int = 90) -> str:
    """Long C++ names shortened for display (the full name goes in the title attribute)."""
    if label is None:
        return "–"
    return label if len(label) <= limit else label[: limit - 1] + "…"
