"""sql/analysis/gpu_utilization.sql: in-use % per chunk of the active range; NVIDIA's low-utilization stretches."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "context_id", "stream_id", "start_ns", "end_ns"]


@pytest.fixture
def util(con):
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 5, 7, 1_000, 1_010),  # active range 1000..1100: 4 chunks of 25 ns
        ("t", 1, 0, 5, 7, 1_050, 1_100),
        ("t", 1, 0, 5, 8, 1_060, 1_070),  # concurrent: a chunk can exceed 100 %
    ])
    load_sql(con, "analysis/gpu_utilization.sql")
    return con


def test_empty(con):
    load_sql(con, "analysis/gpu_utilization.sql")
    assert rows(con, "SELECT * FROM gpu_utilization") == []


def test_series(util):
    assert rows(util, "SELECT chunk, start_ns, duration_ns, in_use_pct FROM gpu_utilization_series(4) ORDER BY chunk") == [
        (0, 1_000, 25, 40.0), (1, 1_025, 25, 0.0), (2, 1_050, 25, 140.0), (3, 1_075, 25, 100.0)]


@pytest.mark.parametrize("threshold_pct, expected", [
    (39, [(1_025, 25, 0.0)]),
    (40, [(1_025, 25, 0.0)]),  # under the threshold, strictly
    (41, [(1_000, 50, 20.0)]),  # two low chunks in a row merge, length-weighted
])
def test_threshold(util, threshold_pct, expected):
    assert rows(util, "SELECT start_ns, duration_ns, in_use_pct FROM gpu_utilization_chunks(4, ?)",
                [threshold_pct]) == expected


def test_defaults(util):
    assert rows(util, "SELECT trace_id, pid, device_id, context_id, start_ns, duration_ns FROM gpu_utilization") == [
        ("t", 1, 0, 5, 1_012, 36)]  # 30 chunks of 4 ns; 1008..1012 and 1048..1052 are half busy: not under 50 %
