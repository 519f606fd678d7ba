-- step_gpu_metrics: what the GPU's hardware counters measured during each step (exports
-- made with nsys --gpu-metrics-devices): time-weighted averages of the samples over the
-- step's window (steps: start to end), on each GPU its process ran work on, samples cut at
-- the edges (gpu_metrics_over). Peaks of the GB/s: gpu_metric_samples.
--
-- depends: steps, gpu_ops, gpu_metrics_over
-- materialize: per trace
--
-- @column trace_id             Trace.
-- @column pid                  Process.
-- @column step                 Step name (steps.step).
-- @column step_index           Order of the step in its process (0 = first).
-- @column start_ns             Step start (ns).
-- @column end_ns               Step end (ns).
-- @column device_id            GPU.
-- @column duration_ns          end_ns - start_ns.
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
CREATE OR REPLACE VIEW step_gpu_metrics AS
WITH windows AS (
    SELECT s.trace_id, d.device_id, {'pid': s.pid, 'step_index': s.step_index} AS lane, s.start_ns, s.end_ns
    FROM steps s
    JOIN (SELECT DISTINCT trace_id, pid, device_id FROM gpu_ops) d ON d.trace_id = s.trace_id AND d.pid = s.pid
)
SELECT m.trace_id, s.pid, s.step, s.step_index, s.start_ns, s.end_ns,
       m.* EXCLUDE (trace_id, lane, intervals)
FROM gpu_metrics_over(windows) m
JOIN steps s ON s.trace_id = m.trace_id AND s.pid = m.lane.pid AND s.step_index = m.lane.step_index;
