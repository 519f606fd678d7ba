-- kernel_measured_roofline: the measured roofline beside the modelled one, per kernel name
-- (and per copy direction, memsets) and GPU, in exports with GPU metrics (nsys
-- --gpu-metrics-devices). Measured: the DRAM bytes the counters saw while the operation ran,
-- (dram read + write GB/s, time-weighted over its executions as kernel_gpu_metrics averages
-- them) x its sampled time. Modelled: the bytes and FLOPs of the operator calls that launched
-- it (op_models, split over a call's kernels by their share of its kernel time, the
-- launches found as op_efficiency finds them), and for copies and memsets their own size
-- (device-to-device: read and written, so twice; to or from the host or a peer: once on
-- this GPU's DRAM; memsets: written once). Modelled bytes are given only when every execution
-- has them: Nsight's NVTX ranges record no dtypes, so op_models takes an NVTX call's dtype from
-- the names of the kernels it launched (kernel_dtype) and has none (FLOPs only) where they do
-- not name one (casts, cuDNN attention). Both intensities use the modelled FLOPs; the roofs are
-- device_peaks' for the calls' precision; without a precision a bound is given only where
-- every floating-point roof of the GPU says the same (bound_of). An operation with no FLOPs
-- (copies, memsets, the bytes-only families of op_models) is memory-bound on both. An
-- operation much shorter than the sampling period shares its samples with its neighbours:
-- compare measured and modelled bytes for operations of several periods. The counters are the whole GPU's:
-- work on other streams at the same time is in them.
--
-- depends: gpu_ops, memcpy, op_launches, op_models, gpu_metrics_over, device_peaks
-- materialize: per trace
--
-- @column trace_id                Trace.
-- @column device_id               GPU.
-- @column name                    Kernel name; copies 'Memcpy <kind>' (HtoD, DtoD, ...); memsets 'Memset'.
-- @column instances               Executions.
-- @column duration_ns             Their summed duration (ns).
-- @column sampled_ns              The part of it inside sampling periods (ns).
-- @column measured_bytes          (dram read + write GB/s) x sampled_ns: DRAM bytes the counters saw (bytes).
-- @column measured_gb_per_s       dram read + write rate (GB/s).
-- @column dram_peak_gb_per_s      The DRAM peak the counters' percentages are of (GB/s).
-- @column dram_pct                measured_gb_per_s / dram_peak_gb_per_s x 100.
-- @column modelled_bytes          Bytes the model says it moves (bytes; NULL unless every execution has them).
-- @column modelled_gb_per_s       modelled_bytes / duration_ns (GB/s).
-- @column measured_to_modelled    measured_bytes / (modelled_bytes x sampled_ns / duration_ns): 1 = as modelled.
-- @column flops                   Modelled FLOPs (NULL unless every execution has them; 0 for copies, memsets
--                                 and op_models' bytes-only families).
-- @column achieved_tflops         flops / duration_ns (TFLOP/s).
-- @column measured_intensity      flops / (measured_bytes x duration_ns / sampled_ns) (FLOP/byte).
-- @column modelled_intensity      flops / modelled_bytes (FLOP/byte).
-- @column precision               The calls' precision (op_models; NULL for NVTX ranges or mixed).
-- @column ridge_flop_per_byte     Peak FLOP/s of that precision / peak DRAM bandwidth (device_peaks).
-- @column measured_bound          'memory' or 'compute': measured_intensity against the ridge (bound_of).
-- @column modelled_bound          The same for modelled_intensity.
-- bound_of(flops, bytes, intensity, ridge, lowest_ridge, highest_ridge): 'memory' or 'compute'
-- against the ridge of the precision; without one, only where every floating-point ridge of
-- the GPU agrees (intensity at or above the highest, or below the lowest); NULL otherwise.
CREATE OR REPLACE MACRO bound_of(flops, bytes, intensity, ridge, lowest_ridge, highest_ridge) AS
CASE WHEN flops = 0 AND bytes > 0 THEN 'memory'
     WHEN ridge IS NOT NULL THEN CASE WHEN intensity >= ridge THEN 'compute' WHEN intensity < ridge THEN 'memory' END
     WHEN intensity >= highest_ridge THEN 'compute'
     WHEN intensity < lowest_ridge THEN 'memory' END;

CREATE OR REPLACE VIEW kernel_measured_roofline AS
WITH ops AS (
    SELECT o.trace_id, o.pid, o.device_id, o.category, o.start_ns, o.end_ns, o.duration_ns, o.bytes,
           CASE o.category WHEN 'memset' THEN 'Memset'
                WHEN 'memcpy' THEN coalesce('Memcpy ' || m.copy_kind, o.name) ELSE o.name END AS name,
           CASE o.category WHEN 'memset' THEN o.bytes
                WHEN 'memcpy' THEN o.bytes * CASE WHEN m.src_kind = 'device' AND m.dst_kind = 'device' THEN 2 ELSE 1 END
           END AS copy_bytes
    FROM gpu_ops o
    LEFT JOIN memcpy m ON o.category = 'memcpy' AND m.trace_id = o.trace_id AND m.pid = o.pid
                      AND m.device_id = o.device_id AND m.start_ns = o.start_ns
                      AND m.correlation_id IS NOT DISTINCT FROM o.correlation_id
    WHERE o.category IN ('kernel', 'memcpy', 'memset')
),
m AS MATERIALIZED (
    SELECT * FROM op_models
),
launched AS (
    -- each GPU operation with the modelled call it belongs to (as op_efficiency: the latest
    -- modelled call on the launching thread that started before the launch and had not ended)
    SELECT l.trace_id, l.device_id, l.start_ns, l.duration_ns, m.op_id, m.bytes, m.precision,
           CASE WHEN m.model = 'bytes' THEN 0 ELSE m.flops END AS flops
    FROM op_launches l
    ASOF JOIN m ON m.trace_id = l.trace_id AND m.pid = l.pid AND m.tid = l.tid AND m.start_ns <= l.launch_ns
    WHERE l.launch_ns <= m.end_ns AND l.category = 'kernel'  -- copies and memsets count their own bytes
),
shares AS (
    SELECT *, duration_ns / sum(duration_ns) OVER (PARTITION BY trace_id, op_id) AS share
    FROM launched
),
modelled AS (
    SELECT o.trace_id, o.device_id, o.name, count(*) AS instances,
           CASE WHEN count(*) = count(coalesce(o.copy_bytes, s.bytes))
                THEN sum(coalesce(o.copy_bytes, s.bytes * s.share)) END AS modelled_bytes,
           CASE WHEN bool_and(o.category <> 'kernel') THEN 0
                WHEN count(*) = count(s.flops) THEN sum(s.flops * s.share) END AS flops,
           CASE WHEN count(DISTINCT s.precision) = 1 AND count(*) = count(s.precision)
                THEN any_value(s.precision) END AS precision
    FROM ops o
    LEFT JOIN shares s ON s.trace_id = o.trace_id AND s.device_id = o.device_id AND s.start_ns = o.start_ns
                      AND o.category = 'kernel'
    GROUP BY ALL
),
runs AS (
    SELECT trace_id, device_id, name AS lane, start_ns, end_ns FROM ops
),
measured AS (
    SELECT trace_id, device_id, lane AS name, intervals, duration_ns, sampled_ns,
           dram_read_gb_per_s + dram_write_gb_per_s AS measured_gb_per_s, dram_peak_gb_per_s
    FROM gpu_metrics_over(runs)
),
joined AS (
    SELECT x.trace_id, x.device_id, x.name, x.intervals AS instances, x.duration_ns, x.sampled_ns,
           x.measured_gb_per_s * x.sampled_ns AS measured_bytes, x.measured_gb_per_s, x.dram_peak_gb_per_s,
           d.modelled_bytes, d.flops, d.precision,
           peak_tflops_of(p, d.precision) / nullif(p.memory_tbps, 0) AS ridge_flop_per_byte,
           -- without a precision: the ridges of the lowest and highest floating-point peak
           list_min([p.fp64_tflops, p.fp32_tflops, p.tf32_tflops, p.fp16_tflops, p.bf16_tflops, p.fp8_tflops])
               / nullif(p.memory_tbps, 0) AS lowest_ridge,
           list_max([p.fp64_tflops, p.fp32_tflops, p.tf32_tflops, p.fp16_tflops, p.bf16_tflops, p.fp8_tflops])
               / nullif(p.memory_tbps, 0) AS highest_ridge
    FROM measured x
    JOIN modelled d USING (trace_id, device_id, name)
    LEFT JOIN device_peaks p ON p.trace_id = x.trace_id AND p.device_id = x.device_id
),
rated AS (
    SELECT *,
           flops / nullif(measured_bytes * duration_ns / nullif(sampled_ns, 0), 0) AS measured_intensity,
           flops / nullif(modelled_bytes, 0) AS modelled_intensity
    FROM joined
)
SELECT trace_id, device_id, name, instances, duration_ns, sampled_ns,
       CAST(measured_bytes AS BIGINT) AS measured_bytes, measured_gb_per_s, dram_peak_gb_per_s,
       100.0 * measured_gb_per_s / nullif(dram_peak_gb_per_s, 0) AS dram_pct,
       CAST(modelled_bytes AS BIGINT) AS modelled_bytes,
       modelled_bytes / nullif(duration_ns, 0) AS modelled_gb_per_s,
       measured_bytes / nullif(modelled_bytes * sampled_ns / nullif(duration_ns, 0), 0) AS measured_to_modelled,
       CAST(flops AS BIGINT) AS flops,
       flops / nullif(duration_ns, 0) / 1e3 AS achieved_tflops,
       measured_intensity, modelled_intensity, precision, ridge_flop_per_byte,
       bound_of(flops, measured_bytes, measured_intensity, ridge_flop_per_byte, lowest_ridge, highest_ridge)
           AS measured_bound,
       bound_of(flops, modelled_bytes, modelled_intensity, ridge_flop_per_byte, lowest_ridge, highest_ridge)
           AS modelled_bound
FROM rated;
