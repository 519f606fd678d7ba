"""What Nsight's GPU hardware metrics measured (exports made with --gpu-metrics-devices): the
metrics over time through one steady step (steady_step_gpu_metrics) and per NVTX range
(nvtx_gpu_metrics), and the measured roofline beside the modelled one per kernel
(kernel_measured_roofline)."""

from __future__ import annotations

import polars as pl

from .. import charts
from ..figure import Column, Figure
from ..page import Page

NAME = "gpu_metrics"
TITLE = "GPU hardware metrics"
VIEWS = ("steady_step_gpu_metrics", "nvtx_gpu_metrics", "kernel_measured_roofline")
LIMIT = 15
METRICS = {"sm_active_pct": "SMs Active", "tensor_active_pct": "Tensor Active", "dram_pct": "DRAM read + write",
           "pcie_rx_pct": "PCIe rx", "pcie_tx_pct": "PCIe tx"}


def figure(page: Page) -> Figure | None:
    """One row per slice and metric: the step of the page's process (the first with samples)."""
    # the view evaluated once (materialized), not once per reference
    wide = page.sql("""WITH s AS MATERIALIZED (SELECT * FROM steady_step_gpu_metrics WHERE trace_id = $trace)
                       SELECT step, device_id, (start_ns - $origin) / 1e6 AS t_ms, (end_ns - start_ns) / 1e6 AS slice_ms,
                              sm_active_pct, tensor_active_pct, dram_pct, pcie_rx_pct, pcie_tx_pct
                       FROM s WHERE pid = (SELECT min(pid) FROM s) AND device_id = (SELECT min(device_id) FROM s)
                       ORDER BY slice""", {"origin": page.origin_ns})
    if wide.is_empty():
        return None
    frame = (wide.unpivot(index=["step", "t_ms", "slice_ms"], on=list(METRICS), variable_name="column", value_name="pct")
             .drop_nulls("pct")
             .with_columns(pl.col("column").replace_strict(METRICS).alias("metric"))
             .select("metric", "t_ms", "slice_ms", "pct"))
    step = wide["step"][0]
    return Figure("gpu_metrics", f"GPU hardware metrics through {step} (GPU {wide['device_id'][0]})",
                  charts.gpu_metrics_over_time(frame), frame,
                  [Column("metric", "metric"), Column("t_ms", "slice start (since trace start)", "ms"),
                   Column("slice_ms", "slice length", "ms"), Column("pct", "of peak", "pct")])


def build(page: Page) -> dict | None:
    if page.sql("SELECT 1 FROM gpu_metrics WHERE trace_id = $trace LIMIT 1").is_empty():
        return None  # no samples (most exports, every PyTorch trace): skip the views over them
    rows = page.sql(f"""SELECT range, device_id, instances, duration_ns, sm_active_pct, sm_issue_pct, tensor_active_pct,
                               dram_read_gb_per_s, dram_write_gb_per_s, dram_peak_gb_per_s, pcie_rx_gb_per_s,
                               pcie_tx_gb_per_s, pcie_peak_gb_per_s
                        FROM nvtx_gpu_metrics WHERE trace_id = $trace
                        ORDER BY duration_ns DESC, range, device_id LIMIT {LIMIT}""").to_dicts()
    roofline = page.sql(f"""SELECT name, device_id, instances, duration_ns, measured_bytes, modelled_bytes,
                                   measured_to_modelled, dram_pct, achieved_tflops, measured_intensity,
                                   modelled_intensity, measured_bound, modelled_bound
                            FROM kernel_measured_roofline WHERE trace_id = $trace
                            ORDER BY duration_ns DESC, name, device_id LIMIT {LIMIT}""").to_dicts()
    fig = figure(page)
    if fig is None and not rows and not roofline:
        return None
    return {"figure": fig, "rows": rows, "roofline": roofline}
