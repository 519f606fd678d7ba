-- kernel_gpu_metrics: what the GPU's hardware counters measured while each kernel ran
-- (exports made with nsys --gpu-metrics-devices), per kernel name and GPU: time-weighted
-- averages of the samples over the kernel's executions, samples cut at each execution's
-- edges (gpu_metrics_over). The counters are the whole GPU's: kernels of other streams
-- running at the same time are in them, and a kernel much shorter than the sampling period
-- shares its samples with its neighbours. Peaks of the GB/s: gpu_metric_samples.
--
-- depends: kernels, gpu_metrics_over
-- materialize: per trace
--
-- @column trace_id             Trace.
-- @column name                 Kernel name.
-- @column device_id            GPU.
-- @column instances            Executions.
-- @column duration_ns          Their summed duration (ns).
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
CREATE OR REPLACE VIEW kernel_gpu_metrics AS
WITH runs AS (
    SELECT trace_id, device_id, name AS lane, start_ns, end_ns FROM kernels
)
SELECT trace_id, lane AS name, device_id, intervals AS instances, * EXCLUDE (trace_id, lane, device_id, intervals)
FROM gpu_metrics_over(runs);
