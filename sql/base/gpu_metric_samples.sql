-- gpu_metric_samples: Nsight's GPU hardware metric samples (gpu_metrics, from exports made
-- with --gpu-metrics-devices), one row per device and sampling period, with the metrics the
-- views read side by side and the bandwidths in GB/s. A sample describes the period from
-- its timestamp to the device's next sample (measured: the sample whose period a kernel
-- enters 39 us before its end reads 39/200 of the kernel's DRAM rate, the one before reads
-- 0); the last sample's period is taken as long as the one before it. The percentages are
-- of each unit's peak sustained rate; the GB/s use these peaks:
--   DRAM: devices.memory_bandwidth_bytes_per_s, the export's own TARGET_INFO_GPU
--   memoryBandwidth (H100 80GB HBM3: 3.352e12 B/s). On the recorded H100 export a 1 GiB
--   device copy read 44.4 % and wrote 44.4 % of it: 2.98 TB/s, against 3.00 TB/s from the
--   copy's bytes and CUDA-event time.
--   PCIe: pcie_gb_per_s of the datasheet link (gpu_pcie_links, by device name; Gen5 x16:
--   63.0 GB/s per direction), since the export records no link. The rates count packet
--   headers as the metric does, so they exceed the payload rate (pinned 256 MiB copies on
--   the H100: rx 55 GB/s measured, 53 GB/s of payload).
-- Metrics a device's metric set lacks are NULL ('Tensor Active' is 'Tensor Active / FP16
-- Active' on Turing, which also counts FP16x2 work).
--
-- depends: gpu_metrics, devices, gpu_pcie_links, pcie_gb_per_s
-- materialize: per trace
--
-- @column trace_id             Trace.
-- @column device_id            GPU.
-- @column sample_index         Position of the sample on its device (0 = first).
-- @column start_ns             Start of the sampling period (the sample's timestamp, ns).
-- @column end_ns               End of the period: the device's next sample (ns).
-- @column sm_active_pct        'SMs Active': cycles with at least one warp on an SM, % of elapsed cycles, mean over SMs.
-- @column sm_issue_pct         'SM Issue': instructions issued, % of the SMs' peak issue rate (4 per SM per cycle).
-- @column tensor_active_pct    'Tensor Active': cycles the tensor pipe was active, % (mean over SMs).
-- @column dram_read_pct        'DRAM Read Bandwidth', % of the DRAM peak.
-- @column dram_write_pct       'DRAM Write Bandwidth', % of the DRAM peak.
-- @column pcie_rx_pct          'PCIe RX Throughput': bytes received by the GPU, % of the link's peak.
-- @column pcie_tx_pct          'PCIe TX Throughput': bytes sent by the GPU, % of the link's peak.
-- @column dram_peak_gb_per_s   DRAM peak (GB/s, 1e9 bytes/s): memoryBandwidth / 1e9.
-- @column pcie_peak_gb_per_s   PCIe peak per direction (GB/s) of the datasheet link; NULL when the GPU is not in gpu_pcie_links.
-- @column dram_read_gb_per_s   dram_read_pct / 100 x dram_peak_gb_per_s.
-- @column dram_write_gb_per_s  dram_write_pct / 100 x dram_peak_gb_per_s.
-- @column pcie_rx_gb_per_s     pcie_rx_pct / 100 x pcie_peak_gb_per_s.
-- @column pcie_tx_gb_per_s     pcie_tx_pct / 100 x pcie_peak_gb_per_s.
CREATE OR REPLACE VIEW gpu_metric_samples AS
WITH wide AS (
    SELECT trace_id, device_id, timestamp_ns AS start_ns,
           max(value) FILTER (WHERE metric = 'SMs Active' AND unit = 'Throughput %') AS sm_active_pct,
           max(value) FILTER (WHERE metric = 'SM Issue' AND unit = 'Throughput %') AS sm_issue_pct,
           max(value) FILTER (WHERE metric LIKE 'Tensor Active%' AND unit = 'Throughput %') AS tensor_active_pct,
           max(value) FILTER (WHERE metric = 'DRAM Read Bandwidth' AND unit = 'Throughput %') AS dram_read_pct,
           max(value) FILTER (WHERE metric = 'DRAM Write Bandwidth' AND unit = 'Throughput %') AS dram_write_pct,
           max(value) FILTER (WHERE metric = 'PCIe RX Throughput' AND unit = 'Throughput %') AS pcie_rx_pct,
           max(value) FILTER (WHERE metric = 'PCIe TX Throughput' AND unit = 'Throughput %') AS pcie_tx_pct
    FROM gpu_metrics
    GROUP BY trace_id, device_id, timestamp_ns
),
timed AS (
    SELECT *,
           CAST(row_number() OVER w - 1 AS BIGINT) AS sample_index,
           coalesce(lead(start_ns) OVER w, 2 * start_ns - lag(start_ns) OVER w) AS end_ns
    FROM wide
    WINDOW w AS (PARTITION BY trace_id, device_id ORDER BY start_ns)
),
peaks AS (
    SELECT d.trace_id, d.device_id, d.memory_bandwidth_bytes_per_s / 1e9 AS dram_peak_gb_per_s,
           (SELECT pcie_gb_per_s(l.pcie_generation, l.pcie_lanes) FROM gpu_pcie_links l
            WHERE regexp_matches(d.name, l.name_pattern, 'i')
            ORDER BY length(l.name_pattern) DESC, l.gpu LIMIT 1) AS pcie_peak_gb_per_s
    FROM devices d
)
SELECT t.trace_id, t.device_id, t.sample_index, t.start_ns, t.end_ns,
       t.sm_active_pct, t.sm_issue_pct, t.tensor_active_pct, t.dram_read_pct, t.dram_write_pct,
       t.pcie_rx_pct, t.pcie_tx_pct, p.dram_peak_gb_per_s, p.pcie_peak_gb_per_s,
       t.dram_read_pct / 100 * p.dram_peak_gb_per_s AS dram_read_gb_per_s,
       t.dram_write_pct / 100 * p.dram_peak_gb_per_s AS dram_write_gb_per_s,
       t.pcie_rx_pct / 100 * p.pcie_peak_gb_per_s AS pcie_rx_gb_per_s,
       t.pcie_tx_pct / 100 * p.pcie_peak_gb_per_s AS pcie_tx_gb_per_s
FROM timed t
LEFT JOIN peaks p USING (trace_id, device_id)
WHERE t.end_ns > t.start_ns;
