-- steady_step_gpu_metrics: the GPU hardware metrics over time through one steady step (the
-- first step of steady_state's window, per process and GPU it ran work on), for the report's
-- chart: the step cut into 50 equal slices, each slice's time-weighted averages of the
-- samples (gpu_metrics_over), as percentages: SMs Active, SM Issue, Tensor Active, DRAM
-- read + write (% of the DRAM peak: dram_read_pct + dram_write_pct of the samples) and
-- PCIe rx / tx (% of the link's peak). Exports without metrics, or without steps, give no row.
--
-- depends: steady_state, steps, gpu_ops, gpu_metrics_over
-- materialize: per trace
--
-- @column trace_id           Trace.
-- @column pid                Process.
-- @column step               The step (steps.step).
-- @column device_id          GPU.
-- @column slice              Slice of the step (0 = first of 50).
-- @column start_ns           Slice start (ns).
-- @column end_ns             Slice end (ns).
-- @column sm_active_pct      Mean 'SMs Active' (%).
-- @column sm_issue_pct       Mean 'SM Issue' (%).
-- @column tensor_active_pct  Mean 'Tensor Active' (%).
-- @column dram_pct           DRAM read + write, % of the DRAM peak.
-- @column pcie_rx_pct        PCIe into the GPU, % of the link's peak (NULL: link unknown).
-- @column pcie_tx_pct        PCIe out of the GPU, % of the link's peak (NULL: link unknown).
CREATE OR REPLACE VIEW steady_step_gpu_metrics AS
WITH step AS (
    SELECT s.trace_id, s.pid, s.step, s.start_ns, s.end_ns
    FROM steady_state w
    JOIN steps s ON s.trace_id = w.trace_id AND s.pid = w.pid AND s.start_ns = w.start_ns
),
slices AS (
    SELECT st.trace_id, d.device_id, {'pid': st.pid, 'slice': i} AS lane,
           st.start_ns + (st.end_ns - st.start_ns) * i // 50 AS start_ns,
           st.start_ns + (st.end_ns - st.start_ns) * (i + 1) // 50 AS end_ns
    FROM step st
    JOIN (SELECT DISTINCT trace_id, pid, device_id FROM gpu_ops) d ON d.trace_id = st.trace_id AND d.pid = st.pid
    CROSS JOIN range(50) r(i)
)
SELECT m.trace_id, m.lane.pid AS pid, st.step, m.device_id, CAST(m.lane.slice AS INTEGER) AS slice,
       sl.start_ns, sl.end_ns, m.sm_active_pct, m.sm_issue_pct, m.tensor_active_pct,
       100 * (m.dram_read_gb_per_s + m.dram_write_gb_per_s) / m.dram_peak_gb_per_s AS dram_pct,
       100 * m.pcie_rx_gb_per_s / m.pcie_peak_gb_per_s AS pcie_rx_pct,
       100 * m.pcie_tx_gb_per_s / m.pcie_peak_gb_per_s AS pcie_tx_pct
FROM gpu_metrics_over(slices) m
JOIN slices sl ON sl.trace_id = m.trace_id AND sl.device_id = m.device_id AND sl.lane = m.lane
JOIN step st ON st.trace_id = m.trace_id AND st.pid = m.lane.pid;
