-- The GPU-metric rules: what Nsight's hardware counters (exports made with nsys
-- --gpu-metrics-devices) measured, where the model alone cannot tell. Each needs 1 ms of
-- sampled time at least (5 samples at the 5 kHz a short trace is recorded with).
--
-- finding_memory_bound: NVTX ranges (per name, nvtx_gpu_metrics) whose GPU work ran with
-- DRAM reads + writes at 60 % of the DRAM peak or more (the export's memoryBandwidth)
-- while the Tensor Cores stayed under 20 % active: the phase is limited by memory
-- bandwidth, and faster math will not speed it up. Start and duration: the first
-- instance's GPU projection start, the instances' summed projection.
-- finding_tensor_cores_idle: matrix-multiply kernels (names matching gemm, xmma, cutlass,
-- nvjet, cublas, matmul) that take 5 % of the trace's kernel time or more and ran with the
-- Tensor Cores under 5 % active (kernel_gpu_metrics): FP32 GEMMs on the FMA units (TF32
-- off), or a data type or shape that no Tensor Core kernel takes. Start: the first
-- execution; duration: their summed time.
-- finding_pcie_bound_copies: host <-> device copies (per direction and GPU) that take 5 %
-- of the trace's duration or more and moved data at 70 % of the PCIe link's peak or more
-- while they ran (pcie_rx for Host-to-Device, pcie_tx for Device-to-Host; the peak of the
-- datasheet link, gpu_pcie_links): the link is the limit, not the copy's setup. Start: the
-- first copy; duration: the copies' summed time.
--
-- depends: nvtx_gpu_metrics, nvtx_range_gpu_metrics, kernel_gpu_metrics, kernels, memcpy, traces,
--          gpu_metrics_over
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         'memory_bound', 'tensor_cores_idle' or 'pcie_bound_copies'.
-- @column severity     'info' (memory_bound) or 'warning'.
-- @column pid          Process (memory_bound: the range's): of the first instance, kernel or copy (of
--                      several that started at once, the lowest pid).
-- @column device_id    GPU.
-- @column start_ns     See above (ns).
-- @column duration_ns  See above (ns).
-- @column evidence     What was measured.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_memory_bound AS
WITH firsts AS (
    SELECT trace_id, range, device_id, min(start_ns) AS start_ns, arg_min(pid, (start_ns, pid)) AS pid
    FROM nvtx_range_gpu_metrics
    GROUP BY ALL
)
SELECT m.trace_id, 'memory_bound' AS rule, 'info' AS severity, f.pid, m.device_id, f.start_ns, m.duration_ns,
       printf('%s: %d range(s), %.1f ms of GPU time; DRAM read %.0f + write %.0f GB/s = %.0f %% of the %.0f GB/s '
              || 'peak, Tensor Cores %.0f %% active, SM issue %.0f %% (Nsight GPU metrics)',
              m.range, m.instances, m.duration_ns / 1e6, m.dram_read_gb_per_s, m.dram_write_gb_per_s,
              100 * (m.dram_read_gb_per_s + m.dram_write_gb_per_s) / m.dram_peak_gb_per_s, m.dram_peak_gb_per_s,
              coalesce(m.tensor_active_pct, 0), coalesce(m.sm_issue_pct, 0)) AS evidence,
       'This phase moves data as fast as the memory allows: it gets faster only by moving fewer bytes. Fuse the '
       || 'element-wise operations that read and write the same tensors (torch.compile), keep activations in a '
       || 'smaller data type (bf16/fp8), avoid copies (contiguous() / to() on tensors already in place).' AS advice
FROM nvtx_gpu_metrics m
JOIN firsts f USING (trace_id, range, device_id)
WHERE m.sampled_ns >= 1000000
  AND m.dram_read_gb_per_s + m.dram_write_gb_per_s >= 0.6 * m.dram_peak_gb_per_s
  AND coalesce(m.tensor_active_pct, 0) < 20;

CREATE OR REPLACE VIEW finding_tensor_cores_idle AS
WITH kernel_time AS (
    SELECT trace_id, sum(duration_ns) AS ns FROM kernels GROUP BY trace_id
),
firsts AS (
    SELECT trace_id, name, device_id, min(start_ns) AS start_ns, arg_min(pid, (start_ns, pid)) AS pid
    FROM kernels
    GROUP BY ALL
)
SELECT k.trace_id, 'tensor_cores_idle' AS rule, 'warning' AS severity, f.pid, k.device_id, f.start_ns,
       k.duration_ns,
       printf('%s: %d executions, %.1f ms (%.0f %% of kernel time); Tensor Cores %.1f %% active while SMs were '
              || '%.0f %% active and issued %.0f %% of their peak (Nsight GPU metrics)',
              k.name, k.instances, k.duration_ns / 1e6, 100.0 * k.duration_ns / t.ns, k.tensor_active_pct,
              coalesce(k.sm_active_pct, 0), coalesce(k.sm_issue_pct, 0)) AS evidence,
       'This matrix multiply runs without the Tensor Cores. For FP32 allow TF32 '
       || '(torch.backends.cuda.matmul.allow_tf32 = True or torch.set_float32_matmul_precision(''high'')), or '
       || 'run it in bf16/fp16 (torch.autocast); keep the dimensions multiples of 8 (16 bytes) so that a Tensor '
       || 'Core kernel can take them.' AS advice
FROM kernel_gpu_metrics k
JOIN kernel_time t USING (trace_id)
JOIN firsts f USING (trace_id, name, device_id)
WHERE regexp_matches(k.name, 'gemm|xmma|cutlass|nvjet|cublas|matmul', 'i')
  AND k.sampled_ns >= 1000000 AND k.tensor_active_pct < 5 AND k.duration_ns >= 0.05 * t.ns;

CREATE OR REPLACE VIEW finding_pcie_bound_copies AS
WITH copies AS (
    SELECT trace_id, device_id, operation AS lane, start_ns, end_ns, pid, bytes
    FROM memcpy
    WHERE operation IN ('Host-to-Device', 'Device-to-Host')
),
measured AS (
    SELECT * FROM gpu_metrics_over(copies)
),
totals AS (
    SELECT trace_id, device_id, lane, min(start_ns) AS start_ns, arg_min(pid, (start_ns, pid)) AS pid,
           sum(bytes) AS bytes
    FROM copies
    GROUP BY ALL
)
SELECT m.trace_id, 'pcie_bound_copies' AS rule, 'warning' AS severity, c.pid, m.device_id, c.start_ns,
       m.duration_ns,
       printf('%s copies: %d, %.1f MB in %.1f ms (%.0f %% of the trace); PCIe %s %.1f GB/s measured = %.0f %% of '
              || 'the link''s %.1f GB/s per direction, %.1f GB/s of payload (Nsight GPU metrics)',
              m.lane, m.intervals, c.bytes / 1e6, m.duration_ns / 1e6, 100.0 * m.duration_ns / t.duration_ns,
              CASE m.lane WHEN 'Host-to-Device' THEN 'rx' ELSE 'tx' END,
              CASE m.lane WHEN 'Host-to-Device' THEN m.pcie_rx_gb_per_s ELSE m.pcie_tx_gb_per_s END,
              100 * CASE m.lane WHEN 'Host-to-Device' THEN m.pcie_rx_gb_per_s ELSE m.pcie_tx_gb_per_s END
                  / m.pcie_peak_gb_per_s,
              m.pcie_peak_gb_per_s, c.bytes / m.duration_ns) AS evidence,
       'These copies run at the speed of the PCIe link: only moving fewer bytes or hiding them helps. Keep data '
       || 'on the GPU between steps, copy in a smaller data type (decode or cast on the GPU), and overlap the '
       || 'copies with compute (pinned memory, non_blocking=True on a side stream, DataLoader pin_memory and '
       || 'prefetching).' AS advice
FROM measured m
JOIN totals c USING (trace_id, device_id, lane)
JOIN traces t USING (trace_id)
WHERE m.sampled_ns >= 1000000 AND m.duration_ns >= 0.05 * t.duration_ns
  AND CASE m.lane WHEN 'Host-to-Device' THEN m.pcie_rx_gb_per_s ELSE m.pcie_tx_gb_per_s END
      >= 0.7 * m.pcie_peak_gb_per_s;
