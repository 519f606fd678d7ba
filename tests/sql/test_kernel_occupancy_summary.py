"""sql/analysis/kernel_occupancy_summary.sql: launches grouped by kernel and configuration, with
their share of the kernel time, on the recorded H100's limits (test_kernel_occupancy.py)."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .test_kernel_occupancy import DEVICE, H100, KERNEL, kernel


def test_configurations_of_one_kernel_stay_apart(con):
    given(con, "devices", DEVICE, [H100])
    given(con, "kernels", KERNEL, [
        kernel(0, "gemm", 1000, 256, 128, 0, duration=30),   # registers: 2 blocks, 25 %
        kernel(40, "gemm", 1000, 256, 128, 0, duration=30),
        kernel(80, "gemm", 1000, 256, 32, 0, duration=20),   # another configuration: warps, 8 blocks, 100 %;
        # the grid gives each SM 1000 / 132 = 7.58 blocks: estimated 7.58 x 256 / 2048 = 94.7 %
        kernel(100, "copy", 66, 1024, 32, 0, duration=20),   # small grid: estimated 25 %
    ])
    load_sql(con, "analysis/kernel_occupancy_summary.sql")
    assert rows(con, """SELECT name, registers_per_thread, launches, total_ns, round(time_pct, 1), active_blocks_per_sm,
                               round(theoretical_occupancy_pct, 1), round(estimated_occupancy_pct, 1), limiter
                        FROM kernel_occupancy_summary ORDER BY total_ns DESC, registers_per_thread, name""") == [
        ("gemm", 128, 2, 60, 60.0, 2, 25.0, 25.0, "registers"),
        ("copy", 32, 1, 20, 20.0, 2, 100.0, 25.0, "warps"),
        ("gemm", 32, 1, 20, 20.0, 8, 100.0, 94.7, "warps"),
    ]
