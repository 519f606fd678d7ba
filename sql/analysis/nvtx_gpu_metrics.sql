-- nvtx_gpu_metrics: what the GPU's hardware counters measured while the work of each NVTX
-- range ran (exports made with nsys --gpu-metrics-devices), per range name.
-- nvtx_range_gpu_metrics: the same per range instance. A range's window is its GPU
-- projection (nvtx_gpu_projection: first start to last end of the GPU work launched inside
-- it), on each GPU its process ran work on; the metrics are time-weighted averages of the
-- samples over that window, samples cut at its edges (gpu_metrics_over). The counters are
-- the whole GPU's: work of other streams or processes running at the same time is in them.
-- Peaks of the GB/s: gpu_metric_samples (DRAM: the export's memoryBandwidth; PCIe: the
-- datasheet link of gpu_pcie_links). Ranges without GPU work or outside the sampled time
-- have no row.
--
-- depends: nvtx_gpu_projection, nvtx_ranges, gpu_ops, gpu_metrics_over
-- materialize: per trace
--
-- @column trace_id             Trace.
-- @column range                Range name (as in nvtx_summary).
-- @column instances            Ranges of that name with samples (nvtx_gpu_metrics).
-- @column annotation_id        The range (nvtx_range_gpu_metrics only).
-- @column pid                  Process (nvtx_range_gpu_metrics only).
-- @column depth                Nesting depth on its thread (nvtx_range_gpu_metrics only).
-- @column start_ns             Start of the range's GPU projection (nvtx_range_gpu_metrics only, ns).
-- @column end_ns               End of the range's GPU projection (nvtx_range_gpu_metrics only, ns).
-- @column device_id            GPU.
-- @column duration_ns          Length of the projection; for a name, summed over its instances (ns).
-- @column sampled_ns           The part of it inside sampling periods (ns).
-- @column sm_active_pct        Mean 'SMs Active' (%).
-- @column sm_issue_pct         Mean 'SM Issue' (%).
-- @column tensor_active_pct    Mean 'Tensor Active' (%).
-- @column dram_read_gb_per_s   Mean DRAM read rate (GB/s).
-- @column dram_write_gb_per_s  Mean DRAM write rate (GB/s).
-- @column dram_peak_gb_per_s   The DRAM peak the rates are of (GB/s).
-- @column pcie_rx_gb_per_s     Mean PCIe rate into the GPU (GB/s).
-- @column pcie_tx_gb_per_s     Mean PCIe rate out of the GPU (GB/s).
-- @column pcie_peak_gb_per_s   The PCIe peak per direction (GB/s; NULL: link unknown).
CREATE OR REPLACE VIEW nvtx_range_gpu_metrics AS
WITH windows AS (
    SELECT p.trace_id, d.device_id, p.annotation_id AS lane, p.proj_start_ns AS start_ns, p.proj_end_ns AS end_ns
    FROM nvtx_gpu_projection p
    JOIN nvtx_ranges r USING (trace_id, annotation_id)
    JOIN (SELECT DISTINCT trace_id, pid, device_id FROM gpu_ops) d ON d.trace_id = r.trace_id AND d.pid = r.pid
)
SELECT m.trace_id, r.range, m.lane AS annotation_id, r.pid, r.depth, p.proj_start_ns AS start_ns,
       p.proj_end_ns AS end_ns, m.* EXCLUDE (trace_id, lane, intervals)
FROM gpu_metrics_over(windows) m
JOIN nvtx_ranges r ON r.trace_id = m.trace_id AND r.annotation_id = m.lane
JOIN nvtx_gpu_projection p ON p.trace_id = m.trace_id AND p.annotation_id = m.lane;

CREATE OR REPLACE VIEW nvtx_gpu_metrics AS
SELECT trace_id, range, device_id, count(*) AS instances,
       CAST(sum(duration_ns) AS BIGINT) AS duration_ns, CAST(sum(sampled_ns) AS BIGINT) AS sampled_ns,
       sum(sampled_ns * sm_active_pct) / sum(sampled_ns) FILTER (WHERE sm_active_pct IS NOT NULL) AS sm_active_pct,
       sum(sampled_ns * sm_issue_pct) / sum(sampled_ns) FILTER (WHERE sm_issue_pct IS NOT NULL) AS sm_issue_pct,
       sum(sampled_ns * tensor_active_pct) / sum(sampled_ns) FILTER (WHERE tensor_active_pct IS NOT NULL)
           AS tensor_active_pct,
       sum(sampled_ns * dram_read_gb_per_s) / sum(sampled_ns) FILTER (WHERE dram_read_gb_per_s IS NOT NULL)
           AS dram_read_gb_per_s,
       sum(sampled_ns * dram_write_gb_per_s) / sum(sampled_ns) FILTER (WHERE dram_write_gb_per_s IS NOT NULL)
           AS dram_write_gb_per_s,
       any_value(dram_peak_gb_per_s) AS dram_peak_gb_per_s,
       sum(sampled_ns * pcie_rx_gb_per_s) / sum(sampled_ns) FILTER (WHERE pcie_rx_gb_per_s IS NOT NULL)
           AS pcie_rx_gb_per_s,
       sum(sampled_ns * pcie_tx_gb_per_s) / sum(sampled_ns) FILTER (WHERE pcie_tx_gb_per_s IS NOT NULL)
           AS pcie_tx_gb_per_s,
       any_value(pcie_peak_gb_per_s) AS pcie_peak_gb_per_s
FROM nvtx_range_gpu_metrics
GROUP BY trace_id, range, device_id;
