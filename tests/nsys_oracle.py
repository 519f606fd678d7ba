"""Comparing a tracelake view with one of NVIDIA's `nsys stats` CSV reports.

Each spec names the view, the key columns (NVIDIA header -> view column) and the value columns
with how to compare them: 'exact' for integers (counts, ns totals, min, max), 'printed' for
values NVIDIA prints rounded (averages, medians, percentages, standard deviations: equal within
half a unit of the last printed digit), and 'MB' for byte sizes NVIDIA prints in 10^6 bytes.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

STATS_NS = {"Total Time (ns)": ("total_ns", "exact"), "Avg (ns)": ("avg_ns", "printed"),
            "Med (ns)": ("med_ns", "printed"), "Min (ns)": ("min_ns", "exact"), "Max (ns)": ("max_ns", "exact"),
            "StdDev (ns)": ("stddev_ns", "printed"), "Time (%)": ("time_pct", "printed")}

REPORTS = {
    "cuda_gpu_kern_sum": ("kernel_summary", {"Name": "name"}, {**STATS_NS, "Instances": ("instances", "exact")}),
    "cuda_gpu_mem_time_sum": ("memcpy_time_summary", {"Operation": "operation"},
                              {**STATS_NS, "Count": ("count", "exact")}),
    "cuda_gpu_mem_size_sum": ("memcpy_size_summary", {"Operation": "operation"}, {
        "Total (MB)": ("total_bytes", "MB"), "Count": ("count", "exact"), "Avg (MB)": ("avg_bytes", "MB"),
        "Med (MB)": ("med_bytes", "MB"), "Min (MB)": ("min_bytes", "MB"), "Max (MB)": ("max_bytes", "MB"),
        "StdDev (MB)": ("stddev_bytes", "MB")}),
    "cuda_gpu_sum": ("gpu_summary", {"Category": "category", "Operation": "name"},
                     {**STATS_NS, "Instances": ("instances", "exact")}),
    "cuda_api_sum": ("api_summary_nsys", {"Name": "name"}, {**STATS_NS, "Num Calls": ("num_calls", "exact")}),
    "osrt_sum": ("osrt_summary", {"Name": "name"}, {**STATS_NS, "Num Calls": ("num_calls", "exact")}),
    "nvtx_sum": ("nvtx_summary", {"Range": "range", "Style": "style"},
                 {**STATS_NS, "Instances": ("instances", "exact")}),
    "nvtx_gpu_proj_sum": ("nvtx_gpu_summary", {"Range": "range", "Style": "style"}, {
        "Total Proj Time (ns)": ("total_proj_ns", "exact"), "Total Range Time (ns)": ("total_range_ns", "exact"),
        "Range Instances": ("instances", "exact"), "Proj Avg (ns)": ("proj_avg_ns", "printed"),
        "Proj Med (ns)": ("proj_med_ns", "printed"), "Proj Min (ns)": ("proj_min_ns", "exact"),
        "Proj Max (ns)": ("proj_max_ns", "exact"), "Proj StdDev (ns)": ("proj_stddev_ns", "printed"),
        "Total GPU Ops": ("total_gpu_ops", "exact"), "Avg GPU Ops": ("avg_gpu_ops", "printed"),
        "Avg Range Lvl": ("avg_range_level", "printed"), "Avg Num Child": ("avg_num_children", "printed")}),
    # nsys analyze rules
    "gpu_gaps": ("gpu_gaps", {"PID": "pid", "Device ID": "device_id", "Start (ns)": "start_ns"},
                 {"Duration (ns)": ("duration_ns", "exact"), "Context ID": ("context_id", "exact")}),
    "gpu_time_util": ("gpu_utilization", {"PID": "pid", "Device ID": "device_id", "Start (ns)": "start_ns"},
                      {"Duration (ns)": ("duration_ns", "exact"), "In-Use (%)": ("in_use_pct", "printed"),
                       "Context ID": ("context_id", "exact")}),
    "cuda_memcpy_async": ("nsys_analyze_cuda_memcpy_async", {"PID": "pid", "Start (ns)": "start_ns"},
                          {"Duration (ns)": ("duration_ns", "exact"), "API Name": ("api_name", "text")}),
    "cuda_memcpy_sync": ("nsys_analyze_cuda_memcpy_sync", {"PID": "pid", "Start (ns)": "start_ns"},
                         {"Duration (ns)": ("duration_ns", "exact"), "API Name": ("api_name", "text")}),
    "cuda_memset_sync": ("nsys_analyze_cuda_memset_sync", {"PID": "pid", "Start (ns)": "start_ns"},
                         {"Duration (ns)": ("duration_ns", "exact"), "API Name": ("api_name", "text")}),
    "cuda_api_sync": ("nsys_analyze_cuda_api_sync", {"PID": "pid", "TID": "tid", "Start (ns)": "start_ns"},
                      {"Duration (ns)": ("duration_ns", "exact"), "API Name": ("api_name", "text")}),
}
# nsys analyze prints at most this many rows per rule: the longest ones.
RULE_ROW_LIMIT = {"cuda_memcpy_async": 50, "cuda_memcpy_sync": 50, "cuda_memset_sync": 50, "cuda_api_sync": 50}


def read_oracle(path: Path) -> list[dict]:
    if path.stat().st_size == 0:
        return []
    return list(csv.DictReader(open(path, newline="", encoding="utf-8")))


def _numbered(pairs: list[tuple[tuple, dict]]) -> dict[tuple, dict]:
    seen: dict[tuple, int] = {}
    out = {}
    for key, row in pairs:
        seen[key] = seen.get(key, 0) + 1
        out[key + ((seen[key],) if seen[key] > 1 else ())] = row
    return out


def _half_unit(printed: str) -> Decimal:
    digits = len(printed.split(".")[1]) if "." in printed else 0
    return Decimal(5) / Decimal(10) ** (digits + 1)


def compare(con, trace_id: str, oracle_dir: Path, report: str) -> list[str]:
    """Differences between NVIDIA's CSV and our view (empty list = parity)."""
    view, keys, values = REPORTS[report]
    expected = read_oracle(oracle_dir / f"{report}.csv")
    columns = list(keys.values()) + [v[0] for v in values.values()]
    total = next((v[0] for v in values.values() if v[0].startswith("total_")), None) or \
        next(v[0] for v in values.values() if v[1] == "exact")
    limit = f"LIMIT {RULE_ROW_LIMIT[report]}" if report in RULE_ROW_LIMIT else ""
    rows = con.execute(f"SELECT {', '.join(columns)} FROM {view} WHERE trace_id = ? ORDER BY {total} DESC, "
                       f"{', '.join(columns)} {limit}", [trace_id]).fetchall()
    # A name or start can appear twice (nsys groups by string id, or lists an operation once per
    # matching API row): rows are put in one canonical order on both sides, then numbered.
    texts = [c for c, how in values.values() if how == "text"]
    ours_sorted = sorted((dict(zip(columns, r)) for r in rows),
                         key=lambda d: (-d[total], *[str(d[c]) for c in columns[: len(keys)]], *[str(d[c]) for c in texts]))
    ours = _numbered([(tuple(str(d[c]) for c in keys.values()), d) for d in ours_sorted])
    problems = []
    header_of = {v[0]: h for h, v in values.items()}
    expected.sort(key=lambda row: (-Decimal(row[header_of[total]]), *[row[k] for k in keys],
                                   *[row[header_of[c]] for c in texts]))
    theirs = _numbered([(tuple(row[k] for k in keys), row) for row in expected])
    for missing in sorted(set(theirs) - set(ours), key=str)[:5]:
        problems.append(f"{report}: row {missing} missing")
    for extra in sorted(set(ours) - set(theirs), key=str)[:5]:
        problems.append(f"{report}: extra row {extra}")
    for key in set(theirs) & set(ours):
        for header, (column, how) in values.items():
            printed, got = theirs[key][header], ours[key][column]
            if how == "text":
                ok = printed == got
            elif how == "exact":
                ok = got is not None and int(Decimal(printed)) == got and Decimal(printed) == int(Decimal(printed))
            else:
                scale = Decimal(10) ** 6 if how == "MB" else Decimal(1)
                ok = got is not None and abs(Decimal(str(got)) / scale - Decimal(printed)) <= _half_unit(printed) + \
                    Decimal("1e-9")
            if not ok:
                problems.append(f"{report}: {key} {header}: NVIDIA {printed}, tracelake {got}")
    return problems
