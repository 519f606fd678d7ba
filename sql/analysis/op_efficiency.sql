-- op_efficiency: how fast each modelled operator call ran against its GPU's roofline.
-- One row per op_models call that launched GPU work: its FLOPs and bytes, the GPU time
-- of the work it and the operators inside it launched, the achieved rates, and where
-- it sits against the roofs of gpu_peaks for its GPU and precision. Roofs are NULL
-- for a GPU not in gpu_peaks, and for NVTX ranges (no dtypes), never guessed.
--
-- depends: op_models, op_launches, device_peaks, step_ranges, traces
-- materialize: per trace
--
-- @column trace_id              Trace.
-- @column rank                  Distributed rank (NULL when unknown).
-- @column pid                   Process.
-- @column tid                   Thread of the call.
-- @column op_id                 op_calls.op_id.
-- @column step                  Training step the call started in ('ProfilerStep#3', 'step 3', as
--                               in steps); NULL outside steps.
-- @column start_ns              Start of the call on the CPU (ns).
-- @column name                  Operator name.
-- @column category              op_category(name).
-- @column model                 op_models.model (which formula).
-- @column dtype                 First tensor input's dtype, as recorded.
-- @column precision             Math precision of the roof: fp64, fp32, tf32 (an fp32 call whose kernels
--                               are TF32 Tensor Core kernels), fp16, bf16, fp8, int8.
-- @column shapes                Input shapes (JSON text).
-- @column is_causal             Causal attention (NULL for other operators).
-- @column flops                 FLOPs (FlopCounterMode convention; NULL for bytes-only models).
-- @column bytes                 Bytes read and written (NULL without dtypes).
-- @column device_ns             GPU time of the kernels, copies and memsets the call launched,
--                               itself or through the operators inside it (ns, summed).
-- @column kernels               Number of GPU operations behind device_ns.
-- @column device_id             GPU they ran on.
-- @column gpu                   gpu_peaks.gpu of that GPU (NULL when not in the table).
-- @column achieved_tflops       flops / device time (TFLOP/s).
-- @column achieved_tbps         bytes / device time (TB/s).
-- @column arithmetic_intensity  flops / bytes (FLOP/byte).
-- @column peak_tflops           The GPU's dense peak for the precision (TFLOP/s).
-- @column peak_tbps             The GPU's memory bandwidth (TB/s).
-- @column ridge_flop_per_byte   peak_tflops / peak_tbps: the intensity where the roofs meet.
-- @column bound                 'compute' when arithmetic_intensity >= the ridge, else 'memory' (the
--                               bytes-only models are 'memory'); NULL without roofs.
-- @column roof_ns               Time at the roof: max(flops / peak, bytes / bandwidth) (ns).
-- @column roof_pct              roof_ns / device_ns x 100: 100 = at the roofline.
CREATE OR REPLACE VIEW op_efficiency AS
WITH m AS MATERIALIZED (
    SELECT * FROM op_models
),
gpu_time AS (
    -- GPU work launched inside the call (on its thread, while it ran): the modelled calls
    -- do not nest, so the latest one that started before the launch is the only candidate
    SELECT m.trace_id, m.op_id, sum(l.duration_ns) AS device_ns, count(*) AS kernels,
           min(l.device_id) AS device_id,
           bool_or(CASE WHEN m.precision = 'fp32' THEN regexp_matches(l.name, 'tf32|s1688gemm|s16816gemm', 'i') END)
               AS tf32_kernels
    FROM op_launches l
    ASOF JOIN m ON m.trace_id = l.trace_id AND m.pid = l.pid AND m.tid = l.tid AND m.start_ns <= l.launch_ns
    WHERE l.launch_ns <= m.end_ns
    GROUP BY m.trace_id, m.op_id
),
rated AS (
    SELECT m.*, g.device_ns, g.kernels, g.device_id,
           CASE WHEN m.precision = 'fp32' AND g.tf32_kernels THEN 'tf32' ELSE m.precision END AS roof_precision,
           p.gpu, p.memory_tbps AS peak_tbps,
           peak_tflops_of(p, CASE WHEN m.precision = 'fp32' AND g.tf32_kernels THEN 'tf32' ELSE m.precision END)
               AS peak_tflops
    FROM m
    JOIN gpu_time g USING (trace_id, op_id)
    LEFT JOIN device_peaks p ON p.trace_id = m.trace_id AND p.device_id = g.device_id
),
placed AS (
    SELECT r.*,
           r.flops / r.device_ns / 1e3 AS achieved_tflops,
           r.bytes / r.device_ns / 1e3 AS achieved_tbps,
           r.flops / nullif(r.bytes, 0) AS arithmetic_intensity,
           r.peak_tflops / r.peak_tbps AS ridge_flop_per_byte,
           CASE WHEN r.bytes IS NULL OR r.peak_tbps IS NULL THEN r.flops / (r.peak_tflops * 1e3)
                WHEN r.model = 'bytes' THEN r.bytes / (r.peak_tbps * 1e3)
                WHEN r.peak_tflops IS NOT NULL THEN greatest(r.flops / (r.peak_tflops * 1e3), r.bytes / (r.peak_tbps * 1e3))
           END AS roof_ns
    FROM rated r
)
SELECT p.trace_id, t.rank, p.pid, p.tid, p.op_id, s.step, p.start_ns, p.name, p.category, p.model,
       p.dtype, p.roof_precision AS precision, p.shapes, p.is_causal, p.flops, p.bytes,
       CAST(p.device_ns AS BIGINT) AS device_ns, p.kernels, p.device_id, p.gpu,
       p.achieved_tflops, p.achieved_tbps, p.arithmetic_intensity, p.peak_tflops, p.peak_tbps,
       p.ridge_flop_per_byte,
       CASE WHEN p.model = 'bytes' AND p.peak_tbps IS NOT NULL THEN 'memory'
            WHEN p.arithmetic_intensity >= p.ridge_flop_per_byte THEN 'compute'
            WHEN p.arithmetic_intensity < p.ridge_flop_per_byte THEN 'memory' END AS bound,
       p.roof_ns,
       100.0 * p.roof_ns / nullif(p.device_ns, 0) AS roof_pct
FROM placed p
JOIN traces t USING (trace_id)
LEFT JOIN step_ranges s ON s.trace_id = p.trace_id AND s.pid = p.pid AND p.start_ns >= s.start_ns
                        AND p.start_ns < s.end_ns;
