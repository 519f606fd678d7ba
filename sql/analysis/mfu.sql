-- mfu: model FLOPs utilization per training step and rank: the FLOPs of the modelled
-- operators (GEMM, convolution, attention: what FlopCounterMode counts) that started in
-- the step's host range, against what the GPU could do at one peak in the step's wall time
-- (steps.wall_ns: what the iteration costs, not the host range alone):
-- mfu_pct = 100 x flops / (wall time x peak). The peak is one per trace, the precision the
-- model intends: the precision holding most of the trace's modelled FLOPs (bf16 for a
-- bf16 model with one fp32 GEMM), so that the same FLOPs taking longer lower MFU whatever
-- precision they ran in. Set the variable `tracelake_peak` to declare it instead: a
-- precision ('bf16', 'fp32', 'tf32', ...) or a rate in TFLOP/s ('1979'); the CLI's --peak.
-- MFU above 100 % is impossible: such a step gets NULL and mfu_unreliable says why (a
-- FLOPs model or a peak that is wrong). Read it next to model_coverage: GPU work without
-- a model (custom and Triton kernels, unmodelled operators) adds no FLOPs.
--
-- depends: op_efficiency, step_ranges, steps, traces, device_peaks, op_shapes_recorded
--
-- @column trace_id         Trace.
-- @column rank             Distributed rank (NULL when unknown).
-- @column pid              Process.
-- @column step             Step range name (as in steps).
-- @column start_ns         Step start (ns; steps.start_ns).
-- @column wall_ns          Step wall time (ns; steps.wall_ns, the host range's where steps has no row).
-- @column flops            Model FLOPs of the calls that started in the step (NULL when the process
--                          recorded no input shapes).
-- @column achieved_tflops  flops / wall time (TFLOP/s).
-- @column peak_precision   The precision of the peak: the trace's intended precision, or the declared one
--                          ('declared' for a declared rate).
-- @column peak_tflops      The peak the FLOPs are counted against (TFLOP/s).
-- @column mfu_pct          100 x flops / (wall time x peak_tflops); NULL when there is no peak (GPU not
--                          in gpu_peaks, NVTX ranges without dtypes) or when it would exceed 100 %.
-- @column mfu_unreliable   Why mfu_pct is NULL though FLOPs were counted: 'over 100 %' (the FLOPs
--                          model or the peak is wrong), 'no peak'; NULL otherwise.
-- @column flops_device_ns  GPU time of those calls (ns).
CREATE OR REPLACE VIEW mfu AS
WITH calls AS (
    SELECT trace_id, pid, step, precision, peak_tflops, device_id, flops, device_ns
    FROM op_efficiency WHERE flops IS NOT NULL
),
declared AS (
    SELECT CAST(getvariable('tracelake_peak') AS VARCHAR) AS peak
),
intended AS (
    -- per trace, the precision with the most modelled FLOPs (ties: the name), with its peak on
    -- the trace's GPU
    SELECT trace_id, arg_max(precision, {'f': flops, 'p': precision}) AS precision,
           arg_max(peak_tflops, {'f': flops, 'p': precision}) AS peak_tflops
    FROM (SELECT trace_id, precision, sum(flops) AS flops, max(peak_tflops) AS peak_tflops FROM calls GROUP BY ALL)
    GROUP BY trace_id
),
peaks AS (
    SELECT i.trace_id,
           CASE WHEN d.peak IS NULL THEN i.precision
                WHEN TRY_CAST(d.peak AS DOUBLE) IS NOT NULL THEN 'declared'
                ELSE lower(d.peak) END AS peak_precision,
           CASE WHEN d.peak IS NULL THEN i.peak_tflops
                WHEN TRY_CAST(d.peak AS DOUBLE) IS NOT NULL THEN CAST(d.peak AS DOUBLE)
                ELSE (SELECT max(peak_tflops_of(p, lower(d.peak))) FROM device_peaks p WHERE p.trace_id = i.trace_id)
           END AS peak_tflops
    FROM intended i CROSS JOIN declared d
),
per_step AS (
    SELECT trace_id, pid, step, sum(flops) AS flops, sum(device_ns) AS flops_device_ns
    FROM calls WHERE step IS NOT NULL
    GROUP BY ALL
),
windows AS (
    SELECT r.trace_id, r.pid, r.step, coalesce(s.start_ns, r.start_ns) AS start_ns,
           coalesce(s.wall_ns, r.end_ns - r.start_ns) AS wall_ns
    FROM step_ranges r
    LEFT JOIN steps s ON s.trace_id = r.trace_id AND s.pid = r.pid AND s.step = r.step
                     AND s.host_start_ns = r.start_ns
),
measured AS (
    SELECT w.*, p.flops, p.flops_device_ns, k.peak_precision, k.peak_tflops,
           100.0 * p.flops / (nullif(w.wall_ns, 0) * k.peak_tflops * 1e3) AS raw_pct
    FROM windows w
    LEFT JOIN per_step p ON p.trace_id = w.trace_id AND p.pid = w.pid AND p.step = w.step
    LEFT JOIN peaks k ON k.trace_id = w.trace_id
)
SELECT m.trace_id, t.rank, m.pid, m.step, m.start_ns, m.wall_ns,
       CAST(CASE WHEN r.pid IS NOT NULL THEN coalesce(m.flops, 0) END AS BIGINT) AS flops,
       CASE WHEN r.pid IS NOT NULL THEN coalesce(m.flops, 0) / m.wall_ns / 1e3 END AS achieved_tflops,
       m.peak_precision, m.peak_tflops,
       CASE WHEN m.raw_pct <= 100 THEN m.raw_pct END AS mfu_pct,
       CASE WHEN m.raw_pct > 100 THEN 'over 100 %'
            WHEN m.flops > 0 AND m.peak_tflops IS NULL THEN 'no peak' END AS mfu_unreliable,
       CAST(CASE WHEN r.pid IS NOT NULL THEN coalesce(m.flops_device_ns, 0) END AS BIGINT) AS flops_device_ns
FROM measured m
JOIN traces t USING (trace_id)
LEFT JOIN op_shapes_recorded r ON r.trace_id = m.trace_id AND r.pid = m.pid;

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
