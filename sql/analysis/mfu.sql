-- mfu: model FLOPs utilization per training step and rank: the FLOPs of the modelled
-- operators (GEMM, convolution, attention: what FlopCounterMode counts) that started in
-- the step, against what the GPU could do at its peak in the step's wall time. With
-- several precisions in a step each call's FLOPs count at its own peak:
-- mfu_pct = 100 x sum(flops / peak) / wall time. Read it next to model_coverage: GPU
-- work without a model (custom and Triton kernels, unmodelled operators) adds no FLOPs.
--
-- depends: op_efficiency, step_ranges, traces, gpu_ops, op_shapes_recorded
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column rank             Distributed rank (NULL when unknown).
-- @column pid              Process.
-- @column step             Step range name (as in steps).
-- @column start_ns         Step start (ns).
-- @column wall_ns          Step wall time (ns).
-- @column flops            Model FLOPs of the calls that started in the step (NULL when the process
--                          recorded no input shapes).
-- @column achieved_tflops  flops / wall time (TFLOP/s).
-- @column peak_tflops      The peak the FLOPs were counted against (TFLOP/s; FLOP-weighted harmonic
--                          mean when the step mixes precisions).
-- @column mfu_pct          100 x sum(flops / peak) / wall time; NULL when a call's GPU or precision
--                          has no peak (GPU not in gpu_peaks, NVTX ranges without dtypes).
-- @column flops_device_ns  GPU time of those calls (ns).
CREATE OR REPLACE VIEW mfu AS
WITH per_peak AS (
    SELECT trace_id, pid, step, peak_tflops, sum(flops) AS flops, sum(device_ns) AS device_ns
    FROM op_efficiency
    WHERE flops IS NOT NULL AND step IS NOT NULL
    GROUP BY trace_id, pid, step, peak_tflops
),
-- FLOPs are summed as integers per peak and divided once, the few quotients added in peak
-- order: the same doubles run after run (a sum of per-call quotients rounds in the order
-- DuckDB's threads add them)
per_step AS (
    SELECT trace_id, pid, step, sum(flops) AS flops, sum(device_ns) AS flops_device_ns,
           list_sum(list(flops / (peak_tflops * 1e3) ORDER BY peak_tflops)) AS peak_ns,
           count(*) FILTER (WHERE peak_tflops IS NULL) AS without_peak
    FROM per_peak
    GROUP BY trace_id, pid, step
)
SELECT s.trace_id, t.rank, s.pid, s.step, s.start_ns, s.end_ns - s.start_ns AS wall_ns,
       CAST(CASE WHEN r.pid IS NOT NULL THEN coalesce(p.flops, 0) END AS BIGINT) AS flops,
       CASE WHEN r.pid IS NOT NULL THEN coalesce(p.flops, 0) / (s.end_ns - s.start_ns) / 1e3 END AS achieved_tflops,
       CASE WHEN p.without_peak = 0 THEN p.flops / p.peak_ns / 1e3 END AS peak_tflops,
       CASE WHEN p.without_peak = 0 THEN 100.0 * p.peak_ns / (s.end_ns - s.start_ns) END AS mfu_pct,
       CAST(CASE WHEN r.pid IS NOT NULL THEN coalesce(p.flops_device_ns, 0) END AS BIGINT) AS flops_device_ns
FROM step_ranges s
JOIN traces t USING (trace_id)
LEFT JOIN op_shapes_recorded r ON r.trace_id = s.trace_id AND r.pid = s.pid
LEFT JOIN per_step p ON p.trace_id = s.trace_id AND p.pid = s.pid AND p.step = s.step;

-- model_coverage: how much of the GPU time the performance models cover, per trace and
-- process: the share of GPU time (kernels, copies, memsets) launched by a modelled
-- call (op_efficiency), and by one that counts FLOPs. MFU and rooflines describe only
-- the covered part.
--
-- @column gpu_ns             GPU time of all GPU operations of the process (ns).
-- @column modelled_ns        GPU time of calls with a model (ns); NULL without input shapes.
-- @column flops_modelled_ns  GPU time of calls with a FLOPs model (GEMM, conv, attention) (ns).
-- @column coverage_pct       modelled_ns / gpu_ns x 100.
-- @column flops_coverage_pct flops_modelled_ns / gpu_ns x 100.
-- @column has_shapes         Whether the process recorded input shapes (record_shapes, or NVTX ranges
--                            with sizes); without them nothing can be modelled.
CREATE OR REPLACE VIEW model_coverage AS
WITH gpu AS (
    SELECT trace_id, pid, sum(duration_ns) AS gpu_ns FROM gpu_ops GROUP BY trace_id, pid
),
modelled AS (
    SELECT trace_id, pid, sum(device_ns) AS modelled_ns,
           sum(device_ns) FILTER (WHERE flops IS NOT NULL) AS flops_modelled_ns
    FROM op_efficiency
    GROUP BY trace_id, pid
)
SELECT g.trace_id, t.rank, g.pid, CAST(g.gpu_ns AS BIGINT) AS gpu_ns,
       CAST(CASE WHEN r.pid IS NOT NULL THEN coalesce(m.modelled_ns, 0) END AS BIGINT) AS modelled_ns,
       CAST(CASE WHEN r.pid IS NOT NULL THEN coalesce(m.flops_modelled_ns, 0) END AS BIGINT) AS flops_modelled_ns,
       CASE WHEN r.pid IS NOT NULL THEN 100.0 * coalesce(m.modelled_ns, 0) / nullif(g.gpu_ns, 0) END AS coverage_pct,
       CASE WHEN r.pid IS NOT NULL THEN 100.0 * coalesce(m.flops_modelled_ns, 0) / nullif(g.gpu_ns, 0) END
           AS flops_coverage_pct,
       r.pid IS NOT NULL AS has_shapes
FROM gpu g
JOIN traces t USING (trace_id)
LEFT JOIN op_shapes_recorded r ON r.trace_id = g.trace_id AND r.pid = g.pid
LEFT JOIN modelled m ON m.trace_id = g.trace_id AND m.pid = g.pid;
