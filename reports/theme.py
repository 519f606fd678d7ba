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

# Critical-path classes (critical_path_summary *_ns columns): host work in warm tones, GPU in the
# category colors above.
CRITICAL_PATH_COLORS = {
    "cpu": "#d35454",
    "data_loading": "#a33b3b",
    "launch_overhead": "#f0a35e",
    "kernel_to_kernel": "#f2c14e",
    "sync_wait": "#9aa5b1",
    "memcpy": CATEGORY_COLORS["memcpy"],
    "communication": CATEGORY_COLORS["communication"],
    "gpu_compute": CATEGORY_COLORS["compute"],
}

# Host lanes of the step timeline (sql/analysis/timeline.sql): quiet tones, as the code above, and
# synchronizations dark, where the host waits on the GPU.
HOST_COLORS = {
    "cpu_op": CODE_COLORS["op"],
    "cuda_api": CODE_COLORS["native"],
    "sync": "#2b2b2b",
}

# Why the GPU sat idle: the vocabulary of sql/base/idle_cause.sql (idle_breakdown, gpu_gap_causes).
CAUSE_COLORS = {
    "host_wait": "#d35454",
    "kernel_wait": "#e0a030",
    "other": "#17a589",  # not communication's purple: the step timeline shows both
    "in_graph": "#2e86c1",
}


def ms(ns) -> str:
    """A duration in ns, in the unit that shows it: µs under 0.1 ms, s from 1 s, ms between."""
    if ns is None:
        return "–"
    ns = float(ns)
    if ns == 0:
        return "0"
    if abs(ns) < 1e5:
        return f"{ns / 1e3:,.1f} µs"
    return f"{ns / 1e6:,.3f} ms" if abs(ns) < 1e9 else f"{ns / 1e9:,.3f} s"


def pct(value) -> str:
    if value is None:
        return "–"
    value = float(value)
    return "< 0.1 %" if 0 < abs(value) < 0.05 else f"{value:.1f} %"


def count(value) -> str:
    return "–" if value is None else f"{int(value):,}"


def size(value) -> str:
    """Bytes in decimal units (B, kB, MB, GB), three significant figures at least."""
    if value is None:
        return "–"
    value = float(value)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:,.1f} {unit}"
    return f"{value:,.0f} B"


def gbps(bytes_per_s) -> str:
    """A bandwidth in bytes/s, as GB/s, or MB/s under 1 GB/s (decimal units)."""
    if bytes_per_s is None:
        return "–"
    value = float(bytes_per_s)
    return f"{value / 1e9:,.1f} GB/s" if abs(value) >= 1e9 else f"{value / 1e6:,.1f} MB/s"


def gib(value) -> str:
    return "–" if value is None else f"{float(value) / 2**30:,.2f} GiB"


def seconds(ns) -> str:
    """A time since the trace's start in s to the µs, as Perfetto's UI counts in an export."""
    return "–" if ns is None else f"{ns / 1e9:.6f} s"


def short(label: str | None, limit: int = 90) -> str:
    """Long C++ names shortened for display (the full name goes in the title attribute)."""
    if label is None:
        return "–"
    return label if len(label) <= limit else label[: limit - 1] + "…"


def when(epoch_ns) -> str:
    """A Unix-epoch time in ns as 'YYYY-MM-DD HH:MM' UTC; '–' when unknown (a relative trace clock)."""
    if epoch_ns is None:
        return "–"
    import datetime

    return datetime.datetime.fromtimestamp(epoch_ns / 1e9, datetime.UTC).strftime("%Y-%m-%d %H:%M")


def raw(value) -> str:
    """A number as a data-value attribute holds it: integers exactly, floats to 12 significant
    digits (the last bits of a float sum depend on the order its rows were added in, which
    depends on what else the database holds); '' for none."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.12g}"
    return str(value)
